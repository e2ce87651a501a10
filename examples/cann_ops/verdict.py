"""The verdicts of a run of `examples/cann_ops_examples.sh`: built, ran, matched -- and why not.

    python examples/cann_ops/verdict.py LOGS [--markdown FILE]

LOGS holds one directory per example (`<repo>/<example id>/`), written by the script: `source` (the example's path),
`build.log` and `build.status`, `run.out`, `run.err` and `run.status` when it was built, and `dump/`, the launches
the daemon wrote while it ran (`server.npu.ops.dump`). An example

- **built** when its repository's own build line compiled and linked it against the toolkit;
- **ran** when it exited 0;
- **matched** when every series of values it printed (`result[0] is: 2.000000` ...) equals, within the printed
  precision and its output dtype, an output of one of its launches as vnpu's float64 reference recomputes it from
  that launch's inputs (`references.py`) -- for a random operator, an output that passes `samples.py`'s test of the
  launch's distribution; an example that prints no values is matched when it ran and each of its launches agrees
  with its reference.

Otherwise the first reason found is given: the header or declaration the compiler missed, a library the link
missed, an operator vnpu does not implement (the example calls it: read from its source), a phase 1 or launch that
failed (the status and vnpu's message), a crash, a value that differs (printed, device, reference), or an operator
that has no reference yet.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from host import host_calls, host_values
from printed import Series, agrees, as_bits, printed_series, rounded
from references import REFERENCES
from samples import SAMPLES

REPOS = ("ops-math", "ops-nn", "ops-transformer", "ops-cv")
CALLED = re.compile(r"\b(acl(?:nn)?[A-Z]\w*?)GetWorkspaceSize\s*\(")
COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
SIGNALS = {4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE"}
SIGNALS[15] = "SIGTERM"


@dataclass
class Launch:
    op: str
    args: dict[str, Any]  # the reference's view of the inputs
    outputs: dict[str, np.ndarray]  # what the device wrote
    dtypes: dict[str, str]


def _array(data: Any, key: str, dtypes: dict[str, str]) -> np.ndarray:
    array = np.asarray(data[key])
    name = dtypes.get(key, str(array.dtype))
    if name != str(array.dtype):  # saved as its bits (bf16, fp8)
        import ml_dtypes

        array = array.view(getattr(ml_dtypes, name))
    return array


def load_launch(path: Path) -> Launch:
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(str(data["meta"]))
        dtypes = meta.get("dtypes", {})
        arrays = {key: _array(data, key, dtypes) for key in data.files if key != "meta"}
    args = {name: _plain(value) for name, value in meta["args"].items()}
    for name in meta["tensors"]:
        if f"in.{name}" in arrays:
            args[name] = _float(arrays[f"in.{name}"])
        else:
            members = sorted((k for k in arrays if k.startswith(f"in.{name}.")), key=lambda k: int(k.rsplit(".", 1)[1]))
            args[name] = [_float(arrays[k]) for k in members] if members else None
    outputs = {key[4:]: array for key, array in arrays.items() if key.startswith("out.")}
    return Launch(meta["op"], args, outputs, {k[4:]: v for k, v in dtypes.items() if k.startswith("out.")})


def _plain(value: Any) -> Any:
    """A dumped argument as a reference takes it: a scalar its value, an array or list its values."""
    if isinstance(value, dict) and "scalar" in value:
        return value["scalar"]
    if isinstance(value, dict) and len(value) == 1:  # int_array, aclBoolArray, aclFloatArray, aclScalarList
        return [_plain(item) for item in next(iter(value.values()))]
    return value


def _float(array: np.ndarray) -> np.ndarray:
    return array.astype(np.float64) if array.dtype.kind == "f" or array.dtype.kind == "V" else array


@dataclass
class Verdict:
    repo: str
    example: str
    built: bool = False
    ran: bool = False
    matched: bool = False
    reason: str = ""


def _first_error(log: str) -> str:
    for line in log.splitlines():
        if "No such file or directory" in line and "fatal error" in line:
            return "missing header " + line.split("fatal error:")[1].split(":")[0].strip()
        if "was not declared" in line or "undeclared" in line:
            name = re.search(r"[‘'`](\w+)[’'`]", line)
            return f"not declared: {name[1] if name else line.strip()}"
        if "undefined reference to" in line:
            name = re.search(r"undefined reference to [`‘'](\w+)", line)
            return f"not exported: {name[1] if name else line.strip()}"
        if "cannot find -l" in line:
            return "missing library " + line.split("cannot find ")[1].strip()
    errors = [line.strip() for line in log.splitlines() if "error" in line]
    return ("compile error: " + errors[0][:160]) if errors else "build failed"


def implemented() -> set[str]:
    """The operators vnpu implements (by catalog name)."""
    from proto.aclnn import OPS

    listing = getattr(OPS, "implemented", None)
    return {decl.name for decl in listing()} if callable(listing) else set(OPS)


def called(source: str) -> list[str]:
    """The operators an example calls, by catalog name (aclnnAdd -> Add, aclStft -> Stft)."""
    from proto.aclnn.catalog import catalog

    by_c_name = {op.c_name: op.name for op in catalog().ops.values()}
    code = COMMENTS.sub(" ", source)
    return sorted({by_c_name.get(name, name) for name in CALLED.findall(code)})


def judge(directory: Path, repo: str, have: set[str]) -> Verdict:
    example = (directory / "source").read_text().strip()
    verdict = Verdict(repo, directory.name.replace("__", "/"))
    if (directory / "build.status").read_text().strip() != "0":
        verdict.reason = _first_error((directory / "build.log").read_text(errors="replace"))
        return verdict
    verdict.built = True
    if not (directory / "run.status").exists():
        verdict.reason = "not run"
        return verdict
    status = int((directory / "run.status").read_text().strip() or 1)
    out = (directory / "run.out").read_text(errors="replace")
    err = (directory / "run.err").read_text(errors="replace")
    ops = called(Path(example).read_text(errors="replace")) if Path(example).exists() else []
    missing = [op for op in ops if op not in have]
    launches = [load_launch(p) for p in sorted((directory / "dump").glob("*.npz"))]
    # a call after aclFinalize (unique_ptr deleters freeing device memory as main returns) fails as on CANN: not the
    # example failing; logged unbuffered into what printf has not flushed yet, it is cut out before the text is read
    out = AFTER_FINALIZE.sub("", out)
    # aclrtFree(NULL) (a scalar's device address never allocated) is refused by CANN's runtime as by vnpu
    # (aclrtFreeImpl: ACL_REQUIRES_NOT_NULL_WITH_INPUT_REPORT, ACL_ERROR_INVALID_PARAM); an example that ignores it
    # has run as it does on CANN
    out = FREED_NULL.sub("", out)
    complained = [line for line in out.splitlines() if line.startswith("[ERROR] ")]  # vnpu's log on stdout
    verdict.ran = status == 0 and not complained
    if not verdict.ran:  # an example that carries on past a failed call has not run either
        verdict.reason = _failure(status, out + err, missing)
        return verdict
    series = printed_series(out)
    code = COMMENTS.sub(" ", Path(example).read_text(errors="replace")) if Path(example).exists() else ""
    if not launches and host_calls(code):
        verdict.matched, verdict.reason = host_values(series, code)
    elif not launches and not series and not ops:  # its operator calls are commented out, or it has none
        verdict.matched, verdict.reason = True, "calls no operator, prints nothing: nothing to compare"
    else:
        verdict.matched, verdict.reason = _values(series, launches, missing)
    return verdict


AFTER_FINALIZE = re.compile(r"\[ERROR\] \w+: ACL_ERROR_UNINITIALIZE \(100001\): no vnpu session[^\n]*\n")
REUSED = re.compile(r"executor \(0x[0-9a-f]+\) was released by its \w+ call")
PAST_THE_END = re.compile(r"\] \w+: .* run \d+ bytes past its end\b")
FREED_NULL = re.compile(r"\[ERROR\] aclrtFree: ACL_ERROR_INVALID_PARAM \(100000\): devPtr is NULL\n")


def _failure(status: int, text: str, missing: list[str]) -> str:
    if missing:
        return "missing operator: " + ", ".join(f"aclnn{op}" for op in missing)
    reused = [line for line in text.splitlines() if line.startswith("[ERROR] ") and REUSED.search(line)]
    if reused:  # on CANN a use after free: the first launch released the executor
        return "the example launches an executor its first launch released: " + reused[0][8:200]
    if status == 0:
        return "exit 0 after " + next(line for line in text.splitlines() if line.startswith("[ERROR] "))[8:200]
    if status == 124:
        return "timeout"
    if status - 128 in SIGNALS:  # else a status the program returned (`return ret`: 107000 is 248)
        return f"crash ({SIGNALS[status - 128]})"
    said = [line.strip() for line in text.splitlines() if line.startswith("[ERROR]")]
    past = [line for line in said if PAST_THE_END.search(line)]
    if past:  # CANN checks no block's extent: a copy or a kernel would read (or write) what lies beyond
        return "the example reaches past its allocation: " + past[0][8:200]
    failed = [line.strip() for line in text.splitlines() if "ERROR" in line or "failed" in line]
    return f"exit {status}: " + (said or failed or ["(no message)"])[0][:200]


def _values(series: list[Series], launches: list[Launch], missing: list[str]) -> tuple[bool, str]:
    if not launches:
        return False, "nothing launched" + (f" (missing operator: {', '.join(missing)})" if missing else "")
    candidates = []  # (launch, output, reference rounded or None, device's values)
    unreferenced = set()
    wrong: list[str] = []
    for launch in launches:
        function = REFERENCES.get(launch.op)
        results: dict[str, np.ndarray] = {}
        if launch.op in SAMPLES:  # a random operator: its output is its reference if it is a plausible sample
            for name, device in launch.outputs.items():
                failure = SAMPLES[launch.op](dict(launch.args), device)
                if failure:
                    wrong.append(f"aclnn{launch.op} {name}: {failure}")
                else:
                    results[name] = _float(device)
        elif function is None:
            unreferenced.add(launch.op)
        else:
            try:
                results = function(dict(launch.args))
            except Exception as error:  # a reference that cannot take this launch: say so
                unreferenced.add(f"{launch.op} ({type(error).__name__}: {error})")
        for name, device in launch.outputs.items():
            dtype = launch.dtypes.get(name, str(device.dtype))
            want = results.get(name)
            if want is not None:
                want = rounded(np.broadcast_to(want, device.shape), dtype) if device.dtype.kind in "fV" else want
            candidates.append((launch, name, want, device, dtype))
    notes: list[str] = []
    blind: list[str] = []  # series that check nothing
    checked = 0  # series that are outputs, checked
    for printed in series:
        n = len(printed.values)
        largest = max((c[3].size for c in candidates), default=0)
        if 0 < largest < n:  # the example prints past the end of its output (memory it does not own): the rest
            notes.append(f"{printed.label} prints {n} values of an output of {largest}")
            printed, n = Series(printed.label, printed.values[:largest], printed.texts[:largest]), largest
        fits = [c for c in candidates if c[3].size >= n]
        fits.sort(key=lambda c: c[3].size != n)
        hit = [c for c in fits if c[2] is not None and agrees(printed.values, np.ravel(c[2])[:n], c[4], printed.texts)]
        if hit:
            checked += 1
            continue
        bits = {as_bits(printed, c[2], c[4]) for c in fits if c[2] is not None} - {""}
        if "values" in bits:  # the example reads its output as another type: its bits still check the values
            notes.append(f"{printed.label} printed as another type's bits")
            checked += 1
            continue
        if bits:
            blind.append(f"{printed.label} prints its {bits.pop()} output's bits as another type, all below the "
                         "printed precision")  # fmt: skip
            continue
        if _is_input(printed, launches):  # the example shows an input too
            continue
        shorter = _input_prefix(printed, launches)
        if shorter:  # an input printed past its end: the host vector the example filled it from, and beyond
            notes.append(f"{printed.label} prints {n} values of an input of {shorter}")
            continue
        device = [c for c in fits if agrees(printed.values, np.ravel(c[3])[:n], c[4], printed.texts)]
        if device and device[0][2] is None:
            op = device[0][0].op
            failed = [u for u in unreferenced if u.startswith(f"{op} (")]
            return False, f"reference failed: aclnn{failed[0]}" if failed else f"no reference for aclnn{op}"
        if device:
            c = device[0]
            got, want = np.ravel(c[3])[:n], np.ravel(c[2])[:n]
            at = int(np.argmax(np.abs(got.astype(np.float64) - want)))
            wrong.append(f"aclnn{c[0].op} {c[1]}[{at}]: device {got[at]!r}, reference {want[at]!r}")
        else:
            wrong.append(f"{printed.label} printed {printed.values[:4]} matches no output of the launches")
    if wrong:
        return False, "wrong value: " + wrong[0]
    notes += [f"{b} (as on CANN)" for b in blind]
    if checked == 0:  # nothing printed is an output: the launches' outputs themselves against their references
        bad = [c for c in candidates if c[2] is not None and not agrees(c[3], c[2], c[4])]
        if unreferenced:
            return False, "prints no output values; no reference for " + ", ".join(sorted(unreferenced))
        if bad:
            return False, f"wrong value: aclnn{bad[0][0].op} {bad[0][1]} (the example prints no output values)"
        notes.append("prints no output values: its launches' outputs checked")
    return True, "; ".join(notes)


def _is_input(printed: Series, launches: list[Launch]) -> bool:
    n = len(printed.values)
    for launch in launches:
        for value in launch.args.values():
            for array in value if isinstance(value, list) else [value]:
                usable = isinstance(array, np.ndarray) and array.size >= n and array.dtype.kind in "fiub"
                if usable and agrees(printed.values, np.ravel(array)[:n].astype(np.float64), "float64", printed.texts):
                    return True
    return False


def _input_prefix(printed: Series, launches: list[Launch]) -> int:
    """The size of an input the series starts with when the series goes on past its end (0: none)."""
    for launch in launches:
        for value in launch.args.values():
            for array in value if isinstance(value, list) else [value]:
                if not isinstance(array, np.ndarray) or not 0 < array.size < len(printed.values):
                    continue
                head, size = printed.values[: array.size], array.size
                if array.dtype.kind in "fiub" and agrees(
                    np.array(head), np.ravel(array).astype(np.float64), "float64", printed.texts[:size]
                ):
                    return size
    return 0


def walk(logs: Path) -> Iterator[tuple[str, Path]]:
    for repo in REPOS:
        for directory in sorted((logs / repo).glob("*")) if (logs / repo).is_dir() else ():
            if (directory / "source").exists():
                yield repo, directory


def summary(verdicts: list[Verdict]) -> str:
    lines = ["| repository | examples | built | ran | matched |", "|---|---|---|---|---|"]
    for repo in REPOS:
        mine = [v for v in verdicts if v.repo == repo]
        if mine:
            counts = (len(mine), sum(v.built for v in mine), sum(v.ran for v in mine), sum(v.matched for v in mine))
            lines.append(f"| {repo} | " + " | ".join(str(c) for c in counts) + " |")
    total = (len(verdicts), *(sum(getattr(v, k) for v in verdicts) for k in ("built", "ran", "matched")))
    lines.append("| **total** | " + " | ".join(f"**{c}**" for c in total) + " |")
    return "\n".join(lines)


def reasons(verdicts: list[Verdict], top: int = 25) -> str:
    kinds = Counter(re.sub(r":.*", "", v.reason) for v in verdicts if v.reason)
    detail = Counter(v.reason for v in verdicts if v.reason)
    lines = ["| why not | examples |", "|---|---|", *(f"| {k} | {n} |" for k, n in kinds.most_common())]
    lines += ["", "| most frequent reasons | examples |", "|---|---|"]
    lines += [f"| {k.replace('|', '/')} | {n} |" for k, n in detail.most_common(top)]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logs", type=Path)
    parser.add_argument("--markdown", type=Path, help="write the counts and reasons here too")
    args = parser.parse_args(argv)
    have = implemented()
    verdicts = [judge(directory, repo, have) for repo, directory in walk(args.logs)]
    with (args.logs / "verdicts.tsv").open("w") as table:
        for v in verdicts:
            table.write(f"{v.repo}\t{v.example}\t{int(v.built)}\t{int(v.ran)}\t{int(v.matched)}\t{v.reason}\n")
    for v in verdicts:
        state = "matched" if v.matched else "ran" if v.ran else "built" if v.built else "failed"
        print(f"{state:8} {v.repo}/{v.example}  {v.reason}")
    text = summary(verdicts) + "\n\n" + reasons(verdicts)
    print("\n" + text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
