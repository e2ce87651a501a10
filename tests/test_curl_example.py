"""examples/curl/add_and_update.sh, the curl walkthrough docs/daemon.md points to, against a real daemon: aclnnAdd
with phase 1 over REST, then a captured task group replayed before and after a task update -- curl and jq alone."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.daemons import ROOT, serving

SCRIPT = ROOT / "examples" / "curl" / "add_and_update.sh"


def test_the_curl_walkthrough_computes_and_updates(tmp_path: Path) -> None:
    assert shutil.which("curl") and shutil.which("jq"), "the curl example needs curl and jq (.ci/run installs them)"
    with serving(tmp_path) as daemon:
        env = {**os.environ, "VNPU_ENDPOINT": daemon.url}
        run = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)
        daemon.check_alive()
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    values = {line.split(":")[0]: line.split(":")[1].split() for line in lines[:3]}
    assert values == {"eager": ["3"] * 16, "replay": ["3"] * 16, "updated": ["5"] * 16}  # 1 + a * 2, a = 1 then 2
    assert lines[3].endswith(": 2 execution(s), group updates 1")
