"""What vnpu's `ascendc.cmake` runs instead of the Ascend C compiler: the host half of a kernel source, kept.

    python -m client.capi.ascendc stub OUT.cpp SOURCE...      # ascendc_library(): host wrappers + launch stubs
    python -m client.capi.ascendc fatbin OUT.o SOURCE...      # ascendc_fatbin_library(): a vnpu fatbin

Understood: each `extern "C" __global__ __aicore__ void Name(params) { ... }` kernel (its parameters, a pointer
such as `__gm__ T *` or `GM_ADDR` taken as `const void *`; its body, the device code, is never compiled) and each
top-level function whose body holds a `Name<<<blocks, l2ctrl, stream>>>(args...)` launch, kept verbatim with the
launch rewritten into a stub that packs the arguments, each at an 8-byte boundary, and calls
vnpuLaunchKernel("Name", ...); the stub of a kernel whose body prints (`printf`, `PRINTF`, `DumpTensor`) then
synchronizes the stream (unless it captures), so the lines are out when the launch returns, as Ascend C's own launch
code does (it waits for the stream and prints the kernel's dump workspace: the runtime's AdumpPrintWorkSpace). The
source's `#include` lines are kept except `kernel_operator.h`. Anything else at top level (classes, namespaces,
constants, device templates) is dropped: a host wrapper that needs one of them, or that sits in a namespace, does
not build.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from proto import fatbin

KERNEL = re.compile(r'extern\s+"C"\s+__global__\s+__aicore__\s+void\s+(\w+)\s*\(([^)]*)\)\s*\{')
INCLUDE = re.compile(r"^\s*#\s*include\s*([<\"]([^>\"]+)[>\"])", re.M)
LAUNCH = re.compile(r"\b(\w+)\s*<<<(.*?)>>>\s*\((\s*\))?")  # group 3: no arguments
PRINTS = re.compile(r"\b(printf|PRINTF|DumpTensor|DumpAccChkPoint)\s*\(")  # a kernel body that prints
FUNCTION = re.compile(r"^[A-Za-z_][\w:<>\*&\s]*?\b(\w+)\s*\([^;{}]*\)\s*\{", re.M)


@dataclass(frozen=True)
class KernelDecl:
    name: str
    params: tuple[tuple[str, str], ...]  # (C type, name)
    prints: bool = False  # its body prints: the launch waits for it


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _block_end(text: str, brace: int) -> int:
    """The index after the `}` that closes the `{` at `brace`."""
    depth = 0
    for i in range(brace, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i + 1
    raise ValueError("unbalanced braces")


def _param(text: str) -> tuple[str, str]:
    """(C type, name) of a kernel parameter; a pointer (`__gm__ half*`, `GM_ADDR`) is a `const void *`."""
    text = text.replace("GM_ADDR", "uint8_t *").strip()
    match = re.fullmatch(r"(.*?[\s\*&])(\w+)", text)
    if match is None:
        raise ValueError(f"cannot read the kernel parameter {text!r}")
    ctype = " ".join(match.group(1).split())
    return ("const void *" if "*" in ctype else ctype), match.group(2)


def kernels(text: str) -> list[KernelDecl]:
    found = []
    for match in KERNEL.finditer(text):
        params = [p for p in match.group(2).split(",") if p.strip() and p.strip() != "void"]
        body = text[match.end() - 1 : _block_end(text, match.end() - 1)]
        found.append(KernelDecl(match.group(1), tuple(_param(p) for p in params), bool(PRINTS.search(body))))
    return found


def host_functions(text: str) -> list[str]:
    """Top-level functions that launch a kernel with <<<>>>, verbatim."""
    out: list[str] = []
    position = 0
    while True:
        match = FUNCTION.search(text, position)
        if match is None:
            return out
        end = _block_end(text, match.end() - 1)
        body = text[match.start() : end]
        if "<<<" in body and not KERNEL.search(body):
            out.append(body)
        position = end


def stub(decl: KernelDecl) -> str:
    params = "".join(f", {ctype} {name}" for ctype, name in decl.params)
    packs = "".join(
        f'    static_assert(sizeof({name}) <= 8, "an argument of {decl.name} is wider than 8 bytes");\n'
        f"    std::memcpy(args + {8 * i}, &{name}, sizeof({name}));\n"
        for i, (_, name) in enumerate(decl.params)
    )
    size = 8 * len(decl.params)
    launch = f'vnpuLaunchKernel("{decl.name}", numBlocks, stream, args, {size})'
    if decl.prints:  # wait, so that what it printed is out when the launch returns
        wait = (
            f"    uint32_t ret = {launch};\n"
            "    aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;\n"
            "    aclmdlRI model = nullptr;\n"  # a captured launch prints when a replay is synchronized
            "    aclError sync = ret == 0 && aclmdlRICaptureGetInfo(stream, &status, &model) == ACL_SUCCESS &&\n"
            "        status == ACL_MODEL_RI_CAPTURE_STATUS_NONE ? aclrtSynchronizeStream(stream) : ACL_SUCCESS;\n"
            f'    if (sync != ACL_SUCCESS) std::printf("vnpu: {decl.name} printed; synchronizing its stream '
            'failed with %d\\n", sync);\n'
            "    return ret;\n"
        )
    else:
        wait = f"    return {launch};\n"
    return (
        f"static inline uint32_t vnpu_launch_{decl.name}(uint32_t numBlocks, void *, void *stream{params})\n{{\n"
        f"    unsigned char args[{max(size, 8)}] = {{0}};\n{packs}{wait}}}\n"
    )


def host_source(sources: list[Path]) -> str:
    parts = ["// generated by vnpu's ascendc_library(): the host half of the kernel sources\n"]
    headers = ("<cstdint>", "<cstdio>", "<cstring>", '"acl/acl.h"', '"vnpu/vnpu.h"')
    parts.append("".join(f"#include {header}\n" for header in headers))
    for source in sources:
        text = _strip_comments(source.read_text())
        parts.append(f"\n// {source.name}\n")
        parts += [f"#include {spelled}\n" for spelled, header in INCLUDE.findall(text) if header != "kernel_operator.h"]
        decls = kernels(text)
        parts += [stub(d) for d in decls]
        launch = partial(_launch, {d.name for d in decls})
        parts += [LAUNCH.sub(launch, function) + "\n" for function in host_functions(text)]
    return "".join(parts)


def _launch(names: set[str], match: re.Match[str]) -> str:
    name, config, no_args = match.groups()
    if name not in names:
        raise ValueError(f"{name}<<<...>>> launches a kernel this source does not define")
    return f"vnpu_launch_{name}({config})" if no_args else f"vnpu_launch_{name}({config}, "


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[0] not in ("stub", "fatbin"):
        print(__doc__, file=sys.stderr)
        return 2
    out, sources = Path(argv[1]), [Path(s) for s in argv[2:]]
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        if argv[0] == "stub":
            out.write_text(host_source(sources))
        else:
            out.write_bytes(fatbin.dumps(d.name for s in sources for d in kernels(_strip_comments(s.read_text()))))
    except (OSError, ValueError) as error:
        print(f"vnpu ascendc: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
