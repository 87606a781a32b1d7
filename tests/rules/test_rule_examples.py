"""The one generic rule test: every rule's own pass/fail examples, bundled rules and user folders.

Extra rule folders (a team's own rules) run through the same loader when listed in the
environment variable FLINKTUNE_RULE_DIRS (os.pathsep-separated); `flinktune rules check DIR`
does the same from the command line.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flinktune.rules import load_rules
from flinktune.rules.examples import run_example

EXTRA_DIRS = tuple(Path(p) for p in os.environ.get("FLINKTUNE_RULE_DIRS", "").split(os.pathsep) if p)
RULESET = load_rules(extra_dirs=EXTRA_DIRS)

CASES = [
    pytest.param(rule, kind, index, example, id=f"{rule.code}-{kind}{index}")
    for rule in RULESET
    for kind, examples in (("pass", rule.pass_examples), ("fail", rule.fail_examples))
    for index, example in enumerate(examples)
]


def test_every_rule_has_both_kinds_of_example() -> None:
    assert len(RULESET) >= 25
    for rule in RULESET:
        assert rule.pass_examples and rule.fail_examples, rule.code


@pytest.mark.parametrize(("rule", "kind", "index", "example"), CASES)
def test_rule_example(rule, kind, index, example) -> None:  # type: ignore[no-untyped-def]
    metrics_items = None
    if example.metrics is not None:
        # The analysis (numpy) diagnoses the items; imported only for the examples that need it.
        from flinktune.analysis.example_metrics import items_from_metrics as metrics_items
    result = run_example(rule, example, kind, index, metrics_items)
    assert result.ok, f"{rule.source}: {result.label()}: {result.detail}"
    if kind == "fail":
        for finding in result.findings:
            # Messages carry actual values: every placeholder was filled in.
            assert "{" not in finding.message and "null" not in finding.message, finding.message
            assert finding.location.file
            assert finding.references == rule.references
