"""A captured model as a picture: Graphviz DOT text, and an SVG drawn here (no Graphviz needed).

Streams are lanes (the origin first), tasks are boxes in issue order, captured event edges join a record to the
waits on it across lanes, task groups are clusters marked with their handle and the number of updates applied,
and the tasks that wait on EXTERNAL events -- where a model waits for the outside world -- are highlighted. A
condition task (IF / WHILE / SWITCH) draws its sub-models as nested clusters, each with how often it ran. A Build
model's lanes are its bound streams (HEAD or DEFAULT), with an edge from each aclrtActiveStream / aclrtSwitchStream
task to the lane it starts and from each aclrtSwitchLabelByIndex task to every label of its list ("label [i]");
tasks an aclmdlRIUpdate put in place are marked "edited".

A run of FOLD_MIN or more equal consecutive tasks (same kind, same description) is one node, `#4–#203 aclnnAdds
kernel Adds ×200`, so a big model stays readable. A task with something of its own to show is never folded into
a run: a task group's kernels, an edited task, an EXTERNAL wait, a condition task, an event edge's or a jump's end.
In the SVG a label wraps at spaces to fit its box (a handle is never cut), and the box grows to hold it.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from html import escape

from server.npu.core.lane import Task
from server.npu.model.build import ActiveStreamTask, SwitchStreamTask
from server.npu.model.cond import CondTask
from server.npu.model.groups import GroupTask
from server.npu.model.labels import LabelSetTask, SwitchLabelTask
from server.npu.model.model import CaptureRecord, CaptureWait, ModelRI
from server.npu.tasks.event import WaitTask

EDITED_FILL = "#f3e3ff"
EXTERNAL_FILL = "#ffd08a"
GROUP_FILL = "#e3ecff"
COND_FILL = "#e6f5e0"
FOLD_FILL = "#edf1f6"
FOLD_MIN = 3  # equal consecutive tasks from which a run is one node


@dataclass(frozen=True, slots=True)
class Node:
    """One box of a lane: the task at `index`, or the run of `count` equal tasks that starts there."""

    index: int
    task: Task
    count: int = 1

    def label(self, model: ModelRI) -> str:
        if self.count == 1:
            return f"#{self.index} {_label(self.task, model)}"
        return f"#{self.index}–#{self.index + self.count - 1} {self.task.describe()} ×{self.count}"


def _nodes(model: ModelRI, lane_no: int, tasks: list[Task], pinned: set[tuple[int, int]]) -> list[Node]:
    """The lane's tasks as nodes, each run of FOLD_MIN+ equal foldable tasks as one."""

    def key(index: int, task: Task) -> tuple[type, str] | None:
        special = isinstance(task, GroupTask | CondTask | WaitTask) or id(task) in model.edited
        return None if special or (lane_no, index) in pinned else (type(task), task.describe())

    nodes: list[Node] = []
    previous = None
    for index, task in enumerate(tasks):
        this = key(index, task)
        if this is not None and this == previous:
            nodes[-1] = Node(nodes[-1].index, nodes[-1].task, nodes[-1].count + 1)
        else:
            nodes.append(Node(index, task))
        previous = this
    short = [n for n in nodes if 1 < n.count < FOLD_MIN]  # a run too short to fold: its tasks one by one
    for run in short:
        at = nodes.index(run)
        nodes[at : at + 1] = [Node(run.index + k, tasks[run.index + k]) for k in range(run.count)]
    return nodes


def _pinned(model: ModelRI) -> set[tuple[int, int]]:
    """The (lane, index) of every task an edge or a jump starts or ends at: they keep a node of their own."""
    ends = {end for edge in _edges(model) for end in edge}
    jumps = _jumps(model)
    labels = {(lane, index) for _, (lane, index), _ in jumps if index is not None}
    return ends | {start for start, _, _ in jumps} | labels


def _label(task: Task, model: ModelRI | None = None) -> str:
    if isinstance(task, WaitTask):
        return f"wait (EXTERNAL) {task.describe()}"
    if model is not None and id(task) in model.edited:
        return f"edited: {task.describe()}"
    return task.describe()


