"""Unit tests of the advisor's decisions: version awareness, the analysis verdict, memory fitting.

Flink facts asserted here (flink-facts.md): buffers-per-channel / floating-buffers-per-gate /
max-overdraft exist in 1.x and were removed in 2.0 (NettyShuffleEnvironmentOptions @1.20,
NettyShuffleEnvironmentConfiguration @2.0); the buffer-timeout key is execution.buffer-timeout up to
1.17 and execution.buffer-timeout.interval / .enabled from 1.18 (ExecutionOptions, FLINK-32023);
overdraft from 1.16 (FLINK-26762); sort-merge shuffle is opt-in up to 1.14 (min-parallelism
Integer.MAX_VALUE) and the default from 1.15.
"""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from flinktune.advise import Environment, parse_parameters, recommend
from flinktune.advise.measured import Measured, measured_from_analysis
from flinktune.change import Applicability
from flinktune.cli.app import app
from flinktune.config.reader import read_config_text
from flinktune.errors import ConfigError
from flinktune.model.memory import derive_taskmanager_memory, taskmanager_memory_options
from flinktune.situation.environment import load_profile
from flinktune.versions import parse_version

STREAM = """taskmanager.memory.process.size: 4096m
taskmanager.numberOfTaskSlots: 4
parallelism.default: 8
"""


def _rec(text: str, version: str, name: str = "flink-conf.yaml", measured: Measured | None = None,
         plan: dict | None = None, **flags: str):  # type: ignore[no-untyped-def]
    given = {k.replace("_", "-"): v for k, v in flags.items()}
    env = Environment().with_values(parse_parameters(given), "flag")
    document = read_config_text(text, name)[0]
    return recommend(document, text, parse_version(version), env, measured=measured, plan=plan)


def _keys(rec) -> dict[str, str | None]:  # type: ignore[no-untyped-def]
    return {(c.new_key or c.key): c.value for c in rec.changes}


def test_long_rtt_raises_buffers_per_channel_on_1x() -> None:
    rec = _rec(STREAM, "1.17", rtt="20ms", rate="100000", record_size="1kb", exchanges="1")
    keys = _keys(rec)
    # 100k x 1 KiB / 8 channels = 12.8 MB/s, x1.5, x 20 ms / 32 KiB = 12 credits (docs' formula)
    assert keys["taskmanager.network.memory.buffers-per-channel"] == str(
        math.ceil(100000 * 1024 / 8 * 1.5 * 0.020 / 32768))
    assert "taskmanager.memory.segment-size" not in keys
    ceiling = next(e for c in rec.changes for e in c.effects if e.name == "channel_ceiling_bytes_per_s")
    assert ceiling.after > ceiling.before


def test_flink2_turns_credit_advice_into_segment_size() -> None:
    text = ("taskmanager.memory.process.size: 4096m\ntaskmanager.numberOfTaskSlots: 4\n"
            "parallelism.default: 8\n")
    rec = _rec(text, "2.0", name="config.yaml", rtt="20ms", rate="100000", record_size="1kb", exchanges="1")
    keys = _keys(rec)
    assert not any("buffers-per-channel" in k or "floating" in k for k in keys)
    assert keys["taskmanager.memory.segment-size"] in ("64kb", "128kb", "256kb")
    assert any("removed buffers-per-channel" in n for n in rec.notes)


def test_removed_keys_are_deleted_on_flink2() -> None:
    text = STREAM + "taskmanager.network.memory.floating-buffers-per-gate: 32\n"
    rec = _rec(text, "2.0", name="config.yaml")
    change = next(c for c in rec.changes if c.key.endswith("floating-buffers-per-gate"))
    assert change.action == "delete" and "hard-codes it to 8" in change.why
    # Flink 2.0 does not read the key: deleting it changes nothing Flink runs with (safe); a value the
    # advisor sets does (unsafe: written only because --write asks for it). Each names its step.
    assert change.applicability is Applicability.SAFE and change.proposed_by == "removed-keys"
    assert change.file == "config.yaml"
    assert all(c.applicability is Applicability.UNSAFE for c in rec.changes if c.action == "set")


@pytest.mark.parametrize(("version", "key"), [("1.17", "execution.buffer-timeout"),
                                              ("1.18", "execution.buffer-timeout.interval"),
                                              ("2.0", "execution.buffer-timeout.interval")])
