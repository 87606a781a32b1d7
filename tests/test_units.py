"""The one unit rule (flinktune/units.py) from a user audit: whole counts print exactly in every text
report, a bandwidth's unit must say bits or bytes, an rtt or bandwidth must be above zero, and the
requested memory usage is not defined without buffers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flinktune.cli.app import app
from flinktune.errors import FlinktuneError, ScenarioError
from flinktune.sim import scenario_from_text
from flinktune.units import parse_bandwidth, parse_duration_s, readable

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_configs"
runner = CliRunner()


def _run(*argv: str) -> tuple[int, str]:
    result = runner.invoke(app, list(argv))
    return result.exit_code, result.output


def _refused(argv: list[str], message: str) -> None:
    code, output = _run(*argv)
    assert code == 2, output
    assert message in output, output
    assert "Traceback" not in output and len(output.strip().splitlines()) == 1, output


# ------------------------------------------------------------------------- 1. counts print exactly

@pytest.mark.parametrize(("value", "unit", "text"), [
    (9999.0, "", "9,999"),
    (20000.0, "", "20,000"),
    (47808.0, "", "47,808"),
    (29999.0, "buffers", "29,999"),
    (123456.0, "records/s", "123,456 records/s"),
    (0.00305, "", "0.00305"),        # a ratio keeps its three digits
    (38.125, "buffers", "38.1 buffers"),
    (1e20, "", "1e+20"),             # beyond what a float holds exactly
    (1.5e9, "B/s", "1.5 GB/s"),      # a unit that is not a count is unchanged
])
def test_whole_counts_are_exact(value: float, unit: str, text: str) -> None:
    assert readable(value, unit) == text


def test_model_text_shows_counts_as_json_does() -> None:
    code, text = _run("model", "--parallelism", "9999")
    assert code == 0, text
    assert "inputs: parallelism=9,999\n" in text
    assert re.search(r"taskmanagers\s+│\s+9,999 │", text), text
    assert re.search(r"remote_channels_per_taskmanager\s+│\s+9,998 │", text), text
    assert "e+0" not in text
    code, out = _run("model", "--parallelism", "9999", "-f", "json")
    quantities = json.loads(out)["quantities"]
    assert quantities["taskmanagers"]["value"] == 9999
    assert quantities["remote_channels_per_taskmanager"]["value"] == 9998


def test_sweep_labels_and_inputs_line_are_exact() -> None:
    code, text = _run("model", "--sweep", "parallelism=100,9999,20000")
    assert code == 0, text
    assert "e+0" not in text
    assert re.search(r"│\s+9,999 │", text) and re.search(r"│\s+20,000 │", text), text
    assert re.search(r"^ 9,999 │", text, re.MULTILINE) and re.search(r"^20,000 │", text, re.MULTILINE), text
    code, text = _run("model", "--config", str(SAMPLES / "large-batch.flink-conf.yaml"))
    assert code == 0, text
    assert "inputs: parallelism=2,000; slots=8; exchanges=3;" in text
    assert "e+0" not in text


# ------------------------------------------------------------------------- 2. bits or bytes

@pytest.mark.parametrize(("text", "bytes_per_s"), [
    ("10Gbit/s", 1.25e9), ("10Gbit", 1.25e9), ("10Gbps", 1.25e9), ("10gbps", 1.25e9),
    ("100Mbit/s", 12.5e6), ("100Mbps", 12.5e6), ("1 Gbit/s", 1.25e8), ("500kbit/s", 62.5e3),
    ("10Gb", 1.25e9), ("10Gb/s", 1.25e9), ("100Mb", 12.5e6),
    ("1.25GB/s", 1.25e9), ("1.25GB", 1.25e9), ("125MB/s", 125e6), ("125MBps", 125e6), ("500B/s", 500.0),
])
def test_unambiguous_bandwidths_are_read(text: str, bytes_per_s: float) -> None:
    assert parse_bandwidth(text, what="--bandwidth") == pytest.approx(bytes_per_s)


@pytest.mark.parametrize(("text", "message"), [
    ("10G", "--bandwidth: '10G' is ambiguous: write 10Gbit/s (bits) or 1.25GB/s (bytes)"),
    ("10G/s", "--bandwidth: '10G/s' is ambiguous: write 10Gbit/s (bits) or 1.25GB/s (bytes)"),
    ("10gb", "--bandwidth: '10gb' is ambiguous (Flink's sizes read gb as gibibytes): write 10Gbit/s"),
    ("100mb/s", "--bandwidth: '100mb/s' is ambiguous (Flink's sizes read mb as mebibytes)"),
    ("10kb", "'10kb' is ambiguous"),
    ("10b", "'10b' is ambiguous"),
    ("10/s", "'10/s' is ambiguous"),
    ("10", "--bandwidth: '10' has no unit; write 10Gbit/s or 10MB/s"),
    ("10Gbps/s", "is not a bandwidth like"),
])
def test_ambiguous_bandwidths_are_refused(text: str, message: str) -> None:
    with pytest.raises(FlinktuneError) as caught:
        parse_bandwidth(text, what="--bandwidth")
    assert message in caught.value.message


def _documented_bandwidths() -> set[str]:
    found: set[str] = set()
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        found |= set(re.findall(r"--bandwidth[ =]([0-9][^\s`'\",)]*)", text))
        found |= set(re.findall(r"\bbandwidth: ([0-9][^\n,}`]*?)\s*(?:[,}\n`]|$)", text))
    for path in [*SAMPLES.rglob("*.yaml"), *(ROOT / "tests").rglob("*.yaml"),
                 *(ROOT / "rules").rglob("*.yaml")]:
        found |= set(re.findall(r"\bbandwidth: ([0-9][^\n,}#]*?)\s*(?:[,}\n#]|$)",
                                path.read_text(encoding="utf-8")))
    return found


def test_every_documented_bandwidth_spelling_still_works() -> None:
    # A bare number or a zero is mentioned only as refused (docs/model.md, "Units").
    spellings = {s for s in _documented_bandwidths() if re.search("[A-Za-z]", s) and float(
        re.match(r"[0-9.]+", s).group()) > 0}  # type: ignore[union-attr]
    assert {"10Gbit/s", "25Gbit/s", "100Mbit/s", "1 Gbit/s"} <= spellings, spellings
    for text in spellings:
        assert parse_bandwidth(text, what="x") > 0, text


@pytest.mark.parametrize("command", [["model"], ["recommend", str(SAMPLES / "legacy-1.x.flink-conf.yaml")]])
def test_flags_and_profiles_refuse_10g(tmp_path: Path, command: list[str]) -> None:
    _refused([*command, "--bandwidth", "10G"],
             "--bandwidth: '10G' is ambiguous: write 10Gbit/s (bits) or 1.25GB/s (bytes)")
    profile = tmp_path / "p.yaml"
    profile.write_text("rtt: 2ms\nbandwidth: 10gb\n", encoding="utf-8")
    _refused([*command, "--profile", str(profile)], f"{profile}:2: bandwidth: '10gb' is ambiguous")


def test_analyze_refuses_10g_before_reading(tmp_path: Path) -> None:
    _refused(["analyze", str(tmp_path / "dump"), "--bandwidth", "10G"], "--bandwidth: '10G' is ambiguous")


SCENARIO = """\
name: t
cluster: {{bandwidth: {bandwidth}}}
job:
  vertices:
    - {{name: src, parallelism: 2, capacity: 1000, record_size: {{fixed: 100b}}}}
    - {{name: sink, parallelism: 2, capacity: 1000}}
