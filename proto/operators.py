"""User-declared aclnn operators: an `OpDecl` and its numpy kernel from a user's module, seen by every side.

A module declares an operator once, as vnpu declares its own (`proto/aclnn/ops.py`):

    from proto.aclnn.decl import Arg, ArgKind, OpDecl
    from proto.operators import operator

    @operator(OpDecl("ScaledAdd", (Arg("self", ArgKind.TENSOR), ..., Arg("out", ArgKind.OUT)), MyRule()),
              doc="out = self + scale * other")
    def scaled_add(self, other, scale, out, workspace):
        np.add(self, scale * other, out=out, casting="unsafe")

Declaring adds the operator to `proto.aclnn.OPS` (phase 1, kernel descriptions, revalidation, and through it the
call table's `aclnn<Name>`, so REST and WebSocket have it) and to `USER` (its kernel, for the device). The kernel is
called by the arguments' C names: a tensor is a numpy view of device memory (inputs read-only, written tensors
writeable), a scalar its value, an int array a tuple, a dtype attribute a numpy dtype, other attributes as they
are; `workspace` is a uint8 view of phase 1's workspace (None when it is 0 bytes). It writes its outputs in place.

`load` imports the modules that declare operators: the setting VNPU_OPERATORS=module,... (`vnpu serve --operators`,
`vnpu toolkit --operators`) and the entry point group `vnpu.operators`. Client, daemon and toolkit each load the
same modules, so each side sees the same declaration. Pure standard library: the kernel is only called by the device.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from importlib.metadata import entry_points
from typing import Final

from proto.aclnn.decl import WRITTEN_KINDS, Arg, ArgKind, OpDecl
from proto.aclnn.phase1 import Phase1, phase1, remember
from proto.aclnn.registry import OPS
from proto.aclnn.userrule import GuardedRule
from proto.calldocs import DOCS

ENTRY_POINT_GROUP: Final = "vnpu.operators"
SETTING: Final = "VNPU_OPERATORS"
RESERVED_ARGS: Final = frozenset({"workspace", "workspaceSize", "executor", "stream"})  # the two phases' own
RULE_METHODS: Final = ("result_dtype", "check", "workspace")

NumpyKernel = Callable[..., object]


class OperatorError(Exception):
    """A declaration vnpu refuses, or a module of operators that failed to import: the message names both."""


@dataclass(frozen=True)
class Operator:
    """One user-declared operator: its declaration (the rule guarded, `proto.aclnn.userrule`), its numpy kernel,
    what it computes, the module declaring it, and its phase-1 function."""

    decl: OpDecl
    kernel: NumpyKernel
    doc: str
    module: str
    ws_function: Phase1

    @property
    def name(self) -> str:
        return self.decl.name


USER: Final[dict[str, Operator]] = {}
"""The user-declared operators by name ("ScaledAdd")."""

_lock = threading.Lock()
_loaded: set[str] = set()
_stale: set[str] = set()  # modules some of whose operators were undeclared: a load imports them anew
_loading = threading.local()  # the module `load` is importing, for declarations made while it runs


def declare(decl: OpDecl, kernel: NumpyKernel, *, doc: str = "", module: str | None = None) -> Operator:
    """Declare `decl` with its numpy `kernel`; OperatorError naming the module and the problem when refused.

    Declaring the same operator again from the same module replaces it (a module imported anew)."""
    module = module or getattr(_loading, "module", None) or getattr(kernel, "__module__", None) or "?"
    try:
        _check(decl, kernel, doc)
    except OperatorError as error:
        raise OperatorError(f"the operator module {module!r} ({SETTING}): {error}") from None
    rule = decl.rule.rule if isinstance(decl.rule, GuardedRule) else decl.rule  # a declaration given back again
    decl = replace(decl, rule=GuardedRule(rule, module))
    found = Operator(decl, kernel, doc or f"the user-declared operator {decl.c_name} ({module}).", module, phase1(decl))
    with _lock:
        other = USER.get(decl.name)
        if other is not None and other.module != module:
            raise OperatorError(
                f"the operator module {module!r} ({SETTING}): {decl.c_name} is already declared by {other.module!r}"
            )
        USER[decl.name] = found
        OPS[decl.name] = decl
        remember(found.ws_function)
        DOCS[decl.c_name] = found.doc
    return found


def operator(decl: OpDecl, *, doc: str = "") -> Callable[[NumpyKernel], NumpyKernel]:
    """Decorator form of `declare`: the decorated function is the kernel."""

    def decorate(kernel: NumpyKernel) -> NumpyKernel:
        declare(decl, kernel, doc=doc)
        return kernel

    return decorate


def undeclare(name: str) -> None:
    """Remove a user-declared operator (tests); vnpu's own stay."""
    with _lock:
        found = USER.pop(name, None)
        if found is not None:
            OPS.pop(name, None)
            DOCS.pop(found.decl.c_name, None)
            _loaded.discard(found.module)
            _stale.add(found.module)


