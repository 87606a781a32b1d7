"""Scenario files: every sample loads; bad input is one line naming file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest
from simhelpers import SCENARIOS

from flinktune.errors import ScenarioError
from flinktune.sim import load_scenario, scenario_from_text
from flinktune.sim.scenario import parse_seconds

GOOD = """\
name: t
job:
  vertices:
    - {name: src, parallelism: 2, capacity: 1000, record_size: {fixed: 100b}}
    - {name: sink, parallelism: 2, capacity: 1000}
"""


def test_every_sample_scenario_loads() -> None:
    files = sorted(SCENARIOS.glob("*.yaml"))
    names = {f.stem for f in files}
    assert {"healthy", "slow-sink", "slow-middle-operator", "hot-subtask", "few-credits-long-rtt",
            "network-bound", "seed-backpressure-experiment", "seed-multiplex-credit",
            "seed-multiplex-no-credit", "network-stack-bound"} <= names
    for f in files:
        sc = load_scenario(f)
        assert sc.name == f.stem


def test_defaults_are_flinks() -> None:
    sc = scenario_from_text(GOOD)
    # taskmanager.memory.segment-size 32kb, buffers-per-channel 2, floating-buffers-per-gate 8,
    # max-buffers-per-channel 10, execution.buffer-timeout 100 ms (flink-facts.md §1.2)
    assert sc.network.segment_size == 32768
    assert (sc.network.buffers_per_channel, sc.network.floating_buffers_per_gate) == (2, 8)
    assert sc.network.max_buffers_per_channel == 10
    assert sc.network.buffer_timeout == pytest.approx(0.1)
    assert sc.network.credit_based


def test_unknown_field_is_rejected_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(GOOD + "    - {name: extra, parallelism: 1, capacity: 5, colour: red}\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    line = info.value.one_line()
    assert line.startswith(f"{path}:6: job.vertices.2.colour: unknown field")
    assert "\n" not in line


@pytest.mark.parametrize(("patch", "needle"), [
    ("duration: 10", "needs a unit"),
    ("duration: soon", "not like 100ms"),
    ("network: {segment_size: 12xb}", "segment_size"),
    ("cluster: {bandwidth: fast}", "bandwidth"),
    ("network: {buffer_timeout: -5ms}", "buffer_timeout"),
    ("checkpoints: {interval: 1s}\nnetwork: {credit_based: false}", "checkpoints need credit_based"),
])
def test_bad_values_give_one_clear_line(patch: str, needle: str) -> None:
    with pytest.raises(ScenarioError) as info:
        scenario_from_text(GOOD + patch + "\n", file="x.yaml")
    assert needle in info.value.one_line()
    assert info.value.one_line().startswith("x.yaml")


def test_structural_checks() -> None:
    too_wide = GOOD.replace("{name: sink, parallelism: 2", "{name: sink, parallelism: 9")
    with pytest.raises(ScenarioError, match="only 4 slots"):
        scenario_from_text(too_wide)
    forward = GOOD.replace("capacity: 1000}\n", "capacity: 1000, input: {ship_strategy: FORWARD}}\n")
    forward = forward.replace("{name: sink, parallelism: 2", "{name: sink, parallelism: 1")
    with pytest.raises(ScenarioError, match="FORWARD"):
        scenario_from_text(forward)
    with pytest.raises(ScenarioError, match="YAML"):
        scenario_from_text("name: [unclosed\n")
    with pytest.raises(ScenarioError, match="mapping"):
        scenario_from_text("- a\n- b\n")


def test_unreadable_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenario(tmp_path / "missing.yaml")
    binary = tmp_path / "b.yaml"
    binary.write_bytes(b"\xff\xfe\x00name")
    with pytest.raises(ScenarioError, match="UTF-8"):
        load_scenario(binary)


def test_parse_seconds() -> None:
    assert parse_seconds("100ms") == pytest.approx(0.1)
    assert parse_seconds("20us") == pytest.approx(2e-5)
    assert parse_seconds("1.5 s") == pytest.approx(1.5)
    assert parse_seconds(0) == 0.0
    with pytest.raises(ValueError):
        parse_seconds(5)
