"""Frozen values the lint run takes and returns; reporters render a ``LintResult``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from flinktune.findings import Finding, Severity
from flinktune.versions import FlinkVersion


@dataclass(frozen=True)
class InputProblem:
    """An input that could not be linted at all (unreadable, binary, invalid YAML, ...)."""

    file: str
    message: str
    line: int | None = None

    def one_line(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {' '.join(self.message.split())}"


@dataclass(frozen=True)
class RuleInfo:
    """What a reporter needs to describe a rule (SARIF ``rules``, text hints)."""

    code: str
    name: str
    severity: Severity
    summary: str = ""
    help_uri: str | None = None
    fix_safe: bool = False


@dataclass(frozen=True)
class AppliedFix:
    """One edit ``--fix`` wrote to a file."""

    file: str
    line: int | None
    code: str
    description: str


@dataclass(frozen=True)
class FileVersion:
    """Which Flink version a document was checked against, and why."""

    file: str
    version: FlinkVersion
    source: str          # flag | file | project | config.yaml | default
    document: str | None = None


@dataclass(frozen=True)
class LintOptions:
    """How to lint: target version, selection, rule folders, baseline, fixing."""

    flink_version: FlinkVersion | None = None        # --flink-version (wins over everything)
    project_flink_version: FlinkVersion | None = None  # from the project config
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity_overrides: tuple[tuple[str, Severity], ...] = ()
    rule_dirs: tuple[Path, ...] = ()
    bundled_rules: bool = True                        # False: only the --rules folders
    baseline: Path | None = None
    follow_symlinks: bool = False
    env: tuple[tuple[str, int], ...] = ()             # --parallelism / --slots / --taskmanagers
    fix: bool = False
    max_file_bytes: int = 8 * 1024 * 1024          # the config reader's own cap for YAML files


@dataclass(frozen=True)
class LintResult:
    """Everything a reporter needs about one lint run."""

    findings: tuple[Finding, ...]                     # what is reported, sorted
    problems: tuple[InputProblem, ...] = ()           # inputs that could not be linted
    files: tuple[str, ...] = ()                       # every file read successfully
    rules: tuple[RuleInfo, ...] = ()
    versions: tuple[FileVersion, ...] = ()
    suppressed: int = 0                               # hidden by inline suppressions
    baselined: int = 0                                # hidden by the baseline
    fixes: tuple[AppliedFix, ...] = ()
    all_findings: tuple[Finding, ...] = field(default=(), repr=False)  # before the baseline

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Severity}
        for finding in self.findings:
            out[finding.severity.value] += 1
        return out

    def fails(self, fail_on: Severity) -> bool:
        return any(f.severity.at_least(fail_on) for f in self.findings)

    def exit_code(self, fail_on: Severity) -> int:
        """0 clean, 1 findings at or above ``fail_on``, 2 an input could not be linted."""
        if self.problems:
            return 2
        return 1 if self.fails(fail_on) else 0

    def rule(self, code: str) -> RuleInfo | None:
        for info in self.rules:
            if info.code == code:
                return info
        return None
