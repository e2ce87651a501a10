"""The layering of DESIGN.md, enforced by walking every import with `ast`.

- `server/npu` imports no web framework (fastapi, starlette, pydantic, uvicorn): it is a plain asyncio library.
- `client` never imports `server`, and `server` never imports `client` -- with one exception: the embedded device
  (`client/embedded.py`, VNPU_ENDPOINT=embedded) imports `server.app` inside a function, when a session opens.
- `proto` imports neither numpy (the client does phase 1 with it, without numpy) nor server nor client.
- No import circle anywhere, counting the imports under `if TYPE_CHECKING:` and those inside functions.
- Inside `server/npu`, by domain, lower to higher: the domain packages (`core`, `memory`, `tasks`, `model`,
  `kernels`, `ops`, and `device`, `machine`, `tdt`) import neither the process's context (`process`) nor the C-named
  surface (`area`, `calls`, `runtime`); `process` does not import the surface; an area imports no other area
  (`calls` modules import no `calls` module); `ops` (the aclnn kernels) imports nothing of the device outside it.
- Sizes: no `server/npu` folder over 15 modules, no `server/npu` module over 400 lines.
- Sizes of the native toolkit (`client/native`), the same rule of small modules with one concept each: no Python
  module over 400 lines (the generators: `codegen` walks, `plan` decides, `callgen`/`opgen`/`hostgen` emit), and
  no hand-written C source or header of `src/` (subfolders included) over 450 lines -- C spends more lines on the
  same idea (declarations, braces, error paths), so its bound is a little looser; a file that outgrows it is split
  along its seams (as `session.c` was into `session`, `call`, `pipeline`, `reader`, `thread`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

RULES = {
    "server/npu": {"fastapi", "starlette", "pydantic", "uvicorn", "client"},
    "server": {"client"},
    "client": {"server"},
    "proto": {"numpy", "ml_dtypes", "server", "client"},
}


EMBEDDED = ROOT / "client" / "embedded.py"
PACKAGES = ("proto", "server", "client")
DOMAIN = ("core", "memory", "tasks", "model", "kernels", "ops", "device", "machine", "tdt")
SURFACE = ("area", "calls", "runtime")  # may import `server`, in a function only (loaded on demand)


def imported_roots(path: Path, top_level_only: bool = False) -> set[str]:
    roots = set()
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree) if not top_level_only else _outside_functions(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def _outside_functions(tree: ast.AST) -> list[ast.AST]:
    """The nodes of `tree` that run at import: everything but the bodies of functions."""
    nodes, todo = [], [tree]
    while todo:
        node = todo.pop()
        nodes.append(node)
        todo.extend(n for n in ast.iter_child_nodes(node) if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    return nodes


def violations(package: str, banned: set[str]) -> list[str]:
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for root in sorted(imported_roots(path, top_level_only=path == EMBEDDED) & banned):
            found.append(f"{path.relative_to(ROOT)} imports {root}")
    return found


@pytest.mark.parametrize(("package", "banned"), RULES.items())
def test_layering(package: str, banned: set[str]) -> None:
    assert (ROOT / package).is_dir()
    assert violations(package, banned) == []


def test_the_checker_catches_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "m.py"
    bad.write_text("import numpy as np\nfrom fastapi import FastAPI\nfrom . import sibling\n")
    assert imported_roots(bad) == {"numpy", "fastapi"}


def test_the_embedded_exception_is_exactly_one_import_in_a_function() -> None:
    assert imported_roots(EMBEDDED) & {"server"} == {"server"}  # it does import the device...
    assert imported_roots(EMBEDDED, top_level_only=True) & {"server"} == set()  # ...only when a session opens


def test_importing_the_client_loads_no_server_module() -> None:
    import subprocess
    import sys

    code = (
        "import client.acl, client.aio, client.embedded, sys; "
        "print(sorted(m for m in sys.modules if m.startswith('server')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Every module of the project -> the project modules it imports (anywhere in it: top level, functions and
    `if TYPE_CHECKING:` alike); `from package import module` counts as the module."""
    modules = {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str | None] = set()
        base = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(resolve(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level:
                    module = ".".join(
                        [*base.split(".")[: len(base.split(".")) - node.level + 1], *filter(None, [module])]
                    )
                for alias in node.names:
                    full = f"{module}.{alias.name}"
                    found.add(full if full in modules else resolve(module))
        graph[name] = {m for m in found if m is not None and m != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_anywhere() -> None:
    assert circles(import_graph()) == []


def test_the_circle_finder_sees_a_type_checking_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def npu_part(module: str) -> str | None:
    """The part of server/npu a module belongs to: its first name below server.npu."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["server", "npu"] else None


def test_server_npu_is_layered_by_domain() -> None:
    wrong = []
    for module, imported in import_graph().items():
        part = npu_part(module)
        for target in imported:
            other = npu_part(target)
            if part is None or other is None or (other == part and part != "calls"):
                continue
            if part in DOMAIN and other in ("process", *SURFACE):
                wrong.append(f"{module} (domain) imports {target}")
            elif part == "process" and other in SURFACE:
                wrong.append(f"{module} (the process's context) imports {target}")
            elif part == "calls" and other == "calls" and target != "server.npu.calls":
                wrong.append(f"{module} (an area) imports {target}, another area")
            elif part == "ops" and other != "ops":
                wrong.append(f"{module} (an aclnn kernel) imports {target}")
    assert wrong == []


def test_server_npu_folders_and_modules_stay_small() -> None:
    npu = ROOT / "server" / "npu"
    big_folders = {
        str(d.relative_to(ROOT)): n for d in [npu, *npu.rglob("*/")] if (n := len(list(d.glob("*.py")))) > 15
    }
    long_modules = {
        str(p.relative_to(ROOT)): n for p in npu.rglob("*.py") if (n := len(p.read_text().splitlines())) > 400
    }
    assert (big_folders, long_modules) == ({}, {})


NATIVE = ROOT / "client" / "native"


def _longer_than(paths: list[Path], most: int) -> dict[str, int]:
    return {str(p.relative_to(ROOT)): n for p in paths if (n := len(p.read_text().splitlines())) > most}


def test_client_native_modules_and_c_sources_stay_small() -> None:
    modules = sorted(NATIVE.rglob("*.py"))
    sources = sorted([*(NATIVE / "src").rglob("*.c"), *(NATIVE / "src").rglob("*.h")])
    assert modules and sources
    assert (_longer_than(modules, 400), _longer_than(sources, 450)) == ({}, {})
