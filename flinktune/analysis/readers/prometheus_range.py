"""Prometheus HTTP API ``query_range`` answers (``resultType: matrix``) of Flink's PrometheusReporter.

Shared by ``flinktune collect --prometheus`` (which asks for them) and ``flinktune analyze``
(which reads saved ones: ``curl .../api/v1/query_range?... > range.json``, gzipped or not).
Pure Python and pyarrow; pyspark is imported only by `read`. As an input format it claims the
.json files that are such answers (``REFINES = "json"``).

Flink's naming (AbstractPrometheusReporter @1.20, flink-metrics-prometheus): a metric is named
``flink_`` + its logical scope joined with ``_`` + ``_`` + the metric name, characters outside
``[a-zA-Z0-9:_]`` replaced by ``_`` (``flink_taskmanager_job_task_Shuffle_Netty_Input_Buffers_inPoolUsage``).
Counters, gauges and meters all become Prometheus gauges (a counter's raw count, so it drops to 0
when a task restarts). Labels are the scope variables without ``<>``: ``job_id``, ``job_name``,
``task_id`` (the job vertex id), ``task_name``, ``subtask_index``, ``tm_id``, ``host``,
``task_attempt_num`` ...; label values pass the same character filter unless
``filterLabelValueCharacters: false`` (``A -> B`` arrives as ``A____B``).
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flinktune.errors import MetricsError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

NAME = "prometheus_range"
EXTENSIONS: tuple[str, ...] = ()    # only claimed: the answers are .json files, as JSON lines are
LABEL = "a Prometheus query_range answer"
REFINES = "json"

TASK_PREFIX = "flink_taskmanager_job_task_"
# Columns of the table built from matrix answers (the canonical dump's, with the Prometheus metric name).
COLUMNS: tuple[str, ...] = (
    "ts",
    "job_id",
    "job_name",
    "vertex_id",
    "task_name",
    "subtask_index",
    "tm_id",
    "host",
    "metric",
    "value",
)
_LABEL_COLUMNS = ("job_id", "job_name", "vertex_id", "task_name", "subtask_index", "tm_id", "host")
# The first bytes of a query/query_range answer ({"status":"success","data":{"resultType":"matrix",...}).
_SNIFF = re.compile(rb'^\s*\{\s*"(status|data)"\s*:')


def prometheus_name(rest_id: str) -> str:
    """Flink's REST id relative to the task scope -> its Prometheus name: ``buffers.inPoolUsage``
    -> ``flink_taskmanager_job_task_buffers_inPoolUsage``."""
    return TASK_PREFIX + re.sub(r"[^a-zA-Z0-9:_]", "_", rest_id)


def rest_id(prom_name: str) -> str | None:
    """The inverse for task-scoped names: the group path joined with ``.`` again (metric names
    themselves hold no ``_``). None for other scopes (operator, TaskManager, JobManager)."""
    if not prom_name.startswith(TASK_PREFIX) or prom_name.startswith(TASK_PREFIX + "operator_"):
        return None
    return prom_name[len(TASK_PREFIX) :].replace("_", ".")


def claims(path: str) -> bool:
    """Whether a .json(.gz) file is a Prometheus API answer rather than JSON lines."""
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as fh:
            head = fh.read(256)
    except (OSError, EOFError):
        return False
    if _SNIFF.match(head) is None:
        return False
    # A series or label-values answer has no resultType: not a metrics file. An error answer is
    # claimed, so it is refused with Prometheus's own message.
    return b'"resultType"' in head or re.match(rb'^\s*\{\s*"status"\s*:\s*"error"', head) is not None


@dataclass
class Columns:
    """Rows of one batch: times and values per sample, labels once per series (each label column
    is built by one C++ ``take`` from its per-series values, not as a Python list per sample)."""

    ts: list[int] = field(default_factory=list)
    value: list[float] = field(default_factory=list)
    series_of_row: list[int] = field(default_factory=list)
    series: list[tuple[Any, ...]] = field(default_factory=list)  # labels + (metric,)

    def __len__(self) -> int:
        return len(self.ts)

    def extend(self, labels: tuple[Any, ...], metric: str, points: Sequence[tuple[int, float]]) -> None:
        n = len(points)
        if not n:
            return
        self.ts.extend(p[0] for p in points)
        self.value.extend(p[1] for p in points)
        self.series_of_row.extend([len(self.series)] * n)
        self.series.append((*labels, metric))

    def table(self) -> Any:
        """A pyarrow table with `COLUMNS`, in that order (ts int64, subtask_index int32, value
        float64, the rest strings)."""
        import pyarrow as pa

        rows = pa.array(self.series_of_row, type=pa.int32())
        per_series = list(zip(*self.series, strict=True)) if self.series else [()] * (len(COLUMNS) - 2)
        arrays: dict[str, Any] = {"ts": pa.array(self.ts, type=pa.int64())}
        for name, values in zip((*_LABEL_COLUMNS, "metric"), per_series, strict=True):
            kind = pa.int32() if name == "subtask_index" else pa.string()
            arrays[name] = pa.array(values, type=kind).take(rows)
        arrays["value"] = pa.array(self.value, type=pa.float64())
        return pa.table({c: arrays[c] for c in COLUMNS})


@dataclass(frozen=True)
class SeriesKey:
    metric: str
    job_id: str | None
    vertex: str | None
    subtask_index: int | None


@dataclass
class Attempts:
    """Which task attempts each subtask ran as (a restarted job shows as new ``task_attempt_num``)."""

    seen: dict[tuple[str | None, str | None, int | None], set[int]] = field(default_factory=dict)

    def add(self, job_id: str | None, vertex: str | None, subtask: int | None, attempt: int) -> None:
        self.seen.setdefault((job_id, vertex, subtask), set()).add(attempt)

    def restarted(self) -> int:
        """Subtasks seen in more than one attempt, or only in an attempt after the first."""
        return sum(1 for a in self.seen.values() if len(a) > 1 or min(a) > 0)

    def max_attempt(self) -> int:
        return max((max(a) for a in self.seen.values()), default=0)

    def note(self) -> str | None:
        n = self.restarted()
        if not n:
            return None
        return (
            f"the job restarted: {n} subtasks ran as more than one attempt (task_attempt_num up to "
            f"{self.max_attempt()}); counters start again from 0 with each attempt and are read as resets"
        )


def _int_or_none(text: Any) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def points_of(values: Any, source: str) -> list[tuple[int, float]]:
    """``[[1700000000.5, "0.25"], ...]`` -> ``[(1700000000500, 0.25), ...]`` (NaN stays NaN)."""
    if not isinstance(values, list):
        raise MetricsError("query_range series has no 'values' list", file=source)
    out: list[tuple[int, float]] = []
    for pair in values:
        try:
            t, v = pair
            out.append((round(float(t) * 1000), float(v)))
        except (TypeError, ValueError):
            raise MetricsError(f'query_range sample {pair!r} is not [time, "value"]', file=source) from None
    return out


def matrix_of(document: Any, source: str) -> list[dict[str, Any]]:
    """The ``data.result`` list of a successful matrix answer; a clear error otherwise."""
    if not isinstance(document, dict):
        raise MetricsError("not a Prometheus API answer (expected a JSON object)", file=source)
    if document.get("status") != "success":
        detail = document.get("error") or document.get("status")
        raise MetricsError(f"Prometheus answered an error: {detail}", file=source)
    data = document.get("data")
    if not isinstance(data, dict) or not isinstance(data.get("result"), list):
        raise MetricsError("Prometheus answer has no data.result list", file=source)
    if data.get("resultType") not in ("matrix", "vector"):
        raise MetricsError(
            f"Prometheus answer is a {data.get('resultType')!r}, expected a query_range matrix", file=source
        )
    return [s for s in data["result"] if isinstance(s, dict)]


def add_matrix(
    out: Columns,
    result: Iterable[dict[str, Any]],
    source: str,
    *,
    attempts: Attempts,
    metric_name: Any = None,
    names_by_vertex: dict[str, str] | None = None,
    job_name: str | None = None,
) -> None:
    """Append the series of one matrix answer. When several attempts of one subtask (a restart)
    cover the same instant, the latest attempt's sample is kept, so each (metric, subtask, time)
    has one value. ``metric_name`` maps the Prometheus name to the stored one (default: as is);
    ``names_by_vertex`` gives task names from the job plan (label values are filtered)."""
    groups: dict[SeriesKey, list[tuple[int, tuple[Any, ...], list[tuple[int, float]]]]] = {}
    for series in result:
        labels = series.get("metric")
        if not isinstance(labels, dict):
            raise MetricsError("query_range series has no 'metric' labels", file=source)
        name = str(labels.get("__name__", ""))
        stored = metric_name(name) if metric_name is not None else name
        if not stored:
            continue
        values = series.get("values")
        if values is None and "value" in series:  # an instant vector answer
            values = [series["value"]]
        points = points_of(values, source)
        vertex = labels.get("task_id")
        subtask = _int_or_none(labels.get("subtask_index"))
        attempt = _int_or_none(labels.get("task_attempt_num")) or 0
        jid = labels.get("job_id")
        attempts.add(jid, vertex or labels.get("task_name"), subtask, attempt)
        task_name = (names_by_vertex or {}).get(vertex or "", labels.get("task_name"))
        row_labels = (
            jid,
            job_name or labels.get("job_name"),
            vertex,
            task_name,
            subtask,
            labels.get("tm_id"),
            labels.get("host"),
        )
        key = SeriesKey(stored, jid, vertex or labels.get("task_name"), subtask)
        groups.setdefault(key, []).append((attempt, row_labels, points))
    for key, members in groups.items():
        if len(members) == 1:
            _, row_labels, points = members[0]
            out.extend(row_labels, key.metric, points)
            continue
        # Restarts: later attempts win at instants two attempts share.
        members.sort(key=lambda m: m[0])
        owner: dict[int, int] = {}
        for i, (_, _, points) in enumerate(members):
            for t, _v in points:
                owner[t] = i
        for i, (_, row_labels, points) in enumerate(members):
            kept = [p for p in points if owner[p[0]] == i]
            out.extend(row_labels, key.metric, kept)


def load_document(path: str) -> Any:
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as error:
        raise MetricsError(f"not valid JSON: {error.msg}", file=path, line=error.lineno) from None
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise MetricsError(f"cannot read: {error}", file=path) from None


def read_files(paths: Sequence[str]) -> tuple[Any, Attempts]:
    """Saved query_range answers -> one pyarrow table (Prometheus metric names kept: the loader
    maps them, including the deprecated ``buffers_`` copies) and the attempts seen."""
    out = Columns()
    attempts = Attempts()
    for path in paths:
        add_matrix(out, matrix_of(load_document(path), path), path, attempts=attempts)
    if not len(out):
        raise MetricsError("query_range answer holds no samples", file=paths[0])
    return out.table(), attempts


def read(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """Saved query_range answers as a Spark DataFrame in the long form the loader normalises."""
    table, _attempts = read_files(paths)
    # NaN, infinities and negatives stay: the loader drops them for every input alike.
    return spark.createDataFrame(table)
