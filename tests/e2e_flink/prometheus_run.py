"""Driver for test_prometheus.py, run inside a network namespace of its own (``unshare -n``).

Flink's PrometheusReporter binds every interface and has no host option (PrometheusReporter @1.20:
``new HTTPServer(new InetSocketAddress(port), ...)``), so the cluster, the reporters, Prometheus
and flinktune all run in a fresh namespace whose only interface is its loopback: nothing is
reachable from, or reaches, any other network.

It starts a Flink 1.20 cluster (one JobManager, two TaskManagers) with the reporter enabled and a
Prometheus server scraping it every second, runs the slow-sink and skewed-key jobs (REST collect
runs while each job runs), cancels each job, pulls the same run with ``collect --prometheus``,
analyses both dumps, then kills one TaskManager under a running job so it restarts (new task
attempts, counters from 0). It prints one JSON summary on stdout. Every process it starts is
stopped by PID (also on SIGTERM). ``--capture DIR`` also saves raw query_range answers there.

Usage: unshare -n -- python prometheus_run.py WORKDIR [--capture DIR]
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import conftest
from conftest import (
    JOB_SOURCES,
    LOOPBACK,
    FlinkCluster,
    _stop,
    find_flink_home,
    free_port,
)

REPO = Path(__file__).resolve().parents[2]
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
STARTED: list[subprocess.Popen[bytes]] = []
JOB_SECONDS = 26
# flink-metrics-prometheus (plugins/metrics-prometheus/ of the distribution), 1.20.
REPORTER_FACTORY = "org.apache.flink.metrics.prometheus.PrometheusReporterFactory"


def _sigterm(signum: int, frame: object) -> None:
    raise SystemExit(143)


def cli(*args: str, timeout_s: float = 400) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flinktune", *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        cwd=REPO,
    )


def post(url: str, form: list[tuple[str, str]]) -> bytes:
    request = urllib.request.Request(url, data=urllib.parse.urlencode(form).encode(), method="POST")
    with _NO_PROXY.open(request, timeout=30) as response:
        return response.read()


def start_prometheus(work: Path, targets: list[str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    config = work / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: flink\n    scrape_interval: 1s\n    static_configs:\n"
        f"      - targets: [{', '.join(repr(t) for t in targets)}]\n",
        encoding="utf-8",
    )
    log = open(work / "prometheus.log", "wb")  # noqa: SIM115 - the child keeps its descriptor
    proc = subprocess.Popen(
        [
            "prometheus",
            f"--config.file={config}",
            f"--storage.tsdb.path={work / 'prom-data'}",
            f"--web.listen-address={LOOPBACK}:{port}",
            "--log.level=warn",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    log.close()
    STARTED.append(proc)
    url = f"http://{LOOPBACK}:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"prometheus exited ({proc.returncode}): {(work / 'prometheus.log').read_text()[-2000:]}"
            )
        try:
            with _NO_PROXY.open(url + "/-/ready", timeout=2) as response:
                if response.status == 200:
                    return proc, url
        except OSError:
            pass
        time.sleep(0.3)
    raise TimeoutError("prometheus did not become ready")


def build_jar(home: Path, work: Path) -> Path:
    build = work / "job-build"
    dist = next((home / "lib").glob("flink-dist-*.jar"))
    subprocess.run(
        [
            "javac",
            "-nowarn",
            "-cp",
            str(dist),
            "-d",
            str(build / "classes"),
            *map(str, sorted(JOB_SOURCES.glob("*.java"))),
        ],
        check=True,
        capture_output=True,
    )
    jar = build / "jobs.jar"
    subprocess.run(
        ["jar", "cf", str(jar), "-C", str(build / "classes"), "."], check=True, capture_output=True
    )
    return jar


def wait_scraped(prom: str, job_id: str, timeout_s: float = 60) -> None:
    """Until Prometheus holds the job's busy-time series for every subtask (4 vertices x p)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        answer = json.loads(
            post(
                prom + "/api/v1/query",
                [("query", f'flink_taskmanager_job_task_busyTimeMsPerSecond{{job_id="{job_id}"}}')],
            )
        )
        if len(answer["data"]["result"]) >= 8:
            return
        time.sleep(1)
    raise TimeoutError(f"Prometheus never scraped job {job_id}")


