"""What one process (a daemon context) holds: its context and tables, and the operations over them that several areas
share (device release, memory, IPC, TDT, streams, aclnn launch checks, events in capture, model task handles)."""
