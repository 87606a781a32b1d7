"""The one config change: what a lint rule's fix, a recommendation and the writer all speak.

A ``Change`` says what to do to one key (set it, delete it, rename it, or change it by hand where
no writer edits), where the key is (file and line), why, on what evidence, who proposed it (a rule
code or a recommendation step), and whether it may be applied without asking
(``Applicability``, as ruff's fixes do):

- ``safe``: cannot change what Flink runs with (rename a deprecated key to the key that replaced
  it, delete a key the version no longer reads); ``lint --fix`` applies these.
- ``unsafe``: changes what Flink runs with; written only when the user asks for exactly that
  (``recommend --write``), never by ``lint --fix``.
- ``manual``: shown, never written (outside what the writer edits, or a choice only the user can make).

``target`` is ``config`` for a Flink option (a flink-conf.yaml / config.yaml key, a
FlinkDeployment's ``spec.flinkConfiguration`` key) and ``spec`` for a field of a FlinkDeployment's
spec, whose key is its dotted path from ``spec`` (``spec.taskManager.resource.memory``,
``spec.job.parallelism``); ``spec_path`` gives the path below ``spec``.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from flinktune.errors import WriteError
from flinktune.record import Record, store

ACTIONS: tuple[str, ...] = ("set", "delete", "rename", "manual")
TARGETS: tuple[str, ...] = ("config", "spec")


class Applicability(StrEnum):
    SAFE = "safe"
    UNSAFE = "unsafe"
    MANUAL = "manual"


class Change(Record):
    """One change to a config. ``rename`` keeps the value unless ``value`` is given; if ``new_key``
    is already set, the writer simply removes the old key (Flink lets the new key win anyway)."""

    __slots__ = _fields = ("action", "key", "value", "new_key", "applicability", "file", "line", "why",
                           "evidence", "proposed_by", "target")
    action: str  # set | delete | rename | manual
    key: str
    value: str | None  # set: the new value; rename: a new value, if any
    new_key: str | None  # rename: the new key; delete: the key already set that wins over this one, if any
    applicability: Applicability
    file: str | None
    line: int | None
    why: str
    evidence: tuple[str, ...]  # the measured or stated facts it rests on
    proposed_by: str  # the rule code (FTC003) or recommendation step (credits)
    target: str  # config (a Flink option) | spec (a FlinkDeployment field)

    def __init__(self, action: str, key: str, value: str | None = None, new_key: str | None = None,
                 applicability: Applicability = Applicability.UNSAFE, file: str | None = None,
                 line: int | None = None, why: str = "", evidence: tuple[str, ...] = (),
                 proposed_by: str = "", target: str = "config") -> None:
        store(self, (action, key, value, new_key, applicability, file, line, why, evidence, proposed_by,
                     target))
        self.__post_init__()

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise WriteError(f"unknown change action '{self.action}' (use set, delete, rename or manual)")
        if not self.key:
            raise WriteError("a change needs a key")
        if self.action == "set" and self.value is None:
            raise WriteError(f"set {self.key}: a value is required")
        if self.action == "rename" and (not self.new_key or self.new_key == self.key):
            raise WriteError(f"rename {self.key}: a different new_key is required")
        if self.target not in TARGETS or (self.target == "spec" and not self.key.startswith("spec.")):
            raise WriteError(f"{self.key}: target is config (a Flink option) or spec (a FlinkDeployment "
                             "field, written 'spec.<path>')")
        if self.action == "manual" and self.applicability is not Applicability.MANUAL:
            raise WriteError(f"{self.key}: a manual change is applied by hand (applicability manual)")

    @property
    def shown_key(self) -> str:
        """The key the config has after the change (the new key of a rename)."""
        return self.new_key if self.action == "rename" and self.new_key else self.key

    @property
    def spec_path(self) -> tuple[str, ...]:
        """A spec field's path below ``spec`` (``("job", "parallelism")``); () for a Flink option."""
        return tuple(self.key.split(".")[1:]) if self.target == "spec" else ()

    def describe(self) -> str:
        """What to do, in a few words: ``rename a to b``, ``delete a``, ``set a: v``."""
        if self.action == "rename":
            return f"rename {self.key} to {self.new_key}"
        if self.action == "delete":
            wins = f" ({self.new_key} is already set and wins)" if self.new_key else ""
            return f"delete {self.key}{wins}"
        if self.action == "manual":
            return f"by hand: {self.key}" + (f": {self.value}" if self.value is not None else "")
        return f"set {self.key}: {self.value}"

    def describe_done(self) -> str:
        """What was done: ``renamed a to b``, ``deleted a``, ``set a to v``."""
        if self.action == "rename":
            return f"renamed {self.key} to {self.new_key}"
        if self.action == "delete":
            return f"deleted {self.key}"
        return f"set {self.key} to {self.value}"


def writable(changes: Iterable[Change], *, unsafe: bool) -> list[Change]:
    """The changes a writer applies: the safe ones, the unsafe ones only when the user asked for
    changes that alter what Flink runs with (``unsafe``), the manual ones never."""
    allowed = (Applicability.SAFE, Applicability.UNSAFE) if unsafe else (Applicability.SAFE,)
    return [change for change in changes if change.applicability in allowed]
