"""PlanCache: the ready plan of each kernel description a device runs, so that a warm run is the numpy call.

A replay runs the same descriptions thousands of times (the daemon decodes equal descriptions into one object),
and so do eager launch loops: planning -- dtype rules, three view lookups, the numpy call bound -- costs several
times the numpy call of a small kernel. A plan holds views, never values: it reads memory when it runs.
"""

from __future__ import annotations

from proto.aclnn import KernelDesc
from server.npu.ops import Plan, Region, Views, plan_kernel
from server.npu.ops.views import Generation


class PlanCache:
    """Plans by kernel description (its identity, the description kept alive beside its plan) and workspace.

    A plan's views were checked against live memory, so the cache empties whenever `generation` moves (some
    memory was freed); a plan made afterwards checks its memory again. At most `capacity` plans, starting over
    when full: its size depends on the distinct descriptions in use, not on the number of tasks. On the event
    loop only, as the `ViewCache` it plans with. (`get` is a method, not `__call__`: calling an instance costs
    half as much again.)
    """

    def __init__(self, views: Views, region: Region, generation: Generation, capacity: int = 4096) -> None:
        self.capacity = capacity
        self._views = views
        self._region = region
        self._generation = generation
        self._seen = generation.value
        self._plans: dict[int | tuple[int, int, int], tuple[KernelDesc, Plan]] = {}

    def __len__(self) -> int:
        return len(self._plans)

    def get(self, kernel: KernelDesc, workspace: int, workspace_size: int) -> Plan:
        """The plan of `kernel` with the workspace [workspace, + workspace_size) (none when the size is 0)."""
        if self._seen != self._generation.value:
            self._plans.clear()
            self._seen = self._generation.value
        # The entry keeps the kernel alive, so its id stays its own; most kernels have no workspace (an int key).
        key = id(kernel) if not workspace_size else (id(kernel), workspace, workspace_size)
        entry = self._plans.get(key)
        if entry is not None:
            return entry[1]
        plan = plan_kernel(kernel, self._views, self._region(workspace, workspace_size) if workspace_size else None)
        if len(self._plans) >= self.capacity:
            self._plans.clear()
        self._plans[key] = (kernel, plan)
        return plan
