"""`flinktune collect`: poll a running job's metrics from Flink's REST API into a dump `analyze` reads."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from flinktune.cli.common import EXIT_BAD_INPUT, EXIT_OK, fail, guarded


def _seconds(text: str, flag: str) -> float:
    from flinktune.errors import UsageError
    from flinktune.units import parse_duration

    if text.strip().replace(".", "", 1).isdigit():
        raise UsageError(f"{flag} {text!r} needs a unit, e.g. 5s, 500ms, 10min")
    return parse_duration(text).seconds


def register(app: typer.Typer) -> None:
    @app.command("collect")
    def collect_command(
        url: str = typer.Option("http://127.0.0.1:8081", "--url", help="Flink's REST endpoint (JobManager)."),
        job: str | None = typer.Option(None, "--job", help="Job id (32 hex digits)."),
        job_name: str | None = typer.Option(
            None, "--job-name", help="Job name (must match one running job)."
        ),
        interval: str = typer.Option(
            "5s", "--interval", help="Time between polls (Flink duration: 5s, 500ms)."
        ),
        duration: str = typer.Option("10min", "--duration", help="How long to collect (e.g. 10min, 1h)."),
        out: Path = typer.Option(  # noqa: B008
            ..., "-o", "--out", help="Folder for metrics.parquet, plan.json and job.json."
        ),
        metric: list[str] = typer.Option(  # noqa: B008
            [],
            "--metric",
            help="Extra REST metric id to collect (repeatable), e.g. mailboxQueueSize.",
        ),
        overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing dump (kept as .bak)."),
        retries: int = typer.Option(
            3,
            "--retries",
            min=0,
            max=20,
            help="Retries per request on transient errors (backoff 0.5 s, doubling).",
        ),
    ) -> None:
        """Poll every subtask of a running job over REST and write the canonical metrics dump.

        Ctrl-C (or SIGTERM) stops early and still leaves a complete dump.
        """

        def run() -> Any:
            from flinktune.collect import CollectOptions, RetryPolicy, collect

            options = CollectOptions(
                retry=RetryPolicy(attempts=retries + 1),
                url=url,
                out_dir=out,
                interval_s=_seconds(interval, "--interval"),
                duration_s=_seconds(duration, "--duration"),
                job_id=job,
                job_name=job_name,
                extra_metrics=tuple(metric),
                overwrite=overwrite,
            )
            if sys.stderr.isatty():
                return _collect_with_progress(options, collect)
            return collect(options)

        result = guarded(run)
        where = str(result.metrics_path) if result.metrics_path else "no metrics (no subtask answered)"
        summary = (
            f"collected {result.polls} polls, {result.rows} rows from job {result.job_name!r} "
            f"({result.job_id}, Flink {result.flink_version}) into {where}; plan in {result.plan_path}"
        )
        if result.stop_reason == "interrupted":
            summary = "stopped early: " + summary
        typer.echo(summary)
        if result.stop_reason == "job-ended":
            typer.echo(f"flinktune: note: {result.detail}; collection stopped", err=True)
        if result.stop_reason == "rest-failure":
            fail(f"{result.detail} (what was collected is kept in {where})")
        raise typer.Exit(
            EXIT_OK if result.metrics_path or result.stop_reason == "interrupted" else EXIT_BAD_INPUT
        )


def _collect_with_progress(options: Any, collect: Any) -> Any:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    progress = Progress(
        TextColumn("[bold]polls[/bold]"),
        BarColumn(bar_width=24),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rows]} rows{task.fields[note]}"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
    state: dict[str, Any] = {}

    def on_start(info: Any) -> None:
        progress.console.print(
            f"collecting job [bold]{info.job_name}[/bold] ({info.job_id}, Flink {info.flink_version}): "
            f"{info.vertices} vertices, {info.subtasks} subtasks, into {options.out_dir}",
            highlight=False,
        )
        state["task"] = progress.add_task("collect", total=info.planned_polls, rows=0, note="")

    def on_poll(report: Any) -> None:
        note = ""
        if report.failed_requests:
            note = f", {report.failed_requests} requests failed"
        progress.update(state["task"], completed=report.index, rows=report.total_rows, note=note)

    with progress:
        return collect(options, on_start=on_start, on_poll=on_poll)
