"""Frozen values the lint run takes and returns; reporters render a ``LintResult``.

Records (flinktune.record), not dataclasses: the same frozen behaviour, without defining
six dataclasses on every lint's start-up.
"""

from __future__ import annotations

from pathlib import Path

from flinktune.change import Change
from flinktune.findings import Finding, Severity
from flinktune.record import Record, set_field
from flinktune.versions import FlinkVersion


def _store(record: Record, values: tuple[object, ...]) -> None:
    for name, value in zip(record._fields, values, strict=True):
        set_field(record, name, value)


class InputProblem(Record):
    """An input that could not be linted at all (unreadable, binary, invalid YAML, ...)."""

    __slots__ = _fields = ("file", "message", "line")
    file: str
    message: str
    line: int | None

    def __init__(self, file: str, message: str, line: int | None = None) -> None:
        _store(self, (file, message, line))

    def one_line(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {' '.join(self.message.split())}"


class RuleInfo(Record):
    """What a reporter needs to describe a rule (SARIF ``rules``, text hints)."""

    __slots__ = _fields = ("code", "name", "severity", "summary", "help_uri")
    code: str
    name: str
    severity: Severity
    summary: str
    help_uri: str | None

    def __init__(self, code: str, name: str, severity: Severity, summary: str = "",
                 help_uri: str | None = None) -> None:
        _store(self, (code, name, severity, summary, help_uri))


class FileVersion(Record):
    """Which Flink version a document was checked against, and why."""

    __slots__ = _fields = ("file", "version", "source", "document", "detail", "held")
    file: str
    version: FlinkVersion
    source: str          # flag | comment | file | project | inferred | config.yaml | default
    document: str | None
    detail: str          # what in the file said it ("spec.flinkVersion", "image flink:1.18", the keys)
    # Deprecations not reported as findings at a version nobody named (runner._held_deprecations): (line,
    # key, new key or None, the first release they hold for), in file order.
    held: tuple[tuple[int | None, str, str | None, FlinkVersion], ...]

    def __init__(self, file: str, version: FlinkVersion, source: str, document: str | None = None,
                 detail: str = "",
                 held: tuple[tuple[int | None, str, str | None, FlinkVersion], ...] = ()) -> None:
        _store(self, (file, version, source, document, detail, held))


class LintOptions(Record):
    """How to lint: target version, selection, rule folders, baseline, fixing."""

    __slots__ = _fields = ("flink_version", "project_flink_version", "select", "ignore", "severity_overrides",
                           "rule_dirs", "bundled_rules", "baseline", "follow_symlinks", "env", "fix",
                           "max_file_bytes", "completeness", "plan", "plan_source", "jobs")
    flink_version: FlinkVersion | None               # --flink-version (wins over everything)
    project_flink_version: FlinkVersion | None       # from the project config
    select: tuple[str, ...]
    ignore: tuple[str, ...]
    severity_overrides: tuple[tuple[str, Severity], ...]
    rule_dirs: tuple[Path, ...]
    bundled_rules: bool                              # False: only the --rules folders
    baseline: Path | None
    follow_symlinks: bool
    env: tuple[tuple[str, int], ...]                 # --parallelism / --slots / --taskmanagers
    fix: bool
    max_file_bytes: int                              # the config reader's own cap for YAML files
    completeness: str | None                         # project: complete | overlay (None: from each file)
    plan: dict[str, object] | None                   # --plan: the job graph (/jobs/:jobid/plan JSON)
    plan_source: str | None                          # its file
    jobs: int | None                                 # --jobs: processes that lint files (None: the CPUs)

    def __init__(self, flink_version: FlinkVersion | None = None,
                 project_flink_version: FlinkVersion | None = None, select: tuple[str, ...] = (),
                 ignore: tuple[str, ...] = (),
                 severity_overrides: tuple[tuple[str, Severity], ...] = (), rule_dirs: tuple[Path, ...] = (),
                 bundled_rules: bool = True, baseline: Path | None = None, follow_symlinks: bool = False,
                 env: tuple[tuple[str, int], ...] = (), fix: bool = False,
                 max_file_bytes: int = 8 * 1024 * 1024, completeness: str | None = None,
                 plan: dict[str, object] | None = None, plan_source: str | None = None,
                 jobs: int | None = None) -> None:
        _store(self, (flink_version, project_flink_version, select, ignore, severity_overrides, rule_dirs,
                      bundled_rules, baseline, follow_symlinks, env, fix, max_file_bytes, completeness, plan,
                      plan_source, jobs))


class LintResult(Record):
    """Everything a reporter needs about one lint run."""

    __slots__ = _fields = ("findings", "problems", "files", "rules", "versions", "suppressed", "baselined",
                           "fixes", "all_findings", "not_fixed", "fixed_at")
    findings: tuple[Finding, ...]                     # what is reported, sorted
    problems: tuple[InputProblem, ...]                # inputs that could not be linted
    files: tuple[str, ...]                            # every file read successfully
    rules: tuple[RuleInfo, ...]
    versions: tuple[FileVersion, ...]
    suppressed: int                                   # hidden by inline suppressions
    baselined: int                                    # hidden by the baseline
    fixes: tuple[Change, ...]                         # what --fix wrote (file, line, proposed_by: the code)
    all_findings: tuple[Finding, ...]                 # before the baseline (left out of repr)
    not_fixed: tuple[InputProblem, ...]               # safe fixes --fix could not write (edit by hand)
    fixed_at: tuple[FileVersion, ...]                 # the versions the fixed files were fixed for

    def __init__(self, findings: tuple[Finding, ...], problems: tuple[InputProblem, ...] = (),
                 files: tuple[str, ...] = (), rules: tuple[RuleInfo, ...] = (),
                 versions: tuple[FileVersion, ...] = (), suppressed: int = 0, baselined: int = 0,
                 fixes: tuple[Change, ...] = (), all_findings: tuple[Finding, ...] = (),
                 not_fixed: tuple[InputProblem, ...] = (), fixed_at: tuple[FileVersion, ...] = ()) -> None:
        _store(self, (findings, problems, files, rules, versions, suppressed, baselined, fixes, all_findings,
                      not_fixed, fixed_at))

    def __repr__(self) -> str:
        shown = [name for name in self._fields if name != "all_findings"]
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"LintResult({inner})"

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
