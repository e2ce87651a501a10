"""The layering of DESIGN.md, enforced by walking every import with `ast`.

- `server/npu` imports no web framework (fastapi, starlette, pydantic, uvicorn): it is a plain asyncio library.
- `client` never imports `server`, and `server` never imports `client`.
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


def imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def violations(package: str, banned: set[str]) -> list[str]:
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for root in sorted(imported_roots(path) & banned):
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
