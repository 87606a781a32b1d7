"""Reading a metrics dump of any accepted shape into the canonical long table.

Accepted (DESIGN.md, docs/metrics-schema.md): every format of ``analysis/readers`` (parquet, CSV,
JSON lines, Prometheus scrapes and query_range answers), as a file, a folder (partitioned datasets
too) or a glob; the canonical long table, REST ids
(``Shuffle.Netty.Output.Buffers.outPoolUsage``, ``buffers.outPoolUsage``), full Flink metric
identifiers, Prometheus names (with labels inline or as columns), wide tables with one column per
metric, and the Prometheus text exposition format (``.prom``/``.txt``, gzipped or not).

Every transform here is DataFrame -> DataFrame with built-in functions only (no Python UDFs):
the names are normalised row by row by Spark itself, so nothing but aggregates reaches Python.
Schemas are explicit: parquet's comes from its footer, CSV's and JSON's are built from the
header / first record, never inferred from the data.

Over 500 lines: discovery, every shape's normalisation to the canonical table and the hashed-name
rows are one contract with the analysis (the readers and the pyarrow prescan are modules of their
own).
"""

from __future__ import annotations

import glob as globmod
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from flinktune.analysis import names, readers
from flinktune.analysis.prescan import DumpNames, prescan
from flinktune.analysis.readers import is_remote
from flinktune.errors import MetricsError
from flinktune.globbing import symlink_loop

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


# JSON files beside a dump that are not metrics.
SIDE_FILES = {"plan.json", "ground_truth.json", "job-vertices.json"}




@dataclass(frozen=True)
class InputSet:
    """Paths of one format, read together."""

    fmt: str  # a reader's NAME (analysis/readers)
    paths: tuple[str, ...]


@dataclass(frozen=True)
class Filters:
    job: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None




def resolve_inputs(items: Sequence[str]) -> list[InputSet]:
    """Expand files, folders and globs; group by format. A folder contributes its metrics files
    of one format (parquet first), so a dump folder with a plan.json and a Prometheus sample
    beside the parquet reads just the parquet."""
    by_fmt: dict[str, list[str]] = {}
    for item in items:
        if is_remote(item):
            fmt = readers.format_of(item.rstrip("/")) or "parquet"
            by_fmt.setdefault(fmt, []).append(item)
            continue
        if any(ch in item for ch in "*?["):
            loop = symlink_loop(item) if "**" in item else None
            if loop is not None:
                # glob's '**' follows symlinked folders and never ends in a loop (exponentially so).
                raise MetricsError(
                    f"'**' would not end: {loop} is a symlink loop; name the folder instead", file=item
                )
            matched = sorted(globmod.glob(item, recursive=True))
            if not matched:
                raise MetricsError("no file matches this pattern", file=item)
            for m in matched:
                if os.path.isfile(m) and os.path.basename(m) not in SIDE_FILES:
                    fmt = readers.format_of(m)
                    if fmt is None:
                        continue
                    by_fmt.setdefault(fmt, []).append(m)
            continue
        p = Path(item)
        if p.is_dir():
            found: dict[str, list[str]] = {}
            for f in sorted(p.rglob("*")):
                if f.is_file() and f.name not in SIDE_FILES and not f.name.startswith((".", "_")):
                    fmt = readers.format_of(f.name)
                    if fmt is not None:
                        found.setdefault(fmt, []).append(str(f))
            for fmt in readers.folder_order():
                if fmt in found:
                    # Parquet folders are passed whole so Spark discovers k=v partitions.
                    paths = [str(p)] if fmt == "parquet" else found[fmt]
                    by_fmt.setdefault(fmt, []).extend(paths)
                    break
            else:
                raise MetricsError(f"folder holds no metrics file ({readers.labels()})", file=str(p))
        elif p.is_file():
            fmt = readers.format_of(p.name)
            if fmt is None:
                raise MetricsError(
                    f"unknown dump format (expected one of {readers.labels()}, or a Prometheus query_range "
                    "answer as .json)",
                    file=str(p),
                )
            by_fmt.setdefault(fmt, []).append(str(p))
        else:
            raise MetricsError("no such file or folder", file=item)
    if not by_fmt:
        raise MetricsError("no metrics files to read")
    by_fmt = readers.refine(by_fmt)
    return [InputSet(fmt, tuple(paths)) for fmt, paths in by_fmt.items()]


