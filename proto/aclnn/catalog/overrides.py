"""OpDefs the reader cannot follow, written out by hand from their source.

`ops-nn/experimental/norm/fused_add_rms_norm/op_host/fused_add_rms_norm_def.cpp` registers its
parameters through template helpers (`AddCommonInputs(op, BASE_DTYPE, BASE_FORMAT)`, ...), not
`this->Input(...)` chains. Its example (`aclnnFusedAddRmsNormGetWorkspaceSize` with 10 arguments) and its
doc page agree with the generated prototype of the OpDef below.
"""

from __future__ import annotations

from typing import Final

from proto.aclnn.catalog.opdef import OpDef, OpDefAttr, OpDefParam

_BASE = ("FLOAT16", "FLOAT", "BF16")
_ND = ("ND", "ND", "ND")


def _tensor(name: str, dtypes: tuple[str, ...] = _BASE) -> OpDefParam:
    return OpDefParam(name, "REQUIRED", dtypes, False, _ND)


OPDEF_OVERRIDES: Final[dict[str, OpDef]] = {
    "FusedAddRmsNorm": OpDef(
        "FusedAddRmsNorm",
        inputs=(_tensor("x1"), _tensor("x2"), _tensor("gamma")),
        outputs=(_tensor("y"), _tensor("rstd", ("FLOAT", "FLOAT", "FLOAT")), _tensor("x")),
        attrs=(OpDefAttr("epsilon", "Float", False, 1e-6), OpDefAttr("scale", "Float", False, 1.0)),
    ),
}
