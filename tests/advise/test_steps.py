"""Each recommendation step on its own (issue 25): the plan recommend() starts from
(engine.start_plan), one step's propose(), and what it proposed, without the other steps or the loop.

A case where the step acts and one where it must not, per step. Flink facts: flinktune/releases.py
(each with its source) and the steps' docstrings; the values are Flink's defaults (flink-facts.md §1.6).
"""

from __future__ import annotations

from types import ModuleType

import pytest

from flinktune.advise import Environment, parse_parameters
from flinktune.advise.engine import start_plan
from flinktune.advise.plan import Plan
from flinktune.advise.steps import (
    ORDER,
    absurd_values,
    batch_shuffle,
    buffer_timeout,
    credits,
    debloat,
    legacy_buffers,
    legacy_memory,
    legacy_timeout_keys,
    network_memory,
    overdraft,
    removed_keys,
    segment_for_records,
)
from flinktune.config.reader import read_config_text
from flinktune.versions import parse_version


def _plan(text: str, version: str, **flags: str) -> Plan:
    document = read_config_text(text, "flink-conf.yaml")[0]
    env = Environment().with_values(parse_parameters(flags), "flag") if flags else Environment()
    return start_plan(document, text, parse_version(version), env).plan


def _run(step: ModuleType, text: str, version: str, **flags: str) -> dict[str, tuple[str, str | None]]:
    """What ``step`` alone proposes: key -> (kind, value)."""
    plan = _plan(text, version, **flags)
    plan.step = step.NAME
    step.propose(plan)
    return {c.new_key or c.key: (c.action, c.value) for c in plan.changes}


BASE = "taskmanager.numberOfTaskSlots: 4\nparallelism.default: 8\ntaskmanager.memory.process.size: 4g\n"


def test_every_step_has_a_name_and_a_propose() -> None:
    assert len({step.NAME for step in ORDER}) == len(ORDER)
    assert all(callable(step.propose) for step in ORDER)


def test_removed_keys_deletes_what_2x_no_longer_reads() -> None:
    text = BASE + "taskmanager.network.memory.buffers-per-channel: 4\n"
    assert _run(removed_keys, text, "2.0")["taskmanager.network.memory.buffers-per-channel"][0] == "delete"
    assert _run(removed_keys, text, "1.20") == {}          # deprecated in 1.20, still read


def test_absurd_values_resets_what_flink_refuses() -> None:
    # ConfigurationParserUtils.getPageSize: a power of two, at least 4096 bytes.
    assert _run(absurd_values, BASE + "taskmanager.memory.segment-size: 3000b\n", "1.20") == {
        "taskmanager.memory.segment-size": ("set", "4kb")}
    assert _run(absurd_values, BASE + "taskmanager.memory.segment-size: 64kb\n", "1.20") == {}


def test_legacy_memory_renames_the_pre_1_10_heap_key() -> None:
    changes = _run(legacy_memory, "taskmanager.heap.size: 2g\n", "1.20")
    assert [kind for kind, _value in changes.values()] == ["rename"]
    assert _run(legacy_memory, "taskmanager.heap.size: 2g\n", "2.0") == {}     # removed-keys' case there


def test_segment_for_records_needs_a_record_larger_than_a_buffer() -> None:
    big = _run(segment_for_records, BASE, "1.20", **{"record-size": "100kb", "workload": "streaming"})
    assert big["taskmanager.memory.segment-size"][0] == "set"
    assert _run(segment_for_records, BASE, "1.20", **{"record-size": "1kb", "workload": "streaming"}) == {}


def test_credits_need_stated_evidence() -> None:
    # No rate, record size or round trip stated: Flink's defaults stand (evidence before change).
    assert _run(credits, BASE, "1.20") == {}


def test_batch_shuffle_is_left_alone_for_a_streaming_job() -> None:
    assert _run(batch_shuffle, BASE, "1.20", workload="streaming") == {}


def test_legacy_timeout_keys_before_1_18() -> None:
    # execution.buffer-timeout.enabled came with 1.18 (FLINK-32023): a 1.14 file loses it.
    text = BASE + "execution.buffer-timeout.enabled: false\n"
    assert _run(legacy_timeout_keys, text, "1.14") == {"execution.buffer-timeout.enabled": ("delete", None)}
    assert _run(legacy_timeout_keys, text, "1.20") == {}


def test_buffer_timeout_moves_only_for_a_stated_latency_target() -> None:
    assert _run(buffer_timeout, BASE, "1.20", workload="streaming") == {}
    tight = _run(buffer_timeout, BASE, "1.20",
                 **{"workload": "streaming", "latency-target": "5ms", "rate": "100", "record-size": "100b"})
    assert set(tight) <= {"execution.buffer-timeout.interval", "execution.buffer-timeout"} and tight


def test_debloat_exists_from_1_14() -> None:
    assert _run(debloat, BASE, "1.13", workload="streaming") == {}


def test_overdraft_from_1_16_for_records_spanning_buffers() -> None:
    # A 200 KiB record fills ceil(200 / 32) = 7 buffers of 32 KiB, more than the default 5 overdraft.
    flags = {"record-size": "200kb", "workload": "streaming"}
    key = "taskmanager.network.memory.max-overdraft-buffers-per-gate"
    assert _run(overdraft, BASE, "1.16", **flags) == {key: ("set", "7")}
    assert _run(overdraft, BASE, "1.16", **{"record-size": "100kb", "workload": "streaming"}) == {}  # 4 <= 5
    assert _run(overdraft, BASE, "1.15", **flags) == {}   # the option does not exist before 1.16


def test_legacy_buffers_deleted_when_memory_sizes_are_set() -> None:
    text = BASE + "taskmanager.network.numberOfBuffers: 4096\ntaskmanager.memory.network.max: 1g\n"
    assert _run(legacy_buffers, text, "1.20") == {"taskmanager.network.numberOfBuffers": ("delete", None)}
    assert _run(legacy_buffers, BASE + "taskmanager.network.numberOfBuffers: 4096\n", "1.20") == {}


@pytest.mark.parametrize("network, acts", [("2mb", True), ("512mb", False)])
def test_network_memory_is_raised_only_when_the_job_would_not_start(network: str, acts: bool) -> None:
    text = BASE + f"taskmanager.memory.network.min: {network}\ntaskmanager.memory.network.max: {network}\n"
    changes = _run(network_memory, text, "1.20", exchanges="1")
    assert bool(changes) is acts, changes
