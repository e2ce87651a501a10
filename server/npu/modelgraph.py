"""A captured model as a picture: Graphviz DOT text, and an SVG drawn here (no Graphviz needed).

Streams are lanes (the origin first), tasks are boxes in issue order, captured event edges join a record to the
waits on it across lanes, task groups are clusters marked with their handle and the number of updates applied,
and the tasks that wait on EXTERNAL events -- where a model waits for the outside world -- are highlighted. A
condition task (IF / WHILE / SWITCH) draws its sub-models as nested clusters, each with how often it ran. A Build
model's lanes are its bound streams (HEAD or DEFAULT), with an edge from each aclrtActiveStream / aclrtSwitchStream
task to the lane it starts; tasks an aclmdlRIUpdate put in place are marked "edited".
"""

from __future__ import annotations

from html import escape

from server.npu.build import ActiveStreamTask, SwitchStreamTask
from server.npu.cond import CondTask
from server.npu.model import CaptureRecord, CaptureWait, GroupTask, ModelRI
from server.npu.stream import Task
from server.npu.tasks import WaitTask

EDITED_FILL = "#f3e3ff"
EXTERNAL_FILL = "#ffd08a"
GROUP_FILL = "#e3ecff"
COND_FILL = "#e6f5e0"


def _label(task: Task, model: ModelRI | None = None) -> str:
    if isinstance(task, WaitTask):
        return f"wait (EXTERNAL) {task.describe()}"
    if model is not None and id(task) in model.edited:
        return f"edited: {task.describe()}"
    return task.describe()


def _jumps(model: ModelRI) -> list[tuple[tuple[int, int], int, str]]:
    """(lane, index) of each activate / switch task of a Build model -> the lane it starts, and the edge's label."""
    found = []
    for lane_no, lane in enumerate(model.lanes):
        for index, task in enumerate(lane.tasks):
            if isinstance(task, ActiveStreamTask | SwitchStreamTask) and task.target in model.lanes:
                kind = "activate" if isinstance(task, ActiveStreamTask) else "switch (if true)"
                found.append(((lane_no, index), model.lanes.index(task.target), kind))
    return found


