"""`flinktune collect --prometheus`: argument checks, the run, and its one-line summary."""

from __future__ import annotations

import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer

from flinktune.cli.common import EXIT_OK, guarded


def parse_instant(text: str, flag: str) -> float:
    """ISO 8601 (``2024-05-01T10:00:00Z``; no zone means UTC) or epoch seconds -> epoch seconds."""
    from flinktune.errors import UsageError

    value = text.strip()
    if re.fullmatch(r"\d+(\.\d+)?", value):
        return float(value)
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"{flag} {text!r} is not a time: use ISO 8601 (2024-05-01T10:00:00Z) or epoch seconds"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def _seconds(text: str, flag: str) -> float:
    from flinktune.cli.collect_cmd import _seconds as seconds

    return seconds(text, flag)


def time_range(since: str | None, until: str | None, last: str | None, now_s: float) -> tuple[float, float]:
    from flinktune.errors import UsageError

    if last is not None and since is not None:
        raise UsageError("give --since or --last, not both")
    end = parse_instant(until, "--until") if until is not None else now_s
    if last is not None:
        return end - _seconds(last, "--last"), end
    if since is None:
        raise UsageError("--prometheus needs a time range: --last 2h, or --since (and --until)")
    return parse_instant(since, "--since"), end


def run_prometheus_collect(
    *,
    prometheus: str,
    out: Path,
    job: str | None,
    job_name: str | None,
    flink_url: str | None,
    since: str | None,
    until: str | None,
    last: str | None,
    step: str,
    timeout: str | None,
    retries: int,
    plan: Path | None,
    token_file: Path | None,
    basic_auth_file: Path | None,
    ca_file: Path | None,
    overwrite: bool,
    quiet: bool = False,
    verbose: bool = False,
) -> None:
    def run() -> Any:
        from flinktune.collect.prometheus import PrometheusOptions, collect_prometheus, read_credentials
        from flinktune.collect.rest import RetryPolicy

        start_s, end_s = time_range(since, until, last, time.time())
        options = PrometheusOptions(
            url=prometheus,
            out_dir=out,
            start_s=start_s,
            end_s=end_s,
            step_s=_seconds(step, "--step"),
            job_id=job,
            job_name=job_name,
            flink_url=flink_url,
            plan_file=plan,
            overwrite=overwrite,
            retry=RetryPolicy(
                attempts=retries + 1, timeout_s=_seconds(timeout, "--timeout") if timeout else 30.0
            ),
            credentials=read_credentials(token_file, basic_auth_file),
            ca_file=ca_file,
        )

        def on_chunk(done: int, total: int, rows: int) -> None:
            if quiet:
                return
            if sys.stderr.isatty():
                # -v on a terminal: every chunk keeps its line instead of being redrawn.
                typer.echo(f"\rchunk {done}/{total}, {rows} rows", err=True, nl=verbose or done == total)
            elif verbose:
                # Not a terminal: a line per chunk for a log, only when asked for (chunks can be many).
                typer.echo(f"flinktune collect: chunk {done}/{total}, {rows} rows", err=True)

        return collect_prometheus(options, on_chunk=on_chunk)

    result = guarded(run)
    where = str(result.metrics_path) if result.metrics_path else "no metrics (no samples in the range)"
    plan_note = f"plan from {result.plan_source}" if result.plan_path else "no plan"
    summary = (
        f"pulled {result.metrics} metrics of {result.series} series in {result.chunks} chunks "
        f"({result.requests} requests), {result.rows} rows of job {result.job_name!r} ({result.job_id}) "
        f"into {where}; {plan_note}"
    )
    if result.stop_reason == "interrupted":
        summary = "stopped early: " + summary
    typer.echo(summary)
    for note in result.notes if not quiet else ():
        typer.echo(f"flinktune: note: {note}", err=True)
    if result.stop_reason == "interrupted":
        # The shared signal policy (cli/common.py): 130 for Ctrl-C, 143 for SIGTERM.
        from flinktune.cli.common import interrupted_exit_code, received_signal

        raise typer.Exit(interrupted_exit_code(received_signal()))
    raise typer.Exit(EXIT_OK if result.metrics_path else 2)
