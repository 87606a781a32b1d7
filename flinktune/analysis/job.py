"""The job entry: one Spark pass over the dump, then pure-Python diagnosis of the small result.

Spark actions: at most one cheap bounds query (skipped for local parquet, whose footers carry
the ``ts`` range, and for local text, converted to parquet first: text_cache.py), then one job that
scans once and returns the keyed rows of a small dump (grouped into slots in numpy:
slots_local.py), the slot table (small enough: summarised in numpy) or one row per series
(subtask x metric), with the time strip riding along; the subtasks' names come from a small job
alongside. Raw rows of a large dump never reach the driver.

Over 500 lines: the one job entry (inputs prepared while the JVM starts, one Spark pass, the small
result finished in Python).
"""

from __future__ import annotations

import contextlib
import math
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from flinktune.analysis import aggregate, from_series, load, names, prescan
from flinktune.analysis.diagnose import DEFAULT_SEGMENT_BYTES, JobDiagnosis
from flinktune.analysis.parallelism import ScalingOptions
from flinktune.analysis.plan import JobPlan, find_plan_beside, load_plan, max_parallelism_beside
from flinktune.analysis.readers import parquet as parquet_reader
from flinktune.analysis.series_local import StripPoints
from flinktune.analysis.timeline import JobTimeline
from flinktune.analysis.windows import JobWindows
from flinktune.errors import MetricsError, UsageError
from flinktune.findings import Finding
from flinktune.record import replace as record_replace
from flinktune.situation.environment import Environment
from flinktune.versions import DEFAULT_VERSION, FlinkVersion

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

Progress = Callable[[str], None]

DEFAULT_SLOTS = 40
# Slot tables up to this many rows (bounded from the parquet footers before the run) are
# summarised in numpy on the driver (series_local.py) instead of in four more Spark stages: the
# Spark finish (two windows, collect_list, rows pickled through py4j) cost 8-10 s more for
# p = 512 (51,200 series, 2.1e6 slot rows; the driver's Python then peaks at ~0.8 GB).
LOCAL_FINISH_MAX_ROWS = 3_000_000
# Dumps up to this many rows (parquet footers) skip Spark's aggregation as well: their keyed rows
# (aggregate.keyed_rows, 32-40 bytes each) are collected as Arrow and grouped into slots in numpy
# (slots_local.py). Measured at 1e6 rows, cold JVM: 1.4 s against 2.2 s (2,000 series) to 3.5 s
# (12,000 and 51,200 series) for Spark's aggregation and its slot table; the driver holds ~40 MB
# per 1e6 rows, and at 1e7 rows Spark's aggregation is the faster one.
LOCAL_SLOTS_MAX_ROWS = 2_500_000


@dataclass(frozen=True)
class AnalysisOptions:
    inputs: tuple[str, ...]
    plan_path: str | None = None
    job: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    warmup: str = "10%"
    slots: int = DEFAULT_SLOTS
    # What the metrics cannot tell (rtt, bandwidth): the situation's one Environment type.
    env: Environment = field(default_factory=Environment)
    segment_bytes: int = DEFAULT_SEGMENT_BYTES     # taskmanager.memory.segment-size of the job
    version: FlinkVersion = DEFAULT_VERSION
    rule_dirs: tuple[str, ...] = ()
    # Keep per-subtask time series (analysis/timeline.py) for reports that draw them.
    timeline: bool = False
    # Keep each vertex's figures per time window (analysis/windows.py), for comparing two runs.
    windows: bool = False
    # Sizing parallelism (analysis/parallelism.py): target utilisation, target rates, max parallelism.
    scaling: ScalingOptions = field(default_factory=ScalingOptions)


@dataclass(frozen=True)
class AnalysisResult:
    jobs: tuple[JobDiagnosis, ...]
    plan_file: str | None
    inputs: tuple[str, ...]
    samples: int
    notes: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    timelines: Mapping[str, JobTimeline] = field(default_factory=dict)  # by job_key, when asked
    plan: JobPlan | None = None  # the job graph read (edges, ship strategies), for reports that draw it
    windows: Mapping[str, JobWindows] = field(default_factory=dict)  # by job_key, when asked