def local_input_bytes(inputs: Sequence[InputSet]) -> int | None:
    """Total size of the dump's files on local disk; None when any part is remote."""
    total = 0
    try:
        for inp in inputs:
            for p in inp.paths:
                if is_remote(p) or p.startswith("file:"):
                    return None
                if os.path.isdir(p):
                    total += sum(f.stat().st_size for f in Path(p).rglob("*") if f.is_file())
                else:
                    total += os.path.getsize(p)
    except OSError:
        return None
    return total

def read_raw(
    spark: SparkSession, inputs: Sequence[InputSet], converted: Mapping[InputSet, Sequence[str]] | None = None
) -> list[DataFrame]:
    """One DataFrame per input set, in its own columns (not yet canonical). ``converted``: parquet
    files standing in for text inputs (text_cache.py), read instead of the text with the schema
    Spark's text reader would give."""
    frames = []
    for inp in inputs:
        try:
            stand_in = converted.get(inp) if converted is not None else None
            if stand_in is not None:
                frames.append(readers.reader("parquet").read(spark, tuple(stand_in)))
            else:
                frames.append(readers.reader(inp.fmt).read(spark, inp.paths))
        except MetricsError:
            raise
        except Exception as error:  # AnalysisException, Py4JJavaError: keep the first line only
            raise MetricsError(
                f"cannot read {inp.fmt} dump: {_first_error_line(error)}", file=inp.paths[0]
            ) from None
    return frames


def _first_error_line(error: BaseException) -> str:
    text = str(error).strip()
    for line in text.splitlines():
        line = line.strip().lstrip(": ")
        # py4j's own first line ("An error occurred while calling o750.collectToPython.") names no cause.
        if line and not line.startswith(("JVM stacktrace", "at ", "py4j", "An error occurred while calling")):
            return line[:300]
    return type(error).__name__


# --- normalisation -------------------------------------------------------------------------

_GROUP_RE = r"((?:Shuffle\.Netty\.(?:Input\.Buffers|Output\.Buffers|Input)\.|buffers\.)?)([A-Za-z]+)"
# <host>.taskmanager.<tm_id>.<job_name>.<task_name>.<subtask_index>.<group><metric>; tm ids of
# standalone clusters look like 10.0.0.1:40143-b0f767 (dots), container ids have none.
_FULL_ID_RE = (
    r"^(.+?)\.taskmanager\.(\d+\.\d+\.\d+\.\d+:\d+-[0-9a-fA-F]+|[^.]+)\.([^.]+)\.(.+)\.(\d+)\."
    + _GROUP_RE
    + "$"
)
_REST_RE = "^" + _GROUP_RE + "$"


def _rank_of_group(group: Column) -> Column:
    from pyspark.sql import functions as F

    expr = None
    for prefix, rank in names.GROUP_RANK.items():
        cond = group == F.lit(prefix)
        expr = F.when(cond, F.lit(rank)) if expr is None else expr.when(cond, F.lit(rank))
    assert expr is not None
    return expr


def find_column(columns: Sequence[str], canonical: str) -> str | None:
    lower = {c.lower(): c for c in columns}
    for syn in names.COLUMN_SYNONYMS.get(canonical, (canonical,)):
        if syn.lower() in lower:
            return lower[syn.lower()]
    return None


def _check_types(df: DataFrame, source: str) -> None:
    """Parquet and JSON carry types; reject ones we cannot use (CSV is all text by design)."""
    numeric = ("int", "bigint", "smallint", "tinyint", "double", "float", "decimal", "long")
    types = dict(df.dtypes)
    ts = find_column(df.columns, "ts")
    if ts is not None and not (
        types[ts].startswith(numeric) or types[ts].startswith("timestamp") or types[ts] == "string"
    ):
        raise MetricsError(
            f"column '{ts}' has type {types[ts]}, expected epoch milliseconds or a timestamp", file=source
        )
    val = find_column(df.columns, "value")
    if val is not None and not (types[val].startswith(numeric) or types[val] == "string"):
        raise MetricsError(f"column '{val}' has type {types[val]}, expected a number", file=source)
    text_values = source.lower().endswith(readers.reader("csv").EXTENSIONS)    # CSV columns are read as text
    if val is not None and types[val] == "string" and not text_values:
        raise MetricsError(f"column '{val}' holds text, expected a number", file=source)


