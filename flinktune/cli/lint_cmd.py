"""``flinktune lint FILE...``: check Flink configs in CI (see docs/lint.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flinktune.cli.flags import FlinkVersion, Format, NoColor, Output, Quiet, Verbose


def lint(
    files: Annotated[list[str], typer.Argument(
        metavar="FILE...", show_default=False,
        help="Config files, folders (searched recursively) or globs.")],
    flink_version: Annotated[str | None, FlinkVersion(
        "what the file states (comment, spec.flinkVersion), the project config's, what its keys imply, "
        "else 1.20 (docs/lint.md)")] = None,
    output_format: Annotated[str, Format("lint")] = "auto",
    fail_on: Annotated[str | None, typer.Option(
        "--fail-on", metavar="error|warning|info",
        help="Exit 1 when a finding is at or above this severity (default: the project config's "
             "fail-on, else warning).")] = None,
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
    exchanges: Annotated[int | None, typer.Option(
        "--exchanges", min=1,
        help="All-to-all exchanges (keyBy, rebalance) in the job, for the network-buffer check "
             "(default: a pessimistic 3; see docs/recommend.md).")] = None,
    plan: Annotated[Path | None, typer.Option(
        "--plan", metavar="FILE",
        help="Job plan JSON (/jobs/:jobid/plan): the network-buffer check uses the real job graph.")] = None,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", min=1,
        help="Processes that lint files at once (default: one per CPU when there are many files; "
             "1: one by one).")] = None,
    output: Annotated[Path | None, Output()] = None,
    verbose: Annotated[bool, Verbose("why, references and the Flink version used.")] = False,
    no_color: Annotated[bool, NoColor()] = False,
    quiet: Annotated[bool, Quiet()] = False,
) -> None:
    """Lint Flink configuration files: flink-conf.yaml, config.yaml, FlinkDeployment manifests, ConfigMaps."""
    # `flinktune lint` usually arrives via flinktune.cli.app.main's typer-free route (lint_run.py);
    # this typer route serves --help, usage errors and callers of the typer app. Both end in run_lint.
    from flinktune.cli.lint_run import LintArgs, run_lint

    args = LintArgs(
        files=tuple(files), flink_version=flink_version, output_format=output_format, fail_on=fail_on,
        rules=tuple(rules or ()), no_bundled_rules=no_bundled_rules, config=config, baseline=baseline,
        write_baseline=write_baseline, fix=fix, follow_symlinks=follow_symlinks,
        select=tuple(select or ()), ignore=tuple(ignore or ()), parallelism=parallelism, slots=slots,
        taskmanagers=taskmanagers, exchanges=exchanges, plan=plan, jobs=jobs, output=output, verbose=verbose,
        no_color=no_color, quiet=quiet,
    )
    code = run_lint(args, out=lambda text: typer.echo(text, nl=False),
                    err=lambda line: typer.echo(line, err=True))
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("lint")(lint)