def _dkey(row: dict[str, object]) -> tuple[object, object, object]:
    return (row["job_hash"], row["vertex_hash"], row["subtask_index"])


def parse_warmup(text: str) -> tuple[float, int | None]:
    """``10%`` -> (0.10, None); ``30s`` / ``500ms`` / ``2min`` -> (0, ms)."""
    t = text.strip().lower()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*%", t)
    if m:
        frac = float(m.group(1)) / 100
        if not 0 <= frac < 1:
            raise UsageError(f"--warmup {text}: a share must be below 100%")
        return frac, None
    if re.fullmatch(r"\d+(?:\.\d+)?", t) and float(t) != 0:
        # Flink's durations read a bare number as milliseconds: `--warmup 20` would skip 20 ms, where
        # the user meant 20 s or 20%.
        raise UsageError(f"--warmup: '{text}' has no unit; write {t}s or {t}% (a share of each run)")
    from flinktune.units import parse_duration

    try:
        return 0.0, int(parse_duration(t).ms)
    except Exception:
        raise UsageError(f"--warmup {text}: expected a share like 10% or a duration like 30s") from None


@dataclass(frozen=True)
class PreparedInputs:
    """What pyarrow learns of the inputs before Spark reads them (it runs while the JVM starts):
    parquet stand-ins for local text files (text_cache.py) and prescan.prescan's view of the parquet."""

    prescanned: Mapping[load.InputSet, prescan.DumpNames | None]
    converted: Mapping[load.InputSet, tuple[str, ...]] = field(default_factory=dict)

    def parquet_paths(self, inp: load.InputSet) -> tuple[str, ...] | None:
        """The parquet files Spark reads for this input (None: Spark reads text or a scrape)."""
        if inp in self.converted:
            return self.converted[inp]
        return inp.paths if inp.fmt == "parquet" else None


def jobs_in_dump(
    spark: SparkSession,
    inputs: Sequence[load.InputSet],
    prepared: PreparedInputs | None = None,
    limit: int = 20,
) -> list[str]:
    """The jobs a dump holds (name, with the id when both are known), for the message when
    ``--job`` matches none of them. Runs only on that error path."""
    df = load.load_canonical(
        spark,
        inputs,
        load.Filters(),
        prescanned=prepared.prescanned if prepared else None,
        converted=prepared.converted if prepared else None,
    )
    rows = df.select("job_id", "job_name").distinct().limit(limit + 1).collect()
    names = set()
    for r in rows:
        name, jid = r["job_name"], r["job_id"]
        if name and jid:
            names.add(f"{name} ({jid})")
        elif name or jid:
            names.add(str(name or jid))
    listed = sorted(names)
    return listed[:limit] + (["..."] if len(listed) > limit else [])


def _no_such_job(
    spark: SparkSession,
    options: AnalysisOptions,
    inputs: Sequence[load.InputSet],
    prepared: PreparedInputs | None,
) -> MetricsError | None:
    """With ``--job`` set and nothing left after filtering: the error that lists the dump's jobs."""
    if not options.job:
        return None
    try:
        held = jobs_in_dump(spark, inputs, prepared)
    except Exception:  # the listing is a courtesy; the plain error still stands
        return None
    listed = ", ".join(held) if held else "none (the dump has no job_id/job_name columns)"
    return MetricsError(f"no job '{options.job}' in the dump; it holds: {listed}", file=inputs[0].paths[0])


