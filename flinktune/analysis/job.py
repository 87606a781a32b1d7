"""The job entry: one Spark pass over the dump, then pure-Python diagnosis of the small result.

Spark actions: at most one cheap bounds query (skipped for local parquet, whose footers carry
the ``ts`` range), then one job that scans once and returns one row per series (subtask x
metric), with the time strip riding along. Raw rows never reach the driver.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flinktune.analysis import aggregate, load, names
from flinktune.analysis.diagnose import DEFAULT_SEGMENT_BYTES, JobDiagnosis, build_vertices, diagnose_job
from flinktune.analysis.facts import bp_level, pivot_subtasks, series_from_rows
from flinktune.analysis.plan import JobPlan, find_plan_beside, load_plan
from flinktune.analysis.timeline import JobTimeline
from flinktune.errors import MetricsError, UsageError
from flinktune.findings import Finding
from flinktune.situation.environment import Environment
from flinktune.versions import DEFAULT_VERSION, FlinkVersion

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

Progress = Callable[[str], None]

DEFAULT_SLOTS = 40
# Slot tables up to this many rows (bounded from the parquet footers before the run) are
# summarised in numpy on the driver (series_local.py) instead of in four more Spark stages.
LOCAL_FINISH_MAX_ROWS = 1_000_000


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
    from flinktune.units import parse_duration

    try:
        return 0.0, int(parse_duration(t).ms)
    except Exception:
        raise UsageError(f"--warmup {text}: expected a share like 10% or a duration like 30s") from None


def jobs_in_dump(
    spark: SparkSession,
    inputs: Sequence[load.InputSet],
    prescanned: dict[load.InputSet, load.DumpNames | None] | None = None,
    limit: int = 20,
) -> list[str]:
    """The jobs a dump holds (name, with the id when both are known), for the message when
    ``--job`` matches none of them. Runs only on that error path."""
    df = load.load_canonical(spark, inputs, load.Filters(), prescanned=prescanned)
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
    prescanned: dict[load.InputSet, load.DumpNames | None] | None,
) -> MetricsError | None:
    """With ``--job`` set and nothing left after filtering: the error that lists the dump's jobs."""
    if not options.job:
        return None
    try:
        held = jobs_in_dump(spark, inputs, prescanned)
    except Exception:  # the listing is a courtesy; the plain error still stands
        return None
    listed = ", ".join(held) if held else "none (the dump has no job_id/job_name columns)"
    return MetricsError(f"no job '{options.job}' in the dump; it holds: {listed}", file=inputs[0].paths[0])


def _bounds(spark: SparkSession, df, inputs: Sequence[load.InputSet]) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    if all(i.fmt == "parquet" for i in inputs):
        found = [load.check_parquet(i.paths) for i in inputs]
        if all(f is not None for f in found):
            return min(f[0] for f in found if f), max(f[1] for f in found if f)
    row = df.agg(F.min("ts").alias("lo"), F.max("ts").alias("hi")).collect()[0]
    if row["lo"] is None:
        raise MetricsError(
            "dump holds no rows of metrics flinktune reads (after --job/--since/--until)",
            file=inputs[0].paths[0],
        )
    return int(row["lo"]), int(row["hi"])


STRIP_CHARS = {"OK": "·", "LOW": "▒", "HIGH": "█", "unknown": " "}


def _strip(values: dict[int, float], nslots: int, scale: float) -> str:
    out = []
    last = " "
    for i in range(nslots):
        v = values.get(i)
        # Slots finer than the sampling interval are empty: carry the last sample forward.
        if v is not None and not math.isnan(v):
            last = STRIP_CHARS[bp_level(v / scale)]
        out.append(last)
    return "".join(out)


def _slot_rows_bound(
    inputs: Sequence[load.InputSet], prescanned: dict[load.InputSet, load.DumpNames | None], slots: int
) -> int | None:
    """Most rows the slot table can have, from the footers of a single local parquet input."""
    if len(inputs) != 1:
        return None
    known = prescanned.get(inputs[0])
    if known is None or known.series_bound is None:
        return None
    return known.series_bound * (slots + 1)


