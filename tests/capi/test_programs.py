"""C/C++ programs built against the toolkit and run against a real daemon: return codes, messages, threads."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from proto.addresses import DEVICE_BASE, DEVICE_STRIDE
from proto.constants import ACL_TDT_QUEUE_ROUTE_BIND
from proto.errors import (
    ACL_ERROR_FEATURE_UNSUPPORTED,
    ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
    ACL_ERROR_HOST_MEMORY_NOT_REGISTERED,
    ACL_ERROR_INVALID_FILE,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_INVALID_QUEUE_ID,
    ACL_ERROR_PARSE_FILE,
    ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
    ACL_ERROR_RT_DEVICE_MEM_ERROR,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_MODEL_EXECUTE,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_QUEUE_EMPTY,
    ACL_ERROR_RT_QUEUE_FULL,
    ACL_ERROR_RT_STREAM_ABORT,
    ACL_ERROR_RT_STREAM_MODEL,
    ACL_ERROR_RT_STREAM_NO_CB_REG,
    ACL_ERROR_RT_STREAM_SUBSCRIBE,
    ACL_ERROR_RT_THREAD_SUBSCRIBE,
    ACL_ERROR_UNINITIALIZE,
    ACLNN_ERR_PARAM_INVALID,
)
from proto.identity import CANN_VERSION, SOC_NAME
from tests.capi.conftest import PROGRAMS, compile_program, run_program
from tests.daemons import Daemon, serving


@pytest.fixture(scope="module")
def mistakes(toolkit: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_program(toolkit, PROGRAMS / "mistakes.cpp", tmp_path_factory.mktemp("bin"))


def reports(stdout: str) -> dict[str, tuple[int, str]]:
    """`label code message` lines -> {label: (code, message)}."""
    found = {}
    for line in stdout.splitlines():
        label, _, rest = line.partition(" ")
        code, _, message = rest.partition(" ")
        if code.lstrip("-").isdigit():
            found[label] = (int(code), message)
    return found


@pytest.mark.parametrize("blocking", ["0", "1"])
def test_deliberate_mistakes_get_the_runtime_codes(
    toolkit: Path, mistakes: Path, daemon: Daemon, blocking: str
) -> None:
    done = run_program(toolkit, mistakes, daemon, VNPU_LAUNCH_BLOCKING=blocking)
    assert done.returncode == 0, done.stdout + done.stderr
    got = reports(done.stdout)
    assert done.stdout.splitlines()[0] == f"soc {SOC_NAME}"
    assert got["before-init"] == (
        ACL_ERROR_UNINITIALIZE,
        "aclrtMalloc: ACL_ERROR_UNINITIALIZE (100001): no vnpu session: call aclInit first",  # no Python hint in C
    )
    assert got["not-implemented"] == (
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
        "aclrtMemcpy2d: ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000): vnpu does not implement aclrtMemcpy2d yet",
    )
    assert got["null-out"][0] == ACL_ERROR_INVALID_PARAM and "devPtr is NULL" in got["null-out"][1]
    assert got["double-free"][0] == ACL_ERROR_RT_PARAM_INVALID
    assert "already freed (double free)" in got["double-free"][1]
    for label in ("huge-copy", "huge-int-array-message", "huge-pid-list"):  # was 500000, a MemoryError
        code, message = got[label]
        assert code in (0, ACL_ERROR_INVALID_PARAM) and "1099511627776" in message and "MemoryError" not in message
    assert got["huge-copy"][0] == got["huge-pid-list"][0] == ACL_ERROR_INVALID_PARAM
    assert "huge-int-array NULL" in done.stdout.splitlines()
    assert "bad-tensor NULL" in done.stdout.splitlines()
    assert got["null-strides"][0] == 0 and "null-strides 3: 12 4 1" in done.stdout.splitlines()
    assert got["device-as-host"][0] == ACL_ERROR_RT_PARAM_INVALID and "is device memory" in got["device-as-host"][1]
    assert "aclCreateTensor" in got["bad-tensor-message"][1] and "storage_dims" in got["bad-tensor-message"][1]
    assert got["phase1"][0] == ACLNN_ERR_PARAM_INVALID and "does not broadcast" in got["phase1"][1]
    assert got["reused-executor"][0] == ACLNN_ERR_PARAM_INVALID and "single-use" in got["reused-executor"][1]
    # a message is read once
    again = [line for line in done.stdout.splitlines() if line.split(" ")[0].endswith("-again")]
    assert len(again) == 14 and all(line.endswith("-again (null)") for line in again), again
    # a queued launch on freed memory: success at once, its error at the next waiting call, naming the launch;
    # with VNPU_LAUNCH_BLOCKING=1 the launch returns its own code
    sync_code, sync_message = got["pipelined-sync"]
    launch_line = next(line for line in done.stdout.splitlines() if line.startswith("pipelined-launch"))
    if blocking == "0":
        assert launch_line == "pipelined-launch 0"
        assert sync_code == ACLNN_ERR_PARAM_INVALID and "freed" in sync_message
        # C lines are out of sight: the error names which of the thread's calls made it, and which raised it
        assert "aclnnAdd (the 3rd aclnnAdd call of this thread) #" in sync_message, sync_message
        assert "raised at the 1st aclrtSynchronizeStream call of this thread" in sync_message, sync_message
    else:
        assert launch_line == f"pipelined-launch {ACLNN_ERR_PARAM_INVALID}"
        assert sync_code == 0
    # the capture modes hold for the program's own threads
    mode_global, mode_local = got["capture-mode-0"], got["capture-mode-1"]
    assert mode_global[0] == ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT
    assert "ACL_MODEL_RI_CAPTURE_MODE_GLOBAL" in mode_global[1]
    assert mode_local == (0, "(null)")
    # an update with fewer kernels than the group
    code, message = got["update-count"]
    assert code == ACL_ERROR_RT_INTERNAL_ERROR and "needs 2 kernel launch(es)" in message and "unchanged" in message
    assert done.stdout.rstrip().endswith("done")


def test_without_a_daemon_calls_fail_with_a_code(toolkit: Path, mistakes: Path) -> None:
    done = run_program(toolkit, mistakes, None, VNPU_ENDPOINT="http://127.0.0.1:9")
    assert done.returncode == 1
    expected = "FAILED aclInit(nullptr) = 500000: aclInit: cannot reach the vnpu daemon at http://127.0.0.1:9"
    assert expected in done.stdout


UNCHECKED = """#include <cstdio>
#include "acl/acl.h"
int main() {  // the seed's habit: no return code read
    aclInit(nullptr);
    aclrtSetDevice(0);
    void *dev = nullptr;
    aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtFree(dev);
    aclrtResetDevice(0);
    aclFinalize();
    std::printf("ran\\n");
    return 0;
}
"""


def test_an_unchecked_program_without_a_daemon_gets_one_stderr_line(toolkit: Path, tmp_path: Path) -> None:
    """Issue 40, 4: a C program that ignores return codes is not left to fail silently: the first call that fails
    for want of the daemon writes one line on stderr naming the endpoint and the reason; CANN's log level 4 (no
    log) hushes it."""
    source = tmp_path / "unchecked.cpp"
    source.write_text(UNCHECKED)
    binary = compile_program(toolkit, source, tmp_path)
    done = run_program(toolkit, binary, None, VNPU_ENDPOINT="http://127.0.0.1:9")
    assert done.returncode == 0 and done.stdout == "ran\n", done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("vnpu:")]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("vnpu: aclInit failed: cannot reach the vnpu daemon at http://127.0.0.1:9: ")
    assert "refused" in lines[0].lower(), lines[0]
    hushed = run_program(toolkit, binary, None, VNPU_ENDPOINT="http://127.0.0.1:9", ASCEND_GLOBAL_LOG_LEVEL="4")
    assert hushed.returncode == 0 and "vnpu:" not in hushed.stderr, hushed.stderr


def test_cann_info_level_names_the_daemon_reached(toolkit: Path, daemon: Daemon, tmp_path: Path) -> None:
    """With CANN's log on stdout at info level, aclInit says which daemon it reached (issue 40, 4)."""
    source = tmp_path / "unchecked.cpp"
    source.write_text(UNCHECKED)
    binary = compile_program(toolkit, source, tmp_path)
    done = run_program(toolkit, binary, daemon, ASCEND_SLOG_PRINT_TO_STDOUT="1", ASCEND_GLOBAL_LOG_LEVEL="1")
    assert done.returncode == 0, done.stdout + done.stderr
    said = f"[INFO] vnpu: connected to the vnpu daemon at {daemon.url} over the WebSocket: context "
    assert done.stdout.startswith(said) and done.stdout.endswith("ran\n"), done.stdout
    quiet = run_program(toolkit, binary, daemon)
    assert quiet.stdout == "ran\n", quiet.stdout