def _edges(model: ModelRI) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(lane, index) of each capture record -> (lane, index) of each wait on it."""
    where: dict[int, tuple[int, int]] = {}
    for lane_no, lane in enumerate(model.lanes):
        for index, task in enumerate(lane.tasks):
            if isinstance(task, CaptureRecord):
                where[id(task)] = (lane_no, index)
    edges = []
    for lane_no, lane in enumerate(model.lanes):
        for index, task in enumerate(lane.tasks):
            if isinstance(task, CaptureWait) and id(task.record) in where:
                edges.append((where[id(task.record)], (lane_no, index)))
    return edges


def dot(model: ModelRI) -> str:
    lines = [f'digraph "model {model.handle:#x}" {{', "  rankdir=TB;", '  node [shape=box, fontname="monospace"];']
    lines.append(f'  label="{_quote(model.title)} · {model.state}"; labelloc=t;')
    firsts: dict[int, str] = {}
    for lane_no, lane in enumerate(model.lanes):
        lines.append(f"  subgraph cluster_lane{lane_no} {{")
        lines.append(f'    label="{_quote(lane.title(lane_no))}";')
        names = []
        for index, task in enumerate(lane.tasks):
            name = f"t{lane_no}_{index}"
            names.append(name)
            if isinstance(task, GroupTask):
                group = task.group
                lines.append(f"    subgraph cluster_group_{group.handle:x} {{")
                lines.append(
                    f'      label="task group {group.handle:#x} ({group.updates_applied} update(s))"; style=filled; '
                    f'fillcolor="{GROUP_FILL}";'
                )
                kernels = [f"{name}_k{k}" for k in range(len(group.kernels))] or [name]
                for k, kernel in enumerate(group.kernels):
                    lines.append(f'      {name}_k{k} [label="{_quote(kernel.describe())}"];')
                if not group.kernels:
                    lines.append(f'      {name} [label="(empty group)"];')
                lines.append("    }")
                names[-1] = kernels[0]
                names.extend(kernels[1:])
            elif isinstance(task, CondTask):
                lines.append(f'    {name} [label="#{index} {_quote(task.describe())}", shape=diamond];')
                _branches(task, name, lines, "    ")
            else:
                fill = EXTERNAL_FILL if isinstance(task, WaitTask) else EDITED_FILL if id(task) in model.edited else ""
                style = f', style=filled, fillcolor="{fill}"' if fill else ""
                lines.append(f'    {name} [label="#{index} {_quote(_label(task, model))}"{style}];')
        if names:
            firsts[lane_no] = names[0]
        if len(names) > 1:
            lines.append("    " + " -> ".join(names) + ";")
        lines.append("  }")
    for (a_lane, a), (b_lane, b) in _edges(model):
        lines.append(f'  t{a_lane}_{a} -> t{b_lane}_{b} [style=dashed, color="#2b6cb0", label="event"];')
    for (a_lane, a), target, kind in _jumps(model):
        if target in firsts:
            lines.append(f'  t{a_lane}_{a} -> {firsts[target]} [style=bold, color="#2f855a", label="{kind}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _branches(task: CondTask, name: str, lines: list[str], indent: str) -> None:
    """Each sub-model of a condition task as a cluster of its own lanes' tasks (nested condition tasks inside)."""
    for b, (branch, runs) in enumerate(zip(task.branches, task.runs, strict=True)):
        prefix = f"{name}_b{b}"
        lines.append(f"{indent}subgraph cluster_{prefix} {{")
        lines.append(
            f'{indent}  label="[{b}] {branch} ({branch.state}, ran {runs}x)"; style=filled; fillcolor="{COND_FILL}";'
        )
        names = []
        for lane_no, lane in enumerate(branch.lanes):
            for index, inner in enumerate(lane.tasks):
                node = f"{prefix}_{lane_no}_{index}"
                names.append(node)
                shape = ", shape=diamond" if isinstance(inner, CondTask) else ""
                lines.append(f'{indent}  {node} [label="#{index} {_quote(inner.describe())}"{shape}];')
                if isinstance(inner, CondTask):
                    _branches(inner, node, lines, indent + "  ")
        if not names:
            names.append(f"{prefix}_empty")
            lines.append(f'{indent}  {prefix}_empty [label="(empty)"];')
        lines.append(f"{indent}}}")
        lines.append(f'{indent}{name} -> {names[0]} [style=dotted, label="[{b}]"];')


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


LANE_W, BOX_W, ROW_H, BOX_H, TOP, INDENT = 340, 300, 34, 24, 56, 16


