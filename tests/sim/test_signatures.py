"""The sample scenarios produce the metric signatures the seed's tables describe.

Network-stack part 2 (Kruber & Nowojski, 2019), "Backpressure" and "Resource Usage / Throughput":
- a slow receiver has high inPoolUsage while its upstream senders have high outPoolUsage and are
  backpressured;
- a network bottleneck shows as receivers' inPoolUsage low while senders' outPoolUsage is high;
- too few credits for the RTT: low throughput, senders' outPoolUsage near 100%, receivers'
  inPoolUsage low.
Gauge semantics are Flink 1.9+: floating buffers a channel holds without data count as unused
(FloatingBuffersUsageGauge subtracts RemoteInputChannel.unsynchronizedGetFloatingBuffersAvailable).
"""

from __future__ import annotations

from simhelpers import run, sample, subtask_mean

SHORT = {"duration": 6.0, "warmup": 2.0, "sample_interval": 0.5}


def test_healthy_has_no_backpressure() -> None:
    result = run(sample("healthy", **SHORT))
    for vi, vertex in enumerate(result.vertices):
        assert vertex.backpressured_ms_per_s < 50, vertex.name
        assert vertex.idle_ms_per_s > 800, vertex.name
        if vi < len(result.vertices) - 1:
            assert vertex.out_pool_usage < 0.5
        if vi > 0:
            assert vertex.in_pool_usage < 0.2
    source_rate = result.scenario.job.vertices[0].rate * result.scenario.job.vertices[0].parallelism
    assert abs(result.vertices[-1].records_in_per_s / source_rate - 1) < 0.05


def test_slow_sink() -> None:
    result = run(sample("slow-sink", **SHORT))
    source, agg, sink = result.vertices
    assert sink.busy_ms_per_s > 950 and sink.in_pool_usage > 0.9
    for upstream in (source, agg):
        assert upstream.out_pool_usage > 0.9 and upstream.backpressured_ms_per_s > 500
    # throughput is the sink's capacity
    capacity = result.scenario.job.vertices[2].capacity * 4
    assert abs(sink.records_in_per_s / capacity - 1) < 0.05


def test_slow_middle_operator() -> None:
    result = run(sample("slow-middle-operator", **SHORT))
    source, middle, sink = result.vertices
    assert middle.busy_ms_per_s > 950 and middle.in_pool_usage > 0.9 and middle.out_pool_usage < 0.5
    assert source.out_pool_usage > 0.9 and source.backpressured_ms_per_s > 500
    assert sink.idle_ms_per_s > 800 and sink.in_pool_usage < 0.2


def test_one_hot_subtask() -> None:
    result = run(sample("hot-subtask", **SHORT))
    hot = 2
    assert subtask_mean(result, "busyTimeMsPerSecond", 1, hot) > 950
    assert subtask_mean(result, "inPoolUsage", 1, hot) > 0.9
    assert subtask_mean(result, "inputFloatingBuffersUsage", 1, hot) > 0.9
    for cold in (0, 1, 3):
        assert subtask_mean(result, "busyTimeMsPerSecond", 1, cold) < 500
        assert subtask_mean(result, "inPoolUsage", 1, cold) < 0.2
    for src in range(4):
        assert subtask_mean(result, "backPressuredTimeMsPerSecond", 0, src) > 500


def test_too_few_credits_for_a_long_rtt() -> None:
    result = run(sample("few-credits-long-rtt", **SHORT))
    source, sink = result.vertices
    capacity = result.scenario.job.vertices[0].capacity * 4
    assert source.records_out_per_s < 0.5 * capacity
    assert source.out_pool_usage > 0.9
    assert sink.in_pool_usage < 0.1 and sink.idle_ms_per_s > 800


def test_network_bound() -> None:
    result = run(sample("network-bound", **SHORT))
    source, sink = result.vertices
    assert source.out_pool_usage > 0.9 and source.backpressured_ms_per_s > 500
    assert sink.in_pool_usage < 0.1 and sink.idle_ms_per_s > 800
    # the remote channels together carry about the NIC's bandwidth
    sc = result.scenario
    remote = sum(c.bytes_per_s for c in result.channels if c.remote)
    nic_total = sc.cluster.bandwidth * sc.cluster.task_managers
    assert 0.85 * nic_total < remote <= nic_total
