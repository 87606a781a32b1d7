"""The rules engine: rule files as data, a closed condition language, findings out.

Public API (lint, analyze and recommend build on it):

- ``load_rules(extra_dirs=()) -> RuleSet``: bundled rules plus ``--rules DIR`` folders; every
  problem in every file is raised together as one ``RuleError(problems=...)``.
- ``evaluate_document(ruleset, document, version, env=None) -> list[Finding]``: config, key
  and issue scopes over one config document.
- ``evaluate_items(ruleset, scope, items, version, env, file) -> list[Finding]``: vertex or
  subtask scopes over measured facts.
"""

from __future__ import annotations

from typing import Any

from flinktune.rules.engine import evaluate_document, evaluate_items
from flinktune.rules.lang import Condition, parse
from flinktune.rules.loader import load_rules
from flinktune.rules.ruleset import Rule, RuleSet
from flinktune.rules.spec import SCOPES, RuleSpec

__all__ = [
    "SCOPES",
    "Condition",
    "ExampleResult",
    "Rule",
    "RuleSet",
    "RuleSpec",
    "evaluate_document",
    "evaluate_items",
    "load_rules",
    "parse",
    "run_examples",
]


def __getattr__(name: str) -> Any:
    # The examples runner (``rules check``, the rule tests) loads on first use, not on every lint.
    if name in ("ExampleResult", "run_examples"):
        from flinktune.rules import examples

        return getattr(examples, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
