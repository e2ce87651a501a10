"""`vnpu docs operators [--check]`: docs/operators.md's generated section, written from the operator tables.

The section (`proto.aclnn.inventory`: each repository's declared, ruled and implemented operators, and the
implemented ones by area) stands between its markers; nothing else of the page is touched. `--check` writes
nothing and exits 1 when the page differs from what the tables give, so the page cannot drift from the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

from proto.aclnn import inventory

PAGE = inventory.PAGE


def main(check: bool = False, page: Path = PAGE) -> int:
    if not page.exists():
        print(f"vnpu docs needs the source tree: {page} is missing", file=sys.stderr)
        return 2
    text = page.read_text(encoding="utf-8")
    try:
        wanted = inventory.rewritten(text)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    if wanted == text:
        print(f"{page}: the operator inventory is current")
        return 0
    if check:
        print(f"{page}: the operator inventory differs from the tables: run `vnpu docs operators`", file=sys.stderr)
        return 1
    page.write_text(wanted, encoding="utf-8")
    print(f"{page}: the operator inventory written from the tables")
    return 0
