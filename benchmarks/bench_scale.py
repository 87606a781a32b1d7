"""`lint`, `recommend` and `model` at the seeds' scale: parallelism 100 to 100,000 (issue 26).

FLIP-148's batch jobs run at parallelism in the thousands to ten thousand; this measures every command
on such configs as whole processes (start-up and imports included, as a user or CI runs them):

- ``batch``: the shipped ``sample_configs/large-batch.flink-conf.yaml`` with only
  ``parallelism.default`` changed;
- ``streaming``: the shipped ``sample_configs/flinkdeployment.yaml`` (a FlinkDeployment) with only
  ``spec.job.parallelism`` changed;
- each with and without a plan (``--plan``): for batch, the plan Flink 1.20 reports for
  ``tests/e2e_flink/jobs/BatchJob.java`` (Source: Gen -> Parse -HASH, blocking-> Reduce -REBALANCE,
  blocking-> Sink, as quoted in tests/advise/test_batch.py); for streaming, the real Flink 1.20 plan
  of ``sample_data/healthy/plan.json``; every vertex's parallelism set to the measured one.
  ``model`` takes no plan: it runs with ``--config`` only.

Time is the median wall time of ``--repeat`` runs, and their median CPU time (user + system); a case
whose first run takes longer than ``--slow`` seconds runs once, one that passes ``--timeout`` is
recorded as "> timeout". Peak memory is the child's maximum resident set (``os.wait4``'s
ru_maxrss). ``--tree DIR`` runs the package from another source tree (``PYTHONPATH``), e.g.
``git archive <fork point> | tar -x -C DIR`` for the baseline; ``--label`` names the run in
benchmarks/results/scale.json, and scale.md shows every label's curve side by side (the first label
is the baseline). ``--merge`` keeps the cases of an earlier run of the same label that this run
does not measure (e.g. a baseline's slow parallelism-100,000 cases, measured once).

Run:  .venv/bin/python benchmarks/bench_scale.py --label after [--tree DIR] [--repeat 5]
      [--parallelism 100,1000,10000,100000] [--timeout 600] [--slow 20]
Writes benchmarks/results/scale.json and benchmarks/results/scale.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
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
BATCH_CONFIG = ROOT / "sample_configs" / "large-batch.flink-conf.yaml"
STREAMING_CONFIG = ROOT / "sample_configs" / "flinkdeployment.yaml"
STREAMING_PLAN = ROOT / "sample_data" / "healthy" / "plan.json"
# BatchJob.java's plan as Flink 1.20 reports it (/jobs/:id/plan; tests/advise/test_batch.py).
BATCH_PLAN: dict[str, Any] = {"plan": {"jid": "bench", "name": "flinktune-batch", "type": "BATCH", "nodes": [
    {"id": "sink", "parallelism": 1, "description": "Sink: Writer", "inputs": [
        {"num": 0, "id": "reduce", "ship_strategy": "REBALANCE", "exchange": "blocking"}]},
    {"id": "reduce", "parallelism": 1, "description": "Reduce", "inputs": [
        {"num": 0, "id": "src", "ship_strategy": "HASH", "exchange": "blocking"}]},
    {"id": "src", "parallelism": 1, "description": "Source: Gen<br/>+- Parse<br/>"}]}}
PARALLELISMS = (100, 1_000, 10_000, 100_000)
COMMANDS = ("lint", "recommend", "model")


def _scaled_plan(plan: dict[str, Any], parallelism: int) -> dict[str, Any]:
    inner = plan.get("plan", plan)
    nodes = [{**node, "parallelism": parallelism} for node in inner["nodes"]]
    return {"plan": {**inner, "nodes": nodes}}


def _inputs(scratch: Path, parallelism: int) -> dict[str, tuple[Path, Path]]:
    """shape -> (config file, plan file) at ``parallelism``."""
    batch = re.sub(r"(?m)^parallelism\.default: \d+$", f"parallelism.default: {parallelism}",
                   BATCH_CONFIG.read_text(encoding="utf-8"))
    streaming = re.sub(r"(?m)^(    parallelism: )\d+$", rf"\g<1>{parallelism}",
                       STREAMING_CONFIG.read_text(encoding="utf-8"))
    assert f"parallelism.default: {parallelism}" in batch and f"parallelism: {parallelism}" in streaming
    out = {}
    streaming_plan = json.loads(STREAMING_PLAN.read_text(encoding="utf-8"))
    for shape, text, plan in (("batch", batch, BATCH_PLAN), ("streaming", streaming, streaming_plan)):
        folder = scratch / f"{shape}-{parallelism}"
        folder.mkdir()
        name = "flink-conf.yaml" if shape == "batch" else "flinkdeployment.yaml"
        (folder / name).write_text(text, encoding="utf-8")
        (folder / "plan.json").write_text(json.dumps(_scaled_plan(plan, parallelism)), encoding="utf-8")
        out[shape] = (folder / name, folder / "plan.json")
    return out


def _command(command: str, config: Path, plan: Path | None) -> list[str]:
    base = [sys.executable, "-m", "flinktune"]
    if command == "lint":
        args = ["lint", "--format", "text", "--no-color", str(config)]
    elif command == "recommend":
        args = ["recommend", str(config), "--format", "text"]
    else:
        args = ["model", "--config", str(config)]
    if plan is not None:
        args += ["--plan", str(plan)]
    return [*base, *args]


def _run_once(command: list[str], env: dict[str, str], cwd: Path, timeout: float) -> dict[str, Any]:
    """Wall s, peak RSS MiB and exit code of one fresh process; wall None when it passed ``timeout``
    (then it is killed). ``os.wait4`` gives this child's own rusage."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=cwd)
        timer = threading.Timer(timeout, child.kill)
        timer.start()
        try:
            _pid, status, usage = os.wait4(child.pid, 0)
        finally:
            timer.cancel()
        elapsed = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read()
    if child.returncode < 0:
        return {"wall_s": None, "cpu_s": None, "rss_mib": None, "exit": None}
    if b"Traceback" in text:
        raise SystemExit(f"{' '.join(command)} crashed:\n{text.decode(errors='replace')[-3000:]}")
    return {"wall_s": elapsed, "cpu_s": usage.ru_utime + usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024,
            "exit": child.returncode}


