"""Cold ``flinktune lint`` against ``yamllint`` (the named baseline), whole processes side by side.

Each measurement starts a fresh process, as CI and pre-commit do, so interpreter start-up and
imports count. Two workloads: one typical file, and every file of the config corpus
(../shared/corpus/flink-configs). The two tools alternate within each repetition so that machine
noise hits both alike; the median of the repetitions is reported. The aim (issue 2): flinktune
no slower than yamllint.

Run:  .venv/bin/python benchmarks/bench_lint.py [--repeat 9] [--corpus DIR]
Writes benchmarks/results/lint.md and benchmarks/results/lint.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
ONE_FILE = "003__segeljakt__icde-experiments__flink-conf.yaml"   # a typical ~70-key flink-conf.yaml


def _default_corpus() -> Path:
    candidates = (ROOT.parent / "shared" / "corpus" / "flink-configs",
                  Path("/work/shared/corpus/flink-configs"))
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise SystemExit("config corpus not found; pass --corpus DIR")


def _tool(name: str) -> str:
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if not found:
        raise SystemExit(f"{name} is not installed (pip install -e '.[bench]')")
    return found


def _time_once(command: list[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the child (user + system), exit code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if b"Traceback" in done.stderr:
        raise SystemExit(f"{command[0]} crashed:\n{done.stderr.decode(errors='replace')}")
    return elapsed, cpu, done.returncode


def _version(command: list[str]) -> str:
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr) else "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--corpus", type=Path, default=None)
    args = parser.parse_args()
    corpus = args.corpus or _default_corpus()
    files = sorted(str(p) for p in corpus.iterdir() if p.suffix in (".yaml", ".yml"))
    one = str(corpus / ONE_FILE)
    flinktune, yamllint = _tool("flinktune"), _tool("yamllint")
    workloads = {
        "one file": [one],
        f"whole corpus ({len(files)} files)": files,
    }
    tools = {
        "flinktune lint": [flinktune, "lint", "--format", "text", "--no-color"],
        "yamllint": [yamllint, "--format", "parsable"],
    }
    rows = []
    for workload, paths in workloads.items():
        samples: dict[str, list[float]] = {name: [] for name in tools}
        cpu: dict[str, list[float]] = {name: [] for name in tools}
        codes: dict[str, int] = {}
        for base in tools.values():            # warm the OS file cache once, not measured
            _time_once([*base, *paths])
        for _ in range(args.repeat):
            for name, base in tools.items():
                elapsed, used, code = _time_once([*base, *paths])
                samples[name].append(elapsed)
                cpu[name].append(used)
                codes[name] = code
        for name in tools:
            rows.append({
                "workload": workload, "tool": name, "files": len(paths),
                "median_s": statistics.median(samples[name]), "min_s": min(samples[name]),
                "max_s": max(samples[name]), "median_cpu_s": statistics.median(cpu[name]),
                "repeat": args.repeat, "exit_code": codes[name],
            })
    meta = {
        "date_utc": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "flinktune": _version([flinktune, "--version"]),
        "yamllint": _version([yamllint, "--version"]),
        "corpus": str(corpus),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    report = json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n"
    (RESULTS / "lint.json").write_text(report, encoding="utf-8")
    lines = [
        "# Cold `flinktune lint` vs `yamllint`",
        "",
        "Written by `benchmarks/bench_lint.py`. Each run is a fresh process (start-up and imports",
        "included), the two tools alternating; median of the repetitions. yamllint runs its default",
        "rule set; flinktune runs every bundled rule (catalog lookups, memory derivation, network",
        "buffer formula).",
        "",
        *(f"- {k}: {v}" for k, v in meta.items()),
        "",
        "| workload | tool | median wall (s) | min wall (s) | max wall (s) | median CPU (s) | runs "
        "| exit code |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(f"| {row['workload']} | {row['tool']} | {row['median_s']:.3f} | {row['min_s']:.3f} | "
                     f"{row['max_s']:.3f} | {row['median_cpu_s']:.3f} | {row['repeat']} "
                     f"| {row['exit_code']} |")
    lines.append("")
    for workload in workloads:
        ft = next(r for r in rows if r["workload"] == workload and r["tool"] == "flinktune lint")
        yl = next(r for r in rows if r["workload"] == workload and r["tool"] == "yamllint")
        ratio = ft["median_s"] / yl["median_s"]
        cpu_ratio = ft["median_cpu_s"] / yl["median_cpu_s"]
        verdict = "faster than" if ratio < 0.97 else ("slower than" if ratio > 1.03 else "on par with")
        lines.append(f"- {workload}: flinktune {ft['median_s']:.3f} s vs yamllint {yl['median_s']:.3f} s "
                     f"wall (ratio {ratio:.2f}: flinktune is {verdict} yamllint); CPU ratio {cpu_ratio:.2f}.")
    load = os.getloadavg()[0]
    busy = " (a busy machine: wall times are inflated, compare the CPU column)" if load > 1.5 else ""
    lines.append(f"- 1-minute load average at the end: {load:.1f} on {os.cpu_count()} CPUs{busy}.")
    (RESULTS / "lint.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
