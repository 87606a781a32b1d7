"""The fast path (one repeating block of TaskManagers, flinktune.sim.symmetry) against the reference core.

Folding is exact in structure (every channel keeps its rates, credits, pools and local/remote
class) but draws keys and flusher phases for the representatives only, so the two runs agree
statistically, not sample by sample. Agreement is required within 2%: throughput relative,
backpressured time within 2% of its 1000 ms/s scale, pool usages within 2% of their 0..1 scale.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from simhelpers import SCENARIOS, run, sample, scenario

from flinktune.sim import export_dump, load_scenario, run_scenario
from flinktune.sim.scenario import PYTHON_VALUES, Scenario
from flinktune.sim.symmetry import fold_block

SYMMETRIC = ("healthy", "slow-sink", "slow-middle-operator", "few-credits-long-rtt", "network-bound",
             "network-stack-bound")


def scaled(name: str, parallelism: int, slots: int, seconds: float, warmup: float,
           weights: list[float] | None = None) -> Scenario:
    data: dict[str, Any] = load_scenario(SCENARIOS / f"{name}.yaml").model_dump()
    data.update(duration=seconds, warmup=warmup, sample_interval=min(1.0, seconds))
    data["cluster"].update(task_managers=parallelism // slots, slots_per_tm=slots)
    for vertex in data["job"]["vertices"]:
        vertex["parallelism"] = parallelism
        if weights is not None and vertex.get("input") and vertex["input"].get("hot_subtask"):
            vertex["input"].update(hot_subtask=None, weights=weights)
    return Scenario.model_validate(data, context=PYTHON_VALUES)


def hot_every(parallelism: int, period: int, index: int, share: float) -> list[float]:
    return [share if s % period == index else (1 - share) / (period - 1) for s in range(parallelism)]


def test_fold_block_follows_the_scenarios_symmetry() -> None:
    # shipped jobs have 4 subtasks per vertex: a block of at least 4 is the whole job
    for name in SYMMETRIC:
        assert fold_block(sample(name)) is None or name == "network-stack-bound"
    assert fold_block(sample("network-stack-bound")) == 4    # 2 TaskManagers x 4 slots
    assert fold_block(scaled("slow-sink", 64, 4, 1.0, 0.2)) == 4
    assert fold_block(scaled("slow-sink", 64, 2, 1.0, 0.2)) == 4   # two TaskManagers per block
    # one hot subtask or one slow subtask breaks every translation
    assert fold_block(scaled("hot-subtask", 64, 4, 1.0, 0.2)) is None
    assert fold_block(sample("seed-multiplex-credit")) is None
    # the skew repeated every 16 subtasks (4 TaskManagers) folds into blocks of 16
    assert fold_block(scaled("hot-subtask", 64, 4, 1.0, 0.2, hot_every(64, 16, 2, 0.55))) == 16
    slow_tm = scenario([
        {"name": "src", "parallelism": 8, "capacity": 1000.0, "record_size": {"fixed": 100}},
        {"name": "sink", "parallelism": 8, "capacity": 1000.0, "subtask_factors": [1.0] * 7 + [0.5]},
    ], cluster={"task_managers": 4, "slots_per_tm": 2})
    assert fold_block(slow_tm) is None


def test_folded_result_covers_every_subtask_and_channel(tmp_path: Any) -> None:
    sc = scaled("slow-sink", 16, 2, 2.0, 0.5)
    result = run(sc, fold=True)
    assert result.extra["fold_copies"] == 4.0
    assert all(v.parallelism == 16 for v in result.vertices)
    assert len(result.channels) == 2 * 16 * 16
    pairs = {(c.producer, c.from_subtask, c.to_subtask) for c in result.channels}
    assert len(pairs) == len(result.channels)
    # local exactly when both ends share a TaskManager (2 slots each)
    assert all(c.remote == (c.from_subtask // 2 != c.to_subtask // 2) for c in result.channels)
    s = result.samples
    code = s.metric_names.index("outPoolUsage")
    for vertex in (0, 1):
        got = set(s.subtask[(s.metric == code) & (s.vertex == vertex)].tolist())
        assert got == set(range(16))
    assert np.all(np.diff(s.t_s) >= 0)
    path = export_dump(result, tmp_path / "dump")
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    assert sorted(set(table.column("subtask_index").to_pylist())) == list(range(16))


def test_folded_run_conserves_records_after_a_drain() -> None:
    sc = scaled("slow-middle-operator", 16, 4, 1.5, 0.5)
    result = run(sc, fold=True, drain=True, check_invariants=True)
    assert result.invariants.drained and result.invariants.records_conserved
    assert result.invariants.fifo_violations == 0


def test_auto_fold_only_for_large_jobs() -> None:
    small = run(sample("network-stack-bound", duration=0.5, warmup=0.1))
    assert small.extra["fold_copies"] == 1.0
    large = run_scenario(scaled("slow-sink", 64, 4, 0.2, 0.1), np.random.default_rng(1))
    assert large.extra["fold_copies"] == 16.0


def _assert_agree(reference: Any, fast: Any, label: str, pool_tolerance: float = 0.02,
                  every_rate: bool = True) -> None:
    """Throughput (the sinks' records in; with ``every_rate`` every vertex's in and out) within 2%."""
    sink_ref, sink_got = reference.vertices[-1].records_in_per_s, fast.vertices[-1].records_in_per_s
    assert sink_got == pytest.approx(sink_ref, rel=0.02), f"{label} throughput"
    for ref, got in zip(reference.vertices, fast.vertices, strict=True):
        where = f"{label} {ref.name}"
        for ref_rate, got_rate in ((ref.records_in_per_s, got.records_in_per_s),
                                   (ref.records_out_per_s, got.records_out_per_s)):
            if every_rate and not np.isnan(ref_rate):
                assert got_rate == pytest.approx(ref_rate, rel=0.02), where
        assert abs(got.backpressured_ms_per_s - ref.backpressured_ms_per_s) <= 20.0, where
        for ref_pool, got_pool in ((ref.out_pool_usage, got.out_pool_usage),
                                   (ref.in_pool_usage, got.in_pool_usage)):
            if not np.isnan(ref_pool):
                assert abs(got_pool - ref_pool) <= pool_tolerance, where


@pytest.mark.slow
@pytest.mark.parametrize("name", SYMMETRIC)
def test_fast_path_agrees_with_reference_on_shipped_scenarios(name: str) -> None:
    # the shipped jobs on 4 TaskManagers x 4 slots (p = 16, four blocks of 4)
    sc = scaled(name, 16, 4, 12.0, 2.0)
    reference = run(sc, seed=1, fold=False)
    fast = run(sc, seed=1, fold=True)
    assert fast.extra["fold_copies"] == 4.0
    # Credit-starved (50 ms RTT): the senders' output pools come out 0.02-0.03 lower folded (measured
    # 0.018 at 30 s, 0.026 at 12 s; throughput -1.1 to -1.5%): the channels one representative
    # feeds into a gate share its blocked state (docs/simulator.md, Large jobs).
    _assert_agree(reference, fast, name, 0.03 if name == "few-credits-long-rtt" else 0.02)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["slow-sink", "hot-every-16th"])
def test_fast_path_agrees_with_reference_at_p64(case: str) -> None:
    # the pools of 64 x 64 channels take about 2 s to fill: the steady state starts after that
    if case == "slow-sink":
        sc = scaled("slow-sink", 64, 4, 5.0, 2.5)
    else:
        sc = scaled("hot-subtask", 64, 4, 5.0, 2.5, hot_every(64, 16, 2, 0.55))
    reference = run(sc, seed=1, fold=False)
    fast = run(sc, seed=1, fold=True)
    assert fast.extra["fold_copies"] > 1
    # 2.5 s of steady state (the reference needs ~9 CPU s per simulated second here): upstream
    # vertices' rates over so short a window still include their 64 x 136-buffer pools filling and
    # draining (KeyedAgg in: 826k vs 752k records/s at one seed; at 30 s both give the sinks' rate),
    # so throughput is the sinks' rate here; backpressure and pools are checked on every vertex
    _assert_agree(reference, fast, case, every_rate=False)
