"""Which parameters of a hand-written operator are inputs and which are outputs, as its C++ says.

Every hand-written `aclnnXxxGetWorkspaceSize` in an op_api `.cpp` opens with
`L2_DFX_PHASE_1(aclnnXxx, DFX_IN(self, other, alpha), DFX_OUT(out));` (opbase `op_dfx.h`): the profiling
hook that records the inputs and outputs. A name in both lists is written in place. The names are those
of the definition, which may differ from the header's (`lambd` / `lambda`), so they are turned into
positions through the definition's own parameter list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFINITION = re.compile(r"\baclnnStatus\s+(acl\w+)GetWorkspaceSize\s*\(")
PHASE_1 = re.compile(r"\bL2_DFX_PHASE_1(?:_WITHOUT_CACHE)?\s*\(")


@dataclass(frozen=True)
class Phase1Io:
    """The positions a GetWorkspaceSize definition lists as inputs and as outputs."""

    inputs: frozenset[int]
    outputs: frozenset[int]
    count: int  # the number of parameters of the definition, workspaceSize and executor included


def read_phase1_io(text: str) -> dict[str, Phase1Io]:
    """By C name (`aclnnAdd`), the DFX lists of the GetWorkspaceSize definitions in a (comment-free) file."""
    found: dict[str, Phase1Io] = {}
    for match in DEFINITION.finditer(text):
        params_end = _closing(text, match.end())
        after = text[params_end:].lstrip()
        if not after.startswith("{"):
            continue  # a declaration, not the definition
        names = [_declared_name(item) for item in _split(text[match.end() : params_end - 1])]
        body_start = params_end + text[params_end:].index("{")
        body = text[body_start : _closing(text, body_start + 1, "{", "}")]
        phase1 = PHASE_1.search(body)
        if phase1 is None:
            continue
        arguments = _split(body[phase1.end() : _closing(body, phase1.end()) - 1])
        lists: dict[str, set[str]] = {"DFX_IN": set(), "DFX_OUT": set()}
        for argument in arguments[1:]:
            head = argument.split("(", 1)[0].strip()
            if head in lists and "(" in argument:
                inner = argument[argument.index("(") + 1 : argument.rindex(")")]
                lists[head].update(re.split(r"\.|->", item)[-1].strip() for item in _split(inner))
        listed = Phase1Io(_positions(names, lists["DFX_IN"]), _positions(names, lists["DFX_OUT"]), len(names))
        found.setdefault(match.group(1), listed)
    return found


def _positions(names: list[str], listed: set[str]) -> frozenset[int]:
    return frozenset(index for index, name in enumerate(names) if name in listed)


def _declared_name(declaration: str) -> str:
    match = re.search(r"(\w+)\s*(\[\s*\])?\s*(=.*)?$", declaration.strip())
    return match.group(1) if match else ""


def _closing(text: str, start: int, open_char: str = "(", close_char: str = ")") -> int:
    """The index just past the bracket that closes the one opened before `start`."""
    depth, i = 1, start
    while i < len(text) and depth:
        depth += {open_char: 1, close_char: -1}.get(text[i], 0)
        i += 1
    return i


def _split(text: str) -> list[str]:
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    items.append("".join(current).strip())
    return [item for item in items if item]
