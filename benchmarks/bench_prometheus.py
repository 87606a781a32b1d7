"""Benchmark: ``flinktune collect --prometheus`` + ``flinktune analyze`` on 6 hours of a p=32 job,
pulled from a **real Prometheus server**.

The history is synthetic but Flink-shaped: the names and labels Flink 1.20's PrometheusReporter
exports (as recorded in tests/data/prometheus from a real Prometheus scraping a real Flink), 4
vertices (Source: Gen -> Parse -> KeyedAgg -> SinkWork -> Discard: Writer) x p subtasks, every
metric collect may ask for plus the deprecated ``buffers_*`` copies, all gauges (as the reporter
exports counters too), one sample per scrape interval, a slow sink built in (sink busy ~950 ms/s,
everything upstream back-pressured), counters that grow.

Steps, each its own process, measured alike:

1. this file with ``--openmetrics FILE`` writes that history as OpenMetrics text (timestamps in
   seconds, ``# EOF`` at the end);
2. ``promtool tsdb create-blocks-from openmetrics`` backfills it into a fresh TSDB folder;
3. ``prometheus`` serves that folder on 127.0.0.1 only: no scrape targets, default query limits
   and 5-minute look-back, retention 100 y (the history lies in the past; with the default 15 d
   Prometheus would delete it);
4. ``flinktune collect --prometheus`` pulls the job's range at the scrape interval: real
   ``/api/v1/series`` and ``/api/v1/query_range``, the real 11,000-points-per-series limit, real
   query cost;
5. ``flinktune analyze`` on the dump.

Prometheus's own CPU time (from /proc) is reported apart from flinktune's. The run checks the
result: every series found (4 vertices x p subtasks per metric, every one with a sample per step)
and the origin 'SinkWork -> Discard: Writer' with cause all_busy; it exits 1 otherwise. Prometheus
is stopped by its PID and the temp folder removed at the end, also on an error, Ctrl-C or SIGTERM
(``FLINKTUNE_BENCH_KEEP=1`` keeps the folder).

``--stub`` replaces steps 1-3 by a Python stub server (this file with ``--serve PORT``) for machines
without Prometheus: it answers the same two endpoints in Prometheus's JSON shape from the same
generator and refuses more than 11,000 points per series, but its cost is not Prometheus's. A stub
run only prints its report unless ``--out`` is given.

Peak memory is the peak of the summed RSS of the step's whole process tree (Spark's JVM included),
sampled every 50 ms; CPU s is the tree's user+system time.

Usage: python benchmarks/bench_prometheus.py [--parallelism 32] [--hours 6] [--scrape-s 15]
                                             [--out benchmarks/results/prometheus.md] [--stub]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results" / "prometheus.md"
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
JOB_ID = "5e1f1e5c0b7a4d2e9c3b8a7f6d5e4c3b"
JOB_NAME = "bench-p32"
VERTICES = (
    ("bc764cd8ddf7a0cff126f51c16239658", "Source: Gen"),
    ("0a448493b4782967b150582570326227", "Parse"),
    ("ea632d67b7d595e5b851708ae9ad79d6", "KeyedAgg"),
    ("6d2677a0ecc3fd8df0b72ec675edf8f4", "SinkWork -> Discard: Writer"),
)
EXPECTED_ORIGINS = [("SinkWork -> Discard: Writer", "all_busy")]
START_S = 1_790_000_000.0


def _filtered(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9:_]", "_", text)


def _names() -> list[str]:
    sys.path.insert(0, str(REPO))
    from flinktune.collect.prometheus import wanted_names

    return sorted(wanted_names())


def _points(hours: float, scrape_s: float) -> int:
    """Samples per series: one at START_S and one per scrape interval up to START_S + hours."""
    return int(hours * 3600 // scrape_s) + 1


def _labels(v: int, s: int) -> dict[str, str]:
    """The labels of subtask s of vertex v, as PrometheusReporter exports them (filtered values)."""
    vid, vname = VERTICES[v]
    return {
        "host": f"10_0_0_{s % 8}",
        "instance": f"10.0.0.{s % 8}:9249",
        "job": "flink",
        "job_id": JOB_ID,
        "job_name": _filtered(JOB_NAME),
        "subtask_index": str(s),
        "task_attempt_id": f"{vid[:16]}{s:016x}",
        "task_attempt_num": "0",
        "task_id": vid,
        "task_name": _filtered(vname),
        "tm_id": f"10_0_0_{s % 8}:6121_{s % 8:06x}",
    }


def _value(name: str, vertex: int, subtask: int, i: int, scrape_s: float) -> str:
    """A slow sink: vertex 3 busy, 0-2 back-pressured; counters grow at the sink's pace."""
    metric = name.rsplit("_", 1)[-1]
    sink = vertex == 3
    wobble = ((i * 7 + subtask * 13) % 17) / 17.0
    if metric == "busyTimeMsPerSecond":
        return f"{950 + 40 * wobble:.1f}" if sink else f"{60 + 20 * wobble:.1f}"
    if metric in ("backPressuredTimeMsPerSecond", "hardBackPressuredTimeMsPerSecond"):
        return "0" if sink else f"{900 + 50 * wobble:.1f}"
    if metric == "softBackPressuredTimeMsPerSecond":
        return "0"
    if metric == "idleTimeMsPerSecond":
        return f"{50 * wobble:.1f}" if sink else f"{40 * wobble:.1f}"
    if metric == "isBackPressured":
        return "0" if sink else "1"
    if metric == "outPoolUsage":
        return "0.25" if sink else f"{0.9 + 0.1 * wobble:.3f}"
    if metric == "inPoolUsage":
        return "0" if vertex == 0 else ("1" if sink else f"{0.5 * wobble:.3f}")
    if metric.endswith("PerSecond"):
        return f"{1000 + 100 * wobble:.1f}"
    if metric.startswith("num"):
        return str(int(1000 * scrape_s * i + subtask))
    return f"{wobble:.3f}"


