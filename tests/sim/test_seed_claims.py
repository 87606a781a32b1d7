"""The seed documents' claims, reproduced.

- Network-stack deep dive (Kruber, 2019), "Inflicting Backpressure (1)/(2)": with credit-based flow
  control an overloaded receiver (B.4) backpressures only its own logical channel, and its
  neighbour B.3 on the same multiplexed TCP connection keeps its rate; without credits (Flink < 1.5,
  ``taskmanager.network.credit-model: false`` until 1.9) B.4 stops the whole connection and B.3 is
  throttled too.
- "How Apache Flink handles backpressure" (Celebi, 2015): producer at 60% of its speed, consumer
  slowed to 30%: the producer follows to 30% and recovers when the consumer does; no record is lost
  or duplicated.
"""

from __future__ import annotations

import numpy as np
from simhelpers import run, sample

# subtask indices are 0-based: B.3 is subtask 2, B.4 is subtask 3; A.2 (subtask 1) feeds B.3
B3, B4 = 2, 3


def _b3_rate(name: str) -> tuple[float, float, float]:
    result = run(sample(name, duration=6.0, warmup=2.0))
    b3 = result.channel(1, B3).records_per_s
    b4 = result.channel(0, B4).records_per_s
    source_rate = result.scenario.job.vertices[0].capacity
    return b3, b4, source_rate


def test_with_credits_only_the_overloaded_channel_is_backpressured() -> None:
    b3, b4, source_rate = _b3_rate("seed-multiplex-credit")
    b4_capacity = 40000 * 0.1
    assert b4 <= b4_capacity * 1.02
    # B.3 gets everything its producer A.2 makes, although it shares the connection with B.4
    assert b3 >= 0.95 * source_rate


def test_without_credits_the_neighbour_on_the_connection_is_throttled_too() -> None:
    b3, b4, source_rate = _b3_rate("seed-multiplex-no-credit")
    assert b3 < 0.5 * source_rate
    # it moves only as fast as B.4 frees buffers for the messages queued in front of B.3's
    assert b3 < 2.0 * b4


def test_producer_follows_the_slowed_consumer_and_recovers() -> None:
    sc = sample("seed-backpressure-experiment")
    result = run(sc, drain=True)
    times, producer = result.samples.rate("numRecordsOut", 0)
    _, consumer = result.samples.rate("numRecordsIn", 1)
    full_speed = sc.job.vertices[0].capacity
    interval = sc.sample_interval
    # phases from the scenario: 60% (consumer fast), consumer at 30% in [4, 8) and [12, 16)
    phases = [(0.0, 4.0, 0.6), (4.0, 8.0, 0.3), (8.0, 12.0, 0.6), (12.0, 16.0, 0.3), (16.0, 20.0, 0.6)]
    settle = 2 * interval  # "within a few sampling intervals"
    for start, end, share in phases:
        window = (times > start + settle) & (times <= end)
        assert window.sum() >= 3
        got = producer[window] / full_speed
        assert np.all(np.abs(got - share) < 0.05 * share + 0.01), (start, got)
        follow = consumer[window] / full_speed
        assert np.all(np.abs(follow - share) < 0.05 * share + 0.01), (start, follow)
    # nothing lost, nothing duplicated, order kept
    assert result.invariants.drained
    assert result.invariants.records_conserved, result.invariants.detail
    assert result.invariants.fifo_violations == 0
