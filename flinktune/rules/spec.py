"""A validated rule file as plain frozen values (no pydantic here).

``schema.RuleFile`` (pydantic) validates a rule file once; the loader turns the validated data
into these dataclasses and caches that data by content hash, so a lint run whose rule files are
unchanged never imports pydantic.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from flinktune.rules.lang import _Frozen, _set
from flinktune.versions import FlinkVersion

# These records are slotted _Frozen classes (immutable, compared and hashed by their fields, like
# frozen dataclasses) because every lint defines them at start-up, where a dataclass costs ~35
# times more (its methods are generated with exec()).

SCOPES: tuple[str, ...] = ("config", "key", "issue", "vertex", "subtask", "process")
DOCUMENT_SCOPES: tuple[str, ...] = ("config", "key", "issue")
ITEM_SCOPES: tuple[str, ...] = ("vertex", "subtask")

# Names each scope binds (besides let-names). Documented in docs/rules.md.
SCOPE_BINDINGS: dict[str, tuple[str, ...]] = {
    "config": ("version", "env", "doc"),
    "key": ("version", "env", "doc", "key", "value", "raw", "line"),
    "issue": ("version", "env", "doc", "issue"),
    "vertex": ("version", "env", "item"),
    "subtask": ("version", "env", "item"),
    # a JobManager or TaskManager of the deployment (flinktune.deployment: docker-compose, Kubernetes)
    "process": ("version", "env", "process"),
}


class FixSpec(_Frozen):
    """A rule's fix as data: the YAML form of a ``flinktune.change.Change``. ``key``, ``value`` and
    ``new_key`` are templates; ``applicability`` (safe | unsafe | manual) is the rule's to state."""

    __slots__ = ("action", "applicability", "key", "new_key", "value")
    _fields = ("action", "key", "value", "new_key", "applicability")
    action: str                  # set | delete | rename
    key: str
    value: str | None
    new_key: str | None
    applicability: str           # safe (lint --fix applies it) | unsafe | manual

    def __init__(self, action: str, key: str, value: str | None = None, new_key: str | None = None,
                 applicability: str = "unsafe") -> None:
        _set(self, "action", action)
        _set(self, "key", key)
        _set(self, "value", value)
        _set(self, "new_key", new_key)
        _set(self, "applicability", applicability)

    @property
    def safe(self) -> bool:
        return self.applicability == "safe"

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"action": self.action, "key": self.key}
        if self.value is not None:
            data["value"] = self.value
        if self.new_key is not None:
            data["new_key"] = self.new_key
        data["safe"] = self.safe              # kept for readers of the older output
        data["applicability"] = self.applicability
        return data


def fix_applicability(data: Mapping[str, Any]) -> str:
    """A validated fix's applicability: as stated, else ``safe: true`` (its older spelling), else unsafe."""
    return str(data.get("applicability") or ("safe" if data.get("safe") else "unsafe"))


_NEW_DICT: Any = object()    # default of Example.env: a new empty dict each time


class Example(_Frozen):
    """One input a rule must (fail) or must not (pass) report on."""

    __slots__ = ("config", "count", "deployment", "env", "file", "format", "items", "message", "metrics",
                 "note", "version")
    _fields = ("version", "config", "format", "file", "env", "items", "message", "count", "note",
               "deployment", "metrics")
    version: str
    config: Mapping[str, Any] | str | None
    format: str | None
    file: str | None
    env: Mapping[str, Any]
    items: tuple[Mapping[str, Any], ...] | None
    message: str | None
    count: int | None
    note: str | None
    deployment: Mapping[str, str] | None    # deployment files (name -> text) beside the config
    metrics: Mapping[str, Any] | None       # analysis rules: the metrics the items are diagnosed from

    def __init__(self, version: str = "1.20", config: Mapping[str, Any] | str | None = None,
                 format: str | None = None, file: str | None = None,
                 env: Mapping[str, Any] = _NEW_DICT, items: tuple[Mapping[str, Any], ...] | None = None,
                 message: str | None = None, count: int | None = None, note: str | None = None,
                 deployment: Mapping[str, str] | None = None,
                 metrics: Mapping[str, Any] | None = None) -> None:
        _set(self, "version", version)
        _set(self, "config", config)
        _set(self, "format", format)
        _set(self, "file", file)
        _set(self, "env", {} if env is _NEW_DICT else env)
        _set(self, "items", items)
        _set(self, "message", message)
        _set(self, "count", count)
        _set(self, "note", note)
        _set(self, "deployment", deployment)
        _set(self, "metrics", metrics)