NNINIT = """#include <cstdio>
#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
int main(int argc, char **) {  // argc 1: aclnnInit alone (a CANN example's start); 2: aclInit first
    if (argc > 1) std::printf("aclInit %d\\n", aclInit(nullptr));
    std::printf("aclnnInit %d\\n", aclnnInit(nullptr));
    std::printf("aclrtSetDevice %d\\n", aclrtSetDevice(0));
    void *dev = nullptr;
    std::printf("aclrtMalloc %d\\n", aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    std::printf("aclrtFree %d\\n", aclrtFree(dev));
    std::printf("aclnnFinalize %d\\n", aclnnFinalize());
    std::printf("then aclrtSetDevice %d\\n", aclrtSetDevice(0));
    if (argc > 1) std::printf("aclFinalize %d\\n", aclFinalize());
    std::printf("last aclrtSetDevice %d\\n", aclrtSetDevice(0));
    return 0;
}
"""


def test_aclnn_init_alone_starts_the_device(toolkit: Path, daemon: Daemon, tmp_path: Path) -> None:
    """CANN's runtime answers aclrtSetDevice without aclInit, so a CANN example that starts with aclnnInit alone runs
    there: aclnnInit makes the aclInit the program has not made, and aclnnFinalize ends it; after aclInit both do
    nothing."""
    source = tmp_path / "nninit.cpp"
    source.write_text(NNINIT)
    binary = compile_program(toolkit, source, tmp_path)
    alone = run_program(toolkit, binary, daemon).stdout.splitlines()
    assert alone == ["aclnnInit 0", "aclrtSetDevice 0", "aclrtMalloc 0", "aclrtFree 0", "aclnnFinalize 0",
                     "then aclrtSetDevice 100001", "last aclrtSetDevice 100001"]  # fmt: skip
    done = run_program(toolkit, binary, daemon, "after-aclInit")
    assert done.stdout.splitlines() == ["aclInit 0", "aclnnInit 0", "aclrtSetDevice 0", "aclrtMalloc 0",
                                        "aclrtFree 0", "aclnnFinalize 0", "then aclrtSetDevice 0", "aclFinalize 0",
                                        "last aclrtSetDevice 100001"]  # fmt: skip


PAST_THE_END = """#include <cstdio>
#include "acl/acl.h"
int main() {  // a copy of 256 bytes out of a 128-byte block, its status unread (a CANN example's mistake)
    aclInit(nullptr);
    aclrtSetDevice(0);
    void *dev = nullptr;
    aclrtMalloc(&dev, 128, ACL_MEM_MALLOC_HUGE_FIRST);
    char host[256];
    aclrtMemcpy(host, sizeof host, dev, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST);
    std::printf("ran\\n");
    return 0;
}
"""


def test_cann_log_on_stdout_prints_each_error(toolkit: Path, daemon: Daemon, tmp_path: Path) -> None:
    """docs/c-toolkit.md: with CANN's log on stdout (ASCEND_SLOG_PRINT_TO_STDOUT=1) each error is printed as it
    happens, an "[ERROR] " line (the CFFI libraries did; the native ones lost it); log level 4 hushes it, and
    without the switch nothing is printed."""
    source = tmp_path / "past.cpp"
    source.write_text(PAST_THE_END)
    binary = compile_program(toolkit, source, tmp_path)
    done = run_program(toolkit, binary, daemon, ASCEND_SLOG_PRINT_TO_STDOUT="1")
    assert done.returncode == 0, done.stdout + done.stderr
    first, ran = done.stdout.splitlines()
    assert first.startswith("[ERROR] aclrtMemcpy: ACL_ERROR_RT_PARAM_INVALID (107000): src: 256 bytes at "), first
    assert first.endswith("in the 128-byte allocation at " + first.split("allocation at ")[1]) and ran == "ran"
    assert "run 128 bytes past its end" in first
    for quiet in ({}, {"ASCEND_SLOG_PRINT_TO_STDOUT": "1", "ASCEND_GLOBAL_LOG_LEVEL": "4"}):
        assert run_program(toolkit, binary, daemon, **quiet).stdout == "ran\n"


