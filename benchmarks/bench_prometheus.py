"""Benchmark: ``flinktune collect --prometheus`` + ``flinktune analyze`` on 6 hours of a p=32 job.

The Prometheus side is a **stub** (this file with ``--serve PORT``, its own process): it answers
``/api/v1/series`` and ``/api/v1/query_range`` in Prometheus's JSON shape with synthetic but
Flink-shaped series: the names and labels Flink 1.20's PrometheusReporter exports (as recorded in
tests/data/prometheus from a real Prometheus scraping a real Flink), 4 vertices (Source: Gen ->
Parse -> KeyedAgg -> SinkWork -> Discard: Writer) x p subtasks, every metric collect asks for plus
the deprecated ``buffers_*`` copies, one sample per scrape interval, a slow sink built in (sink busy
~950 ms/s, everything upstream back-pressured), counters that grow. It refuses more than 11,000
points per series like Prometheus. A real Prometheus would add its own query time; the stub's CPU
time is reported separately so it can be told apart.

Both flinktune commands run as separate processes, start-up included; peak memory is the peak of
the summed RSS of the command's whole process tree (Spark's JVM included), sampled every 50 ms.

Usage: python benchmarks/bench_prometheus.py [--parallelism 32] [--hours 6] [--scrape-s 15]
                                             [--out benchmarks/results/prometheus.md]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
JOB_ID = "5e1f1e5c0b7a4d2e9c3b8a7f6d5e4c3b"
JOB_NAME = "bench-p32"
VERTICES = (
    ("bc764cd8ddf7a0cff126f51c16239658", "Source: Gen"),
    ("0a448493b4782967b150582570326227", "Parse"),
    ("ea632d67b7d595e5b851708ae9ad79d6", "KeyedAgg"),
    ("6d2677a0ecc3fd8df0b72ec675edf8f4", "SinkWork -> Discard: Writer"),
)
START_S = 1_790_000_000.0


def _filtered(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9:_]", "_", text)


def _names() -> list[str]:
    sys.path.insert(0, str(REPO))
    from flinktune.collect.prometheus import wanted_names

    return sorted(wanted_names())


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


class _Stub:
    def __init__(self, parallelism: int, hours: float, scrape_s: float) -> None:
        self.parallelism = parallelism
        self.end_s = START_S + hours * 3600
        self.scrape_s = scrape_s
        self.names = set(_names())

    def labels(self, name: str, v: int, s: int) -> str:
        vid, vname = VERTICES[v]
        tm = f"10_0_0_{s % 8}:6121_{s % 8:06x}"
        return json.dumps(
            {
                "__name__": name,
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
                "tm_id": tm,
            }
        )

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


def _rss_and_cpu(pid: int) -> tuple[int, float]:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            rss = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        return rss, _cpu_s(pid)
    except (OSError, IndexError, ValueError):
        return 0, 0.0


def measure(args: list[str]) -> tuple[float, int, float, subprocess.CompletedProcess[str]]:
    """Wall seconds, peak summed RSS of the process tree, CPU seconds of the tree (each process's
    last sampled user+system time, every 50 ms), and the result."""
    began = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "flinktune", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        start_new_session=True,
    )
    peak = 0
    cpu: dict[int, float] = {}
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            total = 0
            for pid in _tree(proc.pid):
                rss, used = _rss_and_cpu(pid)
                total += rss
                if used:
                    cpu[pid] = max(cpu.get(pid, 0.0), used)
            peak = max(peak, total)
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = proc.communicate(timeout=1800)
    stop.set()
    sampler.join()
    wall = time.monotonic() - began
    return (
        wall,
        peak,
        sum(cpu.values()),
        subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr),
    )


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", type=int)
    parser.add_argument("--parallelism", type=int, default=32)
    parser.add_argument("--hours", type=float, default=6.0)
    parser.add_argument("--scrape-s", type=float, default=15.0)
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "prometheus.md"))
    a = parser.parse_args()
    if a.serve:
        serve(a.serve, a.parallelism, a.hours, a.scrape_s)
        return 0

    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    work = Path(tempfile.mkdtemp(prefix="flinktune-bench-prom-"))
    load_before = os.getloadavg()
    plan = {
        "plan": {
            "jid": JOB_ID,
            "name": JOB_NAME,
            "nodes": [
                {
                    "id": vid,
                    "parallelism": a.parallelism,
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
    (work / "plan.json").write_text(json.dumps(plan))
    stub = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), "--parallelism", str(a.parallelism),
         "--hours", str(a.hours), "--scrape-s", str(a.scrape_s)],
    )  # fmt: skip
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        end_s = START_S + a.hours * 3600
        collect_s, collect_rss, collect_cpu, collect = measure(
            [
                "collect", "--prometheus", f"http://127.0.0.1:{port}", "--job-name", JOB_NAME,
                "--since", f"{START_S:.0f}", "--until", f"{end_s:.0f}", "--step", f"{a.scrape_s:g}s",
                "--plan", str(work / "plan.json"), "-o", str(work / "dump"),
            ]
        )  # fmt: skip
        stub_cpu = _cpu_s(stub.pid)
        if collect.returncode != 0:
            raise SystemExit(f"collect failed: {collect.stderr}")
        analyze_s, analyze_rss, analyze_cpu, analyze = measure(
            ["analyze", str(work / "dump"), "--format", "json", "--no-progress"]
        )
        if analyze.returncode not in (0, 1):
            raise SystemExit(f"analyze failed: {analyze.stderr[-2000:]}")
        import pyarrow.parquet as pq

        meta = json.loads((work / "dump" / "prometheus.json").read_text())
        rows = pq.read_metadata(work / "dump" / "metrics.parquet").num_rows
        size_mb = (work / "dump" / "metrics.parquet").stat().st_size / 1e6
    finally:
        stub.terminate()
        stub.wait(timeout=30)
        if os.environ.get("FLINKTUNE_BENCH_KEEP"):
            print(f"benchmark files kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    report = json.loads(analyze.stdout)
    origins = [(o["vertex"], o["cause"]) for j in report["jobs"] for o in j["origins"]]
    load = os.getloadavg()
    points = int(a.hours * 3600 / a.scrape_s) + 1
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    table = [
        "| step | wall s | CPU s | peak memory MB | result |",
        "|---|---:|---:|---:|---|",
        f"| `collect --prometheus` | {collect_s:.1f} | {collect_cpu:.1f} | {collect_rss / 1e6:.0f} | "
        f"{meta['series']} series found, {len(meta['metrics'])} metrics, {meta['chunks']} chunk(s), "
        f"{rows:,} rows, {size_mb:.1f} MB parquet |",
        f"| `analyze` | {analyze_s:.1f} | {analyze_cpu:.1f} | {analyze_rss / 1e6:.0f} | "
        f"origin + cause: {origins} |",
        f"| total | {collect_s + analyze_s:.1f} | {collect_cpu + analyze_cpu:.1f} | "
        f"{max(collect_rss, analyze_rss) / 1e6:.0f} | |",
    ]
    text = "\n".join(
        [
            f"# `flinktune collect --prometheus` + `analyze`: {a.hours:g} hours of a p={a.parallelism} job",
            "",
            f"Run {when} by `benchmarks/bench_prometheus.py`. Machine: {os.cpu_count()} cores (shared; load",
            f"average before {load_before[0]:.1f}, at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}: "
            "other work shares it, so wall times are noisy; CPU s is the command's process tree's own, "
            "sampled every 50 ms, the stub excluded). Whole processes, start-up included; peak memory = "
            "peak summed RSS of the command's process tree (Spark's JVM included).",
            "",
            "Prometheus side: a **stub** (not a real Prometheus) serving synthetic, Flink-shaped series: "
            "Flink 1.20 PrometheusReporter names and labels as recorded from a real Prometheus in "
            f"tests/data/prometheus, 4 vertices x {a.parallelism} subtasks, "
            f"{len(meta['metrics'])} metrics used "
            "(+ the deprecated `buffers_*` copies in `/api/v1/series`), "
            f"{a.hours:g} h at a {a.scrape_s:g} s scrape interval = {points} samples per series, a slow sink "
            f"built in. The stub used {stub_cpu:.1f} s of CPU producing the answers (JSON text) on the same "
            "cores, so the collect time includes serving time a real Prometheus would spend too.",
            "",
            *table,
            "",
            "Collect parses and writes one answer at a time (one metric x one chunk: here "
            f"{4 * a.parallelism} series x {points} points); no answer is kept once its parquet part is "
            "written, and the parts are merged at the end a few at a time.",
            "",
        ]
    )
    Path(a.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
