"""A model's name, id, abort and destroy callbacks (modelri spec 5): aclmdlRISetName, aclmdlRIGetName,
aclmdlRIGetId, aclmdlRIAbort, aclmdlRIDestroyRegisterCallback, aclmdlRIDestroyUnregisterCallback.

Destroy callbacks are the client's functions: the daemon keeps the (func, userData) values it was given, keyed by
func, and aclmdlRIDestroy hands them back (`calls.model.model`) for the client to call on the destroying thread.
"""

from __future__ import annotations

import asyncio

from proto.errors import (
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_MODEL_CONTEXT,
    ACL_ERROR_RT_OVER_LIMIT,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from server.npu.area import Area, acl_call, require
from server.npu.model.model import MAX_NAME_BYTES, ModelRI

ABORT_WAIT = 1.0  # seconds aclmdlRIAbort waits at most for the aborted replay to end (a kernel running finishes)


class MiscModelCalls(Area):
    @acl_call
    def aclmdlRISetName(self, model: int | None, name: str | None) -> None:
        """Any model, sub-models included; the last call wins. The runtime keeps any length; vnpu keeps names of
        up to MAX_NAME_BYTES UTF-8 bytes (207012 beyond, the old name stays), so a program's names cannot grow
        the daemon."""
        target = self.ctx.model(model)
        require(name is not None, "name is NULL")
        assert name is not None
        self._model_here(target)
        size = len(name.encode(errors="surrogatepass"))
        if size > MAX_NAME_BYTES:
            raise AclError(
                ACL_ERROR_RT_OVER_LIMIT,
                f"the name is {size} bytes (UTF-8): vnpu keeps model names of at most {MAX_NAME_BYTES} bytes",
            )
        target.name = name

    @acl_call
    def aclmdlRIGetName(self, model: int | None, max_len: int) -> str:
        """The name ("" if never set); `max_len` bytes must hold it and its NUL, else 507000 (no truncation)."""
        target = self.ctx.model(model)
        require(max_len != 0, "maxLen is 0: the buffer must hold at least the name's NUL", ACL_ERROR_RT_PARAM_INVALID)
        self._model_here(target)
        size = len(target.name.encode()) + 1
        if max_len < size:
            raise AclError(
                ACL_ERROR_RT_INTERNAL_ERROR,
                f"the name of {target} takes {size} bytes with its NUL but maxLen is {max_len}: the runtime does "
                "not truncate it (the buffer is zero-filled)",
            )
        return target.name

    @acl_call
    def aclmdlRIGetId(self, model: int | None) -> int:
        """The runtime's model id (the smallest free one of its device; reused after aclmdlRIDestroy), which
        aclmdlRIDebugJsonPrint writes as "Model Id"."""
        return self.ctx.model(model).ident

    @acl_call
    async def aclmdlRIAbort(self, model: int | None) -> None:
        """Stops the model's running replay: its waits give up, its tasks not started do not run, and the
        stream it was launched on reports 507023 (ACL_ERROR_RT_MODEL_ABORT_NORMAL) at its next synchronize;
        queued replays run as usual. A model that is not running is left as it is. The runtime rejects only
        sub-models (207000); vnpu aborts a root capture model like any other (the docs call it unsupported)."""
        target = self.ctx.model(model, ACL_ERROR_RT_PARAM_INVALID)
        target.refuse_sub("aclmdlRIAbort")
        self._model_here(target)
        ended = target.abort()
        if ended is not None:
            await asyncio.wait({ended}, timeout=ABORT_WAIT)

    @acl_call
    def aclmdlRIDestroyRegisterCallback(self, model: int | None, func: int | None, user_data: int | None) -> None:
        """`func` and `userData` are the client's (a C function pointer, a Python callable's key): one
        registration per func, whatever the userData."""
        target = self._callback_model(model, func, "aclmdlRIDestroyRegisterCallback")
        assert func is not None
        if func in target.destroy_callbacks:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID,
                f"func {func:#x} is already registered as a destroy callback of {target}: one registration per "
                "function (unregister it first to change its userData)",
            )
        target.destroy_callbacks[func] = user_data or 0

    @acl_call
    def aclmdlRIDestroyUnregisterCallback(self, model: int | None, func: int | None) -> None:
        target = self._callback_model(model, func, "aclmdlRIDestroyUnregisterCallback")
        assert func is not None
        if target.destroy_callbacks.pop(func, None) is None:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID, f"func {func:#x} is not registered as a destroy callback of {target}"
            )

    def _callback_model(self, model: int | None, func: int | None, api: str) -> ModelRI:
        """No ACL checks: a NULL model or func reaches the runtime, which answers 107000."""
        target = self.ctx.model(model, ACL_ERROR_RT_PARAM_INVALID)
        require(bool(func), "func is NULL", ACL_ERROR_RT_PARAM_INVALID)
        target.refuse_sub(api)
        return target

    def _model_here(self, model: ModelRI) -> None:
        device = self.ctx.device()
        if model.device is not device:
            raise AclError(
                ACL_ERROR_RT_MODEL_CONTEXT,
                f"{model} belongs to device {model.device.index}, but this thread's device is {device.index}",
            )
