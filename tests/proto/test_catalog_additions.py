"""What the catalog adds to its reading of CANN's sources: the directions written out by hand (`overrides.py`) and
the custom packages' headers (`vendor.py`)."""

from __future__ import annotations

import pytest

from proto.aclnn.catalog import catalog
from proto.aclnn.catalog.overrides import with_directions

TENSOR = "const aclTensor *"


def test_a_stale_direction_override_is_an_error() -> None:
    params = catalog().ops["SyncBatchNormGatherStats"].params
    assert [p.direction for p in with_directions("SyncBatchNormGatherStats", params)][3:5] == ["inplace", "inplace"]
    with pytest.raises(ValueError, match=r"names \['mean', 'variance'\]"):
        with_directions("SyncBatchNormGatherStats", params[:3])


def test_the_custom_packages_headers() -> None:
    """The experimental headers that declare something else than include/aclnnop's file of the same name (or whose
    name it lacks): as the experimental trees declare them; aclnnPow, which only one of them declares, is an
    operator of the catalog declared there only."""
    from proto.aclnn.catalog import decode_vendor
    from proto.aclnn.catalog.encode import encode_vendor

    table = catalog()
    vendor = {(h.repo, h.header): h for h in table.vendor}
    assert len(vendor) == 46
    log_add_exp = vendor[("math", "aclnn_log_add_exp.h")]
    assert log_add_exp.directory == "experimental/math/log_add_exp" and log_add_exp.vendor == "custom_math"
    assert [(p.name, p.ctype) for p in log_add_exp.ops[0].params] == [
        ("x", TENSOR),
        ("y", TENSOR),
        ("out", TENSOR),
    ]
    assert table.ops["LogAddExp"].header == "aclnn_logaddexp.h"  # the built-in one keeps its own
    ciou = vendor[("cv", "aclnn_c_io_u.h")].ops[0]
    assert [p.name for p in ciou.params] == [
        "bboxes", "gtboxes", "trans", "isCross", "modeOptional", "atanSubFlag", "overlapOut", "atanSubOut"
    ]  # fmt: skip
    assert table.ops["Pow"].vendor and vendor[("math", "aclnn_pow.h")].ops == (table.ops["Pow"],)
    assert "Pow" not in {op.name for op in table.by_header["aclnn_pow.h"]}
    for header in table.vendor:
        assert decode_vendor(header.repo, header.header, encode_vendor(header)) == header
