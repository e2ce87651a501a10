"""Who the virtual device says it is, in one place: the SoC it presents itself as, that SoC's numbers, and the
CANN version of its toolkit. Ascend910B3 is the Atlas A2 part the runtime's compatibility notes and samples use;
its numbers are those of the runtime's platform table for it (src/platform/platform_config/cann)."""

from __future__ import annotations

from typing import Final

SOC_NAME: Final = "Ascend910B3"
CANN_VERSION: Final = "8.5.0"
AICORE_CORES: Final = 20
CUBE_CORES: Final = 20
VECTOR_CORES: Final = 40
AICPU_CORES: Final = 6
L2_CACHE_BYTES: Final = 201_326_592
UB_BYTES_PER_VECTOR_CORE: Final = 196_608
# the NPU architecture of each SoC name aclrtCheckArchCompatibility knows (from the same table)
NPU_ARCHES: Final = {
    **dict.fromkeys(("Ascend910A", "Ascend910B", "Ascend910PremiumA", "Ascend910ProA", "Ascend910ProB"), 1001),
    **dict.fromkeys(
        ("Ascend910B1", "Ascend910B2", "Ascend910B2C", "Ascend910B3", "Ascend910B4", "Ascend910B4-1"), 2201
    ),
    **dict.fromkeys((f"Ascend910_93{n}" for n in (62, 63, 72, 81, 82, 91, 92)), 2201),
    **dict.fromkeys(("Ascend310P1", "Ascend310P3", "Ascend310P5", "Ascend310P7"), 2002),
    **dict.fromkeys(("Ascend310B1", "Ascend310B2", "Ascend310B3", "Ascend310B4"), 3002),
    "Ascend031": 3004,
    **dict.fromkeys(("Ascend035", "Ascend035A", "Ascend035B"), 3505),
}
