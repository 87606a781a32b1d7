"""``lint``: read every input, check it against the rules, and return what to report.

Never prints and never exits: a file that cannot be read becomes an ``InputProblem`` and the
other files are still linted; the CLI owns output and exit codes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from flinktune.change import Change
from flinktune.config.types import ConfigDocument
from flinktune.errors import FlinktuneError
from flinktune.findings import Finding
from flinktune.lint.model import FileVersion, InputProblem, LintOptions, LintResult, RuleInfo
from flinktune.lint.paths import expand_paths
from flinktune.lint.ruleinfo import builtin_rule_infos, rule_infos
from flinktune.lint.selection import is_selected, select_findings
from flinktune.lint.suppress import Directives, apply_suppressions, parse_directives


@dataclass
class _FileOutcome:
    """What linting one file produced, before the run's results are merged."""

    path: str
    problems: list[InputProblem] = field(default_factory=list)
    documents: list[tuple[ConfigDocument, list[Finding]]] = field(default_factory=list)
    versions: list[FileVersion] = field(default_factory=list)
    kept: list[Finding] = field(default_factory=list)        # selected, severity-overridden
    suppressed: set[int] = field(default_factory=set)       # id() of raw findings silenced
    suppressed_count: int = 0
    read_ok: bool = False


_COMMENT_MENTION = re.compile(rb"#[^\n]*?flink[\s:_-]*v?\d", re.IGNORECASE)


def _read_documents(path: str, options: LintOptions) -> tuple[list[ConfigDocument], str, list[InputProblem]]:
    """The file's documents and its text (for directives), or the problem that stopped reading."""
    from flinktune.config.reader import read_config_file

    try:
        size = os.stat(path).st_size
    except OSError as error:
        return [], "", [InputProblem(path, f"cannot read file: {error.strerror or error}")]
    if size > options.max_file_bytes:
        limit_mib = options.max_file_bytes / (1024 * 1024)
        message = (f"file is too large to be a Flink config ({size / (1024 * 1024):.1f} MiB; "
                   f"the limit is {limit_mib:g} MiB)")
        return [], "", [InputProblem(path, message)]
    try:
        documents = list(read_config_file(path))
    except FlinktuneError as error:
        return [], "", [InputProblem(error.file or path, error.message, error.line)]
    except OSError as error:
        return [], "", [InputProblem(path, f"cannot read file: {error.strerror or error}")]
    except Exception as error:
        # Never a traceback for one bad input; FLINKTUNE_DEBUG=1 shows it when hunting a reader bug.
        if os.environ.get("FLINKTUNE_DEBUG"):
            raise
        return [], "", [InputProblem(path, f"could not be read ({type(error).__name__}: {error})")]
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
        # The text matters only for directives and for a comment naming the Flink version.
        wanted = b"flinktune:" in raw or _COMMENT_MENTION.search(raw) is not None
        text = raw.decode("utf-8", errors="replace") if wanted else ""
    except OSError:
        text = ""
    return documents, text, []


def _env(options: LintOptions) -> dict[str, Any] | None:
    return dict(options.env) if options.env else None


def _situation(document: ConfigDocument, text: str, directives: Directives, options: LintOptions) -> Any:
    """The one resolved situation (flinktune.situation) the rules read: version, effective config with
    the operator's spec and legacy heap keys folded in, parallelism / slots / exchanges from the flags."""
    from flinktune.situation import Environment, resolve_situation

    given = {name: value for name, value in (options.env or ()) if value is not None}
    if options.flink_version is not None:
        given["flink-version"] = options.flink_version
    environment = Environment().with_values(given, "flag") if given else Environment()
    completeness = None
    if options.completeness is not None:
        from flinktune.situation import Sourced

        completeness = Sourced(options.completeness, "project", detail="completeness")
    return resolve_situation(document, text=text or None, environment=environment,
                             directive=directives.flink_version,
                             project_version=options.project_flink_version, completeness=completeness,
                             plan=options.plan, plan_source=options.plan_source)