TOO_LARGE = """#include <cstdio>
#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
int main() {  // three 32-byte blocks, tensors of 64 floats over them (newcomer-3's mistake 2d)
    aclInit(nullptr);
    aclrtSetDevice(0);
    void *block[3];
    for (auto &b : block) aclrtMalloc(&b, 32, ACL_MEM_MALLOC_HUGE_FIRST);
    int64_t shape[] = {64}, strides[] = {1};
    aclTensor *t[3];
    for (int i = 0; i < 3; ++i)
        t[i] = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, block[i]);
    float one = 1.0f;
    aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
    uint64_t size = 0;
    aclOpExecutor *executor = nullptr;
    int code = aclnnAddGetWorkspaceSize(t[0], t[1], alpha, t[2], &size, &executor);
    std::printf("%d %p\\n%s\\n", code, block[2], aclGetRecentErrMsg());
    aclFinalize();
    return 0;
}
"""


def test_a_tensor_past_its_block_is_named_from_c(toolkit: Path, daemon: Daemon, tmp_path: Path) -> None:
    """Issue 40, 6b from C: phase 1 names the tensor larger than its allocation, not an overlap."""
    source = tmp_path / "too_large.cpp"
    source.write_text(TOO_LARGE)
    done = run_program(toolkit, compile_program(toolkit, source, tmp_path), daemon)
    assert done.returncode == 0, done.stdout + done.stderr
    status, message = done.stdout.splitlines()[:2]
    code, out = status.split()
    assert int(code) == ACLNN_ERR_PARAM_INVALID and "overlap" not in message, message
    assert f"out is larger than its allocation: its 256 bytes at {out} (offset 0 in the 32-byte allocation" in message


@pytest.mark.parametrize("host_memory", ["auto", "remote"])
def test_host_memory_from_c(toolkit: Path, daemon: Daemon, tmp_path: Path, host_memory: str) -> None:
    """Pinned buffers through plain pointers (mapped here, or kept in step through the wire), pointers inside
    them, pageable memory in synchronous and asynchronous copies, and a pageable copy refused in a capture."""
    binary = compile_program(toolkit, PROGRAMS / "host_memory.cpp", tmp_path)
    done = run_program(toolkit, binary, daemon, VNPU_HOST_MEMORY=host_memory)
    assert done.returncode == 0, done.stdout + done.stderr
    checks = ["pinned-async", "pageable-sync", "pageable-async", "pageable-source", "default-kind", "captured-pinned"]
    assert [line for line in done.stdout.splitlines() if line.startswith("ok ")] == [f"ok {c}" for c in checks]
    code, message = reports(done.stdout)["captured-pageable"]
    assert code == ACL_ERROR_RT_PARAM_INVALID and "only aclrtMallocHost memory can be captured" in message


