"""Flink's TaskManager / JobManager memory derivation, checked against Flink's own numbers.

Sources used below:
- [FACTS] /work/shared/reference/flink-facts.md §2.5 (worked values from PMU/TEFMU @ 1.13..1.20).
- [PMU] flink-runtime/src/main/java/org/apache/flink/runtime/util/config/memory/ProcessMemoryUtils.java
  (apache/flink, read at commit 39881e98cd8fa1fe3825b0d77b5a2aa76a7d8a3e; same logic 1.13 .. 2.x).
- [TEFMU] .../util/config/memory/taskmanager/TaskExecutorFlinkMemoryUtils.java (commit fca52d8a7c7c).
- [JMFMU] .../util/config/memory/jobmanager/JobManagerFlinkMemoryUtils.java (commit df679bffde28).
- [MS] flink-core/src/main/java/org/apache/flink/configuration/MemorySize.java (multiply: BigDecimal,
  truncation; toHumanReadableString).
- [LOG-1.17] the JVM arguments a real Flink 1.17.1/1.17.2 TaskManager started with under the shipped
  default ``taskmanager.memory.process.size: 1728m``: ``-Xmx536870902 -Xms536870902
  -XX:MaxDirectMemorySize=268435458 -XX:MaxMetaspaceSize=268435456`` and dynamic config
  ``taskmanager.memory.network.min=134217730b``; JobManager (1600m)
  ``jobmanager.memory.heap.size=1073741824b``.
- [LOG-2048] a real Flink YARN TaskManager container with ``taskmanager.memory.process.size: 2048m``:
  ``-Xmx697932173 -Xms697932173 -XX:MaxDirectMemorySize=300647712 -XX:MaxMetaspaceSize=268435456``.
- [LOG-1.10] Flink 1.10 defaults (process 1568m, metaspace 96m): ``-Xmx536870902
  -XX:MaxDirectMemorySize=268435458 -XX:MaxMetaspaceSize=100663296``, ``network.max=134217730b``.
"""

from __future__ import annotations

import pytest

from flinktune.errors import ModelInputError
from flinktune.model.javanum import human_readable, java_double_str, java_float, multiply
from flinktune.model.memory import (
    JobManagerMemoryOptions,
    MemoryConfigError,
    TaskManagerMemoryOptions,
    derive_jobmanager_memory,
    derive_taskmanager_memory,
    jobmanager_memory_options,
    taskmanager_memory_from_config,
    taskmanager_memory_options,
)
from flinktune.versions import FlinkVersion

MIB = 1024**2
GIB = 1024**3
V113, V116, V117, V120, V20 = (FlinkVersion(1, 13), FlinkVersion(1, 16), FlinkVersion(1, 17),
                               FlinkVersion(1, 20), FlinkVersion(2, 0))


def tm_keys(mapping: dict[str, object], version: FlinkVersion = V120):
    return taskmanager_memory_from_config(mapping, version)


# --- Java number semantics -------------------------------------------------------------------

def test_fraction_is_a_java_float_widened_to_double() -> None:
    # [FACTS] §2.5: 0.1f = 0.10000000149011612, 0.4f = 0.4000000059604645
    assert java_float(0.1) == 0.10000000149011612
    assert java_float(0.4) == 0.4000000059604645
    assert java_double_str(java_float(0.1)) == "0.10000000149011612"
    assert java_double_str(1e-5) == "1.0E-5"
    assert java_double_str(12345678.0) == "1.2345678E7"


def test_multiply_truncates_like_bigdecimal_long_value() -> None:
    # [MS] BigDecimal.valueOf(bytes) * BigDecimal.valueOf(double) -> longValue()
    assert multiply(1342177280, java_float(0.1)) == 134217730
    assert multiply(1811939328, java_float(0.1)) == 181193935


def test_human_readable_matches_memory_size() -> None:
    # [MS] highest unit strictly below the byte count, %.3f
    assert human_readable(1811939328) == "1.688gb (1811939328 bytes)"
    assert human_readable(GIB) == "1024.000mb (1073741824 bytes)"
    assert human_readable(0) == "0 bytes"
    assert human_readable(1024) == "1024 bytes"


# --- TaskManager derivations (>= 10 configurations) -----------------------------------------

