"""Key-scope rules whose condition starts with ``key == "k"`` / ``key in [...]`` are skipped for
other keys (flinktune.rules.entry_plan.key_guard): a shortcut that must never change a finding."""

from __future__ import annotations

import pytest
from testkit import shared_dir

from flinktune.lint import LintOptions, lint_paths
from flinktune.rules import entry_plan, parse

CORPUS = shared_dir() / "corpus" / "flink-configs"


@pytest.mark.parametrize(("condition", "guard"), [
    ('key == "a.b"', {"a.b"}),
    ('key == "a" and value != null', {"a"}),
    ('key in ["a", "b"] and raw == "1" and line > 0', {"a", "b"}),
    ('value != null and key == "a"', None),        # not the first test: no shortcut
    ('key == "a" or key == "b"', None),
    ('key in ["a", 1]', None),                     # a non-string literal: leave it to the evaluator
    ('key == lower("A")', None),
    ('not (key == "a")', None),
])
def test_guard_extraction(condition: str, guard: set[str] | None) -> None:
    found = entry_plan.key_guard(parse(condition))
    assert (None if found is None else set(found)) == guard


@pytest.mark.skipif(not CORPUS.is_dir(), reason="config corpus not present")
def test_guards_change_no_finding_on_the_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    files = sorted(str(p) for p in CORPUS.iterdir() if p.suffix in (".yaml", ".yml"))
    with_guards = lint_paths(files, LintOptions())
    monkeypatch.setattr(entry_plan, "key_guard", lambda condition: None)
    monkeypatch.setattr(entry_plan, "KEY_PLANS", {})      # worked out again, without guards
    without = lint_paths(files, LintOptions())
    assert with_guards.findings == without.findings and with_guards.problems == without.problems
    assert len(with_guards.findings) > 100