# What a key means in one version (unknown, deprecated, removed, taken over) and whether the file
# format is read at all: these findings hang on the version alone.
_VERSION_CODES = frozenset({"FTC001", "FTC002", "FTC003", "FTC004", "FTC005", "FTC006", "FTC007", "FTC020"})


def _key_differs_from_default(key: str, version: Any) -> bool:
    """Whether ``key`` means something else (known, deprecated) in ``version`` than in the default
    version, i.e. whether a finding on it hangs on the inferred version."""
    from flinktune.config.catalog import load_catalog
    from flinktune.versions import DEFAULT_VERSION

    catalog = load_catalog()
    readers = catalog.versions_with(key)
    since, _ = catalog.deprecation(key)

    def status(v: Any) -> tuple[bool, bool]:
        return v in readers, since is not None and since <= v

    return status(version) != status(DEFAULT_VERSION)


def _note_inferred(finding: Finding, inferred: str, version: Any, ruleset: Any) -> Finding:
    """A finding that hangs on a version nobody stated says so, and how to state it."""
    rule = ruleset.get(finding.code) if hasattr(ruleset, "get") else None
    bounded = rule is not None and str(getattr(rule, "versions", "*")).strip() not in ("", "*")
    if not bounded:
        key = finding.location.key
        if finding.code not in _VERSION_CODES or (key and not _key_differs_from_default(key, version)):
            return finding
    from dataclasses import replace

    note = f" (inferred: {inferred}; state it with `# flinktune: flink-version=` or --flink-version)"
    return replace(finding, message=finding.message + note)


def _lint_file(path: str, ruleset: Any, options: LintOptions) -> _FileOutcome:
    from flinktune.rules import evaluate_document

    outcome = _FileOutcome(path)
    documents, text, problems = _read_documents(path, options)
    if problems:
        outcome.problems.extend(problems)
        return outcome
    outcome.read_ok = True
    directives = parse_directives(text) if text else Directives()
    raw_all: list[Finding] = []
    for document in documents:
        try:
            situation = _situation(document, text, directives, options)
        except FlinktuneError as error:
            outcome.problems.append(InputProblem(error.file or path, f"could not be checked: {error.message}",
                                                 error.line))
            continue
        version = situation.flink_version
        outcome.versions.append(FileVersion(path, version, situation.version.source, document.name,
                                            situation.version.detail or ""))
        try:
            found = list(evaluate_document(ruleset, document, version, env=_env(options),
                                           situation=situation))
        except FlinktuneError as error:
            outcome.problems.append(InputProblem(error.file or path, f"could not be checked: {error.message}",
                                                 error.line))
            found = []
        except Exception as error:
            # A bug in a rule or in flinktune, not in the input: still one line and the other files go
            # on; FLINKTUNE_DEBUG=1 shows the traceback.
            if os.environ.get("FLINKTUNE_DEBUG"):
                raise
            outcome.problems.append(InputProblem(
                path, f"internal error while checking ({type(error).__name__}: {error}); "
                      "please report it (FLINKTUNE_DEBUG=1 shows the traceback)"))
            found = []
        if situation.version.source == "inferred":
            found = [_note_inferred(finding, situation.version.detail, version, ruleset) for finding in found]
        outcome.documents.append((document, found))
        raw_all.extend(found)
    result = apply_suppressions(raw_all, directives, path)
    outcome.suppressed = {id(f) for f in result.suppressed}
    outcome.suppressed_count = len(result.suppressed)
    outcome.kept = select_findings(
        [*result.kept, *result.unused], options.select, options.ignore, options.severity_overrides,
    )
    return outcome