def _bounds(
    spark: SparkSession, df: DataFrame, inputs: Sequence[load.InputSet], prepared: PreparedInputs
) -> tuple[int, int]:
    from pyspark.sql import functions as F

    parquet = [prepared.parquet_paths(i) for i in inputs]
    if all(p is not None for p in parquet):
        found = [parquet_reader.check_parquet(p) for p in parquet if p is not None]
        if all(f is not None for f in found):
            return min(f[0] for f in found if f), max(f[1] for f in found if f)
    row = df.agg(F.min("ts").alias("lo"), F.max("ts").alias("hi")).collect()[0]
    if row["lo"] is None:
        raise MetricsError(
            "dump holds no rows of metrics flinktune reads (after --job/--since/--until)",
            file=inputs[0].paths[0],
        )
    return int(row["lo"]), int(row["hi"])


def _slot_rows_bound(
    inputs: Sequence[load.InputSet], prescanned: Mapping[load.InputSet, prescan.DumpNames | None], slots: int
) -> int | None:
    """Most rows the slot table can have, from the footers of a single local parquet input."""
    if len(inputs) != 1:
        return None
    known = prescanned.get(inputs[0])
    if known is None or known.series_bound is None:
        return None
    return known.series_bound * (slots + 1)


def prescan_inputs(
    inputs: Sequence[load.InputSet], converted: Mapping[load.InputSet, tuple[str, ...]] | None = None
) -> dict[load.InputSet, prescan.DumpNames | None]:
    """load.prescan for every parquet input and parquet stand-in (pure pyarrow: runs while the JVM
    starts). A file it cannot read is left to the Spark path, which reports it in one line."""
    out: dict[load.InputSet, prescan.DumpNames | None] = {}
    for inp in inputs:
        try:
            stand_in = (converted or {}).get(inp)
            out[inp] = prescan.prescan(inp if stand_in is None else load.InputSet("parquet", stand_in))
        except Exception:  # corrupt or odd files: no fast path, Spark's reader says what is wrong
            out[inp] = None
    return out


def prepare_inputs(
    inputs: Sequence[load.InputSet], local: bool, cancel: threading.Event | None = None
) -> PreparedInputs:
    """Convert local text inputs to parquet when Spark runs locally (executors elsewhere could not
    read the cache), then prescan. Pure pyarrow; ``cancel`` stops a conversion between pieces."""
    from flinktune.analysis import text_cache

    converted = text_cache.convert_inputs(inputs, cancel) if local else {}
    return PreparedInputs(prescan_inputs(inputs, converted), converted)


def _is_local(spark: SparkSession) -> bool:
    try:
        return str(spark.conf.get("spark.master", "")).startswith("local")
    except Exception:  # an odd session: read the dump the way any master can
        return False


def timeline_slots(slots: DataFrame, indexes: Sequence[int] | None = None) -> DataFrame:
    """The slot rows of the timeline gauges only (a few per subtask and slot), tagged "tl";
    ``indexes``: other metrics instead (windows.METRIC_INDEXES, whose counters need every column)."""
    from pyspark.sql import functions as F

    from flinktune.analysis.timeline import METRIC_INDEXES

    index = F.expr(f"mkey DIV {names.RANK_SPAN}")
    return slots.where(index.isin(list(METRIC_INDEXES if indexes is None else indexes))).select(
        *aggregate.SLOT_COLUMNS
    ).withColumn("kind", F.lit("tl"))


