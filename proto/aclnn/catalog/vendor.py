"""The custom packages' headers that differ from include/aclnnop's: what `-I opp/vendors/custom_<repo>/op_api/include`
puts first for a program built against a repository's experimental operators.

A repository's `build.sh --experimental` installs each experimental operator's header (hand-written, or generated
from its OpDef) into its custom package, `opp/vendors/custom_<repo>/op_api/include/`, not into the built-in
include/aclnnop; an experimental example is built with that directory first (and, through the `aclnnop` link
`scripts/build_example.sh` makes there, for `aclnnop/...` includes too). Most of those headers declare what the
file of the same name in include/aclnnop declares. The others are kept as `VendorHeader`s, each declaring its
operators as the experimental tree spells them:

- its name is not in include/aclnnop (`aclnn_log_add_exp.h`: the main tree's aclnnLogAddExp is in
  `aclnn_logaddexp.h`; `aclnn_c_io_u.h`, `aclnn_mish_backward_v2.h`, ...);
- include/aclnnop's file of that name declares other operators (`aclnn_pow.h`: the main tree's PowTensorScalar,
  PowScalarTensor, InplacePowTensorScalar; the experimental one the generated aclnnPow, which only it declares:
  the catalog keeps it as an operator marked `vendor`);
- or other prototypes for the same names (`aclnn_celu.h`: `double alpha` generated from the OpDef, the main
  tree's `const aclScalar *alpha`; `aclnn_arange.h`: `const aclTensor *out` for `aclTensor *out`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from proto.aclnn.catalog import REPOS, CatalogOp, CFunction, VendorHeader
from proto.aclnn.catalog.assemble import Candidate

Declaration = tuple[str, tuple[tuple[str, str], ...], bool]  # a function's name, parameters, deprecation


def vendor_headers(
    experimental: Iterable[Candidate], ops: Iterable[CatalogOp], functions: Iterable[CFunction]
) -> tuple[list[VendorHeader], list[str]]:
    """The custom package headers of the `experimental` candidates (winners and losers of their names) that differ
    from include/aclnnop's files made of `ops` (those not `vendor`) and `functions`, and what was left out.

    Several experimental directories of one repository may write a header of the same name (ops-nn's softplus and
    softplus_v2 both `aclnn_softplus.h`): the custom package holds whichever was installed last. When they do not
    declare the same, neither is kept (include/aclnnop's stays what their examples find, as before)."""
    functions = list(functions)
    installed: dict[str, set[Declaration]] = defaultdict(set)
    for op in ops:
        if not op.vendor:
            installed[op.header] |= _declared(op)
    for function in functions:
        installed[function.header].add(_function(function))
    groups: dict[tuple[str, str], dict[str, list[Candidate]]] = defaultdict(lambda: defaultdict(list))
    for candidate in experimental:
        groups[(candidate.op.repo, candidate.op.header)][candidate.op.directory].append(candidate)
    found, notes = [], []
    for (repo, header), directories in sorted(groups.items(), key=lambda item: (REPOS.index(item[0][0]), item[0][1])):
        variants = {directory: _variant(repo, header, directory, members, functions) for directory, members in
                    sorted(directories.items())}  # fmt: skip
        distinct = {frozenset(declared) for _, declared in variants.values()}
        if len(distinct) > 1:
            notes.append(
                f"custom_{repo} {header}: experimental {', '.join(sorted(variants))} declare it differently; "
                f"neither is kept (include/aclnnop/{header} stays)"
            )
            continue
        vendor, declared = next(iter(variants.values()))
        if declared != installed.get(header, set()):
            found.append(vendor)
    return found, notes


def _variant(
    repo: str, header: str, directory: str, members: list[Candidate], functions: list[CFunction]
) -> tuple[VendorHeader, set[Declaration]]:
    """The header one experimental directory writes: the best-ranked declaration of each name, its functions."""
    best: dict[str, Candidate] = {}
    for candidate in sorted(members, key=lambda c: c.rank):
        best.setdefault(candidate.op.name, candidate)
    chosen = tuple(best[name].op for name in sorted(best))
    own = tuple(f for f in functions if f.repo == repo and f.header == header and f.directory == directory)
    declared = set().union(*(_declared(op) for op in chosen), (_function(f) for f in own))
    return VendorHeader(header, repo, directory, chosen, own), declared


def _declared(op: CatalogOp) -> set[Declaration]:
    params = tuple((p.name, p.ctype) for p in op.params)
    launch = tuple((p.name, p.ctype) for p in op.launch)
    return {(op.ws_name, params, op.deprecated), (op.c_name, launch, op.deprecated)}


def _function(function: CFunction) -> Declaration:
    return (function.name, tuple((p.name, p.ctype) for p in function.params), False)
