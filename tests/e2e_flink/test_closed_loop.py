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


# --- slow sink with checkpoints every few seconds ---------------------------------------------------
# p=4 on 2 x 2 slots (test_scenarios.py's slow sink): SinkWork pauses 250 us per record, everything
# upstream is back-pressured, aligned checkpoints every 3 s wait behind the in-flight data.

CHECKPOINT_MS = 3000
# SinkWork takes ~3,500 records/s per subtask (a 250 us pause), the source offers 20,000 in all.
SLOW = {"rate": 20000, "sink_pause_us": 250, "checkpoint_ms": CHECKPOINT_MS}
PREDICTION_FACTOR = 3      # docs/recommend.md, "Predictions" (measured 1.3x-1.9x)


def _checkpoint_median_s(cluster, job_id: str, wanted: int = 4, timeout_s: float = 120.0) -> float:
    """Median end-to-end duration of the first `wanted` completed checkpoints after the first one."""
    deadline = time.monotonic() + timeout_s
    done: list[float] = []
    while time.monotonic() < deadline:
        stats = cluster.get(f"/jobs/{job_id}/checkpoints") or {}
        done = sorted((c["id"], c["end_to_end_duration"] / 1000) for c in stats.get("history", [])
                      if c.get("status") == "COMPLETED")
        if len(done) > wanted:
            break
        time.sleep(2)
    durations = sorted(d for _id, d in done[1:wanted + 1])   # the first one starts before back pressure
    assert durations, f"no completed checkpoint within {timeout_s} s"
    return durations[len(durations) // 2]


def _slow_sink_run(cluster, jar_id: str, config: Path, name: str, collect=None) -> tuple[float, float]:
    cluster.use_taskmanagers_with_file(config, 2)
    job_id = cluster.submit(jar_id, 4, name=name, **SLOW)
    try:
        cluster.wait_running(job_id)
        if collect is not None:
            collect(job_id)
        median = _checkpoint_median_s(cluster, job_id)
        rate = counter_rate(cluster, job_id)     # what the sink takes in
    finally:
        cluster.cancel(job_id)
    return median, rate


def test_slow_sink_checkpoints_improve_as_predicted(flink_cluster, jar_id, flinktune_cli, e2e_dir) -> None:
    folder = e2e_dir / "closed-loop" / "slow-sink"
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "config.yaml"
    base = {**flink_cluster.base_config, "taskmanager.numberOfTaskSlots": 2}
    config.write_text("".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}\n"
                              for k, v in base.items()), encoding="utf-8")
    dump = folder / "dump"

    def collect(job_id: str) -> None:
        result = flinktune_cli("collect", "--url", flink_cluster.url, "--job", job_id, "--interval", "2s",
                               "--duration", "24s", "-o", str(dump))
        assert result.returncode == 0, result.stderr

    before_s, rate_before = _slow_sink_run(flink_cluster, jar_id, config, "slow-sink-before", collect)
    result = flinktune_cli("recommend", str(config), "--flink-version", "1.20", "--metrics", str(dump),
                           "--format", "json", "--write", timeout_s=600)
    assert result.returncode == 0, result.stderr
    rec = json.loads(result.stdout)["recommendations"][0]
    keys = {c["new_key"] or c["key"]: c["recommended"] for c in rec["changes"]}
    assert keys.get("taskmanager.network.memory.buffer-debloat.enabled") == "true", rec["notes"]
    assert not any("buffers-per-channel" in k for k in keys)     # a slow sink is not a buffer problem
    predicted_before, predicted_after = rec["barrier_wait_s"]["before"], rec["barrier_wait_s"]["after"]
    after_s, rate_after = _slow_sink_run(flink_cluster, jar_id, config, "slow-sink-after")
    print(f"closed loop, slow sink: median checkpoint {before_s:.2f} s -> {after_s:.2f} s; predicted barrier "
          f"wait {predicted_before:.2f} s -> {predicted_after:.2f} s; source {rate_before:.0f} -> "
          f"{rate_after:.0f} records/s")
    assert after_s < before_s
    assert rate_after >= rate_before * (1 - NOISE), (rate_before, rate_after)
    # docs/recommend.md, "Predictions": with debloating the prediction is within PREDICTION_FACTOR of
    # the measured checkpoint; with full default buffers it is a lower bound (the real wait was longer).
    assert after_s / PREDICTION_FACTOR <= predicted_after <= after_s * PREDICTION_FACTOR
    assert predicted_before <= before_s


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