def _arrow_and_names(rows_df: DataFrame, desc_df: DataFrame) -> tuple[Any, list[dict[str, Any]]]:
    """``rows_df`` as an Arrow table, and the descriptor rows read by a second, small Spark job
    alongside. The names job is submitted first: its few tasks run while the driver plans and
    compiles the big query, instead of queueing behind its scan (measured, whole runs: 1e6 rows
    0.15-0.75 s less than one job after the other; 5e7 rows ~0.35 s less than one union with the
    slot table on the long shape, within the noise on the base shape). Apart, the data rows carry
    no null name columns (in one union: ~0.8 s more for 1e6 keyed rows).

    Both queries are planned at once, so at 5e7 rows the big one may reach the scheduler first;
    Spark's FIFO order then runs the names job's one heavy task (the last row groups) after the
    scan. A fair-scheduler pool of its own puts it first, but no whole run got faster (5e7 long,
    1e6 base and p = 512: within the noise), so the default scheduler stays."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        names_read = pool.submit(desc_df.collect)
        table = rows_df.toArrow()
        return table, [r.asDict() for r in names_read.result()]


Collected = tuple[list[dict[str, Any]], StripPoints, list[dict[str, Any]], dict[str, Any]]


def _collect_local(
    slots_df: DataFrame, desc_df: DataFrame, warm_frac: float, warm_ms: int | None
) -> Collected:
    """The slot table as Arrow and the descriptors; the series summary in numpy. The slot columns
    come back too (the time series of the HTML report read them)."""
    from flinktune.analysis import series_local

    slot_t, desc_rows = _arrow_and_names(slots_df, desc_df)
    columns = {c: slot_t[c].to_numpy(zero_copy_only=False) for c in aggregate.SLOT_COLUMNS}
    del slot_t  # the Arrow buffers, before numpy's copies
    rows, strip = series_local.summarise(columns, warm_frac, warm_ms)
    return rows, strip, desc_rows, {c: np.asarray(v) for c, v in columns.items()}


def _collect_keyed(
    keyed_df: DataFrame, desc_df: DataFrame, warm_frac: float, warm_ms: int | None
) -> Collected:
    """The keyed rows as Arrow and the descriptors; the slot aggregation and the series summary
    in numpy (a small dump: LOCAL_SLOTS_MAX_ROWS)."""
    from flinktune.analysis import series_local, slots_local

    keyed_t, desc_rows = _arrow_and_names(keyed_df.where("k IS NOT NULL"), desc_df)
    col = {c: keyed_t[c].to_numpy(zero_copy_only=False) for c in keyed_t.column_names}
    del keyed_t  # the Arrow buffers, before numpy's copies
    columns = slots_local.slot_table(col["job_hash"], col["vertex_hash"], col["k"], col["ts"], col["v"])
    del col
    rows, strip = series_local.summarise(columns, warm_frac, warm_ms, presorted=True)
    return rows, strip, desc_rows, columns


def _collect_spark(
    slots: DataFrame, desc_df: DataFrame, warm_frac: float, warm_ms: int | None, timeline: bool,
    windows: bool = False,
) -> Collected:
    """One Spark job: scan, slot aggregation, warm-up trim, per-series summary, names (for slot
    tables too large to collect)."""
    from pyspark.sql import functions as F

    trimmed = aggregate.trim_warmup(slots, warm_frac, warm_ms)
    series_df = aggregate.series_stats(trimmed).withColumn("kind", F.lit("series"))
    union = series_df.unionByName(desc_df.withColumn("kind", F.lit("desc")), allowMissingColumns=True)
    if timeline or windows:
        # The few timeline gauges (and the window figures' metrics) of the slot table ride along
        # in the same job.
        from flinktune.analysis import timeline as tl
        from flinktune.analysis import windows as wn

        indexes = sorted({*(tl.METRIC_INDEXES if timeline else ()), *(wn.METRIC_INDEXES if windows else ())})
        union = union.unionByName(timeline_slots(slots, indexes), allowMissingColumns=True)
    rows = [r.asDict(recursive=True) for r in union.collect()]
    series_rows = [r for r in rows if r["kind"] == "series"]
    desc_rows = [r for r in rows if r["kind"] == "desc"]
    tl_rows = [r for r in rows if r["kind"] == "tl"]
    slot_columns = {c: [r[c] for r in tl_rows] for c in aggregate.SLOT_COLUMNS}
    return series_rows, StripPoints.from_rows(series_rows), desc_rows, slot_columns


# Below this many input rows per slot row the aggregation's map-side (partial) pass barely merges
# anything (p = 512 at 1e6 rows: ~0.5 rows per slot row) and only adds a hash map and a shuffle
# of as many rows: then Spark aggregates once after the shuffle (p = 512, 1e6 rows: 6.5 -> 5.9 s;
# at ~5 rows per slot row, 1e7, the partial pass still paid off).
BYPASS_RATIO = 2.5


@contextlib.contextmanager
def _partial_aggregation(spark: SparkSession, wanted: bool) -> Iterator[None]:
    """Run the block with Spark's partial aggregation on or off (bypassed), then restore."""
    key = "spark.sql.execution.bypassPartialAggregation"
    if wanted:
        yield
        return
    before = spark.conf.get(key, None)
    spark.conf.set(key, "true")
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