"""


@pytest.mark.parametrize(("bandwidth", "message"), [
    ("10G", "x.yaml:2: cluster.bandwidth: '10G' is ambiguous: write 10Gbit/s (bits) or 1.25GB/s (bytes)"),
    ("10gb", "cluster.bandwidth: '10gb' is ambiguous"),
    ("1250000000", "cluster.bandwidth: '1250000000' has no unit"),
    ("0", "cluster.bandwidth: '0' must be a positive, finite number"),
])
def test_scenario_files_take_the_same_rule(bandwidth: str, message: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        scenario_from_text(SCENARIO.format(bandwidth=bandwidth), file="x.yaml")
    assert message in caught.value.one_line()
    assert scenario_from_text(SCENARIO.format(bandwidth="10Gb"), file="x.yaml").cluster.bandwidth == 1.25e9


# ------------------------------------------------------------------------- 3. zero and below

@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--bandwidth", "0", "--bandwidth: '0' must be a positive, finite number"),
    ("--bandwidth", "-5", "--bandwidth: '-5' must be a positive, finite number"),
    ("--bandwidth", "0Gbit/s", "--bandwidth: '0Gbit/s' must be a positive, finite number"),
    ("--bandwidth", "-1Gbit/s", "--bandwidth: '-1Gbit/s' must be a positive, finite number"),
    ("--rtt", "0", "--rtt: must be above zero, got '0'"),
    ("--rtt", "0ms", "--rtt: must be above zero, got '0ms'"),
    ("--rtt", "-1ms", "--rtt: must be above zero, got '-1ms'"),
    ("--rtt", "-1", "--rtt: must be above zero, got '-1'"),
    ("--receiver-free", "-1ms", "--receiver-free: must not be negative, got '-1ms'"),
])
def test_zero_or_negative_gets_the_positive_number_message(flag: str, value: str, message: str) -> None:
    _refused(["model", f"{flag}={value}"], message)


def test_zero_is_still_a_duration_where_zero_is_allowed() -> None:
    assert parse_duration_s("0", what="--buffer-timeout") == 0.0
    code, text = _run("model", "--receiver-free", "0", "--buffer-timeout", "0")
    assert code == 0, text


def test_requested_memory_usage_is_not_defined_without_buffers(tmp_path: Path) -> None:
    code, text = _run("model", "--network-memory", "1kb")
    assert code == 0, text
    assert re.search(r"network_buffers_available\s+│\s+0 │", text), text
    assert re.search(r"requested_memory_usage\s+│\s+n/a │", text), text
    code, out = _run("model", "--network-memory", "1kb", "-f", "json")
    assert json.loads(out)["quantities"]["requested_memory_usage"]["value"] is None
    code, out = _run("model", "--sweep", "network-memory=1kb,64mb", "-f", "json")
    values = json.loads(out)["quantities"]["requested_memory_usage"]["values"]
    assert values[0] is None and values[1] == pytest.approx(20.3125)
    config = tmp_path / "flink-conf.yaml"
    config.write_text("taskmanager.memory.process.size: 1728m\ntaskmanager.memory.network.min: 1kb\n"
                      "taskmanager.memory.network.max: 1kb\nparallelism.default: 4\n"
                      "taskmanager.numberOfTaskSlots: 2\n", encoding="utf-8")
    code, text = _run("recommend", str(config))
    assert "0 available of 32768 bytes: DOES NOT FIT (RequestedMemoryUsage n/a)" in text, text
    assert "inf%" not in text