def _ts_ms(col: Column, dtype: str) -> Column:
    from pyspark.sql import functions as F

    if dtype.startswith("timestamp"):
        return F.unix_millis(col)
    if dtype == "string":
        as_num = col.cast("double")
        return F.when(
            as_num.isNotNull(), F.when(as_num < 1e11, as_num * 1000).otherwise(as_num).cast("bigint")
        ).otherwise(F.unix_millis(F.to_timestamp(col)))
    if dtype in ("double", "float") or dtype.startswith("decimal"):
        # Prometheus and many exporters write seconds as a float.
        return F.when(col < 1e11, col * 1000).otherwise(col).cast("bigint")
    return col.cast("bigint")


def to_canonical(df: DataFrame, source: str) -> DataFrame:
    """Any accepted table shape -> (ts, job_id, job_name, vertex_id, task_name, subtask_index,
    tm_id, metric, rank, value), ``metric`` canonical, rows of metrics we do not read dropped."""
    from pyspark.sql import functions as F

    if not df.columns:
        raise MetricsError("dump has no columns", file=source)
    _check_types(df, source)
    metric_col = find_column(df.columns, "metric")
    value_col = find_column(df.columns, "value")
    ts_col = find_column(df.columns, "ts")
    if ts_col is None:
        raise MetricsError(
            "dump has no timestamp column (expected 'ts' in epoch ms, or 'timestamp')", file=source
        )
    types = dict(df.dtypes)
    if metric_col is None or value_col is None:
        df = _unpivot_wide(df, source, ts_col)
        metric_col, value_col = "metric", "value"
        types = dict(df.dtypes)

    def opt(canonical: str) -> Column:
        name = find_column(df.columns, canonical)
        return F.col(name).cast("string") if name is not None else F.lit(None).cast("string")

    raw = F.col(metric_col).cast("string")
    base_name = F.substring_index(raw, "{", 1)
    labels = F.when(raw.contains("{"), F.regexp_extract(raw, r"\{(.*)\}", 1))

    def label(key: str) -> Column:
        return F.nullif(F.regexp_extract(labels, key + r'="([^"]*)"', 1), F.lit(""))

    sub_col = find_column(df.columns, "subtask_index")
    subtask = F.col(sub_col).cast("int") if sub_col is not None else F.lit(None).cast("int")
    out = df.select(
        _ts_ms(F.col(ts_col), types[ts_col]).alias("ts"),
        F.coalesce(opt("job_id"), label("job_id")).alias("job_id"),
        F.coalesce(opt("job_name"), label("job_name")).alias("job_name"),
        F.coalesce(opt("vertex_id"), label("task_id")).alias("vertex_id"),
        F.coalesce(opt("task_name"), label("task_name")).alias("task_name"),
        F.coalesce(subtask, label("subtask_index").cast("int")).alias("subtask_index"),
        F.coalesce(opt("tm_id"), label("tm_id")).alias("tm_id"),
        base_name.alias("_name"),
        F.col(value_col).cast("double").alias("value"),
    )
    return with_keys(normalise_names(out))


# Expressions are built as SQL text where they are long: each pyspark function call is several
# py4j round trips into the JVM (~3,000 per analysis, ~0.5 s of a 1e6-row run, measured), one
# F.expr() is a few. The expressions Spark plans are the same.
JOB_KEY_SQL: Final[str] = "coalesce(job_id, job_name, '')"
VERTEX_KEY_SQL: Final[str] = "coalesce(vertex_id, task_name)"


def sql_text(value: str) -> str:
    """A Spark SQL string literal (backslash escapes, Spark's default)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def job_key() -> Column:
    """A sample's job: its id, else its name, else '' (one unnamed job)."""
    from pyspark.sql import functions as F

    return F.expr(JOB_KEY_SQL)


def vertex_key() -> Column:
    """A sample's vertex: its id, else its task name (null: the sample names no vertex)."""
    from pyspark.sql import functions as F

    return F.expr(VERTEX_KEY_SQL)


def series_hashes(job: Column, vertex: Column) -> tuple[Column, Column]:
    """``job_hash`` and ``vertex_hash``: the 64-bit keys the aggregation groups by instead of
    text. Each string is hashed on its own (a series is keyed by both), so a job key known to be
    constant (one job in the dump) folds to a literal and costs nothing per row."""
    from pyspark.sql import functions as F

    return F.xxhash64(job).alias("job_hash"), F.xxhash64(vertex).alias("vertex_hash")


def with_keys(df: DataFrame) -> DataFrame:
    """Add the aggregation keys (``mkey``, ``job_hash``, ``vertex_hash``) to canonical rows."""
    from pyspark.sql import functions as F

    return df.select(
        "*",
        metric_key(F.col("metric"), F.col("rank")).alias("mkey"),
        *series_hashes(job_key(), vertex_key()),
    )


