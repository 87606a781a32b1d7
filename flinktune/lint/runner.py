"""``lint``: read every input, check it against the rules, and return what to report.

Never prints and never exits: a file that cannot be read becomes an ``InputProblem`` and the
other files are still linted; the CLI owns output and exit codes.

Over 500 lines: lint's one pass over inputs, deployments, documents and suppressions, which share
the per-file outcome.
"""

from __future__ import annotations

import os
import re
from typing import Any

from flinktune.change import Change
from flinktune.config.types import ConfigDocument
from flinktune.errors import FlinktuneError, WriteError
from flinktune.findings import Finding
from flinktune.lint.model import FileVersion, InputProblem, LintOptions, LintResult, RuleInfo
from flinktune.lint.paths import expand_paths
from flinktune.lint.ruleinfo import builtin_rule_infos, rule_infos
from flinktune.lint.selection import is_selected, select_findings
from flinktune.lint.suppress import Directives, apply_suppressions, parse_directives
from flinktune.record import replace
from flinktune.versions import OLDER_THAN_SUPPORTED


class _FileOutcome:
    """What linting one file produced, before the run's results are merged."""

    path: str
    problems: list[InputProblem]
    documents: list[tuple[ConfigDocument, list[Finding]]]
    versions: list[FileVersion]
    kept: list[Finding]  # selected, severity-overridden
    suppressed: list[Finding]  # the raw findings silenced (objects of ``documents``: a worker's pickle
    #                            keeps them the same objects, where their id() would change)
    suppressed_count: int
    read_ok: bool

    def __init__(self, path: str, problems: list[InputProblem] | None = None, read_ok: bool = False) -> None:
        self.path = path
        self.problems = problems if problems is not None else []
        self.documents = []
        self.versions = []
        self.kept = []
        self.suppressed = []
        self.suppressed_count = 0
        self.read_ok = read_ok


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


class _DeploymentRun:
    """The deployment files of a run, read once: each document's placement is looked up here."""

    def __init__(self, deployment: Any) -> None:
        from flinktune.deployment.documents import DocumentCache

        self.deployment = deployment
        self.document_at = DocumentCache().document_at

    def place(self, document: ConfigDocument) -> Any:
        from flinktune.deployment.link import place

        return place(document, self.deployment, self.document_at)


def _deployment_run(expanded: Any, options: LintOptions) -> _DeploymentRun | None:
    """Read the deployment files found with (and beside) the inputs; None when there are none."""
    files = dict(expanded.deployment)
    if expanded.named or expanded.folders:
        from flinktune.deployment.find import beside

        manifests = tuple(path for path, kind in expanded.deployment if kind == "kubernetes")
        relative = not any(os.path.isabs(path) for path in [*expanded.named, *expanded.folders])
        here = os.getcwd() + os.sep
        for path, kind in beside(list(expanded.named), list(expanded.folders), manifests).items():
            # named as the user names files: relative to the working folder when the inputs were
            spelled = os.path.relpath(path) if relative and path.startswith(here) else path
            if _key(spelled) not in {_key(known) for known in files}:
                files[spelled] = kind
    if not files:
        return None
    from flinktune.deployment.readers import read_deployment

    roots = [os.path.abspath(folder) for folder in expanded.folders] or [
        os.path.dirname(os.path.abspath(path)) for path in expanded.named]
    root = os.path.commonpath(roots) if roots else None
    return _DeploymentRun(read_deployment(sorted(files.items()), root))


def _situation(document: ConfigDocument, text: str, directives: Directives, options: LintOptions,
               deployed: Any = None) -> Any:
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
                             plan=options.plan, plan_source=options.plan_source, deployed=deployed)


# What a key means in one version (unknown, deprecated, removed, taken over) and whether the file
# format is read at all: these findings hang on the version alone.
_VERSION_CODES = frozenset({"FTC001", "FTC002", "FTC003", "FTC004", "FTC005", "FTC006", "FTC007", "FTC020"})


def _key_means_else(key: str, version: Any, others: Any) -> bool:
    """Whether ``key`` means something else (known, deprecated) in any of ``others`` than in
    ``version``: a finding on it at a version nobody stated hangs on that version."""
    from flinktune.config.catalog import load_catalog

    catalog = load_catalog()
    readers = catalog.versions_with(key)
    since, _ = catalog.deprecation(key)

    def status(v: Any) -> tuple[bool, bool]:
        return v in readers, since is not None and since <= v

    return any(status(v) != status(version) for v in others)


