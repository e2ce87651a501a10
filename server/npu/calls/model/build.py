"""Build API calls (modelri spec 2): aclmdlRIBuildBegin, aclmdlRIBindStream, aclmdlRIEndTask, aclmdlRIBuildEnd,
aclmdlRIUnbindStream, and the stream-control tasks of a Build model, aclrtActiveStream and aclrtSwitchStream.

The checks follow the runtime's layers in its order (ACL NULL checks 100000, handle validation 107017, the checks
layer, the implementation); the model's replay lives in `build`.
"""

from __future__ import annotations

from proto.constants import (
    ACL_MODEL_STREAM_FLAG_DEFAULT,
    ACL_MODEL_STREAM_FLAG_HEAD,
    ACL_STREAM_DEVICE_USE_ONLY,
    ACL_STREAM_FAST_LAUNCH,
    ACL_STREAM_PERSISTENT,
    aclrtCompareDataType,
    aclrtCondition,
)
from proto.enumtext import not_member
from proto.errors import (
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_MODEL_CONTEXT,
    ACL_ERROR_RT_MODEL_EXECUTE,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CAPTURED,
    ACL_ERROR_RT_STREAM_CONTEXT,
    ACL_ERROR_RT_STREAM_MODEL,
    AclError,
)
from server.npu.area import Area, acl_call, require
from server.npu.core.stream import Stream
from server.npu.model.build import ActiveStreamTask, BuildLane, BuildModel, EndGraphTask, SwitchStreamTask
from server.npu.model.model import ModelRI

_FLAGS = {ACL_MODEL_STREAM_FLAG_HEAD: "HEAD", ACL_MODEL_STREAM_FLAG_DEFAULT: "DEFAULT"}
_WORD_SIZES = {aclrtCompareDataType.ACL_RT_SWITCH_INT32: 4, aclrtCompareDataType.ACL_RT_SWITCH_INT64: 8}


