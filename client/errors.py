"""The client's exception families. `AclError` (from `proto`) is the runtime's answer to a call; these are not:
`TransportError` when the daemon cannot be reached or the connection breaks, `ServerError` when the daemon
itself failed (a vnpu fault, HTTP 5xx)."""

from __future__ import annotations


class VnpuError(Exception):
    """Base of the errors that are not ACL errors."""


class TransportError(VnpuError):
    """The daemon could not be reached, or the connection to it broke."""


class ServerError(VnpuError):
    """The daemon failed while serving a call (a vnpu fault, not the caller's mistake)."""
