"""Credit loop, buffer timeout and in-flight data: formulas, properties, input validation.

Sources: the network-stack deep dive (2019) for the mechanics; the docs' network memory tuning page
(D:1.15..2.0p:deployment/memory/network_mem_tuning, flink-facts §6) for
``buffers = throughput * roundtrip / buffer size`` with the worked example 320 MB/s * 1 ms / 32 KB = 10;
ExecutionOptions @1.13..1.17 vs @1.18+ (FLINK-32023) for the buffer-timeout keys.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flinktune.errors import ModelInputError
from flinktune.model.credit import (
    bandwidth_delay_product_bytes,
    buffers_for_throughput,
    channel_throughput_bytes_per_s,
    channels_per_connection,
    credit_ceiling_bytes_per_s,
    credits_per_channel,
    fair_share_bytes_per_s,
    floating_skew_gain,
    remote_channels_per_taskmanager,
)
from flinktune.model.inflight import (
    debloated_inflight_bytes,
    drain_time_s,
    gate_inflight_bytes,
    partition_inflight_bytes,
)
from flinktune.model.timeout import (
    added_latency_s,
    buffers_per_s,
    chunk_bytes,
    fill_ratio,
    fill_time_s,
    leaves_full,
    max_throughput_bytes_per_s,
    timeout_throughput_cost,
)
from flinktune.model.timeout_mode import buffer_timeout_mode
from flinktune.versions import FlinkVersion

KIB = 1024


def test_docs_buffers_for_throughput_example() -> None:
    # network_mem_tuning: 320 MB/s * 1 ms / 32 KB = 10 buffers
    assert buffers_for_throughput(320e6, 32_000, 1e-3) == 10
    assert buffers_for_throughput(320e6, 32 * KIB, 1e-3) == 10


def test_credit_ceiling_and_bdp() -> None:
    # 2 credits of 32 KiB per 1 ms round trip = 65.536 MB/s
    assert credit_ceiling_bytes_per_s(2, 32 * KIB, 1e-3) == pytest.approx(65_536_000)
    assert credit_ceiling_bytes_per_s(2, 32 * KIB, 1e-3, 1e-3) == pytest.approx(32_768_000)
    assert bandwidth_delay_product_bytes(1.25e9, 2e-3) == pytest.approx(2.5e6)
    assert credit_ceiling_bytes_per_s(0, 32 * KIB, 1e-3) == 0


def test_multiplexing_and_fair_share() -> None:
    # deep dive: parallelism 4, 2 TaskManagers with 2 slots: each TM sends on 2 * 2 remote channels,
    # all 4 on the one TCP connection to the other TaskManager.
    assert remote_channels_per_taskmanager(4, 2) == 4
    assert channels_per_connection(2) == 4
    assert remote_channels_per_taskmanager(8, 8) == 0
    assert fair_share_bytes_per_s(1.25e9, 4) == pytest.approx(3.125e8)
    assert fair_share_bytes_per_s(1.25e9, 0) == pytest.approx(1.25e9)


def test_local_channels_bypass_credits() -> None:
    got = channel_throughput_bytes_per_s([2, 2], 32 * KIB, 1e-3, 1.25e9, 4, local=[False, True])
    assert got[0] == pytest.approx(65_536_000) and math.isinf(got[1])


def test_floating_buffers_under_skew() -> None:
    # one hot channel of 100 gets all 8 floating buffers; all hot share them
    assert credits_per_channel(2, 8, 1) == 10
    assert credits_per_channel(2, 8, 100) == pytest.approx(2.08)
    assert floating_skew_gain(2, 8, 100, 1) == pytest.approx(10 / 2.08)
    assert floating_skew_gain(2, 8, 100, 100) == pytest.approx(1.0)
    with pytest.raises(ModelInputError):
        floating_skew_gain(2, 8, 10, 11)


def test_timeout_regimes() -> None:
    # 1000 records/s of 100 B into 32 KiB buffers: 327.68 ms to fill
    assert fill_time_s(1000, 100, 32 * KIB) == pytest.approx(0.32768)
    # timeout 100 ms: 10 KB leave per flush, ~31 % full, latency <= timeout, half on average
    assert chunk_bytes(1000, 100, 32 * KIB, 0.1) == pytest.approx(10_000)
    assert fill_ratio(1000, 100, 32 * KIB, 0.1) == pytest.approx(10_000 / 32_768)
    assert added_latency_s(1000, 100, 32 * KIB, 0.1) == pytest.approx((0.05, 0.1))
    assert not leaves_full(1000, 100, 32 * KIB, 0.1)
    # timeout 0: every record is a buffer, no added latency
    assert chunk_bytes(1000, 100, 32 * KIB, 0.0) == 100
    assert buffers_per_s(1000, 100, 32 * KIB, 0.0) == pytest.approx(1000)
    assert added_latency_s(1000, 100, 32 * KIB, 0.0) == (0.0, 0.0)
    # disabled: full buffers, waiting as long as filling takes
    assert fill_ratio(1000, 100, 32 * KIB, math.inf) == 1
    assert added_latency_s(1000, 100, 32 * KIB, math.inf)[1] == pytest.approx(0.32768)
    # high load: buffers fill before the flusher fires
    assert leaves_full(1e6, 100, 32 * KIB, 0.1)
    assert fill_ratio(1e6, 100, 32 * KIB, 0.1) == 1


def test_throughput_cost_of_partly_filled_buffers() -> None:
    full = timeout_throughput_cost(1e6, 100, 32 * KIB, 0.1, 1.25e9)
    assert full == pytest.approx(1.0)
    tiny = timeout_throughput_cost(1000, 100, 32 * KIB, 0.0, 1.25e9, per_buffer_overhead_s=5e-6,
                                   per_buffer_header_bytes=39)
    assert 0 < tiny < 0.05
    free = timeout_throughput_cost(1000, 100, 32 * KIB, 0.0, 1.25e9, per_buffer_overhead_s=0,
                                   per_buffer_header_bytes=0)
    assert free == pytest.approx(1.0)
    # the link never carries more payload than its bandwidth, and small messages carry less
    assert max_throughput_bytes_per_s(32 * KIB, 1.25e9) < 1.25e9
    assert max_throughput_bytes_per_s(100, 1.25e9) < max_throughput_bytes_per_s(32 * KIB, 1.25e9)


def test_inflight_and_drain() -> None:
    # docs bound (C*bpc + fpg) * segment: 100 channels => 208 buffers = 6.5 MiB
    assert gate_inflight_bytes(100, 2, 8, 32 * KIB) == 208 * 32 * KIB
    assert partition_inflight_bytes(100, 2, 8, 10, 32 * KIB) == 208 * 32 * KIB
    assert partition_inflight_bytes(1, 2, 8, 10, 32 * KIB) == 10 * 32 * KIB   # per-subpartition cap
    assert drain_time_s(208 * 32 * KIB, 208 * 32 * KIB) == pytest.approx(1.0)
    assert debloated_inflight_bytes(1e6, 1.0) == pytest.approx(1e6)


def test_buffer_timeout_semantics_by_version() -> None:
    assert buffer_timeout_mode(FlinkVersion(1, 17)).kind == "interval"
    assert buffer_timeout_mode(FlinkVersion(1, 17), interval_s=0).kind == "every-record"
    with pytest.raises(ModelInputError, match=r"does not exist in Flink 1\.17"):
        buffer_timeout_mode(FlinkVersion(1, 17), enabled=False)
    off = buffer_timeout_mode(FlinkVersion(1, 18), enabled=False)
    assert off.kind == "when-full" and math.isinf(off.effective_timeout_s)
    assert buffer_timeout_mode(FlinkVersion(2, 0), batch_runtime=True).kind == "when-full"
    assert "execution.buffer-timeout.interval" in buffer_timeout_mode(FlinkVersion(1, 20)).explanation
    with pytest.raises(ModelInputError):
        buffer_timeout_mode(FlinkVersion(1, 20), interval_s=-1)


@pytest.mark.parametrize("call", [
    lambda: credit_ceiling_bytes_per_s(2, 32768, 0),
    lambda: credit_ceiling_bytes_per_s(-1, 32768, 1e-3),
    lambda: credit_ceiling_bytes_per_s(2, 32768, float("nan")),
    lambda: credit_ceiling_bytes_per_s(2, [32768, 0], 1e-3),
    lambda: bandwidth_delay_product_bytes(0, 1e-3),
    lambda: buffers_for_throughput(1e6, 32768, -1),
    lambda: fair_share_bytes_per_s(-1, 3),
    lambda: remote_channels_per_taskmanager(2.5, 1),
    lambda: fill_time_s(0, 100, 32768),
    lambda: chunk_bytes(1, 100, 32768, float("nan")),
    lambda: gate_inflight_bytes(0, 2, 8, 32768),
    lambda: drain_time_s(100, 0),
    lambda: credit_ceiling_bytes_per_s("fast", 32768, 1e-3),
])
def test_invalid_inputs(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ModelInputError):
        call()


def test_error_names_the_bad_element() -> None:
    with pytest.raises(ModelInputError,
                       match=r"rtt_s must be positive and finite; got 0\.0 at index 1 \(zero\)"):
        credit_ceiling_bytes_per_s(2, 32768, [1e-3, 0.0])


positive = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(credits=st.integers(0, 1000), seg=st.sampled_from([4096, 32768, 65536]), rtt=positive,
       bw=st.floats(1e3, 1e11), sharing=st.integers(0, 100_000), free=st.floats(0, 1))
def test_throughput_never_exceeds_bandwidth(credits: int, seg: int, rtt: float, bw: float, sharing: int,
                                            free: float) -> None:
    assert channel_throughput_bytes_per_s(credits, seg, rtt, bw, sharing, free) <= bw * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(credits=st.integers(0, 1000), extra=st.integers(1, 100), seg=st.sampled_from([4096, 32768]),
       rtt=positive, bw=st.floats(1e3, 1e11), sharing=st.integers(1, 10_000))
def test_more_credits_never_lower_the_ceiling(credits: int, extra: int, seg: int, rtt: float, bw: float,
                                              sharing: int) -> None:
    more = credit_ceiling_bytes_per_s(credits + extra, seg, rtt)
    assert more >= credit_ceiling_bytes_per_s(credits, seg, rtt)
    assert channel_throughput_bytes_per_s(credits + extra, seg, rtt, bw, sharing) >= \
        channel_throughput_bytes_per_s(credits, seg, rtt, bw, sharing)


@settings(max_examples=100, deadline=None)
@given(rate=st.floats(1, 1e7), rec=st.integers(1, 100_000), timeout_s=st.floats(0, 10))
def test_added_latency_never_exceeds_the_timeout(rate: float, rec: int, timeout_s: float) -> None:
    mean, worst = added_latency_s(rate, rec, 32768, timeout_s)
    assert worst <= timeout_s + 1e-12 and mean <= worst
    assert 0 < fill_ratio(rate, rec, 32768, timeout_s) <= 1


def test_vectorised_shapes() -> None:
    rtt = np.linspace(1e-4, 1e-2, 1000)
    out = credit_ceiling_bytes_per_s(np.arange(1, 1001)[:, None] * 0 + 2, 32768, rtt)
    assert out.shape == (1000, 1000)
    assert isinstance(credit_ceiling_bytes_per_s(2, 32768, 1e-3), float)