def _om_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def write_openmetrics(path: Path, parallelism: int, hours: float, scrape_s: float) -> None:
    """The whole history as OpenMetrics text: one gauge family per metric name, its series one after
    the other, each in time order; timestamps in seconds; ``# EOF`` last."""
    points = _points(hours, scrape_s)
    stamps = [f"{START_S + i * scrape_s:.3f}".rstrip("0").rstrip(".") for i in range(points)]
    with open(path, "w", encoding="utf-8", buffering=1 << 22) as fh:
        for name in _names():
            fh.write(f"# TYPE {name} gauge\n")
            for v in range(len(VERTICES)):
                for s in range(parallelism):
                    labels = ",".join(f'{k}="{_om_escape(x)}"' for k, x in _labels(v, s).items())
                    head = f"{name}{{{labels}}} "
                    fh.write(
                        "".join(
                            f"{head}{_value(name, v, s, i, scrape_s)} {stamps[i]}\n" for i in range(points)
                        )
                    )
        fh.write("# EOF\n")


class _Stub:
    def __init__(self, parallelism: int, hours: float, scrape_s: float) -> None:
        self.parallelism = parallelism
        self.end_s = START_S + hours * 3600
        self.scrape_s = scrape_s
        self.names = set(_names())

    def labels(self, name: str, v: int, s: int) -> str:
        return json.dumps({"__name__": name, **_labels(v, s)})

    def series(self) -> bytes:
        out = [
            self.labels(n, v, s)
            for n in sorted(self.names)
            for v in range(len(VERTICES))
            for s in range(self.parallelism)
        ]
        return ('{"status":"success","data":[' + ",".join(out) + "]}").encode()

    def query_range(self, form: dict[str, list[str]]) -> tuple[int, bytes]:
        start, end, step = (float(form[k][0]) for k in ("start", "end", "step"))
        if int((end - start) / step) + 1 > 11_000:
            return (
                400,
                b'{"status":"error","errorType":"bad_data",'
                b'"error":"exceeded maximum resolution of 11,000 points per timeseries"}',
            )
        name = form["query"][0].split("{", 1)[0]
        first = max(0, int((start - START_S) // self.scrape_s))
        last = int((min(end, self.end_s) - START_S) // self.scrape_s)
        parts = []
        for v in range(len(VERTICES)):
            for s in range(self.parallelism):
                values = ",".join(
                    f'[{START_S + i * self.scrape_s:.3f},"{_value(name, v, s, i, self.scrape_s)}"]'
                    for i in range(first, last + 1)
                    if start <= START_S + i * self.scrape_s <= end
                )
                parts.append('{"metric":' + self.labels(name, v, s) + ',"values":[' + values + "]}")
        body = '{"status":"success","data":{"resultType":"matrix","result":[' + ",".join(parts) + "]}}"
        return 200, body.encode()


def serve(port: int, parallelism: int, hours: float, scrape_s: float) -> None:
    stub = _Stub(parallelism, hours, scrape_s)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            form = urllib.parse.parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
            if self.path == "/api/v1/series":
                status, body = 200, stub.series()
            else:
                status, body = stub.query_range(form)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def _tree(root: int) -> set[int]:
    """root and all its descendants (Spark's JVM runs in a session of its own, so not by session)."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    parent[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    tree = {root}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parent.items():
            if ppid in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return tree


def _cpu_s(pid: int) -> float:
    """User+system seconds of the process (all its threads)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_and_cpu(pid: int) -> tuple[int, int, float]:
    """RSS, its anonymous part (RSS less file-backed and shared pages), CPU seconds."""
    try:
        with open(f"/proc/{pid}/statm") as fh:
            pages = fh.read().split()
        size = os.sysconf("SC_PAGE_SIZE")
        return int(pages[1]) * size, (int(pages[1]) - int(pages[2])) * size, _cpu_s(pid)
    except (OSError, IndexError, ValueError):
        return 0, 0, 0.0


def _peak_rss(pid: int) -> int:
    """The process's own high-water RSS (VmHWM), bytes."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _stop(proc: subprocess.Popen[str] | subprocess.Popen[bytes], grace_s: float = 30.0) -> None:
    """SIGTERM to the one process we started (by its PID), SIGKILL if it outlives the grace time."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Measured(NamedTuple):
    wall_s: float
    peak_rss: int  # bytes: peak of the summed RSS of the process tree
    cpu_s: float  # each process's last sampled user+system time, summed
    result: subprocess.CompletedProcess[str]
    peak_anon: int  # bytes: the same peak without file-backed pages (a file mapped into memory)


def run_measured(cmd: list[str]) -> Measured:
    """Run cmd as its own process, sampling its whole process tree every 50 ms."""
    began = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        start_new_session=True,
    )
    peak = peak_anon = 0
    cpu: dict[int, float] = {}
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak, peak_anon
        while not stop.is_set():
            total = total_anon = 0
            for pid in _tree(proc.pid):
                rss, anon, used = _rss_and_cpu(pid)
                total += rss
                total_anon += anon
                if used:
                    cpu[pid] = max(cpu.get(pid, 0.0), used)
            peak = max(peak, total)
            peak_anon = max(peak_anon, total_anon)
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        stdout, stderr = proc.communicate(timeout=3600)
    except BaseException:
        _stop(proc)
        raise
    finally:
        stop.set()
        sampler.join()
    wall = time.monotonic() - began
    return Measured(
        wall,
        peak,
        sum(cpu.values()),
        subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr),
        peak_anon,
    )


def measure(args: list[str]) -> Measured:
    """run_measured on ``python -m flinktune ARGS``."""
    return run_measured([sys.executable, "-m", "flinktune", *args])


def _http(url: str, data: dict[str, str] | None = None, timeout: float = 5.0) -> tuple[int, bytes]:
    """GET (or form POST) on 127.0.0.1, never through a proxy."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    try:
        with opener.open(urllib.request.Request(url, data=body), timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _log_tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def start_prometheus(data: Path, work: Path, port: int) -> subprocess.Popen[bytes]:
    """A Prometheus on 127.0.0.1:port serving the backfilled TSDB in data, scraping nothing."""
    config = work / "prometheus.yml"
    config.write_text(
        "# no scrape_configs: the history is backfilled with promtool\nglobal:\n  scrape_interval: 15s\n"
    )
    with open(work / "prometheus.log", "wb") as log:
        return subprocess.Popen(
            [
                PROMETHEUS,
                f"--config.file={config}",
                f"--storage.tsdb.path={data}",
                "--storage.tsdb.retention.time=100y",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=work,
            start_new_session=True,
        )


def wait_ready(proc: subprocess.Popen[bytes], port: int, log: Path, timeout_s: float = 300.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"prometheus exited with {proc.returncode}:\n{_log_tail(log)}")
        try:
            if _http(f"http://127.0.0.1:{port}/-/ready", timeout=1.0)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"prometheus not ready after {timeout_s:.0f} s:\n{_log_tail(log)}")


def _blocks(data: Path) -> list[dict[str, int]]:
    """promtool tsdb list: per block its samples, chunks, series and bytes."""
    out = subprocess.run([PROMTOOL, "tsdb", "list", str(data)], capture_output=True, text=True, check=True)
    blocks = []
    for line in out.stdout.splitlines()[1:]:
        f = line.split()
        if len(f) == 8:
            blocks.append(
                {"samples": int(f[4]), "chunks": int(f[5]), "series": int(f[6]), "bytes": int(f[7])}
            )
    return blocks


def _interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _plan(parallelism: int) -> dict[str, object]:
    return {
        "plan": {
            "jid": JOB_ID,
            "name": JOB_NAME,
            "nodes": [
                {
                    "id": vid,
                    "parallelism": parallelism,
                    "description": name,
                    "inputs": []
                    if i == 0
                    else [
                        {
                            "num": 0,
                            "id": VERTICES[i - 1][0],
                            "ship_strategy": "HASH" if i == 2 else "REBALANCE",
                        }
                    ],
                }
                for i, (vid, name) in enumerate(VERTICES)
            ],
        }
    }


def check_dump(dump: Path, meta: dict[str, object], parallelism: int, points: int) -> list[str]:
    """Every metric collect used: 4 vertices x p subtasks, each with one row per step."""
    import pyarrow.parquet as pq

    problems = []
    metrics = meta["metrics"]
    assert isinstance(metrics, dict)
    wide = len(VERTICES) * parallelism
    if meta["series"] != len(metrics) * wide:
        problems.append(f"collect found {meta['series']} series, expected {len(metrics)} x {wide}")
    table = pq.read_table(dump / "metrics.parquet", columns=["metric", "vertex_id", "subtask_index", "ts"])
    grouped = (
        table.group_by(["metric", "vertex_id", "subtask_index"]).aggregate([("ts", "count")]).to_pydict()
    )
    per_metric = Counter(grouped["metric"])
    if len(per_metric) != len(metrics):
        problems.append(f"{len(per_metric)} metrics in the dump, collect used {len(metrics)}")
    thin = sorted(m for m, n in per_metric.items() if n != wide)
    if thin:
        problems.append(f"metrics without {wide} series: {thin}")
    short = sum(1 for n in grouped["ts_count"] if n != points)
    if short:
        problems.append(f"{short} series without exactly {points} rows")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--openmetrics", help=argparse.SUPPRESS)
    parser.add_argument("--parallelism", type=int, default=32)
    parser.add_argument("--hours", type=float, default=6.0)
    parser.add_argument("--scrape-s", type=float, default=15.0)
    parser.add_argument("--out", help=f"the report (default {RESULTS.relative_to(REPO)}; a --stub run: none)")
    parser.add_argument("--stub", action="store_true", help="a Python stub server instead of Prometheus")
    a = parser.parse_args()
    if a.serve:
        serve(a.serve, a.parallelism, a.hours, a.scrape_s)
        return 0
    if a.openmetrics:
        write_openmetrics(Path(a.openmetrics), a.parallelism, a.hours, a.scrape_s)
        return 0
    out = a.out or (None if a.stub else str(RESULTS))
    if not a.stub:
        missing = [tool for tool in (PROMETHEUS, PROMTOOL) if not os.access(tool, os.X_OK)]
        if missing:
            raise SystemExit(f"not found: {', '.join(missing)} (install Prometheus, or run with --stub)")
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGHUP, _interrupt)

    me = str(Path(__file__).resolve())
    sizing = ["--parallelism", str(a.parallelism), "--hours", str(a.hours), "--scrape-s", str(a.scrape_s)]
    names = _names()
    wide = len(VERTICES) * a.parallelism
    points = _points(a.hours, a.scrape_s)
    end_s = START_S + a.hours * 3600
    keep = bool(os.environ.get("FLINKTUNE_BENCH_KEEP"))
    port = _free_port()
    load_before = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="flinktune-bench-prom-"))
    (work / "plan.json").write_text(json.dumps(_plan(a.parallelism)))
    steps: list[tuple[str, float, float, int, str]] = []
    server: subprocess.Popen[bytes] | None = None
    block_h = max(2, math.ceil(a.hours * 3))
    blocks: list[dict[str, int]] = []
    ready_cpu = stored = 0
    try:
        if a.stub:
            server = subprocess.Popen(
                [sys.executable, me, "--serve", str(port), *sizing], stdin=subprocess.DEVNULL,
                start_new_session=True,
            )  # fmt: skip
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.1)
        else:
            history = work / "history.om"
            wall, peak, cpu, done, _ = run_measured(
                [sys.executable, me, "--openmetrics", str(history), *sizing]
            )
            if done.returncode != 0:
                raise SystemExit(f"writing the OpenMetrics history failed: {done.stderr[-2000:]}")
            steps.append(
                (
                    "write the history as OpenMetrics text (Python)", wall, cpu, peak,
                    f"{len(names) * wide:,} series x {points} samples = {len(names) * wide * points:,} "
                    f"samples, {history.stat().st_size / 1e9:.2f} GB of text",
                )
            )  # fmt: skip
            data = work / "tsdb"
            wall, peak, cpu, done, anon = run_measured(
                [PROMTOOL, "tsdb", "create-blocks-from", "openmetrics", f"--max-block-duration={block_h}h",
                 str(history), str(data)]
            )  # fmt: skip
            if done.returncode != 0:
                raise SystemExit(f"promtool failed: {(done.stdout + done.stderr)[-2000:]}")
            if not keep:
                history.unlink()
            blocks = _blocks(data)
            steps.append(
                (
                    "`promtool tsdb create-blocks-from openmetrics` (backfill)", wall, cpu, peak,
                    f"{len(blocks)} block(s): {sum(b['series'] for b in blocks):,} series, "
                    f"{sum(b['samples'] for b in blocks):,} samples, {sum(b['chunks'] for b in blocks):,} "
                    f"chunks, {sum(b['bytes'] for b in blocks) / 1e6:.1f} MB on disk; its peak RSS counts "
                    f"the input file it maps, its own (anonymous) memory peaked at {anon / 1e6:.0f} MB",
                )
            )  # fmt: skip
            began = time.monotonic()
            server = start_prometheus(data, work, port)
            wait_ready(server, port, work / "prometheus.log")
            ready_cpu = _cpu_s(server.pid)
            steps.append(
                (
                    "`prometheus` start until `/-/ready`", time.monotonic() - began, ready_cpu,
                    _peak_rss(server.pid), "opens the block(s)",
                )
            )  # fmt: skip
        server_cpu0 = _cpu_s(server.pid)
        collect_s, collect_rss, collect_cpu, collect, _ = measure(
            [
                "collect", "--prometheus", f"http://127.0.0.1:{port}", "--job-name", JOB_NAME,
                "--since", f"{START_S:.0f}", "--until", f"{end_s:.0f}", "--step", f"{a.scrape_s:g}s",
                "--plan", str(work / "plan.json"), "-o", str(work / "dump"),
            ]
        )  # fmt: skip
        server_cpu_collect = _cpu_s(server.pid) - server_cpu0
        if collect.returncode != 0:
            raise SystemExit(f"collect failed: {collect.stderr[-2000:]}")
        analyze_s, analyze_rss, analyze_cpu, analyze, _ = measure(
            ["analyze", str(work / "dump"), "--format", "json", "--no-progress"]
        )
        if analyze.returncode not in (0, 1):
            raise SystemExit(f"analyze failed: {analyze.stderr[-2000:]}")
        server_cpu = _cpu_s(server.pid)
        server_hwm = _peak_rss(server.pid)
        if not a.stub:
            status, body = _http(
                f"http://127.0.0.1:{port}/api/v1/series",
                {"match[]": '{__name__=~"flink_taskmanager_job_task_.+"}', "start": f"{START_S:.0f}",
                 "end": f"{end_s:.0f}"},
                timeout=60,
            )  # fmt: skip
            stored = len(json.loads(body)["data"]) if status == 200 else -1
        import pyarrow.parquet as pq

        meta = json.loads((work / "dump" / "prometheus.json").read_text())
        rows = pq.read_metadata(work / "dump" / "metrics.parquet").num_rows
        size_mb = (work / "dump" / "metrics.parquet").stat().st_size / 1e6
        problems = check_dump(work / "dump", meta, a.parallelism, points)
    finally:
        if server is not None:
            _stop(server)
        if keep:
            print(f"benchmark files kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    report = json.loads(analyze.stdout)
    origins = [(o["vertex"], o["cause"]) for j in report["jobs"] for o in j["origins"]]
    if origins != EXPECTED_ORIGINS:
        problems.append(f"origins {origins}, expected {EXPECTED_ORIGINS}")
    if not a.stub:
        expected_samples = len(names) * wide * points
        if sum(b["samples"] for b in blocks) != expected_samples:
            problems.append(
                f"backfilled {sum(b['samples'] for b in blocks)} samples, expected {expected_samples}"
            )
        if stored != len(names) * wide:
            problems.append(f"Prometheus lists {stored} series, expected {len(names)} x {wide}")
    requests = re.search(r"\((\d+) requests\)", collect.stdout)
    load = os.getloadavg()
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    version = (
        "a Python stub"
        if a.stub
        else "Prometheus "
        + subprocess.run([PROMETHEUS, "--version"], capture_output=True, text=True)
        .stdout.split("version", 1)[-1]
        .split("(")[0]
        .strip()
    )
    steps += [
        (
            "`flinktune collect --prometheus`", collect_s, collect_cpu, collect_rss,
            f"{meta['series']} series found, {len(meta['metrics'])} metrics, {meta['chunks']} chunk(s), "
            f"{requests.group(1) if requests else '?'} requests, {rows:,} rows, {size_mb:.1f} MB parquet",
        ),
        ("`flinktune analyze`", analyze_s, analyze_cpu, analyze_rss, f"origin + cause: {origins}"),
        (
            "flinktune total", collect_s + analyze_s, collect_cpu + analyze_cpu,
            max(collect_rss, analyze_rss), "collect + analyze",
        ),
    ]  # fmt: skip
    table = [
        "| step | wall s | CPU s | peak memory MB | result |",
        "|---|---:|---:|---:|---|",
        *(f"| {s} | {w:.1f} | {c:.1f} | {m / 1e6:.0f} | {r} |" for s, w, c, m, r in steps),
    ]
    history = (
        "synthetic but Flink-shaped history: Flink 1.20 PrometheusReporter names and labels as recorded "
        f"from a real Prometheus in tests/data/prometheus, all gauges, 4 vertices x {a.parallelism} "
        f"subtasks, {len(names)} metric names (all collect may ask for, the deprecated `buffers_*` "
        f"copies included; it used {len(meta['metrics'])}), {a.hours:g} h at a {a.scrape_s:g} s scrape "
        f"interval = {points} samples per series, a slow sink built in"
    )
    if a.stub:
        server_text = (
            f"Prometheus side: a **stub** (not a real Prometheus) serving {history}. The stub used "
            f"{server_cpu_collect:.1f} s of CPU producing the answers (JSON text) on the same cores; "
            "collect's wall time includes it, its CPU s does not."
        )
    else:
        server_text = (
            f"Server: a real **{version}** (Debian's `prometheus` binary) on 127.0.0.1 only, no scrape "
            "targets, default query limits (11,000 points per series, 50 M samples per query) and "
            "5-minute look-back, `--storage.tsdb.retention.time=100y` (the history lies in the past). "
            f"Its TSDB was backfilled with `promtool tsdb create-blocks-from openmetrics "
            f"--max-block-duration={block_h}h` from {history}."
            "\n\n"
            f"Prometheus's own CPU time (not in the rows above): {server_cpu_collect:.2f} s answering "
            f"collect's {requests.group(1) if requests else '?'} requests (`/api/v1/series`, then one "
            "`/api/v1/query_range` per metric and chunk; collect's wall time includes it), "
            f"{ready_cpu:.2f} s from start to ready, {server_cpu:.2f} s in all; its peak RSS "
            f"{server_hwm / 1e6:.0f} MB. "
            f"Afterwards `/api/v1/series` listed {stored:,} Flink task series, all that were backfilled."
        )
    text = "\n".join(
        [
            f"# `flinktune collect --prometheus` + `analyze`: {a.hours:g} hours of a p={a.parallelism} job"
            + ("" if a.stub else " from a real Prometheus"),
            "",
            f"Run {when} by `benchmarks/bench_prometheus.py`{'' if not a.stub else ' --stub'} "
            f"(niceness {os.nice(0)}). Machine: {os.cpu_count()} cores, shared (load average before "
            f"{load_before[0]:.1f}, at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}: other work "
            "runs on the same cores, so wall times are noisy; CPU s is the step's own process tree's, "
            "user+system, sampled every 50 ms). Whole processes, start-up included; peak memory = peak "
            "summed RSS of the step's process tree (Spark's JVM included"
            + ("" if a.stub else "; for `prometheus`, its RSS high-water mark at ready")
            + ").",
            "",
            server_text,
            "",
            *table,
            "",
            "Collect parses and writes one answer at a time (one metric x one chunk: here "
            f"{wide} series x {points} points); no answer is kept once its parquet part is "
            "written, and the parts are merged at the end a few at a time.",
            "",
            "Checked by the run: "
            + (
                "; ".join(problems)
                if problems
                else f"every metric collect used has {wide} series (4 vertices x {a.parallelism} subtasks) "
                f"with {points} rows each; origin + cause {EXPECTED_ORIGINS[0]}."
            ),
            "",
        ]
    )
    print(text)
    if problems:
        print("benchmark result wrong: " + "; ".join(problems), file=sys.stderr)
        return 1
    if out:
        Path(out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt as exc:
        print(f"interrupted ({exc or 'Ctrl-C'}): the server was stopped", file=sys.stderr)
        sys.exit(130)