def _note_version(finding: Finding, source: str, detail: str, version: Any, ruleset: Any) -> Finding:
    """A finding that hangs on a version nobody stated (inferred from the keys, or flinktune's
    default) says so, and how to state it."""
    rule = ruleset.get(finding.code) if hasattr(ruleset, "get") else None
    bounded = rule is not None and str(getattr(rule, "versions", "*")).strip() not in ("", "*")
    if not bounded:
        from flinktune.versions import DEFAULT_VERSION, SUPPORTED

        key = finding.location.key
        # inferred: against the default it would otherwise have had; the default: against any version
        others = (DEFAULT_VERSION,) if source == "inferred" else SUPPORTED
        if finding.code not in _VERSION_CODES or (key and not _key_means_else(key, version, others)):
            return finding
    said = (f"inferred: {detail}" if source == "inferred"
            else f"judged at Flink {version}, the default: nothing names the file's version")
    note = f" ({said}; state it with `# flinktune: flink-version=` or --flink-version)"
    older = _rename_breaks(finding.fix)
    if older is not None:
        # The rename is right only from the version that reads the new key: on an older release the
        # new key is ignored, so renaming would drop the setting. Not applied by --fix, and said as
        # info, until the file names its version.
        from flinktune.change import Applicability
        from flinktune.findings import Severity

        note = (f" ({said}; Flink {older} and earlier, which also read this key, do not read "
                f"'{finding.fix.new_key}', so rename it only on a release that does; "  # type: ignore[union-attr]
                "state it with `# flinktune: flink-version=` or --flink-version)")
        return replace(finding, message=finding.message + note, severity=Severity.INFO,
                       fix=replace(finding.fix, applicability=Applicability.MANUAL))
    return replace(finding, message=finding.message + note)


def _note_older(finding: Finding, detail: str) -> Finding:
    """A finding on what a key means, for a file run by a release older than any catalog flinktune has
    (judged as the oldest): it says so, and its fix is left to the user, since the replacement key it
    names may not exist in that release (taskmanager.memory.process.size is 1.10+)."""
    if finding.code not in _VERSION_CODES:
        return finding
    message = (f"{finding.message} ({detail}: the release the file runs on is older than any flinktune "
               "knows and may not read the keys named here)")
    return _by_hand(replace(finding, message=message))


def _by_hand(finding: Finding) -> Finding:
    """The finding with its fix left to the user (not applied by --fix): for a configuration that is not
    a file of its own (a FLINK_PROPERTIES variable, a Helm values block or template: the config writer
    edits only the files Flink reads), or one whose release flinktune cannot vouch for."""
    from flinktune.change import Applicability

    if finding.fix is None or finding.fix.applicability is Applicability.MANUAL:
        return finding
    return replace(finding, fix=replace(finding.fix, applicability=Applicability.MANUAL))


def _may_hold_unwritable(document: ConfigDocument, found: list[Finding]) -> bool:
    """Whether the writer may be unable to make a safe fix of ``document``: only YAML can hold a flow
    mapping {...} or an alias (every flink-conf.yaml line is editable), so the common lint pays nothing
    for the check below."""
    from flinktune.change import Applicability
    from flinktune.config.types import ConfigFormat

    return document.format is not ConfigFormat.FLAT and any(
        finding.fix is not None and finding.fix.applicability is Applicability.SAFE for finding in found)


def _source_text(path: str) -> str:
    from flinktune.config.textio import read_text_file

    try:
        return read_text_file(path).text
    except (FlinktuneError, OSError, UnicodeDecodeError):
        return ""                # it was read a moment ago; --fix reports a file that went away


def _writable_or_by_hand(finding: Finding, document: ConfigDocument, text: str) -> Finding:
    """A safe fix the writer cannot make (a key inside a flow mapping {...}, behind a YAML alias) is
    the user's: the finding says so and why, rather than "fixable with --fix" followed by a --fix that
    leaves it."""
    from flinktune.change import Applicability
    from flinktune.config.writer import apply_changes

    fix = finding.fix
    if fix is None or fix.applicability is not Applicability.SAFE:
        return finding
    try:
        apply_changes(text, document, [fix])
    except WriteError as error:
        reason = error.message.removesuffix("; edit it by hand")
        return _by_hand(replace(finding, message=f"{finding.message} (--fix cannot write this: {reason})"))
    except FlinktuneError:
        return finding          # --fix reports it, as for any write
    return finding


