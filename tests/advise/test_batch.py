"""recommend on batch jobs (issue 19): per-region sizing, Flink's predicted error, read memory, forced
hash shuffle, the min-buffers trade-off and adaptive plans. The configurations are issue 19's real
Flink 1.20.5 runs (2 TaskManagers x 32 slots of 2g, BATCH, parallelism 64, two blocking exchanges);
what Flink did with each is quoted beside it. Facts: see tests/model/test_batch.py.
"""

from __future__ import annotations

import pytest

from flinktune.advise import Environment, parse_parameters, recommend
from flinktune.config.reader import read_config_text
from flinktune.model.memory import derive_taskmanager_memory, taskmanager_memory_options
from flinktune.versions import parse_version

BASE = ("taskmanager.memory.process.size: 2048m\ntaskmanager.numberOfTaskSlots: 32\n"
        "parallelism.default: 64\nexecution.runtime-mode: BATCH\n")
FRAMEWORK = "taskmanager.memory.framework.off-heap.size"
READ = "taskmanager.memory.framework.off-heap.batch-shuffle.size"
PLAN = {"plan": {"jid": "x", "name": "batch", "type": "BATCH", "nodes": [
    {"id": "sink", "parallelism": 64, "description": "Sink", "inputs": [
        {"num": 0, "id": "reduce", "ship_strategy": "REBALANCE", "exchange": "blocking"}]},
    {"id": "reduce", "parallelism": 64, "description": "Reduce", "inputs": [
        {"num": 0, "id": "src", "ship_strategy": "HASH", "exchange": "blocking"}]},
    {"id": "src", "parallelism": 64, "description": "Source: Gen"}]}}


def _rec(text: str, plan: dict | None = None, **flags: str):  # type: ignore[no-untyped-def]
    env = Environment().with_values(parse_parameters({"taskmanagers": "2", **flags}), "flag")
    document = read_config_text(text, "config.yaml")[0]
    return recommend(document, text, parse_version("1.20"), env, plan=plan)


def _keys(rec) -> dict[str, str | None]:  # type: ignore[no-untyped-def]
    return {(c.new_key or c.key): c.value for c in rec.changes}


def _network_buffers(text: str) -> int:
    values = read_config_text(text, "config.yaml")[0].values()
    memory = derive_taskmanager_memory(taskmanager_memory_options(values), parse_version("1.20"))
    return memory.network_buffers


def test_sort_merge_defaults_predict_flinks_error_and_size_one_stage() -> None:
    # Flink: "Insufficient number of network buffers: required 512, but only 471 available".
    rec = _rec(BASE, plan=PLAN)
    assert rec.original_fit is not None and not rec.original_fit.fits
    assert "required 512, but only 471 available" in (rec.original_fit.message or "")
    # Sized for the busiest stage (Reduce: 32 x (65 + 512) = 18464), not the sum of the stages, with
    # the 25% headroom: far below the old 64/64/64 sum (1,443 MB) and fixed 802 MB.
    assert rec.final_fit is not None and rec.final_fit.fits and rec.final_fit.required == 18464
    available = _network_buffers(rec.new_text)
    assert 18464 * 1.25 <= available < 18464 * 1.35


def test_forced_hash_shuffle_is_sized_as_hash_and_kept() -> None:
    # Flink: hash at 32m fails, at 160m (5120 buffers for a 4160 demand) it runs.
    hash_conf = BASE + "taskmanager.network.sort-shuffle.min-parallelism: 1000\n"
    failing = _rec(hash_conf + "taskmanager.memory.network.min: 32m\ntaskmanager.memory.network.max: 32m\n",
                   plan=PLAN)
    assert "taskmanager.network.sort-shuffle.min-parallelism" not in _keys(failing)
    assert failing.final_fit is not None and failing.final_fit.required == 4160 and failing.final_fit.fits
    running = _rec(hash_conf + "taskmanager.memory.network.min: 160m\ntaskmanager.memory.network.max: 160m\n",
                   plan=PLAN)
    assert running.original_fit is not None and running.original_fit.fits
    assert not running.changes


def test_read_memory_above_framework_off_heap_raises_framework_off_heap() -> None:
    # Flink: 256m read memory with 128m framework off-heap fails with the OutOfMemoryError; 384m ran.
    rec = _rec(BASE + f"{READ}: 256m\ntaskmanager.network.sort-shuffle.min-buffers: 16\n", plan=PLAN)
    change = next(c for c in rec.changes if c.key == FRAMEWORK)
    assert change.value == "320mb"
    assert "Can't allocate enough direct buffer for batch shuffle read buffer pool" in change.why
    assert READ not in _keys(rec)


