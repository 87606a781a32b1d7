"""Inline directives in comments.

``# flinktune: disable=FTN001,FTC002 reason="..."`` on a line silences those codes on that line;
``# flinktune: disable-file=FTN001`` anywhere silences them in the whole file;
``# flinktune: flink-version=1.17`` says which Flink the file targets.
A code may be a prefix (``FTN``), as in ``select``/``ignore``. A suppression that silences
nothing is itself reported as FTL001 (a built-in lint finding, not a rule file), so stale
suppressions do not pile up.

Comments: in ``flink-conf.yaml`` Flink drops everything after ``#`` on a line, and in YAML
files comments are comments, so a directive never changes what Flink reads.
"""

from __future__ import annotations

import re

from flinktune.findings import Finding, Location, Severity
from flinktune.record import Record, set_field

UNUSED_SUPPRESSION_CODE = "FTL001"
UNUSED_SUPPRESSION_NAME = "unused-suppression"

_DIRECTIVE = re.compile(
    r"#.*?\bflinktune:\s*(?P<kind>disable-file|disable|flink-version)\s*=\s*"
    r"(?P<value>[A-Za-z0-9_.]+(?:\s*,\s*[A-Za-z0-9_.]+)*)"
    r"(?:\s+reason\s*=\s*\"(?P<reason>[^\"]*)\")?"
)


class Suppression(Record):
    """One ``# flinktune: disable=...`` comment."""

    __slots__ = _fields = ("line", "codes", "file_wide", "reason")
    line: int
    codes: tuple[str, ...]
    file_wide: bool
    reason: str | None

    def __init__(self, line: int, codes: tuple[str, ...], file_wide: bool, reason: str | None = None) -> None:
        set_field(self, "line", line)
        set_field(self, "codes", codes)
        set_field(self, "file_wide", file_wide)
        set_field(self, "reason", reason)


class Directives(Record):
    """The flinktune comments of one file: suppressions and a pinned Flink version."""

    __slots__ = _fields = ("suppressions", "flink_version", "flink_version_line")
    suppressions: tuple[Suppression, ...]
    flink_version: str | None
    flink_version_line: int | None

    def __init__(self, suppressions: tuple[Suppression, ...] = (), flink_version: str | None = None,
                 flink_version_line: int | None = None) -> None:
        set_field(self, "suppressions", suppressions)
        set_field(self, "flink_version", flink_version)
        set_field(self, "flink_version_line", flink_version_line)


def parse_directives(text: str) -> Directives:
    suppressions: list[Suppression] = []
    version: str | None = None
    version_line: int | None = None
    if "flinktune:" not in text:
        return Directives()
    for number, line in enumerate(text.splitlines(), start=1):
        if "flinktune:" not in line:
            continue
        match = _DIRECTIVE.search(line)
        if match is None:
            continue
        value = match.group("value").strip()
        if match.group("kind") == "flink-version":
            version, version_line = value, number
            continue
        codes = tuple(c.strip().upper() for c in value.split(",") if c.strip())
        if codes:
            suppressions.append(Suppression(number, codes, match.group("kind") == "disable-file",
                                            match.group("reason")))
    return Directives(tuple(suppressions), version, version_line)


def _matches(code: str, pattern: str) -> bool:
    return code == pattern or code.startswith(pattern)


class SuppressionOutcome(Record):
    """Findings split by the file's suppressions, plus the unused-suppression findings."""

    __slots__ = _fields = ("kept", "suppressed", "unused")
    kept: tuple[Finding, ...]
    suppressed: tuple[Finding, ...]
    unused: tuple[Finding, ...]          # FTL001 findings

    def __init__(self, kept: tuple[Finding, ...], suppressed: tuple[Finding, ...],
                 unused: tuple[Finding, ...]) -> None:
        set_field(self, "kept", kept)
        set_field(self, "suppressed", suppressed)
        set_field(self, "unused", unused)


def apply_suppressions(findings: list[Finding] | tuple[Finding, ...], directives: Directives,
                       file: str) -> SuppressionOutcome:
    """Split ``findings`` of one file into kept and suppressed; report unused suppressions."""
    used: set[tuple[int, str]] = set()
    kept: list[Finding] = []
    suppressed: list[Finding] = []
    for finding in findings:
        hit = None
        for sup in directives.suppressions:
            if not sup.file_wide and sup.line != finding.location.line:
                continue
            for pattern in sup.codes:
                if _matches(finding.code, pattern):
                    hit = (sup.line, pattern)
                    break
            if hit:
                break
        if hit is None:
            kept.append(finding)
        else:
            used.add(hit)
            suppressed.append(finding)
    unused = []
    for sup in directives.suppressions:
        for pattern in sup.codes:
            if (sup.line, pattern) in used:
                continue
            scope = "in this file" if sup.file_wide else "on this line"
            unused.append(Finding(
                code=UNUSED_SUPPRESSION_CODE,
                name=UNUSED_SUPPRESSION_NAME,
                severity=Severity.WARNING,
                message=f"suppression of {pattern} matches no finding {scope}; remove it",
                location=Location(file, sup.line, None),
                why="A suppression that silences nothing hides the next real finding of that code "
                    "on this line without anyone noticing.",
            ))
    return SuppressionOutcome(tuple(kept), tuple(suppressed), tuple(unused))
