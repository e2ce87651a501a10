"""libc_sec.so: the secure C functions (securec.h) a C program links, with their documented codes and the state
of the destination after each refusal."""

from __future__ import annotations

from pathlib import Path

from tests.capi.conftest import PROGRAMS, compile_program, run_program

EINVAL, ERANGE = 22, 34
EINVAL_AND_RESET, ERANGE_AND_RESET, EOVERLAP_AND_RESET = EINVAL | 128, ERANGE | 128, 54 | 128


def test_secure_functions_check_and_reset(toolkit: Path, tmp_path: Path) -> None:
    binary = compile_program(toolkit, PROGRAMS / "securec.cpp", tmp_path, "-lc_sec")
    done = run_program(toolkit, binary, None)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "memset 0 ax",
        f"memset-over {ERANGE_AND_RESET} b",
        f"memset-zero-max {ERANGE}",
        f"memset-null {EINVAL}",
        "memcpy 0 abc",
        f"memcpy-over {ERANGE_AND_RESET} 0",
        f"memcpy-null-src {EINVAL_AND_RESET} 0",
        f"memcpy-overlap {EOVERLAP_AND_RESET} 0",
        "memmove-overlap 0 aabcdfg",
        "strcpy 0 hello",
        f"strcpy-over {ERANGE_AND_RESET} []",
        "strncpy 0 abc",
        "strcat 0 abcde",
        f"strcat-over {ERANGE_AND_RESET} []",
        "sprintf 5 42-ok",
        "sprintf-over -1 []",
        "snprintf-trunc -1 abc",
    ]


def test_the_library_is_plain_c(toolkit: Path) -> None:
    """libc_sec.so is no alias of the runtime: it needs no Python behind it."""
    library = toolkit / "lib64" / "libc_sec.so"
    assert library.is_file() and not library.is_symlink()
    assert b"Py_Initialize" not in library.read_bytes()