def _dead_rename(finding: Finding, document: ConfigDocument) -> Finding:
    """A rename whose new key the document already sets is a delete: Flink reads the new key first
    (Configuration), so the old line is dead. Decided here, once, so the hint, the JSON / SARIF fix and
    --fix say and do the same. A manual rename (its version not stated) is left as the rename it
    advises: on an older release the old key is the one read."""
    from flinktune.change import Applicability

    fix = finding.fix
    if (fix is None or fix.action != "rename" or fix.applicability is Applicability.MANUAL
            or (fix.new_key and document.get(fix.new_key) is None)):
        return finding
    return replace(finding, fix=replace(fix, action="delete", value=None))


# The deprecation findings (option catalog): true from the release that deprecated the key on.
_DEPRECATION_CODES = frozenset({"FTC003", "FTC006"})


def _held_deprecations(found: list[Finding], document: ConfigDocument, options: LintOptions
                       ) -> tuple[list[Finding], tuple[tuple[int | None, str, str | None, Any], ...]]:
    """At a version nobody named (the default, or a range inferred from the content), the deprecations
    that hold for fewer than half of the releases the file's content fits (a key 1.20 deprecated, in a
    flink-conf.yaml that 1.13-1.20 all read: one release of eight). For a rename, the releases it is
    right for are those that read the new key too: on the others the rename would drop the setting.
    Such findings would be wrong, or unsafe to follow, for most releases the file may be for: they are
    held back and the report names them in one line. Returns the findings kept and (line, key, new key
    or None, the first release they hold for) of each one held. A rule the run does not select
    (--select, --ignore) holds nothing back: its findings are dropped anyway."""
    candidates = [f for f in found if f.code in _DEPRECATION_CODES and f.location.key
                  and is_selected(f.code, options.select, options.ignore)]
    if not candidates:
        return found, ()
    from flinktune.config.catalog import load_catalog
    from flinktune.situation.version import readable_versions

    catalog = load_catalog()
    fits = readable_versions(document, catalog)
    held: dict[int, tuple[int | None, str, str | None, Any]] = {}
    for finding in candidates:
        key = finding.location.key
        statuses = [catalog.lookup(key, v) for v in fits]
        reading = [s.version for s in statuses if s.is_known]
        since = next((s.deprecated_since for s in statuses if s.deprecated_since is not None), None)
        fix = finding.fix
        renamed = fix.new_key if fix is not None and fix.action == "rename" else None
        if renamed:
            right = [v for v in reading if catalog.lookup(renamed, v).is_known]
        else:
            right = [v for v in reading if since is not None and since <= v]
        if reading and 2 * len(right) < len(reading):
            held[id(finding)] = (finding.location.line, key, renamed, min(right) if right else since)
    if not held:
        return found, ()
    return [f for f in found if id(f) not in held], tuple(held.values())


def _rename_breaks(fix: Change | None) -> Any:
    """The newest release that reads a rename's old key but not its new one (the file, whose version
    nobody named, may be for it), or None when the rename is right in every release that reads the key."""
    if fix is None or fix.action != "rename" or not fix.new_key:
        return None
    from flinktune.config.catalog import load_catalog

    catalog = load_catalog()
    old_readers, new_readers = catalog.versions_with(fix.key), set(catalog.versions_with(fix.new_key))
    missing = [v for v in old_readers if v not in new_readers]
    return max(missing) if missing else None


def _lint_file(path: str, ruleset: Any, options: LintOptions, run: _DeploymentRun | None = None,
               extra: tuple[ConfigDocument, ...] = (), fixed: bool = False) -> _FileOutcome:
    """Lint the configurations of one file (``extra``: those the deployment readers found in it,
    FLINK_PROPERTIES and Helm values; a deployment file is not read as a config itself). ``fixed``: the
    file as --fix left it, which may have emptied it."""
    outcome = _FileOutcome(path)
    if run is not None and _is_deployment_only(path, run):
        documents, text = list(extra), _text_for_directives(path)
    else:
        from flinktune.config.reader import NO_OPTION, holds_no_option

        documents, text, problems = _read_documents(path, options)
        if not problems and not extra and not fixed and holds_no_option(documents):
            # No rule can fail on nothing: "0 errors" would pass a file that describes no cluster.
            problems = [InputProblem(path, f"{NO_OPTION}: nothing to check")]
        if problems:
            outcome.problems.extend(problems)
            return outcome
        documents = [*documents, *extra]
    outcome.read_ok = True
    return _lint_documents(outcome, documents, text, ruleset, options, run)


