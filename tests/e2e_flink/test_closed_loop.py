"""Closed loop on real Flink 1.20: run a job, apply `flinktune recommend`'s output, rerun, compare.

First, do no harm (issue 13). The job is jobs/NetworkJob.java with three all-to-all exchanges
(REBALANCE, HASH, REBALANCE) at parallelism 8 on 2 TaskManagers x 4 slots: Flink requires 216
network buffers per TaskManager for it (test_network_buffers.py measures that boundary).

- near the limit: 224 buffers, the job runs. `recommend` with default flags, with a stated rate and
  round trip but no plan, and with the plan: every output keeps the job running, at the same
  throughput (the source is rate-limited, so the rate is the throughput; it must not drop by more
  than noise, 10% here).
- failing: 200 buffers, Flink fails the job ("Insufficient number of network buffers"). The fix
  without a plan (sized for the pessimistic bound of three exchanges, with headroom) and with the
  plan (exact demand, with headroom) both run the job.

One cluster (the session's JobManager); TaskManagers restart with each config, reading the very file
`recommend --write` wrote.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from .rates import counter_rate

pytestmark = pytest.mark.flink

SLOTS = 4
PARALLELISM = 8
SEGMENT = 32 * 1024
INSUFFICIENT = "Insufficient number of network buffers"
RATE = 2000          # records/s of the whole job (the source's rate limiter)
# Throughput may not drop by more than noise: rates.counter_rate fits a slope to ~25 readings of a
# counter that the REST API refreshes every second, which resolves a steady rate to a few percent.
NOISE = 0.10


def _write_config(cluster, folder: Path, buffers: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    network = f"{buffers * SEGMENT // 1024}kb"
    config = {**cluster.base_config, "taskmanager.numberOfTaskSlots": SLOTS,
              "taskmanager.memory.network.min": network, "taskmanager.memory.network.max": network}
    path = folder / "config.yaml"
    text = "".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}\n" for k, v in config.items())
    path.write_text(text, encoding="utf-8")
    return path


def _outcome(cluster, job_id: str, settle_s: float = 8.0, timeout_s: float = 90.0) -> tuple[str, str]:
    """RUNNING once every vertex ran and kept running for `settle_s`, else the terminal state and why."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = cluster.get(f"/jobs/{job_id}")
        if job["state"] in ("FAILED", "CANCELED", "FINISHED"):
            return job["state"], cluster.root_exception(job_id)
        if job["state"] == "RUNNING" and all(v["status"] == "RUNNING" for v in job["vertices"]):
            time.sleep(settle_s)
            state = cluster.job_state(job_id)
            return state, cluster.root_exception(job_id) if state != "RUNNING" else ""
        time.sleep(0.5)
    raise TimeoutError(f"job {job_id} neither ran nor failed within {timeout_s} s")


def _run(cluster, jar_id: str, config: Path, name: str) -> tuple[str, str, float, dict]:
    """Start TaskManagers on `config`, run the job: (state, error, source records/s, plan)."""
    cluster.use_taskmanagers_with_file(config, SLOTS)
    job_id = cluster.submit(jar_id, PARALLELISM, name=name, rate=RATE, exchanges=3)
    try:
        state, error = _outcome(cluster, job_id)
        plan = cluster.get(f"/jobs/{job_id}/plan")
        rate = counter_rate(cluster, job_id) if state == "RUNNING" else 0.0
    finally:
        if cluster.job_state(job_id) not in ("FAILED", "CANCELED", "FINISHED"):
            cluster.cancel(job_id)
    return state, error, rate, plan


def _recommend(cli, config: Path, *extra: str, version: str = "1.20") -> tuple[str, str]:
    """`recommend --write` as a user runs it; (report, the config after)."""
    result = cli("recommend", str(config), "--flink-version", version, "--parallelism", str(PARALLELISM),
                 "--slots", str(SLOTS), "--taskmanagers", "2", *extra, "--write")
    assert result.returncode == 0, result.stderr
    return result.stdout, config.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def near_limit(flink_cluster, jar_id, e2e_dir) -> tuple[Path, float, dict]:
    config = _write_config(flink_cluster, e2e_dir / "closed-loop" / "near", 224)
    state, error, rate, plan = _run(flink_cluster, jar_id, config, "near-limit-before")
    assert state == "RUNNING", error[:400]
    return config, rate, plan


