"""docs/rules.md is generated from the rule files and must be kept up to date."""

from __future__ import annotations

from pathlib import Path

from flinktune.rules import load_rules
from flinktune.rules.describe import render_markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def test_rule_catalog_is_up_to_date() -> None:
    expected = render_markdown(load_rules())
    assert DOC.read_text(encoding="utf-8") == expected, (
        "docs/rules.md is out of date: run `flinktune rules list --format markdown > docs/rules.md`")


def test_catalog_lists_every_rule_and_function() -> None:
    text = DOC.read_text(encoding="utf-8")
    for rule in load_rules():
        assert f"### {rule.code} {rule.name}" in text
    assert "`buffers_required`" in text and "`config`" in text
