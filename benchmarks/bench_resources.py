"""Peak memory of ``flinktune lint`` on a 100 MB config and ``flinktune analyze`` on a 5e7-row dump.

Each command runs as a child process. Two measures:
- peak RSS of the process tree, sampled every 0.2 s from /proc (the sum over the command and all
  its descendants, so Spark's JVM counts for analyze);
- the child's peak RSS from GNU ``/usr/bin/time -f %M`` (wait4's ru_maxrss: the largest single
  process among the command and the descendants it reaped).

Named baselines, side by side: for lint, Python reading the same file whole and splitting it into
lines (what a naive linter does; PyYAML would need several times more); for analyze, the size of
the dump on disk and the JVM's configured heap (spark.driver.memory, 1g by default).

Workloads:
- ``lint-comments``: 100 MB flink-conf.yaml of comment lines and a few real keys: refused, since lint
  reads config files of at most 8 MiB (exit 2, one line), so memory stays that of start-up;
- ``lint-comments-under-cap``: the same at 7.9 MB, the biggest file lint reads;
- ``lint-keys``: a flink-conf.yaml of distinct keys, ~14,000 per MB (every key is an entry and
  every key rule runs on it, so time and memory grow with the number of keys; ``--keys-mb``, 7.9 MB
  by default, just under the 8 MiB cap);
- ``lint-yaml``: 100 MB config.yaml (refused above the 8 MiB YAML cap: exit 2, one line);
- ``lint-one-line``: 100 MB flink-conf.yaml on one line (refused: the 8 MiB file cap; lines over 1 MiB too);
- ``analyze``: 5e7 rows, one job, one vertex, one subtask, 5 metrics, 1e7 timestamps 100 ms apart.

Run:  .venv/bin/python benchmarks/bench_resources.py [--rows 50000000] [--mb 100] [--skip-analyze]
Writes benchmarks/results/resources.md and benchmarks/results/resources.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PY = sys.executable
PAGE = os.sysconf("SC_PAGE_SIZE")
# lint refuses config files over 8 MiB (flinktune/config/textio.py); the biggest it reads is just under.
UNDER_CAP_MB = 7.9


def _tree_rss_bytes(root: int) -> int:
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            with open(f"/proc/{entry}/statm", "rb") as fh:
                resident = int(fh.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        parents[int(entry)] = int(fields[1])
        rss[int(entry)] = resident * PAGE
    total = 0
    for pid, size in rss.items():
        p = pid
        while p in parents and p != root and p > 1:
            p = parents[p]
        if p == root:
            total += size
    return total


def measure(cmd: list[str], env: dict[str, str] | None = None, timeout_s: float = 3600) -> dict[str, Any]:
    # GNU time reports the child's peak RSS (wait4's ru_maxrss: the largest single process among the
    # command and the descendants it reaped); the /proc sampler adds up the whole tree.
    timer = ["/usr/bin/time", "-f", "MAXRSS_KB=%M"] if Path("/usr/bin/time").exists() else []
    started = time.perf_counter()
    proc = subprocess.Popen([*timer, *cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss_bytes(proc.pid))
            done.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        out, err = proc.communicate(timeout=timeout_s)
    finally:
        done.set()
        sampler.join()
    elapsed = time.perf_counter() - started
    text = err.decode("utf-8", "replace").strip()
    maxrss_kb = None
    if timer and "MAXRSS_KB=" in text:
        text, _, tail = text.rpartition("MAXRSS_KB=")
        maxrss_kb = int(tail.split()[0])
        text = text.strip()
    text = " / ".join(line for line in text.splitlines() if not line.startswith("Command exited with"))
    return {
        "cmd": " ".join(cmd[:2] + [Path(c).name if "/" in c else c for c in cmd[2:]]),
        "exit": proc.returncode,
        "seconds": round(elapsed, 1),
        "peak_tree_rss_mb": round(peak[0] / 2**20, 1),
        "ru_maxrss_mb": round(maxrss_kb / 1024, 1) if maxrss_kb is not None else None,
        "stdout_lines": out.count(b"\n"),
        "stderr_tail": text[-300:],
    }


def make_configs(folder: Path, mb: int, keys_mb: float) -> dict[str, Path]:
    target = mb * 1024 * 1024
    real = (
        "jobmanager.rpc.address: localhost\ntaskmanager.numberOfTaskSlots: 4\n"
        "taskmanager.memory.process.size: 4g\nparallelism.default: 8\nstate.backend: rocksdb\n"
        "taskmanager.network.memory.buffers-per-channel: 2\n"
    )
    comments = folder / "comments" / "flink-conf.yaml"
    comments.parent.mkdir()
    with open(comments, "w", encoding="utf-8") as fh:
        fh.write(real)
        line = "# " + "padding text a human would never write but a generator might " * 2 + "\n"
        fh.write(line * (target // len(line)))
        fh.write(real)
    keys = folder / "keys" / "flink-conf.yaml"
    keys.parent.mkdir()
    with open(keys, "w", encoding="utf-8") as fh:
        fh.write(real)
        written = 0
        i = 0
        while written < keys_mb * 1024 * 1024 - 700_000:
            chunk = "".join(
                f"env.java.opts.generated.key{i + j}: -Dsome.property={i + j}  # note\n"
                for j in range(10_000)
            )
            fh.write(chunk)
            written += len(chunk)
            i += 10_000
    yaml_file = folder / "yaml" / "config.yaml"
    yaml_file.parent.mkdir()
    with open(yaml_file, "w", encoding="utf-8") as fh:
        fh.write("taskmanager:\n  numberOfTaskSlots: 4\n")
        line = "# padding padding padding padding padding padding padding padding\n"
        fh.write(line * (target // len(line)))
    one_line = folder / "one-line" / "flink-conf.yaml"
    one_line.parent.mkdir()
    with open(one_line, "w", encoding="utf-8") as fh:
        fh.write("env.java.opts: " + "-Dx=y " * (target // 6))
    under = folder / "comments-under-cap" / "flink-conf.yaml"
    under.parent.mkdir()
    with open(under, "w", encoding="utf-8") as fh:
        fh.write(real)
        line = "# " + "padding text a human would never write but a generator might " * 2 + "\n"
        fh.write(line * (int(UNDER_CAP_MB * 1024 * 1024) // len(line)))
        fh.write(real)
    return {"lint-comments": comments, "lint-comments-under-cap": under, "lint-keys": keys,
            "lint-yaml": yaml_file, "lint-one-line": one_line}


def make_dump(path: Path, rows: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    metrics = [
        "busyTimeMsPerSecond",
        "backPressuredTimeMsPerSecond",
        "idleTimeMsPerSecond",
        "outPoolUsage",
        "numRecordsIn",
    ]
    t0 = 1_767_225_600_000
    chunk = 5_000_000
    schema = pa.schema(
        [
            ("ts", pa.int64()),
            ("job_id", pa.string()),
            ("job_name", pa.string()),
            ("vertex_id", pa.string()),
            ("task_name", pa.string()),
            ("subtask_index", pa.int32()),
            ("tm_id", pa.string()),
            ("host", pa.string()),
            ("metric", pa.string()),
            ("value", pa.float64()),
        ]
    )
    rng = np.random.default_rng(1)
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, rows, chunk):
            n = min(chunk, rows - start)
            idx = np.arange(start, start + n)
            sample = idx // len(metrics)
            which = idx % len(metrics)
            value = rng.uniform(0, 1000, n)
            value[which == 3] /= 1000.0
            value[which == 4] = sample[which == 4] * 1000.0

            def const(text: str, n: int = n) -> pa.Array:
                return pa.DictionaryArray.from_arrays(
                    pa.array(np.zeros(n, dtype=np.int32)), pa.array([text])
                ).cast(pa.string())

            table = pa.table(
                {
                    "ts": pa.array(t0 + sample * 100, pa.int64()),
                    "job_id": const("j1"),
                    "job_name": const("big-job"),
                    "vertex_id": const("v1"),
                    "task_name": const("Window(Tumbling) -> Sink"),
                    "subtask_index": pa.array(np.zeros(n, dtype=np.int32)),
                    "tm_id": const("tm-1"),
                    "host": const("h1"),
                    "metric": pa.DictionaryArray.from_arrays(
                        pa.array(which.astype(np.int32)), pa.array(metrics)
                    ).cast(pa.string()),
                    "value": pa.array(value),
                },
                schema=schema,
            )
            writer.write_table(table, row_group_size=1_000_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument(
        "--keys-mb",
        type=float,
        default=UNDER_CAP_MB,
        help="size of the many-keys config (every key runs every key rule: ~1.6 ms per key here)",
    )
    parser.add_argument("--rows", type=int, default=50_000_000)
    parser.add_argument("--skip-analyze", action="store_true", help="keep the last analyze measurement")
    parser.add_argument("--skip-lint", action="store_true", help="keep the last lint measurements")
    parser.add_argument("--workdir", default=None, help="where to build the inputs (default: a temp folder)")
    parser.add_argument("--report-only", action="store_true",
                        help="re-render resources.md from resources.json")
    args = parser.parse_args()
    if args.report_only:
        write(json.loads((RESULTS / "resources.json").read_text(encoding="utf-8")))
        return
    results: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus, "
        f"{os.sysconf('SC_PHYS_PAGES') * PAGE // 2**30} GiB",
        "python": platform.python_version(),
        "runs": [],
    }
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        folder = Path(tmp)
        configs = {} if args.skip_lint else make_configs(folder, args.mb, args.keys_mb)
        for name, path in configs.items():
            size_mb = round(path.stat().st_size / 2**20, 1)
            print(f"{name}: {size_mb} MB", flush=True)
            run = measure(
                [PY, "-m", "flinktune", "lint", "--format", "json", "--fail-on", "error", str(path)]
            )
            base = measure(
                [
                    PY,
                    "-c",
                    "import sys; d = open(sys.argv[1], encoding='utf-8').read(); "
                    "lines = d.splitlines(); print(len(lines))",
                    str(path),
                ]
            )
            results["runs"].append(
                {
                    "workload": name,
                    "input_mb": size_mb,
                    "flinktune": run,
                    "baseline": {"name": "python: read whole file + splitlines", **base},
                }
            )
            print(
                f"  flinktune {run['peak_tree_rss_mb']} MB ({run['seconds']} s, exit {run['exit']}); "
                f"baseline {base['peak_tree_rss_mb']} MB",
                flush=True,
            )
        if not args.skip_analyze:
            dump = folder / "dump" / "metrics.parquet"
            dump.parent.mkdir()
            t = time.perf_counter()
            make_dump(dump, args.rows)
            size_mb = round(dump.stat().st_size / 2**20, 1)
            print(
                f"analyze: {args.rows:,} rows, {size_mb} MB parquet "
                f"(built in {time.perf_counter() - t:.0f} s)",
                flush=True,
            )
            local = folder / "spark-local"
            local.mkdir()
            run = measure(
                [
                    PY,
                    "-m",
                    "flinktune",
                    "analyze",
                    "--no-progress",
                    "--format",
                    "json",
                    "--conf",
                    f"spark.local.dir={local}",
                    str(dump),
                ]
            )
            leftover = sorted(str(p.relative_to(local)) for p in local.rglob("*"))
            results["runs"].append(
                {
                    "workload": "analyze",
                    "rows": args.rows,
                    "input_mb": size_mb,
                    "flinktune": run,
                    "baseline": {
                        "name": "dump size on disk / JVM heap (spark.driver.memory)",
                        "dump_mb": size_mb,
                        "driver_heap_mb": 1024,
                    },
                    "spark_local_dir_leftovers": leftover,
                }
            )
            print(
                f"  flinktune {run['peak_tree_rss_mb']} MB ({run['seconds']} s, exit {run['exit']}); "
                f"spark.local.dir left: {len(leftover)} entries",
                flush=True,
            )
    if args.skip_lint and (RESULTS / "resources.json").exists():
        old = json.loads((RESULTS / "resources.json").read_text(encoding="utf-8"))
        results["runs"] = [r for r in old.get("runs", []) if r["workload"] != "analyze"] + results["runs"]
    if args.skip_analyze and (RESULTS / "resources.json").exists():
        # Keep the last analyze measurement (it takes long; the lint runs are cheap to redo).
        old = json.loads((RESULTS / "resources.json").read_text(encoding="utf-8"))
        results["runs"] += [r for r in old.get("runs", []) if r["workload"].startswith("analyze")]
    write(results)


def write(results: dict[str, Any]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "resources.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    lines = [
        "# Peak memory on huge inputs (benchmarks/bench_resources.py)",
        "",
        f"Run {results['date']} on {results['machine']}, Python {results['python']}. Peak RSS of the whole "
        "process tree (command + descendants, sampled every 0.2 s from /proc); max RSS is GNU time's %M "
        "(the largest single process among the command and the descendants it reaped).",
        "",
        "| workload | input | flinktune peak tree RSS | max RSS (time %M) | time | exit | baseline "
        "| baseline peak RSS |",
        "|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in results["runs"]:
        f, b = r["flinktune"], r["baseline"]
        size = f"{r['input_mb']} MB" + (f", {r['rows']:,} rows" if "rows" in r else "")
        base_rss = (
            f"{b['peak_tree_rss_mb']} MB"
            if "peak_tree_rss_mb" in b
            else f"dump {b['dump_mb']} MB, heap {b['driver_heap_mb']} MB"
        )
        lines.append(
            f"| {r['workload']} | {size} | {f['peak_tree_rss_mb']} MB | {f['ru_maxrss_mb']} MB | "
            f"{f['seconds']} s | {f['exit']} | {b['name']} | {base_rss} |"
        )
    lines.append("")
    for r in results["runs"]:
        f = r["flinktune"]
        if f["stderr_tail"]:
            lines.append(f"- {r['workload']} stderr: `{f['stderr_tail'][-200:]}`")
        if r["workload"].startswith("analyze"):
            lines.append(f"- {r['workload']}: the JVM is not reaped by the flinktune process, so time's %M "
                         "shows the Python side only; the tree figure includes the JVM. Times are on a "
                         "shared, busy machine (load average ~14 on 2 cores), not a speed measurement.")
        if "spark_local_dir_leftovers" in r:
            lines.append(
                f"- {r['workload']}: entries left in spark.local.dir after exit: "
                f"{len(r['spark_local_dir_leftovers'])}"
            )
    (RESULTS / "resources.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
