"""Cold ``flinktune lint`` against ``yamllint`` (the named baseline), whole processes side by side.

Each measurement starts a fresh process, as CI and pre-commit do, so interpreter start-up and
imports count. Three workloads: one typical file, every file of the config corpus
(../shared/corpus/flink-configs) named on the command line, and the corpus folder itself (each tool
finds the files). The tools alternate within each repetition so that machine noise hits them alike;
the median of the repetitions is reported. The aims (issues 2, 26): one file at or below yamllint's
time, the corpus at or below 1.2x.

``--baseline REV`` also runs flinktune as it was at git revision REV (e.g. the fork point of a
branch), side by side in the same repetitions: from an archive of REV on ``PYTHONPATH`` for the
editable install, from a wheel of REV in a venv of its own for the wheel install.

Two installs are measured, each tool from the same environment:
- ``editable``: the development venv this script runs in (``pip install -e .``);
- ``wheel``: a wheel built from the working tree and installed with yamllint into a fresh
  temporary venv, as users of ``pip install flinktune`` get it (needs the package index or pip's
  cache for the dependencies; ``--installs editable`` skips it).

Both tools run as users run them: bytecode caches are written (the child environment drops
PYTHONDONTWRITEBYTECODE, and one unmeasured warm-up run per tool writes them, as does pip for a
wheel), and flinktune's caches (validated rules, a parsed project config) are warm after that run;
they live in a folder of this run (FLINKTUNE_CACHE_DIR), which other installs do not share.

Run:  .venv/bin/python benchmarks/bench_lint.py [--repeat 9] [--corpus DIR] [--installs editable,wheel]
      [--baseline REV]
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
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
ONE_FILE = "003__segeljakt__icde-experiments__flink-conf.yaml"   # a typical ~70-key flink-conf.yaml
# What users have: bytecode caches are written on first import (pip writes them for a wheel).
CHILD_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "GITHUB_ACTIONS")}


def _default_corpus() -> Path:
    sys.path.insert(0, str(ROOT / "tests"))
    from testkit import shared_dir  # ../shared beside the checkout (or the main one of a worktree)

    candidate = shared_dir() / "corpus" / "flink-configs"
    if candidate.is_dir():
        return candidate
    raise SystemExit("config corpus not found; pass --corpus DIR")


def _tool(bin_dir: Path, name: str) -> str:
    beside = bin_dir / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if not found:
        raise SystemExit(f"{name} is not installed (pip install -e '.[bench]')")
    return found


def _time_once(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
               ) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the child (user + system), exit code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False,
                          env=env or CHILD_ENV, cwd=cwd)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if b"Traceback" in done.stderr:
        raise SystemExit(f"{command[0]} crashed:\n{done.stderr.decode(errors='replace')}")
    return elapsed, cpu, done.returncode


def _version(command: list[str]) -> str:
    out = subprocess.run(command, capture_output=True, text=True, check=False, env=CHILD_ENV)
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr) else "?"


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{what} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")


def _source_tree(work: Path, revision: str | None) -> Path:
    """The working tree's tracked and new files (``revision`` None), else an archive of ``revision``."""
    tree = work / ("tree" if revision is None else f"tree-{revision}")
    if tree.is_dir():
        return tree               # both installs of one run use the same tree
    if revision is not None:
        tree.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", revision], cwd=ROOT, capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        return tree
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            target = tree / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return tree


def _wheel_venv(work: Path, revision: str | None = None) -> Path:
    """A fresh venv with a wheel of the working tree (or of ``revision``) and yamllint installed;
    its bin folder."""
    name = "current" if revision is None else revision
    tree = _source_tree(work, revision)
    wheels = work / f"wheels-{name}"
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
          "--wheel-dir", str(wheels), str(tree)], "building the flinktune wheel")
    venv = work / f"venv-{name}"
    _run([sys.executable, "-m", "venv", str(venv)], "creating the venv")
    wheel = next(wheels.glob("flinktune-*.whl"))
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel), "yamllint"],
         "installing the wheel and yamllint")
    return venv / "bin"


Row = dict[str, object]


