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
