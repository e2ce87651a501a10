"""A process's TDT handles: a channel handle closed, and all of them at the process's end."""

from __future__ import annotations

from server.npu.process.context import Context
from server.npu.tdt import Channel


def close_channel(context: Context, channel: Channel, handle: int | None) -> None:
    """A handle of `channel` closes; the channel goes with its last handle (of any context)."""
    context.channels.pop(handle or 0, None)
    channel.users -= 1
    if channel.users == 0:
        context.machine.devices[channel.device].tdt.channels.pop(channel.name, None)


def release_tdt(context: Context) -> None:
    """At a context's end: its channel handles close, its queues (and their routes) go."""
    for handle, channel in list(context.channels.items()):
        close_channel(context, channel, handle)
    for device in context.machine.devices:
        for queue in [q for q in device.tdt.queues.values() if q.owner is context]:
            device.tdt.drop_queue(queue.qid)
