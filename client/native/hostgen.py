"""The C evaluated at build time from proto: the host functions of `proto.host` (`emit_host`: their answers
depend only on their arguments' enum values or on nothing), the error codes' names (`vn_code_name`), the
functions answered before aclInit, and the dtypes' sizes (`vn_itemsize`).
"""

from __future__ import annotations

from typing import Any

from proto.aclnn import dtypes as _dtypes
from proto.calltable import BEFORE_INIT
from proto.errors import ERROR_NAMES

HOST_EVALUATED = frozenset(
    {
        "aclDataTypeSize",
        "aclGetCannAttribute",
        "aclGetCannAttributeList",
        "aclrtCheckArchCompatibility",
        "aclrtGetVersion",
        "aclrtDeviceGetStreamPriorityRange",
        "aclrtGetRunMode",
        "aclrtDeviceGetBareTgid",
    }
)


def emit_tables() -> str:
    codes = "\n".join(f'    case {code}: return "{name}";' for code, name in sorted(ERROR_NAMES.items()))
    sizes = "\n".join(f"    case {int(dtype)}: return {info.itemsize};" for dtype, info in _dtypes.INFO.items())
    early = " || ".join(f'strcmp(api, "{name}") == 0' for name in sorted(BEFORE_INIT)) or "0"
    unknown = '    default: snprintf(unknown, sizeof(unknown), "UNKNOWN_ERROR_%d", code); return unknown;\n'
    return (
        '#include "core.h"\n#include <stdio.h>\n#include <string.h>\n\n'
        "const char *vn_code_name(int code)\n{\n    static __thread char unknown[32];\n"
        f"    switch (code) {{\n{codes}\n{unknown}    }}\n}}\n\n"
        "int vn_answered_before_init(const char *api)\n{\n"
        f"    return {early};\n}}\n\n"
        "VN_EXPORT_INTERNAL int vn_itemsize(int dtype)\n{\n"
        f"    switch (dtype) {{\n{sizes}\n    default: return 0;\n    }}\n}}\n"
    )


def _host_error(call: Any, *args: Any) -> tuple[int, str]:
    """What a host function of `proto.host` answers for `args`: (0, "") or its AclError's code and message."""
    from proto.errors import AclError

    try:
        call(*args)
    except AclError as error:
        return error.code, error.message
    return 0, ""


def emit_host() -> str:
    """The host functions of `proto.host` whose answers depend only on their arguments' enum values or on nothing:
    evaluated here, over every value, so the C answers are the Python ones."""
    import proto.host as host
    from proto.constants import aclCannAttr, aclDataType
    from proto.identity import NPU_ARCHES

    def c_string(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    sizes = "\n".join(f"    case {int(t)}: return {host.aclDataTypeSize(int(t))};" for t in aclDataType)
    attrs = []
    for attr in aclCannAttr:
        code, _ = _host_error(host.aclGetCannAttribute, int(attr))
        value = host.aclGetCannAttribute(int(attr)) if not code else 0
        attrs.append(f"    case {int(attr)}: *value = {value}; return 0;")
    _, bad_attr = _host_error(host.aclGetCannAttribute, -1)
    available = ", ".join(str(a) for a in host.aclGetCannAttributeList()) or "0"
    count = len(host.aclGetCannAttributeList())
    socs = "\n".join(f"    {{{c_string(name)}, {host.aclrtCheckArchCompatibility(name)}}}," for name in NPU_ARCHES)
    from proto.randomnum import RT_DATA_TYPES

    random_types = "\n".join(f"    case {int(k)}: return {int(v)};" for k, v in RT_DATA_TYPES.items())
    major, minor, patch = host.aclrtGetVersion()
    least, greatest = host.aclrtDeviceGetStreamPriorityRange()
    return f"""
#include <string.h>
#include <unistd.h>
size_t aclDataTypeSize(int dataType)
{{
    switch (dataType) {{
{sizes}
    default: return {host.aclDataTypeSize(-1)};
    }}
}}
int aclGetCannAttribute(int cannAttr, int32_t *value)
{{
    vn_enter("aclGetCannAttribute");
    if (!value) return vn_null_out("aclGetCannAttribute", "value");
    switch (cannAttr) {{
{chr(10).join(attrs)}
    default:
        return vn_fail(100000, "aclGetCannAttribute", "cannAttr %d is not an aclCannAttr (0, 1 or 2)", cannAttr);
    }}
    (void){c_string(bad_attr)};
}}
static const int available_attributes[] = {{{available}}};
int aclGetCannAttributeList(const int **cannAttrList, size_t *num)
{{
    vn_enter("aclGetCannAttributeList");
    if (!cannAttrList || !num)
        return vn_fail(100000, "aclGetCannAttributeList", "%s is NULL: it must point to where the result goes",
                       !cannAttrList ? "cannAttrList" : "num");
    *cannAttrList = available_attributes, *num = {count};
    return 0;
}}
static const struct {{ const char *name; int same; }} socs[] = {{
{socs}
}};
int aclrtCheckArchCompatibility(const char *socVersion, int32_t *canCompatible)
{{
    const char *api = "aclrtCheckArchCompatibility";
    vn_enter(api);
    if (!canCompatible) return vn_null_out(api, "canCompatible");
    if (!socVersion || !*socVersion) return vn_fail(107000, api, "socVersion is NULL or empty");
    for (size_t i = 0; i < sizeof(socs) / sizeof(socs[0]); i++)
        if (!strcmp(socs[i].name, socVersion)) return *canCompatible = socs[i].same, 0;
    return vn_fail(107000, api, "'%s' is not a SoC name the runtime knows", socVersion);
}}
int aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion)
{{
    vn_enter("aclrtGetVersion");
    if (!majorVersion || !minorVersion || !patchVersion)
        return vn_fail(100000, "aclrtGetVersion", "%s is NULL: it must point to where the result goes",
                       !majorVersion ? "majorVersion" : !minorVersion ? "minorVersion" : "patchVersion");
    *majorVersion = {major}, *minorVersion = {minor}, *patchVersion = {patch};
    return 0;
}}
int aclrtDeviceGetStreamPriorityRange(int32_t *leastPriority, int32_t *greatestPriority)
{{
    vn_enter("aclrtDeviceGetStreamPriorityRange");
    if (leastPriority) *leastPriority = {least};
    if (greatestPriority) *greatestPriority = {greatest};
    return 0;
}}
int aclrtGetRunMode(int *runMode)
{{
    vn_enter("aclrtGetRunMode");
    if (!runMode) return vn_null_out("aclrtGetRunMode", "runMode");
    *runMode = {host.aclrtGetRunMode()};
    return 0;
}}
int vn_rt_random_data_type(int dtype)
{{
    switch (dtype) {{
{random_types}
    default: return -1;
    }}
}}
int aclrtDeviceGetBareTgid(int32_t *pid)
{{
    vn_enter("aclrtDeviceGetBareTgid");
    if (!pid) return vn_null_out("aclrtDeviceGetBareTgid", "pid");
    *pid = (int32_t)getpid();
    return 0;
}}
"""
