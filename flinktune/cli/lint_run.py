"""What ``flinktune lint`` does once its arguments are known, and a typer-free parser for them.

``flinktune lint`` runs in CI and pre-commit as a fresh process per call, so start-up is most of
its cost, and typer (which validates every parameter through pydantic) costs more than the whole
lint. ``flinktune.cli.app.main`` therefore hands a ``lint`` command line to ``parse_lint_args``
first (plain_args.py): a well-formed command line is read here, anything else (``--help``, unknown
options, missing or odd values, ``-`` ...) goes through the typer command in ``lint_cmd.py``, so
usage errors and help keep typer's wording. Both routes end in ``run_lint``.
tests/lint/test_fast_cli.py checks that the option table here matches the typer command.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from flinktune.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    announce_interrupted,
    checked_format,
    emit,
    interrupted_exit_code,
    newer_than_catalog_note,
)
from flinktune.cli.plain_args import Options, finish, parse_plain
from flinktune.errors import FlinktuneError

if TYPE_CHECKING:
    from flinktune.lint import LintResult


class LintArgs(NamedTuple):
    """The parsed ``flinktune lint`` command line (see lint_cmd.py for what each option means).

    A NamedTuple rather than a frozen dataclass: as immutable and comparable, and about a
    millisecond cheaper to define, which a command run once per CI job notices."""

    files: tuple[str, ...]
    flink_version: str | None = None
    output_format: str = "auto"
    fail_on: str | None = None
    rules: tuple[Path, ...] = ()
    no_bundled_rules: bool = False
    config: Path | None = None
    baseline: Path | None = None
    write_baseline: Path | None = None
    fix: bool = False
    follow_symlinks: bool = False
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    parallelism: int | None = None
    slots: int | None = None
    taskmanagers: int | None = None
    exchanges: int | None = None
    plan: Path | None = None
    jobs: int | None = None
    output: Path | None = None
    verbose: bool = False
    no_color: bool = False
    quiet: bool = False


# The lint command's options: flag spelling -> (LintArgs field, kind); the kinds are plain_args'.
OPTIONS: Options = {
    "--flink-version": ("flink_version", "str"),
    "--format": ("output_format", "str"),
    "-f": ("output_format", "str"),
    "--fail-on": ("fail_on", "str"),
    "--rules": ("rules", "path*"),
    "--no-bundled-rules": ("no_bundled_rules", "flag"),
    "--config": ("config", "path"),
    "--baseline": ("baseline", "path"),
    "--write-baseline": ("write_baseline", "path"),
    "--fix": ("fix", "flag"),
    "--follow-symlinks": ("follow_symlinks", "flag"),
    "--select": ("select", "str*"),
    "--ignore": ("ignore", "str*"),
    "--parallelism": ("parallelism", "int"),
    "--slots": ("slots", "int"),
    "--taskmanagers": ("taskmanagers", "int"),
    "--exchanges": ("exchanges", "int"),
    "--plan": ("plan", "path"),
    "--jobs": ("jobs", "int"),
    "-j": ("jobs", "int"),
    "--output": ("output", "path"),
    "-o": ("output", "path"),
    "--verbose": ("verbose", "flag"),
    "-v": ("verbose", "flag"),
    "--no-color": ("no_color", "flag"),
    "--quiet": ("quiet", "flag"),
    "-q": ("quiet", "flag"),
}


def parse_lint_args(argv: list[str]) -> LintArgs | None:
    """``argv`` after ``lint`` as LintArgs, or None when typer should handle it (help, errors,
    anything this small parser does not read exactly as typer would)."""
    parsed = parse_plain(argv, OPTIONS)
    if parsed is None or not parsed[1]:
        return None
    values, files = parsed
    return LintArgs(files=tuple(files), **values)  # type: ignore[arg-type]


def _split(values: tuple[str, ...]) -> tuple[str, ...]:
    """The codes of comma-separated ``--select`` / ``--ignore`` values, as typed."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def _split_codes(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(code.upper() for code in _split(values))


class _Stop(Exception):
    """A usage problem found after parsing: one line on stderr, exit 2."""


def _stderr_line(text: str) -> None:
    sys.stderr.write(text + "\n")


