"""`flinktune collect --prometheus`: the options from the flags, and the pull with its progress.

Called by ``collect_cmd`` only (which reports the result); imports nothing of it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer

from flinktune.cli.common import guarded


def pull(
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
    live: bool = False,
) -> Any:
    """The ``PrometheusResult`` of the pull; bad input is one line and exit 2 (``guarded``).
    ``live``: a chunk counter redrawn in place (a terminal, colour allowed), else plain lines."""

    def run() -> Any:
        from flinktune.collect.prometheus import PrometheusOptions, collect_prometheus, read_credentials
        from flinktune.collect.rest import RetryPolicy
        from flinktune.collect.time_range import time_range
        from flinktune.units import parse_duration_s

        start_s, end_s = time_range(since, until, last, time.time())
        options = PrometheusOptions(
            url=prometheus,
            out_dir=out,
            start_s=start_s,
            end_s=end_s,
            step_s=parse_duration_s(step, what="--step"),
            job_id=job,
            job_name=job_name,
            flink_url=flink_url,
            plan_file=plan,
            overwrite=overwrite,
            retry=RetryPolicy(
                attempts=retries + 1,
                timeout_s=parse_duration_s(timeout, what="--timeout") if timeout else 30.0,
            ),
            credentials=read_credentials(token_file, basic_auth_file),
            ca_file=ca_file,
        )

        def on_chunk(done: int, total: int, rows: int) -> None:
            if quiet:
                return
            if live:
                # -v on a terminal: every chunk keeps its line instead of being redrawn.
                typer.echo(f"\rchunk {done}/{total}, {rows} rows", err=True, nl=verbose or done == total)
            elif verbose:
                # Not a terminal: a line per chunk for a log, only when asked for (chunks can be many).
                typer.echo(f"flinktune collect: chunk {done}/{total}, {rows} rows", err=True)

        return collect_prometheus(options, on_chunk=on_chunk)

    return guarded(run)
