"""Memory cases where the model once differed from Flink, with the values Flink's own BashJavaUtils
printed (1.20.5 and 2.3.0 agree; tests/e2e_flink/test_memory_oracle.py finds them on generated configs)."""

from __future__ import annotations

import pytest

from flinktune.model.memory import (
    MemoryConfigError,
    derive_jobmanager_memory,
    jobmanager_memory_options,
    taskmanager_memory_from_config,
)

MIB = 1024**2


def test_jobmanager_heap_and_flink_size_off_heap_is_the_rest():
    # BashJavaUtils GET_JM_RESOURCE_PARAMS: -D jobmanager.memory.off-heap.size=440401920b (670m - 250m),
    # not the 128m default (JobManagerFlinkMemoryUtils.deriveOffHeapMemory).
    jm = derive_jobmanager_memory(jobmanager_memory_options(
        {"jobmanager.memory.heap.size": "250 mb", "jobmanager.memory.flink.size": "670 mb"}))  # fmt: skip
    assert (jm.heap_bytes, jm.off_heap_bytes) == (250 * MIB, 440401920)


def test_jobmanager_heap_above_flink_size_is_refused_with_flinks_text():
    with pytest.raises(MemoryConfigError) as refused:
        derive_jobmanager_memory(jobmanager_memory_options(
            {"jobmanager.memory.heap.size": "3225 mb",
             "jobmanager.memory.flink.size": "540672k"}))  # fmt: skip
    assert refused.value.message == (
        "The configured JVM Heap Memory (3.149gb (3381657600 bytes)) exceeds the configured Total Flink "
        "Memory (528.000mb (553648128 bytes)). Please, make the configuration consistent or configure only "
        "one option: either JVM Heap or Total Flink Memory.")  # fmt: skip


def test_jobmanager_explicit_off_heap_must_add_up():
    with pytest.raises(MemoryConfigError) as refused:
        derive_jobmanager_memory(jobmanager_memory_options({
            "jobmanager.memory.heap.size": "2079MB", "jobmanager.memory.flink.size": "1531MB",
            "jobmanager.memory.off-heap.size": "194mb"}))  # fmt: skip
    assert refused.value.message.startswith(
        "Sum of the configured JVM Heap Memory (2.030gb (2179989504 bytes)) and the configured Off-heap "
        "Memory (194.000mb (203423744 bytes)) does not match the configured Total Flink Memory "
        "(1.495gb (1605369856 bytes)).")  # fmt: skip


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        ({"taskmanager.memory.process.size": "2114m", "taskmanager.memory.network.fraction": "1.5"},
         "fraction must be in range [0, 1)"),
        ({"taskmanager.memory.process.size": "1703MB", "taskmanager.memory.network.min": "300m",
          "taskmanager.memory.network.max": "100m"}, "min value must be less or equal to max value"),
    ],
)
def test_range_fraction_refusal_carries_flinks_reason(config, reason):
    with pytest.raises(MemoryConfigError) as refused:
        taskmanager_memory_from_config(config)
    key = "taskmanager.memory.network.fraction"
    assert refused.value.message.startswith(f"Inconsistently configured Key: '{key}'")
    assert refused.value.message.endswith(f"value {reason}")
