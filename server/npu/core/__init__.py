"""Execution: the task contract (`lane`), streams, events, signals, notifies, callbacks, the kernel pool, the trace."""
