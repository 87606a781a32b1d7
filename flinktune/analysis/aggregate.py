"""The one pass over the data: every aggregate at once, in long form, per time slot.

1. ``slot_stats``: one groupBy over the canonical rows -> per (job, vertex, subtask, metric
   key, slot): count, sum, max, first/last value and time. This is the only step that
   touches all raw rows, and every key in it is fixed-width (hashes and ints); ``descriptors``
   reads the names (job, task, TaskManager) from the end of the window only.
2. ``series_stats``: over the (small) slot table: drop the warm-up, turn counters into rates
   with counter resets handled, and summarise each series.
   The per-slot means of the back-pressure and busy metrics ride along as a short list, so the
   time strip needs no second job.

Built-in functions only (no Python UDFs); the caller collects only the small outputs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flinktune.analysis import load, names

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

# A series is one metric of one subtask; ``mkey`` = metric index * RANK_SPAN + rank (load.metric_key).
# The slot table (slot_stats): one row per series and time slot.
SLOT_VALUES = ("n", "s", "mx", "t0", "t1", "v0", "v1")
SLOT_COLUMNS = ("job_hash", "vertex_hash", "subtask_index", "mkey", "slot", *SLOT_VALUES)
SERIES_KEYS = ("job_hash", "vertex_hash", "subtask_index", "metric", "rank")
CARRIED = ("job_id", "job_name", "vertex_id", "task_name", "tm_id")
STRIP_METRICS = (
    "backPressuredTimeMsPerSecond",
    "busyTimeMsPerSecond",
    "backPressureRatio",
    "isBackPressured",
)


# The subtask, metric key and slot of a row packed into one long for the aggregation (unpacked
# after it): one fixed-width key instead of three cuts the hash map of dumps with many series
# (measured: the slot aggregation of p = 512, 51,200 series, ~12% less JVM CPU).
SLOT_BITS = 20
MKEY_BITS = 12


def keyed_rows(df: DataFrame, origin_ms: int, slot_ms: int, job_key: str | None = None) -> DataFrame:
    """The raw rows as the slot aggregation groups them: (job_hash unless ``job_key``), vertex_hash,
    k (subtask, metric key and slot packed in one long, unpacked after grouping by slot_stats or
    slots_local.slot_table), ts and v (the value, null when NaN). Rows of metrics the analysis
    does not read have a null k."""
    assert len(names.METRICS) * names.RANK_SPAN <= 1 << MKEY_BITS
    # (SQL text: see load.JOB_KEY_SQL.) Integer division: floor for ts >= origin, and rows before
    # the origin are filtered out by the bounds; no double arithmetic per row. At most 2^20 slots.
    slot = f"((ts - {int(origin_ms)}) DIV {int(slot_ms)})"
    # subtask in the high 32 bits (signed), then mkey, then slot. A row of a metric the analysis
    # does not read has a null mkey, hence a null key: one group per vertex, dropped below.
    packed = (
        f"shiftleft(CAST(coalesce(subtask_index, 0) AS BIGINT), 32) "
        f"+ shiftleft(CAST(mkey AS BIGINT), {SLOT_BITS}) + {slot}"
    )
    job = [] if job_key is not None else ["job_hash"]
    return df.where(f"{load.VERTEX_KEY_SQL} IS NOT NULL").selectExpr(
        *job,
        "vertex_hash",
        f"{packed} AS k",
        "ts",
        # busyTimeMsPerSecond is NaN for some sources (e.g. SQL datagen): NaN is "not measured",
        # not a value, so it is dropped from every aggregate instead of poisoning the averages.
        "CASE WHEN NOT isnan(value) THEN value END AS v",
    )


def with_job_hash(df: DataFrame, job_key: str | None) -> DataFrame:
    """``df`` with the one job's hash in front (a literal Spark folds, hashed as descriptors() hashes
    the job key); as it is when ``job_key`` is None (the rows carry their own job_hash)."""
    from pyspark.sql import functions as F

    return df if job_key is None else df.select(F.xxhash64(F.lit(job_key)).alias("job_hash"), "*")


def slot_stats(df: DataFrame, origin_ms: int, slot_ms: int, job_key: str | None = None) -> DataFrame:
    """The one big aggregation: per series and time slot. ``job_key``: the dump's one job, when
    known (prescan.DumpNames.job_key); its hash is then added after the aggregation instead of
    being a (constant) grouping key of every row (~4% less aggregation CPU, measured at 5e7)."""
    from pyspark.sql import functions as F

    job = [] if job_key is not None else ["job_hash"]
    keyed = keyed_rows(df, origin_ms, slot_ms, job_key)
    # Job and vertex enter the aggregation as 64-bit hashes and the metric as an int, not
    # strings: text keys made this pass several times more expensive (measured,
    # benchmarks/results/analyze.md). The strings come back through descriptors(), keyed by
    # the same hashes, and through the metric index.
    # Rows of metrics the analysis does not read may come with a null key (load_canonical's
    # keep_unread): dropped here, after aggregating, so no row pays for a second name look-up.
    # The test names an aggregate (n is never negative) so that Spark cannot push it below the
    # aggregation as a filter on a grouping key, which would hash every name a second time.
    aggregated = (
        keyed.groupBy(*job, "vertex_hash", "k")
        .agg(
            *[
                F.expr(e)
                for e in (
                    "count(v) AS n",
                    "sum(v) AS s",
                    "max(v) AS mx",
                    "min(ts) AS t0",
                    "max(ts) AS t1",
                    "min_by(v, ts) AS v0",
                    "max_by(v, ts) AS v1",
                )
            ]
        )
        .where("k IS NOT NULL OR n < 0")
    )
    low = f"(k & {(1 << 32) - 1})"
    return with_job_hash(aggregated, job_key).selectExpr(
        "job_hash",
        "vertex_hash",
        "CAST(shiftright(k, 32) AS INT) AS subtask_index",
        f"CAST(shiftright({low}, {SLOT_BITS}) AS INT) AS mkey",
        f"CAST({low} & {(1 << SLOT_BITS) - 1} AS INT) AS slot",
        *SLOT_VALUES,
    )


def descriptors(df: DataFrame, since_ms: int | None) -> DataFrame:
    """The distinct names (job id and name, vertex id, task name, TaskManager) of each subtask,
    from the samples at or after ``since_ms`` (the end of the window: the current TaskManager
    after a restart; on a time-sorted parquet dump the filter skips most row groups). Grouped by
    every column, without aggregates: Spark hashes text keys but sorts for text aggregates
    (measured: a max() per column cost ~10 CPU-s at 5e7 rows). ``pick_descriptors`` reduces the
    few rows per subtask in Python."""
    rows = df if since_ms is None else df.where(f"ts >= {int(since_ms)}")
    # Distinct names first, hashes after: only the few distinct rows are hashed. (SQL text: see
    # load.JOB_KEY_SQL.)
    names_only = rows.where(f"{load.VERTEX_KEY_SQL} IS NOT NULL").selectExpr(
        "job_id", "job_name", "vertex_id", "task_name", "coalesce(subtask_index, 0) AS subtask_index", "tm_id"
    )
    return names_only.distinct().selectExpr(
        f"xxhash64({load.JOB_KEY_SQL}) AS job_hash",
        f"xxhash64({load.VERTEX_KEY_SQL}) AS vertex_hash",
        f"{load.JOB_KEY_SQL} AS job_key",
        f"{load.VERTEX_KEY_SQL} AS vertex_key",
        "subtask_index",
        *CARRIED,
    )


def pick_descriptors(rows: list[dict[str, object]]) -> dict[tuple[object, object, object], dict[str, object]]:
    """Per (job_hash, vertex_hash, subtask_index): the greatest non-null value of each name
    column among its distinct rows (one row unless a name changed within the window, e.g. the
    TaskManager after a restart)."""
    out: dict[tuple[object, object, object], dict[str, object]] = {}
    for r in rows:
        key = (r["job_hash"], r["vertex_hash"], r["subtask_index"])
        cur = out.setdefault(
            key,
            {"job_hash": key[0], "vertex_hash": key[1], "subtask_index": key[2]}
            | dict.fromkeys(("job_key", "vertex_key", *CARRIED)),
        )
        for c in ("job_key", "vertex_key", *CARRIED):
            v = r.get(c)
            if v is not None and (cur.get(c) is None or str(v) > str(cur[c])):
                cur[c] = v
    return out


def trim_warmup(slots: DataFrame, warmup_fraction: float, warmup_ms: int | None) -> DataFrame:
    """Drop the slots that end before the warm-up cut of their job (a fraction of the job's
    observed span, or a fixed duration): start-up transients and the 60 s ramp of Flink's
    ``...PerSecond`` meters would otherwise count as load."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    w = Window.partitionBy("job_hash")
    start = F.min("t0").over(w)
    end = F.max("t1").over(w)
    cut = start + (F.lit(warmup_ms) if warmup_ms is not None else (end - start) * F.lit(warmup_fraction))
    # A slot is kept when its last sample is at or after the cut (one-scrape dumps keep it all).
    return slots.withColumn("_cut", cut).where(F.col("t1") >= F.col("_cut")).drop("_cut")