# Project configs of the same weight for both tools (issue 15: a .flinktune.yaml must not slow
# flinktune down): a few selections and a severity override; yamllint's own project file.
FLINKTUNE_PROJECT = "select: [FTC]\nignore: [FTC024]\nseverity:\n  FTC006: warning\nfail-on: error\n"
YAMLLINT_PROJECT = "extends: default\nrules:\n  line-length: {max: 120}\n  document-start: disable\n"


def _project_folders(scratch: Path) -> dict[str, Path]:
    """Working folders: one with no project config (nor any above it), one with both tools' own."""
    plain = scratch / "no-project-config"
    plain.mkdir()
    configured = scratch / "project-config"
    configured.mkdir()
    (configured / ".flinktune.yaml").write_text(FLINKTUNE_PROJECT, encoding="utf-8")
    (configured / ".yamllint").write_text(YAMLLINT_PROJECT, encoding="utf-8")
    return {"no project config": plain, "project config": configured}


class Tool(NamedTuple):
    command: list[str]
    env: dict[str, str] | None = None    # None: CHILD_ENV


def _tools(bin_dir: Path, baseline: Tool | None) -> dict[str, Tool]:
    tools = {"flinktune lint": Tool([_tool(bin_dir, "flinktune"), "lint", "--format", "text", "--no-color"])}
    if baseline is not None:
        tools["flinktune lint (baseline)"] = baseline
    tools["yamllint"] = Tool([_tool(bin_dir, "yamllint"), "--format", "parsable"])
    return tools


def _measure(install: str, tools: dict[str, Tool], workloads: dict[str, list[str]], repeat: int,
             folders: dict[str, Path]) -> list[Row]:
    rows: list[Row] = []
    for setup, folder in folders.items():
        for row in _measure_in(install, tools, workloads, repeat, folder):
            row["workload"] = f"{row['workload']}, {setup}"
            rows.append(row)
    return rows


