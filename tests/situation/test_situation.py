"""The four disagreements of issue 12, as regression tests, and the situation's own rules.

Flink facts used (sources in flinktune/situation/*.py docstrings):
- legacy heap keys: MemoryBackwardsCompatibilityUtils.getConfWithLegacyHeapSizeMappedToNewConfigOption
  (flink-runtime util/config/memory); BashJavaUtils maps the TaskManager's to TOTAL_FLINK_MEMORY and the
  JobManager's to JVM_HEAP_MEMORY (standalone); getClusterSpecification (Kubernetes/YARN) maps both to
  TOTAL_PROCESS_MEMORY; heap.size wins over heap.mb; the keys are gone in 2.0 (catalog).
- the operator: FlinkConfigBuilder.applyTaskManagerSpec / applyJobManagerSpec (resource.memory ->
  *.memory.process.size), applyJobOrSessionSpec (job.parallelism > 0 -> parallelism.default).
- "Insufficient number of network buffers": NetworkBufferPool (1.13 .. 2.x).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flinktune.cli.app import app
from flinktune.config.reader import read_config_file, read_config_text
from flinktune.lint import lint_paths
from flinktune.lint.model import LintOptions
from flinktune.model.network_fit import (
    network_fix,
    network_fix_changes,
    network_verdict,
    taskmanager_memory,
)
from flinktune.situation import (
    Environment,
    line_of_key,
    parse_parameters,
    read_profile,
    resolve_situation,
)
from flinktune.units import parse_bandwidth, parse_duration_s, parse_size_bytes
from flinktune.versions import FlinkVersion

SAMPLES = Path(__file__).resolve().parents[2] / "sample_configs"
runner = CliRunner()


def _situation(text: str, name: str = "flink-conf.yaml", **kw: object):  # type: ignore[no-untyped-def]
    document = read_config_text(text, name)[0]
    return resolve_situation(document, text=text, **kw)  # type: ignore[arg-type]


# ------------------------------------------------------------------ disagreement 1: the operator's spec

def test_lint_reports_the_buffer_shortfall_of_a_flinkdeployment_like_recommend() -> None:
    path = SAMPLES / "flinkdeployment.yaml"
    result = lint_paths([str(path)], LintOptions(env=(("parallelism", 400),)))
    ftc030 = [f for f in result.findings if f.code == "FTC030"]
    assert len(ftc030) == 1, [f.code for f in result.findings]
    assert "Insufficient number of network buffers" in ftc030[0].message
    document = read_config_file(path)[0]
    env = Environment().with_values({"parallelism": 400}, "flag")
    situation = resolve_situation(document, environment=env)
    verdict = network_verdict(situation)
    # spec.taskManager.resource.memory 4096m -> taskmanager.memory.process.size (FlinkConfigBuilder)
    assert situation.effective.memory_bytes("taskmanager.memory.process.size") == 4096 * 1024**2
    assert verdict.fits is False and verdict.fails_for_sure
    assert f"gives {verdict.available} buffers" in ftc030[0].message
    assert f"needs at least {verdict.minimum_demand.required}" in ftc030[0].message


def test_spec_job_parallelism_is_the_parallelism() -> None:
    document = read_config_file(SAMPLES / "flinkdeployment.yaml")[0]
    situation = resolve_situation(document)
    assert situation.parallelism.value == 400 and situation.parallelism.source == "spec"
    assert situation.parallelism.detail == "spec.job.parallelism"


# ------------------------------------------------------------------ disagreement 2: model reads 2.x as 2.x

def test_model_config_models_a_2x_file_as_2x() -> None:
    config = str(SAMPLES / "flink-2.x.config.yaml")
    result = runner.invoke(app, ["model", "--config", config, "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["flink_version"] == "2.0"
    # buffers-per-channel: 4 in the file is removed in 2.0 (fixed 2): the model does not take it.
    assert "buffers-per-channel" not in data["parameters"]


def test_version_is_inferred_from_keys_only_some_versions_read() -> None:
    text = "taskmanager.memory.process.size: 1728m\nstate.backend.type: forst\n"
    found = _situation(text)
    assert found.version.value == FlinkVersion(1, 20)       # both keys read by 1.20: nothing to infer
    legacy = _situation("taskmanager.memory.process.size: 1728m\ntaskmanager.network.numberOfBuffers: 4096\n"
                        "parallelism.default: 2\n")
    assert legacy.version.value < FlinkVersion(2, 0)


# ------------------------------------------------------------------ disagreement 3: legacy heap keys

@pytest.mark.parametrize(("text", "deployment", "target", "value"), [
    ("taskmanager.heap.size: 2048m\n", "standalone", "taskmanager.memory.flink.size", 2048 * 1024**2),
    ("taskmanager.heap.mb: 1024\n", "standalone", "taskmanager.memory.flink.size", 1024 * 1024**2),
    ("taskmanager.heap.size: 2g\ntaskmanager.heap.mb: 512\n", "standalone", "taskmanager.memory.flink.size",
     2 * 1024**3),
    ("taskmanager.heap.size: 2048m\nexecution.target: kubernetes-session\n", "kubernetes",
     "taskmanager.memory.process.size", 2048 * 1024**2),
    ("jobmanager.heap.size: 1024m\n", "standalone", "jobmanager.memory.heap.size", 1024 * 1024**2),
    ("jobmanager.heap.mb: 1024\nexecution.target: yarn-per-job\n", "yarn", "jobmanager.memory.process.size",
     1024 * 1024**2),
])
def test_legacy_heap_keys_map_as_flink_maps_them(text: str, deployment: str, target: str, value: int) -> None:
    situation = _situation(text)
    assert situation.deployment.value == deployment
    assert situation.effective.memory_bytes(target) == value
    entry = situation.entry(target)
    # The mapped entry points at the legacy key's line (messages cite it).
    assert entry is not None and entry.line == next(n for n, line in enumerate(text.splitlines(), 1)
                                                    if ".heap." in line)


def test_legacy_heap_keys_are_ignored_when_the_new_option_is_set_and_in_2x() -> None:
    both = _situation("taskmanager.heap.size: 2048m\ntaskmanager.memory.flink.size: 1g\n")
    assert both.effective.memory_bytes("taskmanager.memory.flink.size") == 1024**3
    two = _situation("taskmanager.heap.size: 2048m\n", environment=Environment().with_values(
        parse_parameters({"flink-version": "2.0"}), "flag"))
    assert not two.effective.is_set("taskmanager.memory.flink.size")


def test_memory_and_buffer_checks_run_on_legacy_heap_configs(tmp_path: Path) -> None:
    situation = _situation("taskmanager.heap.size: 1024m\ntaskmanager.numberOfTaskSlots: 8\n"
                           "parallelism.default: 400\n")
    memory = taskmanager_memory(situation)
    assert memory.memory is not None and memory.memory.path == "flink-size"
    verdict = network_verdict(situation)
    assert verdict.fits is False
    result = lint_paths([str(_tmp_file(tmp_path, "taskmanager.heap.size: 1024m\n"
                                       "taskmanager.numberOfTaskSlots: 8\nparallelism.default: 400\n"
                                       "jobmanager.memory.process.size: 1600m\n"))])
    assert "FTC030" in {f.code for f in result.findings}


def _tmp_file(folder: Path, text: str) -> Path:
    path = folder / "flink-conf.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_no_memory_size_is_flinks_refusal_for_a_complete_file_only(tmp_path: Path) -> None:
    from flinktune.rules import evaluate_document, load_rules
    from flinktune.situation.sourced import Sourced

    path = _tmp_file(tmp_path, "taskmanager.numberOfTaskSlots: 4\nparallelism.default: 2\n")
    document = read_config_file(path)[0]
    complete = resolve_situation(document, completeness=Sourced("complete", "project"))
    found = evaluate_document(load_rules(), document, complete.flink_version, situation=complete)
    refusals = [f for f in found if f.code == "FTC050"]
    # TaskExecutorProcessUtils / ProcessMemoryUtils: "Either required fine-grained memory ... need to be
    # configured explicitly." when no size is set.
    assert refusals and "configured explicitly" in refusals[0].message
    assert refusals[0].severity.value == "error"
    assert "configured explicitly" in str(taskmanager_memory(complete).error)
    overlay = resolve_situation(document, completeness=Sourced("overlay", "project"))
    assert taskmanager_memory(overlay).error is None
    assert "FTC050" not in {f.code for f in evaluate_document(load_rules(), document, overlay.flink_version,
                                                               situation=overlay)}


# ------------------------------------------------------------------ disagreement 4: units

@pytest.mark.parametrize(("call", "message"), [
    (lambda: parse_duration_s("5", what="--rtt"), "--rtt: '5' has no unit; write 5ms or 5s"),
    (lambda: parse_duration_s(5, what="rtt"), "rtt: '5' has no unit; write 5ms or 5s"),
    (lambda: parse_bandwidth("10", what="--bandwidth"),
     "--bandwidth: '10' has no unit; write 10Gbit/s or 10MB/s"),
    (lambda: parse_bandwidth(10, what="bandwidth"), "bandwidth: '10' has no unit"),
])
def test_bare_durations_and_bandwidths_are_refused(call: object, message: str) -> None:
    from flinktune.errors import FlinktuneError

    with pytest.raises(FlinktuneError) as caught:
        call()  # type: ignore[operator]
    assert message in caught.value.message


def test_units_mean_the_same_everywhere() -> None:
    assert parse_duration_s("5ms", what="x") == pytest.approx(0.005)
    assert parse_duration_s(0, what="x") == 0.0
    assert parse_bandwidth("10Gbit/s", what="x") == 1.25e9
    assert parse_size_bytes("200", what="x") == 200 and parse_size_bytes("2kb", what="x") == 2048


def test_profile_rtt_without_unit_is_one_line_with_file_and_line(tmp_path: Path) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text("bandwidth: 10Gbit/s\nrtt: 5\n", encoding="utf-8")
    for command in (["recommend", str(SAMPLES / "legacy-1.x.flink-conf.yaml")], ["model"]):
        result = runner.invoke(app, [*command, "--profile", str(profile)])
        assert result.exit_code == 2, result.output
        assert f"{profile}:2: rtt: '5' has no unit; write 5ms or 5s" in result.output
        assert "Traceback" not in result.output
    for command in (["recommend", str(SAMPLES / "legacy-1.x.flink-conf.yaml")], ["model"]):
        result = runner.invoke(app, [*command, "--bandwidth", "10"])
        assert result.exit_code == 2 and "--bandwidth: '10' has no unit" in result.output, result.output
        result = runner.invoke(app, [*command, "--rtt", "5"])
        assert result.exit_code == 2 and "--rtt: '5' has no unit; write 5ms or 5s" in result.output


def test_analyze_takes_the_same_unit_rule(tmp_path: Path) -> None:
    # Checked before the analysis starts: no Spark needed.
    for flag, value, message in (("--bandwidth", "10", "--bandwidth: '10' has no unit"),
                                 ("--rtt", "5", "--rtt: '5' has no unit; write 5ms or 5s")):
        result = runner.invoke(app, ["analyze", str(tmp_path / "dump"), flag, value])
        assert result.exit_code == 2 and message in result.output, result.output


def test_model_profile_accepts_every_key_recommend_accepts(tmp_path: Path) -> None:
    profile = tmp_path / "profile.yaml"
    source = SAMPLES / "profiles" / "flink-2.x.yaml"
    profile.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    result = runner.invoke(app, ["model", "--profile", str(profile), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["parameters"]["rtt"] == pytest.approx(0.003)
    assert read_profile(profile).values["latency-target"] == pytest.approx(0.05)


def test_one_line_of_key_helper() -> None:
    text = "# c\nrtt: 2ms\n  'flink-version' = \"1.20\"\n"
    assert line_of_key(text, "rtt") == 2 and line_of_key(text, "flink-version") == 3
    assert line_of_key(text, "nope") is None


# ------------------------------------------------------------------ following a fix creates no new error

def test_ftc030_fix_never_sets_network_min_above_max() -> None:
    # Before 1.17 network.max defaults to 1g: the fix raises max first (FTC011 would fire otherwise).
    text = ("taskmanager.memory.process.size: 8g\ntaskmanager.numberOfTaskSlots: 16\n"
            "parallelism.default: 1000\n")
    situation = _situation(text, environment=Environment().with_values(
        parse_parameters({"flink-version": "1.16"}), "flag"))
    changes = network_fix_changes(situation)
    assert changes and changes[0][0] == "taskmanager.memory.network.max"
    # Following every change: the memory derives, min <= max, and the demand fits.
    verdict = network_verdict(_situation(_with_lines(text, changes), environment=situation.environment))
    assert verdict.memory.memory is not None and verdict.fits


def _with_lines(text: str, changes: tuple[tuple[str, str], ...]) -> str:
    keys = {k for k, _ in changes}
    kept = [line for line in text.splitlines() if line.split(":")[0] not in keys]
    return "\n".join([*kept, *(f"{k}: {v}" for k, v in changes)]) + "\n"


def test_ftc030_fix_keeps_the_task_heap_instead_of_growing_the_fraction() -> None:
    # Issue 19: 32 slots of a 2g TaskManager at parallelism 64, sort-merge defaults: the fix was one
    # process size of 18870mb (the 0.1 network fraction made to deliver the network alone). Now
    # network.min with the total grown to keep the task heap, as recommend does (3328mb), sized for the
    # no-plan bound's join stage: 32 x (65 + 65 + 512) = 20544 buffers x 1.25.
    text = ("taskmanager.memory.process.size: 2048m\ntaskmanager.numberOfTaskSlots: 32\n"
            "parallelism.default: 64\nexecution.runtime-mode: BATCH\n")
    situation = _situation(text)
    changes = network_fix_changes(situation)
    assert changes == (("taskmanager.memory.network.min", "803mb"),
                       ("taskmanager.memory.process.size", "3328mb"))
    assert network_fix(situation) is None          # no single change does it
    after = network_verdict(_situation(_with_lines(text, changes)))
    assert after.fits and after.memory.memory is not None
    before = network_verdict(situation).memory.memory
    assert before is not None and after.memory.memory.task_heap_bytes >= before.task_heap_bytes


def test_situation_layer_is_light() -> None:
    """situation/ and model.network_fit are on lint's path: no numpy, pydantic, pyspark (nor YAML for a
    flat file)."""
    import subprocess
    import sys

    probe = ("import sys\n"
             "from flinktune.config.reader import read_config_text\n"
             "from flinktune.situation import resolve_situation\n"
             "from flinktune.model.network_fit import network_verdict\n"
             "doc = read_config_text('taskmanager.memory.process.size: 1728m\\n', 'flink-conf.yaml')[0]\n"
             "print(network_verdict(resolve_situation(doc)).fits)\n"
             "heavy = {'numpy', 'pydantic', 'pyspark', 'yaml'}\n"
             "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "[]"], result.stdout


def _chain_plan(strategies: tuple[str, ...], parallelism: int) -> dict[str, object]:
    nodes: list[dict[str, object]] = [{"id": "v0", "parallelism": parallelism, "inputs": []}]
    for i, strategy in enumerate(strategies, start=1):
        edge = {"id": f"v{i - 1}", "ship_strategy": strategy, "exchange": "pipelined_bounded"}
        nodes.append({"id": f"v{i}", "parallelism": parallelism, "inputs": [edge]})
    return {"plan": {"jid": "j", "name": "chain", "type": "STREAMING", "nodes": nodes}}


def test_lint_takes_the_plan_and_the_exchanges_as_recommend_does(tmp_path: Path) -> None:
    # Issue 13 case 1: p=8 on 2 TaskManagers x 4 slots, 8 MB of network (256 buffers), three exchanges.
    # With the plan the demand is exact (216 with same-TaskManager channels local: docs/model.md,
    # measured on real Flink 1.20); the bound (3 exchanges, all remote) needs 312; one exchange 104.
    conf = tmp_path / "flink-conf.yaml"
    conf.write_text("taskmanager.memory.process.size: 1728m\ntaskmanager.memory.network.min: 8mb\n"
                    "taskmanager.memory.network.max: 8mb\ntaskmanager.numberOfTaskSlots: 4\n"
                    "parallelism.default: 8\njobmanager.memory.process.size: 1600m\n", encoding="utf-8")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(_chain_plan(("REBALANCE", "HASH", "REBALANCE"), 8)), encoding="utf-8")

    def network_codes(*args: str) -> set[str]:
        result = runner.invoke(app, ["lint", str(conf), "--format", "json", *args])
        assert result.exit_code in (0, 1), result.output
        return {f["code"] for f in json.loads(result.output)["findings"]} & {"FTC030", "FTC034"}

    assert network_codes() == {"FTC034"}                       # short only at the pessimistic bound
    assert network_codes("--exchanges", "3") == {"FTC030"}      # stated: all remote, 312 > 256
    assert network_codes("--exchanges", "1") == set()
    assert network_codes("--plan", str(plan)) == set()          # the real graph: 216 <= 256
    document = read_config_file(conf)[0]
    situation = resolve_situation(document, plan=json.loads(plan.read_text(encoding="utf-8")))
    verdict = network_verdict(situation)
    assert verdict.graph_known and verdict.demand.required == 216 and verdict.available == 256
    bad = tmp_path / "bad.json"
    bad.write_text('{"plan": {"nodes": "x"}}', encoding="utf-8")
    result = runner.invoke(app, ["lint", str(conf), "--plan", str(bad)])
    assert result.exit_code == 2 and "Traceback" not in result.output
