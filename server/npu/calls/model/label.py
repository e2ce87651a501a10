"""Label calls: aclrtCreateLabel, aclrtDestroyLabel, aclrtCreateLabelList, aclrtDestroyLabelList, aclrtSetLabel and
aclrtSwitchLabelByIndex (breadth spec 7.3; what they are and how a switch runs: `labels`).

The checks follow the runtime's code in its order (acl/label.cpp's NULL checks 100000; the rts layer's range of
num, 107000; handle validation 107017; ApiImpl's context checks: a label of another ACL context 507031, a stream
of another one 107003; a stream bound to no model 107005 -- a capturing stream included, since a capture binds no
user stream; then Label::Set's 507000s). Neither `ptr`, `maxValue` nor the list of a switch is checked when it is
issued, as in the runtime: what they point at is read when the switch runs.
"""

from __future__ import annotations

from proto.errors import (
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_LABEL_CONTEXT,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CONTEXT,
    ACL_ERROR_RT_STREAM_MODEL,
    AclError,
)
from proto.labels import LABEL_INFO_SIZE, MAX_LABELS
from server.npu.area import Area, acl_call, require
from server.npu.core.stream import Stream
from server.npu.model.build import BuildLane
from server.npu.model.labels import Label, LabelList, LabelSetTask, SwitchLabelTask, write_slot
from server.npu.process.memory import free_device, malloc_device