def series_stats(slots: DataFrame) -> DataFrame:
    """Per series: mean, max, share of samples above the two thresholds (judged per slot), and
    for counters the rate per second with resets handled. Within a slot a reset shows as a last
    value below the slot's max (delta = max - first + last); across slots as a first value below
    the previous slot's last (delta = first)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    # The metric and its rank come back from the int key (small table: one row per series and slot).
    metric, rank = load.metric_of_key("mkey")
    slots = slots.selectExpr("*", f"{metric} AS metric", f"{rank} AS rank").drop("mkey")
    # t0 breaks ties: a restart onto another TaskManager gives two rows in one slot (tm_id differs).
    w = Window.partitionBy(*SERIES_KEYS).orderBy("slot", "t0")
    prev_last = F.lag("v1").over(w)
    in_slot = F.when(F.col("v1") < F.col("mx"), F.col("mx") - F.col("v0") + F.col("v1")).otherwise(
        F.col("v1") - F.col("v0")
    )
    across = (
        F.when(prev_last.isNull(), F.lit(0.0))
        .when(F.col("v0") >= prev_last, F.col("v0") - prev_last)
        .otherwise(F.col("v0"))
    )
    lo_map = F.create_map(*[x for k, (lo, _) in names.THRESHOLDS.items() for x in (F.lit(k), F.lit(lo))])
    hi_map = F.create_map(*[x for k, (_, hi) in names.THRESHOLDS.items() for x in (F.lit(k), F.lit(hi))])
    slot_mean = F.col("s") / F.col("n")
    valued = F.col("n") > 0
    # The time a slot covers: up to the next slot's first sample; the last slot, its own span
    # stretched by one of its steps (n samples cover n steps), unknown when it holds one sample.
    covered = F.coalesce(
        F.lead("t0").over(w) - F.col("t0"),
        F.when(F.col("n") > 1, (F.col("t1") - F.col("t0")) * F.col("n") / (F.col("n") - F.lit(1))),
    )
    with_delta = slots.withColumn(
        "delta", F.coalesce(in_slot, F.lit(0.0)) + F.coalesce(across, F.lit(0.0))
    ).withColumn("_covered", covered)
    covered = F.col("_covered")
    agg = with_delta.groupBy(*SERIES_KEYS).agg(
        F.sum("n").alias("n"),
        (F.sum("s") / F.sum("n")).alias("mean"),
        F.max("mx").alias("max"),
        # Shares of samples above the two thresholds, judged per time slot (the slot's mean), so
        # the raw pass needs no per-row threshold look-up.
        (F.sum(F.when(slot_mean > lo_map[F.col("metric")], F.col("n")).otherwise(0)) / F.sum("n")).alias(
            "frac_lo"
        ),
        (F.sum(F.when(slot_mean > hi_map[F.col("metric")], F.col("n")).otherwise(0)) / F.sum("n")).alias(
            "frac_hi"
        ),
        F.sum("delta").alias("delta"),
        F.min("t0").alias("t_first"),
        F.max("t1").alias("t_last"),
        F.count("slot").alias("slots"),
        # The time-weighted mean's parts (tw_mean below): per slot with values, its mean weighted
        # by the time it covers; a last slot of one sample gets the series' mean step after.
        F.sum(F.when(valued & covered.isNotNull(), slot_mean * covered)).alias("_tw_a"),
        F.sum(F.when(valued & covered.isNotNull(), covered)).alias("_tw_c"),
        F.sum(F.when(valued & covered.isNull(), slot_mean)).alias("_tw_b"),
        F.sum(F.when(valued & covered.isNull(), F.lit(1))).alias("_tw_k"),
        # A level's net change (names.LEVELS): its last value less its first.
        (F.max_by("v1", "slot") - F.min_by("v0", "slot")).alias("_level_delta"),
        # The time strip rides along: per series, each slot's mean (only for the strip metrics).
        F.collect_list(
            F.when(
                F.col("metric").isin(list(STRIP_METRICS)) & (F.col("n") > 0),
                F.struct(F.col("slot"), (F.col("s") / F.col("n")).alias("mean")),
            )
        ).alias("strip"),
    )
    span_s = (F.col("t_last") - F.col("t_first")) / F.lit(1000.0)
    is_counter = F.col("metric").isin(list(names.COUNTERS))
    is_level = F.col("metric").isin(list(names.LEVELS))
    # tw_mean: each slot's mean weighted by the time it covers (a sample holds until the next). With
    # regular sampling a slot of n samples covers n steps and tw_mean equals the sample mean; with
    # irregular sampling (polls delayed, two collectors merged) a burst of samples no longer
    # outweighs the time it covers. Within a slot the samples weigh the same.
    step = (F.col("t_last") - F.col("t_first")) / (F.col("n") - F.lit(1))
    part = {c: F.coalesce(F.col(c), F.lit(0)) for c in ("_tw_a", "_tw_b", "_tw_c", "_tw_k")}
    tw = (part["_tw_a"] + step * part["_tw_b"]) / (part["_tw_c"] + step * part["_tw_k"])
    return (
        agg.withColumn(
            "rate",
            F.when(is_counter & (span_s > 0), F.col("delta") / span_s).when(
                is_level & (span_s > 0), F.col("_level_delta") / span_s
            ),
        )
        .withColumn("tw_mean", F.when((F.col("n") > 1) & (F.col("t_last") > F.col("t_first")), tw)
                    .otherwise(F.col("mean")))
        .drop("_tw_a", "_tw_b", "_tw_c", "_tw_k", "_level_delta")
    )