def _fix_file(outcome: _FileOutcome, options: LintOptions) -> tuple[list[Change], list[InputProblem]]:
    """Apply the safe changes (rename a deprecated key, delete a removed key) of one file; the
    changes written, each with the file and line it was on."""
    from dataclasses import replace

    from flinktune.change import writable
    from flinktune.config.textio import read_text_file
    from flinktune.config.writer import apply_changes, write_file_atomic

    applied: list[Change] = []
    plans: list[tuple[ConfigDocument, list[Change]]] = []
    for document, found in outcome.documents:
        changes: list[Change] = []
        seen: set[tuple[str, str]] = set()
        for finding in found:
            fix = finding.fix
            if (fix is None or not writable((fix,), unsafe=False) or id(finding) in outcome.suppressed
                    or not is_selected(finding.code, options.select, options.ignore)):
                continue
            if fix.action == "rename" and (not fix.new_key or document.get(fix.new_key) is not None):
                # The new key is already set and wins over the deprecated one in Flink
                # (Configuration reads the new key first), so the old line is dead: drop it.
                fix = replace(fix, action="delete", new_key=None)
            if (fix.action, fix.key) in seen:
                continue
            seen.add((fix.action, fix.key))
            entry = document.get(fix.key)
            fix = replace(fix, file=outcome.path, line=entry.line if entry else finding.location.line,
                          proposed_by=finding.code)
            changes.append(fix)
            applied.append(fix)
        if changes:
            plans.append((document, changes))
    if not plans:
        return [], []
    try:
        # Same encoding and byte-order mark as the original, so the fix changes only the edited lines.
        original = read_text_file(outcome.path)
        text = original.text
        # Later documents first, so the line numbers of earlier ones stay valid.
        plans.sort(key=lambda p: min((e.line for e in p[0].entries), default=0), reverse=True)
        for document, changes in plans:
            text = apply_changes(text, document, changes)
        write_file_atomic(outcome.path, original.encode(text), backup_suffix=".bak",
                          follow_symlinks=options.follow_symlinks)
    except FlinktuneError as error:
        return [], [InputProblem(error.file or outcome.path, f"not fixed: {error.message}", error.line)]
    except (OSError, UnicodeDecodeError) as error:
        return [], [InputProblem(outcome.path, f"not fixed: {error}")]
    return applied, []


def load_ruleset(options: LintOptions) -> Any:
    from flinktune.rules import load_rules

    return load_rules(extra_dirs=tuple(options.rule_dirs), bundled=options.bundled_rules)


def lint_paths(arguments: list[str] | tuple[str, ...], options: LintOptions | None = None, *,
               ruleset: Any = None) -> LintResult:
    """Lint files, folders and globs. Raises only for problems that stop the whole run
    (invalid rule files, an unreadable baseline); a bad input file is reported, not raised."""
    options = options or LintOptions()
    if ruleset is None:
        ruleset = load_ruleset(options)
    baseline = None
    if options.baseline is not None:
        from flinktune.lint.baseline import load_baseline

        baseline = load_baseline(options.baseline)
    expanded = expand_paths(list(arguments), follow_symlinks=options.follow_symlinks)
    problems: list[InputProblem] = list(expanded.problems)
    outcomes = [_lint_file(path, ruleset, options) for path in expanded.files]

    fixes: list[Change] = []
    if options.fix:
        for index, outcome in enumerate(outcomes):
            if not outcome.read_ok:
                continue
            applied, fix_problems = _fix_file(outcome, options)
            problems.extend(fix_problems)
            if applied:
                fixes.extend(applied)
                # Report what is left after the fix, with the new line numbers.
                outcomes[index] = _lint_file(outcome.path, ruleset, options)

    findings: list[Finding] = []
    versions: list[FileVersion] = []
    files: list[str] = []
    suppressed = 0
    for outcome in outcomes:
        problems.extend(outcome.problems)
        findings.extend(outcome.kept)
        versions.extend(outcome.versions)
        suppressed += outcome.suppressed_count
        if outcome.read_ok:
            files.append(outcome.path)
    findings.sort(key=Finding.sort_key)
    reported, known = (findings, []) if baseline is None else baseline.split(findings)
    infos: tuple[RuleInfo, ...] = (*rule_infos(ruleset), *builtin_rule_infos())
    return LintResult(
        findings=tuple(reported), problems=tuple(problems), files=tuple(files), rules=infos,
        versions=tuple(versions), suppressed=suppressed, baselined=len(known), fixes=tuple(fixes),
        all_findings=tuple(findings),
    )