def _is_deployment_only(path: str, run: _DeploymentRun) -> bool:
    return any(os.path.normcase(os.path.abspath(f)) == os.path.normcase(os.path.abspath(path))
               for f in run.deployment.files) and not _is_config_file(path)


def _is_config_file(path: str) -> bool:
    from flinktune.deployment.find import head_of
    from flinktune.deployment.readers import recognise

    return recognise(path, head_of(path)) == "kubernetes"


def _text_for_directives(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError:
        return ""
    return raw.decode("utf-8", errors="replace") if b"flinktune:" in raw else ""


def _lint_documents(outcome: _FileOutcome, documents: list[ConfigDocument], text: str, ruleset: Any,
                    options: LintOptions, run: _DeploymentRun | None) -> _FileOutcome:
    from flinktune.rules import evaluate_document

    path = outcome.path
    directives = parse_directives(text) if text else Directives()
    raw_all: list[Finding] = []
    source: str | None = None          # the file's text, read only if a fix may not be writable
    for document in documents:
        try:
            deployed = run.place(document) if run is not None else None
            situation = _situation(document, text, directives, options, deployed)
        except FlinktuneError as error:
            outcome.problems.append(InputProblem(error.file or path, f"could not be checked: {error.message}",
                                                 error.line))
            continue
        version = situation.flink_version
        try:
            found = list(evaluate_document(ruleset, document, version, env=_env(options),
                                           situation=situation,
                                           document_at=run.document_at if run is not None else None))
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
        held: tuple[tuple[int | None, str, str | None, Any], ...] = ()
        if situation.version.source == "default" or (
                situation.version.source == "inferred" and situation.version.line is None):
            # (an inferred version with a line is one a comment names: the file says it)
            found, held = _held_deprecations(found, document, options)
        outcome.versions.append(FileVersion(path, version, situation.version.source, document.name,
                                            situation.version.detail or "", held))
        if situation.version.source in ("inferred", "default"):
            source, detail = situation.version.source, situation.version.detail
            found = [_note_version(finding, source, detail, version, ruleset) for finding in found]
        elif OLDER_THAN_SUPPORTED in (situation.version.detail or ""):
            found = [_note_older(finding, situation.version.detail) for finding in found]
        found = [_dead_rename(finding, document) for finding in found]
        if document.origin is not None:
            found = [_by_hand(finding) for finding in found]
        elif _may_hold_unwritable(document, found):
            if source is None:
                source = _source_text(outcome.path)
            if "{" in source or "*" in source:
                found = [_writable_or_by_hand(finding, document, source) for finding in found]
        outcome.documents.append((document, found))
        raw_all.extend(found)
    result = apply_suppressions(raw_all, directives, path)
    outcome.suppressed = list(result.suppressed)
    outcome.suppressed_count = len(result.suppressed)
    outcome.kept = select_findings(
        [*result.kept, *result.unused], options.select, options.ignore, options.severity_overrides,
    )
    return outcome


def _fix_file(outcome: _FileOutcome, options: LintOptions
              ) -> tuple[list[Change], list[InputProblem], list[InputProblem]]:
    """Apply the safe changes (rename a deprecated key, delete a removed key) of one file: the
    changes written, each with the file and line it was on; the problems that stopped the write; and
    the changes the writer cannot make (a key inside a flow mapping {...}, behind a YAML alias),
    left to the user while the others are written."""
    from flinktune.change import writable
    from flinktune.config.textio import read_text_file
    from flinktune.config.writer import apply_changes, write_file_atomic
    from flinktune.record import replace

    applied: list[Change] = []
    plans: list[tuple[ConfigDocument, list[Change]]] = []
    suppressed = {id(finding) for finding in outcome.suppressed}
    for document, found in outcome.documents:
        changes: list[Change] = []
        seen: set[tuple[str, str]] = set()
        for finding in found:
            fix = finding.fix
            if (fix is None or not writable((fix,), unsafe=False) or id(finding) in suppressed
                    or not is_selected(finding.code, options.select, options.ignore)):
                continue
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
        return [], [], []
    by_hand: list[InputProblem] = []
    try:
        # Same encoding and byte-order mark as the original, so the fix changes only the edited lines.
        original = read_text_file(outcome.path)
        text = original.text
        # Later documents first, so the line numbers of earlier ones stay valid.
        plans.sort(key=lambda p: min((e.line for e in p[0].entries), default=0), reverse=True)
        for document, changes in plans:
            try:
                text = apply_changes(text, document, changes)
                continue
            except WriteError:
                pass
            # One change the writer cannot make must not keep the others from being written.
            kept = []
            for change in changes:
                try:
                    apply_changes(text, document, [change])
                    kept.append(change)
                except WriteError as error:
                    by_hand.append(InputProblem(error.file or outcome.path, f"not fixed: {error.message}",
                                                error.line or change.line))
                    applied.remove(change)
            if kept:
                text = apply_changes(text, document, kept)
        if applied:
            write_file_atomic(outcome.path, original.encode(text), backup_suffix=".bak",
                              follow_symlinks=options.follow_symlinks)
    except FlinktuneError as error:
        return [], [InputProblem(error.file or outcome.path, f"not fixed: {error.message}", error.line)], []
    except (OSError, UnicodeDecodeError) as error:
        return [], [InputProblem(outcome.path, f"not fixed: {error}")], []
    return applied, [], by_hand


def _unique(findings: list[Finding]) -> list[Finding]:
    """One finding per code, place and message: the same deployment fact can surface through several
    documents (a FLINK_PROPERTIES overlay and the file it is merged into) or processes (replicas)."""
    seen: set[tuple[object, ...]] = set()
    out = []
    for finding in findings:
        ident = (finding.code, finding.location.file, finding.location.line, finding.location.key,
                 finding.message)
        if ident not in seen:
            seen.add(ident)
            out.append(finding)
    return out


def _key(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))


