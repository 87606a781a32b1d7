"""``flinktune simulate SCENARIO.yaml``: run the credit-flow simulator, print, sweep, export."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from flinktune.cli.common import EXIT_OK, checked_format, emit, guarded, live_stderr, stage_progress
from flinktune.cli.flags import Format, NoColor, Output, Quiet, Verbose

if TYPE_CHECKING:
    from flinktune.sim.result import SimResult


def register(app: typer.Typer) -> None:
    @app.command("simulate")
    def simulate(
        scenario: Annotated[Path, typer.Argument(help="Scenario YAML (see sample_configs/scenarios/).")],
        seed: Annotated[int, typer.Option(
            "--seed", help="Seed of the random generator (same seed, same run).")] = 1,
        sweep: Annotated[str | None, typer.Option(
            "--sweep", help="KEY=V1,V2,... e.g. buffer-timeout=0ms,1ms,5ms,10ms,100ms")] = None,
        export: Annotated[Path | None, typer.Option(
            "--export", help="Write a metrics dump (metrics.parquet + plan.json) into this folder.")] = None,
        output_format: Annotated[str, Format("simulate")] = "text",
        output: Annotated[Path | None, Output()] = None,
        charts: Annotated[bool, typer.Option(
            "--charts/--no-charts", help="Terminal charts over time.")] = True,
        reference: Annotated[bool, typer.Option(
            "--reference", help="Simulate every subtask even when a large job repeats per TaskManager "
            "block (slower; see docs/simulator.md, Large jobs).")] = False,
        quiet: Annotated[bool, Quiet()] = False,
        verbose: Annotated[bool, Verbose(
            "one line per run on stderr: events simulated, wall time, whether the large-job fast path "
            "was used.")] = False,
        no_color: Annotated[bool, NoColor()] = False,
    ) -> None:
        """Simulate Flink's network stack for a scenario and print throughput, latency and pool usage.

        Progress goes to stderr: a live status line on a terminal, plain `flinktune simulate: <stage>`
        lines otherwise, none with --quiet.
        """

        def note(line: str) -> None:
            if not quiet:
                typer.echo(line, err=True)

        def run() -> int:
            from flinktune.sim import load_scenario
            from flinktune.sim.runs import simulate
            from flinktune.sim.sweep import parse_sweep

            fmt = checked_format("simulate", output_format)
            parsed = parse_sweep(sweep) if sweep is not None else None
            # Read and validate before any progress line: bad input is one line on stderr.
            loaded = load_scenario(scenario)
            with stage_progress("simulate", enabled=not quiet, live=live_stderr(no_color)) as say:
                result = simulate(loaded, seed=seed, sweep=parsed, reference=reference, export=export,
                                  charts=charts, progress=say)
            emit("simulate", result, fmt, output=output, no_color=no_color, verbose=verbose,
                 inputs=[scenario])
            if verbose:
                for label, run_result in result.runs:
                    note(_run_line(label if parsed is None else f"{parsed.key}={label}", run_result))
            if result.exported is not None:
                note(result.exported)
            return EXIT_OK

        raise typer.Exit(guarded(run))


def _run_line(label: str, result: SimResult) -> str:
    """--verbose: how one run went (a sweep's report shows none of this per run)."""
    rate = result.events_processed / result.wall_s if result.wall_s > 0 else math.nan
    copies = int(result.extra.get("fold_copies", 1.0))
    fast = (f"fast path: one block counted {copies} times" if copies > 1
            else "every subtask simulated")
    return (f"flinktune simulate: {label}: {result.events_processed:,} events in {result.wall_s:.2f} s "
            f"({rate:,.0f} events/s); {fast}")