def run_analysis(
    spark: SparkSession,
    options: AnalysisOptions,
    progress: Progress | None = None,
    prepared: PreparedInputs | None = None,
) -> AnalysisResult:
    say = progress or (lambda _msg: None)
    inputs = load.resolve_inputs(list(options.inputs))
    plan: JobPlan | None = None
    plan_file = options.plan_path or (str(p) if (p := find_plan_beside(list(options.inputs))) else None)
    if plan_file:
        plan = load_plan(plan_file).with_max_parallelism(max_parallelism_beside(list(options.inputs)))
    warm_frac, warm_ms = parse_warmup(options.warmup)
    if options.slots >= (1 << aggregate.SLOT_BITS) - 1:
        # The slot aggregation packs the slot into SLOT_BITS bits of its key.
        raise UsageError(f"at most {(1 << aggregate.SLOT_BITS) - 2} time slots")
    filters = load.Filters(options.job, options.since_ms, options.until_ms)

    say("reading " + ", ".join(f"{len(i.paths)} {i.fmt}" for i in inputs))
    if prepared is None:
        prepared = prepare_inputs(inputs, _is_local(spark))
    prescanned = prepared.prescanned
    canon = load.load_canonical(
        spark, inputs, filters, keep_unread=True, prescanned=prescanned, converted=prepared.converted
    )
    try:
        lo, hi = _bounds(spark, canon, inputs, prepared)
        if options.since_ms is not None:
            lo = max(lo, options.since_ms)
        if options.until_ms is not None:
            hi = min(hi, options.until_ms)
        slot_ms = max(1, math.ceil((hi - lo + 1) / max(1, options.slots)))
        say("aggregating in one pass")
        one_job = [prescanned.get(i) for i in inputs]
        job_key = one_job[0].job_key if len(one_job) == 1 and one_job[0] is not None else None
        # The names of each subtask (job, vertex, task, TaskManager) come from the last two time
        # slots, keyed by the same hashes (a subtask silent there is looked up in the whole dump
        # below): a second, small Spark job alongside the big one (_arrow_and_names), or a branch
        # of it (_collect_spark). It shares two cores with the scan, so it reads as little as it can.
        desc_since = hi - 2 * slot_ms
        desc_df = aggregate.descriptors(canon, desc_since)
        known = prescanned.get(inputs[0]) if len(inputs) == 1 else None
        if known is not None and known.rows is not None and known.rows <= LOCAL_SLOTS_MAX_ROWS:
            keyed = aggregate.with_job_hash(aggregate.keyed_rows(canon, lo, slot_ms, job_key), job_key)
            collected = _collect_keyed(keyed, desc_df, warm_frac, warm_ms)
        else:
            bound = _slot_rows_bound(inputs, prescanned, options.slots)
            partial = (bound is None or known is None or known.rows is None
                       or known.rows > BYPASS_RATIO * bound)
            slots = aggregate.slot_stats(canon, lo, slot_ms, job_key)
            with _partial_aggregation(spark, partial):
                if bound is not None and bound <= LOCAL_FINISH_MAX_ROWS:
                    collected = _collect_local(slots, desc_df, warm_frac, warm_ms)
                else:
                    collected = _collect_spark(
                        slots, desc_df, warm_frac, warm_ms, options.timeline, options.windows
                    )
        series_rows, strip, desc_rows, slot_columns = collected
        desc = aggregate.pick_descriptors(desc_rows)
        if any(_dkey(r) not in desc for r in series_rows):
            # A subtask silent at the end of the window (finished, failed): look at all of it.
            everything = aggregate.descriptors(canon, None).collect()
            desc = aggregate.pick_descriptors([r.asDict() for r in everything])
        for r in series_rows:
            d = desc.get(_dkey(r), {})
            for c in ("job_key", "vertex_key", *aggregate.CARRIED):
                r[c] = d.get(c)
    except MetricsError:
        missing_job = _no_such_job(spark, options, inputs, prepared)
        if missing_job is not None:
            raise missing_job from None
        raise
    except Exception as error:
        raise MetricsError(
            f"cannot analyse the dump: {load._first_error_line(error)}", file=inputs[0].paths[0]
        ) from None
    series_rows, strips = from_series.meet_plan(series_rows, strip, plan)
    if not series_rows:
        missing_job = _no_such_job(spark, options, inputs, prepared)
        if missing_job is not None:
            raise missing_job
        raise MetricsError(
            "dump holds no rows of metrics flinktune reads (backPressuredTimeMsPerSecond, "
            "busyTimeMsPerSecond, outPoolUsage, ...) after filtering",
            file=inputs[0].paths[0],
        )
    say("diagnosing")
    diagnosed = from_series.diagnose_series(series_rows, strips, plan, options.env, options.scaling,
                                            options.version)
    jobs, series, subtasks = diagnosed.jobs, diagnosed.series, diagnosed.subtasks
    notes = () if plan_file else ("no job plan found",)
    timelines: dict[str, JobTimeline] = {}
    if options.timeline:
        from flinktune.analysis import timeline

        timelines = timeline.build(
            slot_columns, desc, lo, slot_ms, warm_frac, warm_ms, plan.id_for if plan is not None else None
        )
    windows: dict[str, JobWindows] = {}
    if options.windows:
        from flinktune.analysis import windows as window_figures

        remote = {(s.job_key, s.vertex_key, s.subtask_index) for s in subtasks if s.has_remote_input}
        rekey = plan.id_for if plan is not None else None
        windows = window_figures.build(slot_columns, desc, lo, slot_ms, warm_frac, warm_ms, rekey, remote)
    say("applying the analysis rules")
    findings = findings_for(jobs, options, inputs[0].paths[0])
    return AnalysisResult(
        jobs,
        plan_file,
        tuple(options.inputs),
        samples=sum(s.n for s in series),
        notes=notes,
        findings=tuple(findings),
        timelines=timelines,
        plan=plan,
        windows=windows,
    )