def svg(model: ModelRI) -> str:
    """Lanes side by side, one row per task (a group's kernels on rows of their own)."""
    rows: dict[tuple[int, int], int] = {}
    parts: list[str] = []
    height = TOP
    for lane_no, lane in enumerate(model.lanes):
        x = 20 + lane_no * LANE_W
        row = 0
        kind = "" if not hasattr(lane, "head") else " HEAD" if lane.head else " DEFAULT"
        parts.append(f'<text x="{x}" y="30" class="lane">stream #{lane_no} ({lane.stream_handle:#x}){kind}</text>')
        for index, task in enumerate(lane.tasks):
            rows[(lane_no, index)] = row
            if isinstance(task, GroupTask):
                kernels, y = task.group.kernels, TOP + row * ROW_H
                span = max(len(kernels), 1) + 1  # a title row, then one row per kernel
                parts.append(
                    f'<rect x="{x - 6}" y="{y - 4}" width="{BOX_W + 12}" height="{span * ROW_H - 2}" rx="6" '
                    f'fill="{GROUP_FILL}" stroke="#5a7bd6"/><text x="{x}" y="{y + 12}" class="group">'
                    f"task group {task.group.handle:#x} · {task.group.updates_applied} update(s)</text>"
                )
                for k, kernel in enumerate(kernels, 1):
                    parts.append(_box(x, y + k * ROW_H, kernel.describe(), "white"))
                row += span
            else:
                fill = (
                    EXTERNAL_FILL
                    if isinstance(task, WaitTask)
                    else COND_FILL
                    if isinstance(task, CondTask)
                    else EDITED_FILL
                    if id(task) in model.edited
                    else "white"
                )
                parts.append(_box(x, TOP + row * ROW_H, f"#{index} {_label(task, model)}", fill))
                row += 1
                if isinstance(task, CondTask):
                    row = _svg_branches(task, x + INDENT, row, parts)
        height = max(height, TOP + row * ROW_H + 20)
    for (a_lane, a), (b_lane, b) in _edges(model):
        x1, y1 = 20 + a_lane * LANE_W + BOX_W, TOP + rows[(a_lane, a)] * ROW_H + BOX_H / 2
        x2, y2 = 20 + b_lane * LANE_W, TOP + rows[(b_lane, b)] * ROW_H + BOX_H / 2
        if b_lane < a_lane:
            x1, x2 = 20 + a_lane * LANE_W, 20 + b_lane * LANE_W + BOX_W
        parts.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" class="edge" marker-end="url(#arrow)"/>')
    for (a_lane, a), target, kind in _jumps(model):
        x1, y1 = 20 + a_lane * LANE_W + BOX_W, TOP + rows[(a_lane, a)] * ROW_H + BOX_H / 2
        x2, y2 = 20 + target * LANE_W, TOP + BOX_H / 2
        parts.append(
            f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" class="jump" marker-end="url(#arrow)">'
            f"<title>{kind}</title></line>"
        )
    width = 40 + max(len(model.lanes), 1) * LANE_W
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="12">'
        "<style>.lane{font-weight:bold}.group{fill:#2c3e80;font-size:11px}"
        ".edge{stroke:#2b6cb0;stroke-dasharray:4 3;stroke-width:1.5}.jump{stroke:#2f855a;stroke-width:2}</style>"
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto"><path d="M0,0L10,5L0,10z" fill="#2b6cb0"/></marker></defs>'
        f'<text x="20" y="14" font-weight="bold">{escape(model.title)} · {model.state} · '
        f"{model.executions} execution(s)</text>" + "".join(parts) + "</svg>"
    )


def _svg_branches(task: CondTask, x: float, row: int, parts: list[str]) -> int:
    """A condition task's sub-models under it, indented: a title row each, then its tasks (nested ones deeper)."""
    width = BOX_W - (x - 20) % LANE_W
    for b, (branch, runs) in enumerate(zip(task.branches, task.runs, strict=True)):
        title = f"[{b}] {branch} ({branch.state}, ran {runs}x)"
        parts.append(_box(x, TOP + row * ROW_H, title, COND_FILL, width, "group"))
        row += 1
        for lane in branch.lanes:
            for index, inner in enumerate(lane.tasks):
                fill = COND_FILL if isinstance(inner, CondTask) else "white"
                parts.append(_box(x + INDENT, TOP + row * ROW_H, f"#{index} {inner.describe()}", fill, width - INDENT))
                row += 1
                if isinstance(inner, CondTask):
                    row = _svg_branches(inner, x + 2 * INDENT, row, parts)
    return row


def _box(x: float, y: float, text: str, fill: str, width: float = BOX_W, css: str = "") -> str:
    fits = int(44 * width / BOX_W)
    shown = text if len(text) <= fits else text[: fits - 1] + "…"
    klass = f' class="{css}"' if css else ""
    return (
        f'<g><title>{escape(text)}</title><rect x="{x}" y="{y}" width="{width}" height="{BOX_H}" rx="4" '
        f'fill="{fill}" stroke="#444"/><text x="{x + 6}" y="{y + 16}"{klass}>{escape(shown)}</text></g>'
    )
