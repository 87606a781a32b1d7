"""``flinktune analyze DUMP...``: where back pressure starts and why, from a metrics dump (on Spark).

pyspark is imported only inside the command, so the rest of the CLI starts fast and needs no Java.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from flinktune.cli.common import EXIT_FINDINGS, EXIT_OK, guarded

_FORMATS = ("text", "json", "markdown")


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
            "--warmup", help="Warm-up to skip per job: a share of the window (10%) or a duration (30s)."
        ),
    ] = "10%",
    master: Annotated[
        str,
        typer.Option(
            "--master", help="Spark master: local[*] (embedded), spark://host:port, yarn, k8s://..."
        ),
    ] = "local[*]",
    conf: Annotated[
        list[str] | None,
        typer.Option(
            "--conf",
            metavar="KEY=VALUE",
            help="Extra Spark setting (repeatable); overrides the tuned defaults.",
        ),
    ] = None,
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
    flink_version: Annotated[
        str, typer.Option("--flink-version", metavar="X.Y", help="Flink version the advice targets.")
    ] = "1.20",
    rules: Annotated[
        list[Path] | None, typer.Option("--rules", metavar="DIR", help="Extra rule folder (repeatable).")
    ] = None,
    output_format: Annotated[str, typer.Option("--format", "-f", help="text, json or markdown.")] = "text",
    out: Annotated[
        Path | None, typer.Option("--out", "-o", metavar="FILE", help="Write the report to FILE.")
    ] = None,
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on",
            metavar="error|warning|info",
            help="Exit 1 when a finding is at or above this severity.",
        ),
    ] = "warning",
    no_progress: Annotated[
        bool, typer.Option("--no-progress", help="No progress display on stderr.")
    ] = False,
) -> None:
    """Find where back pressure starts in a Flink job and why, from exported metrics (runs on Spark)."""

    def run() -> int:
        from flinktune import __version__
        from flinktune.analysis import AnalysisOptions, Environment
        from flinktune.analysis import analyze as run_analyze
        from flinktune.analysis.render import render_json, render_markdown, render_text
        from flinktune.errors import UsageError
        from flinktune.findings import Severity
        from flinktune.units import parse_bandwidth_bytes_per_s, parse_duration, parse_memory_size
        from flinktune.versions import parse_version

        fmt = output_format.lower()
        if fmt not in _FORMATS:
            raise UsageError(f"--format must be one of {', '.join(_FORMATS)}, not '{output_format}'")
        try:
            threshold = Severity(fail_on.lower())
        except ValueError:
            raise UsageError(f"--fail-on must be error, warning or info, not '{fail_on}'") from None
        env = Environment(
            segment_bytes=parse_memory_size(segment_size).bytes,
            bandwidth_bytes_per_s=parse_bandwidth_bytes_per_s(bandwidth) if bandwidth else None,
            rtt_s=parse_duration(rtt).seconds if rtt else None,
        )
        options = AnalysisOptions(
            inputs=tuple(dumps),
            plan_path=str(plan) if plan else None,
            job=job,
            since_ms=_parse_time_ms(since, "--since"),
            until_ms=_parse_time_ms(until, "--until"),
            warmup=warmup,
            env=env,
            version=parse_version(flink_version),
            rule_dirs=tuple(str(r) for r in rules or ()),
        )
        spark_conf = _parse_conf(conf)
        if no_progress or not sys.stderr.isatty():
            result = run_analyze(options, master=master, conf=spark_conf)
        else:
            from rich.console import Console

            console = Console(stderr=True)
            with console.status("flinktune analyze") as status:
                result = run_analyze(
                    options,
                    master=master,
                    conf=spark_conf,
                    progress=lambda msg: status.update(f"flinktune analyze: {msg}"),
                )
        if fmt == "json":
            text = render_json(result, __version__)
        elif fmt == "markdown":
            text = render_markdown(result)
        else:
            color = out is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ
            text = render_text(result, color=color)
        if out is not None:
            from flinktune.config.writer import write_file_atomic

            write_file_atomic(out, text.encode("utf-8"))
        else:
            typer.echo(text, nl=False)
        worst = [f for f in result.findings if f.severity.at_least(threshold)]
        return EXIT_FINDINGS if worst else EXIT_OK

    code = guarded(run)
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("analyze")(analyze)
