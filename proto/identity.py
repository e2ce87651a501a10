"""Who the virtual device says it is, in one place: the SoC it presents itself as and the CANN version of its
toolkit. Ascend910B3 is the Atlas A2 part the runtime's compatibility notes and samples use."""

from __future__ import annotations

from typing import Final

SOC_NAME: Final = "Ascend910B3"
CANN_VERSION: Final = "8.5.0"
