"""``flinktune lint FILE...``: check Flink configs in CI (see docs/lint.md)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from flinktune.cli.common import EXIT_BAD_INPUT, EXIT_OK, fail, guarded

if TYPE_CHECKING:
    from flinktune.lint import LintResult

_FORMAT_HELP = ("Output: text, json, sarif, github (workflow annotations), junit, or auto "
                "(github under GitHub Actions, else text).")


def _split_codes(values: list[str] | None) -> tuple[str, ...]:
    out: list[str] = []
    for value in values or []:
        out.extend(part.strip().upper() for part in value.split(",") if part.strip())
    return tuple(out)


def lint(
    files: Annotated[list[str], typer.Argument(
        metavar="FILE...", show_default=False,
        help="Config files, folders (searched recursively) or globs.")],
    flink_version: Annotated[str | None, typer.Option(
        "--flink-version", metavar="X.Y",
        help="Target Flink version; default: what the file says, else 1.20.")] = None,
    output_format: Annotated[str, typer.Option("--format", "-f", help=_FORMAT_HELP)] = "auto",
    fail_on: Annotated[str | None, typer.Option(
        "--fail-on", metavar="error|warning|info",
        help="Exit 1 when a finding is at or above this severity (default: warning).")] = None,
    rules: Annotated[list[Path] | None, typer.Option(
        "--rules", metavar="DIR", help="Extra rule folder (repeatable).")] = None,
    no_bundled_rules: Annotated[bool, typer.Option(
        "--no-bundled-rules",
        help="Use only the --rules folders, not the rules shipped with flinktune.")] = False,
    config: Annotated[Path | None, typer.Option(
        "--config", metavar="PATH",
        help="Project config (default: the nearest .flinktune.yaml or pyproject.toml).")] = None,
    baseline: Annotated[Path | None, typer.Option(
        "--baseline", metavar="FILE", help="Report only findings not in this baseline.")] = None,
    write_baseline: Annotated[Path | None, typer.Option(
        "--write-baseline", metavar="FILE",
        help="Write all current findings to FILE as the baseline; exit 0.")] = None,
    fix: Annotated[bool, typer.Option(
        "--fix", help="Apply safe fixes (rename deprecated keys, delete removed ones).")] = False,
    follow_symlinks: Annotated[bool, typer.Option(
        "--follow-symlinks", help="Follow symlinks in folders, and let --fix write through them.")] = False,
    select: Annotated[list[str] | None, typer.Option(
        "--select", metavar="CODES", help="Only these codes or prefixes (comma separated).")] = None,
    ignore: Annotated[list[str] | None, typer.Option(
        "--ignore", metavar="CODES", help="Skip these codes or prefixes (comma separated).")] = None,
    parallelism: Annotated[int | None, typer.Option(
        "--parallelism", min=1, help="Job parallelism (default: the file's parallelism.default).")] = None,
    slots: Annotated[int | None, typer.Option(
        "--slots", min=1, help="Slots per TaskManager (default: taskmanager.numberOfTaskSlots).")] = None,
    taskmanagers: Annotated[int | None, typer.Option(
        "--taskmanagers", min=1,
        help="Number of TaskManagers, for rules that read env.taskmanagers (your own rule folders).")] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="FILE", help="Write the report to FILE.")] = None,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Show why, references and the Flink version used.")] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help="Plain text without colour.")] = False,
) -> None:
    """Lint Flink configuration files: flink-conf.yaml, config.yaml, FlinkDeployment manifests, ConfigMaps."""
    from flinktune import __version__
    from flinktune.cli.common import stdout_is_terminal
    from flinktune.errors import RuleError
    from flinktune.findings import Severity
    from flinktune.lint import LintOptions, lint_paths
    from flinktune.lint.baseline import write_baseline as save_baseline
    from flinktune.lint.project import discover
    from flinktune.report import render, resolve_format
    from flinktune.report.text import visible
    from flinktune.versions import parse_version

    def run() -> int:
        project = discover(Path.cwd(), config)
        fmt = resolve_format(output_format, os.environ)
        threshold_text = fail_on or (project.fail_on.value if project.fail_on else "warning")
        try:
            threshold = Severity(threshold_text.lower())
        except ValueError:
            fail(f"--fail-on must be error, warning or info, not '{threshold_text}'")
        # Rules read these as env.parallelism / env.slots / env.taskmanagers (FTC030, the network-buffer
        # requirement, uses the first two; with neither given it takes them from the file).
        given = (("parallelism", parallelism), ("slots", slots), ("taskmanagers", taskmanagers))
        env = tuple((name, value) for name, value in given if value is not None)
        options = LintOptions(
            flink_version=parse_version(flink_version) if flink_version else None,
            project_flink_version=parse_version(project.flink_version) if project.flink_version else None,
            select=(*project.select, *_split_codes(select)),
            ignore=(*project.ignore, *_split_codes(ignore)),
            severity_overrides=project.severity,
            rule_dirs=(*project.rules, *(rules or ())),
            bundled_rules=not no_bundled_rules,
            baseline=None if write_baseline else (baseline or project.baseline),
            follow_symlinks=follow_symlinks,
            env=env,
            fix=fix,
        )
        try:
            result = lint_paths(files, options)
        except RuleError as error:
            # Every problem in every rule file, one line each, so they can all be fixed in one go.
            for problem in error.problems:
                typer.echo(f"flinktune: error: {' '.join(problem.split())}", err=True)
            raise
        color = (fmt == "text" and output is None and not no_color and "NO_COLOR" not in os.environ
                 and stdout_is_terminal())
        text = render(fmt, result, fail_on=threshold, color=color, verbose=verbose, tool_version=__version__)
        if output is not None:
            try:
                output.write_text(text, encoding="utf-8")
            except OSError as error:
                fail(f"{output}: cannot write the report: {error.strerror or error}")
        else:
            typer.echo(text, nl=False)
        for problem in result.problems:
            typer.echo(f"flinktune: error: {visible(problem.one_line())}", err=True)
        _note_assumed_versions(result)
        if write_baseline is not None:
            count = save_baseline(result.all_findings, write_baseline)
            typer.echo(f"flinktune: wrote {count} findings to the baseline {write_baseline}", err=True)
            return EXIT_BAD_INPUT if result.problems else EXIT_OK
        return result.exit_code(threshold)

    code = guarded(run)
    raise typer.Exit(code)


def _note_assumed_versions(result: LintResult) -> None:
    """A rename is only right for the version it targets: say so when --fix had to assume one."""
    fixed = {fix.file for fix in result.fixes}
    for fv in result.versions:
        if fv.file in fixed and fv.source in ("default", "config.yaml"):
            typer.echo(f"flinktune: note: {fv.file}: fixed for Flink {fv.version}, which was assumed; "
                       "pass --flink-version if the cluster runs another version (the original is in .bak)",
                       err=True)
            fixed.discard(fv.file)


def register(app: typer.Typer) -> None:
    app.command("lint")(lint)
