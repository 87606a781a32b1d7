"""Compiled rules and the set the engine runs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cached_property

from flinktune.findings import Severity
from flinktune.record import Record, store
from flinktune.rules.lang import Condition
from flinktune.rules.spec import Example, FixSpec, RuleSpec, VersionRange
from flinktune.rules.template import Template
from flinktune.versions import FlinkVersion


class Rule(Record):
    """One rule file, validated and compiled (condition, let-expressions and templates parsed)."""

    _fields = ("spec", "source", "condition", "lets", "message", "at", "fix_templates",
               "version_range", "bundled", "related")
    spec: RuleSpec
    source: str  # where it was loaded from (for messages)
    condition: Condition
    lets: tuple[tuple[str, Condition], ...]
    message: Template
    at: Template | None
    fix_templates: tuple[Template, Template | None, Template | None] | None  # key, value, new_key
    version_range: VersionRange
    bundled: bool
    related: Condition | None  # the other places the finding rests on (a list)

    def __init__(self, spec: RuleSpec, source: str, condition: Condition,
                 lets: tuple[tuple[str, Condition], ...], message: Template, at: Template | None,
                 fix_templates: tuple[Template, Template | None, Template | None] | None,
                 version_range: VersionRange, bundled: bool = False,
                 related: Condition | None = None) -> None:
        store(self, (spec, source, condition, lets, message, at, fix_templates, version_range, bundled,
                     related))

    @property
    def code(self) -> str:
        return self.spec.code

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def severity(self) -> Severity:
        return Severity(self.spec.severity)

    @property
    def scope(self) -> str:
        return self.spec.scope

    @property
    def versions(self) -> str:
        return self.spec.versions

    @property
    def why(self) -> str:
        return self.spec.why

    @property
    def fix(self) -> FixSpec | None:
        return self.spec.fix

    @property
    def references(self) -> tuple[str, ...]:
        return tuple(self.spec.references)

    @property
    def summary(self) -> str:
        """The first sentence of ``why``: a one-line description for listings and SARIF."""
        text = " ".join(self.spec.why.split())
        for stop in (". ", "; "):
            if stop in text:
                return text.split(stop, 1)[0].rstrip(".") + "."
        return text

    @property
    def pass_examples(self) -> tuple[Example, ...]:
        return self.spec.pass_examples

    @property
    def fail_examples(self) -> tuple[Example, ...]:
        return self.spec.fail_examples

    def applies_to(self, version: FlinkVersion) -> bool:
        return self.version_range.contains(version)

    @cached_property
    def let_map(self) -> dict[str, Condition]:
        """``lets`` as a mapping, built once (the engine looks let-names up on every evaluation)."""
        return dict(self.lets)


class RuleSet(Record):
    """The rules a run uses, sorted by code."""

    _fields = ("rules",)
    rules: tuple[Rule, ...]

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        store(self, (rules,))

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def get(self, code: str) -> Rule | None:
        wanted = code.strip().upper()
        for rule in self.rules:
            if rule.code == wanted:
                return rule
        return None

    def codes(self) -> tuple[str, ...]:
        return tuple(rule.code for rule in self.rules)

    def subset(self, keep: Callable[[Rule], bool]) -> RuleSet:
        """The rules ``keep`` accepts (select/ignore by code prefix is built on this)."""
        return RuleSet(tuple(rule for rule in self.rules if keep(rule)))

    def for_scope(self, scope: str, version: FlinkVersion) -> tuple[Rule, ...]:
        # Asked for every document of a run: computed once per scope and version (a cache beside the
        # frozen value, not part of it).
        cache: dict[tuple[str, FlinkVersion], tuple[Rule, ...]] = self.__dict__.setdefault("_scopes", {})
        found = cache.get((scope, version))
        if found is None:
            found = cache[(scope, version)] = tuple(rule for rule in self.rules
                                                    if rule.scope == scope and rule.applies_to(version))
        return found
