"""Batch buffer demand per pipelined region, read memory and adaptive plans (model.batch; issue 19).

The numbers of issue 19 come from a real Flink 1.20.5 cluster (2 TaskManagers x 32 slots, 2g each, a
BATCH job at parallelism 64: Source -HASH-> Reduce -REBALANCE-> Sink, both exchanges blocking):
"required 512, but only 471 available" with sort-merge defaults, a hash-shuffle demand of about 4,160
buffers where summing every channel as remote gave 6,208, and -1 in the adaptive scheduler's plan.
Flink facts: NetworkBufferPool.createBufferPool (the message), NettyShuffleUtils (sort-merge partition
min = sort-shuffle.min-buffers, hash Sp + 1), ResultPartitionFactory (sort when Sp >= min-parallelism),
BatchShuffleReadBufferPool (constructor check, initialize()), SortMergeResultPartition
(requestNetworkBuffers: write buffers min(512, 8 MiB / segment, half), hash data buffer at >= 2 x Sp),
AdaptiveBatchSchedulerFactory.getDefaultMaxParallelism (1.18+).
"""

from __future__ import annotations

import pytest

from flinktune.config.reader import read_config_text
from flinktune.model import batch
from flinktune.model import buffers as mb
from flinktune.model.memory import derive_taskmanager_memory, taskmanager_memory_options
from flinktune.model.network_fit import network_verdict
from flinktune.situation import Environment, parse_parameters, resolve_situation
from flinktune.versions import FlinkVersion

V120 = FlinkVersion(1, 20)
SEG = 32 * 1024


def chain(p: int, exchange: str = "blocking", p_reduce: int | None = None, p_sink: int | None = None
          ) -> mb.JobGraph:
    """BatchJob.java / issue 19's job: src -HASH-> reduce -REBALANCE-> sink."""
    return mb.JobGraph(
        (mb.Vertex("src", p), mb.Vertex("reduce", p_reduce or p), mb.Vertex("sink", p_sink or p)),
        (mb.Edge("src", "reduce", "HASH", exchange), mb.Edge("reduce", "sink", "REBALANCE", exchange)))


def network_buffers_of(process: str) -> int:
    options = taskmanager_memory_options({"taskmanager.memory.process.size": process})
    memory = derive_taskmanager_memory(options, V120)
    return memory.network_buffers


def test_blocking_exchanges_split_pipelined_regions() -> None:
    assert len(batch.pipelined_regions(chain(4))) == 3
    assert batch.pipelined_regions(chain(4, "pipelined")) == (frozenset({"src", "reduce", "sink"}),)


def test_hash_shuffle_demand_is_one_stage_with_local_channels() -> None:
    # Issue 19: lint charged 32 x (129 + 65) = 6,208 (one exchange, every channel remote); the real demand
    # is the Reduce stage: 32 x (gate of 64 channels, 32 remote: 2 x 32 + 1 = 65; partition 64 + 1 = 65).
    settings = mb.buffer_settings(V120, sort_shuffle_min_parallelism=100)
    demand = batch.batch_taskmanager_buffers(chain(64), settings, 32, taskmanagers=2)
    assert demand.busiest.required == 32 * (65 + 65) == 4160
    assert demand.stage == ("reduce",)
    assert demand.per_stage_required == (32 * 65, 32 * 130, 32 * 65)
    assert demand.summed_required == 8320     # what summing the stages (old recommend) charged
    assert "3 pipelined region(s)" in demand.busiest.assumption


def test_sort_merge_defaults_fail_in_the_first_stage_with_flinks_numbers() -> None:
    total = network_buffers_of("2048m")
    assert total == 5079                       # 0.1 x 1587.2m / 32 KiB
    demand = batch.batch_taskmanager_buffers(chain(64), mb.buffer_settings(V120), 32, taskmanagers=2)
    fit = demand.fit(total, SEG)
    assert not fit.fits
    # Nine 512-buffer partitions of the Source stage are granted, the tenth fails: 5079 - 9 x 512 = 471.
    assert (fit.failing_request, fit.available_at_failure) == (512, 471)
    assert "required 512, but only 471 available" in (fit.message or "")


