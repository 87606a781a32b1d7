"""``flinktune recommend FILE``: what the config should say, as a diff with reasons (docs/recommend.md).

Dry run by default; ``--write`` edits the file in place (atomic, ``.bak`` backup, untouched bytes
kept), ``-o FILE`` writes the recommended config elsewhere. ``--metrics`` runs the Spark analysis
(imported only then) and uses what it measured instead of assumptions.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from flinktune.cli.common import EXIT_OK, around_spark_run, checked_format, emit, guarded, scaling_options
from flinktune.cli.flags import FlinkVersion, Format, NoColor, Profile, Quiet, Verbose


def recommend(
    file: Annotated[Path, typer.Argument(
        metavar="FILE", show_default=False,
        help="flink-conf.yaml, config.yaml or a FlinkDeployment manifest.")],
    flink_version: Annotated[str | None, FlinkVersion(
        "the profile's, the file's (a '# flinktune: flink-version=' comment, spec.flinkVersion), what its "
        "keys imply, else 1.20 (as lint)")] = None,
    rtt: Annotated[str | None, typer.Option(
        "--rtt", help="Round trip between TaskManagers, e.g. 2ms (default: 1ms, assumed, said so).")] = None,
    bandwidth: Annotated[str | None, typer.Option(
        "--bandwidth",
        help="NIC bandwidth of a TaskManager, e.g. 25Gbit/s (default: 10Gbit/s, for model numbers only).")
    ] = None,
    parallelism: Annotated[str | None, typer.Option("--parallelism", help="Job parallelism.")] = None,
    slots: Annotated[str | None, typer.Option("--slots", help="Slots per TaskManager.")] = None,
    taskmanagers: Annotated[str | None, typer.Option("--taskmanagers", help="TaskManagers.")] = None,
    exchanges: Annotated[str | None, typer.Option(
        "--exchanges", help="All-to-all exchanges in the job when no plan is given (default: a "
        "pessimistic 3, see docs/recommend.md, 'The job graph').")] = None,
    record_size: Annotated[str | None, typer.Option(
        "--record-size", help="Serialized record size, e.g. 200b (default: measured with --metrics, else "
        "unknown).")] = None,
    rate: Annotated[str | None, typer.Option(
        "--rate", help="Records per second one producer subtask emits, e.g. 60000 (default: measured "
        "with --metrics, else unknown).")] = None,
    latency_target: Annotated[str | None, typer.Option(
        "--latency-target", help="End-to-end latency target, e.g. 20ms (default: none).")] = None,
    skew: Annotated[str | None, typer.Option("--skew", help="Hottest channel's load over the mean.")] = None,
    workload: Annotated[str | None, typer.Option(
        "--workload", metavar="streaming|batch",
        help="Default: batch when execution.runtime-mode is BATCH or the plan's type is BATCH, else "
             "streaming.")] = None,
    profile: Annotated[Path | None, Profile("the options above")] = None,
    metrics: Annotated[list[str] | None, typer.Option(
        "--metrics", metavar="DUMP", help="Metrics dump to analyse (repeatable; runs Spark).")] = None,
    plan: Annotated[Path | None, typer.Option(
        "--plan", metavar="FILE", help="Job plan JSON (/jobs/:jobid/plan) for the buffer demand.")] = None,
    target_rate: Annotated[list[str] | None, typer.Option(
        "--target-rate", metavar="SOURCE=RATE",
        help="Records/s a source must take, for sizing parallelism with --metrics (repeatable; RATE alone "
             "for a job with one source). Default: --rate x the source's parallelism, else the source's "
             "backlog growth, else what it would send unblocked.")] = None,
    target_utilization: Annotated[str | None, typer.Option(
        "--target-utilization", metavar="PCT",
        help="Share of time a subtask may be busy at the target rate (default 70%, the Kubernetes "
             "operator's autoscaler's).")] = None,
    headroom: Annotated[str | None, typer.Option(
        "--headroom", metavar="PCT",
        help="Margin of a network-memory fix above Flink's exact requirement (default 25%).")] = None,
    write: Annotated[bool, typer.Option(
        "--write", help="Apply the changes to FILE (backup FILE.bak).")] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="FILE",
        help="Write the recommended config (not the report: that stays on stdout) to FILE instead of "
             "editing FILE; atomic.")] = None,
    output_format: Annotated[str, Format("recommend")] = "text",
    follow_symlinks: Annotated[bool, typer.Option(
        "--follow-symlinks", help="Let --write write through a symlink into another folder.")] = False,
    quiet: Annotated[bool, Quiet()] = False,
    verbose: Annotated[bool, Verbose(
        "on stderr, which Flink version each document was judged by and why; with --metrics, Spark's own "
        "log.")] = False,
    no_color: Annotated[bool, NoColor()] = False,
) -> None:
    """Recommend network-stack settings for a Flink config, with the model's numbers and a diff."""

    def note(line: str) -> None:
        # --quiet: errors only; every other line on stderr is a note.
        if not quiet:
            typer.echo(line, err=True)

    def run() -> int:
        from flinktune.advise.file import recommend_file
        from flinktune.errors import UsageError
        from flinktune.situation import Environment, parse_parameters, read_profile

        fmt = checked_format("recommend", output_format)   # the html extra is checked before any analysis
        if write and output is not None:
            raise UsageError("--write and --output exclude each other")
        flags = {"rtt": rtt, "bandwidth": bandwidth, "parallelism": parallelism, "slots": slots,
                 "taskmanagers": taskmanagers, "exchanges": exchanges, "record-size": record_size,
                 "rate": rate,
                 "latency-target": latency_target, "skew": skew, "workload": workload,
                 "flink-version": flink_version}
        env = Environment()
        if profile is not None:
            env = read_profile(profile).apply(env)
        env = env.with_values(parse_parameters(flags), "flag")
        margins = _margins(headroom)
        scaling = scaling_options(target_rate, target_utilization)   # checked before Spark starts
        with around_spark_run(quiet) if metrics else contextlib.nullcontext():
            result = recommend_file(file, env, plan=plan, metrics=metrics or (), margins=margins,
                                    scaling=scaling, timeline=fmt == "html", spark_log=verbose,
                                    progress=lambda message: note(f"flinktune: {message}"),
                                    explain=note if verbose else None)
        result = _with_lint_errors(result, env)
        emit("recommend", result, fmt, no_color=no_color, inputs=result.inputs)
        _write(result, write, output, follow_symlinks, note)
        return EXIT_OK

    code = guarded(run)
    raise typer.Exit(code)


