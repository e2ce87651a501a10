"""Every command and program of README.md and docs/*.md runs, as a reader would run it.

The fenced blocks are found and run in a fresh scratch directory each, holding a copy of `examples/` and
`deploy/` (so a block may `cd examples/c/...` or render `deploy/k8s`), with the source tree on PYTHONPATH and the
virtual environment's `bin/` (`vnpu`, `python3`) first on PATH:

- ```python runs as a script; ```sh and ```bash run with `bash -e -o pipefail`; an unnamed ```c or ```cpp block
  is compiled against the toolkit (`vnpu toolkit`) with g++ and run.
- A block whose first line names a file (`# mypkg/ops.py`, `// add.cpp`) is that file: it is written into the
  scratch directory of every later block of its page, and run by the block that uses it (a test checks that one
  does).
- The daemon a block talks to is one this module starts on a free 127.0.0.1 port and stops by its PID:
  `VNPU_ENDPOINT` names it, and `:9470` (the default port) in a block is replaced by its port.
- `<!-- not run: REASON -->` on the line before a block exempts it: it is reported as skipped with its reason
  (pytest's `-ra` summary lists every exemption), and the reason must say why.
- Blocks that build C (`vnpu toolkit`, g++, cmake) or start chromium are `slow`. A block that needs a Debian
  program (chromium, kubectl, curl, jq, g++, cmake) skips without it, and fails under CI (`tests/system.py`).

Other languages (```text, ```yaml, ...) are not code to run; a fence without a language is refused.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from server import docs
from tests.daemons import ROOT, Daemon, clean_env, serving
from tests.system import CHROMIUM, require

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN = {"python", "sh", "bash", "c", "cpp"}
NOT_CODE = {"text", "yaml", "json", "toml", "ini", "dockerfile", "cmake", "console"}
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w+-]*)\s*$")
EXEMPT = re.compile(r"^\s*<!-- not run: (?P<reason>.+?) -->\s*$")
NAMED = re.compile(r"^(?:#|//) (?P<name>[\w./-]+\.(?:py|c|cpp|h))\b")
SLOW = re.compile(r"\bvnpu toolkit\b|\bg\+\+|\bcmake\b|\bchromium\b")
PROGRAMS = {"chromium": (CHROMIUM, "chromium"), "kubectl": ("kubectl", "kubernetes-client")}
PROGRAMS |= {name: (name, name) for name in ("curl", "jq", "g++", "cmake")}
DEFAULT_PORT = ":9470"


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    exempt: str | None  # the reason of a `<!-- not run: ... -->` marker

    @property
    def name(self) -> str | None:
        """The file this block is, when its first line names one."""
        found = NAMED.match(self.text)
        return found["name"] if found else None

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    lines, found, i = page.read_text().splitlines(), [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, body, end = len(opening["indent"]), [], i + 1
        while end < len(lines) and lines[end].strip() != "```":
            body.append(lines[end][indent:])
            end += 1
        before = next((line for line in reversed(lines[:i]) if line.strip()), "")
        marker = EXEMPT.match(before)
        text = "\n".join(body) + "\n"
        found.append(Block(page, i + 1, opening["lang"], text, marker["reason"] if marker else None))
        i = end + 1
    return found


ALL = [block for page in PAGES for block in blocks(page)]
RUNNABLE = [b for b in ALL if b.lang in RUN and b.name is None and b.exempt is None]


def slow(block: Block) -> bool:
    return block.lang in ("c", "cpp") or SLOW.search(block.text) is not None


def _param(block: Block) -> object:
    return pytest.param(block, id=block.id, marks=[pytest.mark.slow] if slow(block) else [])


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with serving(tmp_path_factory.mktemp("daemon")) as running:
        yield running


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """XDG_CACHE_HOME of the blocks: their toolkits, built once per kind for the whole module."""
    return tmp_path_factory.mktemp("cache")


def scratch(block: Block, where: Path) -> Path:
    """The block's working directory: the examples, the manifests, and the files its page named before it."""
    for tree in ("examples", "deploy"):
        shutil.copytree(ROOT / tree, where / tree, ignore=shutil.ignore_patterns("build", "__pycache__"))
    for earlier in blocks(block.page):
        if earlier.line < block.line and earlier.name is not None:
            (where / earlier.name).parent.mkdir(parents=True, exist_ok=True)
            (where / earlier.name).write_text(earlier.text)
    return where


