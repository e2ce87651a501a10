"""Memory calls: allocation and copies, virtual memory, IPC memory, host registration, and the memory tasks (value,
reduce, random)."""
