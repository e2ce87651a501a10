"""The prototypes CANN's build writes into `aclnn_<op>.h` for an operator that has only an OpDef.

CANN's `op_build` tool (toolkit `tools/opbuild/op_build`, run by `cmake/opbuild.cmake` `gen_aclnn_classify`
for op types registered `ACLNNTYPE aclnn`) emits, for OpDef `X`:

    aclnnStatus aclnnXGetWorkspaceSize(<inputs>, <attributes>, <outputs>,
                                       uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnX(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

- Names: the OpDef name in lowerCamelCase (`weight_scale` -> `weightScale`).
- Inputs, in OpDef order: REQUIRED `const aclTensor *x`; OPTIONAL `const aclTensor *xOptional`; DYNAMIC
  `const aclTensorList *x`; `.Scalar()` `const aclScalar *x`; `.ScalarList()` `const aclScalarList *x`;
  `.ValueDepend()` a host array by its dtypes: FLOAT `const aclFloatArray *`, INT64 (or INT32 and
  INT64) `const aclIntArray *`, BOOL `const aclBoolArray *`. An input that is also an output (same name) is
  written in place: `aclTensor *xRef` (`aclTensorList *xRef` if dynamic), and the output is not repeated.
- Attributes, in OpDef order: Int `int64_t`, Float `double`, Bool `bool`, String `char *`, ListInt
  `const aclIntArray *`, ListFloat `const aclFloatArray *`, ListBool `const aclBoolArray *`; an OPTIONAL
  attribute passed by pointer (string, lists) is suffixed `Optional`, one passed by value is not.
- Outputs, in OpDef order, `const aclTensor *` (`const aclTensorList *` if dynamic): a lone output is
  named `out`, otherwise `<name>Out`; an OPTIONAL output `<name>OutOptional`.
- Versions: a parameter with `.Version(n)` is left out of `aclnnX` and appears from `aclnnXVn` on, which
  is declared alone in `aclnn_<op>_v<n>.h`.
- Header file: `aclnn_` + the op type in snake_case (an underscore before a capital that follows a
  lower-case letter or a digit, or that starts a capitalised word after capitals) + `.h`.

The evidence for each rule is in `proto.aclnn.catalog.extract`'s docstring.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from proto.aclnn.catalog.opdef import OpDef, OpDefAttr, OpDefParam

ATTR_TYPES = {
    "Int": "int64_t",
    "Float": "double",
    "Bool": "bool",
    "String": "char *",
    "ListInt": "const aclIntArray *",
    "ListFloat": "const aclFloatArray *",
    "ListBool": "const aclBoolArray *",
}
VALUE_DEPEND_ARRAYS = {
    frozenset({"INT64"}): "const aclIntArray *",
    frozenset({"INT32", "INT64"}): "const aclIntArray *",
    frozenset({"FLOAT"}): "const aclFloatArray *",
    frozenset({"BOOL"}): "const aclBoolArray *",
}


class GenerationError(Exception):
    """The OpDef uses something CANN's generator refuses (or vnpu does not know how it is written)."""


@dataclass(frozen=True)
class GeneratedParam:
    name: str
    ctype: str
    role: str  # input, inplace, attr or output
    source: OpDefParam | OpDefAttr


@dataclass(frozen=True)
class GeneratedFunction:
    name: str  # the operator name without `aclnn`: RmsNorm, DequantSwigluQuantV2
    header: str  # aclnn_rms_norm.h
    params: tuple[GeneratedParam, ...]


def snake_case(op_type: str) -> str:
    """CANN's header stem of an op type: MoeGatingTopKSoftmax -> moe_gating_top_k_softmax, V2Grad -> v2_grad."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", op_type)
    return re.sub(r"([A-Z])([A-Z][a-z])", r"\1_\2", text).lower()


def camel_case(name: str) -> str:
    """An OpDef parameter name as the generated header spells it: weight_scale -> weightScale."""
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


def generate(opdef: OpDef) -> list[GeneratedFunction]:
    """`aclnn<op>` and, for each `.Version(n)` used, `aclnn<op>V<n>`."""
    params: list[OpDefParam | OpDefAttr] = [*opdef.inputs, *opdef.outputs, *opdef.attrs]
    versions = sorted({param.version for param in params if param.version > 1})
    functions = [_function(opdef, opdef.op_type, snake_case(opdef.op_type), 1)]
    for version in versions:
        stem = f"{snake_case(opdef.op_type)}_v{version}"
        functions.append(_function(opdef, f"{opdef.op_type}V{version}", stem, version))
    return functions


def _function(opdef: OpDef, name: str, stem: str, version: int) -> GeneratedFunction:
    inputs = [p for p in opdef.inputs if p.version <= version]
    outputs = [p for p in opdef.outputs if p.version <= version]
    attrs = [a for a in opdef.attrs if a.version <= version]
    input_names = {p.name for p in inputs}
    written = [p for p in outputs if p.name not in input_names]
    output_names = {p.name for p in outputs}
    params = [_input(p, p.name in output_names) for p in inputs]
    params += [_attr(a) for a in attrs]
    params += [_output(p, lone=len(written) == 1) for p in written]
    return GeneratedFunction(name, f"aclnn_{stem}.h", tuple(params))


def _input(param: OpDefParam, inplace: bool) -> GeneratedParam:
    name = camel_case(param.name)
    if inplace:
        ctype = "aclTensorList *" if param.param_type == "DYNAMIC" else "aclTensor *"
        return GeneratedParam(f"{name}Ref", ctype, "inplace", param)
    if param.value_depend:
        dtypes = frozenset(param.dtypes)
        if dtypes not in VALUE_DEPEND_ARRAYS:
            raise GenerationError(f"value-depend input {param.name} has dtypes {sorted(dtypes)}")
        ctype = VALUE_DEPEND_ARRAYS[dtypes]
    elif param.scalar:
        ctype = "const aclScalar *" if param.scalar == "scalar" else "const aclScalarList *"
    elif param.param_type == "DYNAMIC":
        ctype = "const aclTensorList *"
    else:
        ctype = "const aclTensor *"
    suffix = "Optional" if param.param_type == "OPTIONAL" else ""
    return GeneratedParam(name + suffix, ctype, "input", param)


def _attr(attr: OpDefAttr) -> GeneratedParam:
    ctype = ATTR_TYPES.get(attr.attr_type)
    if ctype is None:
        raise GenerationError(f"attribute {attr.name} has type {attr.attr_type}, which the generator refuses")
    optional = not attr.required and ctype.endswith("*")
    return GeneratedParam(camel_case(attr.name) + ("Optional" if optional else ""), ctype, "attr", attr)


def _output(param: OpDefParam, lone: bool) -> GeneratedParam:
    name = "out" if lone else camel_case(param.name) + "Out"
    ctype = "const aclTensorList *" if param.param_type == "DYNAMIC" else "const aclTensor *"
    suffix = "Optional" if param.param_type == "OPTIONAL" else ""
    return GeneratedParam(name + suffix, ctype, "output", param)
