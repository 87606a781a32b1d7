"""``flinktune simulate SCENARIO.yaml``: run the credit-flow simulator, print, sweep, export."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated

import typer

from flinktune.cli.common import EXIT_OK, guarded, json_output


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
        charts: Annotated[bool, typer.Option(
            "--charts/--no-charts", help="Terminal charts over time.")] = True,
        reference: Annotated[bool, typer.Option(
            "--reference", help="Simulate every subtask even when a large job repeats per TaskManager "
            "block (slower; see docs/simulator.md, Large jobs).")] = False,
    ) -> None:
        """Simulate Flink's network stack for a scenario and print throughput, latency and pool usage."""

        def run() -> int:
            import numpy as np

            from flinktune.errors import UsageError
            from flinktune.sim import export_dump, load_scenario, run_scenario
            from flinktune.sim.summary import render_sweep, render_text, to_json
            from flinktune.sim.sweep import parse_sweep, run_sweep

            if output_format not in ("text", "json"):
                raise UsageError(f"--format must be text or json, not '{output_format}'")
            parsed = parse_sweep(sweep) if sweep is not None else None
            loaded = load_scenario(scenario)
            if parsed is None:
                result = run_scenario(loaded, np.random.default_rng(seed), fold=False if reference else None)
                if output_format == "json":
                    typer.echo(json_output("simulate", [str(scenario)],
                                           json.dumps(to_json(result), default=_nan_safe)), nl=False)
                else:
                    typer.echo(render_text(result, charts=charts))
                if export is not None:
                    path = export_dump(result, export)
                    typer.echo(f"wrote {path} and {path.parent / 'plan.json'}", err=True)
                return EXIT_OK
            runs = run_sweep(loaded, parsed, seed)
            if output_format == "json":
                doc = {"sweep": parsed.key, "runs": [{"value": label, **to_json(r)} for label, r in runs]}
                typer.echo(json_output("simulate", [str(scenario)], json.dumps(doc, default=_nan_safe)),
                           nl=False)
            else:
                typer.echo(render_sweep(parsed.key, runs))
            if export is not None:
                for label, result in runs:
                    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in label)
                    export_dump(result, export / f"{parsed.key}={safe}")
                typer.echo(f"wrote {len(runs)} dumps under {export}", err=True)
            return EXIT_OK

        raise typer.Exit(guarded(run))


def _nan_safe(value: object) -> object:
    if isinstance(value, float) and math.isnan(value):
        return None
    return str(value)
