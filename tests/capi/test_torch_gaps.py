"""From C, the functions torch_npu reaches beyond the seed (tests/capi/programs/torch_gaps.cpp): each answers as
the runtime does, the legacy operator path refuses naming the operator, and HCCL runs one rank."""

from __future__ import annotations

from pathlib import Path

from tests.capi.conftest import PROGRAMS, compile_program, run_program
from tests.daemons import Daemon

EXPECTED = [
    "aclrtGetDeviceCount(&count) = 0",
    "count 1",
    "version 8.5.0 major 8 minor 5",
    "aclrtMallocAlign32(&a, 100, ACL_MEM_MALLOC_HUGE_FIRST) = 0",
    "aclrtSynchronizeDeviceWithTimeout(1000) = 0",
    "actual 2000",
    "ai cores 20",
    "aclrtDeviceGetUuid(0, &uuid) = 0",
    "process param 0",
    "aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &value) = 107021",
    "context param 1",
    "aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) = 107021",
    "jit disable (size 256)",
    "desc dims 2 dim1 3 size 24 format 2",
    "aclGetTensorDescDimV2(desc, 5, &dim) = 100000",
    "vnpu runs aclnn operators only: it has no legacy (aclop) operator Fill",
    "HcclCommInitRootInfo(1, &root, 0, &comm) = 0",
    "HcclCommInitRootInfo(2, &root, 0, &comm) = 5",
    "ranks 1 rank 0",
    "allreduce 1.5 -2 3.25 8",
    "HcclSend(send, 4, HCCL_DATA_TYPE_FP32, 1, comm, stream) = 1",
    "HcclCommDestroy(comm) = 0",
    "aclFinalize() = 0",
]


def test_torch_npus_runtime_functions_from_c(toolkit: Path, daemon: Daemon, tmp_path: Path) -> None:
    binary = compile_program(toolkit, PROGRAMS / "torch_gaps.cpp", tmp_path, "-lacl_op_compiler", "-lhccl")
    run = run_program(toolkit, binary, daemon)
    assert run.returncode == 0, run.stderr
    for line in EXPECTED:
        assert line in run.stdout, (line, run.stdout)
    assert "aclopCompileAndExecute(" in run.stdout and "= 100024" in run.stdout


def test_fia_max_workspace_by_dlsym(toolkit: Path, daemon: Daemon, tmp_path: Path) -> None:
    """aclnnFusedInferAttentionScoreV2/V3/V4GetMaxWorkspaceSize, which torch_npu's
    `_npu_fused_infer_attention_score_get_max_workspace` dlsyms (no header declares them): phase 1's parameters and
    checks, the workspace of phase 1, an executor aclDestroyAclOpExecutor takes. The two attention operators vnpu
    lacks export theirs too (their calls answer 561003)."""
    binary = compile_program(toolkit, PROGRAMS / "fia_max_workspace.cpp", tmp_path, "-ldl")
    run = run_program(toolkit, binary, daemon)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "dlopen libopapi.so ok" in lines
    for version in ("V2", "V3", "V4"):
        assert f"dlsym aclnnFusedInferAttentionScore{version}GetMaxWorkspaceSize found" in lines
    for name in ("NsaCompressAttentionInfer", "NsaSelectedAttentionInfer"):
        assert f"dlsym aclnn{name}GetMaxWorkspaceSize found" in lines
    assert "max 0 size 0 executor set" in lines and "phase1 0 size 0" in lines
    assert lines.count("aclDestroyAclOpExecutor 0") == 2
    assert "null query 161001 executor null" in lines and "null workspaceSize 161001" in lines
    assert "max past the cache 0 size 0" in lines and "phase1 past the cache 161002" in lines  # lengths unread
    assert "aclFinalize 0" in lines
