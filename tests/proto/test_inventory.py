"""docs/operators.md's generated section (the tiers' counts per repository, the implemented operators) is what the
tables say: `vnpu docs operators` regenerates it."""

from __future__ import annotations

from proto.aclnn import OPS, RULES
from proto.aclnn.inventory import PAGE, counts, rewritten


def test_the_page_lists_what_the_tables_hold() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert rewritten(text) == text, "docs/operators.md is stale: run `vnpu docs operators`"


def test_the_tiers_nest() -> None:
    table = counts()
    for repo, c in table.items():
        assert c["declared"] >= c["ruled"] >= c["implemented"], repo
    assert sum(c["declared"] for c in table.values()) == 1213
    assert sum(c["implemented"] for c in table.values()) == len(RULES) >= 150
    assert all(OPS[name].implemented for name in RULES)


def test_the_readme_and_the_toolkit_page_give_the_tables_counts() -> None:
    """The README's operators row and docs/c-toolkit.md say how many operators are declared and implemented: the
    numbers the tables hold (they are written by hand, so a test keeps them true)."""
    import re

    root = PAGE.parents[1]
    table = counts()
    declared = sum(c["declared"] for c in table.values())
    implemented = sum(c["implemented"] for c in table.values())
    readme = (root / "README.md").read_text(encoding="utf-8")
    found = re.search(r"declared \(([\d,]+), \[docs/operator-catalog\.md\][^)]*\)\), ([\d,]+) with kernels", readme)
    assert found is not None, "README.md's operators row moved: update this test"
    assert [int(n.replace(",", "")) for n in found.groups()] == [declared, implemented]
    toolkit = (root / "docs" / "c-toolkit.md").read_text(encoding="utf-8")
    assert f"{declared} operators, {implemented} of them implemented" in toolkit
