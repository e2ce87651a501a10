"""One declaration per operator name, chosen among the candidates of all four repositories.

CANN installs every repository's public headers into one directory (`include/aclnnop`) and links all
operators into the opapi libraries, so a name can exist once. The rules, in order:

1. A generated header is not installed when a hand-written header of the same file name exists (the
   hand-written one is installed over it), and a generated function is not public when a hand-written
   header declares the same name: `ACLNNTYPE aclnn aclnn_inner` pairs in ops-transformer's mc2 register
   OpDefs whose hand-written op_api already declares the public function. An experimental generated
   header is the exception: its repository's custom package installs it in its own include directory, so
   an operator that only it declares stays, marked `vendor` (the experimental aclnnPow, whose file name
   include/aclnnop's aclnn_pow.h of PowTensorScalar, ... takes).
2. Among the remaining declarations of a name, the lowest `Candidate.rank` wins: hand-written before
   generated, main tree before `experimental/`, the header named after the operator's own directory
   first, then the path; across repositories, math, nn, transformer, cv in that order.

Every dropped declaration is reported (`Resolution.decisions`), saying whether its prototype differed. The
custom packages' headers that differ from include/aclnnop's are `Resolution.vendor` (`proto.aclnn.catalog.vendor`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace

from proto.aclnn.catalog import REPOS, CatalogOp, CFunction, VendorHeader
from proto.aclnn.catalog.assemble import Candidate, RepoScan
from proto.aclnn.catalog.vendor import vendor_headers


@dataclass
class Resolution:
    ops: dict[str, CatalogOp] = field(default_factory=dict)
    functions: list[CFunction] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    vendor: list[VendorHeader] = field(default_factory=list)


def resolve(scans: list[RepoScan]) -> Resolution:
    result = Resolution()
    candidates = [candidate for scan in scans for candidate in scan.candidates]
    written = {c.op.header for c in candidates if c.op.source == "header"}
    written_experimental = {
        (c.op.repo, c.op.header) for c in candidates if c.op.source == "header" and c.op.experimental
    }
    declared = {c.op.c_name for c in candidates if c.op.source == "header"}
    by_name: dict[str, list[Candidate]] = defaultdict(list)
    for index, candidate in enumerate(candidates):
        op = candidate.op
        kept = op.experimental and op.c_name not in declared and (op.repo, op.header) not in written_experimental
        if op.source == "opdef" and op.header in written and kept:
            candidates[index] = candidate = replace(candidate, op=replace(op, vendor=True))
            result.decisions.append(
                f"generated {op.c_name} ({op.repo}: {candidate.path}) kept, declared by its custom package's "
                f"{op.header} only: include/aclnnop/{op.header} is a hand-written header of other operators"
            )
            by_name[op.name].append(candidate)
            continue
        if op.source == "opdef" and (op.header in written or op.c_name in declared):
            clash = "header file" if op.header in written else "function"
            result.decisions.append(
                f"generated {op.c_name} ({op.repo}: {candidate.path}) dropped: a hand-written {clash} "
                f"{op.header if clash == 'header file' else op.c_name} takes its place"
            )
            continue
        by_name[op.name].append(candidate)
    for name in sorted(by_name):
        ranked = sorted(by_name[name], key=lambda c: (c.rank, REPOS.index(c.op.repo)))
        winner = ranked[0]
        result.ops[name] = winner.op
        for loser in ranked[1:]:
            same = "the same prototype" if _prototype(loser.op) == _prototype(winner.op) else "a different prototype"
            result.decisions.append(
                f"{winner.op.c_name}: {winner.op.repo} {winner.path} kept; {loser.op.repo} {loser.path} "
                f"({same}) dropped"
            )
    result.functions = sorted(
        (function for scan in scans for function in scan.functions), key=lambda f: (f.name, REPOS.index(f.repo))
    )
    experimental = [candidate for candidate in candidates if candidate.op.experimental]
    result.vendor, notes = vendor_headers(experimental, result.ops.values(), result.functions)
    result.decisions.extend(notes)
    for header in result.vendor:
        names = ", ".join(op.c_name for op in header.ops)
        result.decisions.append(
            f"custom_{header.repo} {header.header} ({header.directory}: {names}) differs from include/"
        )
    return result


def _prototype(op: CatalogOp) -> tuple[tuple[str, str], ...]:
    return tuple((param.ctype, param.direction) for param in op.params) + tuple(
        (param.ctype, "launch") for param in op.launch
    )
