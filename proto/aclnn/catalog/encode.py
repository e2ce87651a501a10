"""The data files' format, written: the inverse of `proto.aclnn.catalog.decode_ops` / `decode_function`.

One file per repository, `{"repo", "commit", "ops": {name: op}, "functions": [...], "vendor": {header: ...}}`,
one operator (or custom package header: `{"dir", "ops", "functions"}`) per line so that a regeneration shows as a
line diff. A parameter is `[name, ctype, direction, kind, flags]`
(flags: `o` optional, `a` any dtype) followed, for OpDef operators, by `{dtypes, formats, default}`; an
operator's `launch` is present only when it is not `STANDARD_LAUNCH`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from proto.aclnn.catalog import STANDARD_LAUNCH, CatalogOp, CatalogParam, CFunction, CParam, VendorHeader


def encode_param(param: CatalogParam) -> list[object]:
    flags = ("o" if param.optional else "") + ("a" if param.any_dtype else "")
    item: list[object] = [param.name, param.ctype, param.direction, param.kind, flags]
    extra: dict[str, object] = {}
    if param.dtypes:
        extra["dtypes"] = list(param.dtypes)
    if param.formats:
        extra["formats"] = list(param.formats)
    if param.default is not None:
        extra["default"] = param.default
    if extra:
        item.append(extra)
    return item


def encode_op(op: CatalogOp) -> dict[str, object]:
    entry: dict[str, object] = {"dir": op.directory, "header": op.header, "source": op.source}
    entry["params"] = [encode_param(param) for param in op.params]
    if op.launch != STANDARD_LAUNCH:
        entry["launch"] = _cparams(op.launch)
    if op.prefix != "aclnn":
        entry["prefix"] = op.prefix
    if op.deprecated:
        entry["deprecated"] = True
    if op.op_type:
        entry["op_type"] = op.op_type
    if op.vendor:
        entry["vendor"] = True
    return entry


def encode_vendor(header: VendorHeader) -> dict[str, object]:
    entry: dict[str, object] = {"dir": header.directory, "ops": {op.name: encode_op(op) for op in header.ops}}
    if header.functions:
        entry["functions"] = [encode_function(function) for function in header.functions]
    return entry


def encode_function(function: CFunction) -> dict[str, object]:
    return {
        "name": function.name,
        "result": function.result,
        "params": _cparams(function.params),
        "header": function.header,
        "dir": function.directory,
    }


def _cparams(params: tuple[CParam, ...]) -> list[list[str]]:
    return [[param.name, param.ctype] for param in params]


def dump_repo(
    repo: str, commit: str, ops: list[CatalogOp], functions: list[CFunction], vendor: Sequence[VendorHeader] = ()
) -> str:
    """The text of one data file: sorted, one operator, function or custom package header per line, UTF-8 safe
    ASCII."""

    def line(value: object) -> str:
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"))

    op_lines = ",\n".join(f"    {line(op.name)}: {line(encode_op(op))}" for op in sorted(ops, key=lambda o: o.name))
    function_lines = ",\n".join(f"    {line(encode_function(f))}" for f in sorted(functions, key=lambda f: f.name))
    vendor_lines = ",\n".join(
        f"    {line(h.header)}: {line(encode_vendor(h))}" for h in sorted(vendor, key=lambda h: h.header)
    )
    ops_text = f"{{\n{op_lines}\n  }}" if ops else "{}"
    functions_text = f"[\n{function_lines}\n  ]" if functions else "[]"
    vendor_text = f',\n  "vendor": {{\n{vendor_lines}\n  }}' if vendor else ""
    return (
        "{\n"
        f'  "repo": {line(repo)},\n'
        f'  "commit": {line(commit)},\n'
        f'  "ops": {ops_text},\n'
        f'  "functions": {functions_text}'
        f"{vendor_text}\n"
        "}\n"
    )
