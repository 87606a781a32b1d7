"""The what-if evaluator (vectorised) against the scalar ports, and the ``flinktune model`` command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from flinktune.cli.app import app
from flinktune.errors import ModelInputError, UsageError
from flinktune.model.buffers import buffer_settings, worst_case_taskmanager_buffers
from flinktune.model.memory import TaskManagerMemoryOptions, derive_taskmanager_memory
from flinktune.model.sweep import evaluate, parse_sweep
from flinktune.versions import FlinkVersion

V116, V120, V20 = FlinkVersion(1, 16), FlinkVersion(1, 20), FlinkVersion(2, 0)
runner = CliRunner()


@settings(max_examples=80, deadline=None)
@given(p=st.integers(1, 3000), slots=st.integers(1, 32), exchanges=st.integers(1, 4), bpc=st.integers(0, 12),
       fpg=st.integers(1, 64),
       version=st.sampled_from([FlinkVersion(1, 13), V116, FlinkVersion(1, 17), V120]))
def test_vectorised_memory_demand_equals_the_scalar_port(p: int, slots: int, exchanges: int, bpc: int,
                                                         fpg: int, version: FlinkVersion) -> None:
    q = evaluate({"parallelism": p, "slots": slots, "exchanges": exchanges, "buffers-per-channel": bpc,
                  "floating": fpg}, version)
    scalar = worst_case_taskmanager_buffers(p, slots, buffer_settings(version, buffers_per_channel=bpc,
                                                                      floating_per_gate=fpg),
                                            exchanges=exchanges)
    assert q["buffers_required_per_taskmanager"].value == scalar.required
    assert q["buffers_target_per_taskmanager"].value == scalar.target


def test_vectorised_available_buffers_use_flinks_derivation() -> None:
    sizes = np.array([1024, 1728, 4096, 8192, 16384], dtype=float) * 1024**2
    q = evaluate({"process-size": sizes}, V116)
    expected = [derive_taskmanager_memory(TaskManagerMemoryOptions(process_bytes=int(s)), V116)
                .network_buffers for s in sizes]
    assert q["network_buffers_available"].value.tolist() == expected
    assert expected[1:4] == [4096, 10977, 22773]


def test_facts_table_through_the_evaluator() -> None:
    q = evaluate({"parallelism": np.array([8, 128, 200]), "slots": 4, "exchanges": 2})
    assert q["buffers_required_per_taskmanager"].value.tolist() == [208, 3088, 4816]
    assert q["fits"].value.tolist() == [True, True, False]
    assert q["requested_memory_usage"].value.tolist() == pytest.approx([9.375, 103.125, 159.375])


def test_flink_2_refuses_buffer_tuning() -> None:
    with pytest.raises(ModelInputError, match="cannot be tuned"):
        evaluate({"buffers-per-channel": 4}, V20)
    with pytest.raises(ModelInputError, match="cannot be tuned"):
        evaluate({"floating": np.arange(1, 5)}, V20)
    credits = evaluate({"buffers-per-channel": 2}, V20)["credits_per_channel"].value
    assert credits == pytest.approx(2 + 8 / 100)


@settings(max_examples=100, deadline=None)
@given(rtt=st.floats(1e-5, 1.0), bw=st.floats(1e6, 1e11), p=st.integers(1, 5000), slots=st.integers(1, 64),
       bpc=st.integers(0, 50))
def test_evaluated_throughput_never_exceeds_bandwidth(rtt: float, bw: float, p: int, slots: int,
                                                     bpc: int) -> None:
    q = evaluate({"rtt": rtt, "bandwidth": bw, "parallelism": p, "slots": slots, "buffers-per-channel": bpc})
    assert q["channel_throughput"].value <= bw * (1 + 1e-12)
    assert q["taskmanager_throughput"].value <= bw * (1 + 1e-12)


def test_evaluate_rejects_bad_inputs() -> None:
    for bad in ({"rtt": 0}, {"parallelism": 2.5}, {"bandwidth": -1}, {"nonsense": 1}, {"floating": 0},
                {"slots": 1, "taskmanagers": 2, "parallelism": 3}, {"hot-channels": 200, "parallelism": 100}):
        with pytest.raises(ModelInputError):
            evaluate(bad)


def test_parse_sweep_forms() -> None:
    param, points = parse_sweep("buffers-per-channel=1..16")
    assert param.name == "buffers-per-channel" and points.tolist() == list(range(1, 17))
    assert parse_sweep("rtt=1ms..10ms:4")[1].tolist() == pytest.approx([0.001, 0.004, 0.007, 0.01])
    assert parse_sweep("bandwidth=1Gbit/s,10Gbit/s")[1].tolist() == [1.25e8, 1.25e9]
    assert parse_sweep("parallelism=1..1000:4:log")[1].tolist() == [1, 10, 100, 1000]
    assert parse_sweep("segment-size=4kb,32kb")[1].tolist() == [4096, 32768]
    for bad in ("rtt", "nope=1..2", "rtt=5ms..1ms:3", "rtt=1ms..2ms", "parallelism=1..10:1",
                "rtt=1ms..2ms:3:cubic"):
        with pytest.raises((UsageError, ModelInputError)):
            parse_sweep(bad)


# --- the command ---------------------------------------------------------------------------------

def test_model_command_prints_quantities_with_units_and_formulas() -> None:
    result = runner.invoke(app, ["model", "--rtt", "2ms", "--bandwidth", "10Gbit/s", "--parallelism", "200",
                                 "--slots", "4", "--segment-size", "32kb", "--buffers-per-channel", "2",
                                 "--floating", "8", "--record-size", "200b", "--rate", "1e5",
                                 "--buffer-timeout", "100ms", "--flink-version", "1.20"])
    assert result.exit_code == 0, result.output
    assert "credit_ceiling" in result.output and "MB/s" in result.output
    assert "min(credit ceiling, NIC share)" in result.output
    assert "buffers_required_per_taskmanager" in result.output and "2,408" in result.output


def test_model_command_json_and_sweep_chart() -> None:
    result = runner.invoke(app, ["model", "--parallelism", "200", "--slots", "4", "--exchanges", "2",
                                 "--sweep", "buffers-per-channel=1..4", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["sweep"] == {"parameter": "buffers-per-channel", "values": [1.0, 2.0, 3.0, 4.0]}
    assert data["quantities"]["buffers_required_per_taskmanager"]["values"][1] == 4816
    text = runner.invoke(app, ["model", "--sweep", "rtt=1ms..4ms:4", "--chart", "credit_ceiling"])
    assert text.exit_code == 0
    assert "credit_ceiling (ceiling = credits * segment" in text.output and "│█" in text.output


def test_model_command_markdown_is_the_text_reports_table() -> None:
    """The markdown format (issue 25: a format added as one emitter in report/emit/model.py): the
    same figures as the text report, as GitHub tables; a sweep one row per point."""
    args = ["model", "--parallelism", "200", "--slots", "4", "--flink-version", "1.20"]
    text, markdown = runner.invoke(app, args), runner.invoke(app, [*args, "-f", "markdown"])
    assert text.exit_code == markdown.exit_code == 0, markdown.output
    rows = {line.split(" | ")[1]: line.split(" | ")[2] for line in markdown.output.splitlines()
            if line.startswith("| ") and not line.startswith("| section")}
    assert rows["buffers_required_per_taskmanager"] == "2,408" and "2,408" in text.output
    assert rows["credit_ceiling"] in text.output and rows["fits"] == "yes"
    assert "|---|---|---:|---|" in markdown.output and "note" not in markdown.output.lower()
    swept = runner.invoke(app, ["model", "--parallelism", "200", "--sweep", "slots=1,2,4", "-f", "markdown",
                                "--show", "buffers_required_per_taskmanager,fits"])
    assert swept.exit_code == 0, swept.output
    table = [line for line in swept.output.splitlines() if line.startswith("|")]
    assert table[0] == "| slots | buffers_required_per_taskmanager [buffers] | fits |"
    assert [row.split(" | ")[0] for row in table[2:]] == ["| 1", "| 2", "| 4"]
    wrong = runner.invoke(app, ["model", "--sweep", "slots=1,2", "--show", "nope", "-f", "markdown"])
    assert wrong.exit_code == 2 and "unknown quantity nope" in wrong.output


def test_model_command_on_flink_2_says_buffers_are_fixed() -> None:
    ok = runner.invoke(app, ["model", "--flink-version", "2.0"])
    assert ok.exit_code == 0 and "cannot be tuned" in ok.output
    refused = runner.invoke(app, ["model", "--flink-version", "2.0", "--sweep", "buffers-per-channel=1..4"])
    assert refused.exit_code == 2
    assert "fixed in Flink 2.0" in refused.output and "Traceback" not in refused.output


def test_model_command_reads_a_flink_config(tmp_path: Path) -> None:
    conf = tmp_path / "flink-conf.yaml"
    conf.write_text("taskmanager.memory.process.size: 4096m\ntaskmanager.numberOfTaskSlots: 4\n"
                    "taskmanager.network.memory.buffers-per-channel: 4\nexecution.buffer-timeout: 10ms\n",
                    encoding="utf-8")
    result = runner.invoke(app, ["model", "--config", str(conf), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["parameters"]["slots"] == 4 and data["parameters"]["buffers-per-channel"] == 4
    assert data["parameters"]["buffer-timeout"] == pytest.approx(0.01)
    assert data["quantities"]["network_buffers_available"]["value"] == 10977


def test_model_command_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    bad_conf = tmp_path / "flink-conf.yaml"
    bad_conf.write_text("taskmanager.memory.process.size: 400m\n", encoding="utf-8")
    result = runner.invoke(app, ["model", "--config", str(bad_conf)])
    assert result.exit_code == 2
    assert f"{bad_conf}:1: Flink would refuse" in result.output and "Traceback" not in result.output
    profile = tmp_path / "p.yaml"
    profile.write_text("rtt: 2ms\nwarp: 9\n", encoding="utf-8")
    result = runner.invoke(app, ["model", "--profile", str(profile)])
    assert result.exit_code == 2 and f"{profile}:2: unknown parameter 'warp'" in result.output
    for args in (["--rtt", "0"], ["--rtt", "fast"], ["--sweep", "rtt=1..2"], ["--format", "xml"],
                 ["--parallelism", "-3"]):
        result = runner.invoke(app, ["model", *args])
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output