class RuleSpec(_Frozen):
    """A rule file after validation."""

    _fields = ("code", "name", "severity", "scope", "versions", "condition", "let", "message", "why", "at",
               "fix", "references", "pass_examples", "fail_examples", "related", "needs_deployment")
    __slots__ = _fields
    code: str
    name: str
    severity: str
    scope: str
    versions: str
    condition: str
    let: Mapping[str, str]
    message: str
    why: str
    at: str | None
    fix: FixSpec | None
    references: tuple[str, ...]
    pass_examples: tuple[Example, ...]
    fail_examples: tuple[Example, ...]
    related: str | None          # expression: the other files and lines the finding rests on
    needs_deployment: bool       # the finding rests on the deployment: info (saying so) when none was seen

    def __init__(self, code: str, name: str, severity: str, scope: str, versions: str, condition: str,
                 let: Mapping[str, str], message: str, why: str, at: str | None, fix: FixSpec | None,
                 references: tuple[str, ...], pass_examples: tuple[Example, ...],
                 fail_examples: tuple[Example, ...], related: str | None = None,
                 needs_deployment: bool = False) -> None:
        values = (code, name, severity, scope, versions, condition, let, message, why, at, fix, references,
                  pass_examples, fail_examples, related, needs_deployment)
        for field_name, value in zip(self._fields, values, strict=True):
            _set(self, field_name, value)


def _example(data: Mapping[str, Any]) -> Example:
    items = data.get("items")
    return Example(
        version=data.get("version", "1.20"), config=data.get("config"), format=data.get("format"),
        file=data.get("file"), env=dict(data.get("env") or {}),
        items=None if items is None else tuple(items), message=data.get("message"),
        count=data.get("count"), note=data.get("note"),
        deployment=None if data.get("deployment") is None else dict(data["deployment"]),
        metrics=data.get("metrics"),
    )


def spec_from_data(data: Mapping[str, Any]) -> RuleSpec:
    """Build a RuleSpec from validated data (``RuleFile.model_dump(by_alias=True)``)."""
    fix = data.get("fix")
    examples = data["examples"]
    return RuleSpec(
        code=data["code"], name=data["name"], severity=data["severity"], scope=data["scope"],
        versions=data.get("versions", "*"), condition=data["condition"], let=dict(data.get("let") or {}),
        message=data["message"], why=data["why"], at=data.get("at"),
        fix=None if fix is None else FixSpec(fix["action"], fix["key"], fix.get("value"), fix.get("new_key"),
                                             fix_applicability(fix)),
        references=tuple(data["references"]),
        pass_examples=tuple(_example(e) for e in examples["pass"]),
        fail_examples=tuple(_example(e) for e in examples["fail"]),
        related=data.get("related"),
        needs_deployment=bool(data.get("needs_deployment", False)),
    )


# ---------------------------------------------------------------------------------------------
# Version ranges: ">=1.13,<2.0", "==2.0", "*"

_CLAUSE = re.compile(r"^(>=|<=|==|!=|>|<)?\s*([0-9]+)(?:\.([0-9]+))?$")


class VersionRange(_Frozen):
    """A rule's ``versions:`` text, parsed into comparisons."""

    __slots__ = ("clauses", "text")
    _fields = ("text", "clauses")
    text: str
    clauses: tuple[tuple[str, FlinkVersion], ...]

    def __init__(self, text: str, clauses: tuple[tuple[str, FlinkVersion], ...]) -> None:
        _set(self, "text", text)
        _set(self, "clauses", clauses)

    @classmethod
    def parse(cls, text: str) -> VersionRange:
        stripped = text.strip()
        if stripped in ("", "*", "all"):
            return cls(text, ())
        clauses: list[tuple[str, FlinkVersion]] = []
        for part in stripped.split(","):
            match = _CLAUSE.match(part.strip())
            if match is None:
                raise ValueError(f"version clause '{part.strip()}' is not like '>=1.17' or '<2.0'")
            op = match.group(1) or "=="
            version = FlinkVersion(int(match.group(2)), int(match.group(3) or 0))
            clauses.append((op, version))
        return cls(text, tuple(clauses))

    def contains(self, version: FlinkVersion) -> bool:
        for op, bound in self.clauses:
            ok = {
                ">=": version >= bound, "<=": version <= bound, ">": version > bound,
                "<": version < bound, "==": version == bound, "!=": version != bound,
            }[op]
            if not ok:
                return False
        return True
