"""``flinktune analyze DUMP...``: where back pressure starts and why, from a metrics dump (on Spark).

pyspark is imported only inside the command, so the rest of the CLI starts fast and needs no Java.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flinktune.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    around_spark_run,
    checked_format,
    emit,
    guarded,
    live_stderr,
    scaling_options,
    stage_progress,
)
from flinktune.cli.flags import (
    FlinkVersion,
    Format,
    Master,
    NoColor,
    NoProgress,
    Output,
    Quiet,
    SparkConf,
    Verbose,
)


def _parse_time_ms(text: str | None, flag: str) -> int | None:
    from flinktune.errors import UsageError

    if text is None:
        return None
    t = text.strip()
    if t.isdigit():
        return int(t)
    import datetime as dt

    try:
        stamp = dt.datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"{flag} {text}: expected epoch milliseconds or an ISO time like 2026-01-31T12:00:00Z"
        ) from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.UTC)
    return int(stamp.timestamp() * 1000)


def _parse_conf(pairs: list[str] | None) -> dict[str, str]:
    from flinktune.errors import UsageError

    out: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--conf {pair}: expected key=value")
        out[key.strip()] = value.strip()
    return out


def analyze(
    dumps: Annotated[
        list[str],
        typer.Argument(
            metavar="DUMP...",
            show_default=False,
            help="Metrics dump: parquet, CSV or JSON-lines file, folder or glob; or a Prometheus scrape.",
        ),
    ],
    plan: Annotated[
        Path | None,
        typer.Option(
            "--plan",
            metavar="FILE",
            help="Job plan JSON (REST /jobs/:jobid/plan); default: plan.json beside the dump.",
        ),
    ] = None,
    job: Annotated[str | None, typer.Option("--job", help="Only this job (id or name).")] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", metavar="TIME", help="Only samples at or after TIME (epoch ms or ISO 8601)."),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option("--until", metavar="TIME", help="Only samples before TIME (epoch ms or ISO 8601)."),
    ] = None,
    warmup: Annotated[
        str,
        typer.Option(
            "--warmup",
            help="Warm-up to skip per job: a share of the window, e.g. 10%, or a duration, e.g. 30s.",
        ),
    ] = "10%",
    master: Annotated[str, Master()] = "local[*]",
    conf: Annotated[list[str] | None, SparkConf()] = None,
    segment_size: Annotated[
        str,
        typer.Option("--segment-size", help="taskmanager.memory.segment-size of the job (for buffer fill)."),
    ] = "32kb",
    bandwidth: Annotated[
        str | None,
        typer.Option(
            "--bandwidth",
            help="Network bandwidth between TaskManagers, e.g. 10Gbit/s (tells a saturated "
            "link from too few credits).",
        ),
    ] = None,
    rtt: Annotated[
        str | None, typer.Option("--rtt", help="Round-trip time between TaskManagers, e.g. 2ms.")
    ] = None,
    flink_version: Annotated[str, FlinkVersion("1.20 (the version the findings' advice targets)")] = "1.20",
    rules: Annotated[
        list[Path] | None, typer.Option("--rules", metavar="DIR", help="Extra rule folder (repeatable).")
    ] = None,
    target_rate: Annotated[
        list[str] | None,
        typer.Option(
            "--target-rate",
            metavar="SOURCE=RATE",
            help="Records/s a source must take, for sizing parallelism (repeatable; RATE alone for a job "
            "with one source). Default: the source's backlog growth, else what it would send unblocked.",
        ),
    ] = None,
    target_utilization: Annotated[
        str | None,
        typer.Option(
            "--target-utilization",
            metavar="PCT",
            help="Share of time a subtask may be busy at the target rate (default 70%, the Kubernetes "
            "operator's autoscaler's).",
        ),
    ] = None,
    output_format: Annotated[str, Format("analyze")] = "text",
    out: Annotated[Path | None, Output("--out")] = None,
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on",
            metavar="error|warning|info",
            help="Exit 1 when a finding is at or above this severity.",
        ),
    ] = "warning",
    no_progress: Annotated[bool, NoProgress()] = False,
    quiet: Annotated[bool, Quiet()] = False,
    verbose: Annotated[bool, Verbose("Spark's own log on stderr.")] = False,
    no_color: Annotated[bool, NoColor()] = False,
) -> None:
    """Find where back pressure starts in a Flink job and why, from exported metrics (runs on Spark).

    The first run on a machine records the classes Spark loads and then starts a background
    `java -Xshare:dump` that keeps a ~190 MB class-data archive in ~/.cache/flinktune (Spark then
    starts about twice as fast); FLINKTUNE_CLASS_CACHE=0 turns that off. Exit codes: 0 nothing at
    --fail-on, 1 findings at or above it, 2 bad input or a dump that cannot be judged, 130/143
    interrupted.
    """

    def run() -> int:
        from flinktune.analysis import AnalysisOptions
        from flinktune.analysis import analyze as run_analyze
        from flinktune.analysis.diagnose import job_status, missing_judging_metrics
        from flinktune.analysis.render import job_title
        from flinktune.errors import MetricsError, UsageError
        from flinktune.findings import Severity
        from flinktune.situation import Environment, parse_parameters
        from flinktune.units import parse_memory_size
        from flinktune.versions import parse_version

        fmt = checked_format("analyze", output_format)   # the html extra is checked before Spark starts
        try:
            threshold = Severity(fail_on.lower())
        except ValueError:
            raise UsageError(f"--fail-on must be error, warning or info, not '{fail_on}'") from None
        # The situation's Environment and its one unit rule (a bare number is refused, not read as
        # B/s or ms), as in every command.
        env = Environment().with_values(parse_parameters({"bandwidth": bandwidth, "rtt": rtt}), "flag")
        options = AnalysisOptions(
            inputs=tuple(dumps),
            plan_path=str(plan) if plan else None,
            job=job,
            since_ms=_parse_time_ms(since, "--since"),
            until_ms=_parse_time_ms(until, "--until"),
            warmup=warmup,
            env=env,
            segment_bytes=parse_memory_size(segment_size).bytes,
            version=parse_version(flink_version),
            rule_dirs=tuple(str(r) for r in rules or ()),
            timeline=fmt == "html",
            scaling=scaling_options(target_rate, target_utilization),
        )
        spark_conf = _parse_conf(conf)
        progress = stage_progress("analyze", enabled=not (quiet or no_progress), live=live_stderr(no_color))
        with around_spark_run(quiet), progress as say:
            result = run_analyze(options, master=master, conf=spark_conf, progress=say, spark_log=verbose)
        emit("analyze", result, fmt, output=out, no_color=no_color, verbose=verbose, inputs=dumps)
        unjudged = [j for j in result.jobs if job_status(j) == "cannot-judge"]
        if unjudged:
            # Never a pass on a dump that could not be judged (the report above says so too).
            raise MetricsError(
                f"cannot judge job {job_title(unjudged[0])}: the dump lacks "
                f"{', '.join(missing_judging_metrics(unjudged[0]))} (every vertex is 'unknown')",
                file=dumps[0],
            )
        worst = [f for f in result.findings if f.severity.at_least(threshold)]
        return EXIT_FINDINGS if worst else EXIT_OK

    code = guarded(run)
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("analyze")(analyze)