def measure(tree: Path | None, parallelisms: list[int], repeat: int, timeout: float, slow: float
            ) -> list[dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "GITHUB_ACTIONS")}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as scratch_name:
        scratch = Path(scratch_name)
        env["FLINKTUNE_CACHE_DIR"] = str(scratch / "flinktune-cache")   # not shared with other installs
        cwd = scratch / "cwd"     # no project config here nor above
        cwd.mkdir()
        subprocess.run(_command("lint", BATCH_CONFIG, None), env=env, cwd=cwd, capture_output=True,
                       check=False)   # bytecode and rule caches written once, not measured
        for p in parallelisms:
            for shape, (config, plan_file) in _inputs(scratch, p).items():
                for command in COMMANDS:
                    for with_plan in ((False,) if command == "model" else (False, True)):
                        argv = _command(command, config, plan_file if with_plan else None)
                        runs = []
                        for n in range(repeat):
                            run = _run_once(argv, env, cwd, timeout)
                            runs.append(run)
                            if run["wall_s"] is None or (n == 0 and run["wall_s"] > slow):
                                break
                        walls = [r["wall_s"] for r in runs if r["wall_s"] is not None]
                        cpus = [r["cpu_s"] for r in runs if r["cpu_s"] is not None]
                        row = {
                            "parallelism": p, "shape": shape, "command": command, "plan": with_plan,
                            "runs": len(walls), "median_s": statistics.median(walls) if walls else None,
                            "median_cpu_s": statistics.median(cpus) if cpus else None,
                            "min_s": min(walls) if walls else None, "max_s": max(walls) if walls else None,
                            "timeout_s": None if walls else timeout,
                            "peak_rss_mib": max((r["rss_mib"] for r in runs if r["rss_mib"]), default=None),
                            "exit": runs[-1]["exit"],
                        }
                        rows.append(row)
                        print(json.dumps(row), flush=True)
    return rows