def test_hash_shuffle_at_32m_fails_with_the_hash_partition_size() -> None:
    settings = mb.buffer_settings(V120, sort_shuffle_min_parallelism=1000)
    demand = batch.batch_taskmanager_buffers(chain(64), settings, 32, taskmanagers=2)
    fit = demand.fit(1024, SEG)
    assert (fit.failing_request, fit.available_at_failure) == (65, 1024 - 15 * 65)


def test_only_guaranteed_local_channels_count_when_the_cluster_is_not_full() -> None:
    settings = mb.buffer_settings(V120, sort_shuffle_min_parallelism=100)
    # 40 producers on 2 x 32 slots: a TaskManager may run only 8 of them: 8 local of 40 channels at least.
    demand = batch.batch_taskmanager_buffers(chain(40), settings, 32, taskmanagers=2)
    gate = mb.input_gate_buffers(settings, 40, 32, mb.PartitionType.BLOCKING)
    part = mb.result_partition_buffers(settings, 40, mb.PartitionType.BLOCKING)
    assert demand.busiest.required == 32 * (gate.required + part.required)


def test_pointwise_blocking_regions_may_overlap_and_share_the_slots() -> None:
    # b[k] may start when a[k] finished (pointwise), so the regions overlap; but a batch job gives each
    # region a slot sharing group of its own (StreamGraphGenerator.configureStreamGraphBatch:
    # setAllVerticesInSameSlotSharingGroupByDefault(false)), so the 4 slots hold 4 region subtasks at
    # once: the busiest 4 are a's (a 512-buffer sort-merge partition each), not a's and b's summed.
    settings = mb.buffer_settings(V120)
    graph = mb.JobGraph((mb.Vertex("a", 4), mb.Vertex("b", 4)), (mb.Edge("a", "b", "FORWARD", "blocking"),))
    demand = batch.batch_taskmanager_buffers(graph, settings, 4)
    assert demand.busiest.required == 4 * 512 < demand.summed_required
    assert demand.busiest.subtasks == 4


def test_two_sources_of_a_join_share_the_slots() -> None:
    # Two sources side by side, 8 subtasks each on 8 slots: 8 of their 16 subtasks run at once per
    # TaskManager, so the first stage holds 8 x 512, not 16 x 512 (the no-plan bound's join stage).
    settings = mb.buffer_settings(V120)
    demand = batch.stage_bound(16, 8, 2, settings, inputs=2)
    first = demand.stages[0]
    assert first.subtasks == 8 and first.required == 8 * 512


def test_sort_merge_spill_sizes() -> None:
    assert batch.sort_spill_region_bytes(512, 64, SEG) is None         # 512 >= 2 x 64: hash data buffer
    assert batch.sort_spill_region_bytes(16, 64, SEG) == 8 * SEG       # 8 write + 8 sort buffers
    assert batch.sort_spill_region_bytes(512, 1000, SEG) == 256 * SEG  # 256 write (8 MiB / 32 KiB)


def test_read_memory_verdicts_and_flinks_text() -> None:
    mib = 1024**2
    oom = batch.ReadMemoryVerdict(256 * mib, 128 * mib, 0, SEG)
    assert oom.exceeds_direct and oom.framework_off_heap_fix() == 320 * mib
    assert not batch.ReadMemoryVerdict(256 * mib, 384 * mib, 0, SEG).exceeds_direct   # ran (issue 19)
    assert batch.ReadMemoryVerdict(64 * mib, 128 * mib, 0, SEG).squeezes_framework is False
    assert batch.ReadMemoryVerdict(16 * 1024, 128 * mib, 0, SEG).below_segment
    assert batch.read_below_segment_message(SEG) == (
        "Illegal configuration, config value for 'taskmanager.memory.framework.off-heap.batch-shuffle.size' "
        "must be no smaller than 'taskmanager.memory.segment-size', please increase "
        "'taskmanager.memory.framework.off-heap.batch-shuffle.size' to at least 32768 bytes.")


