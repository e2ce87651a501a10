"""The catalog candidates of one repository checkout: hand-written headers first, then OpDef operators.

A candidate is a CatalogOp plus what decides between two declarations of the same name (`Candidate.rank`).
The repository-wide and cross-repository choices are made in `proto.aclnn.catalog.resolve`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from proto.aclnn.catalog import (
    STANDARD_LAUNCH,
    WORKSPACE_TAIL,
    CatalogOp,
    CatalogParam,
    CFunction,
    Direction,
)
from proto.aclnn.catalog.cheader import DeclaredFunction, read_header
from proto.aclnn.catalog.dfx import Phase1Io, read_phase1_io
from proto.aclnn.catalog.docpages import directory_pages, page_directions
from proto.aclnn.catalog.generated import GeneratedFunction, GeneratedParam, GenerationError, generate
from proto.aclnn.catalog.opdef import OpDef, OpDefParam, read_opdefs
from proto.aclnn.catalog.overrides import OPDEF_OVERRIDES, with_directions
from proto.aclnn.catalog.params import header_params, kind_of
from proto.aclnn.catalog.sources import (
    aclnn_opdefs,
    implementation_files,
    op_directory,
    public_headers,
    read_source,
)

WS_SUFFIX = "GetWorkspaceSize"
INNER_PREFIX = "aclnnInner"  # the private functions of `aclnn_inner` OpDefs, declared for the op_api code
ROLE_DIRECTIONS: dict[str, Direction] = {"input": "in", "inplace": "inplace", "attr": "in", "output": "out"}


@dataclass(frozen=True)
class Candidate:
    op: CatalogOp
    path: str  # the header or OpDef file, relative to the repository

    @property
    def rank(self) -> tuple[int, int, int, str]:
        """Lower wins: hand-written before generated, main before experimental, the op's own directory first."""
        own = self.op.directory.rsplit("/", 1)[-1] == self.op.header.removeprefix("aclnn_").removesuffix(".h")
        return (self.op.source != "header", self.op.experimental, not own, self.path)


@dataclass
class RepoScan:
    """What one repository declares, before duplicates are resolved."""

    repo: str
    candidates: list[Candidate] = field(default_factory=list)
    functions: list[CFunction] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def scan_repo(repo: str, root: Path) -> RepoScan:
    scan = RepoScan(repo)
    io: dict[str, list[tuple[str, Phase1Io]]] = {}
    for path in implementation_files(root):
        for name, found in read_phase1_io(read_source(path)).items():
            io.setdefault(name, []).append((op_directory(path, root), found))
    for path in public_headers(root):
        _scan_header(scan, root, path, io)
    for source in aclnn_opdefs(root):
        relative = source.path.relative_to(root).as_posix()
        opdefs = read_opdefs(source.path.read_text(errors="replace"))
        for opdef in opdefs:
            opdef = OPDEF_OVERRIDES.get(opdef.op_type, opdef)
            if not (opdef.inputs or opdef.outputs or opdef.attrs):
                scan.notes.append(f"{relative}: {opdef.op_type} declares no parameter the reader can follow")
                continue
            try:
                functions = generate(opdef)
            except GenerationError as error:
                scan.notes.append(f"{relative}: {opdef.op_type} not generated: {error}")
                continue
            for function in functions:
                op = _generated_op(repo, source.directory, opdef, function)
                scan.candidates.append(Candidate(op, relative))
    return scan


def _scan_header(scan: RepoScan, root: Path, path: Path, io: dict[str, list[tuple[str, Phase1Io]]]) -> None:
    relative = path.relative_to(root).as_posix()
    declared = {
        function.name: function
        for function in read_header(path.read_text(errors="replace"))
        if not function.name.startswith(INNER_PREFIX)
    }
    directory = op_directory(path, root)
    pages = directory_pages(root / directory)
    phases = {name.removesuffix(WS_SUFFIX) for name in declared if name.endswith(WS_SUFFIX)}
    for function in declared.values():
        c_name = function.name.removesuffix(WS_SUFFIX)
        if function.name.endswith(WS_SUFFIX):
            listed = _definition_io(io.get(c_name, []), directory, len(function.params))
            documented: dict[str, Direction] = {}
            names = [param.name for param in function.params[:-2]]
            for page in pages:
                documented = {**page_directions(page, c_name, names), **documented}
            op = _header_op(scan, relative, directory, function, declared.get(c_name), listed, documented)
            if op is not None:
                scan.candidates.append(Candidate(op, relative))
        elif function.name not in phases:
            params = function.params
            scan.functions.append(CFunction(function.name, function.result, params, path.name, scan.repo, directory))


def _header_op(
    scan: RepoScan,
    relative: str,
    directory: str,
    function: DeclaredFunction,
    launch: DeclaredFunction | None,
    io: Phase1Io | None,
    documented: dict[str, Direction],
) -> CatalogOp | None:
    c_name = function.name.removesuffix(WS_SUFFIX)
    tail = tuple(param.ctype for param in function.params[-2:])
    if tail != tuple(param.ctype for param in WORKSPACE_TAIL):
        scan.notes.append(f"{relative}: {function.name} does not end with (uint64_t *, aclOpExecutor **)")
        return None
    if launch is None:
        scan.notes.append(f"{relative}: {function.name} without {c_name} in the same header")
        return None
    prefix = "aclnn" if c_name.startswith("aclnn") else "acl"
    name = c_name.removeprefix(prefix)
    return CatalogOp(
        name=name,
        repo=scan.repo,
        directory=directory,
        header=Path(relative).name,
        source="header",
        params=with_directions(name, header_params(function.params[:-2], io, documented, name.startswith("Inplace"))),
        launch=STANDARD_LAUNCH if launch.params == STANDARD_LAUNCH else launch.params,
        prefix=prefix,
        deprecated=function.deprecated or launch.deprecated,
    )


def _definition_io(found: list[tuple[str, Phase1Io]], directory: str, count: int) -> Phase1Io | None:
    """The DFX lists of the definition that matches a header: same parameter count, own directory first."""
    matching = [(d != directory, d.startswith("experimental/"), d, io) for d, io in found if io.count == count]
    return min(matching, key=lambda m: m[:3])[3] if matching else None


def _generated_op(repo: str, directory: str, opdef: OpDef, function: GeneratedFunction) -> CatalogOp:
    """An OpDef operator. One that declares no output but is named `...Inplace` writes its first input."""
    params = [_generated_param(param) for param in function.params]
    if "Inplace" in opdef.op_type and all(param.direction == "in" for param in params) and params:
        params[0] = replace(params[0], direction="inplace")
    return CatalogOp(
        name=function.name,
        repo=repo,
        directory=directory,
        header=function.header,
        source="opdef",
        params=tuple(params),
        op_type=opdef.op_type,
    )


def _generated_param(param: GeneratedParam) -> CatalogParam:
    source = param.source
    if isinstance(source, OpDefParam):
        return CatalogParam(
            name=param.name,
            ctype=param.ctype,
            direction=ROLE_DIRECTIONS[param.role],
            kind=kind_of(param.ctype),
            optional=source.param_type == "OPTIONAL",
            dtypes=source.dtypes,
            formats=source.formats,
            any_dtype=source.dtypes_independent,
        )
    return CatalogParam(
        name=param.name,
        ctype=param.ctype,
        direction="in",
        kind=kind_of(param.ctype),
        optional=param.name.endswith("Optional"),
        default=source.default,
    )
