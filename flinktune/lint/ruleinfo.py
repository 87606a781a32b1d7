"""Describe the loaded rules for reporters, and the lint command's own built-in codes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flinktune.findings import Severity
from flinktune.lint.model import RuleInfo
from flinktune.lint.suppress import UNUSED_SUPPRESSION_CODE, UNUSED_SUPPRESSION_NAME


def _rules(ruleset: Any) -> Iterable[Any]:
    rules = getattr(ruleset, "rules", ruleset)
    if isinstance(rules, dict):
        return list(rules.values())
    return list(rules)


def _first_line(text: Any) -> str:
    return " ".join(str(text or "").split())


# The scopes a config document is checked in; vertex/subtask rules belong to `analyze`.
LINT_SCOPES = ("config", "key", "issue")


def rule_infos(ruleset: Any, scopes: tuple[str, ...] | None = LINT_SCOPES) -> tuple[RuleInfo, ...]:
    infos = []
    for rule in _rules(ruleset):
        if scopes is not None and getattr(rule, "scope", None) not in (None, *scopes):
            continue
        references = tuple(getattr(rule, "references", ()) or ())
        help_uri = next((str(r) for r in references if str(r).startswith(("http://", "https://"))), None)
        infos.append(RuleInfo(
            code=str(rule.code),
            name=str(rule.name),
            severity=Severity(getattr(rule.severity, "value", rule.severity)),
            summary=_first_line(getattr(rule, "summary", None) or getattr(rule, "why", "")),
            help_uri=help_uri,
        ))
    return tuple(sorted(infos, key=lambda i: i.code))


def builtin_rule_infos() -> tuple[RuleInfo, ...]:
    return (
        RuleInfo(
            code=UNUSED_SUPPRESSION_CODE,
            name=UNUSED_SUPPRESSION_NAME,
            severity=Severity.WARNING,
            summary="An inline '# flinktune: disable=CODE' comment that silences no finding.",
        ),
    )
