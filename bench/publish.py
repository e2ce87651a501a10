"""Put the table of a run into docs/benchmarks.md: `python -m bench.publish [bench/results.json]`.

Replaces what stands between the `<!-- bench:table -->` and `<!-- /bench:table -->` markers of the page with the
run's machine, date and table; nothing else of the page is touched.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "benchmarks.md"
START, END = "<!-- bench:table -->", "<!-- /bench:table -->"


def block(result: dict[str, object]) -> str:
    return (
        f"{START}\n"
        f"A full run ({result['seconds']:.0f} s, {result['date']}) on {result['machine_description']}:\n\n"
        f"{result['table']}\n"
        f"{END}"
    )


def main(argv: list[str], page: Path = PAGE) -> int:
    source = Path(argv[0]) if argv else ROOT / "bench" / "results.json"
    result = json.loads(source.read_text())
    if result.get("mode") != "full":
        print(f"{source} is from a {result.get('mode')} run: {page.name} shows full runs only", file=sys.stderr)
        return 1
    text = page.read_text()
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        print(f"{page} has no {START} ... {END} block", file=sys.stderr)
        return 1
    page.write_text(text[:start] + block(result) + text[end + len(END) :])
    print(f"{page}: the table of {source} ({result['date']})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
