"""Real Flink 1.20 on 127.0.0.1: jobs with a built-in bottleneck, `flinktune collect`, `flinktune analyze`.

Topology (jobs/NetworkJob.java): Source: Gen -REBALANCE-> Parse -HASH-> KeyedAgg -REBALANCE->
SinkWork -> Discard: Writer, parallelism 4 on 2 TaskManagers x 2 slots, so every gate has local and
remote (Netty, credit-based) channels. The bottleneck is a per-record pause, so the truth is known:

- healthy: 400 records/s in all, no pauses: nothing may be backpressured;
- slow-sink: SinkWork pauses 1 ms per record: it is busy ~1000 ms/s and everything upstream is
  backpressured (the web UI's HIGH level is backPressuredTimeMsPerSecond > 500, flink-facts.md §4.5);
- skew: 90% of records share one key and KeyedAgg pauses 1 ms per record: one KeyedAgg subtask is
  busy, its siblings are not, and Parse (which feeds it) is backpressured.
"""

from __future__ import annotations

import json
import math
import os
import signal
import statistics
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from testkit import DUMP_COLUMNS

pytestmark = pytest.mark.flink

SOURCE, PARSE, AGG, SINK = "Source: Gen", "Parse", "KeyedAgg", "SinkWork -> Discard: Writer"
COLLECT_SECONDS = 30