def modules_of(setting: str | Iterable[str]) -> list[str]:
    """The module names of a VNPU_OPERATORS value ("a.b, c") or list, blanks dropped."""
    parts = setting.split(",") if isinstance(setting, str) else setting
    return [part.strip() for part in parts if part.strip()]


def load(modules: str | Iterable[str] = (), *, entry_points_too: bool = True) -> list[str]:
    """Import the modules that declare operators (`modules`, then the `vnpu.operators` entry points), each once;
    the names imported now. OperatorError names a module that fails to import or declares something refused."""
    wanted = modules_of(modules)
    if entry_points_too:
        wanted += [point.module for point in entry_points(group=ENTRY_POINT_GROUP)]
    imported = []
    for module in wanted:
        if module in _loaded:
            continue
        _loading.module = module
        try:
            if module in _stale and module in sys.modules:
                importlib.reload(sys.modules[module])
            else:
                importlib.import_module(module)
            _stale.discard(module)
        except OperatorError:
            raise
        except Exception as error:
            raise OperatorError(f"the operator module {module!r} ({SETTING}): failed to import: {error!r}") from error
        finally:
            _loading.module = None
        _loaded.add(module)
        imported.append(module)
    return imported


def user_modules() -> list[str]:
    """The modules that declared the operators now known, in order (what a toolkit builds in)."""
    return sorted({found.module for found in USER.values()})


def _check(decl: object, kernel: object, doc: object) -> None:
    if not isinstance(decl, OpDecl):
        raise OperatorError(f"expected an OpDecl (proto.aclnn.decl), got {type(decl).__name__}")
    name = decl.name
    if not isinstance(name, str) or not name.isidentifier() or not name[:1].isupper() or name.startswith("aclnn"):
        raise OperatorError(f"the operator name {name!r} must be a C identifier in CamelCase, without 'aclnn'")
    if name.endswith("GetWorkspaceSize"):
        raise OperatorError(f"the operator name {name!r} ends in GetWorkspaceSize, which names a phase 1")
    if OPS.cann(name):
        raise OperatorError(f"aclnn{name} is one of CANN's operators, which vnpu declares: choose another name")
    if not isinstance(decl.args, tuple) or not decl.args or not all(isinstance(a, Arg) for a in decl.args):
        raise OperatorError(f"aclnn{name}: args must be a non-empty tuple of Arg, in C order")
    names = [arg.name for arg in decl.args]
    for arg in decl.args:
        if not isinstance(arg.name, str) or not arg.name.isidentifier():
            raise OperatorError(f"aclnn{name}: the argument name {arg.name!r} is not a C identifier")
        if arg.name in RESERVED_ARGS:
            raise OperatorError(f"aclnn{name}: the argument name {arg.name!r} is one of the two phases' own")
        if not isinstance(arg.kind, ArgKind):
            raise OperatorError(f"aclnn{name}: argument {arg.name} has kind {arg.kind!r}, not an ArgKind")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise OperatorError(f"aclnn{name}: the argument {twice[0]} is declared twice")
    if not any(arg.kind in WRITTEN_KINDS for arg in decl.args):
        raise OperatorError(f"aclnn{name}: no argument is written (declare an ArgKind.OUT or ArgKind.INPLACE tensor)")
    missing = [m for m in RULE_METHODS if not callable(getattr(decl.rule, m, None))]
    if missing:
        raise OperatorError(
            f"aclnn{name}: its rule {type(decl.rule).__name__} lacks {', '.join(missing)} "
            "(a proto.aclnn.decl.Rule: result_dtype, check, workspace)"
        )
    if decl.kernel_kind not in ("vector", "cube"):
        raise OperatorError(f"aclnn{name}: kernel_kind {decl.kernel_kind!r} is not 'vector' or 'cube'")
    if not isinstance(doc, str):
        raise OperatorError(f"aclnn{name}: doc must be a string")
    _check_kernel(name, names, kernel)


def _check_kernel(name: str, names: list[str], kernel: object) -> None:
    if not callable(kernel):
        raise OperatorError(f"aclnn{name}: its kernel must be a function, got {type(kernel).__name__}")
    wanted = [*names, "workspace"]
    try:
        inspect.signature(kernel).bind(**dict.fromkeys(wanted))
    except TypeError:
        raise OperatorError(
            f"aclnn{name}: its kernel {getattr(kernel, '__name__', kernel)!r} must take the arguments "
            f"{', '.join(wanted)} by name"
        ) from None
    except ValueError:  # a callable without a signature (a builtin): trust it
        pass
