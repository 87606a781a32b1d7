"""``flinktune model --config``: one report, one network verdict (the one lint and recommend give);
a slot count or parallelism the file gives unreadably is refused as recommend refuses it; a BATCH
config is modelled without a buffer timeout and without checkpoint barriers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flinktune.cli.app import app
from flinktune.config.reader import read_config_file
from flinktune.model.network_fit import network_verdict
from flinktune.model.timeout_mode import buffer_timeout_mode
from flinktune.situation import Environment, parse_parameters, resolve_situation
from flinktune.versions import FlinkVersion

runner = CliRunner()
SAMPLES = Path(__file__).resolve().parents[2] / "sample_configs"
LARGE_BATCH = SAMPLES / "large-batch.flink-conf.yaml"     # execution.runtime-mode: BATCH, Flink 1.14


def _model(*args: str) -> dict:
    result = runner.invoke(app, ["model", *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _verdict(path: Path, version: str | None = None, **flags: str):
    document = read_config_file(path)[0]
    env = Environment().with_values(parse_parameters({"flink-version": version, **flags}), "flag")
    situation = resolve_situation(document, text=path.read_text(encoding="utf-8"), environment=env)
    return network_verdict(situation)


@pytest.mark.parametrize("version", [None, "1.20"])
def test_a_batch_configs_table_is_the_network_verdict(version: str | None) -> None:
    # The audit: the note said "20096 needed ... fits" (1.20) / "79768 needed" (1.14, the file's), the
    # table the streaming worst case "buffers_required_per_taskmanager 144,048, fits no" for both.
    args = ["--config", str(LARGE_BATCH)] + (["--flink-version", version] if version else [])
    data = _model(*args)
    verdict = _verdict(LARGE_BATCH, version)
    q = data["quantities"]
    assert q["buffers_required_per_taskmanager"]["value"] == verdict.demand.required
    assert q["buffers_target_per_taskmanager"]["value"] == verdict.demand.target
    assert q["network_buffers_available"]["value"] == verdict.available
    assert q["fits"]["value"] is verdict.fits
    assert q["network_memory_required"]["value"] == verdict.demand.required * verdict.segment_bytes
    note = next(n for n in data["notes"] if n.startswith("network buffers"))
    assert f"{verdict.demand.required} needed" in note
    assert (verdict.demand.required, verdict.fits) == ((79768, False) if version is None else (20096, True))


def test_a_batch_configs_sweep_is_judged_point_by_point(tmp_path: Path) -> None:
    data = _model("--config", str(LARGE_BATCH), "--sweep", "parallelism=100,1000,2000")
    q = data["quantities"]
    for i, p in enumerate((100, 1000, 2000)):
        verdict = _verdict(LARGE_BATCH, parallelism=str(p))
        assert q["buffers_required_per_taskmanager"]["values"][i] == verdict.demand.required
        assert q["fits"]["values"][i] is verdict.fits


def test_a_streaming_configs_figures_are_unchanged_and_agree() -> None:
    # The streaming worst case the formula gives is the verdict's (same numbers as before the change).
    path = SAMPLES / "low-latency-streaming.flink-conf.yaml"
    q = _model("--config", str(path))["quantities"]
    verdict = _verdict(path)
    assert q["buffers_required_per_taskmanager"]["value"] == verdict.demand.required == 888
    assert q["buffers_required_per_taskmanager"]["formula"] == \
        "k * exchanges * (gate required + partition required)"
    assert isinstance(q["buffers_required_per_taskmanager"]["value"], float)


@pytest.mark.parametrize(("line", "flag"), [("taskmanager.numberOfTaskSlots: four", "--slots"),
                                            ("parallelism.default: x", "--parallelism")])
def test_an_unreadable_parallelism_or_slot_count_is_refused(tmp_path: Path, line: str, flag: str) -> None:
    # It was modelled with 1 (the default), exit 0, while recommend refused the same file
    # (Situation.unreadable_job_values, one definition for both).
    path = tmp_path / "badslots.yaml"
    path.write_text(f"{line}\ntaskmanager.memory.process.size: 2g\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "flinktune", "model", "--config", str(path)],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and "badslots.yaml:1:" in result.stderr
    assert "is not a whole number" in result.stderr and flag in result.stderr
    given = runner.invoke(app, ["model", "--config", str(path), flag, "8"])
    assert given.exit_code == 0, given.output
    swept = runner.invoke(app, ["model", "--config", str(path), "--sweep", f"{flag[2:]}=2,4"])
    assert swept.exit_code == 0, swept.output


def test_a_placeholder_slot_count_is_assumed_and_said(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("taskmanager.memory.process.size: 2048m\ntaskmanager.numberOfTaskSlots: ${cpu_thread}\n",
                    encoding="utf-8")
    data = _model("--config", str(path))
    assert any("slots 1: taskmanager.numberOfTaskSlots is the placeholder" in n for n in data["notes"])


@pytest.mark.parametrize("version", ["1.14", "1.17", "1.20", "2.0"])
def test_a_batch_config_has_no_buffer_timeout_and_no_barriers(tmp_path: Path, version: str) -> None:
    # Flink's StreamGraphGenerator.configureStreamGraph, BATCH branch: setDefaultBufferTimeout(-1)
    # up to 1.17 (read at release-1.16.0), configuration.set(ExecutionOptions.BUFFER_TIMEOUT_ENABLED,
    # false) from 1.18 (read at release-1.20); configureStreamGraphBatch disables checkpointing
    # ("Checkpointing is not supported and not needed when executing jobs in BATCH mode.").
    # flink-facts.md section 1.4 lists it for 1.18+ only; the 1.16 source shows it earlier too.
    path = tmp_path / "batch.yaml"
    path.write_text("taskmanager.memory.process.size: 4g\ntaskmanager.numberOfTaskSlots: 4\n"
                    "parallelism.default: 8\nexecution.runtime-mode: BATCH\nexecution.buffer-timeout: 50ms\n",
                    encoding="utf-8")
    data = _model("--config", str(path), "--flink-version", version)
    q = data["quantities"]
    assert data["parameters"]["buffer-timeout"] == "inf"
    assert "execution.runtime-mode" in data["sources"]["buffer-timeout"]
    assert q["leaves_full"]["value"] is True
    assert q["added_latency_max"]["value"] == pytest.approx(q["buffer_fill_time"]["value"])
    assert "barrier_drain_time" not in q
    assert any(n.startswith("BATCH: no buffer timeout (flushes when a buffer is full or the input ends)")
               for n in data["notes"])
    assert any("no barrier drain time" in n for n in data["notes"])
    # A flag still sets it, as a what-if, and says so.
    flagged = _model("--config", str(path), "--flink-version", version, "--buffer-timeout", "5ms")
    assert flagged["parameters"]["buffer-timeout"] == pytest.approx(0.005)
    assert flagged["quantities"]["added_latency_max"]["value"] == pytest.approx(0.005)
    assert any("--buffer-timeout is a what-if" in n for n in flagged["notes"])


def test_batch_runtime_mode_turns_the_timeout_off_at_every_version() -> None:
    # Same source as above: 1.13..1.17 too, not only 1.18+.
    for version in (FlinkVersion(1, 13), FlinkVersion(1, 17), FlinkVersion(1, 20), FlinkVersion(2, 0)):
        mode = buffer_timeout_mode(version, interval_s=0.05, batch_runtime=True)
        assert mode.kind == "when-full" and mode.explanation.startswith("BATCH: no buffer timeout")
