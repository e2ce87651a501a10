"""The operator registry: every aclnn operator declared, by name ("Add"; `aclnn` + name is the phase-2 C name).

vnpu's own declarations (`proto.aclnn.ops`) and the user-declared ones (`proto.operators`) register here; phase 1,
kernel descriptions and the device look operators up here. A leaf: it knows declarations only by type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from proto.aclnn.decl import OpDecl

OPS: Final[dict[str, OpDecl]] = {}