def normalise_names(df: DataFrame) -> DataFrame:
    """``_name`` (any scheme) -> canonical ``metric`` and ``rank``; fills task_name/subtask/job
    from full identifiers. The common case (already canonical) skips every regex."""
    from pyspark.sql import functions as F

    n = F.col("_name")
    known = n.isin(list(names.METRICS))
    alias_expr = None
    for a, canonical in names.ALIASES.items():
        cond = n == F.lit(a)
        alias_expr = (
            F.when(cond, F.lit(canonical)) if alias_expr is None else alias_expr.when(cond, F.lit(canonical))
        )
    prom = n.startswith(names.PROMETHEUS_TASK_PREFIX) & ~n.startswith(names.PROMETHEUS_OPERATOR_PREFIX)
    prom_rest = F.substring(n, len(names.PROMETHEUS_TASK_PREFIX) + 1, 1 << 16)
    prom_metric = F.regexp_extract(prom_rest, r"([A-Za-z0-9]+)$", 1)
    prom_group = F.translate(F.regexp_extract(prom_rest, r"^(.*?)[A-Za-z0-9]+$", 1), "_", ".")
    full = n.contains(".taskmanager.")
    rest_metric = F.regexp_extract(n, _REST_RE, 2)
    rest_group = F.regexp_extract(n, _REST_RE, 1)
    full_metric = F.regexp_extract(n, _FULL_ID_RE, 7)
    full_group = F.regexp_extract(n, _FULL_ID_RE, 6)

    # An operator-scoped metric the analysis reads under any operator's name (names.OPERATOR_METRICS:
    # 'Source__Gen.pendingRecords', flink_taskmanager_job_task_operator_pendingRecords).
    operator = None
    for op in names.OPERATOR_METRICS:
        cond = n.endswith("." + op) | (n == F.lit(names.PROMETHEUS_OPERATOR_PREFIX + op))
        operator = F.when(cond, F.lit(op)) if operator is None else operator.when(cond, F.lit(op))
    metric = (
        F.when(known, n)
        .when(alias_expr.isNotNull(), alias_expr)  # type: ignore[union-attr]
        .when(operator.isNotNull(), operator)  # type: ignore[union-attr]
        .when(prom, prom_metric)
        .when(full, full_metric)
        .otherwise(rest_metric)
    )
    group = (
        F.when(known, F.lit(""))
        .when(alias_expr.isNotNull(), F.lit(""))  # type: ignore[union-attr]
        .when(operator.isNotNull(), F.lit(""))  # type: ignore[union-attr]
        .when(prom, prom_group)
        .when(full, full_group)
        .otherwise(rest_group)
    )
    # A REST id that did not match (operator-scoped 'Parse.numRecordsIn', other groups) gives ''.
    out = df.withColumn("metric", metric).withColumn("rank", _rank_of_group(group))
    out = out.where(F.col("metric").isin(list(names.METRICS)) & F.col("rank").isNotNull())
    out = (
        out.withColumn(
            "task_name", F.coalesce(F.col("task_name"), F.when(full, F.regexp_extract(n, _FULL_ID_RE, 4)))
        )
        .withColumn(
            "job_name", F.coalesce(F.col("job_name"), F.when(full, F.regexp_extract(n, _FULL_ID_RE, 3)))
        )
        .withColumn("tm_id", F.coalesce(F.col("tm_id"), F.when(full, F.regexp_extract(n, _FULL_ID_RE, 2))))
        .withColumn(
            "subtask_index",
            F.coalesce(F.col("subtask_index"), F.when(full, F.regexp_extract(n, _FULL_ID_RE, 5).cast("int"))),
        )
    )
    return out.drop("_name")


def _unpivot_wide(df: DataFrame, source: str, ts_col: str) -> DataFrame:
    """One column per metric -> long rows. Key columns stay; every other numeric column whose
    name normalises to a metric we read becomes rows."""
    from pyspark.sql import functions as F

    keys = {
        c
        for c in df.columns
        for k in ("job_id", "job_name", "vertex_id", "task_name", "subtask_index", "tm_id", "host")
        if find_column([c], k) is not None
    }
    keys.add(ts_col)
    if find_column(df.columns, "task_name") is None and find_column(df.columns, "vertex_id") is None:
        raise MetricsError(
            "cannot tell the dump's shape: expected columns ts, metric, value (long form) or "
            "ts, task_name, subtask_index and one column per metric (wide form)",
            file=source,
        )
    candidates = [c for c in df.columns if c not in keys]
    wanted = [c for c in candidates if _wide_name_is_metric(c)]
    if not wanted:
        raise MetricsError(
            "wide dump has no metric columns flinktune reads (e.g. outPoolUsage, "
            "backPressuredTimeMsPerSecond)",
            file=source,
        )
    ids = [c for c in df.columns if c in keys]
    casted = df.select(*ids, *[F.col(f"`{c}`").cast("double").alias(c) for c in wanted])
    return casted.unpivot(ids, wanted, "metric", "value")


