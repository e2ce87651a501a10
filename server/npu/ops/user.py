"""The kernels of user-declared operators (`proto.operators`): their numpy functions, called by C argument name.

A user kernel gets numpy views of its tensors (inputs read-only, written tensors writeable), scalars as values,
int arrays as tuples, dtype attributes as numpy dtypes and `workspace` (a uint8 view, or None for 0 bytes), and
writes its outputs in place. An exception it raises fails its task as the core it runs on would: a vector-core
exception (507035) for a vector operator, an AI-core one (507015) for a cube operator, naming the operator.
"""

from __future__ import annotations

from typing import Any

from proto.aclnn import aclIntArray, aclScalar, aclTensor
from proto.constants import aclDataType
from proto.errors import ACL_ERROR_RT_AICORE_EXCEPTION, ACL_ERROR_RT_VECTOR_CORE_EXCEPTION, AclError
from proto.operators import USER, Operator
from server.npu.ops.dtypes import np_dtype
from server.npu.ops.launch import Launch, Plan


def plan(found: Operator, launch: Launch) -> Plan:
    """The plan of one launch of the user operator `found`: its kernel over the launch's views."""
    values: dict[str, Any] = {}
    written = set(found.decl.outputs)
    for arg in found.decl.args:
        value = launch.kernel.args[arg.name]
        if isinstance(value, aclTensor):
            values[arg.name] = launch.write(arg.name) if arg.name in written else launch.read(arg.name)
        elif isinstance(value, aclScalar):
            values[arg.name] = value.value
        elif isinstance(value, aclIntArray):
            values[arg.name] = tuple(value.values)
        elif isinstance(value, aclDataType):
            values[arg.name] = np_dtype(value)
        else:
            values[arg.name] = value
    values["workspace"] = launch.workspace
    kernel, api = found.kernel, found.decl.c_name
    code = ACL_ERROR_RT_AICORE_EXCEPTION if found.decl.kernel_kind == "cube" else ACL_ERROR_RT_VECTOR_CORE_EXCEPTION

    def run() -> None:
        try:
            kernel(**values)
        except AclError:
            raise
        except Exception as error:
            raise AclError(code, f"the numpy kernel of {api} ({found.module}) failed: {error!r}", api) from None

    return run


def lookup(op: str) -> Operator | None:
    return USER.get(op)
