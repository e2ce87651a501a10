"""Phase 1 of every operator under its exact C name, and `revalidate`, phase 1 again on the device.

`aclnnXxxGetWorkspaceSize(<args in C order>)` returns `(workspaceSize, executor)`, C's two out-parameters.
A None required argument is AclError 161001, anything else invalid 161002, both naming the argument. The
functions are generated from the declarations in `ops.py`; each C name below is one line.
"""

from __future__ import annotations

import inspect
import keyword
from collections.abc import Callable, Mapping
from typing import Final

from proto.aclnn.decl import ArgValue, OpArgError, OpDecl
from proto.aclnn.executor import aclOpExecutor
from proto.aclnn.host import aclIntArray, aclScalar, aclTensor
from proto.aclnn.hostlist import aclBoolArray, aclFloatArray, aclScalarList, aclTensorList
from proto.aclnn.kernel import KernelDesc
from proto.aclnn.registry import OPS
from proto.constants import aclDataType
from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError

Phase1 = Callable[..., tuple[int, aclOpExecutor]]

MAX_SUFFIX: Final = "GetMaxWorkspaceSize"
MAX_WORKSPACE: Final = frozenset(
    {"FusedInferAttentionScoreV2", "FusedInferAttentionScoreV3", "FusedInferAttentionScoreV4",
     "NsaCompressAttentionInfer", "NsaSelectedAttentionInfer"}
)  # fmt: skip
"""The operators whose op_api also exports `aclnn<Op>GetMaxWorkspaceSize`: phase 1's parameters, the workspace a
launch needs whatever its sequence lengths hold (a captured graph's, updated later). CANN declares it in no public
header; torch_npu finds it with dlsym (`_npu_fused_infer_attention_score_get_max_workspace`, vllm-ascend's graph
mode). It is phase 1 under its other name with the sequence lengths' values unread -- CANN's op_api replaces them by
tensors of their size alone -- and vnpu's attention needs the same workspace whatever they hold."""


def max_workspace_name(op: str) -> str:
    """`aclnn<op>GetMaxWorkspaceSize` for an operator that has one, else ""."""
    return f"aclnn{op}{MAX_SUFFIX}" if op in MAX_WORKSPACE else ""


def get_workspace_size(
    decl: OpDecl, values: Mapping[str, object], *, sizes_only: bool = False
) -> tuple[int, aclOpExecutor]:
    """Phase 1 over one declaration: check the arguments, size the workspace, build the executor. `sizes_only`
    (aclnn<Op>GetMaxWorkspaceSize): the int arrays are checked as zeros of their size -- CANN's op_api replaces
    the sequence lengths by tensors of their size alone -- and the executor keeps their values, which its launch
    checks."""
    name = max_workspace_name(decl.name) if sizes_only else decl.ws_name
    try:
        args = decl.normalize(values)
        checked = {n: _unread(v) for n, v in args.items()} if sizes_only else args
        size = decl.check(checked)
    except OpArgError as error:
        raise error.to_acl(decl, name) from None
    described = KernelDesc(decl.name, args, size) if sizes_only else KernelDesc.checked(decl.name, args, size)
    return size, aclOpExecutor(described)


def _unread(value: ArgValue) -> ArgValue:
    """An int array as zeros of its size (values not read); any other argument as it is."""
    return aclIntArray((0,) * len(value.values)) if type(value) is aclIntArray else value


def revalidate(kernel: KernelDesc) -> KernelDesc:
    """Phase 1's checks again over a description that came from outside; the description, or AclError.

    A KernelDesc is normalized when constructed, so a valid one is returned as is. The workspace size must be
    exactly the one phase 1 computes. Errors name the phase-2 call (`aclnnAdd`). The checks run once per
    description object (`KernelDesc.needed_workspace`).
    """
    if not isinstance(kernel, KernelDesc):
        raise AclError(ACLNN_ERR_PARAM_INVALID, f"expected a KernelDesc, got {type(kernel).__name__}")
    decl = kernel.decl
    size = kernel.needed_workspace
    if size != kernel.workspace_size:
        raise AclError(
            ACLNN_ERR_PARAM_INVALID,
            f"{decl.c_name}: workspace_size is {kernel.workspace_size}, but the arguments need {size} bytes",
            api=decl.c_name,
        )
    return kernel


def _py(name: str) -> str:
    """A C argument name as a Python parameter name (`from` -> `from_`: a keyword cannot be one)."""
    return f"{name}_" if keyword.iskeyword(name) else name


