"""A process's TDT objects: a channel handle closed, a queue dropped, and all of them at the process's end."""

from __future__ import annotations

from server.npu.device import Device
from server.npu.process.context import Context
from server.npu.tdt import Channel


def close_channel(context: Context, channel: Channel, handle: int | None) -> None:
    """A handle of `channel` closes; the channel goes with its last handle (of any context of the tenant), with
    what it still holds."""
    context.channels.pop(handle or 0, None)
    channel.users -= 1
    if channel.users == 0:
        context.machine.devices[channel.device].tdt_of(context.tenant).channels.pop(channel.name, None)
        channel.discard()


def drop_queue(context: Context, device: Device, qid: int) -> None:
    """Queue `qid` of the context's tenant on `device` goes: its entries, its routes, its slot of the device (and
    of its tenant's share)."""
    queue = device.tdt_of(context.tenant).drop_queue(qid)
    if queue is not None:
        device.queues.give(context.quota)


def release_tdt(context: Context) -> None:
    """At a context's end: its channel handles close, its queues (and their routes) go."""
    for handle, channel in list(context.channels.items()):
        close_channel(context, channel, handle)
    for device in context.machine.devices:
        space = device.tdts.get(context.tenant)
        for queue in [q for q in space.queues.values() if q.owner is context] if space is not None else ():
            drop_queue(context, device, queue.qid)