def _measure_in(install: str, tools: dict[str, Tool], workloads: dict[str, list[str]], repeat: int,
                cwd: Path) -> list[Row]:
    rows: list[Row] = []
    for workload, paths in workloads.items():
        samples: dict[str, list[float]] = {name: [] for name in tools}
        cpu: dict[str, list[float]] = {name: [] for name in tools}
        codes: dict[str, int] = {}
        for tool in tools.values():             # warm the OS file and bytecode caches once, not measured
            _time_once([*tool.command, *paths], cwd, tool.env)
        for _ in range(repeat):
            for name, tool in tools.items():
                elapsed, used, code = _time_once([*tool.command, *paths], cwd, tool.env)
                samples[name].append(elapsed)
                cpu[name].append(used)
                codes[name] = code
        for name, tool in tools.items():
            rows.append({
                "install": install, "workload": workload, "tool": name, "files": len(paths),
                "median_s": statistics.median(samples[name]), "min_s": min(samples[name]),
                "max_s": max(samples[name]), "median_cpu_s": statistics.median(cpu[name]),
                "min_cpu_s": min(cpu[name]), "repeat": repeat, "exit_code": codes[name],
                "version": _version([tool.command[0], "--version"]),
            })
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--installs", default="editable,wheel",
                        help="comma-separated: editable (this venv), wheel (a fresh venv with a built wheel)")
    parser.add_argument("--baseline", default=None, metavar="REV",
                        help="also run flinktune as of this git revision, side by side")
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    installs = [i.strip() for i in args.installs.split(",") if i.strip()]
    corpus = args.corpus or _default_corpus()
    files = sorted(str(p) for p in corpus.iterdir() if p.suffix in (".yaml", ".yml"))
    workloads = {
        "one file": [str(corpus / ONE_FILE)],
        f"whole corpus ({len(files)} files)": files,
        f"corpus folder ({len(files)} files)": [str(corpus)],
    }
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="bench-lint-") as scratch:
        work = Path(scratch)
        # flinktune's caches of this run only: other installs on the machine (other checkouts, other
        # versions) write their own entries to the shared cache and could evict these.
        CHILD_ENV["FLINKTUNE_CACHE_DIR"] = str(work / "flinktune-cache")
        folders = _project_folders(work)
        for install in installs:
            baseline = None
            if install == "editable":
                bin_dir = Path(sys.executable).parent
                if args.baseline:
                    tree = _source_tree(work, args.baseline)
                    baseline = Tool([_tool(bin_dir, "flinktune"), "lint", "--format", "text", "--no-color"],
                                    {**CHILD_ENV, "PYTHONPATH": str(tree)})
            elif install == "wheel":
                bin_dir = _wheel_venv(work)
                if args.baseline:
                    old_bin = _wheel_venv(work, args.baseline)
                    baseline = Tool([_tool(old_bin, "flinktune"), "lint", "--format", "text", "--no-color"])
            else:
                raise SystemExit(f"unknown install '{install}' (editable or wheel)")
            rows.extend(_measure(install, _tools(bin_dir, baseline), workloads, args.repeat, folders))
    meta = {
        "date_utc": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "flinktune": str(rows[0]["version"]),
        "yamllint": str(next(r["version"] for r in rows if r["tool"] == "yamllint")),
        "corpus": str(corpus),
        "installs": ", ".join(installs),
        "baseline": f"flinktune at {args.baseline}" if args.baseline else "none",
        "1-minute load average at the start": f"{load_start:.1f}",
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    report = json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n"
    (RESULTS / "lint.json").write_text(report, encoding="utf-8")
    lines = [
        "# Cold `flinktune lint` vs `yamllint`",
        "",
        "Written by `benchmarks/bench_lint.py`. Each run is a fresh process (start-up and imports",
        "included), the tools alternating; median of the repetitions. yamllint runs its default",
        "rule set; flinktune runs every bundled rule (catalog lookups, memory derivation, network",
        "buffer formula). `editable`: the development venv; `wheel`: a fresh venv with a wheel of the",
        "working tree, as `pip install flinktune` gives it. Bytecode caches are written as in normal",
        "use (one unmeasured warm-up run per tool). Each workload runs twice: in a folder with no",
        "project config, and in one holding both tools' own (`.flinktune.yaml`, `.yamllint`).",
        "`flinktune lint (baseline)`: flinktune at the baseline revision, in the same repetitions.",
        "From 16 files on, on a machine with several CPUs, flinktune lints in forked worker processes",
        "(`--jobs`, one per CPU): its CPU time (every process, the workers included) is then above its",
        "wall time, and above the baseline's.",
        "",
        *(f"- {k}: {v}" for k, v in meta.items()),
        "",
        "| install | workload | tool | median wall (s) | min wall (s) | max wall (s) | median CPU (s) "
        "| min CPU (s) | runs | exit code |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(f"| {row['install']} | {row['workload']} | {row['tool']} | {row['median_s']:.3f} | "
                     f"{row['min_s']:.3f} | {row['max_s']:.3f} | {row['median_cpu_s']:.3f} | "
                     f"{row['min_cpu_s']:.3f} | {row['repeat']} | {row['exit_code']} |")
    lines.append("")
    for install in installs:
        for workload in dict.fromkeys(str(r["workload"]) for r in rows):
            mine = [r for r in rows if (r["install"], r["workload"]) == (install, workload)]
            yl = next(r for r in mine if r["tool"] == "yamllint")
            for ft in (r for r in mine if r["tool"] != "yamllint"):
                ratio = float(ft["median_s"]) / float(yl["median_s"])  # type: ignore[arg-type]
                cpu_ratio = float(ft["median_cpu_s"]) / float(yl["median_cpu_s"])  # type: ignore[arg-type]
                verdict = ("faster than" if ratio < 0.97 else
                           "slower than" if ratio > 1.03 else "on par with")
                lines.append(f"- {install}, {workload}: {ft['tool']} {ft['median_s']:.3f} s vs yamllint "
                             f"{yl['median_s']:.3f} s wall (ratio {ratio:.2f}: {verdict} yamllint); "
                             f"CPU {ft['median_cpu_s']:.3f} s vs {yl['median_cpu_s']:.3f} s "
                             f"(ratio {cpu_ratio:.2f}).")
    load = os.getloadavg()[0]
    busy = " (a busy machine: wall times are inflated, compare the CPU columns)" if load > 1.5 else ""
    lines.append(f"- 1-minute load average at the end: {load:.1f} on {os.cpu_count()} CPUs{busy}.")
    (RESULTS / "lint.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