@pytest.mark.parametrize("version", [V113, V116, V117, V120, V20])
def test_default_1728m(version: FlinkVersion) -> None:
    # [FACTS] §2.5 and [LOG-1.17]: identical in every supported version
    m = tm_keys({"taskmanager.memory.process.size": "1728m"}, version)
    assert m.path == "process-size"
    assert m.jvm_overhead_bytes == 192 * MIB
    assert m.total_flink_bytes == 1280 * MIB
    assert m.network_bytes == 134217730
    assert m.managed_bytes == 536870920
    assert m.network_buffers == 4096
    assert m.jvm_heap_bytes == 536870902          # -Xmx536870902
    assert m.jvm_direct_bytes == 268435458        # -XX:MaxDirectMemorySize=268435458
    assert m.jvm_metaspace_bytes == 268435456     # -XX:MaxMetaspaceSize=268435456
    assert m.total_process_bytes == 1728 * MIB


def test_2048m_matches_a_real_yarn_container() -> None:
    # [LOG-2048]
    m = tm_keys({"taskmanager.memory.process.size": "2048m"})
    assert m.jvm_heap_bytes == 697932173
    assert m.jvm_direct_bytes == 300647712
    assert m.jvm_metaspace_bytes == 268435456


def test_4096m_and_8192m_worked_values() -> None:
    # [FACTS] §2.5: 4096m => 10977 buffers, 8192m => 22773 buffers
    assert tm_keys({"taskmanager.memory.process.size": "4096m"}).network_buffers == 10977
    assert tm_keys({"taskmanager.memory.process.size": "8192m"}).network_buffers == 22773


def test_flink_1_10_default_process_size_with_96m_metaspace() -> None:
    # [LOG-1.10]: 1568m - 96m metaspace - 192m overhead = 1280m Total Flink Memory
    m = tm_keys({"taskmanager.memory.process.size": "1568m", "taskmanager.memory.jvm-metaspace.size": "96m"})
    assert (m.jvm_heap_bytes, m.jvm_direct_bytes, m.jvm_metaspace_bytes) == (536870902, 268435458, 100663296)
    assert m.network_bytes == 134217730


def test_flink_size_path_derives_overhead_by_inverse_fraction() -> None:
    # [PMU] deriveJvmMetaspaceAndOverheadFromTotalFlinkMemory: (1280m + 256m) * f/(1-f) = 170.7m,
    # below the 192m minimum, so 192m: the process is 1728m again and the split is identical.
    m = tm_keys({"taskmanager.memory.flink.size": "1280m"})
    assert m.path == "flink-size"
    assert m.jvm_overhead_bytes == 192 * MIB
    assert m.total_process_bytes == 1728 * MIB
    assert m.jvm_heap_bytes == 536870902


def test_small_process_clamps_network_to_min() -> None:
    # [TEFMU] deriveNetworkMemoryWithFraction + [PMU] capToMinMax: 1g - 256m - 192m = 576m Flink
    # memory, 57.6m network < 64m min => 64m => 2048 buffers of 32 KiB.
    m = tm_keys({"taskmanager.memory.process.size": "1g"})
    assert m.network_bytes == 64 * MIB
    assert m.network_source == "min"
    assert m.network_buffers == 2048


def test_network_max_default_is_1g_until_1_16_and_unbounded_from_1_17() -> None:
    # TaskManagerOptions NETWORK_MEMORY_MAX @1.16 (1g) vs @1.17 (Long.MAX_VALUE), FLINK-30472.
    # 16g: overhead capped to 1g, F = 16g - 256m - 1g = 15104m; F * 0.1f = 1583769214 bytes.
    old = tm_keys({"taskmanager.memory.process.size": "16g"}, V116)
    new = tm_keys({"taskmanager.memory.process.size": "16g"}, V117)
    assert old.network_bytes == GIB and old.network_source == "max"
    assert new.network_bytes == 1583769214 and new.network_source == "fraction"
    assert old.network_buffers == 32768


