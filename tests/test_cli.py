from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from server.cli import main
from server.version import package_version


def test_version_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version"]) == 0
    out = capsys.readouterr().out
    assert out.strip() == f"vnpu {package_version()}"


def test_help_runs_as_a_process() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "--help"], capture_output=True, text=True, timeout=60, check=True
    )
    assert "usage: vnpu" in done.stdout and "version" in done.stdout


def test_demo_runs_the_seed_example_against_its_own_daemon() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "demo"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("[INFO]")]
    assert lines == [
        "[INFO] execute model, loop: 0",
        "[INFO] " + " ".join(["2.200000"] * 8),
        "[INFO] execute model, loop: 1",
        "[INFO] update alpha value of aclnnAdd",
        "[INFO] " + " ".join(["6.600000"] * 8),
    ]
    assert done.stdout.splitlines()[-1] == "vnpu demo: OK, every loop's output matched the float64 reference"


def test_demo_help_says_what_it_runs_and_what_to_expect() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "demo", "--help"], capture_output=True, text=True, timeout=60, check=True
    )
    text = " ".join(done.stdout.split())
    assert "task_update_concurrent.py" in text and "2.2 for alpha 1.1, then 6.6 for 5.5" in text


def test_the_stated_bench_run_time_is_the_last_full_runs() -> None:
    """`vnpu bench --help` and docs/benchmarks.md say how long a full run takes here: what bench/results.json
    measured."""
    root = Path(__file__).resolve().parent.parent
    result = json.loads((root / "bench" / "results.json").read_text())
    assert result["mode"] == "full"
    minutes = round(result["seconds"] / 60)
    for command, said in (
        (["--help"], f"about {minutes} here"),
        (["bench", "--help"], f"about {minutes} minutes here"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "server.cli", *command], capture_output=True, text=True, timeout=60, check=True
        )
        assert said in " ".join(done.stdout.split()), command
    page = " ".join((root / "docs" / "benchmarks.md").read_text().split())
    assert f"vnpu bench # every figure, about {minutes} minutes here" in page