@dataclass(frozen=True)
class Dump:
    scenario: str
    job_id: str
    folder: Path
    analysis: subprocess.Popen[str]  # `flinktune analyze` on this dump, started as soon as it was written

    def analyze_report(self) -> tuple[int, dict]:
        """Wait for the analysis (it runs while the next scenario collects) and return (exit code, JSON)."""
        stdout, stderr = self.analysis.communicate(timeout=600)
        assert self.analysis.returncode in (0, 1), stderr[-3000:]
        return self.analysis.returncode, json.loads(stdout)

    @property
    def metrics(self) -> Path:
        return self.folder / "metrics.parquet"

    def rows(self) -> list[dict]:
        return pq.read_table(self.metrics).to_pylist()

    def settled(self, metric: str) -> dict[tuple[str, int], list[float]]:
        """Values per (task, subtask) from the second half of the run (after start-up)."""
        rows = [r for r in self.rows() if r["metric"] == metric]
        times = sorted({r["ts"] for r in rows})
        cut = times[len(times) // 2]
        out: dict[tuple[str, int], list[float]] = defaultdict(list)
        for r in rows:
            if r["ts"] >= cut and not math.isnan(r["value"]):
                out[(r["task_name"], r["subtask_index"])].append(r["value"])
        return out

    def median_by_task(self, metric: str) -> dict[str, float]:
        per_task: dict[str, list[float]] = defaultdict(list)
        for (task, _), values in self.settled(metric).items():
            per_task[task].extend(values)
        return {task: statistics.median(values) for task, values in per_task.items()}

    def median_by_subtask(self, metric: str, task: str) -> dict[int, float]:
        return {i: statistics.median(v) for (t, i), v in self.settled(metric).items() if t == task}


def _run_scenario(cluster, jar_id, cli, tmp: Path, scenario: str, **job_args) -> Dump:
    cluster.use_taskmanagers(2, **{"taskmanager.numberOfTaskSlots": 2})
    name = f"flinktune-e2e-{scenario}"
    job_id = cluster.submit(jar_id, 4, name=name, **job_args)
    try:
        cluster.wait_running(job_id)
        folder = tmp / scenario
        # By name for one scenario, by id for the others: both paths of the CLI on a real cluster.
        which = ["--job-name", name] if scenario == "healthy" else ["--job", job_id]
        result = cli(
            "collect",
            "--url",
            cluster.url,
            *which,
            "--interval",
            "2s",
            "--duration",
            f"{COLLECT_SECONDS}s",
            "-o",
            str(folder),
        )
        assert result.returncode == 0, result.stderr
        assert "collected" in result.stdout
    finally:
        cluster.cancel(job_id)
    # Spark takes a while: let it work while the next scenario runs (stopped by PID in `_reap`).
    analysis = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "flinktune",
            "analyze",
            str(folder / "metrics.parquet"),
            "--format",
            "json",
            "--no-progress",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    _ANALYSES.append(analysis)
    return Dump(scenario, job_id, folder, analysis)


_ANALYSES: list[subprocess.Popen[str]] = []


@pytest.fixture(scope="module", autouse=True)
def _reap():
    yield
    for proc in _ANALYSES:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # the CLI and the Spark JVM it started
            proc.communicate(timeout=60)


@pytest.fixture(scope="module")
def healthy(flink_cluster, jar_id, flinktune_cli, e2e_dir) -> Dump:
    return _run_scenario(flink_cluster, jar_id, flinktune_cli, e2e_dir / "dumps", "healthy", rate=400)


@pytest.fixture(scope="module")
def slow_sink(flink_cluster, jar_id, flinktune_cli, e2e_dir) -> Dump:
    return _run_scenario(
        flink_cluster, jar_id, flinktune_cli, e2e_dir / "dumps", "slow-sink", rate=20000, sink_pause_us=1000
    )


@pytest.fixture(scope="module")
def skew(flink_cluster, jar_id, flinktune_cli, e2e_dir) -> Dump:
    return _run_scenario(
        flink_cluster,
        jar_id,
        flinktune_cli,
        e2e_dir / "dumps",
        "skew",
        rate=4000,
        agg_pause_us=1000,
        hot_fraction=0.9,
    )


# --- the dump itself ------------------------------------------------------------------------------


def test_dump_shape_from_a_real_cluster(slow_sink: Dump):
    table = pq.read_table(slow_sink.metrics)
    assert table.schema.names == DUMP_COLUMNS
    rows = table.to_pylist()
    assert {r["task_name"] for r in rows} == {SOURCE, PARSE, AGG, SINK}
    assert {r["subtask_index"] for r in rows} == {0, 1, 2, 3}
    assert len({r["tm_id"] for r in rows}) == 2  # two TaskManagers: local and remote channels
    metrics = {r["metric"] for r in rows}
    # Flink 1.20 answers every metric the analysis needs, under its canonical short name.
    assert {
        "outPoolUsage",
        "inPoolUsage",
        "inputFloatingBuffersUsage",
        "inputExclusiveBuffersUsage",
        "backPressuredTimeMsPerSecond",
        "busyTimeMsPerSecond",
        "idleTimeMsPerSecond",
        "isBackPressured",
        "numRecordsIn",
        "numRecordsOut",
        "numBytesInLocal",
        "numBytesInRemote",
        "numBuffersInLocal",
        "numBuffersInRemote",
        "numBuffersOut",
        "numBytesOut",
    } <= metrics
    assert len({r["ts"] for r in rows}) >= COLLECT_SECONDS // 2 - 2
    plan = json.loads((slow_sink.folder / "plan.json").read_text())
    assert plan["plan"]["jid"] == slow_sink.job_id
    edges = {
        (n["description"].split("<br/>")[0], i["ship_strategy"])
        for n in plan["plan"]["nodes"]
        for i in n.get("inputs", [])
    }
    assert edges == {("Parse", "REBALANCE"), ("KeyedAgg", "HASH"), ("SinkWork", "REBALANCE")}
    placement = json.loads((slow_sink.folder / "job.json").read_text())
    assert all(s["taskmanager_id"] for v in placement["vertices"] for s in v["subtasks"])
    # Remote channels carried data: the consumer saw bytes over Netty.
    remote = slow_sink.median_by_task("numBytesInRemote")
    assert remote[SINK] > 0 and remote[PARSE] > 0


def test_slow_sink_metrics(slow_sink: Dump):
    busy = slow_sink.median_by_task("busyTimeMsPerSecond")
    backpressured = slow_sink.median_by_task("backPressuredTimeMsPerSecond")
    assert busy[SINK] > 700, busy
    assert backpressured[SINK] < 50, backpressured
    assert backpressured[PARSE] > 500 and backpressured[AGG] > 500, backpressured
    assert slow_sink.median_by_task("isBackPressured")[SOURCE] == 1.0
    assert slow_sink.median_by_task("inPoolUsage")[SINK] > 0.9  # the receiver's buffers are full
    assert slow_sink.median_by_task("outPoolUsage")[AGG] > 0.9  # and so are its senders'


def test_skew_metrics(skew: Dump):
    busy = skew.median_by_subtask("busyTimeMsPerSecond", AGG)
    hot = max(busy, key=busy.get)
    records = skew.median_by_subtask("numRecordsIn", AGG)
    assert hot == max(records, key=records.get)  # the busy subtask is the one the hot key lands on
    assert busy[hot] > 700, busy
    assert all(v < 300 for i, v in busy.items() if i != hot), busy
    backpressured = skew.median_by_task("backPressuredTimeMsPerSecond")
    assert backpressured[PARSE] > 500 and backpressured[AGG] < 100, backpressured
    assert skew.median_by_task("busyTimeMsPerSecond")[SINK] < 200


def test_healthy_metrics(healthy: Dump):
    backpressured = healthy.median_by_task("backPressuredTimeMsPerSecond")
    assert set(backpressured) == {SOURCE, PARSE, AGG, SINK}
    assert all(v < 50 for v in backpressured.values()), backpressured
    busy = healthy.median_by_task("busyTimeMsPerSecond")
    assert all(v < 200 for v in busy.values()), busy
    assert healthy.median_by_task("isBackPressured") == {SOURCE: 0.0, PARSE: 0.0, AGG: 0.0, SINK: 0.0}


def test_collect_refuses_a_finished_job(flink_cluster, flinktune_cli, healthy: Dump, tmp_path):
    # The scenario cancelled its job: the real REST API reports it CANCELED.
    result = flinktune_cli(
        "collect", "--url", flink_cluster.url, "--job", healthy.job_id, "-o", str(tmp_path)
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"flinktune: error: job {healthy.job_id} ('flinktune-e2e-healthy') is "
        "CANCELED; collect needs a running job"
    )
    result = flinktune_cli("collect", "--url", flink_cluster.url, "--job", "0" * 32, "-o", str(tmp_path))
    assert result.returncode == 2 and f"no job {'0' * 32}" in result.stderr


# --- flinktune analyze on the real dumps -------------------------------------------------------------

BACKPRESSURE_CODES = {
    "FTA001",
    "FTA002",
    "FTA003",
    "FTA004",
    "FTA005",
    "FTA006",
    "FTA007",
    "FTA008",
    "FTA011",
}


def _job(report: dict, dump: Dump) -> dict:
    jobs = [j for j in report["jobs"] if j["job_id"] == dump.job_id]
    assert len(jobs) == 1, report["jobs"]
    assert jobs[0]["has_plan"], "plan.json beside the dump was not used"
    return jobs[0]


def test_analyze_finds_the_slow_sink(slow_sink: Dump):
    code, report = slow_sink.analyze_report()
    job = _job(report, slow_sink)
    assert [o["vertex"] for o in job["origins"]] == [SINK]
    origin = job["origins"][0]
    assert origin["cause"] == "all_busy"  # every sink subtask pauses per record: scale out
    assert set(origin["upstream_backpressured"]) == {SOURCE, PARSE, AGG}
    assert code == 1
    origin_findings = [f for f in report["findings"] if f["code"] == "FTA001"]
    assert [f["vertex"] for f in origin_findings] == [SINK]


def test_analyze_finds_the_hot_subtask(skew: Dump):
    code, report = skew.analyze_report()
    job = _job(report, skew)
    assert [o["vertex"] for o in job["origins"]] == [AGG]
    origin = job["origins"][0]
    assert origin["cause"] == "hot_subtask"
    busy = skew.median_by_subtask("busyTimeMsPerSecond", AGG)
    assert origin["hot_subtask"] == max(busy, key=busy.get)
    assert PARSE in origin["upstream_backpressured"]
    assert code == 1


def test_analyze_reports_no_backpressure_on_the_healthy_job(healthy: Dump):
    _code, report = healthy.analyze_report()
    job = _job(report, healthy)
    assert job["origins"] == []
    assert not any(v["backpressured"] for v in job["vertices"]), job["vertices"]
    assert {v["name"] for v in job["vertices"]} == {SOURCE, PARSE, AGG, SINK}
    assert not [f["code"] for f in report["findings"] if f["code"] in BACKPRESSURE_CODES]