@pytest.mark.parametrize("how", ["default-flags", "stated-rate-no-plan", "stated-rate-with-plan"])
def test_a_working_job_near_its_limit_keeps_working(how, near_limit, flink_cluster, jar_id, flinktune_cli,
                                                    e2e_dir) -> None:
    original, rate_before, plan = near_limit
    folder = e2e_dir / "closed-loop" / how
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "config.yaml"
    config.write_text(original.read_text(encoding="utf-8"), encoding="utf-8")
    extra: list[str] = []
    if how != "default-flags":
        # A stated rate and a round trip: the advisor may raise credits (evidence), sized for the
        # bound without the plan and for the plan's exact demand with it.
        extra += ["--rate", "20000", "--record-size", "1kb", "--rtt", "5ms"]
    if how == "stated-rate-with-plan":
        plan_file = folder / "plan.json"
        plan_file.write_text(json.dumps(plan), encoding="utf-8")
        extra += ["--plan", str(plan_file)]
    report, after = _recommend(flinktune_cli, config, *extra)
    if how == "default-flags":
        assert "buffers-per-channel" not in after, report      # no evidence: credits stay at the default
    state, error, rate_after, _plan = _run(flink_cluster, jar_id, config, f"near-limit-{how}")
    assert state == "RUNNING", f"{how}: recommend broke a working job: {error[:400]}\n{report}"
    # The source is rate-limited and nothing is back-pressured: the job must still carry what it is
    # offered (two runs of the same job measure 2,000-2,300 records/s here; the offered rate is the
    # stable reference).
    assert rate_after >= RATE * (1 - NOISE), (how, rate_before, rate_after)
    print(f"closed loop, near the limit, {how}: source {rate_before:.0f} -> {rate_after:.0f} records/s")


@pytest.mark.parametrize("with_plan", [False, True], ids=["bound", "plan"])
def test_a_job_that_fails_for_lack_of_buffers_runs_after_the_fix(with_plan, flink_cluster, jar_id,
                                                                  flinktune_cli, e2e_dir, near_limit) -> None:
    folder = e2e_dir / "closed-loop" / f"failing-{'plan' if with_plan else 'bound'}"
    config = _write_config(flink_cluster, folder, 200)
    state, error, _rate, plan = _run(flink_cluster, jar_id, config, "failing-before")
    assert state == "FAILED" and INSUFFICIENT in error, (state, error[:400])
    extra: list[str] = []
    if with_plan:
        plan_file = folder / "plan.json"
        plan_file.write_text(json.dumps(plan), encoding="utf-8")
        extra += ["--plan", str(plan_file)]
    report, after = _recommend(flinktune_cli, config, *extra)
    assert "taskmanager.memory.network.min" in after, report
    name = f"failing-fixed-{'plan' if with_plan else 'bound'}"
    state, error, rate, _plan = _run(flink_cluster, jar_id, config, name)
    assert state == "RUNNING", f"the fix still fails: {error[:400]}\n{report}"
    assert rate >= RATE * (1 - NOISE), rate


# --- slow sink with checkpoints every few seconds, judged by `flinktune compare` -------------------
# p=4 on 2 x 2 slots (test_scenarios.py's slow sink): SinkWork pauses 250 us per record, everything
# upstream is back-pressured, aligned checkpoints every 3 s wait behind the in-flight data. Each run is
# collected as a user would (`collect`, 2 s polls) and the runs are compared with `compare`:
# BEFORE (Flink's defaults), AFTER (recommend's debloating, written into the config), AGAIN (the same
# config as AFTER, run again: a change that changes nothing).