def _flink_files(deployment: Any) -> set[str]:
    """The deployment files that run Flink or hold a Flink configuration (a compose file of other
    services, or a Dockerfile no Flink process is built from, is not linted by being read)."""
    keys = {_key(document.path) for document in deployment.documents}
    for process in deployment.processes:
        keys.add(_key(process.where.file))
        if process.dockerfile:
            keys.add(_key(process.dockerfile))
    return keys


def _nothing_judged(expanded: Any, files: list[str], judged: set[str], reported: set[str]
                    ) -> list[InputProblem]:
    """A folder that holds deployment files but no Flink config and nothing that runs Flink is not
    judged, and neither is a deployment file named on the command line without a Flink process: exit 2
    with one line, as for any input that could not be judged."""
    from flinktune.lint.paths import LOOKED_FOR

    checked = {_key(path) for path in files}
    out = []
    for folder in expanded.folders:
        prefix = _key(folder).rstrip(os.sep) + os.sep
        if _key(folder) not in reported and not any(k.startswith(prefix) for k in checked | judged):
            out.append(InputProblem(folder, LOOKED_FOR))
    for path, kind in expanded.deployment:
        key = _key(path)
        if key not in checked and key not in judged and key not in reported and any(
                _key(n) == key for n in expanded.named):
            out.append(InputProblem(path, f"no Flink process or configuration in it (read as a {kind} "
                                          "file)"))
    return out


def _respell(findings: list[Finding], names: dict[str, str]) -> list[Finding]:
    """Every file named as the run names it: a deployment file refers to a configuration by its absolute
    path (a compose bind, a Dockerfile COPY), the command line by the path the user typed."""
    out = []
    for finding in findings:
        file = names.get(_key(finding.location.file), finding.location.file)
        related = tuple(replace(r, file=names.get(_key(r.file), r.file)) for r in finding.related)
        if file != finding.location.file or related != finding.related:
            finding = replace(finding, location=replace(finding.location, file=file), related=related)
        out.append(finding)
    return out