def environment(daemon: Daemon | None, cache: Path) -> dict[str, str]:
    env = clean_env() | {"PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(cache)}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "/usr/bin:/bin")])
    if daemon is not None:
        env["VNPU_ENDPOINT"] = daemon.url
    return env


def run(block: Block, where: Path, env: dict[str, str], port: int | None) -> subprocess.CompletedProcess[str]:
    for word, (program, package) in PROGRAMS.items():
        if re.search(rf"(^|[\s|;&(]){re.escape(word)}(?=[\s|;&)]|$)", block.text, re.M):
            require(program, package)
    text = block.text.replace(DEFAULT_PORT, f":{port}") if port else block.text
    timeout = 300 if slow(block) else 120
    if block.lang == "python":
        (where / "block.py").write_text(text)
        command = [sys.executable, "block.py"]
    elif block.lang in ("sh", "bash"):
        (where / "block.sh").write_text(text)
        command = ["bash", "-e", "-o", "pipefail", "block.sh"]
    else:
        source = where / f"block.{block.lang}"
        source.write_text(text)
        compiler = "g++ -std=c++17" if block.lang == "cpp" else "gcc -std=c11"
        libraries = "-lascendcl -lnnopbase -lopapi"
        build = f'T=$(vnpu toolkit) && {compiler} {source.name} -I"$T/include" -L"$T/lib64" {libraries} -o block'
        command = ["bash", "-e", "-c", f'{build} && source "$T/bin/setenv.bash" && ./block']
    return subprocess.run(command, cwd=where, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("block", [_param(b) for b in RUNNABLE])
def test_the_block_runs(block: Block, daemon: Daemon, cache: Path, tmp_path: Path) -> None:
    daemon.check_alive()
    port = int(daemon.url.rsplit(":", 1)[1])
    done = run(block, scratch(block, tmp_path), environment(daemon, cache), port)
    assert done.returncode == 0, f"{block.id} ({block.lang}) failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@pytest.mark.parametrize("block", [pytest.param(b, id=b.id) for b in ALL if b.exempt is not None])
def test_an_exempt_block_says_why(block: Block) -> None:
    assert block.lang in RUN, f"{block.id}: only code blocks need an exemption"
    assert len(block.exempt.split()) >= 4, f"{block.id}: say why it cannot run in a test"  # type: ignore[union-attr]
    pytest.skip(f"{block.id} not run: {block.exempt}")


def test_the_readme_program_runs_without_a_daemon(cache: Path, tmp_path: Path) -> None:
    """The README's first program, as it says: with no VNPU_ENDPOINT, the device inside the program."""
    first = next(b for b in RUNNABLE if b.page.name == "README.md" and b.lang == "python")
    done = run(first, scratch(first, tmp_path), environment(None, cache), None)
    assert done.returncode == 0, done.stderr[-3000:]
    assert [line.split(":")[0] for line in done.stdout.splitlines()] == ["alpha 2.0", "alpha 3.5"]


def test_every_fence_has_a_language() -> None:
    unknown = [f"{b.id}: ```{b.lang}" for b in ALL if b.lang not in RUN | NOT_CODE]
    assert unknown == [], "a block needs a language: one that runs, or one of " + ", ".join(sorted(NOT_CODE))


def test_every_named_file_is_used_by_a_later_block() -> None:
    for named in (b for b in ALL if b.name is not None):
        later = [b for b in RUNNABLE if b.page == named.page and b.line > named.line]
        stem = Path(named.name or "").with_suffix("").as_posix().replace("/", ".")
        assert any(named.name in b.text or stem in b.text for b in later), f"{named.id}: nothing runs {named.name}"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    assert [p.name for p in PAGES[1:] if f"](docs/{p.name})" not in readme] == []


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_local_links_and_anchors_resolve() -> None:
    broken = []
    for page in PAGES:
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and linked.suffix == ".md":
                headings = re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", linked.read_text(), flags=re.S), re.M)
                if anchor not in {_slug(h) for h in headings}:
                    broken.append(f"{page.name}: {target}")
    assert broken == []


def test_acl_names_in_the_docs_exist() -> None:
    """Every ACL name the pages cite is a function, constant or type of the client, of the toolkit's headers, or
    of CANN's operator catalog."""
    import client.acl
    from proto.aclnn.catalog import catalog

    headers = " ".join(p.read_text() for p in (ROOT / "client" / "capi" / "include").rglob("*.h"))
    known = set(client.acl.__all__) | set(re.findall(r"\b(acl\w+)", headers))
    known |= {name for op in catalog().ops.values() for name in (op.c_name, op.ws_name)}
    known |= {function.name for function in catalog().functions}
    placeholders = {"aclXxx", "aclnnX", "aclnnXxx", "aclnnXGetWorkspaceSize", "aclnnXxxGetWorkspaceSize", "aclnnXVn"}
    placeholders |= {"aclnnInner"}
    placeholders |= {"aclnnFusedInferAttentionScoreV3GetMaxWorkspaceSize"}  # pytorch.md: cited as not exported yet
    placeholders |= {"aclnnOuterScaledAdd", "aclnnOuterScaledAddGetWorkspaceSize"}  # operators.md's own example
    cited = {(p.name, n) for p in PAGES for n in re.findall(r"\b(acl(?:rt|mdl|nn|sys|tdt)?[A-Z]\w*)", p.read_text())}
    assert sorted((page, n) for page, n in cited if n not in known | placeholders) == []


def test_paths_in_the_docs_exist() -> None:
    """A file or directory of the repository a page names in backquotes is there (a moved module shows here)."""
    roots = "proto|server|client|bench|tests|examples|deploy|docs"
    missing = []
    for page in PAGES:
        for path in re.findall(rf"`((?:{roots})/[\w./-]*\w/?)`", page.read_text()):
            module, _, attribute = path.rpartition(".")  # server/api/budget.pack: a module's function
            if not (ROOT / path).exists() and not (attribute.isidentifier() and (ROOT / f"{module}.py").exists()):
                missing.append(f"{page.name}: {path}")
    assert missing == []


def test_the_readme_is_read_in_ten_minutes() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 300


def test_ci_runs_the_readme_test_command() -> None:
    """`.ci/run` ends with the README's test command, and installs the Debian packages the README lists."""
    readme = [b.text.strip() for b in blocks(ROOT / "README.md") if b.lang == "sh"]
    command = next(text for text in readme if "pip install -q -e '.[test]'" in text)
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.strip().splitlines()[-1] == command.splitlines()[-1]
    packages = next(text for text in readme if text.startswith("sudo apt-get install")).split()[3:]
    assert sorted(packages) == sorted(re.findall(r"missing\+=\(([\w+-]+)\)", ci))


def test_a_stale_operator_inventory_is_found_and_rewritten(tmp_path: Path) -> None:
    page = tmp_path / "operators.md"
    current = docs.PAGE.read_text()
    assert docs.main(check=True, page=docs.PAGE) == 0
    page.write_text(current.replace("| **total** |", "| **total (stale)** |"))
    assert docs.main(check=True, page=page) == 1
    assert docs.main(page=page) == 0 and page.read_text() == current
    page.write_text("# a page without the markers\n")
    assert docs.main(check=True, page=page) == 1


def test_the_benchmark_page_shows_the_last_full_run(tmp_path: Path) -> None:
    """docs/benchmarks.md holds bench/results.json's table, and `python -m bench.publish` writes it there."""
    from bench import publish

    result = json.loads((ROOT / "bench" / "results.json").read_text())
    assert publish.block(result) in publish.PAGE.read_text(), "run `python -m bench.publish`"
    page = tmp_path / "benchmarks.md"
    page.write_text(f"before\n{publish.START}\nold\n{publish.END}\nafter\n")
    assert publish.main([], page=page) == 0
    assert page.read_text() == f"before\n{publish.block(result)}\nafter\n"
