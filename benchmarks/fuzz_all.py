"""The big hostile-input run (issue 8): at least 100,000 generated cases per parser.

Property, per case: a result or a ``FlinktuneError`` with a one-line message; never another
exception, never a hang. A case that raises anything else is a *crash*; one that runs past
``--deadline`` seconds (SIGALRM) is a *hang*. Crashes are grouped by exception type and the
frame that raised it, with the shortest input that produced each.

Generators (tests/hostile/hostile_inputs.py): a mutator over real inputs (the config corpus,
sample configs, bundled rules, sample scenarios, real job plans) that inserts syntax tokens,
deletes, duplicates, splices and re-indents, plus token soup and random code points. Input size
is bounded: at most 4,000 characters per case (10% of mutations may run past it, up to ~8,000);
the parsers' own size caps (8 MiB YAML, 4,000-char conditions, 256 KiB rule files) are tested by
the seeded tests with one big input each.

Coverage-guided fuzzing: with atheris installed, the string parsers also run under atheris
(libFuzzer) in a child process each (``--atheris-runs`` inputs, default 100,000), instrumenting
flinktune and PyYAML.

The metrics-dump normaliser only exists as Spark transforms (flinktune.analysis.load): it is
fuzzed with generated rows in a few Spark batches (``--dump-rows`` rows in all, default 100,000),
each batch written as parquet, CSV and JSON lines and read by the real loader and analysis.

Run:  .venv/bin/python benchmarks/fuzz_all.py [--cases 100000] [--only flat,yaml] [--workers 2]
Writes benchmarks/results/fuzz.md and benchmarks/results/fuzz.json.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT / "tests" / "hostile"))
sys.path.insert(0, str(ROOT / "tests"))        # testkit (hostile_inputs finds ../shared with it)

import hostile_inputs as H  # noqa: E402

# The parsers the issue names get the full --cases. The extra targets (whole pipelines, small
# side files) get fewer by default: the run shares a 2-core machine (--full gives them all --cases).
REDUCED = {
    "detect": 10_000,
    "values": 5_000,
    "template": 10_000,
    "plan": 10_000,
    "baseline": 5_000,
    "project_yaml": 5_000,
    "project_toml": 5_000,
    "suppress": 10_000,
    "lint": 3_000,
    "recommend": 5_000,
    "profile": 5_000,
}
ATHERIS_TARGETS = (
    "flat",
    "memory",
    "duration",
    "condition",
    "template",
    "yaml",
    "k8s",
    "rule_file",
    "scenario",
    "plan",
)
# Under atheris (instrumented, ~10x slower) the YAML-based parsers get fewer runs by default.
ATHERIS_SLOW = {"yaml": 5_000, "k8s": 5_000, "rule_file": 5_000, "scenario": 5_000, "plan": 5_000}


# What this fuzzing (and the hostile tests beside it) found while it was being built, and the fix
# in each case; the regression inputs are in tests/hostile/test_fuzz_parsers.py. Kept here so the
# report says what a run with 0 crashes is measured against.
FOUND_AND_FIXED = (
    ("rules/template.py format_value", "OverflowError/ValueError on inf/NaN with :int, :memory, :duration "
     "(a config value .inf reaches a message)", "non-finite floats print as inf/nan"),
    ("sim/scenario.py scenario_from_text", "ValueError/IndexError from PyYAML constructors (!!int x, bare "
     "!!int, !!timestamp 2020-99-99, 5000-digit ints); RecursionError on deep nesting",
     "caught: ScenarioError 'not valid YAML'"),
    ("sim/scenario.py models", "capacity: .inf passed validation, then the simulator died on int(inf)",
     "allow_inf_nan=False on every scenario model"),
    ("rules/loader.py _parse_yaml", "ValueError/IndexError from PyYAML constructors in a rule file",
     "caught: one 'invalid YAML' problem"),
    ("lint/project.py", "tool = 1 in pyproject.toml: AttributeError; bad YAML tags / deep nesting in "
     ".flinktune.yaml and deep TOML: ValueError/RecursionError", "ConfigError"),
    ("lint/baseline.py load_baseline", "ValueError (over-long int) and RecursionError from json.loads",
     "ConfigError"),
    ("analysis/plan.py load_plan/parse_plan", "ValueError/RecursionError from json.loads; OverflowError "
     "on parallelism Infinity/1e999", "MetricsError"),
    ("cli/recommend_cmd.py _load_plan", "ValueError from json.loads on --plan", "ConfigError"),
    ("situation/environment.py read_profile", "PyYAML constructor errors / deep nesting in --profile",
     "ConfigError"),
    ("rules/lang.py tokenize", "ValueError on '²' (str.isdigit accepts it, int() does not)",
     "ASCII digits only (fixed by the rules owner the same hour)"),
    ("analysis/load.py to_canonical", "NaN/inf/negative samples poisoned means (NaN/inf in the report, "
     "the origin lost); a garbage Prometheus file analysed as 'healthy' with 0 samples",
     "values outside [0, inf) dropped before aggregation"),
    ("analysis/load.py _read_csv", "CSV with a doubled quote inside a quoted task name: rows split "
     "wrongly, a whole vertex lost", "quote='\"', escape='\"' (RFC 4180)"),
    ("units.py parse_bandwidth_bytes_per_s", "5 s per call on a 4,000-digit bandwidth (quadratic regex "
     "backtracking; --bandwidth, profiles); .inf/1e999 accepted", "at most 64 characters; finite only"),
    ("units.py parse_float, situation/environment.py parse_parameter", "OverflowError: float() of a "
     "400-digit YAML integer in a profile", "ValueSyntaxError / UsageError"),
    ("analysis/load.py parquet_schema_ddl", "a list<int64> ts column was read as bigint (list types have "
     "a value_type too), then Spark failed with 'An error occurred while calling o750.collectToPython.'",
     "only dictionary types unwrap; py4j's causeless first line skipped in error messages"),
    ("lint/paths.py, analysis/load.py", "hang: --follow-symlinks folder walk and '**' globs over a folder "
     "with two symlinks to an ancestor (exponential walk)", "each real folder once; '**' over a loop "
     "refused in one line"),
)


class Hang(Exception):
    pass


def _alarm(_signum: int, _frame: object) -> None:
    raise Hang()


def _where(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return "?"
    last = frames[-1]
    return f"{Path(last.filename).name}:{last.lineno}"


def run_target(name: str, cases: int, seed: int, deadline_s: float, max_chars: int) -> dict[str, Any]:
    target = H.TARGETS[name]
    seeds = target.seeds()
    rng = random.Random(seed)
    signal.signal(signal.SIGALRM, _alarm)
    counts = {"ok": 0, "error": 0, "crash": 0, "hang": 0}
    crashes: dict[str, dict[str, Any]] = {}
    slowest = (0.0, "")
    started = time.perf_counter()
    for i in range(cases):
        data = seeds[i] if i < len(seeds) else H.generate(rng, seeds, max_chars)
        t0 = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, deadline_s)
        try:
            counts[H.call(target.run, data)] += 1
        except Hang:
            counts["hang"] += 1
            key = "Hang"
            entry = crashes.setdefault(key, {"count": 0, "example": data})
            entry["count"] += 1
        except Exception as error:  # anything but FlinktuneError is a finding
            counts["crash"] += 1
            key = f"{type(error).__name__} at {_where(error)}"
            entry = crashes.setdefault(key, {"count": 0, "example": data, "message": str(error)[:300]})
            entry["count"] += 1
            if len(data) < len(entry["example"]):
                entry["example"] = data
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        took = time.perf_counter() - t0
        if took > slowest[0]:
            slowest = (took, data[:200])
    elapsed = time.perf_counter() - started
    for entry in crashes.values():
        entry["example"] = entry["example"][:500]
    return {
        "target": name,
        "cases": cases,
        "counts": counts,
        "crashes": crashes,
        "seconds": round(elapsed, 1),
        "slowest_case_s": round(slowest[0], 3),
        "slowest_case": slowest[1],
    }


def _worker(job: tuple[str, int, int, float, int]) -> dict[str, Any]:
    name, cases, seed, deadline, max_chars = job
    result = run_target(name, cases, seed, deadline, max_chars)
    print(f"  {name}: {result['counts']} in {result['seconds']} s", flush=True)
    return result


# --- atheris -----------------------------------------------------------------------------------

ATHERIS_CHILD = r"""
import json, sys, atheris
sys.path.insert(0, sys.argv[1])
name, runs, out, corpus = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
with atheris.instrument_imports(include=["flinktune", "yaml"]):
    import hostile_inputs as H
    import flinktune.config.flat, flinktune.config.yaml_config, flinktune.config.k8s, flinktune.units
    import flinktune.rules.lang, flinktune.rules.loader, flinktune.rules.template, flinktune.sim.scenario
    import flinktune.analysis.plan