def _documents_by_file(run: _DeploymentRun | None) -> dict[str, tuple[ConfigDocument, ...]]:
    """The configurations found inside deployment files (FLINK_PROPERTIES, Helm values), by file."""
    out: dict[str, tuple[ConfigDocument, ...]] = {}
    if run is None:
        return out
    for document in run.deployment.documents:
        out[_key(document.path)] = (*out.get(_key(document.path), ()), document)
    return out


def _mounted_configs(run: _DeploymentRun, expanded: Any, linted: set[str]) -> list[str]:
    """The config files that the Flink processes of a deployment file named on the command line run with
    (a compose bind mount, a Dockerfile COPY): checked with it, as when its folder is linted, instead of
    a clean report that never looked at them."""
    named = {_key(path) for path in expanded.named}
    relative = not any(os.path.isabs(path) for path in expanded.named)
    out: list[str] = []
    for process in run.deployment.processes:
        dockerfile = process.dockerfile
        if _key(process.where.file) not in named and not (dockerfile and _key(dockerfile) in named):
            continue
        for source in process.config:
            path = source.host_path
            if path and _key(path) not in linted and os.path.isfile(path):
                # named as the user named the deployment file
                shown = os.path.relpath(path) if relative else path
                if shown not in out:
                    out.append(shown)
    return out


def _first_paths(extra: dict[str, tuple[ConfigDocument, ...]]) -> list[tuple[str, tuple[ConfigDocument,
                                                                                        ...]]]:
    return [(docs[0].path, docs) for _key_, docs in sorted(extra.items())]


def _lint_processes(run: _DeploymentRun, ruleset: Any, options: LintOptions) -> list[_FileOutcome]:
    """Run the process-scope rules over every JobManager and TaskManager of the deployment; findings are
    grouped by the file that defines the process, with that file's suppression comments."""
    from flinktune.rules.engine import evaluate_process
    from flinktune.versions import DEFAULT_VERSION, parse_version

    by_file: dict[str, list[Finding]] = {}
    problems: list[InputProblem] = []
    for process in run.deployment.processes:
        if process.role is None:
            continue
        version = DEFAULT_VERSION
        if options.flink_version is not None:
            version = options.flink_version
        elif process.flink_version:
            try:
                version = parse_version(process.flink_version)
            except FlinktuneError:
                version = DEFAULT_VERSION
        try:
            found = evaluate_process(ruleset, run.deployment, process, version, env=_env(options),
                                     document_at=run.document_at)
        except FlinktuneError as error:
            problems.append(InputProblem(process.where.file, f"could not be checked: {error.message}",
                                         process.where.line))
            continue
        for finding in found:
            by_file.setdefault(finding.location.file, []).append(finding)
    outcomes = []
    for path, found in by_file.items():
        outcome = _FileOutcome(path, read_ok=True)
        text = _text_for_directives(path)
        directives = parse_directives(text) if text else Directives()
        result = apply_suppressions(found, directives, path)
        outcome.suppressed = list(result.suppressed)
        outcome.suppressed_count = len(result.suppressed)
        outcome.kept = select_findings([*result.kept, *result.unused], options.select, options.ignore,
                                       options.severity_overrides)
        outcomes.append(outcome)
    if problems:
        outcomes.append(_FileOutcome(problems[0].file, problems=problems))
    return outcomes


def lint_errors_in_text(text: str, path: str, options: LintOptions | None = None) -> list[Finding]:
    """The errors ``flinktune lint PATH`` would report on PATH's configurations if the file held ``text``
    (what ``recommend`` writes): read with the deployment files beside PATH, as a lint of PATH finds them.
    Process-scope rules are left out: they read the configuration on disk, not ``text``."""
    from flinktune.config.reader import read_config_text
    from flinktune.findings import Severity

    options = options or LintOptions()
    try:
        documents = read_config_text(text, path)
    except FlinktuneError:
        return []
    run = _deployment_run(expand_paths([path], follow_symlinks=options.follow_symlinks), options)
    outcome = _lint_documents(_FileOutcome(path, read_ok=True), list(documents), text, load_ruleset(options),
                              options, run)
    return sorted((f for f in _unique(outcome.kept) if f.severity is Severity.ERROR), key=Finding.sort_key)


def load_ruleset(options: LintOptions) -> Any:
    from flinktune.rules import load_rules

    return load_rules(extra_dirs=tuple(options.rule_dirs), bundled=options.bundled_rules)