def _with_lint_errors(result: Any, env: Any) -> Any:
    """The result with the errors lint still reports on the recommended config: what these changes do
    not fix is said, never left for the user to find after --write. Lint judges the file as recommend
    did: the same --flink-version and job (parallelism, slots, TaskManagers, exchanges)."""
    from dataclasses import replace

    from flinktune.lint.model import LintOptions
    from flinktune.lint.runner import lint_errors_in_text

    job = tuple((name, env.value(name)) for name in ("parallelism", "slots", "taskmanagers", "exchanges")
                if env.value(name) is not None)
    options = LintOptions(flink_version=env.flink_version, env=job)
    return replace(result, lint_errors=tuple(lint_errors_in_text(result.new_text, result.path, options)))


def _margins(headroom: str | None) -> Any:
    """``--headroom 25%`` -> Margins(network_headroom=1.25); a bare number is refused (one unit rule)."""
    from flinktune.advise.limits import Margins
    from flinktune.cli.common import percentage

    if headroom is None:
        return None
    return Margins(network_headroom=1 + percentage(headroom, "--headroom", "25%"))


def _write(result: Any, write: bool, output: Path | None, follow_symlinks: bool,
           note: Callable[[str], None]) -> None:
    """--write: the file itself (atomic, FILE.bak); -o: the recommended config elsewhere (atomic)."""
    from flinktune.config.writer import write_file_atomic

    data = result.encode(result.new_text)
    if (write or output is not None) and result.lint_errors:
        note(f"flinktune: note: {output or result.path} still has {len(result.lint_errors)} lint error(s) "
             "that no network setting fixes (listed above)")
    if not result.changed:
        if write or output is not None:
            note("flinktune: nothing to change")
        if output is not None:
            write_file_atomic(output, data, backup_suffix=None, follow_symlinks=follow_symlinks)
        return
    if write:
        backup = write_file_atomic(result.path, data, backup_suffix=".bak", follow_symlinks=follow_symlinks)
        note(f"flinktune: wrote {result.path}" + (f" (backup {backup})" if backup else ""))
    elif output is not None:
        write_file_atomic(output, data, backup_suffix=None, follow_symlinks=follow_symlinks)
        note(f"flinktune: wrote the recommended config to {output}")
    if (write or output is not None) and result.manual:
        note("flinktune: note: some changes are outside the config and must be made by hand "
             "(see 'by hand' above)")


def register(app: typer.Typer) -> None:
    app.command(name="recommend")(recommend)