def _wide_name_is_metric(column: str) -> bool:
    name = column.split("{", 1)[0]
    tail = re.split(r"[._]", name)[-1]
    return name in names.METRICS or name in names.ALIASES or tail in names.METRICS


def apply_filters(df: DataFrame, filters: Filters) -> DataFrame:
    from pyspark.sql import functions as F

    if filters.job:
        filtered_name = re.sub(r"[^a-zA-Z0-9:_]", "_", filters.job)
        df = df.where(
            (F.col("job_id") == filters.job)
            | (F.col("job_name") == filters.job)
            | (F.col("job_name") == filtered_name)
        )
    if filters.since_ms is not None:
        df = df.where(F.col("ts") >= F.lit(filters.since_ms))
    if filters.until_ms is not None:
        df = df.where(F.col("ts") < F.lit(filters.until_ms))
    return df


def load_canonical(
    spark: SparkSession,
    inputs: Sequence[InputSet],
    filters: Filters,
    keep_unread: bool = False,
    prescanned: Mapping[InputSet, DumpNames | None] | None = None,
    converted: Mapping[InputSet, Sequence[str]] | None = None,
) -> DataFrame:
    """All inputs as one canonical DataFrame (lazy: nothing runs yet): the canonical columns plus
    the aggregation keys ``mkey``, ``job_hash`` and ``vertex_hash``. Time filters are applied
    to the raw ``ts`` column when it is already epoch ms, so parquet pushes them down.
    ``keep_unread``: rows of metrics the analysis does not read may stay, with null ``metric``,
    ``rank`` and ``mkey`` (cheaper for a caller that aggregates and drops them afterwards).
    ``prescanned``: prescan() results computed earlier (e.g. while the JVM started);
    ``converted``: parquet stand-ins for text inputs (read_raw)."""
    from pyspark.sql import functions as F

    frames = read_raw(spark, inputs, converted)
    out = None
    for inp, raw in zip(inputs, frames, strict=True):
        types = dict(raw.dtypes)
        if types.get("ts") in ("bigint", "int"):
            if filters.since_ms is not None:
                raw = raw.where(F.col("ts") >= F.lit(filters.since_ms))
            if filters.until_ms is not None:
                raw = raw.where(F.col("ts") < F.lit(filters.until_ms))
        job_cols = [c for c in ("job_id", "job_name") if types.get(c) == "string"]
        if filters.job and job_cols:
            # A superset of the final filter that parquet can push down: the job named in any job
            # column, or no job column set (the job may still come from Prometheus labels).
            wanted = [filters.job, re.sub(r"[^a-zA-Z0-9:_]", "_", filters.job)]
            named = None
            unset = None
            for c in job_cols:
                hit = F.col(c).isin(wanted)
                named = hit if named is None else named | hit
                null = F.col(c).isNull()
                unset = null if unset is None else unset & null
            raw = raw.where(named | unset)  # type: ignore[operator]
        if raw.columns:
            _check_types(raw, inp.paths[0])
        # Spark reads local parquet with the footers' schema (parquet_schema_ddl), so prescan's
        # view of the columns is Spark's.
        if prescanned is not None and inp in prescanned:
            fast = prescanned[inp]
        elif converted is not None and inp in converted:
            fast = prescan(InputSet("parquet", tuple(converted[inp])))
        else:
            fast = prescan(inp)
        if fast is not None:
            canon = apply_filters(_canonical_by_hash(raw, fast, keep_unread), filters)
        else:
            canon = apply_filters(to_canonical(raw, inp.paths[0]), filters)
        # Every metric read here (time per second, pool usage, counters, meters) is a finite number
        # >= 0: NaN, +-inf, negatives and values that did not parse are not measurements, so they are
        # dropped on both paths (Spark orders NaN above +inf: this one test removes them all, and nulls).
        canon = canon.where("value >= 0 AND value < CAST('Infinity' AS DOUBLE)")
        out = canon if out is None else out.unionByName(canon)
    assert out is not None
    return out


