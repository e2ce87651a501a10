"""The whole aclmdlRI family: the 37 `aclmdlRI*` functions that the runtime's public `acl_rt.h` declares (listed
here from the modelri spec, cann-modelri.md, and its companion) are declared in the toolkit's headers, in the call
table (so REST, WebSocket and both clients: `tests/server/api/test_calls.py` drives each), implemented in C, and
the README says so."""

from __future__ import annotations

import re
from pathlib import Path

from client.capi import toolkit as tk
from client.capi.prototypes import read_table
from client.native import inventory
from proto.calltable import CALLS
from tests.daemons import ROOT

FAMILY = [
    "aclmdlRIAbort",
    "aclmdlRIAddCondTask",
    "aclmdlRIBindStream",
    "aclmdlRIBuildBegin",
    "aclmdlRIBuildEnd",
    "aclmdlRICaptureBegin",
    "aclmdlRICaptureEnd",
    "aclmdlRICaptureGetInfo",
    "aclmdlRICaptureTaskGrpBegin",
    "aclmdlRICaptureTaskGrpEnd",
    "aclmdlRICaptureTaskUpdateBegin",
    "aclmdlRICaptureTaskUpdateEnd",
    "aclmdlRICaptureThreadExchangeMode",
    "aclmdlRICaptureToModelRIBegin",
    "aclmdlRICondHandleCreate",
    "aclmdlRICondHandleGetCondPtr",
    "aclmdlRIDebugJsonPrint",
    "aclmdlRIDebugPrint",
    "aclmdlRIDestroy",
    "aclmdlRIDestroyRegisterCallback",
    "aclmdlRIDestroyUnregisterCallback",
    "aclmdlRIEndTask",
    "aclmdlRIExecute",
    "aclmdlRIExecuteAsync",
    "aclmdlRIGetId",
    "aclmdlRIGetName",
    "aclmdlRIGetStreams",
    "aclmdlRIGetTasksByStream",
    "aclmdlRIKernelTaskGetAttribute",
    "aclmdlRISetName",
    "aclmdlRITaskDisable",
    "aclmdlRITaskGetParams",
    "aclmdlRITaskGetSeqId",
    "aclmdlRITaskGetType",
    "aclmdlRITaskSetParams",
    "aclmdlRIUnbindStream",
    "aclmdlRIUpdate",
]


def test_the_list_is_the_spec_list() -> None:
    assert len(FAMILY) == len(set(FAMILY)) == 37


def test_the_call_table_has_the_family_and_no_other_aclmdlri_function() -> None:
    assert {name for name in CALLS if name.startswith("aclmdlRI")} == set(FAMILY)


def test_every_function_is_declared_and_implemented_in_c(toolkit: Path) -> None:
    include = toolkit / "include"
    declared = {p.name for p in read_table(include, [*tk.ENTRY_HEADERS, *tk.operator_headers(include)]).prototypes}
    assert {name for name in declared if name.startswith("aclmdlRI")} == set(FAMILY)
    assert [name for name in FAMILY if not inventory.is_implemented(name)] == []


def test_the_readme_counts_37_of_37() -> None:
    readme = (ROOT / "README.md").read_text()
    assert re.search(r"the whole aclmdlRI family: 37 of 37 functions", readme)
