"""What the readers cannot find in CANN's sources, written out by hand from a reading of them.

OpDefs (`OPDEF_OVERRIDES`): `ops-nn/experimental/norm/fused_add_rms_norm/op_host/fused_add_rms_norm_def.cpp`
registers its parameters through template helpers (`AddCommonInputs(op, BASE_DTYPE, BASE_FORMAT)`, ...), not
`this->Input(...)` chains. Its example (`aclnnFusedAddRmsNormGetWorkspaceSize` with 10 arguments) and its
doc page agree with the generated prototype of the OpDef below.

Directions (`DIRECTION_OVERRIDES`): hand-written operators that update running statistics in place although
their `L2_DFX_PHASE_1` lists and doc pages call them inputs. Each is a non-const `aclTensor *` that the op_api
C++ writes back (`l0op::ViewCopy(<result>, <parameter>, executor)`, directly or through a helper taking it),
and whose doc page's formula assigns it a new value (`runningMean = runningMean * (1 - momentum) + ...`):

- SyncBatchNormGatherStats `mean`, `variance` (ops-nn norm/sync_batch_norm_gather_stats/op_api, both trees);
- BatchNorm `runningMean`, `runningVar` (norm/batch_norm_v3/op_host/op_api/aclnn_batch_norm.cpp, training);
- BatchNormGatherStatsWithCounts `runningMean`, `runningVar` (norm/sync_batch_norm_gather_stats_with_counts,
  `CopyRunningTensorToDst`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from proto.aclnn.catalog import CatalogParam, Direction
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

DIRECTION_OVERRIDES: Final[dict[str, dict[str, Direction]]] = {
    "SyncBatchNormGatherStats": {"mean": "inplace", "variance": "inplace"},
    "BatchNorm": {"runningMean": "inplace", "runningVar": "inplace"},
    "BatchNormGatherStatsWithCounts": {"runningMean": "inplace", "runningVar": "inplace"},
}


def with_directions(name: str, params: tuple[CatalogParam, ...]) -> tuple[CatalogParam, ...]:
    """`params` of the hand-written operator `name` with the directions of `DIRECTION_OVERRIDES` applied; a name
    the override gives that the operator does not have is an error (the override is stale)."""
    changed = DIRECTION_OVERRIDES.get(name, {})
    missing = set(changed) - {param.name for param in params}
    if missing:
        raise ValueError(f"DIRECTION_OVERRIDES[{name!r}] names {sorted(missing)}, which aclnn{name} does not take")
    return tuple(replace(param, direction=changed.get(param.name, param.direction)) for param in params)