def _window_text(window: tuple[int, int] | None) -> str:
    if window is None:
        return "n/a"
    import datetime as dt

    def iso(ms: int) -> str:
        return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    return f"{iso(window[0])} .. {iso(window[1])} ({(window[1] - window[0]) / 1000:.0f} s)"


def findings_for(jobs: Sequence[JobDiagnosis], options: AnalysisOptions, file: str) -> list[Finding]:
    """Run the vertex rules (rules/analysis/FTA*.yaml plus --rules DIRs) over each job's facts;
    attach evidence (metrics, window, subtasks), the vertex as location and the confidence."""
    from flinktune.analysis.diagnose import vertex_items
    from flinktune.findings import Location
    from flinktune.rules import evaluate_items, load_rules

    ruleset = load_rules(options.rule_dirs)
    env = {
        "segment_bytes": options.segment_bytes,
        "bandwidth_bytes_per_s": options.env.bandwidth_bytes_per_s,
        "rtt_s": options.env.rtt_s,
    }
    out: list[Finding] = []
    for diag in jobs:
        for item in vertex_items(diag, options.segment_bytes):
            # One item per call, so each finding is known to belong to its vertex.
            for f in evaluate_items(ruleset, "vertex", [item], options.version, env, file):
                extra: list[tuple[str, str]] = [
                    ("vertex", str(item["name"])),
                    ("window", _window_text(diag.window_ms)),
                ]
                subs = item.get("busy_subtasks")
                if subs:
                    extra.append(("busy subtasks", ", ".join(str(x) for x in subs)))  # type: ignore[attr-defined]
                if item.get("evidence"):
                    extra.append(("evidence", str(item["evidence"])))
                conf = item.get("confidence")
                out.append(
                    record_replace(
                        f,
                        location=Location(file=file, key=str(item["name"])),
                        evidence=tuple(extra) + f.evidence,
                        confidence=float(conf) if isinstance(conf, int | float) else f.confidence,
                    )
                )
    return out