def run_lint(args: LintArgs, *, out: Callable[[str], None] | None = None,
             err: Callable[[str], None] | None = None) -> int:
    """Lint as the command line asks, print the report, and return the exit code.

    ``out`` receives the report text as is, ``err`` one line at a time (without its newline);
    both default to the process's stdout and stderr. Bad input is one line and exit code 2.
    """
    write_out = out or sys.stdout.write
    write_err = err or _stderr_line
    try:
        return _run(args, write_out, write_err)
    except _Stop as stop:
        write_err(f"flinktune: error: {' '.join(str(stop).split())}")
        return EXIT_BAD_INPUT
    except FlinktuneError as error:
        write_err(f"flinktune: error: {' '.join(error.one_line().split())}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as stop:
        code = interrupted_exit_code(getattr(stop, "signum", None))
        announce_interrupted(code, write=write_err)
        return code


def _run(args: LintArgs, out: Callable[[str], None], err: Callable[[str], None]) -> int:
    from flinktune.errors import RuleError
    from flinktune.findings import Severity
    from flinktune.lint import LintOptions, lint_paths, load_ruleset
    from flinktune.lint.project import check_codes, discover
    from flinktune.lint.ruleinfo import lint_codes
    from flinktune.lint.selection import matches_no_rule, no_rule_hint
    from flinktune.report.text import visible
    from flinktune.versions import parse_version

    project = discover(Path.cwd(), args.config)
    fmt = checked_format("lint", args.output_format)
    threshold_text = args.fail_on or (project.fail_on.value if project.fail_on else "warning")
    try:
        threshold = Severity(threshold_text.lower())
    except ValueError:
        raise _Stop(f"--fail-on must be error, warning or info, not '{threshold_text}'") from None
    # Rules read these as env.parallelism / env.slots / env.taskmanagers (FTC030, the network-buffer
    # requirement, uses the first two; with neither given it takes them from the file).
    given = (("parallelism", args.parallelism), ("slots", args.slots), ("taskmanagers", args.taskmanagers),
             ("exchanges", args.exchanges))
    env = tuple((name, value) for name, value in given if value is not None)
    plan = None
    if args.plan is not None:
        # The job graph for the network-buffer check (FTC030), read and checked as recommend does.
        from flinktune.model.batch import check_plan
        from flinktune.situation.plan import read_json_object

        plan = read_json_object(args.plan)
        try:
            check_plan(plan)
        except FlinktuneError as error:
            raise _Stop(f"{args.plan}: {error.message}") from None
    options = LintOptions(
        plan=plan, plan_source=None if args.plan is None else str(args.plan),
        flink_version=parse_version(args.flink_version) if args.flink_version else None,
        project_flink_version=parse_version(project.flink_version) if project.flink_version else None,
        completeness=project.completeness,
        select=(*project.select, *_split_codes(args.select)),
        ignore=(*project.ignore, *_split_codes(args.ignore)),
        severity_overrides=project.severity,
        rule_dirs=(*project.rules, *args.rules),
        bundled_rules=not args.no_bundled_rules,
        baseline=None if args.write_baseline else (args.baseline or project.baseline),
        follow_symlinks=args.follow_symlinks,
        env=env,
        fix=args.fix,
        jobs=args.jobs,
    )
    # --quiet: errors only on stderr; the notes below go to ``note``, which drops them.
    note_line = (lambda _line: None) if args.quiet else err
    for stated in (options.flink_version, options.project_flink_version):
        note = newer_than_catalog_note(stated)
        if note:
            note_line(note)
            break
    try:
        ruleset = load_ruleset(options)
    except RuleError as error:
        # Every problem in every rule file, one line each, so they can all be fixed in one go; the
        # error's own summary repeats the first, so only a count follows, and only when there are several.
        problems = error.problems or (error.one_line(),)
        for problem in problems:
            err(f"flinktune: error: {' '.join(problem.split())}")
        if len(problems) > 1:
            err(f"flinktune: error: {len(problems)} problems in rule files")
        return EXIT_BAD_INPUT
    # A selector that matches no rule would select nothing (or ignore nothing) without a word.
    known = lint_codes(ruleset)
    check_codes(project, known)
    for flag, given_codes in (("--select", args.select), ("--ignore", args.ignore)):
        unknown = matches_no_rule(_split(given_codes), known)
        if unknown:
            raise _Stop(f"{flag} {unknown[0]} matches no lint rule {no_rule_hint(known)}")
    result = lint_paths(list(args.files), options, ruleset=ruleset)
    emit("lint", result, fmt, output=args.output, out=out, no_color=args.no_color, verbose=args.verbose,
         inputs=args.files, fail_on=threshold.value)
    for problem in result.problems:
        err(f"flinktune: error: {visible(problem.one_line())}")
    _note_assumed_versions(result, note_line)
    if args.write_baseline is not None:
        from flinktune.lint.baseline import write_baseline

        count = write_baseline(result.all_findings, args.write_baseline)
        note_line(f"flinktune: wrote {count} findings to the baseline {args.write_baseline}")
        return EXIT_BAD_INPUT if result.problems else EXIT_OK
    return result.exit_code(threshold)


def _note_assumed_versions(result: LintResult, err: Callable[[str], None]) -> None:
    """A rename is only right for the version it targets: say so when --fix had to assume or infer it
    (the version the file was fixed for, which its new keys may no longer show), and name the fixes
    it left to the user."""
    fixed = {fix.file for fix in result.fixes}
    for fv in result.fixed_at:
        if fv.file not in fixed or fv.source not in ("default", "config.yaml", "inferred"):
            continue
        how = "inferred from its content" if fv.source == "inferred" else "which was assumed"
        err(f"flinktune: note: {fv.file}: fixed for Flink {fv.version}, {how}; "
            "pass --flink-version if the cluster runs another version (the original is in .bak)")
        fixed.discard(fv.file)
    for problem in result.not_fixed:
        err(f"flinktune: note: {problem.one_line()}; the finding stays")


def main_fast(argv: list[str]) -> int | None:
    """Run ``flinktune lint`` without typer when ``argv`` (after ``lint``) is a plain, well-formed
    command line; None when typer should take it."""
    args = parse_lint_args(argv)
    if args is None:
        return None
    return finish(lambda: run_lint(args))