def analyze(dump: Path, *extra: str) -> dict:
    result = cli("analyze", str(dump), "--format", "json", "--no-progress", *extra)
    if result.returncode not in (0, 1):
        raise RuntimeError(f"analyze {dump} failed ({result.returncode}): {result.stderr[-2000:]}")
    report = json.loads(result.stdout)
    return {
        "exit": result.returncode,
        "jobs": [
            {
                "job_id": j["job_id"],
                "has_plan": j.get("has_plan"),
                "origins": [
                    {"vertex": o["vertex"], "cause": o.get("cause"), "hot_subtask": o.get("hot_subtask")}
                    for o in j.get("origins", [])
                ],
                # The rates and the parallelism the stated target needs (test_prometheus compares them).
                "parallelism": {
                    v["name"]: {k: v[k] for k in ("method", "input_per_s", "busy", "true_rate_per_subtask",
                                                  "proposed", "verdict", "reason", "busiest_input_share")}
                    for v in (j.get("parallelism") or {}).get("vertices", [])
                },
                "parallelism_changes": (j.get("parallelism") or {}).get("changes"),
                "parallelism_blocked": (j.get("parallelism") or {}).get("blocked"),
            }
            for j in report.get("jobs", [])
        ],
        "codes": sorted({f["code"] for f in report.get("findings", [])}),
    }


def capture(
    prom: str, job_id: str, start: float, end: float, step: str, names: list[str], into: Path
) -> None:
    into.mkdir(parents=True, exist_ok=True)
    for name in names:
        body = post(
            prom + "/api/v1/query_range",
            [
                ("query", f'{name}{{job_id="{job_id}"}}'),
                ("start", f"{start:.3f}"),
                ("end", f"{end:.3f}"),
                ("step", step),
            ],
        )
        with gzip.open(into / f"{name}.json.gz", "wb", compresslevel=9) as fh:
            fh.write(body)


def run_scenario(
    cluster: FlinkCluster, jar_id: str, prom: str, work: Path, scenario: str,
    analyze_args: tuple[str, ...] = (), **args: object
) -> dict:
    name = f"flinktune-prom-{scenario}"
    job_id = cluster.submit(jar_id, 4, name=name, **args)
    folder = work / "dumps" / scenario
    try:
        cluster.wait_running(job_id)
        wait_scraped(prom, job_id)
        start = time.time()
        rest = cli(
            "collect",
            "--url",
            cluster.url,
            "--job",
            job_id,
            "--interval",
            "2s",
            "--duration",
            f"{JOB_SECONDS}s",
            "-o",
            str(folder / "rest"),
        )
        end = time.time()
        if rest.returncode != 0:
            raise RuntimeError(f"REST collect failed: {rest.stderr}")
    finally:
        cluster.cancel(job_id)
    # The job has ended: pull the same window from Prometheus (plan from the JobManager, which
    # still serves the cancelled job).
    prom_run = cli(
        "collect",
        "--prometheus",
        prom,
        "--job-name",
        name,
        "--since",
        f"{start:.3f}",
        "--until",
        f"{end:.3f}",
        "--step",
        "1s",
        "--url",
        cluster.url,
        "-o",
        str(folder / "prom"),
    )
    if prom_run.returncode != 0:
        raise RuntimeError(f"collect --prometheus failed: {prom_run.stderr}")
    return {
        "job_id": job_id,
        "start": start,
        "end": end,
        "prom_stdout": prom_run.stdout.strip(),
        "prom_stderr": prom_run.stderr.strip(),
        "rest": analyze(folder / "rest" / "metrics.parquet", *analyze_args),
        "prom": analyze(folder / "prom" / "metrics.parquet", *analyze_args),
    }


def run_restart(cluster: FlinkCluster, jar_id: str, prom: str, work: Path) -> dict:
    """A job that loses a TaskManager and restarts on the other: new attempts, counters from 0."""
    job_id = cluster.submit(jar_id, 2, name="flinktune-prom-restart", rate=400)
    try:
        cluster.wait_running(job_id)
        wait_scraped(prom, job_id)
        start = time.time()
        time.sleep(6)
        # Kill the TaskManager running the job's first subtask; the other one has free slots.
        job = cluster.get(f"/jobs/{job_id}")
        vertex = job["vertices"][0]["id"]
        tm_of = cluster.get(f"/jobs/{job_id}/vertices/{vertex}")["subtasks"][0]["taskmanager-id"]
        victim = next(p for p in cluster.taskmanagers if p.poll() is None and _runs(p, tm_of, cluster))
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=30)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            current = cluster.get(f"/jobs/{job_id}")
            subtasks = cluster.get(f"/jobs/{job_id}/vertices/{vertex}")["subtasks"]
            if current["state"] == "RUNNING" and all(
                s.get("attempt", 0) >= 1 and s["status"] == "RUNNING" for s in subtasks
            ):
                break
            time.sleep(0.5)
        time.sleep(8)
        end = time.time()
    finally:
        cluster.cancel(job_id)
    folder = work / "dumps" / "restart"
    prom_run = cli(
        "collect",
        "--prometheus",
        prom,
        "--job",
        job_id,
        "--since",
        f"{start:.3f}",
        "--until",
        f"{end:.3f}",
        "--step",
        "1s",
        "-o",
        str(folder),
    )
    return {
        "job_id": job_id,
        "start": start,
        "end": end,
        "exit": prom_run.returncode,
        "stdout": prom_run.stdout.strip(),
        "stderr": prom_run.stderr.strip(),
        "folder": str(folder),
    }