def prescan_inputs(inputs: Sequence[load.InputSet]) -> dict[load.InputSet, load.DumpNames | None]:
    """load.prescan for every parquet input (pure pyarrow: runs while the JVM starts). A file it
    cannot read is left to the Spark path, which reports it in one line."""
    out: dict[load.InputSet, load.DumpNames | None] = {}
    for inp in inputs:
        try:
            out[inp] = load.prescan(inp)
        except Exception:  # corrupt or odd files: no fast path, Spark's reader says what is wrong
            out[inp] = None
    return out


def timeline_slots(slots: DataFrame) -> DataFrame:
    """The slot rows of the timeline gauges only (a few per subtask and slot), tagged "tl"."""
    from pyspark.sql import functions as F

    from flinktune.analysis.timeline import METRIC_INDEXES

    index = F.expr(f"mkey DIV {names.RANK_SPAN}")
    return slots.where(index.isin(list(METRIC_INDEXES))).select(
        "job_hash", "vertex_hash", "subtask_index", "mkey", "slot", "n", "s", "t0", "t1"
    ).withColumn("kind", F.lit("tl"))


def _collect_local(
    slots_df: DataFrame, desc_df: DataFrame, warm_frac: float, warm_ms: int | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """One Spark action: the slot table and the descriptors as Arrow; the series summary in numpy.
    The slot columns come back too (the time series of the HTML report read them)."""
    import pyarrow.compute as pc
    from pyspark.sql import functions as F

    from flinktune.analysis import series_local

    table = (
        slots_df.withColumn("kind", F.lit("slot")).unionByName(desc_df, allowMissingColumns=True).toArrow()
    )
    is_slot = pc.equal(table["kind"], "slot")
    slot_t = table.filter(is_slot)
    columns = {c: slot_t[c].to_numpy(zero_copy_only=False) for c in series_local.SLOT_COLUMNS}
    rows = series_local.series_rows(columns, warm_frac, warm_ms)
    desc_t = table.filter(pc.invert(is_slot))
    desc_cols = ["job_hash", "vertex_hash", "subtask_index", "job_key", "vertex_key", *aggregate.CARRIED]
    return rows, desc_t.select(desc_cols).to_pylist(), columns


def run_analysis(
    spark: SparkSession,
    options: AnalysisOptions,
    progress: Progress | None = None,
    prescanned: dict[load.InputSet, load.DumpNames | None] | None = None,
) -> AnalysisResult:
    say = progress or (lambda _msg: None)
    inputs = load.resolve_inputs(list(options.inputs))
    plan: JobPlan | None = None
    plan_file = options.plan_path or (str(p) if (p := find_plan_beside(list(options.inputs))) else None)
    if plan_file:
        plan = load_plan(plan_file)
    warm_frac, warm_ms = parse_warmup(options.warmup)
    filters = load.Filters(options.job, options.since_ms, options.until_ms)
    from pyspark.sql import functions as F

    say("reading " + ", ".join(f"{len(i.paths)} {i.fmt}" for i in inputs))
    if prescanned is None:
        prescanned = prescan_inputs(inputs)
    canon = load.load_canonical(spark, inputs, filters, keep_unread=True, prescanned=prescanned)
    try:
        lo, hi = _bounds(spark, canon, inputs)
        if options.since_ms is not None:
            lo = max(lo, options.since_ms)
        if options.until_ms is not None:
            hi = min(hi, options.until_ms)
        slot_ms = max(1, math.ceil((hi - lo + 1) / max(1, options.slots)))
        say("aggregating in one pass")
        slots = aggregate.slot_stats(canon, lo, slot_ms)
        # The names of each subtask (job, vertex, task, TaskManager) come from the last two time
        # slots in a second branch of the same job, keyed by the same hashes (a subtask silent
        # there is looked up in the whole dump below). Its tasks queue behind the scan's on a
        # small machine, so it reads as little as it can.
        desc_since = hi - 2 * slot_ms
        desc_df = aggregate.descriptors(canon, desc_since).withColumn("kind", F.lit("desc"))
        bound = _slot_rows_bound(inputs, prescanned, options.slots)
        if bound is not None and bound <= LOCAL_FINISH_MAX_ROWS:
            series_rows, desc_rows, slot_columns = _collect_local(slots, desc_df, warm_frac, warm_ms)
        else:
            # One Spark job: scan, slot aggregation, warm-up trim, per-series summary, names.
            trimmed = aggregate.trim_warmup(slots, warm_frac, warm_ms)
            series_df = aggregate.series_stats(trimmed).withColumn("kind", F.lit("series"))
            union = series_df.unionByName(desc_df, allowMissingColumns=True)
            if options.timeline:
                # The few timeline gauges of the slot table ride along in the same job.
                union = union.unionByName(timeline_slots(slots), allowMissingColumns=True)
            rows = [r.asDict(recursive=True) for r in union.collect()]
            series_rows = [r for r in rows if r["kind"] == "series"]
            desc_rows = [r for r in rows if r["kind"] == "desc"]
            tl_rows = [r for r in rows if r["kind"] == "tl"]
            slot_columns = {c: [r[c] for r in tl_rows] for c in ("job_hash", "vertex_hash", "subtask_index",
                                                                 "mkey", "slot", "n", "s", "t0", "t1")}
        desc = aggregate.pick_descriptors(desc_rows)
        if any(_dkey(r) not in desc for r in series_rows):
            # A subtask silent at the end of the window (finished, failed): look at all of it.
            everything = aggregate.descriptors(canon, None).collect()
            desc = aggregate.pick_descriptors([r.asDict() for r in everything])
        for r in series_rows:
            d = desc.get(_dkey(r), {})
            for c in ("job_key", "vertex_key", *aggregate.CARRIED):
                r[c] = d.get(c)
        series_rows = [r for r in series_rows if r["vertex_key"] is not None]
    except MetricsError:
        missing_job = _no_such_job(spark, options, inputs, prescanned)
        if missing_job is not None:
            raise missing_job from None
        raise
    except Exception as error:
        raise MetricsError(
            f"cannot analyse the dump: {load._first_error_line(error)}", file=inputs[0].paths[0]
        ) from None
    if not series_rows:
        missing_job = _no_such_job(spark, options, inputs, prescanned)
        if missing_job is not None:
            raise missing_job
        raise MetricsError(
            "dump holds no rows of metrics flinktune reads (backPressuredTimeMsPerSecond, "
            "busyTimeMsPerSecond, outPoolUsage, ...) after filtering",
            file=inputs[0].paths[0],
        )
    say("diagnosing")
    series = series_from_rows(series_rows)
    if plan is not None:
        # Dumps that name vertices only by task name (full identifiers, some exporters) still
        # meet the plan: re-key them by the plan's vertex id.
        ids = {s.vertex_key: plan.id_for(s.vertex_key) for s in series}
        series = [
            dataclasses.replace(s, vertex_key=ids[s.vertex_key]) if ids[s.vertex_key] else s for s in series
        ]
    subtasks = pivot_subtasks(series)
    seen_names: dict[tuple[str, str], str] = {}
    job_ids: dict[str, tuple[str | None, str | None]] = {}
    for s in series:
        if s.task_name:
            seen_names.setdefault((s.job_key, s.vertex_key), s.task_name)
        cur = job_ids.get(s.job_key, (None, None))
        job_ids[s.job_key] = (cur[0] or s.job_id, cur[1] or s.job_name)
    by_job = build_vertices(subtasks, plan, seen_names)
    # Per vertex and slot: the worst subtask, best naming rank first.
    strip_best: dict[tuple[str, str, str, int], tuple[int, float]] = {}
    for st, row in zip(series, series_rows, strict=True):
        for point in row.get("strip") or ():
            k = (st.job_key, st.vertex_key, st.metric, int(point["slot"]))
            val = float(point["mean"])
            cur = strip_best.get(k)
            if cur is None or st.rank < cur[0] or (st.rank == cur[0] and val > cur[1]):
                strip_best[k] = (st.rank, val)
    slot_ids = sorted({k[3] for k in strip_best})
    first_slot = slot_ids[0] if slot_ids else 0
    nslots = (slot_ids[-1] - first_slot + 1) if slot_ids else 0
    jobs = []
    for job_key, vertices in sorted(by_job.items()):
        strips: dict[str, tuple[str, str]] = {}
        for v in vertices:

            def vals(metric: str, vkey: str = v.vertex_key, jk: str = job_key) -> dict[int, float]:
                return {
                    k[3] - first_slot: val
                    for k, (_, val) in strip_best.items()
                    if k[0] == jk and k[1] == vkey and k[2] == metric
                }

            bp_vals = vals("backPressuredTimeMsPerSecond")
            bp_scale = 1000.0
            if not bp_vals:
                bp_vals, bp_scale = vals("backPressureRatio"), 1.0
            strips[v.vertex_key] = (
                _strip(bp_vals, nslots, bp_scale),
                _strip(vals("busyTimeMsPerSecond"), nslots, 1000.0),
            )
        jid, jname = job_ids.get(job_key, (None, None))
        mine = [s for s in series if s.job_key == job_key and s.t_first is not None and s.t_last is not None]
        window = (min(s.t_first for s in mine), max(s.t_last for s in mine)) if mine else None  # type: ignore[type-var]
        job_plan = plan if plan is None or not plan.job_id or plan.job_id in (jid, job_key) else None
        jobs.append(
            diagnose_job(
                job_key,
                vertices,
                job_plan if job_plan else (plan if len(by_job) == 1 else None),
                options.env,
                jid,
                jname,
                strips,
                window,
            )
        )  # type: ignore[arg-type]
    notes = () if plan_file else ("no job plan found",)
    timelines: dict[str, JobTimeline] = {}
    if options.timeline:
        from flinktune.analysis import timeline

        timelines = timeline.build(
            slot_columns, desc, lo, slot_ms, warm_frac, warm_ms, plan.id_for if plan is not None else None
        )
    say("applying the analysis rules")
    findings = findings_for(jobs, options, inputs[0].paths[0])
    return AnalysisResult(
        tuple(jobs),
        plan_file,
        tuple(options.inputs),
        samples=sum(s.n for s in series),
        notes=notes,
        findings=tuple(findings),
        timelines=timelines,
        plan=plan,
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
                    dataclasses.replace(
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
) -> AnalysisResult:
    """Start (or reuse) a session and run the analysis."""
    from flinktune.analysis.session import after_run, build_session

    say = progress or (lambda _msg: None)
    if session is not None:
        return run_analysis(session, options, progress)
    # Check the inputs and the plan before paying for a JVM.
    inputs = load.resolve_inputs(list(options.inputs))
    if options.plan_path:
        load_plan(options.plan_path)
    parse_warmup(options.warmup)
    say(f"starting Spark ({master})")
    from concurrent.futures import ThreadPoolExecutor

    session = None
    try:
        # The footers and dictionaries are read (pyarrow) while the JVM starts.
        with ThreadPoolExecutor(max_workers=1) as pool:
            pending = pool.submit(prescan_inputs, inputs)
            session = build_session(master, conf, input_bytes=load.local_input_bytes(inputs))
            prescanned = pending.result()
        result = run_analysis(session, options, progress, prescanned)
    except Exception:
        # A run that failed starts no background work: its class list is dropped, and the next
        # run that succeeds records one and starts the archive build (and says so).
        from flinktune.analysis import class_cache

        class_cache.drop_recording(class_cache.locate())
        raise
    except BaseException:
        # Ctrl-C / SIGTERM: end the JVM this run started (and its temp folders); no cache build.
        from flinktune.analysis.session import stop_started_processes

        stop_started_processes()
        raise
    after_run(session)
    return result
