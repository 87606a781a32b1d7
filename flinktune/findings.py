"""Frozen values every engine returns and every reporter renders."""

from __future__ import annotations

from enum import StrEnum

from flinktune.change import Change
from flinktune.record import Record, store


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]

    def at_least(self, other: Severity) -> bool:
        return self.rank >= other.rank


class Location(Record):
    __slots__ = _fields = ("file", "line", "key")
    file: str
    line: int | None
    key: str | None

    def __init__(self, file: str, line: int | None = None, key: str | None = None) -> None:
        store(self, (file, line, key))

    def __str__(self) -> str:
        if self.line is None:
            return self.file
        return f"{self.file}:{self.line}"


class Related(Record):
    """Another place a finding rests on: the compose service, volume mount or image line it used."""

    __slots__ = _fields = ("file", "line", "note")
    file: str
    line: int | None
    note: str

    def __init__(self, file: str, line: int | None = None, note: str = "") -> None:
        store(self, (file, line, note))

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where} ({self.note})" if self.note else where


class Finding(Record):
    __slots__ = _fields = ("code", "name", "severity", "message", "location", "why", "fix", "references",
                           "evidence", "confidence", "related")
    code: str
    name: str
    severity: Severity
    message: str
    location: Location
    why: str
    fix: Change | None  # the one config change (flinktune.change), with its applicability
    references: tuple[str, ...]
    evidence: tuple[tuple[str, str], ...]
    confidence: float | None
    related: tuple[Related, ...]

    def __init__(self, code: str, name: str, severity: Severity, message: str, location: Location,
                 why: str = "", fix: Change | None = None, references: tuple[str, ...] = (),
                 evidence: tuple[tuple[str, str], ...] = (), confidence: float | None = None,
                 related: tuple[Related, ...] = ()) -> None:
        store(self, (code, name, severity, message, location, why, fix, references, evidence, confidence,
                     related))

    def sort_key(self) -> tuple[str, int, str]:
        return (self.location.file, self.location.line or 0, self.code)

    def as_dict(self) -> dict[str, object]:
        """The JSON shape of a finding that every machine-readable report shares."""
        fix = self.fix
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "message": self.message,
            "file": self.location.file,
            "line": self.location.line,
            "key": self.location.key,
            "why": self.why,
            "fix": None if fix is None else {
                "action": fix.action, "key": fix.key, "value": fix.value, "new_key": fix.new_key,
                # what --fix does with it: safe is applied, unsafe and manual are only shown
                "applicability": fix.applicability.value,
            },
            "references": list(self.references),
            "evidence": dict(self.evidence),
            "confidence": self.confidence,
            "related": [{"file": r.file, "line": r.line, "note": r.note} for r in self.related],
        }
