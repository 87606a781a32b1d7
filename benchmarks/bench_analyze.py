"""Benchmark: ``flinktune analyze`` (PySpark, whole process) against the same analysis in DuckDB.

Generates canonical long-format dumps (zstd parquet, sorted by time like a reporter writes them) of
1e6, 1e7 and 5e7 rows: 5 vertices x 20 subtasks x 20 metrics = 2000 series, the number of samples per
series growing with the row count (so the work grows linearly), with a slow sink built in.

Both sides run as separate processes, start-up included:
- flinktune: ``python -m flinktune analyze DUMP --format json`` (embedded local Spark, tuned defaults);
- DuckDB: this file with ``--duckdb DUMP``: the same one-pass slot aggregation, warm-up trim, counter
  rates with resets and per-series summary in SQL, then the same pure-Python diagnosis; both must name
  the same origin and cause.

Dump shapes (``--shapes``, all by default; rows are spread over the shape's series, so the number
of samples grows with the row count):
- ``base``: 5 vertices x 20 subtasks x 20 metrics, 1 s interval, one parquet file (the original);
- ``wide``: many subtasks, few samples: 5 vertices at p = 512, 10 s interval (1e7 rows ~ an hour);
- ``long``: few subtasks, many samples: 3 vertices x 2 subtasks, 1 s interval (1e7 rows ~ a day);
- ``jobs``: 50 jobs of 3 vertices x 4 subtasks in one dump (no plan.json: no single plan fits);
- ``csv`` / ``jsonl``: the base shape as CSV / JSON lines (converted from the parquet by DuckDB);
- ``files``: the base shape as 8 parquet files in one folder.

Text dumps are converted to parquet on a flinktune run (analysis/text_cache.py): every timed run
starts with the conversion cache emptied (a first run on the file); one more run shows the cached case.

Usage: python benchmarks/bench_analyze.py [--rows 1e6,1e7,5e7] [--shapes base,wide,...] [--repeat 3]
                                          [--shapes-at 5e7=base,wide,csv] [--baseline DIR]
                                          [--max-load 2.5] [--work DIR] [--out benchmarks/results/analyze.md]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

VERTICES = ("Source: Gen", "Parse", "KeyedAgg", "Enrich", "Sink: Writer")
SUBTASKS = 20
START_MS = 1_790_000_000_000
INTERVAL_MS = 1000


@dataclass(frozen=True)
class Shape:
    name: str
    vertices: tuple[str, ...] = VERTICES
    subtasks: int = SUBTASKS
    interval_ms: int = INTERVAL_MS
    jobs: int = 1
    fmt: str = "parquet"     # parquet | csv | jsonl
    files: int = 1


SHAPES = {
    "base": Shape("base"),
    "wide": Shape("wide", subtasks=512, interval_ms=10_000),
    "long": Shape("long", vertices=("Source: Gen", "KeyedAgg", "Sink: Writer"), subtasks=2),
    "jobs": Shape("jobs", vertices=("Source: Gen", "KeyedAgg", "Sink: Writer"), subtasks=4, jobs=50),
    "csv": Shape("csv", fmt="csv"),
    "jsonl": Shape("jsonl", fmt="jsonl"),
    "files": Shape("files", files=8),
}


def _metrics() -> tuple[str, ...]:
    from flinktune.analysis import names

    return names.METRICS


def generate(rows: int, out: Path, shape: Shape = SHAPES["base"]) -> Path:
    """A slow-sink dump of about ``rows`` rows in ``shape``, written in time chunks to bound memory."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    metrics = _metrics()
    vertices = shape.vertices
    n_v = len(vertices) * shape.jobs   # vertices of all jobs, job after job
    per_job = len(vertices)
    subtasks = shape.subtasks
    nseries = n_v * subtasks * len(metrics)
    samples = max(2, rows // nseries)
    out.mkdir(parents=True, exist_ok=True)
    parquet_dir = out if shape.fmt == "parquet" else out / "parquet-source"
    parquet_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(42)
    v_all = np.repeat(np.arange(n_v), subtasks * len(metrics))
    j_idx = v_all // per_job
    v_idx = v_all % per_job
    s_idx = np.tile(np.repeat(np.arange(subtasks), len(metrics)), n_v)
    m_idx = np.tile(np.arange(len(metrics)), n_v * subtasks)
    sink = v_idx == per_job - 1
    mname = np.asarray(metrics)
    base = {  # per-second value per (vertex role, metric); counters grow by this per second
        "backPressuredTimeMsPerSecond": np.where(sink, 0.0, 900.0),
        "busyTimeMsPerSecond": np.where(sink, 980.0, 60.0),
        "idleTimeMsPerSecond": np.where(sink, 20.0, 40.0),
        "isBackPressured": np.where(sink, 0.0, 1.0),
        "backPressureRatio": np.where(sink, 0.0, 0.9),
        "outPoolUsage": np.where(sink, 0.0, 1.0),
        "inPoolUsage": np.where(v_idx == 0, 0.0, np.where(sink, 1.0, 0.9)),
        "inputFloatingBuffersUsage": np.where(v_idx == 0, 0.0, 1.0),
        "inputExclusiveBuffersUsage": np.where(v_idx == 0, 0.0, 0.9),
        "numRecordsInPerSecond": np.full(len(v_idx), 1000.0),
        "numRecordsOutPerSecond": np.full(len(v_idx), 1000.0),
        "numBytesOutPerSecond": np.full(len(v_idx), 130_000.0),
        "numBytesInRemotePerSecond": np.full(len(v_idx), 65_000.0),
        "numBuffersInRemotePerSecond": np.full(len(v_idx), 3.0),
        "numRecordsIn": np.full(len(v_idx), 1000.0),
        "numRecordsOut": np.full(len(v_idx), 1000.0),
        "numBytesOut": np.full(len(v_idx), 130_000.0),
        "numBytesInRemote": np.full(len(v_idx), 65_000.0),
        "numBuffersInRemote": np.full(len(v_idx), 3.0),
        "numBuffersOut": np.full(len(v_idx), 4.0),
    }
    level = np.zeros(len(v_idx))
    for i, m in enumerate(metrics):
        level = np.where(m_idx == i, base[m], level)
    counter = np.isin(
        mname[m_idx],
        [
            "numRecordsIn",
            "numRecordsOut",
            "numBytesOut",
            "numBytesInRemote",
            "numBuffersInRemote",
            "numBuffersOut",
        ],
    )
    all_ids = [f"{i:032x}" for i in range(1, n_v + 1)]
    vertex_ids = all_ids[:per_job]
    job_ids = ["bench-job"] if shape.jobs == 1 else [f"{j + 1:032x}" for j in range(shape.jobs)]
    dict_vid = pa.array(all_ids)
    dict_name = pa.array(list(vertices))
    dict_metric = pa.array(list(metrics))
    n_tms = max(2, subtasks // 4)
    dict_tm = pa.array([f"tm-{i}" for i in range(n_tms)])
    dict_job = pa.array(job_ids)
    schema = pa.schema(
        [
            ("ts", pa.int64()),
            ("job_id", pa.dictionary(pa.int32(), pa.string())),
            ("vertex_id", pa.dictionary(pa.int32(), pa.string())),
            ("task_name", pa.dictionary(pa.int32(), pa.string())),
            ("subtask_index", pa.int32()),
            ("tm_id", pa.dictionary(pa.int32(), pa.string())),
            ("metric", pa.dictionary(pa.int32(), pa.string())),
            ("value", pa.float64()),
        ]
    )
    chunk = max(1, 2_000_000 // nseries)
    per_file = math.ceil(samples / shape.files)
    for f in range(shape.files):
        name = "metrics.parquet" if shape.files == 1 else f"metrics-{f:03d}.parquet"
        first, last = f * per_file, min(samples, (f + 1) * per_file)
        with pq.ParquetWriter(parquet_dir / name, schema, compression="zstd") as writer:
            _write_samples(writer, schema, first, last, chunk, nseries, shape, level, counter, rng,
                           (j_idx, v_all, v_idx, s_idx, m_idx, n_tms),
                           (dict_job, dict_vid, dict_name, dict_tm, dict_metric))
    if shape.fmt != "parquet":
        import duckdb

        target = out / ("metrics.csv" if shape.fmt == "csv" else "metrics.jsonl")
        option = "FORMAT CSV, HEADER" if shape.fmt == "csv" else "FORMAT JSON"
        con = duckdb.connect()
        con.execute(f"COPY (SELECT * FROM read_parquet('{parquet_dir}/*.parquet') ORDER BY ts) "
                    f"TO '{target}' ({option})")
        for f in parquet_dir.glob("*.parquet"):
            f.unlink()
        parquet_dir.rmdir()
    if shape.jobs == 1:
        _write_plan(out, vertex_ids, vertices, subtasks)
    # beside the folder (a .txt inside would read as a Prometheus scrape); also: the dump is complete
    _rows_file(out).write_text(str(samples * nseries))
    return out


def _rows_file(folder: Path) -> Path:
    return folder.parent / f"{folder.name}.rows"


def _write_samples(writer, schema, first, last, chunk, nseries, shape, level, counter, rng,  # type: ignore[no-untyped-def]
                   idx, dicts) -> None:
    import numpy as np
    import pyarrow as pa

    j_idx, v_all, v_idx, s_idx, m_idx, n_tms = idx
    dict_job, dict_vid, dict_name, dict_tm, dict_metric = dicts
    for t0 in range(first, last, chunk):
        t = np.arange(t0, min(last, t0 + chunk))
        nt = len(t)
        ts = np.repeat(START_MS + t * shape.interval_ms, nseries)
        lv = np.tile(level, nt)
        noise = rng.normal(0.0, 0.02, nseries * nt)
        is_counter = np.tile(counter, nt)
        seconds = np.repeat(t * (shape.interval_ms / 1000.0), nseries)
        value = np.where(is_counter, lv * seconds, np.clip(lv * (1 + noise), 0, None))
        table = pa.table(
            {
                "ts": ts,
                "job_id": pa.DictionaryArray.from_arrays(np.tile(j_idx, nt).astype(np.int32), dict_job),
                "vertex_id": pa.DictionaryArray.from_arrays(
                    np.tile(v_all, nt).astype(np.int32), dict_vid
                ),
                "task_name": pa.DictionaryArray.from_arrays(
                    np.tile(v_idx, nt).astype(np.int32), dict_name
                ),
                "subtask_index": np.tile(s_idx, nt).astype(np.int32),
                "tm_id": pa.DictionaryArray.from_arrays(
                    (np.tile(s_idx, nt) // 4 % n_tms).astype(np.int32), dict_tm
                ),
                "metric": pa.DictionaryArray.from_arrays(
                    np.tile(m_idx, nt).astype(np.int32), dict_metric
                ),
                "value": value,
            },
            schema=schema,
        )
        writer.write_table(table, row_group_size=1_000_000)


def _write_plan(out: Path, vertex_ids: list[str], vertices: tuple[str, ...], subtasks: int) -> None:
    plan_nodes = []
    for i, (vid, name) in enumerate(zip(vertex_ids, vertices, strict=True)):
        node: dict[str, object] = {"id": vid, "parallelism": subtasks, "description": f"{name}<br/>"}
        if i:
            node["inputs"] = [
                {"num": 0, "id": vertex_ids[i - 1], "ship_strategy": "HASH", "exchange": "pipelined_bounded"}
            ]
        plan_nodes.append(node)
    (out / "plan.json").write_text(
        json.dumps({"plan": {"jid": "bench-job", "name": "bench", "nodes": plan_nodes}})
    )


# --- the DuckDB side ------------------------------------------------------------------------------


def duckdb_analysis(folder: Path) -> dict[str, object]:
    import duckdb

    from flinktune.analysis import names
    from flinktune.analysis.diagnose import build_vertices, diagnose_job
    from flinktune.analysis.facts import pivot_subtasks, series_from_rows
    from flinktune.analysis.plan import load_plan
    from flinktune.situation import Environment

    path = _duckdb_source(folder)
    con = duckdb.connect()
    con.execute("SET threads TO 2")
    lo, hi = con.execute(f"SELECT min(ts), max(ts) FROM {path}").fetchone()  # type: ignore[misc]
    slot_ms = max(1, math.ceil((hi - lo + 1) / 40))
    metric_list = ", ".join(f"'{m}'" for m in names.METRICS)
    lo_case = " ".join(f"WHEN '{m}' THEN {a}" for m, (a, _) in names.THRESHOLDS.items())
    hi_case = " ".join(f"WHEN '{m}' THEN {b}" for m, (_, b) in names.THRESHOLDS.items())
    counters = ", ".join(f"'{m}'" for m in names.COUNTERS)
    sql = f"""
    WITH raw AS (
      SELECT coalesce(job_id, '') AS job_key, coalesce(vertex_id, task_name) AS vertex_key, subtask_index,
             metric::VARCHAR AS metric, 1 AS rank, ts, CASE WHEN isnan(value) THEN NULL ELSE value END AS v,
             floor((ts - {lo}) / {slot_ms})::INT AS slot, job_id::VARCHAR AS job_id,
             task_name::VARCHAR AS task_name, tm_id::VARCHAR AS tm_id,
             CASE metric::VARCHAR {lo_case} END AS lo_t, CASE metric::VARCHAR {hi_case} END AS hi_t
      FROM {path} WHERE metric::VARCHAR IN ({metric_list})),
    slots AS (
      SELECT job_key, vertex_key, subtask_index, metric, rank, slot, job_id, task_name, tm_id,
             count(v) AS n, sum(v) AS s, max(v) AS mx, count(*) FILTER (WHERE v > lo_t) AS n_lo,
             count(*) FILTER (WHERE v > hi_t) AS n_hi, min(ts) AS t0, max(ts) AS t1,
             arg_min(v, ts) AS v0, arg_max(v, ts) AS v1
      FROM raw GROUP BY ALL),
    trimmed AS (
      SELECT * FROM (SELECT *, min(t0) OVER (PARTITION BY job_key) AS js,
                            max(t1) OVER (PARTITION BY job_key) AS je
                     FROM slots) WHERE t1 >= js + (je - js) * 0.1),
    deltas AS (
      SELECT *, coalesce(CASE WHEN v1 < mx THEN mx - v0 + v1 ELSE v1 - v0 END, 0)
               + coalesce(CASE WHEN lag(v1) OVER w IS NULL THEN 0
                               WHEN v0 >= lag(v1) OVER w THEN v0 - lag(v1) OVER w
                               ELSE v0 END, 0) AS delta
      FROM trimmed
      WINDOW w AS (PARTITION BY job_key, vertex_key, subtask_index, metric, rank ORDER BY slot, t0))
    SELECT job_key, vertex_key, subtask_index, metric, rank, sum(n) AS n, sum(s) / sum(n) AS mean,
           max(mx) AS max,
           sum(n_lo) / sum(n) AS frac_lo, sum(n_hi) / sum(n) AS frac_hi, sum(delta) AS delta,
           min(t0) AS t_first, max(t1) AS t_last, any_value(job_id) AS job_id, NULL AS job_name,
           NULL AS vertex_id, any_value(task_name) AS task_name, any_value(tm_id) AS tm_id,
           CASE WHEN metric IN ({counters}) AND max(t1) > min(t0)
                THEN sum(delta) / ((max(t1) - min(t0)) / 1000.0) END AS rate
    FROM deltas GROUP BY job_key, vertex_key, subtask_index, metric, rank
    """
    cur = con.execute(sql)
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
    series = series_from_rows(rows)
    plan = load_plan(folder / "plan.json") if (folder / "plan.json").exists() else None
    seen = {(s.job_key, s.vertex_key): s.task_name for s in series if s.task_name}
    by_job = build_vertices(pivot_subtasks(series), plan, seen)  # type: ignore[arg-type]
    origins = []
    for job_key, vertices in sorted(by_job.items()):
        diag = diagnose_job(job_key, vertices, plan, Environment())
        origins.append([[o.name, o.cause] for o in diag.origins])
    return {"origins": _summary(origins), "series": len(rows)}


def _summary(per_job: list[list[list[str]]]) -> list[object]:
    """One job: its origins; several: each distinct origin list with how many jobs have it."""
    if len(per_job) == 1:
        return per_job[0]  # type: ignore[return-value]
    counts: dict[str, int] = {}
    for origins in per_job:
        key = json.dumps(sorted(origins))
        counts[key] = counts.get(key, 0) + 1
    return [[json.loads(k), n] for k, n in sorted(counts.items())]


_COLUMNS = ("{'ts': 'BIGINT', 'job_id': 'VARCHAR', 'vertex_id': 'VARCHAR', 'task_name': 'VARCHAR', "
            "'subtask_index': 'INTEGER', 'tm_id': 'VARCHAR', 'metric': 'VARCHAR', 'value': 'DOUBLE'}")


def _duckdb_source(folder: Path) -> str:
    if list(folder.glob("*.parquet")):
        return f"read_parquet('{folder}/*.parquet')"
    if (folder / "metrics.csv").exists():
        return f"read_csv('{folder}/metrics.csv', header = true, columns = {_COLUMNS})"
    return f"read_json('{folder}/metrics.jsonl', format = 'newline_delimited', columns = {_COLUMNS})"


def _time(cmd: list[str], extra_env: dict[str, str] | None = None, cwd: Path = REPO) -> tuple[float, str]:
    t = time.perf_counter()
    env = {**os.environ, "NO_COLOR": "1", **(extra_env or {})}
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env)
    elapsed = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def _analyze_cmd(folder: Path) -> list[str]:
    return [sys.executable, "-m", "flinktune", "analyze", str(folder), "--format", "json", "--no-progress"]


def warm_class_cache(folder: Path, cache: Path, timeout_s: float = 300) -> bool:
    """One analysis records the driver's class list; its detached builder then writes the
    class-data archive (flinktune/spark/class_cache.py). Wait for it, as a second run would."""
    os.environ["FLINKTUNE_CACHE_DIR"] = str(cache)
    if list(cache.glob("spark-*.jsa")):
        return True
    _time(_analyze_cmd(folder))
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if list(cache.glob("spark-*.jsa")) and not list(cache.glob("spark-*.lock")):
            return True
        time.sleep(2)
    return False


def wait_for_quiet(max_load: float, minutes: int) -> float:
    """Poll the 1-minute load average once a minute until it is below ``max_load`` (the machine
    is shared with other test runs), at most ``minutes``; returns the load seen last."""
    load = os.getloadavg()[0]
    for _ in range(minutes):
        if load < max_load:
            break
        print(f"load {load:.2f} >= {max_load}: waiting a minute", flush=True)
        time.sleep(60)
        load = os.getloadavg()[0]
    return load


@dataclass
class Result:
    shape: Shape
    rows: int
    size_mb: float
    spark_times: list[float]
    duck_times: list[float]
    loads: list[float]
    same: bool
    origin: object
    uncached: float = math.nan  # no class-data archive
    cached_text: float = math.nan  # text already converted to parquet (text shapes)
    before: float = math.nan  # the --baseline source tree

    @property
    def spark(self) -> float:
        return statistics.median(self.spark_times)

    @property
    def duck(self) -> float:
        return statistics.median(self.duck_times)


def _origins(text: str) -> object:
    doc = json.loads(text)
    return _summary([[[o["vertex"], o["cause"]] for o in job["origins"]] for job in doc["jobs"]])


def measure(folder: Path, shape: Shape, repeat: int, cache: Path, no_archive: bool,
            baseline: Path | None) -> Result:
    actual = int(_rows_file(folder).read_text())
    size_mb = sum(f.stat().st_size for f in folder.iterdir() if f.name.startswith("metrics")) / 1e6
    text = shape.fmt != "parquet"
    converted = cache / "text-dumps"

    def first_run_of_text() -> None:
        # Every timed run pays for the conversion of a text dump (analysis/text_cache.py), as
        # the first run on a file does; the 'cached' column is a run after it.
        if text:
            shutil.rmtree(converted, ignore_errors=True)

    result = Result(shape, actual, size_mb, [], [], [], False, None)
    # Without the class-data archive: what the very first run on a machine costs.
    if no_archive:
        first_run_of_text()
        result.uncached = _time(_analyze_cmd(folder), {"FLINKTUNE_CLASS_CACHE": "0"})[0]
    if baseline is not None:
        result.before, before_text = _time(_analyze_cmd(folder), cwd=baseline)
        print(f"{shape.name} {actual:.0e}: before {result.before:.1f}s {_origins(before_text)}", flush=True)
    spark_origin = duck_origin = None
    for _ in range(repeat):
        result.loads.append(os.getloadavg()[0])
        first_run_of_text()
        t, out = _time(_analyze_cmd(folder))
        result.spark_times.append(t)
        spark_origin = _origins(out)
        t, out = _time([sys.executable, str(Path(__file__).resolve()), "--duckdb", str(folder)])
        result.duck_times.append(t)
        duck_origin = json.loads(out)["origins"]
        print(f"{shape.name} {actual:.0e}: spark {result.spark_times[-1]:.1f}s "
              f"duckdb {result.duck_times[-1]:.1f}s same={spark_origin == duck_origin}", flush=True)
    if text:
        result.cached_text, out = _time(_analyze_cmd(folder))
        assert _origins(out) == spark_origin
        shutil.rmtree(converted, ignore_errors=True)
    result.same = spark_origin == duck_origin
    result.origin = spark_origin
    return result


def _fmt(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.1f}"


def report(results: list[Result], load_before: float, shapes: list[str]) -> list[str]:
    load = os.getloadavg()
    lines = ["# `flinktune analyze` vs the same analysis in DuckDB", ""]
    lines.append(
        f"Run {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC. "
        f"Machine: {os.cpu_count()} cores, 1-minute load average {load_before:.1f} when the runs "
        f"started, {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end (1/5/15 min; the machine "
        "is shared, so absolute times are noisy; 'load avg' is the mean 1-minute load before each "
        "run). Whole processes, start-up included, median of the runs shown (flinktune and DuckDB "
        "alternate, so both see the same machine). Generated slow-sink dumps by "
        "`benchmarks/bench_analyze.py` in the shapes listed there. flinktune runs with its class-data "
        "archive in place (built once, after the first run on a machine: docs/analysis.md); the "
        "'no archive' column (when measured) is one run with `FLINKTUNE_CLASS_CACHE=0`, i.e. a "
        "machine's first run. Text dumps (CSV, JSON lines) are converted to parquet in every timed "
        "run, as on the first run on a file; 'text cached' is one more run after that (the "
        "conversion kept in the cache). 'before' (when measured) is one run of the code before "
        "this change (`--baseline`). 'same origin+cause': both name the same origin vertices and "
        "causes (several jobs: each distinct list with the number of jobs that have it)."
    )
    lines.append("")
    lines.append(
        "| shape | rows | series | MB | runs | load avg | flinktune (Spark) s | runs s | DuckDB s | ratio "
        "| text cached s | before s | no archive s | same origin+cause |"
    )
    lines.append("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|")
    for r in results:
        shape = r.shape
        nseries = len(shape.vertices) * shape.jobs * shape.subtasks * len(_metrics())
        fmt = shape.fmt + (f" x {shape.files} files" if shape.files > 1 else "")
        lines.append(
            f"| {shape.name} ({fmt}) | {r.rows:,} | {nseries:,} | {r.size_mb:.0f} | {len(r.spark_times)} | "
            f"{statistics.mean(r.loads):.1f} | {r.spark:.1f} | "
            f"{', '.join(f'{x:.1f}' for x in r.spark_times)} | "
            f"{r.duck:.1f} ({', '.join(f'{x:.1f}' for x in r.duck_times)}) | {r.spark / r.duck:.1f}x | "
            f"{_fmt(r.cached_text)} | {_fmt(r.before)} | {_fmt(r.uncached)} | "
            f"{'yes' if r.same else 'NO'} {json.dumps(r.origin)[:80]} |"
        )
    lines.append("")
    for shape_name in shapes:
        mine = [r for r in results if r.shape.name == shape_name]
        if len(mine) >= 2:
            r0, r1 = mine[0], mine[-1]
            lines.append(f"Growth, {shape_name}: {r1.rows / r0.rows:.0f}x the rows took "
                         f"{r1.spark / r0.spark:.1f}x the time (fixed start-up cost included).")
    return lines


def run(plan: list[tuple[int, list[str]]], repeat: int, out_file: Path, work: Path, no_archive: bool,
        baseline: Path | None, max_load: float, wait_minutes: int) -> None:
    results: list[Result] = []
    cache = work / "class-cache"
    smallest = min(rows for rows, _ in plan)
    first = work / f"base-{smallest:.0e}"
    if not _rows_file(first).exists():
        generate(smallest, first)
    cached = warm_class_cache(first, cache)
    print(f"class-data archive ready: {cached}", flush=True)
    for rows, shapes in plan:
        for shape_name in shapes:
            folder = work / f"{shape_name}-{rows:.0e}"
            if not _rows_file(folder).exists():
                t = time.perf_counter()
                generate(rows, folder, SHAPES[shape_name])
                print(f"generated {shape_name} {rows:.0e} rows in {time.perf_counter() - t:.1f}s", flush=True)
    load_before = wait_for_quiet(max_load, wait_minutes)
    print(f"1-minute load average at the start: {load_before:.2f}", flush=True)
    for rows, shapes in plan:
        for shape_name in shapes:
            folder = work / f"{shape_name}-{rows:.0e}"
            results.append(measure(folder, SHAPES[shape_name], repeat, cache, no_archive, baseline))
    lines = report(results, load_before, list(dict.fromkeys(s for _, shapes in plan for s in shapes)))
    # Earlier runs stay below as history (the machine is shared: one run alone says little).
    marker = "## Earlier runs (newest first)"
    if out_file.exists():
        body = out_file.read_text().split("\n", 1)[-1]  # without the title line
        last, _, older = body.partition(marker)
        history = "\n\n".join(part.strip() for part in (last, older) if part.strip())
        if history:
            lines += ["", marker, "", history.replace("\n## ", "\n### ")]
    out_file.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[: len(results) + 12]))


def _plan(rows_arg: str, shapes: list[str], shapes_at: list[str]) -> list[tuple[int, list[str]]]:
    """--rows and --shapes, with --shapes-at ROWS=a,b overriding the shapes at one size."""
    special = {}
    for item in shapes_at:
        size, _, names = item.partition("=")
        special[int(float(size))] = [x.strip() for x in names.split(",") if x.strip()]
    out = []
    for x in rows_arg.split(","):
        rows = int(float(x))
        out.append((rows, special.get(rows, shapes)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", default="1e6,1e7,5e7")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated: " + ", ".join(SHAPES))
    parser.add_argument("--shapes-at", action="append", default=[], metavar="ROWS=SHAPES",
                        help="other shapes at one size, e.g. 5e7=base,wide,csv (repeatable)")
    parser.add_argument("--no-archive", action="store_true",
                        help="also one run per dump without the class-data archive")
    parser.add_argument("--baseline", default=None, metavar="DIR",
                        help="also one run per dump of the flinktune source tree in DIR (e.g. the code "
                             "before a change: git archive HEAD | tar -x -C DIR)")
    parser.add_argument("--max-load", type=float, default=2.5,
                        help="wait until the 1-minute load average is below this before the runs")
    parser.add_argument("--wait-minutes", type=int, default=30,
                        help="at most this long (polling each minute)")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "analyze.md"))
    parser.add_argument("--work", default=None, help="Folder for generated dumps (kept for reuse).")
    parser.add_argument("--duckdb", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.duckdb:
        print(json.dumps(duckdb_analysis(Path(args.duckdb))))
        return
    work = Path(args.work) if args.work else Path(tempfile.gettempdir()) / "flinktune-bench-analyze"
    shapes = [x.strip() for x in args.shapes.split(",") if x.strip()]
    plan = _plan(args.rows, shapes, args.shapes_at)
    unknown = [x for _, names in plan for x in names if x not in SHAPES]
    if unknown:
        raise SystemExit(f"unknown shape {unknown[0]} (known: {', '.join(SHAPES)})")
    baseline = Path(args.baseline).resolve() if args.baseline else None
    run(plan, args.repeat, Path(args.out), work, args.no_archive, baseline, args.max_load, args.wait_minutes)


if __name__ == "__main__":
    main()