CHECKPOINT_MS = 3000
# SinkWork takes ~3,500 records/s per subtask (a 250 us pause), the source offers 20,000 in all.
SLOW = {"rate": 20000, "sink_pause_us": 250, "checkpoint_ms": CHECKPOINT_MS}
PREDICTION_FACTOR = 3      # docs/recommend.md, "Predictions" (measured 1.3x-2.1x)
DEBLOAT_COST = 0.10        # the largest throughput drop the slow-sink loop accepts for its checkpoints
# Back pressure builds for ~20 s after a start (the gates fill, Flink's per-second gauges ramp): compare
# skips that. (The test this replaces read the sink's rate once per run, 12 s of one counter, AFTER's
# within its first ~30 s, against a fixed 10% tolerance: it failed on a loaded CI machine, 18,547 ->
# 15,584 records/s. compare judges the rate after the warm-up against the noise of both runs.)
# BEFORE's aligned checkpoints take ~14-15 s each once the buffers are full (3, 5, 8, 13 s before that,
# the steady ones from ~25 s after the collection starts here). compare counts those started after
# the warm-up; 30 s leaves at most one start-up checkpoint in (compare names such checkpoints in a
# note), and 130 s hold five or more steady ones. With debloating checkpoints take ~3 s: 60 s hold
# about ten after the warm-up (a 20 s window once left a side with three, too few to judge).
WARMUP = "30s"
BEFORE_S, AFTER_S = 130, 60


def _slow_sink_run(cluster, jar_id: str, config: Path, name: str, cli, dump: Path, seconds: int) -> None:
    cluster.use_taskmanagers_with_file(config, 2)
    job_id = cluster.submit(jar_id, 4, name=name, **SLOW)
    try:
        cluster.wait_running(job_id)
        result = cli("collect", "--url", cluster.url, "--job", job_id, "--interval", "2s",
                     "--duration", f"{seconds}s", "-o", str(dump))
        assert result.returncode == 0, result.stderr
    finally:
        cluster.cancel(job_id)


def _compare(cli, before: Path, after: Path, *extra: str) -> tuple[int, dict]:
    """`compare` as a user runs it (one Spark run: its JSON document, the headline printed)."""
    result = cli("compare", str(before), str(after), "--warmup", WARMUP, "-f", "json", "-q", *extra,
                 timeout_s=600)
    assert result.returncode in (0, 1), result.stderr
    doc = json.loads(result.stdout)
    for figure in doc["job"]:
        print(f"  {figure['label']}: {figure['verdict']} {figure.get('low')} .. {figure.get('high')}")
    for side, dump in (("before", before), ("after", after)):
        log = json.loads((dump / "checkpoints.json").read_text(encoding="utf-8"))
        start = log["checkpoints"][0]["trigger_ms"] if log["checkpoints"] else 0
        print(f"  {side} checkpoints (s after the first trigger, duration s):",
              [(round((c["trigger_ms"] - start) / 1000, 1), round(c["duration_ms"] / 1000, 1))
               for c in log["checkpoints"] if c["status"] == "COMPLETED"])
    for note in doc["notes"]:
        print(f"  note: {note}")
    return result.returncode, doc


def _job_figure(doc: dict, name: str) -> dict:
    return next(f for f in doc["job"] if f["name"] == name)


def _checkpoints_called(duration: dict, verdict: str) -> None:
    """The checkpoint-duration figure is ``verdict``, with an interval on that side of zero.

    Steady checkpoints of one run correlate (real runs here: lag-1 +0.23 pooled over 14 series). Batched
    two per side, a handful of them once left ~1 degree of freedom and an interval of -100% .. +89,000%
    for 14.4 s -> 3.04 s; compare now judges them unbatched at an assumed correlation
    (stats.EVENT_CORRELATION_FLOOR), which finds a fivefold change in 6 and 9 checkpoints."""
    assert duration["informative"], duration
    assert duration["verdict"] == verdict, duration
    assert (duration["high"] < 0) if verdict == "better" else (duration["low"] > 0), duration


