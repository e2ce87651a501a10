"""Stream, event, notify, IPC event/notify, callback, marker and overflow calls."""