def _lint_files(files: list[tuple[str, tuple[ConfigDocument, ...]]], ruleset: Any, options: LintOptions,
                run: _DeploymentRun | None) -> list[_FileOutcome]:
    """``_lint_file`` over ``files`` (path, its deployment documents), on several CPUs when there are
    many (flinktune.lint.workers); --fix writes files, so it lints them here, one by one."""
    from flinktune.lint.workers import map_in_workers, worker_count

    workers = 1 if options.fix else worker_count(len(files), options.jobs)
    if workers == 1:
        return [_lint_file(path, ruleset, options, run, extra) for path, extra in files]
    return map_in_workers(
        lambda item: _without_documents(_lint_file(item[0], ruleset, options, run, item[1])), files, workers)


def _without_documents(outcome: _FileOutcome) -> _FileOutcome:
    """The outcome without what only --fix reads (the documents and their raw findings): most of what a
    worker would otherwise pickle."""
    outcome.documents = []
    outcome.suppressed = []
    return outcome


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
    run = _deployment_run(expanded, options)
    extra = _documents_by_file(run)
    outcomes = _lint_files([(path, extra.pop(_key(path), ())) for path in expanded.files], ruleset, options,
                           run)
    outcomes += [_lint_file(path, ruleset, options, run, docs) for path, docs in _first_paths(extra)]
    if run is not None:
        linted = {_key(outcome.path) for outcome in outcomes}
        mounted = _mounted_configs(run, expanded, linted)
        outcomes += [_lint_file(path, ruleset, options, run) for path in mounted]
        outcomes += _lint_processes(run, ruleset, options)

    fixes: list[Change] = []
    not_fixed: list[InputProblem] = []
    fixed_at: list[FileVersion] = []
    if options.fix:
        for index, outcome in enumerate(outcomes):
            if not outcome.read_ok:
                continue
            applied, fix_problems, by_hand = _fix_file(outcome, options)
            problems.extend(fix_problems)
            not_fixed.extend(by_hand)
            if applied:
                fixes.extend(applied)
                # The version the fixes were made for: renaming a file's old keys can change what
                # its version is inferred as when it is linted again.
                fixed_at.extend(outcome.versions)
                # Report what is left after the fix, with the new line numbers.
                outcomes[index] = _lint_file(outcome.path, ruleset, options, run,
                                             _documents_by_file(run).get(_key(outcome.path), ()), fixed=True)

    findings: list[Finding] = []
    versions: list[FileVersion] = []
    files: list[str] = []
    suppressed = 0
    for outcome in outcomes:
        problems.extend(outcome.problems)
        findings.extend(outcome.kept)
        versions.extend(outcome.versions)
        suppressed += outcome.suppressed_count
        if outcome.read_ok and outcome.path not in files:
            files.append(outcome.path)
    if run is not None:
        # Every deployment file lint found (named, in a folder given, or beside a config) and could not
        # read: what it would have said about the configs is unknown, so the run is not judged (exit 2).
        said = {_key(problem.file) for problem in problems}    # a manifest is read as a config too
        for path, why, line in run.deployment.skipped:
            if _key(path) not in said:
                problems.append(InputProblem(path, f"could not be read as a deployment file: {why}", line))
        judged = _flink_files(run.deployment)
        given = {_key(path) for path in expanded.named} | {_key(p) for p, _k in expanded.deployment}
        for path in run.deployment.files:
            if path not in files and _key(path) in given and _key(path) in judged:
                files.append(path)
        problems += _nothing_judged(expanded, files, judged, {_key(p.file) for p in problems})
    if run is not None:
        names = {_key(path): path for path in [*run.deployment.files, *files]}
        findings = _respell(findings, names)
    findings = _unique(findings)
    findings.sort(key=Finding.sort_key)
    reported, known = (findings, []) if baseline is None else baseline.split(findings)
    infos: tuple[RuleInfo, ...] = (*rule_infos(ruleset), *builtin_rule_infos())
    return LintResult(
        findings=tuple(reported), problems=tuple(problems), files=tuple(files), rules=infos,
        versions=tuple(versions), suppressed=suppressed, baselined=len(known), fixes=tuple(fixes),
        all_findings=tuple(findings), not_fixed=tuple(not_fixed), fixed_at=tuple(fixed_at),
    )