def _bind(decl: OpDecl, args: tuple[object, ...], kwargs: dict[str, object]) -> dict[str, object]:
    names = decl.arg_names
    kwargs = {(key[:-1] if key.endswith("_") and keyword.iskeyword(key[:-1]) else key): v for key, v in kwargs.items()}
    if len(args) > len(names):
        raise TypeError(f"{decl.ws_name}() takes {len(names)} arguments ({', '.join(names)}), got {len(args)}")
    values = dict(zip(names, args, strict=False))
    for key, value in kwargs.items():
        if key not in names or key in values:
            raise TypeError(f"{decl.ws_name}() got an unexpected or repeated argument {key!r}")
        values[key] = value
    missing = [name for name in names if name not in values]
    if missing:
        raise TypeError(f"{decl.ws_name}() is missing argument {missing[0]!r}")
    return values


# Argument types whose values cannot change: a call with the very same objects as an earlier call that passed
# phase 1 gets the same workspace size and description (a fresh executor each time).
DESTROYABLE: Final = frozenset(
    {aclTensor, aclScalar, aclIntArray, aclTensorList, aclScalarList, aclBoolArray, aclFloatArray}
)
IMMUTABLE: Final = DESTROYABLE | {aclDataType, int, float, bool, str, type(None)}
MEMO_SIZE: Final = 1024  # remembered argument tuples per operator; the memo starts over when full


def _destroyed(value: object) -> bool:
    if type(value) is aclTensorList:
        return value.destroyed or any(t is not None and t.destroyed for t in value.tensors)
    return type(value) in DESTROYABLE and bool(value.destroyed)  # type: ignore[attr-defined]


def phase1(decl: OpDecl, name: str | None = None) -> Phase1:
    """The C-named phase-1 function of `decl`, taking its arguments positionally or by C name.

    A loop that launches the same operator over the same host objects (the common case: tensors are created
    once) skips the checks after the first call: the result is remembered by the identity of the arguments,
    which the memo keeps alive, so an identity cannot be reused while it is remembered.
    """
    memo: dict[tuple[int, ...], tuple[tuple[object, ...], int, KernelDesc]] = {}
    sizes_only = name is not None and name == max_workspace_name(decl.name)

    def call(*args: object, **kwargs: object) -> tuple[int, aclOpExecutor]:
        key = None
        if not kwargs and len(args) == len(decl.arg_names) and all(type(a) in IMMUTABLE for a in args):
            key = tuple(map(id, args))
            known = memo.get(key)
            if known is not None and not any(map(_destroyed, args)):  # a memo hit still refuses a destroyed one
                return known[1], aclOpExecutor(known[2])
        size, executor = get_workspace_size(decl, _bind(decl, args, kwargs), sizes_only=sizes_only)
        if key is not None:
            if len(memo) >= MEMO_SIZE:
                memo.clear()
            memo[key] = (args, size, executor.kernel)
        return size, executor

    call.__name__ = call.__qualname__ = name or decl.ws_name
    call.__doc__ = (
        f"{name or decl.ws_name}({', '.join(decl.arg_names)}) -> (workspaceSize, executor): phase 1 of {decl.c_name}."
    )
    params = [inspect.Parameter(_py(name), inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in decl.arg_names]
    call.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    call.decl = decl  # type: ignore[attr-defined]
    return call


_FUNCTIONS: dict[str, Phase1] = {}


def remember(made: Phase1) -> None:
    """Make `made` (a user-declared operator's own phase-1 function) the one `function` hands out for its name."""
    _FUNCTIONS[made.__name__] = made


def function(ws_name: str) -> Phase1 | None:
    """The phase-1 function named `ws_name` ("aclnnAddGetWorkspaceSize") of any declared operator, made on first
    use (and `aclnn<Op>GetMaxWorkspaceSize` of the `MAX_WORKSPACE` ones); None for a name that is not one. A
    user-declared operator's is its own (`proto.operators`)."""
    if not ws_name.startswith("aclnn"):
        return None
    if ws_name.endswith(MAX_SUFFIX) and ws_name[5 : -len(MAX_SUFFIX)] in MAX_WORKSPACE:
        decl = OPS.get(ws_name[5 : -len(MAX_SUFFIX)])
    elif ws_name.endswith("GetWorkspaceSize"):
        decl = OPS.get(ws_name[5 : -len("GetWorkspaceSize")])
    else:
        return None
    if decl is None:
        return None
    made = _FUNCTIONS.get(ws_name)
    if made is None or getattr(made, "decl", None) is not decl:
        made = phase1(decl, ws_name)
        _FUNCTIONS[ws_name] = made
    return made


def __getattr__(name: str) -> Phase1:
    """`aclnn<Op>GetWorkspaceSize` of any declared operator, as an attribute of this module too."""
    found = function(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return found
