"""Parameter directions as an operator's doc page (`docs/aclnn<Op>.md`) tabulates them.

Used only where the C++ does not say (no `L2_DFX_PHASE_1`: operators that forward to an aclnnInner
function, in-place twins that call their out-of-place op). The page's `## aclnn<Op>GetWorkspaceSize`
section lists each parameter with its role, as a table row (`<td>attentionOut</td><td>输出</td>`) or a
list item (`- out（aclTensor*，计算输出）`): 输入 is an input, 输出 an output, 输入/输出 written in place.
Nothing of the page is kept but these directions.
"""

from __future__ import annotations

import re
from pathlib import Path

from proto.aclnn.catalog import Direction

ROW = re.compile(
    r"<td[^>]*>\s*\**(\w+)\**\s*(?:[（(][^<]*?[）)])?\s*</td>\s*<td[^>]*>\s*(输入\s*/\s*输出|输入输出|输出|输入)"
)
ITEM = re.compile(r"^\s*[-*+]\s*\**(\w+)\**\s*[（(]([^）)\n]*)[）)]", re.M)
SECTION = re.compile(r"^#+\s*`?(acl\w*?)GetWorkspaceSize`?\s*$", re.M)


def role_direction(role: str) -> Direction | None:
    compact = role.replace(" ", "")
    if "输入/输出" in compact or "输入输出" in compact:
        return "inplace"
    if "输出" in compact or "出参" in compact:
        return "out"
    if "输入" in compact or "入参" in compact:
        return "in"
    return None


def page_directions(text: str, c_name: str, names: list[str]) -> dict[str, Direction]:
    """The directions the page gives the parameters `names` of `<c_name>GetWorkspaceSize`.

    A page may spell a parameter differently from the header (`timeOutOptional` for `timeOut`): when the
    page's own prototype has as many parameters as the header, its names are matched by position.
    """
    section = _section(text, c_name)
    if section is None:
        return {}
    by_page_name: dict[str, Direction] = {}
    for name, role in ROW.findall(section):
        by_page_name.setdefault(name, role_direction(role) or "in")
    for name, role in ITEM.findall(section):
        direction = role_direction(role)
        if direction is not None:
            by_page_name.setdefault(name, direction)
    page_names = _prototype_names(text, c_name)
    if len(page_names) == len(names):
        renamed = {
            header: by_page_name[page] for header, page in zip(names, page_names, strict=True) if page in by_page_name
        }
        by_page_name = {**by_page_name, **renamed}
    return {name: by_page_name[name] for name in names if name in by_page_name}


def _prototype_names(text: str, c_name: str) -> list[str]:
    """The parameter names of the page's prototype of `<c_name>GetWorkspaceSize` (workspaceSize, executor dropped)."""
    match = re.search(rf"\b{c_name}GetWorkspaceSize\s*\(([^()]*)\)", text)
    if match is None:
        return []
    declarations = [item.strip() for item in re.sub(r"<[^>]*>|`", "", match.group(1)).split(",")]
    names = [found.group(1) for item in declarations if (found := re.search(r"(\w+)\s*$", item))]
    return names[:-2] if len(names) >= 2 else []


def _section(text: str, c_name: str) -> str | None:
    """The part of the page about `c_name`: its own GetWorkspaceSize section, or the page if it has none."""
    headings = list(SECTION.finditer(text))
    for index, heading in enumerate(headings):
        if heading.group(1) == c_name:
            end = headings[index + 1].start() if index + 1 < len(headings) else len(text)
            return text[heading.end() : end]
    mentioned = set(re.findall(r"\b(acl\w*?)GetWorkspaceSize\b", text))
    return text if mentioned == {c_name} else None


def directory_pages(op_dir: Path) -> list[str]:
    """The doc pages of an operator directory (`<op dir>/docs/*.md`), sorted."""
    return [path.read_text(errors="replace") for path in sorted(op_dir.glob("docs/*.md"))]