class BuildCalls(Area):
    @acl_call
    def aclmdlRIBuildBegin(self, flag: int) -> int:
        """A new, empty Build model of the thread's ACL context (the C `modelRI` out-pointer NULL: 100000)."""
        require(flag == 0, f"flag is reserved and must be 0, got {flag:#x}", ACL_ERROR_RT_PARAM_INVALID)
        owner = self.ctx.acl_context()
        self.ctx.check_handles()
        owner.device.models.take(self.ctx.quota)
        model = BuildModel(self.machine.new_handle(), owner.device, owner)
        self.ctx.models[model.handle] = model
        return model.handle

    @acl_call
    async def aclmdlRIBindStream(self, model: int | None, stream: int | None, flag: int) -> None:
        """The stream becomes the model's first lane; the call waits for the default stream's work, as the
        runtime's bind does."""
        require(bool(model), "modelRI is NULL")
        require(
            flag in _FLAGS,
            f"flag {flag:#x} is neither ACL_MODEL_STREAM_FLAG_HEAD (0) nor ACL_MODEL_STREAM_FLAG_DEFAULT (0x7fffffff)",
            ACL_ERROR_RT_PARAM_INVALID,
        )
        target = self.ctx.model(model)
        on = self._stream_arg(stream)
        if on is not None and not on.flags & ACL_STREAM_PERSISTENT:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                f"{on} was not created with ACL_STREAM_PERSISTENT (aclrtCreateStreamWithConfig): only persistent "
                "streams can be bound to a model",
            )
        if on is not None:
            self._not_bound(on)
        require(
            on is not None,
            "stream is NULL: bind a stream created with ACL_STREAM_PERSISTENT",
            ACL_ERROR_RT_PARAM_INVALID,
        )
        assert on is not None
        build = self._build_model(target, "aclmdlRIBindStream")
        self._not_capturing(on, "aclmdlRIBindStream")
        if on.flags & ACL_STREAM_DEVICE_USE_ONLY:
            raise AclError(ACL_ERROR_RT_INTERNAL_ERROR, f"{on} is ACL_STREAM_DEVICE_USE_ONLY: it cannot be bound")
        if on.stop_on_failure:
            raise AclError(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                f"{on} is in ACL_STOP_ON_FAILURE mode (aclrtSetStreamFailureMode): a model stream cannot be",
            )
        if on.flags & ACL_STREAM_FAST_LAUNCH:
            raise AclError(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{on} is ACL_STREAM_FAST_LAUNCH: it cannot be bound")
        self._same_model_context(build)
        lane = BuildLane(on.handle, flag=flag, stream=on, model=build)
        build.lanes.insert(0, lane)
        self.ctx.bound[on] = lane
        default = self.ctx.acl_context().default_stream
        await default.reach(default.issued)

    @acl_call
    def aclmdlRIEndTask(self, model: int | None, stream: int | None) -> None:
        """The model ends when `stream` reaches this point (its next persisted task); one end per model."""
        require(bool(model), "modelRI is NULL")
        target = self.ctx.model(model)
        on = self._stream_arg(stream) or self.ctx.acl_context().default_stream
        build = self._build_model(target, "aclmdlRIEndTask")
        self._not_capturing(on, "aclmdlRIEndTask")
        self._same_stream_context(on)
        self._same_model_context(build)
        lane = self.ctx.bound.get(on)
        if lane is None or lane.model is not build:
            raise AclError(
                ACL_ERROR_RT_INTERNAL_ERROR,
                f"{on} is not bound to {build}: bind it with aclmdlRIBindStream before aclmdlRIEndTask",
            )
        if build.end is not None:
            raise AclError(
                ACL_ERROR_RT_INTERNAL_ERROR,
                f"{build} already has its end task on {build.end}: a model has one aclmdlRIEndTask, on the stream "
                "where all its paths meet",
            )
        build.end = lane
        self.ctx.issue(on, EndGraphTask())

    @acl_call
    def aclmdlRIBuildEnd(self, model: int | None, reserve: int | None) -> None:
        """Marks the model loaded (executable); calling it again changes nothing. As the runtime's
        Model::LoadCompleteByStreamPrep: a model with no bound stream is 107005, one with no end task 507011."""
        require(bool(model), "modelRI is NULL")
        require(not reserve, f"reserve must be NULL, got {reserve or 0:#x}")
        build = self._build_model(self.ctx.model(model), "aclmdlRIBuildEnd")
        self._same_model_context(build)
        if not build.lanes:
            raise AclError(
                ACL_ERROR_RT_STREAM_MODEL,
                f"{build} has no stream: bind one with aclmdlRIBindStream before aclmdlRIBuildEnd",
            )
        if build.end is None:
            raise AclError(
                ACL_ERROR_RT_MODEL_EXECUTE,
                f"{build} has no end task: call aclmdlRIEndTask on the stream where its paths meet before "
                "aclmdlRIBuildEnd",
            )
        build.loaded = True

    @acl_call
    async def aclmdlRIUnbindStream(self, model: int | None, stream: int | None) -> None:
        """Waits for the stream's work (and a running execution of the model), then the stream is an ordinary
        stream again; its persisted tasks leave the model."""
        require(bool(model), "modelRI is NULL")
        target = self.ctx.model(model)
        on = self._stream_arg(stream) or self.ctx.acl_context().default_stream
        build = self._build_model(target, "aclmdlRIUnbindStream")
        self._not_capturing(on, "aclmdlRIUnbindStream")
        self._same_model_context(build)
        lane = self.ctx.bound.get(on)
        if lane is None or lane.model is not build:
            where = f"bound to {lane.model}" if lane is not None else "not bound to any model"
            raise AclError(ACL_ERROR_RT_STREAM_MODEL, f"{on} is not bound to {build}: it is {where}")
        await on.reach(on.issued)
        await build.wait_idle()
        if self.ctx.bound.get(on) is lane:
            self.ctx.unbind(on)

    @acl_call
    def aclrtActiveStream(self, active_stream: int | None, stream: int | None) -> None:
        """A task of `stream`'s model that starts `activeStream` alongside `stream` when it runs."""
        require(bool(active_stream), "activeStream is NULL")
        require(bool(stream), "stream is NULL")
        target, on = self._stream_arg(active_stream), self._stream_arg(stream)
        assert target is not None and on is not None
        issuer = self._model_stream(on, "stream")
        activated = self._model_stream(target, "activeStream", issuer)
        self._same_stream_context(on)
        self._same_stream_context(target)
        self.ctx.issue(on, ActiveStreamTask(activated))

    @acl_call
    def aclrtSwitchStream(
        self,
        left_value: int | None,
        cond: int,
        right_value: int | None,
        data_type: int,
        true_stream: int | None,
        false_stream: int | None,
        stream: int | None,
    ) -> None:
        """A task of `stream`'s model: when it runs, if `*leftValue cond *rightValue` it jumps to `trueStream`
        (`stream` stops there), otherwise `stream` goes on. The words are read when the task runs."""
        require(bool(left_value), "leftValue is NULL")
        require(bool(right_value), "rightValue is NULL")
        require(bool(true_stream), "trueStream is NULL")
        require(bool(stream), "stream is NULL")
        require(not false_stream, "falseStream must be NULL: when the condition is false the issuing stream goes on")
        if cond not in aclrtCondition._value2member_map_:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, not_member("cond", cond, aclrtCondition))
        if data_type not in aclrtCompareDataType._value2member_map_:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, not_member("dataType", data_type, aclrtCompareDataType))
        target, on = self._stream_arg(true_stream), self._stream_arg(stream)
        assert target is not None and on is not None and left_value and right_value
        issuer = self._model_stream(on, "stream")
        jumped = self._model_stream(target, "trueStream", issuer)
        self._same_stream_context(on)
        self._same_stream_context(target)
        size = _WORD_SIZES[aclrtCompareDataType(data_type)]
        self.ctx.memory.device_range("leftValue", left_value, size)
        self.ctx.memory.device_range("rightValue", right_value, size)
        pins = self.ctx.memory.pins(left_value, right_value)
        self.ctx.issue(on, SwitchStreamTask(left_value, cond, right_value, data_type, jumped, pins))

    def _stream_arg(self, handle: int | None) -> Stream | None:
        """The stream `handle` of this process (None for NULL); a handle that is no live stream: 107017."""
        if not handle:
            return None
        stream = self.ctx.streams.get(handle) or self.ctx.default_streams.get(handle)
        if stream is None:
            raise AclError(ACL_ERROR_RT_INVALID_HANDLE, self.ctx.handles.not_a("stream", handle))
        return stream

    def _build_model(self, model: ModelRI, api: str) -> BuildModel:
        if not isinstance(model, BuildModel):
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                f"{api} takes a model made with aclmdlRIBuildBegin; {model} is a captured model (ACL Graph mode is "
                "not supported)",
            )
        return model

    def _not_bound(self, stream: Stream) -> None:
        lane = self.ctx.bound.get(stream)
        if lane is not None:
            raise AclError(
                ACL_ERROR_RT_STREAM_MODEL,
                f"{stream} is already bound to {lane.model}: unbind it (aclmdlRIUnbindStream) before binding it again",
            )

    def _not_capturing(self, stream: Stream, api: str) -> None:
        if stream in self.ctx.capturing:
            raise AclError(ACL_ERROR_RT_STREAM_CAPTURED, f"{api} is not allowed on {stream} while it is capturing")

    def _model_stream(self, stream: Stream, name: str, issuer: BuildLane | None = None) -> BuildLane:
        """The lane of `stream`, which must be bound to a model (to the issuer's, when given): 107005."""
        lane = self.ctx.bound.get(stream)
        if lane is None:
            raise AclError(
                ACL_ERROR_RT_STREAM_MODEL,
                f"{name} {stream} is not bound to a model: stream-control tasks belong to Build models "
                "(aclmdlRIBindStream)",
            )
        if issuer is not None and lane.model is not issuer.model:
            raise AclError(
                ACL_ERROR_RT_STREAM_MODEL,
                f"{name} {stream} is bound to {lane.model}, but the issuing stream to {issuer.model}: a task can only "
                "start a stream of its own model",
            )
        return lane

    def _same_stream_context(self, stream: Stream) -> None:
        current = self.ctx.acl_context()
        if self.ctx.stream_contexts.get(stream.handle) is not current:
            raise AclError(ACL_ERROR_RT_STREAM_CONTEXT, f"{stream} is not a stream of this thread's {current}")

    def _same_model_context(self, model: BuildModel) -> None:
        current = self.ctx.acl_context()
        if model.owner is not current:
            raise AclError(ACL_ERROR_RT_MODEL_CONTEXT, f"{model} belongs to {model.owner}, not this thread's {current}")
