"""Invariants under random small scenarios (hypothesis): credits never negative, buffers
conserved (sender pools, exclusive and floating buffers), FIFO per channel, every record that
was sent arrives exactly once after a drain."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from simhelpers import run, scenario


@st.composite
def scenarios(draw: st.DrawFn) -> Any:
    tms = draw(st.integers(1, 2))
    slots = draw(st.integers(1, 2))
    width = tms * slots
    n_vertices = draw(st.integers(2, 3))
    credit = draw(st.booleans())
    bpc = draw(st.integers(0 if credit else 1, 3))
    segment = draw(st.sampled_from([256, 1024, 4096]))
    vertices: list[dict[str, Any]] = []
    previous = 0
    for index in range(n_vertices):
        parallelism = draw(st.integers(1, width))
        vertex: dict[str, Any] = {"name": f"v{index}", "parallelism": parallelism,
                                  "capacity": draw(st.sampled_from([2000.0, 8000.0, 30000.0]))}
        if index == 0:
            low = draw(st.integers(1, segment))
            vertex["record_size"] = {"uniform": [low, low + draw(st.integers(0, 3 * segment))]}
            if draw(st.booleans()):
                vertex["rate"] = draw(st.sampled_from([500.0, 3000.0]))
        else:
            strategies = ["HASH", "REBALANCE"] + (["FORWARD"] if parallelism == previous else [])
            vertex["input"] = {"ship_strategy": draw(st.sampled_from(strategies))}
            if draw(st.booleans()):
                vertex["schedule"] = [{"at": 0.1, "factor": draw(st.sampled_from([0.05, 0.5, 2.0])),
                                       "subtasks": [0]}]
        previous = parallelism
        vertices.append(vertex)
    top: dict[str, Any] = {
        "duration": 0.3, "warmup": 0.0, "sample_interval": 0.03,
        "cluster": {"task_managers": tms, "slots_per_tm": slots,
                    "bandwidth": draw(st.sampled_from([1.25e6, 1.25e7, 1.25e8])),
                    "rtt": draw(st.sampled_from([0.0001, 0.001, 0.005]))},
        "network": {"segment_size": segment, "buffers_per_channel": bpc,
                    "floating_buffers_per_gate": draw(st.integers(0, 4)),
                    "max_buffers_per_channel": draw(st.integers(2, 10)),
                    "buffer_timeout": draw(st.sampled_from([0.0, 0.001, 0.01, None])),
                    "credit_based": credit, "tcp_window": draw(st.sampled_from([2048, 65536]))},
    }
    if credit and bpc >= 1 and draw(st.booleans()):
        top["checkpoints"] = {"interval": 0.05}
    return scenario(vertices, **top)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=scenarios(), seed=st.integers(0, 2**16))
def test_invariants_hold_on_random_scenarios(sc: Any, seed: int) -> None:
    # check_invariants re-checks pool, credit and floating-buffer accounting at every sample and
    # raises SimInvariantError on the first violation (a negative credit raises where it is spent)
    result = run(sc, seed=seed, check_invariants=True, drain=True)
    inv = result.invariants
    assert inv.fifo_violations == 0
    assert inv.drained, inv.detail
    assert inv.records_conserved, inv.detail
    if sc.network.credit_based:
        # a sender never holds more credit than the receiver has buffers for its channel
        limit = sc.network.buffers_per_channel + max(1, sc.network.floating_buffers_per_gate)
        assert all(c.max_credit <= limit for c in result.channels if c.remote)
    if sc.checkpoints is not None:
        assert result.checkpoints_completed >= 1
