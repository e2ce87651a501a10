"""`vnpu docs operators [--check]`: the list of implemented aclnn operators in docs/operators.md, generated.

An operator is implemented when it is declared (`proto.aclnn.OPS`: C arguments in order, the rule phase 1 checks,
the kernel's unit) and the device has its kernel (`server.npu.ops.KERNELS`). The list stands between the
`<!-- operators:table -->` and `<!-- /operators:table -->` markers of the page; nothing else of it is touched.
It says what the declarations say -- each rule by its class, the options it was declared with and the class's
own summary -- and interprets nothing. `--check` writes nothing and exits 1 when the page differs from what the
declarations give (tests/test_docs.py checks it), so the page cannot drift from the code.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from pathlib import Path

from proto.aclnn import OPS, Arg, ArgKind, OpDecl, dtypes
from proto.constants import aclDataType

PAGE = Path(__file__).resolve().parent.parent / "docs" / "operators.md"
START, END = "<!-- operators:table -->", "<!-- /operators:table -->"
KINDS = {
    ArgKind.TENSOR: "",
    ArgKind.OUT: "out",
    ArgKind.INPLACE: "in place",
    ArgKind.SCALAR: "scalar",
    ArgKind.INT_ARRAY: "int array",
    ArgKind.INT: "int",
    ArgKind.BOOL: "bool",
    ArgKind.DTYPE: "dtype",
}
DTYPE_SETS = {  # proto.aclnn.dtypes' named sets (FLOATS, NUMERIC, ALL, ...), by value
    value: name
    for name, value in vars(dtypes).items()
    if name.isupper() and isinstance(value, frozenset) and all(isinstance(d, aclDataType) for d in value)
}
LISTED_UNIMPLEMENTED = 50  # declared operators without a kernel are named up to this many, else counted


def _argument(arg: Arg) -> str:
    notes = [n for n in (KINDS[arg.kind], "optional" if arg.optional else "") if n]
    return f"`{arg.name}`" + (f" ({', '.join(notes)})" if notes else "")


def _rule(decl: OpDecl) -> str:
    """The rule's class and its options: dtype sets always (by name), a true flag by its name, others if not the
    default."""
    rule: object = decl.rule  # a Rule, and a dataclass when it has options
    options: list[str] = []
    if not dataclasses.is_dataclass(rule):
        return f"`{type(rule).__name__}`"
    for field in dataclasses.fields(rule):
        value = getattr(rule, field.name)
        if isinstance(value, frozenset):
            options.append(f"{field.name}={DTYPE_SETS.get(value, ', '.join(sorted(map(dtypes.name, value))))}")
        elif value != field.default:
            options.append(field.name if value is True else f"{field.name}={value!r}")
    return f"`{type(rule).__name__}`" + (f" ({', '.join(options)})" if options else "")


def _legend(decls: list[OpDecl]) -> list[str]:
    """Each rule class's own summary (its docstring's first paragraph), then the dtype sets the rules name."""
    rules = dict.fromkeys(type(d.rule) for d in decls)
    lines = [f"- `{rule.__name__}`: {(inspect.getdoc(rule) or '').split(chr(10) * 2)[0]}" for rule in rules]
    shown = " ".join(_rule(d) for d in decls)
    named = sorted((v for v, name in DTYPE_SETS.items() if f"={name}" in shown), key=len)
    return lines + [f"- `{DTYPE_SETS[v]}`: {', '.join(sorted(dtypes.name(d) for d in v))}" for v in named]


def table() -> str:
    """The generated block, markers included."""
    from server.npu.ops import KERNELS  # the device's kernels: what makes a declared operator run

    implemented = [decl for name, decl in sorted(OPS.items()) if name in KERNELS]
    waiting = [name for name in sorted(OPS) if name not in KERNELS]
    rows = [
        f"| `{d.c_name}` | {', '.join(map(_argument, d.args))} | {_rule(d)} | {d.kernel_kind} |" for d in implemented
    ]
    lines = [
        START,
        f"{len(implemented)} operators, generated from their declarations by `vnpu docs operators`:",
        "",
        "| operator | arguments of phase 1, in C order | rule | unit |",
        "|---|---|---|---|",
        *rows,
        "",
        *_legend(implemented),
    ]
    if waiting:
        named = f": {', '.join(waiting)}" if len(waiting) <= LISTED_UNIMPLEMENTED else ""
        lines += ["", f"Declared without a kernel yet ({len(waiting)}){named}."]
    return "\n".join([*lines, END])


def current(text: str) -> str | None:
    """The block the page holds now (markers included), or None without markers."""
    start, end = text.find(START), text.find(END)
    return text[start : end + len(END)] if 0 <= start < end else None


def main(check: bool = False, page: Path = PAGE) -> int:
    if not page.exists():
        print(f"vnpu docs needs the source tree: {page} is missing", file=sys.stderr)
        return 2
    text = page.read_text()
    held, wanted = current(text), table()
    if held is None:
        print(f"{page} has no {START} ... {END} block", file=sys.stderr)
        return 1
    if held == wanted:
        print(f"{page}: the operator list is current")
        return 0
    if check:
        print(f"{page}: the operator list differs from the declarations: run `vnpu docs operators`", file=sys.stderr)
        return 1
    page.write_text(text.replace(held, wanted))
    print(f"{page}: the operator list written from the declarations")
    return 0