# --- the fast path: canonical rows by hashed name (the names come from prescan.py) ------------------


def metric_key(metric: Column, rank: Column) -> Column:
    """The aggregation's fixed-width key of a canonical (metric, rank): index in names.METRICS
    times RANK_SPAN plus the rank. Grouping by an int instead of the metric text keeps every key
    of the one big aggregation fixed-width (measured ~1.6x cheaper at 5e7 rows)."""
    from pyspark.sql import functions as F

    index = None
    for i, name in enumerate(names.METRICS):
        cond = metric == F.lit(name)
        index = F.when(cond, F.lit(i)) if index is None else index.when(cond, F.lit(i))
    assert index is not None
    return index * F.lit(names.RANK_SPAN) + rank


def metric_of_key(mkey: str) -> tuple[str, str]:
    """The canonical metric name and rank back from ``mkey`` (SQL text; null for a null key), as
    SQL text."""
    metric_names = ", ".join(sql_text(m) for m in names.METRICS)
    return (
        f"element_at(array({metric_names}), CAST(({mkey}) / {names.RANK_SPAN} AS INT) + 1)",
        f"CAST(({mkey}) % {names.RANK_SPAN} AS INT)",
    )


def _canonical_by_hash(raw: DataFrame, names_seen: DumpNames, keep_unread: bool) -> DataFrame:
    """Canonical rows for a dump whose distinct metric names are known (read from the parquet
    dictionaries): each row's name is hashed once (xxhash64) and compared with the hashes of the
    names the analysis reads, which Spark folds to constants when it plans the query. No join, no
    per-row text comparison; the keys are fixed-width ints. (Two names with equal 64-bit hashes
    would be confused: odds near 2^-64 per pair.)

    With ``keep_unread`` the rows of names the analysis does not read stay, with a null metric,
    after a cheap length test has dropped most of them: filtering on the hash here would hash
    every name twice (Spark evaluates a filter and a projection separately), so the one caller
    that aggregates drops the null keys after aggregating."""
    from pyspark.sql import functions as F

    mapping = names_seen.metrics
    types = dict(raw.dtypes)

    def col(name: str, typ: str) -> str:
        return f"CAST(`{name}` AS {typ})" if name in types else f"CAST(NULL AS {typ})"

    whens = " ".join(
        f"WHEN xxhash64(metric) = xxhash64({sql_text(raw_name)}) "
        f"THEN {names.METRICS.index(canonical) * names.RANK_SPAN + rank_value}"
        for raw_name, (canonical, rank_value) in sorted(mapping.items())
    )
    # No name in the dump is one the analysis reads: no key.
    mkey = f"CASE {whens} END" if whens else "CAST(NULL AS INT)"
    metric_name, rank = metric_of_key(mkey)
    strings = {c: col(c, "string") for c in ("job_id", "job_name", "vertex_id", "task_name")}
    canon_cols = [
        "CAST(ts AS BIGINT) AS ts",
        *[f"{expr} AS {c}" for c, expr in strings.items()],
        f"{col('subtask_index', 'int')} AS subtask_index",
        f"{col('tm_id', 'string')} AS tm_id",
        f"{metric_name} AS metric",
        f"{rank} AS rank",
        "CAST(value AS DOUBLE) AS value",
        f"{mkey} AS mkey",
        f"xxhash64(coalesce({strings['vertex_id']}, {strings['task_name']})) AS vertex_hash",
    ]
    # The job hash of a dump of one job is a literal (folded by Spark, nothing per row); the job
    # key is the dump's text, so it stays a Column literal rather than SQL text.
    if names_seen.job_key is not None:
        job_hash = F.xxhash64(F.lit(names_seen.job_key))
    else:
        job_hash = F.expr(f"xxhash64(coalesce({strings['job_id']}, {strings['job_name']}, ''))")
    rows = raw.where("value >= 0 AND value < CAST('Infinity' AS DOUBLE)")
    if keep_unread and names_seen.unread:
        lengths = ", ".join(str(n) for n in sorted({len(n.encode("utf-8")) for n in mapping}))
        rows = rows.where(f"octet_length(metric) IN ({lengths})" if lengths else "false")
    out = rows.select(*[F.expr(c) for c in canon_cols], job_hash.alias("job_hash"))
    return out if keep_unread else out.where("mkey IS NOT NULL")
