"""The credit-flow simulator: a small event kernel and Flink's network stack on top of it.

Public API: ``load_scenario(path)``, ``run_scenario(scenario, rng)``, ``export_dump(result, dir)``.
"""

from __future__ import annotations

from flinktune.sim.engine import run_scenario
from flinktune.sim.export import export_dump
from flinktune.sim.result import SimResult
from flinktune.sim.scenario import Scenario, load_scenario, scenario_from_text

__all__ = ["Scenario", "SimResult", "export_dump", "load_scenario", "run_scenario", "scenario_from_text"]