@pytest.mark.parametrize(("max_p", "default_p", "v118", "expected"), [
    (None, None, True, 128), (None, 64, True, 64), (None, 64, False, 128), (32, 64, True, 32)])
def test_adaptive_scheduler_upper_bound(max_p: int | None, default_p: int | None, v118: bool,
                                        expected: int) -> None:
    assert batch.adaptive_max_parallelism(max_p, default_p, v118)[0] == expected


def _situation(text: str, plan: dict | None = None, **flags: str):  # type: ignore[no-untyped-def]
    document = read_config_text(text, "config.yaml")[0]
    env = Environment().with_values(parse_parameters(flags), "flag") if flags else Environment()
    return resolve_situation(document, text=text, environment=env, plan=plan, plan_source="plan.json")


ADAPTIVE_PLAN = {"plan": {"jid": "x", "name": "j", "type": "BATCH", "nodes": [
    {"id": "sink", "parallelism": -1, "description": "Sink", "inputs": [
        {"num": 0, "id": "reduce", "ship_strategy": "REBALANCE", "exchange": "blocking"}]},
    {"id": "reduce", "parallelism": -1, "description": "Reduce", "inputs": [
        {"num": 0, "id": "src", "ship_strategy": "HASH", "exchange": "blocking"}]},
    {"id": "src", "parallelism": 64, "description": "Source: Gen"}]}}

CONFIG = ("taskmanager.memory.process.size: 2048m\ntaskmanager.numberOfTaskSlots: 32\n"
          "parallelism.default: 64\nexecution.runtime-mode: BATCH\n")


def test_adaptive_plan_with_undecided_vertices_is_judged_at_the_upper_bound() -> None:
    verdict = network_verdict(_situation(CONFIG, ADAPTIVE_PLAN))
    assert verdict.fits is False and verdict.settings_error is None
    assert "parallelism 64 assumed for undecided vertex(es) Sink, Reduce" in verdict.assumption
    assert "parallelism.default" in verdict.assumption
    assert "required 512, but only 471 available" in (verdict.fit.message or "")  # type: ignore[union-attr]


def test_no_plan_batch_verdict_is_per_stage() -> None:
    hash_160m = CONFIG + ("taskmanager.network.sort-shuffle.min-parallelism: 1000\n"
                          "taskmanager.memory.network.min: 160m\ntaskmanager.memory.network.max: 160m\n")
    verdict = network_verdict(_situation(hash_160m, taskmanagers="2", exchanges="1"))
    assert verdict.fits is True and verdict.demand is not None and verdict.demand.required == 4160


def test_configs_that_ran_are_not_errors_without_a_plan() -> None:
    # Issue 19: lint said "deployment fails" for configs that ran with every vertex at 64 (hash at 160m:
    # 5120 buffers for a 4160 demand). With the pessimistic default of 3 exchanges it may warn, never fail.
    hash_160m = CONFIG + ("taskmanager.network.sort-shuffle.min-parallelism: 1000\n"
                          "taskmanager.memory.network.min: 160m\ntaskmanager.memory.network.max: 160m\n")
    verdict = network_verdict(_situation(hash_160m, taskmanagers="2"))
    assert verdict.fails_for_sure is False


def test_flink_2_always_sorts() -> None:
    # 2.x hard-codes sort-shuffle.min-parallelism 1 (NettyShuffleEnvironmentConfiguration @2.0).
    settings = mb.buffer_settings(FlinkVersion(2, 0))
    demand = batch.batch_taskmanager_buffers(chain(64), settings, 32, taskmanagers=2)
    assert demand.stages[0].required == 32 * 512
