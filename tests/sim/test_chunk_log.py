"""Logged source chunks (flinktune.sim.chunklog) give exactly the results of writing every chunk."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from simhelpers import run, scenario

from flinktune.sim import chunklog, task
from flinktune.sim.result import SimResult


def _job(**network: Any) -> Any:
    vertices = [
        {"name": "src", "parallelism": 4, "capacity": 100_000.0, "record_size": {"fixed": 200}},
        {"name": "op", "parallelism": 4, "capacity": 300_000.0, "input": {"ship_strategy": "HASH"}},
        {"name": "sink", "parallelism": 4, "capacity": 300_000.0, "input": {"ship_strategy": "HASH"}},
    ]
    top: dict[str, Any] = {
        "duration": 0.6, "warmup": 0.1, "sample_interval": 0.05, "latency_sample_every": 1,
        "cluster": {"task_managers": 2, "slots_per_tm": 2},
        "network": {"segment_size": 8192, "buffer_timeout": 0.005, **network},
        "checkpoints": {"interval": 0.1},
    }
    return scenario(vertices, **top)


def _same(a: SimResult, b: SimResult) -> None:
    for field in ("t_s", "vertex", "subtask", "metric", "value"):
        np.testing.assert_array_equal(getattr(a.samples, field), getattr(b.samples, field))
    # repr: the statistics hold NaN where nothing was measured (NaN != NaN)
    assert repr(a.channels) == repr(b.channels)
    assert repr(a.vertices) == repr(b.vertices)
    assert a.invariants == b.invariants
    assert a.checkpoints_completed == b.checkpoints_completed


@pytest.mark.parametrize("network", [{}, {"output_pool_size": 6}], ids=["free", "small-pool"])
def test_logged_chunks_match_chunk_by_chunk_writes(monkeypatch: pytest.MonkeyPatch, network: Any) -> None:
    # latency sampled on every record (logged runs expanded), an operator downstream (source
    # times per record), barriers cutting buffers, a short flusher; a small pool makes sources
    # block part-way through chunks
    logged = 0

    class Counting(chunklog.ChunkLog):
        def add(self, start: int, n: int, t: float) -> None:
            nonlocal logged
            logged += 1
            super().add(start, n, t)

    sc = _job(**network)
    monkeypatch.setattr(task, "ChunkLog", Counting)
    with_log = run(sc, seed=5, check_invariants=True, drain=True)
    assert logged > 0
    monkeypatch.setattr(task, "ChunkLog", lambda *args: None)
    without = run(sc, seed=5, check_invariants=True, drain=True)
    _same(with_log, without)
    assert with_log.invariants.records_conserved and with_log.invariants.fifo_violations == 0
