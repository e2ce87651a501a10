"""`Quota`: what one tenant holds of the daemon, kind by kind, against its limits -- so that no tenant can exhaust
a device-wide limit (streams, events, models, memory) or the daemon (contexts, sessions) for the others.

A count moves where the object is made and where it goes (destroy, reset, context end, session reclaim): the
device's slots take and give a tenant's quota with their own (`Limit`), a context's memory moves its tenant's with
it (`Context.memory_used`), and the registry counts contexts and sessions. Every limit is checked before anything
is taken.
"""

from __future__ import annotations

from dataclasses import dataclass

from proto.errors import AclError


@dataclass
class Share:
    """One kind of a tenant's quota: `maximum` of `unit` ("streams", "bytes of memory"), refused with `code`;
    `setting` says where the maximum comes from, for the message (e.g. "VNPU_TENANT_SHARE=0.5 of ...")."""

    unit: str
    maximum: int
    code: int
    setting: str
    used: int = 0


class Quota:
    """One tenant's counts against its limits, by kind (the keys of `shares`: "stream", "memory", ...)."""

    def __init__(self, tenant: str, shares: dict[str, Share]) -> None:
        self.tenant, self.shares = tenant, shares

    def check(self, kind: str, n: int = 1) -> None:
        """Refuse, with the resource's code, `n` more of `kind` that would pass the tenant's maximum."""
        share = self.shares[kind]
        if share.used + n > share.maximum:
            more = "1 more does not fit" if n == 1 else f"{n} more do not fit"
            raise AclError(
                share.code,
                f"tenant {self.tenant!r} holds {share.used} of its quota of {share.maximum} {share.unit} "
                f"({share.setting}): {more}",
            )

    def take(self, kind: str, n: int = 1) -> None:
        self.check(kind, n)
        self.shares[kind].used += n

    def give(self, kind: str, n: int = 1) -> None:
        self.shares[kind].used -= n

    def used(self) -> dict[str, int]:
        return {kind: share.used for kind, share in self.shares.items()}