class LabelCalls(Area):
    @acl_call
    def aclrtCreateLabel(self) -> int:
        """A label of the thread's ACL context, in no list and set nowhere yet (the C `label` out-pointer NULL:
        100000)."""
        owner = self.ctx.acl_context()
        label = Label(self.machine.new_handle(), self.ctx.label_ids.take(), owner)
        self.ctx.labels[label.handle] = label
        return label.handle

    @acl_call
    def aclrtDestroyLabel(self, label: int | None) -> None:
        """The handle is gone; a list or model that holds the label keeps it (its slot says where it is)."""
        found = self._label(label)
        self._same_label_context(found)
        del self.ctx.labels[found.handle]
        found.destroyed = True
        self.ctx.label_ids.give(found.ident)
        self.ctx.handles.bury(found.handle, "label")

    @acl_call
    def aclrtCreateLabelList(self, labels: list[int | None] | None, num: int) -> int:
        """Device memory of `num` slots, 0xFF-filled, one per label; each label gets its slot for good."""
        require(labels is not None, "labels is NULL")
        assert labels is not None
        require(0 < num <= MAX_LABELS, f"num must be in (0, {MAX_LABELS}], got {num}", ACL_ERROR_RT_PARAM_INVALID)
        require(len(labels) == num, f"labels holds {len(labels)} label(s) but num is {num}", ACL_ERROR_RT_PARAM_INVALID)
        members = []
        for i, handle in enumerate(labels):
            members.append(self._label(handle, f"labels[{i}]"))
        self.ctx.acl_context()
        ptr = malloc_device(self.ctx, num * LABEL_INFO_SIZE, 0)
        self.machine.region(ptr, num * LABEL_INFO_SIZE)[:] = 0xFF
        owner = self.machine.owner(ptr)
        for i, member in enumerate(members):
            if member.slot is not None:
                free_device(self.ctx, ptr, "aclrtCreateLabelList")
                raise AclError(
                    ACL_ERROR_RT_INTERNAL_ERROR,
                    f"labels[{i}], {member}, already has its slot in a label list (made by an earlier "
                    "aclrtCreateLabelList, or earlier in this one): a label joins one list in its life, even one "
                    "destroyed since; as in the runtime, the labels before it in this call keep the slots they got",
                )
            member.slot, member.slot_owner = ptr + i * LABEL_INFO_SIZE, owner
        self.ctx.label_lists[ptr] = LabelList(ptr, owner, tuple(members))
        return ptr

    @acl_call
    def aclrtDestroyLabelList(self, label_list: int | None) -> None:
        """Frees the list's memory, as aclrtFree would (the runtime's rtsFree): a model switching over it fails
        when the switch runs; its labels keep their slots (they cannot join another list)."""
        require(bool(label_list), "labelList is NULL")
        assert label_list is not None
        free_device(self.ctx, label_list, "aclrtDestroyLabelList")
        self.ctx.label_lists.pop(label_list, None)

    @acl_call
    def aclrtSetLabel(self, label: int | None, stream: int | None) -> None:
        """A label task at the current end of `stream`'s lane, and its position written into the label's slot."""
        require(bool(label), "label is NULL")
        require(bool(stream), "stream is NULL")
        found = self._label(label)
        on = self.ctx.any_stream(stream)
        self._same_label_context(found)
        self._same_stream_context(on)
        lane = self._bound_lane(on, "aclrtSetLabel")
        if found.stream is not None and found.stream is not on:
            raise AclError(
                ACL_ERROR_RT_INTERNAL_ERROR,
                f"{found} is set on {found.stream} already, not on {on}: a label has one place",
            )
        if found.stream is not None:
            raise AclError(ACL_ERROR_RT_INTERNAL_ERROR, f"{found} is set already: a label cannot be set repeatedly")
        if found.slot is None:
            raise AclError(
                ACL_ERROR_RT_INTERNAL_ERROR,
                f"{found} is in no label list: call aclrtCreateLabelList with it before aclrtSetLabel",
            )
        position = len(lane.tasks)
        self.ctx.issue(on, LabelSetTask(found))
        write_slot(self.machine, found, position, on.handle)
        found.stream = on

    @acl_call
    def aclrtSwitchLabelByIndex(
        self, ptr: int | None, max_value: int, label_list: int | None, stream: int | None
    ) -> None:
        """A task of `stream`'s model that goes on at the label of slot `*ptr` of `labelList` when it runs."""
        require(bool(ptr), "ptr is NULL")
        require(bool(label_list), "labelList is NULL")
        require(bool(stream), "stream is NULL")
        assert ptr is not None and label_list is not None
        on = self.ctx.any_stream(stream)
        self._same_stream_context(on)
        self._bound_lane(on, "aclrtSwitchLabelByIndex")
        known = self.ctx.label_lists.get(label_list)
        if known is not None and self.machine.owner(label_list) is not known.owner:
            known = None
        self.ctx.issue(on, SwitchLabelTask(ptr, max_value, label_list, self.ctx.memory.pins(ptr, label_list), known))

    def _label(self, handle: int | None, name: str = "label") -> Label:
        require(bool(handle), f"{name} is NULL" + (" (the runtime would dereference it)" if name != "label" else ""))
        found = self.ctx.labels.get(handle or 0)
        if found is None:
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, f"{name}: {self.ctx.handles.not_a('label', handle or 0)}")
        return found

    def _same_label_context(self, label: Label) -> None:
        current = self.ctx.acl_context()
        if label.owner is not current:
            raise AclError(
                ACL_ERROR_RT_LABEL_CONTEXT, f"{label} was made in {label.owner}, not this thread's {current}"
            )

    def _same_stream_context(self, stream: Stream) -> None:
        current = self.ctx.acl_context()
        if self.ctx.stream_contexts.get(stream.handle) is not current:
            raise AclError(ACL_ERROR_RT_STREAM_CONTEXT, f"{stream} is not a stream of this thread's {current}")

    def _bound_lane(self, stream: Stream, api: str) -> BuildLane:
        lane = self.ctx.bound.get(stream)
        if lane is None or lane.model is None:
            capturing = (
                " (it is capturing: a capture binds none of the user's streams)" if stream in self.ctx.capturing else ""
            )
            raise AclError(
                ACL_ERROR_RT_STREAM_MODEL,
                f"{stream} is not bound to a model{capturing}: {api} puts a task into a stream of a Build model "
                "(aclmdlRIBindStream)",
            )
        return lane