def test_read_memory_below_the_segment_size_is_restored() -> None:
    # Flink: the TaskManagers refuse to start ("Illegal configuration ... must be no smaller than ...").
    rec = _rec(BASE + f"{READ}: 16kb\n", plan=PLAN)
    change = next(c for c in rec.changes if c.key == READ)
    assert change.value == "64mb" and "must be no smaller than" in change.why


def test_min_buffers_trade_off_is_stated_not_applied() -> None:
    rec = _rec(BASE, plan=PLAN)
    assert "taskmanager.network.sort-shuffle.min-buffers" not in _keys(rec)
    note = next(n for n in rec.notes if n.startswith("Sort-merge memory against spilling"))
    assert "min-buffers 512 (now): 18464 buffers" in note and "min-buffers 64: " in note
    assert "spills of" in note


@pytest.mark.parametrize("undecided", ["reduce", "sink"])
def test_adaptive_plan_is_accepted_and_the_assumption_stated(undecided: str) -> None:
    plan = {"plan": {**PLAN["plan"], "nodes": [
        {**n, "parallelism": -1} if n["id"] == undecided else n for n in PLAN["plan"]["nodes"]]}}
    rec = _rec(BASE, plan=plan)
    assert any("assumed for undecided vertex" in a and "parallelism.default" in a for a in rec.assumptions)
    assert rec.final_fit is not None and rec.final_fit.fits


def test_cli_accepts_an_adaptive_plan(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Issue 19: `recommend --plan` exited 2 ("parallelism of vertex ... must be positive, got -1").
    import json

    from typer.testing import CliRunner

    from flinktune.cli.app import app

    plan = {"plan": {**PLAN["plan"], "nodes": [
        {**n, "parallelism": -1} if n["id"] != "src" else n for n in PLAN["plan"]["nodes"]]}}
    (tmp_path / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    (tmp_path / "config.yaml").write_text(BASE, encoding="utf-8")
    args = [str(tmp_path / "config.yaml"), "--plan", str(tmp_path / "plan.json")]
    result = CliRunner().invoke(app, ["recommend", *args])
    assert result.exit_code == 0, result.output
    assert "parallelism 64 assumed for undecided vertex(es)" in result.stdout
    linted = CliRunner().invoke(app, ["lint", *args, "--select", "FTC030"])
    assert linted.exit_code == 1 and "18464" in linted.stdout, linted.output


@pytest.mark.parametrize("extra", [
    "taskmanager.network.sort-shuffle.min-parallelism: 1000\ntaskmanager.memory.network.min: 160m\n"
    "taskmanager.memory.network.max: 160m\n",
    "taskmanager.network.sort-shuffle.min-buffers: 16\ntaskmanager.memory.network.min: 100m\n"
    "taskmanager.memory.network.max: 100m\n",
], ids=["hash 160m", "sort-merge min-buffers 16 at 100m"])
def test_a_config_that_ran_is_not_said_to_fail_without_the_plan(extra: str) -> None:
    # Issue 19: both ran on Flink with every vertex at 64; without the plan recommend said "DOES NOT FIT
    # ... Flink would fail the job". They cover one all-to-all exchange; only the pessimistic bound
    # (a join stage: two sources side by side) does not fit, and the report says exactly that.
    from flinktune.report.recommend import render_recommendation_text

    rec = _rec(BASE + extra)
    assert rec.original_fit is not None and not rec.original_fit.fits
    assert rec.original_fails_for_sure is False
    text = render_recommendation_text(rec)
    assert "DOES NOT FIT" not in text.split("recommended:")[0] and "Flink would fail" not in text
    assert "fits one all-to-all exchange" in text and "NOT the pessimistic bound" in text
    assert "a job with 3 all-to-all exchanges would fail with" in text


def test_a_config_that_fails_for_sure_is_said_to_fail() -> None:
    from flinktune.report.recommend import render_recommendation_text

    rec = _rec(BASE)       # sort-merge defaults: 18464 needed even for one exchange, 5079 given
    assert rec.original_fails_for_sure is True
    text = render_recommendation_text(rec)
    assert ("Flink would fail the job with: Insufficient number of network buffers: required 512, "
            "but only 471") in text


def test_model_says_the_same_as_recommend(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # One situation, one verdict: `model --config` on the hash-160m config that ran (issue 19).
    from typer.testing import CliRunner

    from flinktune.cli.app import app

    path = tmp_path / "config.yaml"
    path.write_text(BASE + "taskmanager.network.sort-shuffle.min-parallelism: 1000\n"
                    "taskmanager.memory.network.min: 160m\ntaskmanager.memory.network.max: 160m\n",
                    encoding="utf-8")
    result = CliRunner().invoke(app, ["model", "--config", str(path)], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    flat = " ".join(result.stdout.split())
    assert "fits one all-to-all exchange (4160 needed), NOT the pessimistic bound" in flat
    assert "does NOT fit" not in flat