target = H.TARGETS[name].run
stats = {"ok": 0, "error": 0, "crash": 0, "crashes": {}}
def save():
    with open(out, "w") as fh:
        json.dump(stats, fh)
def one(data):
    fdp = atheris.FuzzedDataProvider(data)
    text = fdp.ConsumeUnicodeNoSurrogates(len(data))
    try:
        stats[H.call(target, text)] += 1
    except Exception as error:
        import traceback
        tb = traceback.extract_tb(error.__traceback__)[-1]
        key = f"{type(error).__name__} at {tb.filename.rsplit('/', 1)[-1]}:{tb.lineno}"
        stats["crash"] += 1
        entry = stats["crashes"].setdefault(
            key, {"count": 0, "example": text[:500], "message": str(error)[:300]})
        entry["count"] += 1
    done = stats["ok"] + stats["error"] + stats["crash"]
    if done % 1000 == 0 or done >= runs:   # libFuzzer ends with exit(): no atexit hooks run
        save()
# Seed inputs as the starting corpus (ConsumeUnicodeNoSurrogates reads a leading byte as the
# width: 0 = ASCII, so prefix seeds with it).
import os
for i, seed in enumerate(H.TARGETS[name].seeds()):
    with open(os.path.join(corpus, f"seed{i}"), "wb") as fh:
        fh.write(b"\x00" + seed.encode("ascii", "ignore"))