def test_fine_grained_path_uses_inverse_fraction() -> None:
    # [TEFMU] deriveFromRequiredFineGrainedOptions: X = 128m + 128m + 1g + 0 + 1g = 2415919104 B;
    # network = X * (0.1f / (1 - 0.1f)) = 268435460.3 -> 268435460 (truncated, [MS]).
    m = tm_keys({"taskmanager.memory.task.heap.size": "1g", "taskmanager.memory.managed.size": "1g"})
    assert m.path == "fine-grained"
    assert m.network_bytes == 268435460
    assert m.total_flink_bytes == 2415919104 + 268435460
    assert m.network_buffers == 8192


def test_legacy_number_of_buffers_until_1_20_only() -> None:
    # [TEFMU] isUsingLegacyNetworkConfigs: numberOfBuffers * segment when no network.* key is set;
    # removed in 2.0 (FLINK-33750, 2.0 release notes).
    raw = {"taskmanager.memory.process.size": "1728m", "taskmanager.network.numberOfBuffers": "4096"}
    legacy = tm_keys(raw, V120)
    assert legacy.network_bytes == 4096 * 32 * 1024 and legacy.network_source == "legacy-number-of-buffers"
    assert legacy.task_heap_bytes == 402653176   # the 2 bytes move to task heap
    assert tm_keys(raw, V20).network_bytes == 134217730
    both = derive_taskmanager_memory(TaskManagerMemoryOptions(process_bytes=1728 * MIB, network_fraction=0.1,
                                                              legacy_number_of_buffers=4096), V120)
    assert both.network_source == "fraction"
    assert any("Ignoring old" in n for n in both.notes)
    # with a network.* key set Flink never parses numberOfBuffers, so a bad value there is harmless
    # (seen in the wild: "taskmanager.network.numberOfBuffers: 300mb")
    harmless = tm_keys({**raw, "taskmanager.memory.network.fraction": "0.1",
                        "taskmanager.network.numberOfBuffers": "300mb"}, V120)
    assert harmless.network_bytes == 134217730


def test_deprecated_network_keys_and_new_key_precedence() -> None:
    # TaskManagerOptions.NETWORK_MEMORY_FRACTION withDeprecatedKeys("taskmanager.network.memory.fraction")
    old = tm_keys({"taskmanager.memory.process.size": "1728m", "taskmanager.network.memory.fraction": "0.2"})
    assert old.network_bytes == multiply(1280 * MIB, java_float(0.2)) == 268435460
    both = tm_keys({"taskmanager.memory.process.size": "1728m", "taskmanager.network.memory.fraction": "0.2",
                    "taskmanager.memory.network.fraction": 0.15})
    assert both.network_bytes == multiply(1280 * MIB, java_float(0.15))


def test_jobmanager_default_1600m() -> None:
    # [LOG-1.17] + [JMFMU]: 1600m - 256m - 192m = 1152m; minus 128m off-heap = 1024m heap
    jm = derive_jobmanager_memory(jobmanager_memory_options({"jobmanager.memory.process.size": "1600m"}))
    assert jm.heap_bytes == 1073741824
    assert jm.jvm_overhead_bytes == 201326592
    assert jm.total_process_bytes == 1600 * MIB


# --- What Flink refuses ------------------------------------------------------------------------

def test_nothing_configured() -> None:
    with pytest.raises(MemoryConfigError) as error:
        derive_taskmanager_memory(TaskManagerMemoryOptions())
    assert error.value.message == (
        "Either required fine-grained memory (taskmanager.memory.task.heap.size and "
        "taskmanager.memory.managed.size), or Total Flink Memory size (Key: "
        "'taskmanager.memory.flink.size' , default: null (fallback keys: [])), or Total Process Memory size "
        "(Key: 'taskmanager.memory.process.size' , default: null (fallback keys: [])) need to be configured "
        "explicitly.")


def test_metaspace_and_overhead_exceed_process() -> None:
    # [PMU] deriveJvmMetaspaceAndOverheadWithTotalProcessMemory
    with pytest.raises(MemoryConfigError) as error:
        tm_keys({"taskmanager.memory.process.size": "400m"})
    assert error.value.message == (
        "Sum of configured JVM Metaspace (256.000mb (268435456 bytes)) and JVM Overhead (192.000mb "
        "(201326592 bytes)) exceed configured Total Process Memory (400.000mb (419430400 bytes)).")


