"""TDT calls: channels (create, send, receive, size, stop, clean, destroy), queues and queue routes.

The host objects (data items, datasets, queue attributes, route lists) are the client's (`proto.tdt`); what
reaches the device is a dataset's name and items, a queue's name and depth, lists of (src, dst) routes.
Timeouts are in milliseconds: -1 waits forever, 0 not at all (the runtime's rtMemQueue convention). Channels and
queues are the calling tenant's (`Device.tdt_of`); what a send or an enqueue puts in is charged to the caller's
memory until it leaves (`server.npu.tdt`).
"""

from __future__ import annotations

from typing import Any

from proto.constants import ACL_TDT_QUEUE_ROUTE_BIND, ACL_TDT_QUEUE_ROUTE_UNBIND, acltdtQueueRouteQueryMode
from proto.errors import (
    ACL_ERROR_FEATURE_UNSUPPORTED,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_INVALID_QUEUE_ID,
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_INVALID_HANDLE,
    AclError,
)
from proto.tdt import name_checked
from server.npu.area import Area, acl_call, require
from server.npu.process.tdt import close_channel, drop_queue
from server.npu.tdt import ENTRY_CHARGE, LEGACY_CAPACITY, MAX_CAPACITY, Channel, Dataset, DeviceTdt, Queue