def test_buffer_timeout_key_follows_the_version(version: str, key: str) -> None:
    name = "config.yaml" if version.startswith("2") else "flink-conf.yaml"
    rec = _rec(STREAM, version, name=name, latency_target="20ms", exchanges="1")
    assert _keys(rec)[key] == "10 ms"      # 20 ms target over 1 exchange: half of it for flushing
    # Without a plan or --exchanges the budget is split over the pessimistic bound (3 exchanges).
    assert _keys(_rec(STREAM, version, name=name, latency_target="20ms"))[key] == "2 ms"
    latency = next(e for c in rec.changes for e in c.effects if e.name == "added_latency_s")
    assert latency.before == pytest.approx(0.1) and latency.after == pytest.approx(0.01)


def test_disabled_timeout_is_enabled_for_a_latency_target() -> None:
    rec = _rec(STREAM + "execution.buffer-timeout.enabled: false\n", "1.19", latency_target="50ms",
               exchanges="1")
    keys = _keys(rec)
    assert keys["execution.buffer-timeout.enabled"] == "true"
    assert keys["execution.buffer-timeout.interval"] == "20 ms"


def test_timeout_within_the_band_is_kept() -> None:
    rec = _rec(STREAM + "execution.buffer-timeout.interval: 8 ms\n", "1.19", latency_target="20ms",
               exchanges="1")
    assert "execution.buffer-timeout.interval" not in _keys(rec)


def test_not_network_bottleneck_says_buffers_will_not_help() -> None:
    measured = Measured("job", 8, 100000.0, 1024.0, 0.9, 1.0, "Window", "all_busy", "unknown")
    rec = _rec(STREAM, "1.17", measured=measured, rtt="20ms")
    assert not any("buffers-per-channel" in k or "floating" in k for k in _keys(rec))
    assert any("Buffer tuning will not fix it" in n and "Window" in n for n in rec.notes)
    # Without that verdict the same inputs do call for more credits.
    rec2 = _rec(STREAM, "1.17", rtt="20ms", rate="100000", record_size="1kb", exchanges="1")
    assert "taskmanager.network.memory.buffers-per-channel" in _keys(rec2)


def test_measured_values_replace_assumptions_but_not_flags() -> None:
    measured = Measured("job", 8, 5000.0, 300.0, 0.5, 3.0, "Sink", "too_few_credits", "some")
    rec = _rec(STREAM, "1.17", measured=measured, rtt="1ms")
    assert rec.job.rate_per_subtask == 5000.0 and rec.job.record_bytes == 300.0
    assert rec.environment.source("rate") == "metrics"
    rec = _rec(STREAM, "1.17", measured=measured, rtt="1ms", rate="9000")
    assert rec.job.rate_per_subtask == 9000.0


def test_debloat_skipped_for_multi_input_plan() -> None:
    plan = {"plan": {"nodes": [
        {"id": "a", "parallelism": 8, "description": "Source: A"},
        {"id": "b", "parallelism": 8, "description": "Source: B"},
        {"id": "j", "parallelism": 8, "description": "Join",
         "inputs": [{"num": 0, "id": "a", "ship_strategy": "HASH", "exchange": "pipelined_bounded"},
                    {"num": 1, "id": "b", "ship_strategy": "HASH", "exchange": "pipelined_bounded"}]}]}}
    # A full gate drains in minutes at 100 records/s, and the dump shows the receivers' gates full.
    slow = {"measured": Measured("job", 8, 100.0, 1024.0, None, None, "Join", "slow_receiver", "unknown",
                                 in_pool_usage=0.9, backpressured_exchanges=1)}
    rec = _rec(STREAM, "1.17", **slow)
    assert _keys(rec).get("taskmanager.network.memory.buffer-debloat.enabled") == "true"
    rec = _rec(STREAM, "1.17", plan=plan, **slow)
    assert "taskmanager.network.memory.buffer-debloat.enabled" not in _keys(rec)
    assert any("several inputs" in n and "Join" in n for n in rec.notes)
    # Already on for such a job: switched off, with the reason.
    enabled = STREAM + "taskmanager.network.memory.buffer-debloat.enabled: true\n"
    rec = _rec(enabled, "1.17", plan=plan, **slow)
    assert _keys(rec)["taskmanager.network.memory.buffer-debloat.enabled"] == "false"


def test_debloat_needs_1_14() -> None:
    measured = Measured("job", 8, 100.0, 1024.0, None, None, "Sink", "slow_receiver", "unknown",
                        in_pool_usage=0.9, backpressured_exchanges=1)
    on_1_14 = _keys(_rec(STREAM, "1.14", measured=measured))
    assert "taskmanager.network.memory.buffer-debloat.enabled" in on_1_14
    rec = _rec(STREAM, "1.13", measured=measured)
    assert "taskmanager.network.memory.buffer-debloat.enabled" not in _keys(rec)


