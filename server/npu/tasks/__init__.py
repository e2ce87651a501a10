"""The tasks a stream runs: frozen records of what was issued, resolved against memory when they run.

A task reads device memory when it runs, not when it was issued (so an async copy sees the data of the tasks
before it, and a captured task sees the memory of its replay). A task also pins the allocations its pointers
fell in when it was issued: if one of them was freed since -- even if the address now belongs to a new
allocation -- the task fails with ACL_ERROR_RT_DEVICE_MEM_ERROR naming the address, instead of silently touching
reused memory (undefined behaviour on the real device). A kernel, the one task a replay runs by the thousand,
checks its pins again only after some device memory has been freed (`Machine.epoch`), and runs the plan of its
description from the machine's `PlanCache` (its views, dtypes and numpy call resolved once).

A big task runs on the kernel pool (`offload`), holding its allocations meanwhile: one freed during the run is
quarantined until the run ends (`server.npu.memory.arena`), and the task then fails like one that found it freed.
"""