@pytest.fixture(scope="module")
def slow_sink(flink_cluster, jar_id, flinktune_cli, e2e_dir) -> dict[str, Path]:
    folder = e2e_dir / "closed-loop" / "slow-sink"
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "config.yaml"
    base = {**flink_cluster.base_config, "taskmanager.numberOfTaskSlots": 2}
    config.write_text("".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}\n"
                              for k, v in base.items()), encoding="utf-8")
    runs = {name: folder / name for name in ("before", "after", "again")}
    _slow_sink_run(flink_cluster, jar_id, config, "slow-sink-before", flinktune_cli, runs["before"], BEFORE_S)
    result = flinktune_cli("recommend", str(config), "--flink-version", "1.20", "--metrics",
                           str(runs["before"]), "--format", "json", "--write", timeout_s=600)
    assert result.returncode == 0, result.stderr
    runs["config"] = config     # --write left the recommendation beside it, for compare --expected
    rec = json.loads(result.stdout)["recommendations"][0]
    keys = {c["new_key"] or c["key"]: c["recommended"] for c in rec["changes"]}
    assert keys.get("taskmanager.network.memory.buffer-debloat.enabled") == "true", rec["notes"]
    assert not any("buffers-per-channel" in k for k in keys)     # a slow sink is not a buffer problem
    _slow_sink_run(flink_cluster, jar_id, config, "slow-sink-after", flinktune_cli, runs["after"], AFTER_S)
    _slow_sink_run(flink_cluster, jar_id, config, "slow-sink-again", flinktune_cli, runs["again"], AFTER_S)
    return runs


def test_slow_sink_checkpoints_improve_as_predicted(slow_sink, flinktune_cli) -> None:
    """compare says: checkpoints shorter, throughput unchanged within noise, the prediction within the
    factor docs/recommend.md states."""
    code, doc = _compare(flinktune_cli, slow_sink["before"], slow_sink["after"],
                         "--expected", str(slow_sink["config"]))
    assert code == (1 if doc["verdict"] == "mixed" else 0), doc["headline"]
    duration, throughput = _job_figure(doc, "checkpoint_duration"), _job_figure(doc, "throughput")
    print(f"closed loop, slow sink (compare): {doc['headline']}")
    _checkpoints_called(duration, "better")
    # Debloating is not free on this 2-core machine: three runs measured throughput -5% to -7% with it
    # (smaller buffers, more of them, on the CPUs the sink's own work uses), twice with an interval
    # that excluded no change. compare may call that worse; what the test holds is that the cost stays
    # under DEBLOAT_COST while checkpoints get several times shorter.
    assert throughput["informative"] and throughput["relative_change"] > -DEBLOAT_COST, throughput
    # The verdict is the job's: a vertex figure may move with the change too (the sink's input pools
    # fill less with debloating), but none of the job's other figures got worse.
    others_worse = [f for f in doc["job"] if f["verdict"] == "worse" and f["name"] != "throughput"]
    assert not others_worse, doc["headline"]
    assert doc["verdict"] in ("better", "mixed") or not duration["informative"], doc["headline"]
    wait = next(p for p in doc["predictions"] if p["name"] == "barrier_wait_s")
    # docs/recommend.md, "Predictions": with debloating the prediction is within PREDICTION_FACTOR of
    # the measured checkpoint; with full default buffers it is a lower bound (the real wait was longer).
    assert wait["verdict"].startswith(f"within {PREDICTION_FACTOR}x"), wait
    assert wait["predicted"]["before"] <= wait["measured"]["before"], wait


