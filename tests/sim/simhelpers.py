"""Small builders shared by the simulator tests (plain functions, no fixtures needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from flinktune.sim import load_scenario, run_scenario
from flinktune.sim.result import SimResult
from flinktune.sim.scenario import PYTHON_VALUES, Scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "sample_configs" / "scenarios"


def scenario(vertices: list[dict[str, Any]], **top: Any) -> Scenario:
    """A scenario from Python values (times as float seconds)."""
    data: dict[str, Any] = {"name": top.pop("name", "test"), "job": {"vertices": vertices}}
    data.update(top)
    return Scenario.model_validate(data, context=PYTHON_VALUES)


def sample(name: str, **changes: Any) -> Scenario:
    """A sample scenario, optionally shortened (``duration=``, ``warmup=``, ``sample_interval=``)."""
    loaded = load_scenario(SCENARIOS / f"{name}.yaml")
    if not changes:
        return loaded
    data = loaded.model_dump()
    data.update(changes)
    return Scenario.model_validate(data, context=PYTHON_VALUES)


def run(sc: Scenario, seed: int = 7, **kwargs: Any) -> SimResult:
    return run_scenario(sc, np.random.default_rng(seed), **kwargs)


def subtask_mean(result: SimResult, metric: str, vertex: int, subtask: int | None = None) -> float:
    """Mean of a sampled metric after warm-up (over subtasks when ``subtask`` is None)."""
    s = result.samples
    code = s.metric_names.index(metric)
    mask = (s.metric == code) & (s.vertex == vertex) & (s.t_s > result.scenario.warmup)
    if subtask is not None:
        mask &= s.subtask == subtask
    values = s.value[mask]
    return float(np.nanmean(values))
