"""Steady-state throughput of the simulator against the analytic model's per-channel ceiling.

The model (flinktune.model.credit, after the network-stack deep dive, 2019): a remote channel
carries at most ``credits * segment / (rtt + receiver_free)`` and at most its fair share
``bandwidth / remote channels per TaskManager`` of the NIC. In the simulator a credit comes back
one RTT after its buffer has been serialised onto the wire, so ``receiver_free`` is the buffer's
wire time ``segment / bandwidth`` (per-message costs are zero here). Floating buffers are 0 so the
credits are exactly ``buffers-per-channel``, and the sender pool is made large so that the credit
loop, not the sender's pool of ``Sp + 1`` buffers, is what binds (with ``bpc = 1`` and
``floating = 0`` Flink's own pool size costs about 5%, see docs/simulator.md).
"""

from __future__ import annotations

import itertools

import numpy as np
from simhelpers import run, scenario

from flinktune.model.credit import channel_throughput_bytes_per_s, remote_channels_per_taskmanager

RTTS_S = (0.0002, 0.0005, 0.001, 0.005, 0.02)
BANDWIDTHS = (1.25e7, 1.25e8, 1.25e9)          # 100 Mbit/s, 1 Gbit/s, 10 Gbit/s
CREDITS = (1, 2, 4, 8)
SHAPES = ((8192, 1), (32768, 2), (32768, 1), (8192, 2))  # (segment bytes, slots per TaskManager)


def _point(rtt: float, bandwidth: float, credits: int, segment: int, slots: int) -> tuple[float, float]:
    parallelism = 2 * slots  # two TaskManagers: every producer has `slots` remote consumers
    sharing = int(remote_channels_per_taskmanager(parallelism, slots))
    expected = float(channel_throughput_bytes_per_s(credits, segment, rtt, bandwidth, sharing,
                                                    receiver_free_s=segment / bandwidth))
    cycle = rtt + segment / bandwidth
    warmup = 15 * cycle + 0.002
    measure = max(30 * cycle, 250 * segment / expected)
    sc = scenario(
        [{"name": "src", "parallelism": parallelism, "capacity": 1e9, "record_size": {"fixed": segment // 4}},
         {"name": "sink", "parallelism": parallelism, "capacity": 1e9, "input": {"ship_strategy": "HASH"}}],
        duration=warmup + measure, warmup=warmup, sample_interval=(warmup + measure) / 2,
        cluster={"task_managers": 2, "slots_per_tm": slots, "bandwidth": bandwidth, "rtt": rtt},
        network={"segment_size": segment, "buffers_per_channel": credits, "floating_buffers_per_gate": 0,
                 "buffer_timeout": "off", "output_pool_size": 64},
        costs={"message_overhead": 0.0, "message_overhead_bytes": 0, "buffer_overhead": 0.0,
               "flush_overhead": 0.0},
    )
    result = run(sc, seed=3)
    remote = [c.bytes_per_s for c in result.channels if c.remote]
    return float(np.mean(remote)), expected


def test_throughput_matches_the_credit_and_bandwidth_ceiling_on_a_grid() -> None:
    points = list(itertools.product(RTTS_S, BANDWIDTHS, CREDITS))
    assert len(points) >= 50
    failures = []
    regimes = set()
    for i, (rtt, bandwidth, credits) in enumerate(points):
        segment, slots = SHAPES[i % len(SHAPES)]
        got, expected = _point(rtt, bandwidth, credits, segment, slots)
        credit_bound = credits * segment / (rtt + segment / bandwidth) < bandwidth / (slots * slots)
        regimes.add(credit_bound)
        if abs(got / expected - 1) > 0.05:
            failures.append(f"rtt={rtt} bw={bandwidth:g} credits={credits} seg={segment} slots={slots}: "
                            f"sim {got:.4g} B/s vs model {expected:.4g} B/s")
    assert regimes == {True, False}, "the grid must cover both the credit- and the bandwidth-bound regime"
    assert failures == []