def test_derived_network_outside_range() -> None:
    # [TEFMU] sanityCheckNetworkMemoryWithExplicitlySetTotalFlinkAndHeapMemory
    with pytest.raises(MemoryConfigError) as error:
        tm_keys({"taskmanager.memory.flink.size": "1g", "taskmanager.memory.task.heap.size": "256m",
                 "taskmanager.memory.managed.size": "256m", "taskmanager.memory.network.max": "128m"})
    assert "Derived Network Memory size (256.000mb (268435456 bytes)) is not in configured Network Memory " \
           "range [64.000mb (67108864 bytes), 128.000mb (134217728 bytes)]." in error.value.message


def test_sum_of_components_exceeds_total_flink() -> None:
    with pytest.raises(MemoryConfigError, match=r"^Sum of configured Framework Heap Memory .* exceed "
                                                r"configured Total Flink Memory \(1024\.000mb"):
        tm_keys({"taskmanager.memory.flink.size": "1g", "taskmanager.memory.task.heap.size": "600m"})


@pytest.mark.parametrize(("segment", "text"), [
    ("1000", "Minimum memory segment size is 4096"),
    ("5000", "Memory segment size must be a power of 2."),
])
def test_segment_size_checks(segment: str, text: str) -> None:
    # ConfigurationParserUtils.getPageSize
    with pytest.raises(MemoryConfigError, match=text):
        tm_keys({"taskmanager.memory.process.size": "1728m", "taskmanager.memory.segment-size": segment})


def test_fraction_out_of_range() -> None:
    # RangeFraction: fraction in [0, 1)
    with pytest.raises(MemoryConfigError) as error:
        tm_keys({"taskmanager.memory.process.size": "1g", "taskmanager.memory.network.fraction": "1.0"})
    assert error.value.message.startswith(
        "Inconsistently configured Key: 'taskmanager.memory.network.fraction' , default: 0.1 (fallback keys: "
        "[{key=taskmanager.network.memory.fraction, isDeprecated=true}]) (1.0) and its min (64.000mb")


def test_process_smaller_than_flink_plus_metaspace() -> None:
    with pytest.raises(MemoryConfigError, match="is less than the sum of the derived Total Flink Memory"):
        tm_keys({"taskmanager.memory.process.size": "2g", "taskmanager.memory.flink.size": "2g"})


def test_jobmanager_refusals() -> None:
    with pytest.raises(MemoryConfigError, match=r"jobmanager\.memory\.heap\.size"):
        derive_jobmanager_memory(JobManagerMemoryOptions())
    with pytest.raises(MemoryConfigError, match="less than the configured Off-heap Memory"):
        derive_jobmanager_memory(JobManagerMemoryOptions(flink_bytes=100 * MIB))


# --- Inputs --------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [{"process_bytes": -1}, {"network_fraction": float("nan")},
                                 {"segment_bytes": 1.5}, {"flink_bytes": True}])
def test_invalid_option_values_are_rejected(bad: dict[str, object]) -> None:
    with pytest.raises(ModelInputError):
        TaskManagerMemoryOptions(**bad)  # type: ignore[arg-type]


def test_unparsable_value_names_the_key() -> None:
    with pytest.raises(MemoryConfigError, match=r"taskmanager\.memory\.segment-size"):
        tm_keys({"taskmanager.memory.process.size": "1728m", "taskmanager.memory.segment-size": "1.5kb"})


def test_options_from_a_getter_and_from_an_effective_config() -> None:
    raw = {"taskmanager.memory.process.size": "4096m"}
    assert taskmanager_memory_options(raw.get).process_bytes == 4096 * MIB

    class Effective:  # the shape of H1's EffectiveConfig
        def is_set(self, key: str) -> bool:
            return key == "taskmanager.memory.process.size"

        def memory_bytes(self, key: str) -> int:
            return 4096 * MIB

        def floating(self, key: str) -> float:
            raise AssertionError("not set")

        def integer(self, key: str) -> int:
            raise AssertionError("not set")

    options = taskmanager_memory_options(Effective())
    assert options == TaskManagerMemoryOptions(process_bytes=4096 * MIB)
    assert derive_taskmanager_memory(options).network_buffers == 10977
