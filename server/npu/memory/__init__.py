"""Memory: device memory (arena, allocator), pinned host memory, virtual memory, IPC, host registration, quotas."""
