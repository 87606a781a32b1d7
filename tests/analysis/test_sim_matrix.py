"""The done-when matrix: dumps exported by the simulator (truth known) for every scenario.

Scenarios: sample_configs/scenarios/*.yaml (their ground_truth block). The network scenarios are
told apart with the link bandwidth the scenario states (--bandwidth on the CLI): metrics alone show
"receivers idle, senders' output pools full" for both, and the seed separates them by throughput
against the link.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from flinktune.analysis import AnalysisOptions, analyze
from flinktune.situation import Environment

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCENARIOS = Path(__file__).resolve().parents[2] / "sample_configs" / "scenarios"

# scenario -> (origin vertex, cause)
EXPECTED = {
    "healthy": (None, None),
    "slow-sink": ("Sink: Writer", "all_busy"),
    "slow-middle-operator": ("Enrich", "all_busy"),
    "hot-subtask": ("KeyedAgg", "hot_subtask"),
    # A network cause has no busy vertex: the origin reported is the receiving side of the link.
    "few-credits-long-rtt": ("Sink: Writer", "too_few_credits"),
    "network-bound": ("Sink: Writer", "network_bottleneck"),
}


@pytest.fixture(scope="module")
def dumps(tmp_path_factory) -> dict[str, tuple[Path, object]]:  # type: ignore[no-untyped-def]
    sim = pytest.importorskip("flinktune.sim")
    out: dict[str, tuple[Path, object]] = {}
    base = tmp_path_factory.mktemp("sim")
    for name in EXPECTED:
        scenario = sim.load_scenario(SCENARIOS / f"{name}.yaml")
        result = sim.run_scenario(scenario, np.random.default_rng(7))
        sim.export_dump(result, base / name)
        out[name] = (base / name, scenario)
    return out


@pytest.mark.parametrize("name", list(EXPECTED))
def test_origin_and_cause(spark, dumps, name: str) -> None:  # type: ignore[no-untyped-def]
    folder, scenario = dumps[name]
    env = Environment(bandwidth_bytes_per_s=scenario.cluster.bandwidth, rtt_s=scenario.cluster.rtt)  # type: ignore[attr-defined]
    result = analyze(AnalysisOptions(inputs=(str(folder),), env=env), session=spark)
    (job,) = result.jobs
    want_origin, want_cause = EXPECTED[name]
    truth = scenario.ground_truth or {}  # type: ignore[attr-defined]
    if want_origin is None:
        assert job.origins == () and result.findings == ()
        return
    (origin,) = job.origins
    assert (origin.name, origin.cause) == (want_origin, want_cause)
    if truth.get("bottleneck_vertex"):
        assert origin.name == truth["bottleneck_vertex"]
    assert set(truth.get("backpressured_vertices", [])) <= set(origin.upstream_backpressured)
    if want_cause == "hot_subtask":
        assert origin.hot_subtask == truth["bottleneck_subtasks"][0]
    codes = {f.code for f in result.findings}
    assert "FTA001" in codes
    assert {
        "all_busy": "FTA002",
        "hot_subtask": "FTA003",
        "network_bottleneck": "FTA004",
        "too_few_credits": "FTA005",
    }[want_cause] in codes


def test_without_bandwidth_network_causes_are_flagged_as_ambiguous(spark, dumps) -> None:  # type: ignore[no-untyped-def]
    folder, _ = dumps["network-bound"]
    result = analyze(AnalysisOptions(inputs=(str(folder),)), session=spark)
    assert result.jobs[0].origins[0].cause == "network_or_credits"
    assert "FTA007" in {f.code for f in result.findings}