def _jumps(model: ModelRI) -> list[tuple[tuple[int, int], tuple[int, int | None], str]]:
    """(lane, index) of each activate / switch task of a Build model -> the (lane, index) it goes on at (index
    None: the lane's first task), and the edge's label. A label switch has an edge to each label of its list that
    is set in the model ("label [i]")."""
    places = {
        id(task.label): (lane_no, index)
        for lane_no, lane in enumerate(model.lanes)
        for index, task in enumerate(lane.tasks)
        if isinstance(task, LabelSetTask)
    }
    found: list[tuple[tuple[int, int], tuple[int, int | None], str]] = []
    for lane_no, lane in enumerate(model.lanes):
        for index, task in enumerate(lane.tasks):
            if isinstance(task, ActiveStreamTask | SwitchStreamTask) and task.target in model.lanes:
                kind = "activate" if isinstance(task, ActiveStreamTask) else "switch (if true)"
                found.append(((lane_no, index), (model.lanes.index(task.target), None), kind))
            if isinstance(task, SwitchLabelTask) and task.known is not None:
                for i, label in enumerate(task.known.labels):
                    if id(label) in places:
                        found.append(((lane_no, index), places[id(label)], f"label [{i}]"))
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
    pinned = _pinned(model)
    for lane_no, lane in enumerate(model.lanes):
        lines.append(f"  subgraph cluster_lane{lane_no} {{")
        lines.append(f'    label="{_quote(lane.title(lane_no))}";')
        names = []
        for node in _nodes(model, lane_no, lane.tasks, pinned):
            index, task, name = node.index, node.task, f"t{lane_no}_{node.index}"
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
                fill = _fill(model, node)
                style = f', style=filled, fillcolor="{fill}"' if fill != "white" else ""
                lines.append(f'    {name} [label="{_quote(node.label(model))}"{style}];')
        if names:
            firsts[lane_no] = names[0]
        if len(names) > 1:
            lines.append("    " + " -> ".join(names) + ";")
        lines.append("  }")
    for (a_lane, a), (b_lane, b) in _edges(model):
        lines.append(f'  t{a_lane}_{a} -> t{b_lane}_{b} [style=dashed, color="#2b6cb0", label="event"];')
    for (a_lane, a), (target, at), kind in _jumps(model):
        end = firsts.get(target) if at is None else f"t{target}_{at}"
        if end is not None:
            lines.append(f'  t{a_lane}_{a} -> {end} [style=bold, color="#2f855a", label="{kind}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _branches(task: CondTask[ModelRI], name: str, lines: list[str], indent: str) -> None:
    """Each sub-model of a condition task as a cluster of its own lanes' tasks (nested condition tasks inside)."""
    for b, (branch, runs) in enumerate(zip(task.branches, task.runs, strict=True)):
        prefix = f"{name}_b{b}"
        lines.append(f"{indent}subgraph cluster_{prefix} {{")
        lines.append(
            f'{indent}  label="[{b}] {branch} ({branch.state}, ran {runs}x)"; style=filled; fillcolor="{COND_FILL}";'
        )
        names = []
        for lane_no, lane in enumerate(branch.lanes):
            for item in _nodes(branch, lane_no, lane.tasks, set()):
                node = f"{prefix}_{lane_no}_{item.index}"
                names.append(node)
                shape = ", shape=diamond" if isinstance(item.task, CondTask) else ""
                lines.append(f'{indent}  {node} [label="{_quote(item.label(branch))}"{shape}];')
                if isinstance(item.task, CondTask):
                    _branches(item.task, node, lines, indent + "  ")
        if not names:
            names.append(f"{prefix}_empty")
            lines.append(f'{indent}  {prefix}_empty [label="(empty)"];')
        lines.append(f"{indent}}}")
        lines.append(f'{indent}{name} -> {names[0]} [style=dotted, label="[{b}]"];')


def _fill(model: ModelRI, node: Node) -> str:
    if node.count > 1:
        return FOLD_FILL
    if isinstance(node.task, WaitTask):
        return EXTERNAL_FILL
    if isinstance(node.task, CondTask):
        return COND_FILL
    return EDITED_FILL if id(node.task) in model.edited else "white"


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


LANE_W, BOX_W, BOX_H, LINE_H, GAP, TOP, INDENT = 340, 300, 24, 14, 10, 56, 16
CHAR_W, PAD = 7.3, 6  # a 12 px monospace glyph's advance (DejaVu Sans Mono: 7.22), the text's inset in its box


def svg(model: ModelRI) -> str:
    """Lanes side by side, one box per node from the top down (a group's kernels in boxes of their own)."""
    centres: dict[tuple[int, int], float] = {}  # (lane, index) -> the y of its box's first line
    parts: list[str] = []
    height = TOP
    pinned = _pinned(model)
    for lane_no, lane in enumerate(model.lanes):
        x, y = 20 + lane_no * LANE_W, float(TOP)
        kind = "" if not hasattr(lane, "head") else " HEAD" if lane.head else " DEFAULT"
        parts.append(f'<text x="{x}" y="30" class="lane">stream #{lane_no} ({lane.stream_handle:#x}){kind}</text>')
        for node in _nodes(model, lane_no, lane.tasks, pinned):
            centres[(lane_no, node.index)] = y + BOX_H / 2
            if isinstance(node.task, GroupTask):
                y = _svg_group(node.task, x, y, parts)
                continue
            y = _box(x, y, node.label(model), _fill(model, node), parts)
            if isinstance(node.task, CondTask):
                y = _svg_branches(node.task, x + INDENT, y, parts)
        height = max(height, round(y) + 20)
    for (a_lane, a), (b_lane, b) in _edges(model):
        x1, y1 = 20 + a_lane * LANE_W + BOX_W, centres[(a_lane, a)]
        x2, y2 = 20 + b_lane * LANE_W, centres[(b_lane, b)]
        if b_lane < a_lane:
            x1, x2 = 20 + a_lane * LANE_W, 20 + b_lane * LANE_W + BOX_W
        parts.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" class="edge" marker-end="url(#arrow)"/>')
    for (a_lane, a), (target, at), kind in _jumps(model):
        x1, y1 = 20 + a_lane * LANE_W + BOX_W, centres[(a_lane, a)]
        x2, y2 = 20 + target * LANE_W, TOP + BOX_H / 2 if at is None else centres[(target, at)]
        parts.append(
            f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" class="jump" marker-end="url(#arrow)">'
            f"<title>{kind}</title></line>"
        )
    title = f"{model.title} · {model.state} · {model.executions} execution(s)"
    width = max(40 + max(len(model.lanes), 1) * LANE_W, round(20 + len(title) * CHAR_W + 20))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="12">'
        "<style>.lane{font-weight:bold}.group{fill:#2c3e80}"
        ".edge{stroke:#2b6cb0;stroke-dasharray:4 3;stroke-width:1.5}.jump{stroke:#2f855a;stroke-width:2}</style>"
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto"><path d="M0,0L10,5L0,10z" fill="#2b6cb0"/></marker></defs>'
        f'<text x="20" y="14" font-weight="bold">{escape(title)}</text>' + "".join(parts) + "</svg>"
    )


def _svg_group(task: GroupTask, x: float, y: float, parts: list[str]) -> float:
    """A task group: a frame with its title, its kernels one box each (never folded); returns the y below it."""
    frame = len(parts)
    title = f"task group {task.group.handle:#x} · {task.group.updates_applied} update(s)"
    bottom = y + 16
    parts.append(f'<text x="{x}" y="{y + 12}" class="group">{escape(title)}</text>')
    for kernel in task.group.kernels:
        bottom = _box(x, bottom, kernel.describe(), "white", parts)
    bottom = max(bottom, y + BOX_H + GAP)
    parts.insert(
        frame,
        f'<rect x="{x - 6}" y="{y - 4}" width="{BOX_W + 12}" height="{bottom - y - 2}" rx="6" '
        f'fill="{GROUP_FILL}" stroke="#5a7bd6"/>',
    )
    return bottom + GAP


def _svg_branches(task: CondTask[ModelRI], x: float, y: float, parts: list[str]) -> float:
    """A condition task's sub-models under it, indented: a title box each, then its nodes (nested ones deeper)."""
    width = BOX_W - (x - 20) % LANE_W
    for b, (branch, runs) in enumerate(zip(task.branches, task.runs, strict=True)):
        y = _box(x, y, f"[{b}] {branch} ({branch.state}, ran {runs}x)", COND_FILL, parts, width, "group")
        for lane_no, lane in enumerate(branch.lanes):
            for node in _nodes(branch, lane_no, lane.tasks, set()):
                y = _box(x + INDENT, y, node.label(branch), _fill(branch, node), parts, width - INDENT)
                if isinstance(node.task, CondTask):
                    y = _svg_branches(node.task, x + 2 * INDENT, y, parts)
    return y


def wrap(text: str, width: float) -> list[str]:
    """`text` in lines that fit a box `width` px wide: broken at spaces, a word cut only if longer than a line."""
    fits = max(1, int((width - 2 * PAD) / CHAR_W))
    return textwrap.wrap(text, fits, break_on_hyphens=False) or [""]


def _box(x: float, y: float, text: str, fill: str, parts: list[str], width: float = BOX_W, css: str = "") -> float:
    """Append a box at (x, y) tall enough for `text` wrapped; return the y where the next box goes."""
    lines = wrap(text, width)
    klass = f' class="{css}"' if css else ""
    height = BOX_H + (len(lines) - 1) * LINE_H
    shown = "".join(
        f'<text x="{x + PAD}" y="{y + 16 + i * LINE_H}"{klass}>{escape(line)}</text>' for i, line in enumerate(lines)
    )
    parts.append(
        f'<g><title>{escape(text)}</title><rect x="{x}" y="{y}" width="{width}" height="{height}" rx="4" '
        f'fill="{fill}" stroke="#444"/>{shown}</g>'
    )
    return y + height + GAP
