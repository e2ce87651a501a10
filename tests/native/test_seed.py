"""The seed page's own C program (../shared/seed, the task-update page of CANN's documentation), only re-flowed
onto lines, built against the native libraries and run against a daemon, with remote host memory, and on the
embedded private daemon: it prints 2.2 and then 6.6."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.capi.conftest import compile_program, run_program
from tests.daemons import serving

SEED = Path(__file__).resolve().parents[3] / "shared" / "seed"
# each `//` comment of the page runs up to the code that follows it on the same line
AFTER_COMMENTS = (
    "auto ret", "std::vector<int64_t> strides", "*tensor = ", "aclInit(NULL)", "aclrtSetDevice(devID)",
    "CreateAclTensor(shape, &self_d", "// 后续", "// outtmp", "// 更新前：out = outtmp + alpha * other 更新后",
    "aclnnAddGetWorkspaceSize(self,", "aclnnAddGetWorkspaceSize(outtmp, other, alpha,",
    "aclnnAddGetWorkspaceSize(outtmp, other, updatealpha", "aclrtMallocHost((void **)&self_h",
    "aclrtCreateEventWithFlag", "aclmdlRICaptureBegin", "aclrtMemcpyAsync(self_d", "aclrtMemcpyAsync(other_d",
    "aclnnAdd(workspaceAddr, ", "aclrtStreamWaitEvent", "aclmdlRICaptureTaskGrpBegin", "aclrtMemcpyAsync(out_h",
    "aclmdlRICaptureEnd", "aclmdlRICaptureTaskUpdateBegin", "aclrtRecordEvent", "aclmdlRIDestroy(modelRI)",
    "aclrtResetDevice(devID)", "aclFinalize()",
)  # fmt: skip


def reflowed(text: str) -> str:
    source = text[text.index("#include <stdio.h>") : text.index("aclFinalize(); }") + len("aclFinalize(); }")]
    out, at = [], 0
    for found in re.finditer("//", source):
        if found.start() < at:
            continue
        rest = source[found.start() :]
        end = min(i for i in (rest.find(after, 2) for after in AFTER_COMMENTS) if i > 0)
        out += [source[at : found.start()], rest[:end].rstrip() + "\n"]
        at = found.start() + end
    code = "".join([*out, source[at:]])
    code = re.sub(r'(#include [<"][^>"]+[>"]) ', "\\1\n", code)
    return code.replace("##args) ", "##args)\n")


@pytest.mark.parametrize("where", ["daemon", "remote", "embedded"])
def test_the_seed_pages_program_prints_its_values(native: Path, tmp_path: Path, where: str) -> None:
    pages = sorted(SEED.glob("*.txt"))
    if not pages:
        pytest.skip(f"the seed page is not beside the repository ({SEED})")
    source = tmp_path / "seed.cpp"
    source.write_text(reflowed(pages[0].read_text()))
    binary = compile_program(native, source, tmp_path, "-Wno-error")  # the page ignores a return value
    if where == "embedded":
        done = run_program(native, binary, None, VNPU_ENDPOINT="embedded", TMPDIR=str(tmp_path))
    else:
        with serving(tmp_path) as daemon:
            memory = "remote" if where == "remote" else "auto"
            done = run_program(native, binary, daemon, VNPU_HOST_MEMORY=memory)
    values = [line for line in done.stdout.splitlines() if re.match(r"\[INFO\] \d", line)]
    assert values == ["[INFO] " + " ".join(["2.200000"] * 8), "[INFO] " + " ".join(["6.600000"] * 8)], done.stdout
