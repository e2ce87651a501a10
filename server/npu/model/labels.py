"""Labels (aclrtLabel, aclrtLabelList): jump targets inside a Build model, and the switch that jumps to one.

As in the runtime, a label is a host object of its process (at most MAX_LABELS alive, each with an id) and a label
list is **device memory**: aclrtCreateLabelList allocates one LABEL_INFO_SIZE-byte slot per label, filled with
0xFF, and gives each label its slot for good (a label joins one list in its life, even one that failed half-way
or was destroyed since); aclrtDestroyLabelList frees it as aclrtFree would. aclrtSetLabel puts a label task at
the current end of a bound stream's lane and writes where it is into the label's slot: vnpu's slot is the label's
id (uint32), the task's index in its lane (uint32) and the stream's handle (uint64); an unset slot reads
0xFFFFFFFF as its id.

aclrtSwitchLabelByIndex's task, when it runs, reads the uint32 index at `ptr`; an index not below `maxValue`
becomes `maxValue - 1` (0 when `maxValue` is 0), and it must be below the number of label tasks of the model (the
runtime's label count; otherwise the switch fails). It reads that slot of the list and goes on at its label's task:
in its own lane, or in another lane of the model, which must not be running then (the device's switch program
fails on a busy stream), while the issuing lane stops. Whatever is wrong with the slot fails the switch with
507011 saying what it found. Destroying a label changes nothing in a model: the slot keeps it (as on the device).
"""

from __future__ import annotations

import asyncio
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from proto.errors import ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_MODEL_EXECUTE, AclError
from proto.labels import LABEL_INFO_SIZE, MAX_LABELS
from server.npu.model.build import BuildLane, BuildReplayLane
from server.npu.tasks.pins import Pins, check_pins

if TYPE_CHECKING:
    from server.npu.core.lane import Lane
    from server.npu.core.stream import Stream
    from server.npu.machine import Machine

UNSET = 0xFFFFFFFF
_SLOT = struct.Struct("<IIQ")  # label id, task index in its lane, stream handle


class LabelIds:
    """The process's label ids: fresh ones first, then freed ones in the order they were freed."""

    def __init__(self) -> None:
        self._fresh = 0
        self._freed: list[int] = []

    def take(self) -> int:
        if self._fresh < MAX_LABELS:
            self._fresh += 1
            return self._fresh - 1
        if not self._freed:
            raise AclError(
                ACL_ERROR_RT_INTERNAL_ERROR,
                f"this process holds {MAX_LABELS} labels, the runtime's limit: destroy some (aclrtDestroyLabel)",
            )
        return self._freed.pop(0)

    def give(self, ident: int) -> None:
        self._freed.append(ident)


@dataclass(eq=False)
class Label:
    """aclrtLabel: its id, the ACL context it was made in, its slot (once in a list), where it was set."""

    handle: int
    ident: int
    owner: object  # the AclContext current at aclrtCreateLabel
    slot: int | None = None  # the device address of its slot in a label list
    slot_owner: object = None  # the list's allocation, so that a freed list is never written
    stream: Stream | None = field(default=None, repr=False)  # the stream it was set on (aclrtSetLabel)
    destroyed: bool = False

    def __str__(self) -> str:
        gone = ", destroyed" if self.destroyed else ""
        return f"label {self.handle:#x} (id {self.ident}{gone})"


@dataclass(eq=False)
class LabelList:
    """aclrtLabelList: the device block at `ptr` (its `owner` allocation) holding a slot for each of `labels`."""

    ptr: int
    owner: object
    labels: tuple[Label, ...]

    def __str__(self) -> str:
        return f"label list {self.ptr:#x} ({len(self.labels)} label(s))"


