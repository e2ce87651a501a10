"""The layering of DESIGN.md, enforced by walking every import with `ast`.

- `server/npu` imports no web framework (fastapi, starlette, pydantic, uvicorn): it is a plain asyncio library.
- `client` never imports `server`, and `server` never imports `client` -- with one exception: the embedded device
  (`client/embedded.py`, VNPU_ENDPOINT=embedded) imports `server.app` inside a function, when a session opens.
- `proto` imports neither numpy (the client does phase 1 with it, without numpy) nor server nor client.
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


EMBEDDED = ROOT / "client" / "embedded.py"  # may import `server`, in a function only (loaded on demand)


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
