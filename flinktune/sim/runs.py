"""``flinktune simulate``: one scenario run, or one run per value of a sweep, and their dumps."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from flinktune.sim.engine import run_scenario
from flinktune.sim.result import SimResult
from flinktune.sim.scenario import Scenario
from flinktune.sim.sweep import Sweep, variant


@dataclass(frozen=True)
class SimulateResult:
    """What ``simulate`` ran: ``runs`` are (label, result) with the scenario's name as the label of a
    single run and the swept value as that of each sweep run."""

    scenario: Scenario
    runs: tuple[tuple[str, SimResult], ...]
    sweep: str | None = None             # the swept key
    charts: bool = True                  # the text report draws charts over time (--charts)
    exported: str | None = None          # what --export wrote


def simulate(scenario: Scenario, *, seed: int = 1, sweep: Sweep | None = None, reference: bool = False,
             export: Path | None = None, charts: bool = True,
             progress: Callable[[str], None] | None = None) -> SimulateResult:
    """Run ``scenario`` (each sweep value with a generator seeded identically: common random
    numbers); ``reference``: every subtask simulated, also in a large job that repeats per
    TaskManager block; ``export``: metrics dumps written there."""
    say = progress or (lambda _stage: None)
    fold = False if reference else None
    runs: list[tuple[str, SimResult]] = []
    if sweep is None:
        say(f"simulating {scenario.name} ({scenario.duration:g}s)")
        runs.append((scenario.name, run_scenario(scenario, np.random.default_rng(seed), fold=fold)))
    else:
        for index, raw in enumerate(sweep.values, 1):
            say(f"simulating {sweep.key}={raw} ({index}/{len(sweep.values)})")
            runs.append((raw, run_scenario(variant(scenario, sweep.key, raw), np.random.default_rng(seed),
                                           fold=fold)))
    exported = None
    if export is not None:
        from flinktune.sim.export import export_dump

        say(f"writing the metrics dump{'s' if sweep is not None else ''} into {export}")
        if sweep is None:
            path = export_dump(runs[0][1], export)
            exported = f"wrote {path} and {path.parent / 'plan.json'}"
        else:
            for label, result in runs:
                safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in label)
                export_dump(result, export / f"{sweep.key}={safe}")
            exported = f"wrote {len(runs)} dumps under {export}"
    return SimulateResult(scenario, tuple(runs), None if sweep is None else sweep.key, charts, exported)
