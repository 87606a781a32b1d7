"""``flinktune compare BEFORE AFTER``: did the change help? Two runs of one job, every figure
judged against the noise of both (docs/compare.md). pyspark is imported inside the command only."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
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

_FAIL_ON = ("worse", "change", "never")
_JOB_ID = re.compile(r"^[0-9a-fA-F]{32}$")


def _confidence(text: str) -> float:
    from flinktune.errors import UsageError

    t = text.strip().rstrip("%")
    try:
        value = float(t) / (100.0 if text.strip().endswith("%") or float(t) > 1 else 1.0)
    except ValueError:
        raise UsageError(f"--confidence {text}: expected a share like 95% or 0.95") from None
    if not 0.5 <= value < 1.0:
        raise UsageError(f"--confidence {text}: must be at least 50% and below 100%")
    return value


def _range(text: str, side: str) -> tuple[float, float]:
    """``START..END`` (ISO 8601 or epoch seconds) for a side pulled from Prometheus."""
    from flinktune.collect.time_range import parse_instant
    from flinktune.errors import UsageError

    start, sep, end = text.partition("..")
    if not sep or not start.strip() or not end.strip():
        raise UsageError(
            f"{side} {text!r}: with --prometheus, each side is a time range START..END "
            "(ISO 8601 like 2026-11-20T10:00Z, or epoch seconds)"
        )
    lo, hi = parse_instant(start.strip(), side), parse_instant(end.strip(), side)
    if not hi > lo:
        raise UsageError(f"{side} {text!r}: the range is empty (END must be after START)")
    return lo, hi


@contextlib.contextmanager
def _pulled(
    prometheus: str,
    ranges: tuple[str, str],
    job: str | None,
    step: str,
    flink_url: str | None,
    ca_file: Path | None,
    say,
) -> Iterator[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """Both ranges pulled from Prometheus into temporary dumps (removed afterwards, also on errors)."""
    import shutil
    import tempfile

    from flinktune.collect.prometheus import PrometheusOptions, collect_prometheus, read_credentials
    from flinktune.units import parse_duration_s

    spans = (_range(ranges[0], "BEFORE"), _range(ranges[1], "AFTER"))
    folder = Path(tempfile.mkdtemp(prefix="flinktune-compare-"))
    try:
        dumps = []
        for label, (lo, hi) in zip(("before", "after"), spans, strict=True):
            say(f"pulling {label} from Prometheus")
            out = folder / label
            is_id = job is not None and bool(_JOB_ID.match(job))
            collect_prometheus(
                PrometheusOptions(
                    url=prometheus,
                    out_dir=out,
                    start_s=lo,
                    end_s=hi,
                    step_s=parse_duration_s(step, what="--step"),
                    job_id=job if is_id else None,
                    job_name=None if is_id else job,
                    flink_url=flink_url,
                    credentials=read_credentials(),
                    ca_file=ca_file,
                )
            )
            dumps.append(str(out))
        yield dumps[0], dumps[1]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def compare(
    before: Annotated[
        str,
        typer.Argument(
            metavar="BEFORE",
            show_default=False,
            help="The run before the change: a dump (file, folder or glob, anything analyze reads); with "
            "--prometheus a time range START..END.",
        ),
    ],
    after: Annotated[
        str,
        typer.Argument(metavar="AFTER", show_default=False, help="The run after the change, the same way."),
    ],
    before_plan: Annotated[
        Path | None,
        typer.Option(
            "--before-plan", metavar="FILE", help="BEFORE's job plan; default: plan.json beside the dump."
        ),
    ] = None,
    after_plan: Annotated[
        Path | None,
        typer.Option(
            "--after-plan", metavar="FILE", help="AFTER's job plan; default: plan.json beside the dump."
        ),
    ] = None,
    job: Annotated[str | None, typer.Option("--job", help="The job on both sides (id or name).")] = None,
    before_job: Annotated[str | None, typer.Option("--before-job", help="BEFORE's job (id or name).")] = None,
    after_job: Annotated[str | None, typer.Option("--after-job", help="AFTER's job (id or name).")] = None,
    warmup: Annotated[
        str,
        typer.Option(
            "--warmup", help="Skipped at the start of each run: a share, e.g. 10%, or a duration, e.g. 30s."
        ),
    ] = "10%",
    confidence: Annotated[
        str, typer.Option("--confidence", help="Family-wise confidence over every figure judged, e.g. 95%.")
    ] = "95%",
    expected: Annotated[
        Path | None,
        typer.Option(
            "--expected",
            metavar="FILE",
            help="The recommendation AFTER's config came from: recommend's JSON, or the config recommend "
            "--write wrote (the FILE.recommendation.json beside it).",
        ),
    ] = None,
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on",
            metavar="worse|change|never",
            help="Exit 1 when a figure got worse (worse), when anything measurably changed (change), "
            "or never.",
        ),
    ] = "worse",
    prometheus: Annotated[
        str | None,
        typer.Option(
            "--prometheus",
            metavar="URL",
            help="Pull both runs from Prometheus: BEFORE and AFTER are time ranges.",
        ),
    ] = None,
    step: Annotated[str, typer.Option("--step", help="With --prometheus: the query step.")] = "15s",
    flink_url: Annotated[
        str | None,
        typer.Option(
            "--url", metavar="URL", help="With --prometheus: a JobManager or HistoryServer for the plans."
        ),
    ] = None,
    ca_file: Annotated[
        Path | None, typer.Option("--ca-file", metavar="FILE", help="With --prometheus: a CA bundle for TLS.")
    ] = None,
    master: Annotated[str, Master()] = "local[*]",
    conf: Annotated[list[str] | None, SparkConf()] = None,
    flink_version: Annotated[str, FlinkVersion("1.20 (the version both runs are analysed for)")] = "1.20",
    output_format: Annotated[str, Format("compare")] = "text",
    out: Annotated[Path | None, Output()] = None,
    no_progress: Annotated[bool, NoProgress()] = False,
    quiet: Annotated[bool, Quiet()] = False,
    verbose: Annotated[bool, Verbose("Spark's own log on stderr.")] = False,
    no_color: Annotated[bool, NoColor()] = False,
) -> None:
    """Did the change help? Compare two runs of one job, every figure against both runs' noise.

    Exit codes: 0 nothing at --fail-on, 1 a figure got worse (with --fail-on change: anything changed),
    2 bad input, two different jobs, or runs from which not one figure could be judged (the report is
    still written), 130/143 interrupted.
    """

    def run() -> int:
        from flinktune.cli.analyze_cmd import _parse_conf
        from flinktune.compare.figures import CANNOT_TELL
        from flinktune.compare.run import CompareOptions
        from flinktune.compare.run import compare as run_compare
        from flinktune.errors import MetricsError, UsageError
        from flinktune.versions import parse_version

        fmt = checked_format("compare", output_format)
        if fail_on.lower() not in _FAIL_ON:
            raise UsageError(f"--fail-on must be worse, change or never, not '{fail_on}'")
        level = _confidence(confidence)
        spark_conf = _parse_conf(conf)
        progress = stage_progress("compare", enabled=not (quiet or no_progress), live=live_stderr(no_color))
        with around_spark_run(quiet), progress as say:
            sides = (
                contextlib.nullcontext((before, after))
                if prometheus is None
                else _pulled(prometheus, (before, after), job or before_job, step, flink_url, ca_file, say)
            )
            with sides as (left, right):
                options = CompareOptions(
                    before=(left,),
                    after=(right,),
                    before_plan=str(before_plan) if before_plan else None,
                    after_plan=str(after_plan) if after_plan else None,
                    before_job=before_job or job,
                    after_job=after_job or job,
                    warmup=warmup,
                    confidence=level,
                    expected=str(expected) if expected else None,
                    version=parse_version(flink_version),
                )
                result = run_compare(options, master=master, conf=spark_conf, progress=say, spark_log=verbose)
        emit("compare", result, fmt, output=out, no_color=no_color, verbose=verbose, inputs=(before, after))
        if result.verdict == CANNOT_TELL:
            # The report is out (nothing lost), but a canary must not pass on runs nobody could judge
            # (as analyze on a job it cannot judge).
            raise MetricsError(
                "compare: not one figure could be judged (too few windows after the warm-up, or too "
                "unsteady): collect longer runs or lower --warmup"
            )
        failing = {"worse": result.worse, "change": result.changed, "never": False}[fail_on.lower()]
        return EXIT_FINDINGS if failing else EXIT_OK

    code = guarded(run)
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
