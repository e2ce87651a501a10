"""The runtime's label limits, which the device checks and the C binding needs before it reads a C array."""

from __future__ import annotations

from typing import Final

MAX_LABELS: Final = 0xFFFF  # label ids are [0, 65535) per process; a label list holds 1 .. 65535 labels
LABEL_INFO_SIZE: Final = 16  # bytes of a label's slot in a label list (the runtime's RT_CHIP_CLOUD_V2_LABEL_INFO_SIZE)