def _cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return "-"
    if row["median_s"] is None:
        return f"> {row['timeout_s']:.0f} s"
    runs = "" if row["runs"] > 1 else " (1 run)"
    cpu = f" (CPU {row['median_cpu_s']:.2f})" if row.get("median_cpu_s") is not None else ""
    return f"{row['median_s']:.2f} s{cpu} / {row['peak_rss_mib']:.0f} MiB{runs}"


def render(data: dict[str, Any]) -> str:
    labels = list(data["runs"])
    lines = [
        "# `lint`, `recommend`, `model` from parallelism 100 to 100,000 (issue 26)",
        "",
        "Written by `benchmarks/bench_scale.py` (its docstring has the inputs). Each cell: median wall",
        "time of whole processes (start-up included), with their median CPU time (user + system) where",
        "recorded, / peak RSS of the process; \"1 run\" where the first run was slow and not repeated,",
        "\"> N s\" where it was stopped. Exit 1 from lint is its verdict (a finding), not a failure. Other",
        "developers share the machine's 2 cores: the load is noted per run, and the CPU time is the",
        "figure that load changes least.",
        "",
    ]
    for label in labels:
        meta = data["runs"][label]["meta"]
        lines.append(f"- `{label}`: " + ", ".join(f"{k} {v}" for k, v in meta.items()))
    lines.append("")
    keys = []
    for label in labels:
        for row in data["runs"][label]["rows"]:
            key = (row["shape"], row["command"], row["plan"])
            if key not in keys:
                keys.append(key)
    parallelisms = sorted({row["parallelism"] for label in labels for row in data["runs"][label]["rows"]})
    lines += ["| shape | command | plan | run | " + " | ".join(f"p = {p:,}" for p in parallelisms) + " |",
              "|---|---|---|---|" + "---:|" * len(parallelisms)]
    for shape, command, plan in keys:
        for label in labels:
            found = {row["parallelism"]: row for row in data["runs"][label]["rows"]
                     if (row["shape"], row["command"], row["plan"]) == (shape, command, plan)}
            cells = " | ".join(_cell(found.get(p)) for p in parallelisms)
            lines.append(f"| {shape} | {command} | {'yes' if plan else 'no'} | {label} | {cells} |")
    lines.append("")
    lines += data.get("notes", [])
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="name of this run in scale.json (e.g. before, after)")
    parser.add_argument("--tree", type=Path, default=None, help="source tree to run (PYTHONPATH)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--parallelism", default=",".join(str(p) for p in PARALLELISMS))
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--merge", action="store_true",
                        help="keep the cases of an earlier run of this label that this run does not measure")
    parser.add_argument("--slow", type=float, default=20.0,
                        help="a first run slower than this is not repeated")
    args = parser.parse_args()
    parallelisms = [int(p) for p in args.parallelism.split(",")]
    load_before = os.getloadavg()[0]
    rows = measure(args.tree, parallelisms, args.repeat, args.timeout, args.slow)
    meta = {
        "date_utc": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "tree": "this checkout" if args.tree is None else str(args.tree),
        "python": platform.python_version(), "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "load (1-min average) before/after": f"{load_before:.1f}/{os.getloadavg()[0]:.1f}",
    }
    path = RESULTS / "scale.json"
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"runs": {}}
    if args.merge and args.label in data["runs"]:
        done = {(r["parallelism"], r["shape"], r["command"], r["plan"]) for r in rows}
        kept = [r for r in data["runs"][args.label]["rows"]
                if (r["parallelism"], r["shape"], r["command"], r["plan"]) not in done]
        rows = sorted(kept + rows, key=lambda r: r["parallelism"])
        meta["merged"] = f"cases not measured here kept from {data['runs'][args.label]['meta']['date_utc']}"
    data["runs"][args.label] = {"meta": meta, "rows": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    (RESULTS / "scale.md").write_text(render(data), encoding="utf-8")
    print(render(data))


if __name__ == "__main__":
    main()