@pytest.mark.parametrize(("version", "expected"), [("1.15", None), ("1.16", "8"), ("1.20", "8")])
def test_overdraft_only_where_it_exists(version: str, expected: str | None) -> None:
    # 2000 KiB records fill 8 buffers of 256 KiB: more than the default 5 overdraft buffers.
    rec = _rec(STREAM + "taskmanager.memory.segment-size: 256kb\n", version, record_size="2000kb")
    assert _keys(rec).get("taskmanager.network.memory.max-overdraft-buffers-per-gate") == expected


def test_hash_shuffle_before_1_15_switches_to_sort_merge() -> None:
    text = ("taskmanager.memory.process.size: 8192m\ntaskmanager.numberOfTaskSlots: 4\n"
            "parallelism.default: 500\n"
            "execution.runtime-mode: BATCH\n")
    rec = _rec(text, "1.14")
    change = next(c for c in rec.changes if c.key == "taskmanager.network.sort-shuffle.min-parallelism")
    assert change.value == "1" and "FLIP-148" in change.why and "500 files per producer" in change.why
    assert not any(c.key.startswith("execution.buffer-timeout") for c in rec.changes)  # batch: no timeout
    rec15 = _rec(text, "1.15")
    assert "taskmanager.network.sort-shuffle.min-parallelism" not in _keys(rec15)


def test_batch_read_memory_stays_below_framework_off_heap() -> None:
    text = ("taskmanager.memory.process.size: 16g\ntaskmanager.numberOfTaskSlots: 8\n"
            "parallelism.default: 2000\n"
            "execution.runtime-mode: BATCH\n")
    rec = _rec(text, "1.20")
    keys = _keys(rec)
    assert keys["taskmanager.memory.framework.off-heap.batch-shuffle.size"] == "256mb"
    assert keys["taskmanager.memory.framework.off-heap.size"] == "320mb"   # 256m + the 64m rest (1.15+)


def test_network_memory_grows_and_process_size_follows_when_heap_is_squeezed() -> None:
    text = ("taskmanager.memory.process.size: 1728m\ntaskmanager.numberOfTaskSlots: 8\n"
            "parallelism.default: 1000\n")
    rec = _rec(text, "1.17", exchanges="1")
    keys = _keys(rec)
    assert "taskmanager.memory.network.min" in keys
    assert "taskmanager.memory.process.size" in keys
    new_doc = read_config_text(rec.new_text, "flink-conf.yaml")[0]
    memory = derive_taskmanager_memory(taskmanager_memory_options(new_doc.values()), parse_version("1.17"))
    assert memory.network_buffers >= rec.final_fit.required
    assert memory.task_heap_bytes >= 8 * 32 * 1024**2
    assert rec.original_fit is not None and not rec.original_fit.fits


def test_network_max_raised_on_1_16_when_needed() -> None:
    text = ("taskmanager.memory.process.size: 32g\ntaskmanager.numberOfTaskSlots: 8\n"
            "parallelism.default: 2000\n")
    rec = _rec(text, "1.16", exchanges="1")   # network.max defaults to 1g up to 1.16
    keys = _keys(rec)
    assert "taskmanager.memory.network.max" in keys and "taskmanager.memory.network.min" in keys


DEPLOYMENT = """apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: big
spec:
  flinkVersion: v1_18
  flinkConfiguration:
    taskmanager.numberOfTaskSlots: "8"
  taskManager:
    resource:
      memory: "2048m"
  job:
    parallelism: 600
"""


def test_deployment_spec_parallelism_and_memory_are_used() -> None:
    rec = _rec(DEPLOYMENT, "1.18", name="deploy.yaml", exchanges="1")
    assert rec.job.parallelism == 600
    assert rec.environment.source("parallelism") == "spec"   # spec.job.parallelism (Situation)
    spec = [c for c in rec.changes if c.target == "spec"]
    assert spec and spec[0].key == "spec.taskManager.resource.memory" and spec[0].current == "2048m"
    # Written where the operator reads it (FlinkConfigBuilder maps it to process.size), not into
    # flinkConfiguration, so a rerun on the output proposes nothing (issue 13, case 6).
    assert f'memory: "{spec[0].value}"' in rec.new_text
    assert "taskmanager.memory.process.size" not in rec.new_text
    assert "taskmanager.memory.network.min" in rec.new_text
    again = _rec(rec.new_text, "1.18", name="deploy.yaml", exchanges="1")
    assert again.changes == ()