def _runs(proc: subprocess.Popen[bytes], tm_id: str, cluster: FlinkCluster) -> bool:
    """Whether this TaskManager process is the one with id tm_id (its log names its resource id)."""
    log = cluster.console_logs.get(proc.pid)
    return bool(log and log.exists() and tm_id in log.read_text(errors="replace"))


def main() -> int:
    signal.signal(signal.SIGTERM, _sigterm)
    work = Path(sys.argv[1])
    capture_dir = Path(sys.argv[sys.argv.index("--capture") + 1]) if "--capture" in sys.argv else None
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    home, why = find_flink_home()
    if home is None:
        print(json.dumps({"skip": why}))
        return 0
    cluster = FlinkCluster(home, work / "cluster")
    reporter_port = free_port()
    ports = f"{reporter_port}-{reporter_port + 3}"
    cluster.base_config.update(
        {
            "metrics.reporter.prom.factory.class": REPORTER_FACTORY,
            "metrics.reporter.prom.port": ports,
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": 3,
            "restart-strategy.fixed-delay.delay": "1 s",
            "heartbeat.timeout": 8000,
            "heartbeat.interval": 2000,
        }
    )
    summary: dict = {}
    try:
        cluster.start_jobmanager()
        cluster.use_taskmanagers(2, **{"taskmanager.numberOfTaskSlots": 3})
        prom_proc, prom = start_prometheus(
            work, [f"{LOOPBACK}:{p}" for p in range(reporter_port, reporter_port + 4)]
        )
        jar_id = cluster.upload_jar(build_jar(home, work))
        # The slow sink's parallelism for the rate the source offers: the same from both dumps.
        summary["slow-sink"] = run_scenario(
            cluster, jar_id, prom, work, "slow-sink", ("--target-rate", "20000"), rate=20000,
            sink_pause_us=1000,
        )
        # A hot key: no parallelism helps, and the report says why (test_prometheus.py, issue 27).
        summary["skew"] = run_scenario(
            cluster, jar_id, prom, work, "skew", ("--target-rate", "4000"), rate=4000, agg_pause_us=1000,
            hot_fraction=0.9,
        )
        if capture_dir is not None:
            skew = summary["skew"]
            names = [
                *sorted(
                    json.loads((work / "dumps" / "skew" / "prom" / "prometheus.json").read_text())["metrics"]
                ),
                "flink_taskmanager_job_task_buffers_inPoolUsage",
                "flink_taskmanager_job_task_buffers_outPoolUsage",
            ]
            capture(prom, skew["job_id"], skew["start"], skew["end"], "2s", names, capture_dir / "skew")
            plan = cluster.get(f"/jobs/{skew['job_id']}/plan")
            (capture_dir / "skew" / "plan.json").write_text(json.dumps(plan, indent=1) + "\n")
            series = post(
                prom + "/api/v1/series",
                [
                    (
                        "match[]",
                        f'flink_taskmanager_job_task_busyTimeMsPerSecond{{job_id="{skew["job_id"]}"}}',
                    ),
                    ("start", f"{skew['start']:.3f}"),
                    ("end", f"{skew['end']:.3f}"),
                ],
            )
            (capture_dir / "skew" / "series.json").write_bytes(series)
        summary["restart"] = run_restart(cluster, jar_id, prom, work)
        if capture_dir is not None:
            r = summary["restart"]
            capture(
                prom,
                r["job_id"],
                r["start"],
                r["end"],
                "1s",
                ["flink_taskmanager_job_task_numRecordsIn", "flink_taskmanager_job_task_busyTimeMsPerSecond"],
                capture_dir / "restart",
            )
        _stop(prom_proc)
    finally:
        for proc in STARTED:
            _stop(proc, grace_s=10)
        cluster.stop()
    summary["pids"] = sorted({p.pid for p in [*STARTED, *conftest._STARTED]})
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
