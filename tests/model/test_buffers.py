"""Buffers per gate / partition / TaskManager, and the "Insufficient number of network buffers" point.

Sources:
- [FACTS] /work/shared/reference/flink-facts.md §2.1-§2.6 (SIGF/IGSU/NSU/NBP @ 1.13..2.0p).
- [IGSU] flink-runtime/.../io/network/partition/consumer/InputGateSpecUtils.java (apache/flink, read at
  commit 012b8936e119): required = min(maxReq, C*bpc + 1); exclusive = min(bpc, (required-1) // C);
  maxReq default Integer.MAX_VALUE for pipelined, 1000 for blocking.
- [NSU] flink-runtime/.../shuffle/NettyShuffleUtils.java (same commit): partition min Sp+1 or
  sort-shuffle.min-buffers, bounded max Sp*bpc+fpg, sort max 4*Sp, final max(min, max).
- [SEED] network-stack-deep-dive (2019): pool bound
  "#channels * buffers-per-channel + floating-buffers-per-gate".
- [FLIP-148]: "at least 320M network memory per result partition if parallelism is set to 10000".
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flinktune.errors import ModelInputError
from flinktune.model.blocking import (
    batch_shuffle_read_check,
    blocking_partition_plan,
    default_batch_shuffle_read_bytes,
    hash_shuffle_min_bytes,
)
from flinktune.model.buffers import (
    Edge,
    JobGraph,
    PartitionType,
    Request,
    TaskManagerBuffers,
    Vertex,
    buffer_settings,
    busiest_taskmanager,
    chain_graph,
    fits,
    input_gate_buffers,
    insufficient_buffers_message,
    job_graph_from_plan,
    pool_bound,
    result_partition_buffers,
    worst_case_taskmanager_buffers,
)
from flinktune.model.layout import pointwise_consumer_range, pointwise_subpartitions, taskmanager_buffers
from flinktune.versions import FlinkVersion

V113, V114, V115, V116, V117, V120, V20 = (FlinkVersion(1, 13), FlinkVersion(1, 14), FlinkVersion(1, 15),
                                           FlinkVersion(1, 16), FlinkVersion(1, 17), FlinkVersion(1, 20),
                                           FlinkVersion(2, 0))
KIB = 1024


def test_seed_pool_bound() -> None:
    # [SEED] #channels * buffers-per-channel + floating-buffers-per-gate
    assert pool_bound(200, 2, 8) == 408
    gate = input_gate_buffers(buffer_settings(V120), 200)
    assert gate.target == pool_bound(200, 2, 8)
    part = result_partition_buffers(buffer_settings(V120), 200)
    assert part.maximum == pool_bound(200, 2, 8)


def test_flip148_hash_shuffle_320m_per_result_partition() -> None:
    # [FLIP-148]: 10,000 subpartitions x 32 KiB = 320,000 KiB ("320M"; = 312.5 MiB = 327.68 MB)
    assert hash_shuffle_min_bytes(10_000, 32 * KIB) == 320_000 * KIB == 327_680_000
    # Flink's actual pool minimum adds one buffer: Sp + 1 ([NSU])
    hash_part = result_partition_buffers(buffer_settings(V114), 10_000, PartitionType.BLOCKING)
    assert (hash_part.kind, hash_part.required, hash_part.maximum) == ("hash-blocking", 10_001, None)
    # while sort-merge needs a fixed sort-shuffle.min-buffers (512 from 1.15, 64 before)
    sort_part = result_partition_buffers(buffer_settings(V115), 10_000, PartitionType.BLOCKING)
    assert (sort_part.kind, sort_part.required, sort_part.maximum) == ("sort-blocking", 512, 40_000)
    old_settings = buffer_settings(V113, sort_shuffle_min_parallelism=1)
    old_sort = result_partition_buffers(old_settings, 10_000, "blocking")
    assert (old_sort.required, old_sort.maximum) == (64, None)


def test_blocking_files_and_read_memory() -> None:
    hash_plan = blocking_partition_plan(buffer_settings(V114), 100, 10_000, 32 * KIB)
    assert (hash_plan.files_per_partition, hash_plan.files_per_edge) == (10_000, 1_000_000)
    assert hash_plan.write_bytes == 10_001 * 32 * KIB
    sort_plan = blocking_partition_plan(buffer_settings(V120), 100, 10_000, 32 * KIB)
    assert (sort_plan.files_per_partition, sort_plan.files_per_edge, sort_plan.write_buffers) == (2, 200, 512)
    assert default_batch_shuffle_read_bytes(V114) == 32 * 1024**2
    assert default_batch_shuffle_read_bytes(V115) == 64 * 1024**2
    ok = batch_shuffle_read_check(64 * 1024**2, 128 * 1024**2, 32 * KIB, concurrent_partitions=4)
    assert ok.fits_in_framework_off_heap and ok.read_buffers == 2048 and ok.buffers_per_reader == 512
    assert not batch_shuffle_read_check(256 * 1024**2, 128 * 1024**2, 32 * KIB).fits_in_framework_off_heap


def test_gate_1_16_vs_1_17() -> None:
    # [FACTS] §2.2: 1.13-1.16 required C_remote*bpc + 1, target C*bpc + fpg
    old = input_gate_buffers(buffer_settings(V116), 100, 60)
    assert (old.exclusive_per_channel, old.required, old.target) == (2, 121, 128)
    # [IGSU] 1.17+, streaming defaults: required 2C+1, target 2C+8
    new = input_gate_buffers(buffer_settings(V117), 100)
    assert (new.exclusive_per_channel, new.floating_min, new.required, new.target) == (2, 1, 201, 208)


def test_gate_required_per_gate_max() -> None:
    # [IGSU] blocking default maxReq 1000: 1000 channels => all floating, required 1000
    blocking = input_gate_buffers(buffer_settings(V120), 1000, partition_type=PartitionType.BLOCKING)
    assert (blocking.exclusive_per_channel, blocking.required, blocking.floating_max) == (0, 1000, 2008)
    pipelined = input_gate_buffers(buffer_settings(V120), 1000)
    assert (pipelined.exclusive_per_channel, pipelined.required) == (2, 2001)
    capped = input_gate_buffers(buffer_settings(V120, required_per_gate_max=5), 4)
    # required = min(5, 9) = 5; exclusive = min(2, 4 // 4) = 1; floating [5-4, 16-4]
    assert (capped.exclusive_per_channel, capped.floating_min, capped.floating_max) == (1, 1, 12)
    assert capped.required == 5
    with pytest.raises(ModelInputError, match=r"does not exist before Flink 1\.17"):
        buffer_settings(V116, required_per_gate_max=5)


def test_local_channels_take_no_exclusive_buffers() -> None:
    s = buffer_settings(V120)
    assert input_gate_buffers(s, 8, 4).required == 4 * 2 + 1
    assert input_gate_buffers(s, 8, 0).required == 1


@pytest.mark.parametrize(("p", "required", "target", "fits_", "usage"), [
    (8, 208, 384, True, 9.375),
    (128, 3088, 4224, True, 103.125),
    (200, 4816, 6528, False, 159.375),
])
def test_facts_worked_example_table(p: int, required: int, target: int, fits_: bool, usage: float) -> None:
    # [FACTS] §2.6: Source(p) -HASH-> Window(p) -REBALANCE-> Sink(p), 4 slots, 1728m => 4096 buffers
    s = buffer_settings(V120)
    worst = worst_case_taskmanager_buffers(p, 4, s, exchanges=2)
    assert (worst.required, worst.target) == (required, target)
    graph = JobGraph((Vertex("src", p), Vertex("win", p), Vertex("sink", p)),
                     (Edge("src", "win", "HASH"), Edge("win", "sink", "REBALANCE")))
    tm0 = busiest_taskmanager(taskmanager_buffers(graph, s, 4, all_remote=True))
    assert (tm0.required, tm0.target) == (required, target)
    verdict = fits(worst, 4096, 32 * KIB)
    assert verdict.fits is fits_
    assert verdict.requested_usage_percent == pytest.approx(usage)


def test_insufficient_message_is_flinks_text() -> None:
    verdict = fits(worst_case_taskmanager_buffers(200, 4, buffer_settings(V120), exchanges=2), 4096, 32 * KIB)
    assert not verdict.fits
    assert verdict.message == insufficient_buffers_message(
        verdict.failing_request, verdict.available_at_failure, 4096, 32768)
    assert verdict.message.startswith(f"Insufficient number of network buffers: required "
                                      f"{verdict.failing_request}, but only {verdict.available_at_failure} "
                                      "available. The total number of "
                                      "network buffers is currently set to 4096 of 32768 bytes each.")
    # Phase by phase (the tasks deploy at once): 8 partitions of 201 and 8 floating minimums of 1 take
    # 1616, then exclusive buffers 2 at a time take the other 2480: "required 2, but only 0 available".
    assert verdict.failing_request == 2 and verdict.available_at_failure == 0
    one_request = fits(5000, 4096, 32 * KIB)
    assert (one_request.failing_request, one_request.available_at_failure) == (5000, 4096)


def test_local_channels_lower_the_per_taskmanager_total() -> None:
    # [FACTS] §2.6 note: lower by 2 x (#local channels) per gate; p=8, S=4 => 4 local channels/gate
    s = buffer_settings(V120)
    tm0 = busiest_taskmanager(taskmanager_buffers(chain_graph(8, 2), s, 4))
    assert tm0.required == 208 - 4 * 2 * 4 * 2


def test_flink_2_refuses_tuning_fixed_options() -> None:
    with pytest.raises(ModelInputError, match=r"fixed to 2 in Flink 2\.0"):
        buffer_settings(V20, buffers_per_channel=4)
    s = buffer_settings(V20)
    assert (s.buffers_per_channel, s.floating_per_gate, s.max_buffers_per_channel, s.max_overdraft_per_gate,
            s.sort_shuffle_min_parallelism, s.tunable) == (2, 8, 10, 20, 1, False)
    assert buffer_settings(V20, buffers_per_channel=2).buffers_per_channel == 2


def test_version_defaults() -> None:
    assert buffer_settings(V115).max_overdraft_per_gate == 0
    assert buffer_settings(V116).max_overdraft_per_gate == 5
    assert buffer_settings(V114).sort_shuffle_min_parallelism == 2**31 - 1
    assert buffer_settings(V114).sort_shuffle_min_buffers == 64


@pytest.mark.parametrize("bad", [{"buffers_per_channel": -1}, {"floating_per_gate": 0}])
def test_flink_validation_of_buffer_options(bad: dict[str, int]) -> None:
    with pytest.raises(ModelInputError):
        buffer_settings(V120, **bad)


@pytest.mark.parametrize(("p_up", "p_down"), [(1, 1), (2, 5), (3, 4), (5, 2), (7, 3), (4, 4), (1, 9), (9, 1)])
def test_pointwise_mapping_is_a_partition_of_the_consumers(p_up: int, p_down: int) -> None:
    # VertexInputInfoComputationUtils.computeVertexInputInfoForPointwise: every consumer reads a
    # contiguous producer range, and the consumers of each producer add up to its subpartitions.
    readers: dict[int, int] = {}
    for i in range(p_down):
        a, b = pointwise_consumer_range(i, p_up, p_down)
        assert 0 <= a < b <= p_up
        for j in range(a, b):
            readers[j] = readers.get(j, 0) + 1
    assert sorted(readers) == list(range(p_up))
    if p_up < p_down:
        assert all(readers[j] == pointwise_subpartitions(j, p_up, p_down) for j in range(p_up))
        assert sum(readers.values()) == p_down


def test_invalid_inputs_rejected() -> None:
    s = buffer_settings(V120)
    for call in (lambda: input_gate_buffers(s, 0), lambda: input_gate_buffers(s, 4, 5),
                 lambda: result_partition_buffers(s, -1), lambda: worst_case_taskmanager_buffers(0, 4, s),
                 lambda: fits(-1, 10, 32768), lambda: Vertex("a", 0), lambda: Edge("a", "b", "ZIGZAG"),
                 lambda: JobGraph((Vertex("a", 1),), (Edge("a", "b"),)),
                 lambda: hash_shuffle_min_bytes(0, 1)):
        with pytest.raises(ModelInputError):
            call()


@settings(max_examples=60, deadline=None)
@given(p=st.integers(1, 400), slots=st.integers(1, 16), exchanges=st.integers(1, 3),
       version=st.sampled_from([V113, V116, V117, V120, V20]))
def test_memory_need_grows_with_parallelism(p: int, slots: int, exchanges: int,
                                            version: FlinkVersion) -> None:
    # Flink's formulas are non-decreasing in C and Sp, so the TaskManager's need grows with parallelism.
    s = buffer_settings(version)
    a = worst_case_taskmanager_buffers(p, slots, s, exchanges=exchanges)
    b = worst_case_taskmanager_buffers(p + 1, slots, s, exchanges=exchanges)
    assert b.required > a.required and b.target > a.target
    ga = busiest_taskmanager(taskmanager_buffers(chain_graph(min(p, 60), exchanges), s, slots))
    gb = busiest_taskmanager(taskmanager_buffers(chain_graph(min(p, 60) + 1, exchanges), s, slots))
    assert gb.required >= ga.required


def test_job_graph_from_a_rest_plan() -> None:
    # shape of /jobs/:jobid/plan (JsonPlanGenerator, flink-facts §5)
    plan = {"plan": {"jid": "x", "name": "job", "type": "STREAMING", "nodes": [
        {"id": "a", "parallelism": 8, "description": "Source"},
        {"id": "b", "parallelism": 8, "inputs": [{"num": 0, "id": "a", "ship_strategy": "HASH",
                                                  "exchange": "pipelined_bounded"}]},
        {"id": "c", "parallelism": 8, "inputs": [{"num": 0, "id": "b", "ship_strategy": "REBALANCE",
                                                  "exchange": "pipelined_bounded"}]}]}}
    graph = job_graph_from_plan(plan)
    tm0 = busiest_taskmanager(taskmanager_buffers(graph, buffer_settings(V120), 4, all_remote=True))
    assert tm0.required == 208   # the p=8 row of the facts table
    with pytest.raises(ModelInputError):
        job_graph_from_plan({"plan": {"nodes": [{"id": "a", "parallelism": 0}]}})
    with pytest.raises(ModelInputError):
        job_graph_from_plan({"nothing": 1})


def test_which_request_fails_first_is_a_race_when_sizes_differ() -> None:
    # Real Flink 1.20.5, one batch stage of 8 tasks per TaskManager (a 16-buffer sort-merge partition, a
    # floating minimum of 1, 8 remote channels of 2 exclusive buffers each) on 160 buffers printed
    # "required 2, but only 0 available"; at 32 tasks per TaskManager on 1024 buffers the same shape
    # printed "required 16, but only 0 available": the tasks set up side by side.
    requests = tuple(r for k in range(8) for r in (
        Request(f"t{k} partition", 16), Request(f"t{k} floating", 1, 1, 1),
        Request(f"t{k} exclusive", 2, 8, 2)))
    demand = TaskManagerBuffers(0, 8 * 33, 8 * 33, 8, requests)
    verdict = fits(demand, 160, 32 * KIB)
    assert (verdict.failing_request, verdict.available_at_failure) == (2, 0)
    assert verdict.racing == (16, 1)
    assert verdict.matches(2, 0) and verdict.matches(16, 0) and verdict.matches(16, 15)
    assert not verdict.matches(16, 16) and not verdict.matches(512, 0)
    assert "Flink names one of required 2 / 16 / 1" in verdict.racing_text
    # One size only (every task's sort-merge partition of 512): Flink's numbers are exactly these.
    uniform = TaskManagerBuffers(0, 8 * 512, 8 * 512, 8, tuple(Request(f"t{k}", 512) for k in range(8)))
    exact = fits(uniform, 2048, 32 * KIB)
    assert exact.racing == () and exact.racing_text == ""
    assert exact.matches(512, 0) and not exact.matches(512, 1)