def analyze(
    options: AnalysisOptions,
    master: str = "local[*]",
    conf: dict[str, str] | None = None,
    progress: Progress | None = None,
    session: SparkSession | None = None,
    spark_log: bool = False,
) -> AnalysisResult:
    """Start (or reuse) a session and run the analysis (``spark_log``: Spark's own log on stderr)."""
    if session is not None:
        return run_analysis(session, options, progress)
    return analyze_all([options], master, conf, progress, spark_log)[0]


def analyze_all(
    runs: Sequence[AnalysisOptions],
    master: str = "local[*]",
    conf: dict[str, str] | None = None,
    progress: Progress | None = None,
    spark_log: bool = False,
) -> list[AnalysisResult]:
    """Start one session and analyse each of ``runs`` in it, in order (compare's two sides)."""
    from flinktune.spark.session import after_run, build_session

    say = progress or (lambda _msg: None)
    # Check the inputs and the plans before paying for a JVM.
    input_sets = [load.resolve_inputs(list(options.inputs)) for options in runs]
    for options in runs:
        if options.plan_path:
            load_plan(options.plan_path)
        parse_warmup(options.warmup)
    say(f"starting Spark ({master})")
    from concurrent.futures import ThreadPoolExecutor

    local = master.startswith("local")
    cancel = threading.Event()
    everything = [i for inputs in input_sets for i in inputs]
    # The footers and dictionaries are read, and local text converted to parquet, while the JVM
    # starts (pyarrow, releasing the GIL).
    pool = ThreadPoolExecutor(max_workers=1)
    session = None
    try:
        pending = [pool.submit(prepare_inputs, inputs, local, cancel) for inputs in input_sets]
        session = build_session(master, conf, input_bytes=_scan_bytes(everything, local), spark_log=spark_log)
        from flinktune.analysis import text_cache

        if not all(p.done() for p in pending) and any(text_cache.applies(i) for i in everything):
            say("converting text to parquet (once; kept for the next runs)")
        results = [
            run_analysis(session, options, progress, prepared.result())
            for options, prepared in zip(runs, pending, strict=True)
        ]
    except Exception:
        cancel.set()
        # A failed run starts no class-data archive build (the CLI's note says so); the class
        # list this JVM records is dropped.
        from flinktune.spark import class_cache

        with contextlib.suppress(Exception):
            class_cache.drop_recording(class_cache.locate())
        raise
    except BaseException:
        cancel.set()
        # Ctrl-C / SIGTERM: end the JVM this run started (and its temp folders); no cache build.
        from flinktune.spark.session import stop_started_processes

        stop_started_processes()
        raise
    finally:
        # A conversion notices the cancel between two pieces and removes its temporary file.
        pool.shutdown(wait=True)
    after_run(session)
    return results


def _scan_bytes(inputs: Sequence[load.InputSet], local: bool) -> int | None:
    """About the bytes Spark will scan (the driver's JIT mode depends on it): text inputs that are
    converted count as the parquet they become."""
    from flinktune.analysis import text_cache

    total = 0
    for inp in inputs:
        if local and text_cache.enabled() and text_cache.applies(inp):
            size = text_cache.estimated_scan_bytes(inp)
        else:
            size = load.local_input_bytes([inp])
        if size is None:
            return None
        total += size
    return total