def test_profile_errors_name_file_and_line(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text("rtt: 2ms\nbandwith: 10Gbit/s\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_profile(profile)
    assert info.value.line == 2 and "bandwith" in info.value.message
    profile.write_text("rtt: -2ms\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        load_profile(profile)


def test_cli_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    conf = tmp_path / "flink-conf.yaml"
    conf.write_text(STREAM, encoding="utf-8")
    for args in (["--rtt", "fast"], ["--workload", "interactive"], ["--format", "xml"]):
        result = CliRunner().invoke(app, ["recommend", str(conf), *args])
        assert result.exit_code == 2, (args, result.output)
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
    result = CliRunner().invoke(app, ["recommend", str(tmp_path / "missing.yaml")])
    assert result.exit_code == 2


def test_measured_from_analysis_reduces_the_busiest_job() -> None:
    def vertex(name: str, p: int, bytes_out: float | None, rec_out: float | None, skew: float | None,
               buf: float | None) -> SimpleNamespace:
        avg = bytes_out / rec_out if bytes_out and rec_out else None
        return SimpleNamespace(name=name, parallelism=p, bytes_out_per_s=bytes_out, records_out_per_s=rec_out,
                               avg_record_bytes=avg, records_in_skew=skew, remote_buffer_bytes=buf)

    origin = SimpleNamespace(name="Sink", cause="hot_subtask", channels="some",
                             evidence=("one busy subtask",))
    job = SimpleNamespace(job_name="etl", job_id=None, job_key="k", origins=(origin,), vertices=(
        vertex("Source", 4, 4_000_000.0, 4000.0, 1.0, None),
        vertex("Sink", 4, None, None, 3.5, 16384.0)))
    m = measured_from_analysis(SimpleNamespace(jobs=(job,)), 32768)
    assert m.rate_per_subtask == 1000.0 and m.record_bytes == 1000.0
    assert m.skew == 3.5 and m.buffer_fill == 0.5 and m.not_network and m.origin == "Sink"


@pytest.mark.parametrize(("line", "key", "value"), [
    ("taskmanager.memory.segment-size: 3000\n", "taskmanager.memory.segment-size", "4kb"),
    ("taskmanager.network.memory.floating-buffers-per-gate: 0\n",
     "taskmanager.network.memory.floating-buffers-per-gate", "8"),
])
def test_values_flink_refuses_are_replaced_first(line: str, key: str, value: str) -> None:
    # ConfigurationParserUtils.getPageSize (power of two >= 4096); NettyShuffleEnvironmentConfiguration
    # 1.17+ (floating buffers >= 1).
    rec = _rec(STREAM + line, "1.17")
    assert rec.changes[0].key == key and rec.changes[0].value == value


def test_latency_budget_is_split_over_the_plans_exchanges() -> None:
    plan = {"plan": {"nodes": [
        {"id": "s", "parallelism": 8},
        {"id": "a", "parallelism": 8, "inputs": [{"num": 0, "id": "s", "ship_strategy": "HASH"}]},
        {"id": "b", "parallelism": 8, "inputs": [{"num": 0, "id": "a", "ship_strategy": "REBALANCE"}]}]}}
    rec = _rec(STREAM, "1.19", plan=plan, latency_target="20ms")
    assert rec.job.exchanges == 2
    assert _keys(rec)["execution.buffer-timeout.interval"] == "5 ms"   # 20 ms / (2 x 2 exchanges)


def test_real_placement_from_the_dump_sets_the_buffer_demand() -> None:
    """The slow-sink run placed subtasks {0,3} and {1,2} per TaskManager (job-vertices.json from
    Flink's REST /jobs/:jobid/vertices/:vid); with it, each TaskManager needs 60 buffers at
    start-up (worked by hand in tests/model/test_placement.py), and the advisor says so."""
    import json

    from flinktune.advise.engine import recommend as recommend_with_placement
    from flinktune.model.buffers import placement_from_job_json

    folder = Path(__file__).resolve().parents[2] / "sample_data" / "slow-sink"
    plan = json.loads((folder / "plan.json").read_text(encoding="utf-8"))
    vertices = json.loads((folder / "job-vertices.json").read_text(encoding="utf-8"))
    placement = placement_from_job_json(vertices)
    text = (folder / "flink-config.yaml").read_text(encoding="utf-8")
    document = read_config_text(text, "flink-config.yaml")[0]
    env = Environment()
    placed = recommend_with_placement(document, text, parse_version("1.20"), env, plan=plan,
                                      placement=placement)
    assert placed.job.placement == placement
    assert "placed as given" in placed.demand_assumption
    assert placed.original_fit is not None and placed.original_fit.required == 60

    bogus = {key: "tm-that-does-not-exist" for key in list(placement)[:1]}  # misses most subtasks
    fallback = recommend_with_placement(document, text, parse_version("1.20"), env, plan=plan,
                                        placement=bogus)
    assert fallback.job.placement is None
    assert any("placement" in note for note in fallback.assumptions)