def test_a_fresh_shell_runs_the_program(toolkit: Path, mistakes: Path, daemon: Daemon) -> None:
    """`env -i`, then `source $T/bin/setenv.bash`: no virtual environment, no PYTHONPATH, only /usr/bin on PATH."""
    done = run_program(toolkit, mistakes, daemon, fresh_shell=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("done")


@pytest.fixture(scope="module")
def two_devices(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with serving(tmp_path_factory.mktemp("two-devices"), "--devices", "2") as running:
        yield running


def test_each_c_thread_has_its_own_device_and_errors(toolkit: Path, two_devices: Daemon, tmp_path: Path) -> None:
    """Threads of one C program: a current device per thread (none until it sets one), memory on the thread's
    device, and a pipelined failure returned to the thread that made it, never to another."""
    binary = compile_program(toolkit, PROGRAMS / "threads.cpp", tmp_path)
    done = run_program(toolkit, binary, two_devices)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    codes = {name: int(text.split()[0]) for name, text in lines.items()}
    assert codes["count"] == 2
    for unset in ("unset-get-device", "unset-create-stream"):
        assert codes[unset] == ACL_ERROR_RT_CONTEXT_NULL
        assert "this thread has no current device: call aclrtSetDevice first" in lines[unset]
    for index in (0, 1):
        assert codes[f"t{index}-device"] == index
        pointer = codes[f"t{index}-pointer"]
        assert DEVICE_BASE + index * DEVICE_STRIDE <= pointer < DEVICE_BASE + (index + 1) * DEVICE_STRIDE
        assert codes[f"t{index}-roundtrip"] == 1
    assert codes["main-device"] == 0
    assert codes["a-launch"] == 0 and codes["b-sync"] == 0 and codes["b-message-null"] == 1
    assert codes["a-sync"] == ACLNN_ERR_PARAM_INVALID
    assert "aclnnAdd (the 1st aclnnAdd call of this thread) #" in lines["a-sync"] and "was freed" in lines["a-sync"]
    ok = {name for name in codes if name.endswith(("-set", "-code", "-malloc", "-copy-in", "-copy-out", "-free"))}
    ok |= {name for name in codes if name.endswith(("-reset", "-stream", "-destroy", "-finalize", "-x", "-dead"))}
    assert {name: codes[name] for name in ok - {"unset-create-stream"} if codes[name] != 0} == {}


def test_aclinit_reads_its_config_file(toolkit: Path, two_devices: Daemon, tmp_path: Path) -> None:
    """The endpoint comes from aclInit's JSON file (no VNPU_ENDPOINT); a file that cannot be read or parsed fails
    aclInit with the runtime's code and a message naming the file."""
    binary = compile_program(toolkit, PROGRAMS / "config.cpp", tmp_path)
    good, bad, missing = tmp_path / "good.json", tmp_path / "bad.json", tmp_path / "missing.json"
    good.write_text(json.dumps({"vnpu": {"endpoint": two_devices.url}}))
    bad.write_text("{vnpu")
    done = run_program(toolkit, binary, None, str(good))
    assert done.stdout.splitlines() == ["init 0 ", "count 0 2", "finalize 0"], done.stdout + done.stderr
    for path, code, words in ((bad, ACL_ERROR_PARSE_FILE, "is not valid JSON"), (missing, ACL_ERROR_INVALID_FILE, "")):
        done = run_program(toolkit, binary, None, str(path))
        line = done.stdout.splitlines()[0]
        assert line.startswith(f"init {code} aclInit") and str(path) in line and words in line, done.stdout


def test_acl_contexts_and_forced_reset_from_c(toolkit: Path, daemon: Daemon, tmp_path: Path) -> None:
    """The context samples' flow, three times in one process: every step's code, and the data on the created
    context's default stream."""
    binary = compile_program(toolkit, PROGRAMS / "contexts.cpp", tmp_path)
    done = run_program(toolkit, binary, daemon)
    assert done.returncode == 0, done.stdout + done.stderr
    rounds = done.stdout.split("init ")[1:]
    assert len(rounds) == 3
    for text in rounds:
        lines = dict(line.split(" ", 1) for line in ("init " + text).splitlines())
        codes = {name: int(value.split()[0]) for name, value in lines.items() if name != "values"}
        assert lines["values"] == "ok" and codes["created-is-current"] == 1 and codes["default-stream-is-real"] == 1
        assert codes.pop("destroy-primary") == ACL_ERROR_RT_CONTEXT_NULL
        assert "aclrtDestroyContext" in lines["destroy-primary"]
        assert codes.pop("set-destroyed") == ACL_ERROR_RT_PARAM_INVALID
        assert codes.pop("reset-after") == ACL_ERROR_RT_CONTEXT_RELEASE_ERROR
        assert "already been reset" in lines["reset-after"]
        assert {name: code for name, code in codes.items() if code not in (0, 1)} == {}
        assert codes["finalize"] == 0


def test_host_side_calls_from_c(toolkit: Path, daemon: Daemon, tmp_path: Path) -> None:
    """The quick-start samples' host calls: each value as the runtime gives it, and the last error stored for a
    runtime failure only."""
    binary = compile_program(toolkit, PROGRAMS / "sysinfo.cpp", tmp_path)
    done = run_program(toolkit, binary, daemon)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert lines["soc"] == SOC_NAME and lines["init"] == "0"
    assert lines["version-str"] == f"0 {CANN_VERSION}"
    major, minor, patch = (int(p) for p in CANN_VERSION.split("."))
    assert lines["version-num"] == f"0 {major * 10**7 + minor * 10**5 + patch * 10**3}"
    assert lines["version-missing"] == str(ACL_ERROR_INVALID_FILE)
    assert lines["acl-version"] == "0 1.17.0" and lines["run-mode"] == "0 1"
    assert lines["run-mode-null"] == f"{ACL_ERROR_INVALID_PARAM} peek 0 get 0"
    assert (lines["message-first"], lines["message-second"]) == ("1", "0")
    bad = ACL_ERROR_RT_INVALID_DEVICEID
    assert lines["bad-device"] == f"{bad} peek {bad} get {bad} again 0"
    assert lines["bad-level"] == str(ACL_ERROR_INVALID_PARAM)
    assert lines["fp16"] == "0x3e80 1.625000" and lines["fp16-saturate"] == "0x7bff 0x0001"
    assert lines["sizes"] == "4 2 8 0"
    assert lines["attributes"] == "0 3 0=1 1=1 2=1" and lines["attribute-bad"] == str(ACL_ERROR_INVALID_PARAM)
    assert lines["priorities"] == "0 7 0 0"
    assert lines["buffer"] == "1 48" and lines["buffer-update"] == "0 8"
    assert lines["buffer-destroy"] == f"0 {ACL_ERROR_INVALID_PARAM}"
    assert lines["buffer-gone"] == str(ACL_ERROR_INVALID_PARAM) and lines["finalize"] == "0"
    assert (lines["arch"], lines["arch-other"]) == ("0 1", "0 0")
    assert lines["arch-unknown"] == str(ACL_ERROR_RT_PARAM_INVALID)
    assert lines["vector-cores"] == "0 40" and lines["capability"] == "0 1" and lines["set-device"] == "0"
    assert lines["res-limit"] == "0 0 1" and lines["res-limit-too-many"] == str(ACL_ERROR_RT_PARAM_INVALID)
    assert lines["error-verbose"] == "0 0 0 0"  # ACL_RT_NO_ERROR, over what the program had in the struct
    assert lines["error-verbose-null"] == str(ACL_ERROR_INVALID_PARAM)
    assert lines["error-verbose-device"] == str(ACL_ERROR_RT_INVALID_DEVICEID)
    assert lines["utilization"] == "0 -1 -1 -1 -1"
    assert lines["utilization-extend"] == str(ACL_ERROR_INVALID_PARAM)
    assert lines["reset-force"] == "0"


def test_streams_notifies_and_events_from_c(toolkit: Path, daemon: Daemon, tmp_path: Path) -> None:
    """The stream and notify samples' flow: a notify orders two streams (the data proves it), timestamps, ids,
    the failure mode set once, an abort releasing a stream blocked forever."""
    binary = compile_program(toolkit, PROGRAMS / "streams.cpp", tmp_path)
    done = run_program(toolkit, binary, daemon)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    checked = ("values", "after-abort", "after-value", "sums")
    codes = {name: int(value.split()[0]) for name, value in lines.items() if name not in checked}
    assert lines["values"] == lines["after-abort"] == lines["after-value"] == "ok"
    assert lines["sums"] == "2 4 6 8"  # the built_in_task sample's README
    assert (codes.pop("blocked-on-value"), codes.pop("peer")) == (1, -1)  # this daemon has one device:
    assert codes.pop("can-access-peer") == ACL_ERROR_RT_INVALID_DEVICEID  # device 1 is no peer, nothing written
    assert (codes.pop("ids-differ"), codes.pop("timestamps-ordered")) == (1, 1)
    assert (codes.pop("flags-value"), codes.pop("priority-value")) == (1, 3)  # ACL_STREAM_FAST_LAUNCH, priority 3
    assert codes.pop("id-null") == ACL_ERROR_INVALID_PARAM and "streamId is NULL" in lines["id-null"]
    assert codes.pop("back-to-continue") == ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert "aclrtSetStreamFailureMode" in lines["back-to-continue"]
    assert codes.pop("sync-after-abort") in (0, ACL_ERROR_RT_STREAM_ABORT)  # dropped, or given up while running
    assert codes.pop("stop-default") == ACL_ERROR_RT_PARAM_INVALID
    assert {name: code for name, code in codes.items() if code != 0} == {}


@pytest.mark.parametrize("blocking", ["0", "1"])
def test_overflow_detection_from_c(toolkit: Path, daemon: Daemon, tmp_path: Path, blocking: str) -> None:
    """The overflow_detection sample's flow (its README: INFNAN to SATURATION, switch 1, status 0 before and after
    the reset), the status really copied over other bytes, and the aclrtStreamAttrValue union both ways."""
    binary = compile_program(toolkit, PROGRAMS / "overflow.cpp", tmp_path)
    done = run_program(toolkit, binary, daemon, VNPU_LAUNCH_BLOCKING=blocking)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    values = {name: lines.pop(name) for name in ("modes", "switch", "status-before", "status-after", "attr-check")}
    values |= {name: lines.pop(name) for name in ("tag-unset", "tag", "failure", "cache", "priorities", "restored")}
    assert values == {
        "modes": "1 0",  # ACL_RT_OVERFLOW_MODE_INFNAN, then SATURATION
        "switch": "1",
        "status-before": "0 zero",  # 64 zero bytes over the 0xAB the buffer held
        "status-after": "0 zero",
        "attr-check": f"0 0 {0xFFFFFFFF}",  # set through the junk-filled union; Get wrote its member only
        "tag-unset": str(0xFFFFFFFF),
        "tag": str(0xC0FFEE),
        "failure": "1",
        "cache": "0",  # in effect in captures only
        "priorities": "5 3 5",  # the attribute changes; aclrtStreamGetPriority keeps the creation priority
        "restored": "1",
    }
    codes = {name: int(value.split()[0]) for name, value in lines.items()}
    for name in ("get-mode-null", "switch-two", "get-switch-null", "attr-null", "attr-get-null"):
        assert codes.pop(name) == ACL_ERROR_INVALID_PARAM, lines[name]
    assert "value is NULL" in lines["attr-null"] and "flag must be 0 or 1" in lines["switch-two"]
    for name in ("set-undef", "attr-unknown", "attr-get-unknown", "attr-priority-default"):
        assert codes.pop(name) == ACL_ERROR_RT_PARAM_INVALID, lines[name]
    assert codes.pop("attr-back-to-continue") == ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    # the queued calls' own checks: at the call itself when blocking, else at the synchronize after it
    for name, code in (("status-null", ACL_ERROR_INVALID_PARAM), ("status-size", ACL_ERROR_RT_PARAM_INVALID)):
        at_call, at_sync = codes.pop(name), codes.pop(f"{name}-sync")
        assert (at_call, at_sync) == ((code, 0) if blocking == "1" else (0, code)), (lines[name], lines[f"{name}-sync"])
        assert "aclrtGetOverflowStatus" in lines[name if blocking == "1" else f"{name}-sync"]
    assert {name: code for name, code in codes.items() if code != 0} == {}


def test_custom_allocator_registry_from_c(toolkit: Path, daemon: Daemon, tmp_path: Path) -> None:
    """The allocator sample's flow: C function pointers stored, handed back as they were, and called."""
    binary = compile_program(toolkit, PROGRAMS / "allocator.cpp", tmp_path)
    done = run_program(toolkit, binary, daemon)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    codes = {name: int(value.split()[0]) for name, value in lines.items() if name != "values"}
    assert lines["values"] == "ok"
    assert (codes.pop("desc"), codes.pop("same"), codes.pop("counts")) == (1, 1, 1)
    assert codes.pop("register-incomplete") == ACL_ERROR_INVALID_PARAM
    assert "getAddrFromBlockFunc" in lines["register-incomplete"]
    assert codes.pop("register-default") == ACL_ERROR_INVALID_PARAM
    assert codes.pop("get-after") == ACL_ERROR_INVALID_PARAM and "no allocator" in lines["get-after"]
    assert codes.pop("destroy-again") == ACL_ERROR_INVALID_PARAM and "destroyed" in lines["destroy-again"]
    assert {name: code for name, code in codes.items() if code != 0} == {}


def test_callbacks_and_host_functions_from_c(toolkit: Path, daemon: Daemon, tmp_path: Path) -> None:
    """The callback samples' flow: a report thread runs the stream's callbacks with their userData; a host
    function reads the pinned memory the stream filled before it and holds the work behind it."""
    binary = compile_program(toolkit, PROGRAMS / "callbacks.cpp", tmp_path)
    done = run_program(toolkit, binary, daemon)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert lines.pop("values") == "ok"
    codes = {name: int(value.split()[0]) for name, value in lines.items()}
    assert (codes.pop("calls"), codes.pop("sum"), codes.pop("in-report-thread")) == (3, 520 + 7 + 11, 1)
    assert codes.pop("subscribe-again") == ACL_ERROR_RT_STREAM_SUBSCRIBE
    assert codes.pop("callback-bad-block") == ACL_ERROR_INVALID_PARAM
    assert codes.pop("host-func-on-subscribed") == ACL_ERROR_RT_STREAM_SUBSCRIBE
    assert codes.pop("host-func-null") == ACL_ERROR_RT_PARAM_INVALID
    assert codes.pop("subscribe-host-stream") == ACL_ERROR_RT_STREAM_SUBSCRIBE  # it runs host functions
    assert codes.pop("subscribe-host-func") == ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert "use aclrtLaunchHostFunc" in lines["subscribe-host-func"]
    assert codes.pop("process-bad-timeout") == ACL_ERROR_INVALID_PARAM
    assert codes.pop("process-unsubscribed") == ACL_ERROR_RT_THREAD_SUBSCRIBE
    assert codes.pop("callback-unsubscribed") == ACL_ERROR_RT_STREAM_NO_CB_REG
    # the primary and the created context's default streams, two streams; each destroyed (the primary's by the reset)
    assert lines.pop("stream-states") == "4 4 0" and codes.pop("stream-states") == 4
    assert codes.pop("stream-state-again") == ACL_ERROR_RT_PARAM_INVALID
    assert lines["exception"] == "1 1 1 1"  # once, with the task id, stream id and thread of the failed copy
    mem_error = ACL_ERROR_RT_DEVICE_MEM_ERROR
    assert (codes.pop("exception"), codes.pop("exception-code")) == (1, mem_error)
    assert codes.pop("exception-null") == 2**32 - 1  # a NULL info
    assert lines["exception-kernel-detail"] == f"{ACL_ERROR_RT_FEATURE_NOT_SUPPORT} {ACL_ERROR_RT_FEATURE_NOT_SUPPORT}"
    codes.pop("exception-kernel-detail")
    assert codes.pop("register-null") == ACL_ERROR_RT_PARAM_INVALID
    for name in ("sync-failed", "peek-after-failure", "get-after-failure"):
        assert codes.pop(name) == mem_error, name
    assert {name: code for name, code in codes.items() if code != 0} == {}


def test_an_ipc_event_between_two_programs(toolkit: Path, daemon: Daemon, tmp_path: Path) -> None:
    """The ipcevent and notify samples' flow: one program exports an IPC event's handle and a notify's key
    through files, another opens them and waits on them; the exporter lists the importer's pid for the notify
    and keeps both until the importer is done."""
    binary = compile_program(toolkit, PROGRAMS / "ipc_event.cpp", tmp_path)
    handle, done = str(tmp_path / "handle"), str(tmp_path / "done")
    runs: dict[str, Any] = {}
    exporter = threading.Thread(
        target=lambda: runs.update(a=run_program(toolkit, binary, daemon, "export", handle, done))
    )
    exporter.start()
    runs["b"] = run_program(toolkit, binary, daemon, "import", handle, done)
    exporter.join(60)
    for side in ("a", "b"):
        assert runs[side].returncode == 0, runs[side].stdout + runs[side].stderr
    a, b = (dict(line.split(" ", 1) for line in runs[s].stdout.splitlines()) for s in ("a", "b"))
    codes_a = {name: int(value.split()[0]) for name, value in a.items()}
    codes_b = {name: int(value.split()[0]) for name, value in b.items()}
    assert (codes_a.pop("status"), codes_b.pop("status"), codes_a.pop("importer-done")) == (1, 1, 1)
    assert codes_a.pop("handle-plain") == ACL_ERROR_RT_PARAM_INVALID and "ACL_EVENT_IPC" in a["handle-plain"]
    assert codes_a.pop("handle-null") == ACL_ERROR_INVALID_PARAM
    assert codes_b.pop("open-null") == ACL_ERROR_INVALID_PARAM
    assert codes_a.pop("notify-pid-null") == ACL_ERROR_INVALID_PARAM
    assert {n: c for n, c in codes_a.items() if c} == {} and {n: c for n, c in codes_b.items() if c} == {}


def test_memory_shared_between_two_programs(toolkit: Path, daemon: Daemon, tmp_path: Path) -> None:
    """The memory/7 and memory/10 samples' flow (physical memory by shareable handle, IPC memory by key, each
    with the importer's pid on the whitelist), and host_register/0's zero copy and managed_memory/0 in C."""
    binary = compile_program(toolkit, PROGRAMS / "memory_sharing.cpp", tmp_path)
    base = str(tmp_path / "share")
    runs: dict[str, Any] = {}
    exporter = threading.Thread(target=lambda: runs.update(a=run_program(toolkit, binary, daemon, "export", base)))
    exporter.start()
    runs["b"] = run_program(toolkit, binary, daemon, "import", base)
    exporter.join(60)
    for side in ("a", "b"):
        assert runs[side].returncode == 0, runs[side].stdout + runs[side].stderr
    a, b = (dict(line.split(" ", 1) for line in runs[s].stdout.splitlines()) for s in ("a", "b"))
    codes_a = {name: int(value.split()[0]) for name, value in a.items()}
    codes_b = {name: int(value.split()[0]) for name, value in b.items()}
    assert codes_a.pop("physical-bad-flags") == ACL_ERROR_INVALID_PARAM
    assert codes_a.pop("ipc-key-null") == ACL_ERROR_INVALID_PARAM
    assert codes_a.pop("zc-register-bad-flag") == ACL_ERROR_RT_PARAM_INVALID
    assert codes_a.pop("zc-register-again") == ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED
    assert codes_a.pop("zc-unregister-again") == ACL_ERROR_HOST_MEMORY_NOT_REGISTERED
    assert codes_a.pop("managed-bad-flag") == ACL_ERROR_INVALID_PARAM
    assert codes_a.pop("release-mapped") == ACL_ERROR_RT_PARAM_INVALID and "aclrtUnmapMem" in a["release-mapped"]
    for check in ("seam", "peer-wrote-physical", "peer-wrote-ipc", "zero-copy", "managed-device-read"):
        assert f"check-{check}" in codes_a
    assert {"check-physical", "check-ipc"} <= set(codes_b)
    assert {n: c for n, c in codes_a.items() if c} == {} and {n: c for n, c in codes_b.items() if c} == {}


@pytest.mark.parametrize("blocking", ["0", "1"])
def test_random_numbers_from_c(toolkit: Path, daemon: Daemon, tmp_path: Path, blocking: str) -> None:
    """The built_in_task random sample's flow: every function it launches, its values in range, the dataType
    the ACL layer writes into the program's struct, the counter it advances (and, zeroed again, the same numbers),
    and what a struct launched again without refilling dataType, a NULL task and a reserve get."""
    binary = compile_program(toolkit, PROGRAMS / "random.cpp", tmp_path)
    done = run_program(toolkit, binary, daemon, VNPU_LAUNCH_BLOCKING=blocking)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    checks = ("normal", "truncated", "uniform-fp16", "uniform-int32", "dropout")
    assert {name: lines.pop(f"{name}-values") for name in checks} == dict.fromkeys(checks, "ok")
    types = {name: int(lines.pop(f"{name}-type")) for name in (*checks, "repeat", "reuse", "reserve")}
    # rtRandomNumDataType: FP32 6, BF16 4, FP16 5, INT32 0; a refused launch leaves the struct as it was
    assert types == {"normal": 6, "truncated": 4, "uniform-fp16": 5, "uniform-int32": 0, "dropout": 6,
                     "repeat": 6, "reuse": 6, "reserve": 6}  # fmt: skip
    assert int(lines.pop("counter-after-normal")) == 64  # 128 values x 2 words / 4 words a block
    assert (lines.pop("counter-advances"), lines.pop("repeat-same")) == ("1", "1")
    codes = {name: int(value.split()[0]) for name, value in lines.items()}
    # at the launch with VNPU_LAUNCH_BLOCKING=1 (as C), else at the next synchronize
    failing = {"reuse": ACL_ERROR_INVALID_PARAM, "null": ACL_ERROR_INVALID_PARAM, "reserve": ACL_ERROR_RT_PARAM_INVALID}
    for name, code in failing.items():
        at = f"{name}-launch" if blocking == "1" else f"{name}-sync"
        assert codes.pop(at) == code and "aclrtRandomNumAsync" in lines[at], (name, lines[at])
        assert codes.pop(f"{name}-sync" if blocking == "1" else f"{name}-launch") == 0
    assert "ACL_INT16" in lines["reuse-launch" if blocking == "1" else "reuse-sync"]
    assert {name: code for name, code in codes.items() if code != 0} == {}


def test_the_model_switch_sample_from_c(toolkit: Path, tmp_path: Path) -> None:
    """The Build API sample's flow (model_ri/2_model_switch): five persistent streams, switches on a device word
    and activations; its output, as its README shows it (modelri spec 7). A daemon of its own: the 0.0000 line is
    an allocation never written, which reads as zeros only in memory no earlier test used."""
    binary = compile_program(toolkit, PROGRAMS / "model_switch.cpp", tmp_path)
    logs = tmp_path / "daemon"
    logs.mkdir()
    with serving(logs) as fresh:
        done = run_program(toolkit, binary, fresh)
    assert done.returncode == 0, done.stdout + done.stderr

    def vector(value: str) -> str:
        return "[INFO]  The vector data is: " + f"{value}  " * 8

    expected = []
    for when, values in (
        ("executing", ("3.4000", "0.0000", "5.4000")),
        ("second execution", ("3.4000", "4.4000", "5.4000")),
    ):
        for index, value in enumerate(values, 1):
            expected += [f"[INFO]  After {when}, print data{index}.", vector(value)]
    assert done.stdout.splitlines() == expected


def test_labels_from_c_choose_the_branch_and_refuse_with_the_runtimes_codes(
    toolkit: Path, daemon: Daemon, tmp_path: Path
) -> None:
    """A Build model whose labels guard two branches (out = in + 10 or in + 20), run with the index word 0, 1 and
    9 (the last label), then each refusal's code, and the model still runs after them (labels.cpp)."""
    binary = compile_program(toolkit, PROGRAMS / "labels.cpp", tmp_path)
    done = run_program(toolkit, binary, daemon)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    checks = {name: int(value) for name, value in (line.split()[1:] for line in lines if line.startswith("check "))}
    assert checks == {
        "index-0": 1,
        "index-1": 1,
        "index-9": 1,
        "create-null": ACL_ERROR_INVALID_PARAM,
        "list-null-labels": ACL_ERROR_INVALID_PARAM,
        "list-null-out": ACL_ERROR_INVALID_PARAM,
        "list-num-0": ACL_ERROR_RT_PARAM_INVALID,
        "list-num-65536": ACL_ERROR_RT_PARAM_INVALID,
        "list-second": ACL_ERROR_RT_INTERNAL_ERROR,
        "list-untouched": 1,
        "set-null": ACL_ERROR_INVALID_PARAM,
        "set-twice": ACL_ERROR_RT_INTERNAL_ERROR,
        "set-no-list": ACL_ERROR_RT_INTERNAL_ERROR,
        "set-unbound": ACL_ERROR_RT_STREAM_MODEL,
        "switch-null": ACL_ERROR_INVALID_PARAM,
        "switch-unbound": ACL_ERROR_RT_STREAM_MODEL,
        "destroy-twice": ACL_ERROR_RT_INVALID_HANDLE,
        "destroyed-in-list": ACL_ERROR_RT_INVALID_HANDLE,
        "after-refusals": 1,
        "list-destroy-twice": ACL_ERROR_RT_PARAM_INVALID,
    }
    messages = dict(line.split(" ", 2)[1:] for line in lines if line.startswith("message "))
    assert "num must be in (0, 65535], got 65536" in messages["list-num-65536"]
    assert "cannot be set repeatedly" in messages["set-twice"]
    assert "in no label list" in messages["set-no-list"]
    assert "was destroyed" in messages["destroy-twice"]
    assert "double free" in messages["list-destroy-twice"]
    assert lines[-1] == "done"


S3_OUTPUT = """\
[INFO]  ========== IF condition ==========
[INFO]  IF true branch result:
[INFO]  The vector data is: 1.2500  2.5000  3.7500  5.0000  6.2500  7.5000  8.7500  10.0000
[INFO]  IF false branch result:
[INFO]  The vector data is: 1.2500  2.5000  3.7500  5.0000  6.2500  7.5000  8.7500  10.0000
[INFO]  IF condition PASSED
[INFO]  ========== WHILE condition ==========
[INFO]  WHILE single iteration result:
[INFO]  The vector data is: 1.2500  2.5000  3.7500  5.0000  6.2500  7.5000  8.7500  10.0000
[INFO]  WHILE condition PASSED
[INFO]  ========== SWITCH condition ==========
[INFO]  SWITCH case 0 result:
[INFO]  The vector data is: 1.5000  3.0000  4.5000  6.0000  7.5000  9.0000  10.5000  12.0000
[INFO]  SWITCH case 1 result:
[INFO]  The vector data is: 1.5000  3.0000  4.5000  6.0000  7.5000  9.0000  10.5000  12.0000
[INFO]  SWITCH case 2 result:
[INFO]  The vector data is: 1.5000  3.0000  4.5000  6.0000  7.5000  9.0000  10.5000  12.0000
[INFO]  SWITCH condition PASSED
[INFO]  ========== All tests PASSED =========="""


def test_conditional_models_from_c_print_the_s3_sample_output(toolkit: Path, tmp_path: Path) -> None:
    """The cond sample's flow (ASSIGN_DEFAULT 0 overrides the host's writes: IF false, WHILE body skipped, SWITCH
    case 0). The WHILE line is the IF test's result: vnpu's first-fit allocator hands the freed block back at the
    same address with its contents -- in a daemon of its own, so no other program's memory moves it."""
    binary = compile_program(toolkit, PROGRAMS / "cond_model.cpp", tmp_path)
    with serving(tmp_path) as own:
        done = run_program(toolkit, binary, own)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "\n".join(line.rstrip() for line in lines if line.startswith("[")) == S3_OUTPUT, done.stdout
    checks = dict(line.split()[1:] for line in lines if line.startswith("check "))
    assert checks == {
        "if-array": "1",
        "if-end-writes": "1",
        "root-null": str(ACL_ERROR_RT_PARAM_INVALID),
        "unfinished": "107045",
        "unfinished-destroyed": "107017",
    }


@pytest.mark.parametrize("blocking", ["0", "1"])
def test_model_edit_from_c(toolkit: Path, daemon: Daemon, tmp_path: Path, blocking: str) -> None:
    """A captured model listed and edited from C: its stream and tasks (the arrays' 107039 rules), types and
    sequence ids, a grouped kernel's arguments changed through its JSON argument block, a kernel turned into a value
    write, a kernel disabled; the replay after aclmdlRIUpdate computes the edited program."""
    binary = compile_program(toolkit, PROGRAMS / "model_edit.cpp", tmp_path)
    done = run_program(toolkit, binary, daemon, VNPU_LAUNCH_BLOCKING=blocking)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    values = {name: lines.pop(name) for name in ("a", "c", "d", "e")}
    assert values == dict.fromkeys(values, "ok")
    assert (lines.pop("w"), lines.pop("w2")) == ("7", "42")
    checked = {
        "streams-count-value": "1", "streams-untouched": "1", "tasks-count-value": "5", "tasks-short-filled": "2 1",
        "tasks-tail-nulled": "1", "types": "11151", "seq-ids": "01234", "attr-timeout-value": "1090",
        "params-size": "200", "params-kernel": "1 1", "params-zeroed": "1", "args-json": "1", "converted-type": "5",
        "tasks-after-value": "4",
    }  # fmt: skip
    assert {name: lines.pop(name) for name in checked} == checked
    codes = {name: int(value.split()[0]) for name, value in lines.items()}
    assert codes.pop("streams-short") == ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY
    assert codes.pop("streams-null-count") == ACL_ERROR_RT_PARAM_INVALID
    assert codes.pop("tasks-short") == ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY
    assert codes.pop("tasks-user-stream") == ACL_ERROR_RT_PARAM_INVALID and "aclmdlRIGetStreams" in lines[
        "tasks-user-stream"]  # fmt: skip
    assert codes.pop("type-null") == ACL_ERROR_RT_PARAM_INVALID
    # the refused launch: at the call with VNPU_LAUNCH_BLOCKING=1 (as C), else at the next call that waits
    at, then = ("execute-before-update", "update") if blocking == "1" else ("update", "execute-before-update")
    assert codes.pop(at) == ACL_ERROR_RT_MODEL_EXECUTE and "call aclmdlRIUpdate" in lines[at]
    assert codes.pop(then) == 0
    assert {name: code for name, code in codes.items() if code != 0} == {}


@pytest.mark.parametrize("blocking", ["0", "1"])
def test_model_sync_external_names_ids_and_destroy_callbacks_from_c(
    toolkit: Path, daemon: Daemon, tmp_path: Path, blocking: str
) -> None:
    """CANN's 4_model_sync_external sample's three scenarios print what the sample prints (modelri spec 7); then a
    model's name, id and abort, and C destroy callbacks called with their userData by aclmdlRIDestroy."""
    binary = compile_program(toolkit, PROGRAMS / "model_sync.cpp", tmp_path)
    done = run_program(toolkit, binary, daemon, VNPU_LAUNCH_BLOCKING=blocking)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[:6] == [
        "[INFO]  === Scenario 1: Stream Record + Graph Wait External ===",
        "[INFO]  Check result success.",
        "[INFO]  === Scenario 2: Graph Record External + Stream Wait ===",
        "[INFO]  Check result success.",
        "[INFO]  === Scenario 3: Graph1 Record External + Graph2 Wait External ===",
        "[INFO]  Check result success.",
    ], done.stdout + done.stderr
    got = dict(line.split(" ", 1) for line in lines[6:])
    assert (got.pop("name-unset"), got.pop("name")) == ("[]", "[decoder]")
    assert int(got.pop("name-small")) == ACL_ERROR_RT_INTERNAL_ERROR and got.pop("name-small-zeroed") == "1"
    assert int(got.pop("name-zero")) == ACL_ERROR_RT_PARAM_INVALID
    assert int(got.pop("name-null")) == ACL_ERROR_INVALID_PARAM == int(got.pop("set-name-null"))
    assert 0 <= int(got.pop("id")) < 64 and int(got.pop("id-null")) == ACL_ERROR_INVALID_PARAM
    assert int(got.pop("register-again")) == ACL_ERROR_RT_PARAM_INVALID == int(got.pop("register-null"))
    assert int(got.pop("unregister-again")) == ACL_ERROR_RT_PARAM_INVALID
    assert (got.pop("calls-before-destroy"), got.pop("calls")) == ("0", "2")
    assert got.pop("callbacks") == "1 1 ordered 1"
    assert int(got.pop("id-after-destroy")) == ACL_ERROR_RT_INVALID_HANDLE
    assert not got, got


def test_tdt_channels_and_queues_from_c(toolkit: Path, daemon: Daemon, tmp_path: Path) -> None:
    """tdt.cpp, linked as CANN's tdt samples link (libacl_tdt_channel, libacl_tdt_queue): random datasets come
    back byte for byte from a channel of capacity 2, the third send fails with and without a timeout, misuse gets
    the runtime's codes, and a queue route reads back as bound, then is gone once unbound."""
    binary = compile_program(toolkit, PROGRAMS / "tdt.cpp", tmp_path, "-lacl_tdt_channel", "-lacl_tdt_queue")
    done = run_program(toolkit, binary, daemon)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    checks = {
        "create": "ok",
        "size-after-1": "1",
        "size-after-2": "2",
        "size-after-3": "2",
        "same-1": "1",
        "same-2": "1",
        "type-of-null": "-1",
        "size-of-null": "0",
        "slice-info": "0 0",
        "size-after-clean": "0",
        "attr-name": "program_src 8",
        "queues-differ": "1",
        "routes": "1",
        "route-matches": "1",
        "route-status": str(ACL_TDT_QUEUE_ROUTE_BIND),
        "routes-after-unbind": "0",
        "dequeued": "100 1 tag",
    }
    assert {name: lines.pop(name) for name in checks} == checks
    nulls = {name: lines.pop(name) for name in ("get-out-of-range", "item-null-dims", "item-end-with-dims")}
    nulls["capacity-0"] = lines.pop("capacity-0")
    assert all(line.startswith("NULL ") for line in nulls.values()), nulls
    assert "capacity 0" in nulls["capacity-0"] and "dimNum is 2" in nulls["item-null-dims"]
    codes = {name: int(rest.split()[0]) for name, rest in lines.items()}
    failing = {
        "send-3-now": ACL_ERROR_RT_QUEUE_FULL,
        "send-3-wait": ACL_ERROR_RT_QUEUE_FULL,
        "receive-empty": ACL_ERROR_RT_QUEUE_EMPTY,
        "receive-empty-wait": ACL_ERROR_RT_QUEUE_EMPTY,
        "add-to-received": ACL_ERROR_FEATURE_UNSUPPORTED,
        "receive-into-own": ACL_ERROR_INVALID_PARAM,
        "dims-too-few": ACL_ERROR_INVALID_PARAM,
        "size-null": ACL_ERROR_INVALID_PARAM,
        "size-destroyed": ACL_ERROR_RT_INVALID_HANDLE,
        "attr-depth-wide": ACL_ERROR_INVALID_PARAM,
        "attr-depth-narrow": ACL_ERROR_INVALID_PARAM,
        "queue-same-name": ACL_ERROR_INVALID_PARAM,
        "query-no-mode": ACL_ERROR_INVALID_PARAM,
        "query-no-dst": ACL_ERROR_INVALID_PARAM,
        "get-route-1": ACL_ERROR_INVALID_PARAM,
        "destroy-dst-again": ACL_ERROR_INVALID_QUEUE_ID,
        "destroy-attr-again": ACL_ERROR_INVALID_PARAM,
        "enqueue-full": ACL_ERROR_RT_QUEUE_FULL,
        "enqueue-null": ACL_ERROR_INVALID_PARAM,
        "dequeue-small": ACL_ERROR_INVALID_PARAM,
    }
    assert {name: codes.pop(name) for name in failing} == failing
    assert "within 20 ms" in lines["send-3-wait"] and "program_src" in lines["queue-same-name"]
    assert {name: code for name, code in codes.items() if code != 0} == {}
