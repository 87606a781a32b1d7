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


# The scopes lint runs: a config document's, and each JobManager / TaskManager process of the deployment
# around it; vertex/subtask rules belong to `analyze`.
LINT_SCOPES = ("config", "key", "issue", "process")


def _in_scopes(rule: Any, scopes: tuple[str, ...] | None) -> bool:
    return scopes is None or getattr(rule, "scope", None) in (None, *scopes)


def rule_infos(ruleset: Any, scopes: tuple[str, ...] | None = LINT_SCOPES) -> tuple[RuleInfo, ...]:
    infos = []
    for rule in _rules(ruleset):
        if not _in_scopes(rule, scopes):
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


def lint_codes(ruleset: Any) -> frozenset[str]:
    """Every code a lint with ``ruleset`` can report: its lint-scope rules and the built-in codes."""
    codes = {str(rule.code) for rule in _rules(ruleset) if _in_scopes(rule, LINT_SCOPES)}
    return frozenset(codes | {info.code for info in builtin_rule_infos()})