flags = [f"-runs={runs}", "-max_len=4096", "-timeout=10", "-rss_limit_mb=4096"]
atheris.Setup([sys.argv[0], *flags, corpus], one)
atheris.Fuzz()
"""


def run_atheris(name: str, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "stats.json"
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        started = time.perf_counter()
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                ATHERIS_CHILD,
                str(ROOT / "tests" / "hostile"),
                name,
                str(runs),
                str(out),
                str(corpus),
            ],
            capture_output=True,
            text=True,
            cwd=tmp,
        )
        elapsed = time.perf_counter() - started
        stats = json.loads(out.read_text()) if out.exists() else {}
    tail = [line.strip() for line in proc.stderr.splitlines() if "DONE" in line or line.startswith("==")][-2:]
    return {
        "target": name,
        "runs": runs,
        "returncode": proc.returncode,
        "seconds": round(elapsed, 1),
        "stats": stats,
        "libfuzzer": tail,
    }


# --- the metrics-dump normaliser (Spark) -------------------------------------------------------

_METRIC_FORMS = (
    "{m}",
    "Shuffle.Netty.Output.Buffers.{m}",
    "Shuffle.Netty.Input.Buffers.{m}",
    "buffers.{m}",
    "Shuffle.Netty.Input.{m}",
    "{op}.{m}",
    "{host}.taskmanager.{tm}.{job}.{task}.{sub}.Shuffle.Netty.Output.Buffers.{m}",
    "{host}.taskmanager.{tm}.{job}.{task}.{sub}.{m}",
    "flink_taskmanager_job_task_Shuffle_Netty_Output_Buffers_{m}",
    'flink_taskmanager_job_task_{m}{{task_name="{task}",subtask_index="{sub}",job_name="{job}"}}',
    "flink_taskmanager_job_task_operator_{m}",
    "bp.ratio",
)
_METRICS = (
    "outPoolUsage",
    "inPoolUsage",
    "busyTimeMsPerSecond",
    "backPressuredTimeMsPerSecond",
    "idleTimeMsPerSecond",
    "numRecordsIn",
    "numRecordsOut",
    "numBytesInRemote",
    "isBackPressured",
    "inputFloatingBuffersUsage",
    "numRecordsInPerSecond",
    "unknownMetric",
    "",
    "outpoolusage",
)


def _dump_rows(rng: random.Random, count: int) -> list[dict[str, Any]]:
    def clean(value: str) -> str:  # files hold UTF-8: lone surrogates cannot be written
        return value.encode("utf-8", "replace").decode("utf-8")

    def text() -> str:
        return clean(
            H.mutate(
                rng, rng.choice(("Source: Kafka", "Sink", "Map -> Filter", "KeyedAgg")), ["a.b", "{x}", "\n"]
            )[:300]
        )

    rows = []
    t0 = 1_767_225_600_000
    for i in range(count):
        form = rng.choice(_METRIC_FORMS)
        metric = form.format(
            m=rng.choice(_METRICS),
            op=text(),
            host=rng.choice(("h1", "10.0.0.1", "")),
            tm=rng.choice(("tm-1", "10.0.0.1:40143-b0f767", "x.y")),
            job=text(),
            task=text(),
            sub=rng.choice(("0", "1", "-1", "x", "99999999999")),
        )
        if rng.random() < 0.05:
            metric = clean(H.mutate(rng, metric, []))
        value = rng.choice(
            (
                rng.uniform(0, 1),
                rng.uniform(0, 1000),
                float(rng.randint(0, 10**9)),
                float("nan"),
                float("inf"),
                -float("inf"),
                -1.0,
                0.0,
                1e308,
                None,
            )
        )
        rows.append(
            {
                "ts": t0 + (i % 500) * 1000 + rng.choice((0, 0, 0, -(10**6), 10**12)),
                "job_id": rng.choice(("j1", "j2", None)),
                "job_name": rng.choice(("job", text(), None)),
                "vertex_id": rng.choice(("v1", "v2", None)),
                "task_name": rng.choice(("Sink", "Source", text(), None)),
                "subtask_index": rng.choice((0, 1, 2, -1, None, 2**31 - 1)),
                "tm_id": rng.choice(("tm-1", None)),
                "host": "h",
                "metric": metric,
                "value": value,
            }
        )
    return rows


def run_dumps(total_rows: int, batches: int, seed: int) -> dict[str, Any]:
    import csv

    import pyarrow as pa
    import pyarrow.parquet as pq

    from flinktune.analysis import AnalysisOptions, names, run_analysis
    from flinktune.analysis import load as L
    from flinktune.errors import FlinktuneError
    from flinktune.spark.session import build_session

    spark = build_session("local[2]", {"spark.sql.shuffle.partitions": "2"})
    rng = random.Random(seed)
    per_batch = max(1, total_rows // batches)
    report: dict[str, Any] = {"rows": 0, "batches": [], "crashes": {}}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for b in range(batches):
            rows = _dump_rows(rng, per_batch)
            report["rows"] += len(rows)
            folder = Path(tmp) / f"b{b}"
            folder.mkdir()
            cols = list(rows[0])
            types = {"ts": pa.int64(), "subtask_index": pa.int64(), "value": pa.float64()}
            table = pa.table(
                {c: pa.array([r[c] for r in rows], type=types.get(c, pa.string())) for c in cols}
            )
            pq.write_table(table, folder / "m.parquet")
            with open(folder / "m.csv", "w", newline="", encoding="utf-8") as fh:
                w = csv.DictWriter(fh, fieldnames=cols)
                w.writeheader()
                w.writerows(rows)
            with open(folder / "m.jsonl", "w", encoding="utf-8") as fh:
                for r in rows:
                    fh.write(json.dumps(r) + "\n")
            for fmt in ("parquet", "csv", "jsonl"):
                path = str(folder / f"m.{fmt}")
                outcome: dict[str, Any] = {"batch": b, "format": fmt}
                try:
                    inputs = L.resolve_inputs([path])
                    canon = L.load_canonical(spark, inputs, L.Filters())
                    sample = canon.select("metric", "rank", "value").collect()
                    bad = [
                        r
                        for r in sample
                        if r["metric"] not in names.METRICS
                        or r["rank"] is None
                        or r["value"] is None
                        or not (0 <= r["value"] < float("inf"))
                    ]
                    outcome["normalised_rows"] = len(sample)
                    outcome["invariant_violations"] = len(bad)
                    result = run_analysis(spark, AnalysisOptions(inputs=(path,)))
                    outcome["jobs"] = len(result.jobs)
                    outcome["result"] = "ok"
                except FlinktuneError as error:
                    H.check_error(error)
                    outcome["result"] = f"error: {error.one_line()[:160]}"
                except Exception as error:
                    key = f"{type(error).__name__} at {_where(error)}"
                    report["crashes"].setdefault(key, {"count": 0, "message": str(error)[:300]})["count"] += 1
                    outcome["result"] = f"crash: {key}"
                report["batches"].append(outcome)
                print(f"  dump batch {b} {fmt}: {outcome}", flush=True)
    report["seconds"] = round(time.perf_counter() - started, 1)
    spark.stop()
    return report


# --- report --------------------------------------------------------------------------------------


def write_report(
    results: list[dict[str, Any]],
    atheris_results: list[dict[str, Any]],
    dumps: dict[str, Any] | None,
    args: argparse.Namespace,
    atheris_note: str,
) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    doc = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus",
        "seed": args.seed,
        "deadline_s": args.deadline,
        "max_text_chars": args.max_chars,
        "targets": results,
        "atheris": atheris_results,
        "atheris_note": atheris_note,
        "dumps": dumps,
    }
    (RESULTS / f"{args.out}.json").write_text(json.dumps(doc, indent=2, default=str) + "\n", encoding="utf-8")
    lines = [
        "# Fuzzing every parser (benchmarks/fuzz_all.py)",
        "",
        f"Run {doc['date']} on {doc['machine']}, Python {doc['python']}, seed {args.seed}. "
        "Property: any input gives a result or a FlinktuneError with a one-line message; a *crash* is "
        f"any other exception, a *hang* a case over {args.deadline} s. Inputs: at most "
        f"{args.max_chars} characters per generated case (10% of mutations run past it, to ~2x; seeds "
        "are cut to windows of whole lines); the parsers' own size caps are tested separately "
        "(tests/hostile).",
        "",
        "## Mutation fuzzing (seeded, repeatable)",
        "",
        "| target | cases | ok | FlinktuneError | crash | hang | seconds | slowest case (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        c = r["counts"]
        lines.append(
            f"| {r['target']} | {r['cases']:,} | {c['ok']:,} | {c['error']:,} | {c['crash']} | {c['hang']} | "
            f"{r['seconds']} | {r['slowest_case_s']} |"
        )
    lines += ["", "Found while building this, and fixed (regression inputs in tests/hostile):", "",
              "| where | what | fix |", "|---|---|---|"]
    lines += [f"| {where} | {what} | {fix} |" for where, what, fix in FOUND_AND_FIXED]
    lines += [
        "",
        "Reading the table: *ok* is a result, *FlinktuneError* a clean refusal. For rule_file, *ok* means "
        "the loader returned a compiled rule or its list of problems (both normal); about 7% of the "
        "generated rule files compile and are then run on their examples, a config and measured items. "
        "writer applies one set/delete/rename per input and reads the result back in the same format.",
    ]
    crashes = [(r["target"], k, v) for r in results for k, v in r["crashes"].items()]
    lines += ["", f"Crashes and hangs in this run: {len(crashes)} distinct."]
    for target, key, entry in crashes:
        lines.append(
            f"- {target}: {key} x{entry['count']}: {entry.get('message', '')[:150]!r}; "
            f"input {entry['example'][:150]!r}"
        )
    lines += ["", "## Coverage-guided fuzzing (atheris / libFuzzer)", "", atheris_note, ""]
    if atheris_results:
        lines += [
            "| target | runs | ok | FlinktuneError | crash | seconds | libFuzzer |",
            "|---|---:|---:|---:|---:|---:|---|",
        ]
        for a in atheris_results:
            s = a["stats"]
            lines.append(
                f"| {a['target']} | {a['runs']:,} | {s.get('ok', '?')} | {s.get('error', '?')} | "
                f"{s.get('crash', '?')} | {a['seconds']} | {' / '.join(a['libfuzzer'])[:120]} |"
            )
            for key, entry in (s.get("crashes") or {}).items():
                lines.append(f"  - crash {key} x{entry['count']}: {entry['message'][:120]!r}")
    lines += ["", "## Metrics-dump normaliser (Spark batches)", ""]
    if dumps:
        lines.append(
            f"{dumps['rows']:,} generated rows in {len(dumps['batches']) // 3} batches, each written as "
            f"parquet, CSV and JSON lines and read by the real loader (load_canonical) and the whole "
            f"analysis (run_analysis): {dumps['seconds']} s. Crashes: {dumps['crashes'] or 'none'}."
        )
        lines.append("")
        lines.append("| batch | format | normalised rows | invariant violations | result |")
        lines.append("|---:|---|---:|---:|---|")
        for o in dumps["batches"]:
            lines.append(
                f"| {o['batch']} | {o['format']} | {o.get('normalised_rows', '')} | "
                f"{o.get('invariant_violations', '')} | {o['result'][:90]} |"
            )
        lines.append("")
        lines.append("CSV gives fewer rows than parquet and JSON lines on the same data: generated task "
                     "names hold line breaks, and Spark reads CSV one line at a time, dropping those records "
                     "(a known limit, docs/security.md). No row that survives breaks an invariant (metric "
                     "canonical, rank set, value finite and >= 0).")
    else:
        lines.append("Not run (--dump-rows 0).")
    if args.note:
        lines += ["", "## How this report was made", "", args.note]
    (RESULTS / f"{args.out}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cases", type=int, default=100_000, help="cases per parser (reduced targets: see REDUCED)"
    )
    parser.add_argument("--full", action="store_true", help="give the reduced targets the full --cases too")
    parser.add_argument("--only", default="", help="comma-separated target names")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20261121)
    parser.add_argument(
        "--deadline", type=float, default=10.0, help="seconds per case before it counts as a hang"
    )
    parser.add_argument("--max-chars", type=int, default=1500,
                        help="input size bound for generated cases (seeds are cut to windows of whole lines)")
    parser.add_argument("--atheris-runs", type=int, default=100_000)
    parser.add_argument("--dump-rows", type=int, default=100_000)
    parser.add_argument("--dump-batches", type=int, default=1)
    parser.add_argument(
        "--merge",
        action="store_true",
        help="add this run's targets to the last fuzz.json instead of replacing it",
    )
    parser.add_argument("--out", default="fuzz", help="result file stem under benchmarks/results")
    parser.add_argument("--note", default="", help="a paragraph appended to the report")
    parser.add_argument("--merge-from", action="append", default=[], metavar="JSON",
                        help="also merge the targets/atheris/dumps of these earlier result files")
    args = parser.parse_args()
    names = [n for n in (args.only.split(",") if args.only else H.TARGETS) if n]
    jobs = []
    for i, name in enumerate(names):
        cases = args.cases if args.full else min(args.cases, REDUCED.get(name, args.cases))
        jobs.append((name, cases, args.seed + i, args.deadline, args.max_chars))
    results: list[dict[str, Any]] = []
    if args.cases:
        print(f"mutation fuzzing {len(jobs)} targets with {args.workers} workers", flush=True)
        with multiprocessing.get_context("fork").Pool(args.workers) as pool:
            results = pool.map(_worker, sorted(jobs, key=lambda j: -j[1]), chunksize=1)
        results.sort(key=lambda r: names.index(r["target"]))
    atheris_results: list[dict[str, Any]] = []
    try:
        from importlib.metadata import version

        import atheris  # noqa: F401

        atheris_note = (
            f"atheris {version('atheris')} installed into the venv (pip install "
            "atheris: it built); each string parser below ran under libFuzzer with flinktune and "
            "PyYAML instrumented, max_len 4096, 10 s timeout per input."
        )
        if args.atheris_runs:
            for name in (n for n in ATHERIS_TARGETS if n in names):
                runs = (
                    args.atheris_runs
                    if args.full
                    else min(args.atheris_runs, ATHERIS_SLOW.get(name, args.atheris_runs))
                )
                print(f"atheris {name} ({runs} runs)", flush=True)
                atheris_results.append(run_atheris(name, runs))
    except ImportError:
        atheris_note = (
            "atheris is not installed (pip install atheris failed to build): mutation fuzzing only."
        )
    dumps = None
    if args.dump_rows:
        print(f"metrics dumps: {args.dump_rows} rows in {args.dump_batches} Spark batches", flush=True)
        dumps = run_dumps(args.dump_rows, args.dump_batches, args.seed)
    earlier = [Path(f) for f in args.merge_from]
    if args.merge and (RESULTS / f"{args.out}.json").exists():
        earlier.insert(0, RESULTS / f"{args.out}.json")
    for path in earlier:
        old = json.loads(path.read_text(encoding="utf-8"))
        mine = {r["target"] for r in results}
        results = [r for r in old["targets"] if r["target"] not in mine] + results
        done = {a["target"] for a in atheris_results}
        atheris_results = [a for a in old.get("atheris") or [] if a["target"] not in done] + atheris_results
        dumps = dumps or old.get("dumps")
        if old.get("atheris"):
            atheris_note = old.get("atheris_note", atheris_note)
    order = list(H.TARGETS)
    results.sort(key=lambda r: order.index(r["target"]) if r["target"] in order else len(order))
    write_report(results, atheris_results, dumps, args, atheris_note)
    total_crashes = sum(r["counts"]["crash"] + r["counts"]["hang"] for r in results)
    total_crashes += sum(a["stats"].get("crash", 0) for a in atheris_results)
    total_crashes += sum(e["count"] for e in (dumps or {}).get("crashes", {}).values())
    print(f"wrote {RESULTS / 'fuzz.md'}: {total_crashes} crashes/hangs")


if __name__ == "__main__":
    main()
