"""``flinktune simulate SCENARIO.yaml``: run the credit-flow simulator, print, sweep, export."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from flinktune.cli.common import EXIT_OK, emit_report, guarded, json_output, live_stderr, stage_progress

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
        output_format: Annotated[str, typer.Option("--format", "-f", help="text or json")] = "text",
        output: Annotated[Path | None, typer.Option(
            "--output", "-o", metavar="FILE",
            help="Write the report to FILE (atomically) instead of stdout.")] = None,
        charts: Annotated[bool, typer.Option(
            "--charts/--no-charts", help="Terminal charts over time.")] = True,
        reference: Annotated[bool, typer.Option(
            "--reference", help="Simulate every subtask even when a large job repeats per TaskManager "
            "block (slower; see docs/simulator.md, Large jobs).")] = False,
        quiet: Annotated[bool, typer.Option(
            "--quiet", "-q", help="No progress and no notes on stderr; errors only.")] = False,
        verbose: Annotated[bool, typer.Option(
            "--verbose", "-v", help="Also one line per run on stderr: events simulated, wall time, "
            "whether the large-job fast path was used.")] = False,
        no_color: Annotated[bool, typer.Option(
            "--no-color", help="No ANSI colours: plain progress lines on stderr even on a terminal "
            "(also: NO_COLOR set); the report itself is never coloured.")] = False,
    ) -> None:
        """Simulate Flink's network stack for a scenario and print throughput, latency and pool usage.

        Progress goes to stderr: a live status line on a terminal, plain `flinktune simulate: <stage>`
        lines otherwise, none with --quiet.
        """

        def note(line: str) -> None:
            if not quiet:
                typer.echo(line, err=True)

        def run() -> int:
            import numpy as np

            from flinktune.errors import UsageError
            from flinktune.sim import export_dump, load_scenario, run_scenario
            from flinktune.sim.summary import render_sweep, render_text, to_json
            from flinktune.sim.sweep import parse_sweep, variant

            if output_format not in ("text", "json"):
                raise UsageError(f"--format must be text or json, not '{output_format}'")
            parsed = parse_sweep(sweep) if sweep is not None else None
            fold = False if reference else None
            runs: list[tuple[str, SimResult]] = []
            written = ""
            # Read and validate before any progress line: bad input is one line on stderr.
            loaded = load_scenario(scenario)
            with stage_progress("simulate", enabled=not quiet, live=live_stderr(no_color)) as say:
                if parsed is None:
                    say(f"simulating {loaded.name} ({loaded.duration:g}s)")
                    runs.append((loaded.name, run_scenario(loaded, np.random.default_rng(seed), fold=fold)))
                else:
                    # As sim.sweep.run_sweep (one generator seeded identically per value: common random
                    # numbers), one progress stage per value, and --reference honoured in a sweep too.
                    for index, raw in enumerate(parsed.values, 1):
                        say(f"simulating {parsed.key}={raw} ({index}/{len(parsed.values)})")
                        runs.append((raw, run_scenario(variant(loaded, parsed.key, raw),
                                                       np.random.default_rng(seed), fold=fold)))
                if export is not None:
                    say(f"writing the metrics dump{'s' if parsed is not None else ''} into {export}")
                    if parsed is None:
                        path = export_dump(runs[0][1], export)
                        written = f"wrote {path} and {path.parent / 'plan.json'}"
                    else:
                        for label, result in runs:
                            safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in label)
                            export_dump(result, export / f"{parsed.key}={safe}")
                        written = f"wrote {len(runs)} dumps under {export}"
            if parsed is None:
                result = runs[0][1]
                if output_format == "json":
                    body = json.dumps(to_json(result), default=_nan_safe)
                    text = json_output("simulate", [str(scenario)], body)
                else:
                    text = render_text(result, charts=charts)
            elif output_format == "json":
                doc = {"sweep": parsed.key, "runs": [{"value": label, **to_json(r)} for label, r in runs]}
                text = json_output("simulate", [str(scenario)], json.dumps(doc, default=_nan_safe))
            else:
                text = render_sweep(parsed.key, runs)
            emit_report(text, output)
            if verbose:
                for label, result in runs:
                    note(_run_line(label if parsed is None else f"{parsed.key}={label}", result))
            if export is not None:
                note(written)
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


def _nan_safe(value: object) -> object:
    if isinstance(value, float) and math.isnan(value):
        return None
    return str(value)
