"""`flinktune collect`: poll a running job's metrics from Flink's REST API into a dump `analyze` reads."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from flinktune.cli.common import EXIT_BAD_INPUT, EXIT_OK, checked_format, emit, fail, guarded, live_stderr
from flinktune.cli.flags import Format, NoColor, Quiet, Verbose


def _seconds(text: str, flag: str) -> float:
    # The one unit rule of every entry point (flinktune.units): a bare number is refused.
    from flinktune.units import parse_duration_s

    return parse_duration_s(text, what=flag)


def register(app: typer.Typer) -> None:
    @app.command("collect")
    def collect_command(
        url: str | None = typer.Option(
            None,
            "--url",
            help="Flink's REST endpoint (JobManager; default http://127.0.0.1:8081). With --prometheus: "
            "a JobManager or HistoryServer to read the job's plan from.",
        ),
        job: str | None = typer.Option(None, "--job", "--job-id", help="Job id (32 hex digits)."),
        job_name: str | None = typer.Option(
            None, "--job-name", help="Job name (must match one running job)."
        ),
        interval: str = typer.Option(
            "5s", "--interval", help="Time between polls (Flink duration: 5s, 500ms)."
        ),
        duration: str = typer.Option("10min", "--duration", help="How long to collect (e.g. 10min, 1h)."),
        out: Path = typer.Option(  # noqa: B008
            ..., "-o", "--output", "--out", help="Folder for metrics.parquet, plan.json and job.json."
        ),
        metric: list[str] = typer.Option(  # noqa: B008
            [],
            "--metric",
            help="Extra REST metric id to collect (repeatable), e.g. mailboxQueueSize.",
        ),
        overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing dump (kept as .bak)."),
        quiet: Annotated[bool, Quiet()] = False,
        verbose: Annotated[bool, Verbose(
            "a progress line for every poll (rows, subtasks answered, time taken) instead of about one a "
            "minute; with --prometheus, one per chunk.")] = False,
        no_color: Annotated[bool, NoColor()] = False,
        retries: int = typer.Option(
            3,
            "--retries",
            min=0,
            max=20,
            help="Retries per request on transient errors (backoff 0.5 s, doubling).",
        ),
        prometheus: str | None = typer.Option(
            None, "--prometheus", help="Pull the job's history from this Prometheus server (see docs)."
        ),
        since: str | None = typer.Option(
            None, "--since", help="With --prometheus: range start (ISO 8601 such as 2024-05-01T10:00:00Z)."
        ),
        until: str | None = typer.Option(None, "--until", help="--prometheus: range end (default: now)."),
        last: str | None = typer.Option(None, "--last", help="--prometheus: the last DURATION, e.g. 2h."),
        step: str = typer.Option("15s", "--step", help="--prometheus: resolution (the scrape interval)."),
        timeout: str | None = typer.Option(
            None, "--timeout", help="Per-request timeout (default 10s for REST, 30s for --prometheus)."
        ),
        plan: Path | None = typer.Option(  # noqa: B008
            None, "--plan", help="With --prometheus: the job's plan JSON (REST /jobs/:jobid/plan)."
        ),
        token_file: Path | None = typer.Option(  # noqa: B008
            None, "--token-file", help="With --prometheus: file holding a bearer token."
        ),
        basic_auth_file: Path | None = typer.Option(  # noqa: B008
            None, "--basic-auth-file", help="With --prometheus: file holding user:password."
        ),
        ca_file: Path | None = typer.Option(  # noqa: B008
            None, "--ca-file", help="With --prometheus: CA bundle to verify the server's TLS certificate."
        ),
        output_format: Annotated[str, Format("collect")] = "text",
    ) -> None:
        """Poll every subtask of a running job over REST and write the canonical metrics dump.

        Ctrl-C (or SIGTERM) stops early and still leaves a complete dump (exit 130 / 143).
        """

        fmt = guarded(lambda: checked_format("collect", output_format))
        if prometheus is not None:
            from flinktune.cli.prometheus_collect import pull

            pulled = pull(
                prometheus=prometheus,
                out=out,
                job=job,
                job_name=job_name,
                flink_url=url,
                since=since,
                until=until,
                last=last,
                step=step,
                timeout=timeout,
                retries=retries,
                plan=plan,
                token_file=token_file,
                basic_auth_file=basic_auth_file,
                ca_file=ca_file,
                overwrite=overwrite,
                quiet=quiet,
                verbose=verbose,
                live=live_stderr(no_color),
            )
            emit("collect", pulled, fmt, no_color=no_color)
            for note in pulled.notes if not quiet else ():
                typer.echo(f"flinktune: note: {note}", err=True)
            if pulled.stop_reason == "interrupted":
                # The shared signal policy (cli/common.py): 130 for Ctrl-C, 143 for SIGTERM.
                from flinktune.cli.common import interrupted_exit_code, received_signal

                raise typer.Exit(interrupted_exit_code(received_signal()))
            raise typer.Exit(EXIT_OK if pulled.metrics_path else EXIT_BAD_INPUT)
        if any(v is not None for v in (since, until, last, plan, token_file, basic_auth_file, ca_file)):
            fail(
                "--since, --until, --last, --plan, --token-file, --basic-auth-file and --ca-file "
                "go with --prometheus"
            )

        def run() -> Any:
            from flinktune.collect import CollectOptions, RetryPolicy, collect

            options = CollectOptions(
                retry=RetryPolicy(
                    attempts=retries + 1, timeout_s=_seconds(timeout, "--timeout") if timeout else 10.0
                ),
                url=url or "http://127.0.0.1:8081",
                out_dir=out,
                interval_s=_seconds(interval, "--interval"),
                duration_s=_seconds(duration, "--duration"),
                job_id=job,
                job_name=job_name,
                extra_metrics=tuple(metric),
                overwrite=overwrite,
            )
            if quiet:
                return collect(options)
            if live_stderr(no_color):
                return _collect_with_progress(options, collect, verbose)
            return _collect_with_lines(options, collect, verbose)

        result = guarded(run)
        where = str(result.metrics_path) if result.metrics_path else "no metrics (no subtask answered)"
        if result.stop_reason == "interrupted":
            # One line, the shell's exit code for the signal; what was collected is a whole dump.
            from flinktune.cli.common import announce_interrupted, interrupted_exit_code, received_signal
            from flinktune.report.emit.collect import summary

            code = interrupted_exit_code(received_signal())
            if fmt == "json":
                emit("collect", result, fmt, no_color=no_color)
            announce_interrupted(code, f"; stopped early: {summary(result)}")
            raise typer.Exit(code)
        emit("collect", result, fmt, no_color=no_color)
        if result.stop_reason == "job-ended" and not quiet:
            typer.echo(f"flinktune: note: {result.detail}; collection stopped", err=True)
        if result.stop_reason == "rest-failure":
            fail(f"{result.detail} (what was collected is kept in {where})")
        raise typer.Exit(
            EXIT_OK if result.metrics_path or result.stop_reason == "interrupted" else EXIT_BAD_INPUT
        )


def _poll_detail(report: Any) -> str:
    """--verbose: everything a poll report says, for one line."""
    failed = f", {report.failed_requests} requests failed" if report.failed_requests else ""
    return (f"poll {report.index}: {report.rows} rows ({report.total_rows} in all), "
            f"{report.subtasks_answered} subtasks answered in {report.poll_s:.2f} s{failed}")


def _collect_with_lines(options: Any, collect: Any, verbose: bool = False) -> Any:
    """Progress for a log (stderr not a terminal, or --no-color): one line at the start, then
    about one a minute (every poll with --verbose)."""

    def line(text: str) -> None:
        sys.stderr.write(f"flinktune collect: {text}\n")
        sys.stderr.flush()

    def on_start(info: Any) -> None:
        line(f"collecting job {info.job_name} ({info.job_id}, Flink {info.flink_version}): {info.vertices} "
             f"vertices, {info.subtasks} subtasks, {info.planned_polls} polls into {options.out_dir}")

    every = max(1, round(60 / max(options.interval_s, 1e-3)))

    def on_poll(report: Any) -> None:
        if verbose:
            line(_poll_detail(report))
        elif report.index == 1 or report.index % every == 0:
            failed = f", {report.failed_requests} requests failed" if report.failed_requests else ""
            line(f"poll {report.index}, {report.total_rows} rows{failed}")

    return collect(options, on_start=on_start, on_poll=on_poll)


def _collect_with_progress(options: Any, collect: Any, verbose: bool = False) -> Any:
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
        if verbose:
            progress.console.print(_poll_detail(report), highlight=False, markup=False)

    with progress:
        return collect(options, on_start=on_start, on_poll=on_poll)