class TdtCalls(Area):
    @acl_call
    def acltdtCreateChannelWithCapacity(self, device_id: int, name: str | None, capacity: int) -> int:
        require(
            1 <= capacity <= MAX_CAPACITY,
            f"capacity {capacity} is out of range: a channel holds 1 to {MAX_CAPACITY} datasets",
            ACL_ERROR_INVALID_PARAM,
        )
        return self._open_channel(device_id, name, capacity, legacy=False)

    @acl_call
    def acltdtCreateChannel(self, device_id: int, name: str | None) -> int:
        return self._open_channel(device_id, name, LEGACY_CAPACITY, legacy=True)

    @acl_call
    def acltdtStopChannel(self, handle: int | None) -> None:
        """A queue-backed channel has no TDT process to stop (the runtime returns at once); its data stays."""
        self._channel(handle)

    @acl_call
    async def acltdtCleanChannel(self, handle: int | None) -> None:
        channel = self._channel(handle)
        if channel.legacy:
            raise AclError(
                ACL_ERROR_FEATURE_UNSUPPORTED,
                f"{channel} was made by acltdtCreateChannel: only a channel of acltdtCreateChannelWithCapacity "
                "can be cleaned",
            )
        await channel.clean()

    @acl_call
    def acltdtDestroyChannel(self, handle: int | None) -> None:
        close_channel(self.ctx, self._channel(handle), handle)

    @acl_call
    async def acltdtSendTensor(self, handle: int | None, name: str, items: list[dict[str, Any]], timeout: int) -> None:
        channel = self._channel(handle)
        self._timeout_checked(channel, timeout)
        data = sum(len(i["data"]) for i in items if isinstance(i.get("data"), bytes | bytearray))
        refund = self.ctx.memory.hold(data + len(name.encode()) + ENTRY_CHARGE * (1 + len(items)))
        await channel.put(Dataset(name, items), timeout, refund)

    @acl_call
    async def acltdtReceiveTensor(self, handle: int | None, timeout: int) -> tuple[str, list[dict[str, Any]]]:
        channel = self._channel(handle)
        self._timeout_checked(channel, timeout)
        dataset = await channel.take(timeout)
        return dataset.name, dataset.items

    @acl_call
    def acltdtQueryChannelSize(self, handle: int | None) -> int:
        channel = self._channel(handle)
        if channel.legacy:
            raise AclError(
                ACL_ERROR_FEATURE_UNSUPPORTED,
                f"{channel} was made by acltdtCreateChannel: only a channel of acltdtCreateChannelWithCapacity "
                "has a size to query",
            )
        return len(channel.held)

    # --- queues and routes (of the calling thread's current device)

    @acl_call
    def acltdtCreateQueue(self, name: str, depth: int) -> int:
        tdt = self._tdt()
        require(
            1 <= depth <= MAX_CAPACITY,
            f"queue depth {depth} is out of range: 1 to {MAX_CAPACITY}",
            ACL_ERROR_INVALID_PARAM,
        )
        given = name_checked(name, "the queue name", "acltdtCreateQueue")
        taken = next((q for q in tdt.queues.values() if given and q.name == given), None)
        require(taken is None, f"the device already has a queue named '{given}' (id {taken and taken.qid})")
        self.ctx.device().queues.take(self.ctx.quota)
        qid = next(tdt.qids)
        tdt.queues[qid] = Queue(qid, given or f"vnpu_queue_{qid}", depth, self.ctx)
        return qid

    @acl_call
    def acltdtDestroyQueue(self, qid: int) -> None:
        self._queue(self._tdt(), qid, "qid")
        drop_queue(self.ctx, self.ctx.device(), qid)

    @acl_call
    async def acltdtEnqueueData(self, qid: int, data: bytes, user_data: bytes, timeout: int, rsv: int) -> None:
        """One entry (the data and the user data) at the queue's tail; a full queue waits up to `timeout` ms."""
        require(len(data) > 0, "dataSize must be > 0 (the data must not be empty)", ACL_ERROR_INVALID_PARAM)
        require(timeout >= -1, f"timeout {timeout} ms is below -1 (-1: wait forever)", ACL_ERROR_INVALID_PARAM)
        queue = self._queue(self._tdt(), qid, "qid")
        refund = self.ctx.memory.hold(len(data) + len(user_data) + ENTRY_CHARGE)
        await queue.put((bytes(data), bytes(user_data)), timeout, refund)

    @acl_call
    async def acltdtDequeueData(
        self, qid: int, data_size: int, user_data_size: int, timeout: int
    ) -> tuple[bytes, int, bytes]:
        """The oldest entry, which must fit in `data_size` bytes (else it stays); its user data cut to
        `user_data_size`. Returns (data, retDataSize, userData)."""
        require(data_size > 0, "dataSize must be > 0", ACL_ERROR_INVALID_PARAM)
        require(timeout >= -1, f"timeout {timeout} ms is below -1 (-1: wait forever)", ACL_ERROR_INVALID_PARAM)

        def fits(entry: tuple[bytes, bytes]) -> None:
            require(
                len(entry[0]) <= data_size,
                f"the oldest entry of queue {qid} is {len(entry[0])} bytes, more than dataSize {data_size}",
                ACL_ERROR_INVALID_PARAM,
            )

        data, user = await self._queue(self._tdt(), qid, "qid").take(timeout, fits)
        return data, len(data), user[:user_data_size]

    @acl_call
    def acltdtBindQueueRoutes(self, routes: list[tuple[int, int]]) -> list[int]:
        tdt = self._tdt()
        self._routes_checked(tdt, routes)
        return [tdt.bind(src, dst) for src, dst in routes]

    @acl_call
    def acltdtUnbindQueueRoutes(self, routes: list[tuple[int, int]]) -> list[int]:
        tdt = self._tdt()
        self._routes_checked(tdt, routes)
        for route in routes:
            tdt.routes.pop(tuple(route), None)  # type: ignore[arg-type]
        return [ACL_TDT_QUEUE_ROUTE_UNBIND for _ in routes]

    @acl_call
    def acltdtQueryQueueRoutes(self, mode: int, src_id: int | None, dst_id: int | None) -> list[list[int]]:
        tdt = self._tdt()
        m = acltdtQueueRouteQueryMode
        require(mode in set(m), f"query mode {mode} is not an acltdtQueueRouteQueryMode", ACL_ERROR_INVALID_PARAM)

        def wanted(src: int, dst: int, status: int) -> bool:
            if mode == m.ACL_TDT_QUEUE_ROUTE_QUERY_ABNORMAL:
                return status not in (ACL_TDT_QUEUE_ROUTE_UNBIND, ACL_TDT_QUEUE_ROUTE_BIND)
            return (mode == m.ACL_TDT_QUEUE_ROUTE_QUERY_DST or src == src_id) and (
                mode == m.ACL_TDT_QUEUE_ROUTE_QUERY_SRC or dst == dst_id
            )

        return [[s, d, status] for (s, d), status in tdt.routes.items() if wanted(s, d, status)]

    # --- helpers

    def _open_channel(self, device_id: int, name: str | None, capacity: int, legacy: bool) -> int:
        api = "acltdtCreateChannel" + ("" if legacy else "WithCapacity")
        name = name_checked(name, "name", api)
        require(
            device_id < len(self.machine.devices),
            f"device {device_id} does not exist (the daemon has {len(self.machine.devices)})",
            ACL_ERROR_RT_INVALID_DEVICEID,
        )
        self.ctx.check_handles()
        tdt = self.machine.devices[device_id].tdt_of(self.ctx.tenant)
        channel = tdt.channels.get(name)
        if channel is None:
            channel = tdt.channels[name] = Channel(device_id, name, capacity, legacy)
        elif (channel.capacity, channel.legacy) != (capacity, legacy):
            raise AclError(
                ACL_ERROR_INVALID_PARAM,
                f"{channel} exists with capacity {channel.capacity}"
                + (" (acltdtCreateChannel)" if channel.legacy else "")
                + f": it cannot be opened with capacity {capacity}",
            )
        channel.users += 1
        handle = self.machine.new_handle()
        self.ctx.channels[handle] = channel
        return handle

    def _channel(self, handle: int | None) -> Channel:
        require(bool(handle), "the channel handle is NULL", ACL_ERROR_INVALID_PARAM)
        channel = self.ctx.channels.get(handle or 0)
        if channel is None:
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, f"{handle:#x} is not a TDT channel of this process")
        return channel

    @staticmethod
    def _timeout_checked(channel: Channel, timeout: int) -> None:
        if channel.legacy:
            require(
                timeout == -1,
                f"{channel} was made by acltdtCreateChannel: only timeout -1 (never) is supported, got {timeout}",
                ACL_ERROR_INVALID_PARAM,
            )
        require(timeout >= -1, f"timeout {timeout} ms is below -1 (-1: wait forever)", ACL_ERROR_INVALID_PARAM)

    def _tdt(self) -> DeviceTdt:
        return self.ctx.device().tdt_of(self.ctx.tenant)

    @staticmethod
    def _queue(tdt: DeviceTdt, qid: int, what: str) -> Queue:
        queue = tdt.queues.get(qid)
        if queue is None:
            raise AclError(
                ACL_ERROR_INVALID_QUEUE_ID, f"{what} {qid} is not a queue of this device"
            )  # or another tenant's
        return queue

    def _routes_checked(self, tdt: DeviceTdt, routes: list[tuple[int, int]]) -> None:
        require(bool(routes), "the route list is empty", ACL_ERROR_INVALID_PARAM)
        for index, (src, dst) in enumerate(routes):
            self._queue(tdt, src, f"route {index}: source queue")
            self._queue(tdt, dst, f"route {index}: destination queue")
            require(src != dst, f"route {index} binds queue {src} to itself", ACL_ERROR_INVALID_PARAM)