def test_the_same_config_again_is_no_measurable_change(slow_sink, flinktune_cli) -> None:
    code, doc = _compare(flinktune_cli, slow_sink["after"], slow_sink["again"], "--fail-on", "change")
    still = ("no measurable change", "not measured")
    job_moved = [(f["label"], f["verdict"]) for f in doc["job"] if f["verdict"] not in still]
    vertex_moved = [(v["name"], f["label"], f["verdict"], f["before"], f["after"], f["low"], f["high"])
                    for v in doc["vertices"] for f in v["figures"] if f["verdict"] not in still]
    print(f"closed loop, no-op (compare): {doc['headline']}; vertex figures called: {vertex_moved}")
    assert not job_moved, job_moved
    # compare's intervals are 95% family-wise over every figure (about 29 here), and two runs of one
    # config differ by a little more than each run's own noise shows (placement, JIT): a no-op may call
    # one vertex figure now and then (one CI run of several: an upstream output pool, saturated near
    # 100%, "worse"). Two would be a defect.
    assert len(vertex_moved) <= 1, vertex_moved
    if not vertex_moved:
        assert doc["verdict"] == "no measurable change" and code == 0, doc["headline"]
    else:
        assert code == 1, doc["headline"]          # --fail-on change says so
    # The throughput was judged (an informative interval), not merely too short to tell. Checkpoints:
    # with debloating a run holds few after the warm-up, and then compare's interval (a t quantile on
    # two or three batches) is honestly too wide to judge; the two medians must still agree within 25%.
    assert _job_figure(doc, "throughput")["informative"], _job_figure(doc, "throughput")
    duration = _job_figure(doc, "checkpoint_duration")
    assert duration["informative"] or abs(duration["relative_change"]) < 0.25, duration


def test_taking_the_fix_back_is_called_worse(slow_sink, flinktune_cli) -> None:
    """The same pair the other way round: turning debloating off under back pressure makes every
    aligned checkpoint wait behind full buffers again."""
    code, doc = _compare(flinktune_cli, slow_sink["after"], slow_sink["before"])
    print(f"closed loop, the fix taken back (compare): {doc['headline']}")
    duration = _job_figure(doc, "checkpoint_duration")
    _checkpoints_called(duration, "worse")
    if duration["informative"]:
        assert doc["verdict"] in ("worse", "mixed") and code == 1, doc["headline"]


# --- the newest Flink 2.x ---------------------------------------------------------------------------
# The same job and cluster shape on Flink 2.x (test_network_buffers_2x.py measures 216 buffers as its
# boundary there too). 2.x has no buffers-per-channel option: a stated rate may not bring it back.


def test_flink_2x_closed_loop(flink2_cluster, jar2_id, flinktune_cli, e2e2_dir) -> None:
    from .conftest import flink_dist_version

    version = ".".join(flink_dist_version(flink2_cluster.home).split(".")[:2])
    folder = e2e2_dir / "closed-loop-2x"
    # A working job near its limit, recommend with a stated rate and no plan: it keeps working.
    near = _write_config(flink2_cluster, folder / "near", 224)
    state, error, rate_before, _plan = _run(flink2_cluster, jar2_id, near, "2x-near-before")
    assert state == "RUNNING", error[:400]
    report, after = _recommend(flinktune_cli, near, "--rate", "20000", "--record-size", "1kb", "--rtt", "5ms",
                               version=version)
    assert "buffers-per-channel" not in after and "floating-buffers" not in after, report
    state, error, rate_after, _plan = _run(flink2_cluster, jar2_id, near, "2x-near-after")
    assert state == "RUNNING", f"recommend broke a working 2.x job: {error[:400]}\n{report}"
    assert rate_after >= RATE * (1 - NOISE), (rate_before, rate_after)
    # A job that fails for lack of buffers runs after the fix sized for the bound (no plan).
    failing = _write_config(flink2_cluster, folder / "failing", 200)
    state, error, _rate, _plan = _run(flink2_cluster, jar2_id, failing, "2x-failing-before")
    assert state == "FAILED" and INSUFFICIENT in error, (state, error[:400])
    report, after = _recommend(flinktune_cli, failing, version=version)
    assert "taskmanager.memory.network.min" in after, report
    state, error, rate, _plan = _run(flink2_cluster, jar2_id, failing, "2x-failing-fixed")
    assert state == "RUNNING", f"the 2.x fix still fails: {error[:400]}\n{report}"
    assert rate >= RATE * (1 - NOISE), (rate_before, rate)
    print(f"closed loop on Flink {version}: near the limit {rate_before:.0f} -> {rate_after:.0f} records/s; "
          f"failing job fixed, {rate:.0f} records/s")