def write_slot(machine: Machine, label: Label, index: int, stream_handle: int) -> None:
    """Where `label` now is, into its slot; nothing when its list's memory is gone (the runtime's copy fails)."""
    if label.slot is None or machine.owner(label.slot) is not label.slot_owner:
        return
    machine.region(label.slot, LABEL_INFO_SIZE)[:] = np.frombuffer(
        _SLOT.pack(label.ident, index, stream_handle), np.uint8
    )


@dataclass(frozen=True, eq=False)
class LabelSetTask:
    """aclrtSetLabel: a place in a lane that a label switch can go on at; running it does nothing."""

    label: Label
    api: str = "aclrtSetLabel"

    def describe(self) -> str:
        return f"{self.api}: {self.label}"

    def title(self) -> str:
        return f"{self.api}: label {self.label.handle:#x}"

    async def run(self, lane: Lane) -> None:
        return None


@dataclass(frozen=True, eq=False)
class SwitchLabelTask:
    """aclrtSwitchLabelByIndex: go on at the label of slot `*ptr` (uint32, read now) of the list at `label_list`."""

    ptr: int
    max_value: int
    label_list: int
    pins: Pins
    known: LabelList | None = field(default=None, repr=False)  # the list at `label_list` when issued, for views
    api: str = "aclrtSwitchLabelByIndex"

    def describe(self) -> str:
        listed = str(self.known) if self.known is not None else f"label list {self.label_list:#x}"
        return f"{self.api} on *{self.ptr:#x} (uint32, maxValue {self.max_value}) over {listed}"

    async def run(self, lane: Lane) -> None:
        assert isinstance(lane, BuildReplayLane)
        try:
            check_pins(lane, self.pins)
            target, index = self._target(lane)
            if lane.replay.count_jump(lane):
                await asyncio.sleep(0)
        except AclError:
            lane.halted = True
            raise
        lane.goto = (target, index)

    def _target(self, lane: BuildReplayLane) -> tuple[BuildLane, int]:
        machine, model = lane.machine, lane.replay.model
        value = int(machine.device_region(self.ptr, 4).view(np.uint32)[0])
        index = value if value < self.max_value else max(self.max_value, 1) - 1
        count = sum(isinstance(t, LabelSetTask) for other in model.lanes for t in other.tasks)
        read = f"index {index} (read {value} at {self.ptr:#x}, maxValue {self.max_value})"
        if index >= count:
            raise AclError(
                ACL_ERROR_RT_MODEL_EXECUTE, f"{read} is not below the {count} label(s) set in {model} (aclrtSetLabel)"
            )
        slot = self.label_list + index * LABEL_INFO_SIZE
        ident, position, stream_handle = _SLOT.unpack(machine.device_region(slot, LABEL_INFO_SIZE).tobytes())
        where = f"slot {index} of label list {self.label_list:#x}"
        if ident == UNSET:
            raise AclError(
                ACL_ERROR_RT_MODEL_EXECUTE,
                f"{read}: {where} holds no label position: its label was not set (aclrtSetLabel) after the list "
                "was made",
            )
        target = next((t for t in model.lanes if isinstance(t, BuildLane) and t.stream_handle == stream_handle), None)
        if target is None:
            raise AclError(
                ACL_ERROR_RT_MODEL_EXECUTE,
                f"{read}: the label of {where} (id {ident}) is set on stream {stream_handle:#x}, which is not bound "
                f"to {model}",
            )
        found = target.tasks[position] if position < len(target.tasks) else None
        if not isinstance(found, LabelSetTask) or found.label.ident != ident:
            raise AclError(
                ACL_ERROR_RT_MODEL_EXECUTE,
                f"{read}: {where} says label id {ident} is task #{position} of {target}, which holds no such label "
                "(was the list's memory overwritten?)",
            )
        if target is not lane.lane and target in lane.replay.active:
            raise AclError(
                ACL_ERROR_RT_MODEL_EXECUTE,
                f"{read}: the label of {where} is on {target}, which is still running in this execution: a label "
                "switch can only go on in an idle stream of the model",
            )
        return target, position
