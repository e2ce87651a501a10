"""The generated part of the legacy operator path and versions (`src/legacy.c`, `src/opcompiler/opcompiler.c`,
`src/versions.c`): what `proto.legacyop` and `proto.host` answer, evaluated at build time so that C answers what
Python answers.

- `vn_aclnn_only`: the refusal's text naming the operator (`proto.legacyop.ACLNN_ONLY`, `%s` for the operator);
- `vn_jit_default`: what aclGetCompileopt(ACL_OP_JIT_COMPILE) reads for the SoC vnpu presents;
- the aclCompileOpt values the options' rules name, and how many there are;
- `vn_cann_package(name)`: the package whose version.info aclsysGetCANNVersion reads for an aclCANNPackageName
  (the driver's: refused, with its code and message).
"""

from __future__ import annotations

from proto.errors import AclError


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def emit() -> str:
    import proto.host as host
    import proto.legacyop as legacy
    from proto.constants import aclCANNPackageName
    from proto.opconstants import aclCompileOpt

    only = legacy.ACLNN_ONLY.replace("%", "%%").replace("{op}", "%s")
    jit = legacy.COMPILE_OPTIONS.get(int(aclCompileOpt.ACL_OP_JIT_COMPILE))
    packages = "\n".join(f'    case {int(k)}: return "{v}";' for k, v in host.CANN_PACKAGES.items())
    driver = aclCANNPackageName.ACL_PKG_NAME_DRIVER
    driver_code, driver_message = _error(host.aclsysGetCANNVersion, int(driver))
    return f"""#include <stddef.h>
#pragma GCC visibility push(default)
const char *const vn_aclnn_only = {_string(only)};
const char *const vn_jit_default = {_string(jit)};
const int vn_opt_auto_tune = {int(aclCompileOpt.ACL_AUTO_TUNE_MODE)};
const int vn_opt_jit = {int(aclCompileOpt.ACL_OP_JIT_COMPILE)};
const int vn_opt_debug_option = {int(aclCompileOpt.ACL_OP_DEBUG_OPTION)};
const int vn_opt_count = {max(int(o) for o in aclCompileOpt) + 1};
const int vn_pkg_driver = {int(driver)};
const int vn_pkg_driver_code = {driver_code};
const char *const vn_pkg_driver_message = {_string(driver_message)};
/* the package whose version.info an aclCANNPackageName reads (NULL: not one) */
const char *vn_cann_package(int name)
{{
    switch (name) {{
{packages}
    default: return NULL;
    }}
}}
#pragma GCC visibility pop
"""


def _error(function: object, *args: object) -> tuple[int, str]:
    try:
        function(*args)  # type: ignore[operator]
    except AclError as error:
        return error.code, error.message
    return 0, ""
