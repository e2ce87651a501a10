"""Regenerate the catalog's data files from checkouts of CANN's four operator repositories.

    python -m proto.aclnn.catalog.extract --ops-math DIR --ops-nn DIR --ops-transformer DIR --ops-cv DIR
        [--out proto/aclnn/catalog] [--notes FILE]

Each DIR is a checkout (a git work tree, so that its commit is recorded) of hicann/ops-<repo>. The output
is deterministic: operators sorted by name, one per line. A developer tool (it needs pycparser, one of
vnpu's dependencies); the catalog loader never imports it.

What is read (see `sources`): every public `op_api/aclnn_*.h` (and ops-math's `acl_stft.h`,
`acl_rfft1d.h`), experimental ones included, parsed with pycparser after a light preprocessing
(`cheader`); the `L2_DFX_PHASE_1` input/output lists of the op_api C++ (`dfx`) for directions; and the
OpDef of every op type a CMakeLists.txt registers `ACLNNTYPE aclnn`, turned into the prototypes CANN's
generator writes (`opdef`, `generated`). Duplicates are resolved by `resolve`.

Evidence for the generated-header convention (`generated`):

1. CANN 8.1.RC1 as installed, published in GitHub leideng/CANN-8.1.RC1
   (`opp/built-in/op_impl/ai_core/tbe/op_api/include/aclnnop/`): 112 headers say they were generated.
   For the 109 whose OpDef is in these repositories, the generator here reproduces 106 exactly (every
   parameter's name and C type, and the file name); the other three (AddRmsNormQuant,
   AddRmsNormDynamicQuant, ApplyRotaryPosEmb) differ only by parameters their OpDefs gained since 8.1.
   Seen there: `aclTensor *varRef` for inputs that are also outputs, `const aclTensor *yOut` for outputs
   and `out` for a lone one, `char *reductionOptional` and `const aclIntArray *restoreShapeOptional` for
   optional pointer attributes but `double eps` for an optional value attribute, `const aclTensorList *`
   for dynamic parameters, `const aclScalar *` / `const aclScalarList *` for `.Scalar()` /
   `.ScalarList()` inputs, `const aclIntArray *begin` for value-depend INT64 inputs, and header names
   like `aclnn_moe_init_routing_v2_grad.h` (an underscore after a digit before a capital).
2. The generator itself (`tools/opbuild/op_build` in the same package) holds the strings it assembles:
   the type spellings above, `Ref`, `Optional`, `Out`, `out`, and "ValueDepend input dtype ... must be
   float, int64, or bool" (current examples also pass aclIntArray for INT32/INT64 value-depend inputs:
   ops-math experimental AsStrided).
3. The repositories' own examples, which compile against the generated headers: of the generated
   functions an example calls, every one kept in the catalog is called with as many arguments as the
   generated prototype has (`tests/proto/test_catalog.py` re-checks this when VNPU_CANN_OPS is set).
   Versioned parameters: `.Version(2)` attributes appear only in `aclnn<Op>V2`, in its own
   `aclnn_<op>_v2.h` (DequantSwigluQuant / DequantSwigluQuantV2 examples and doc pages).
4. torch_npu's Ascend/op-plugin (517f2e7) calls them in this order: `EXEC_NPU_CMD(aclnnRmsNorm, self,
   gamma, epsilon, y, rstd)`, `EXEC_NPU_CMD(aclnnMoeGatingTopKSoftmax, x, finished, k, y, expert_idx,
   row_idx)`, `aclnnScatterPaKvCache(key, keyCache, slotMapping, value, valueCache, compressLens,
   compressSeqOffsets, seqLens, cacheMode, scatterMode, strides, offsets)`; `op_plugin_functions.yaml`
   `npu_swiglu(Tensor self, int dim=-1)` exec aclnnSwiGlu (self, dim, out) and `npu_add_rms_norm(x1, x2,
   gamma, epsilon)` exec aclnnAddRmsNorm (x1, x2, gamma, epsilon, y, rstd, x; a hand-written header).
5. Doc pages (`docs/aclnn<Op>.md`) agree for most generated operators (RmsNorm, DequantSwigluQuant,
   GroupNormSwish, ...) but not all: some experimental pages were written by hand (`aclTensor *out`,
   `self` for `x`), and three give types their examples contradict (HardShrink's `lambd` is a double in
   its example, HuberLoss's `delta` a double): the examples and the 8.1 headers win.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from proto.aclnn.catalog import DATA_DIR, REPOS
from proto.aclnn.catalog.assemble import scan_repo
from proto.aclnn.catalog.encode import dump_repo
from proto.aclnn.catalog.resolve import Resolution, resolve


def extract(checkouts: dict[str, Path]) -> tuple[Resolution, dict[str, str]]:
    """The resolved catalog of the four checkouts (by repo short name) and each checkout's commit."""
    scans = [scan_repo(repo, checkouts[repo]) for repo in REPOS]
    resolution = resolve(scans)
    resolution.decisions[:0] = [f"{scan.repo}: {note}" for scan in scans for note in scan.notes]
    return resolution, {repo: commit_of(path) for repo, path in checkouts.items()}


def render(resolution: Resolution, commits: dict[str, str]) -> dict[str, str]:
    """The text of each data file, by file name."""
    return {
        f"{repo}.json": dump_repo(
            repo,
            commits[repo],
            [op for op in resolution.ops.values() if op.repo == repo],
            [function for function in resolution.functions if function.repo == repo],
            [header for header in resolution.vendor if header.repo == repo],
        )
        for repo in REPOS
    }


def commit_of(path: Path) -> str:
    done = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m proto.aclnn.catalog.extract", description=__doc__.split("\n")[0])
    for repo in REPOS:
        parser.add_argument(
            f"--ops-{repo}", type=Path, required=True, metavar="DIR", help=f"a hicann/ops-{repo} checkout"
        )
    parser.add_argument("--out", type=Path, default=DATA_DIR, help="where the data files go (default: beside this)")
    parser.add_argument("--notes", type=Path, help="also write every resolution decision to this file")
    args = parser.parse_args(argv)
    checkouts = {repo: getattr(args, f"ops_{repo}") for repo in REPOS}
    for repo, path in checkouts.items():
        if not path.is_dir():
            parser.error(f"--ops-{repo} {path} is not a directory")
    resolution, commits = extract(checkouts)
    for name, text in render(resolution, commits).items():
        (args.out / name).write_text(text, encoding="utf-8")
    if args.notes:
        args.notes.write_text("".join(f"{line}\n" for line in resolution.decisions), encoding="utf-8")
    counts = ", ".join(f"{repo} {sum(op.repo == repo for op in resolution.ops.values())}" for repo in REPOS)
    print(f"{len(resolution.ops)} operators ({counts}), {len(resolution.functions)} other functions", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
