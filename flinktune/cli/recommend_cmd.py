"""``flinktune recommend FILE``: what the config should say, as a diff with reasons (docs/recommend.md).

Dry run by default; ``--write`` edits the file in place (atomic, ``.bak`` backup, untouched bytes
kept), ``-o FILE`` writes the recommended config elsewhere. ``--metrics`` runs the Spark analysis
(imported only then) and uses what it measured instead of assumptions. What the command does is
recommend_run.run_recommend, which a plain command line reaches without typer (recommend_run.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flinktune.cli.common import guarded
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
    from flinktune.cli.recommend_run import RecommendArgs, run_recommend

    args = RecommendArgs(
        file, flink_version=flink_version, rtt=rtt, bandwidth=bandwidth, parallelism=parallelism, slots=slots,
        taskmanagers=taskmanagers, exchanges=exchanges, record_size=record_size, rate=rate,
        latency_target=latency_target, skew=skew, workload=workload, profile=profile,
        metrics=tuple(metrics or ()), plan=plan, target_rate=tuple(target_rate or ()),
        target_utilization=target_utilization, headroom=headroom, write=write, output=output,
        output_format=output_format, follow_symlinks=follow_symlinks, quiet=quiet, verbose=verbose,
        no_color=no_color)
    code = guarded(lambda: run_recommend(args))
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command(name="recommend")(recommend)
