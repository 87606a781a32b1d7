"""InfluxDB 2.x annotated-CSV exports of metrics written by Flink's InfluxdbReporter.

What ``influx query --raw``, the InfluxDB UI's "Download CSV" and ``POST /api/v2/query`` give:
tables, each after its annotation rows (``#group``, ``#datatype``, ``#default``) and a header
``,result,table,_start,_stop,_time,_value,_field,_measurement,<tags...>``; a new annotation block
(after a blank line) starts wherever the columns or their types change. Such a file is a ``.csv``
like our own dumps, so this format claims it by content (``REFINES = "csv"``): the first line is an
annotation, or a header naming ``_measurement``, ``_field``, ``_time`` and ``_value``. Plain CSV
dumps are left to readers/csv.py.

Flink's naming (flink-metrics-influxdb: MeasurementInfoProvider, MetricMapper; the reporter exists
since 1.7 (FLINK-7155) and ships as a plugin in 1.13 to 1.20 and 2.x, checked in the 1.20.5 and
2.3.0 jars): the measurement is the logical scope joined with ``_`` (characters outside
``[a-zA-Z0-9:_]`` replaced by ``_``) + ``_`` + the metric name, e.g.
``taskmanager_job_task_Shuffle_Netty_Input_Buffers_inPoolUsage``; ``flink_`` + that is the
Prometheus reporter's name for the same metric, which the loader already maps. Tags are every scope
variable with its ``<>`` removed (``job_id``, ``job_name``, ``task_id`` = the job vertex id,
``task_name``, ``subtask_index``, ``task_attempt_num``, ``tm_id``, ``host`` ...), values unfiltered.
Fields: a gauge writes ``value``, a counter ``count``, a meter ``count`` and ``rate``, a histogram
``count``, ``min``, ``max`` ... Read here: ``value``, ``rate``, and ``count`` of measurements with no
other field (counters); a meter's rate is what the REST API and Prometheus report for it.
"""

from __future__ import annotations

import csv as csvmod
import re
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from flinktune.analysis.readers.files import open_text
from flinktune.analysis.readers.prometheus_range import Attempts, Columns, add_matrix
from flinktune.errors import MetricsError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

NAME = "influx_csv"
EXTENSIONS: tuple[str, ...] = ()  # only claimed: the exports are .csv files, as our dumps are
LABEL = "an InfluxDB annotated CSV export"
REFINES = "csv"

_ANNOTATIONS = ("#group", "#datatype", "#default")
_NEEDED = ("_time", "_value", "_field", "_measurement")
# Columns of every Flux table that are not the series' tags.
_NOT_TAGS = frozenset(("", "result", "table", "_start", "_stop", "_time", "_value", "_field", "_measurement"))
_RFC3339 = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$")
_NUMERIC = ("double", "long", "unsignedLong")


def claims(path: str) -> bool:
    """Whether a .csv(.gz) file is an InfluxDB annotated CSV export rather than a flinktune dump."""
    try:
        with open_text(path) as fh:
            first = next((line for line in fh if line.strip()), "")
    except (OSError, UnicodeDecodeError, EOFError):
        return False
    if first.startswith(tuple(a + "," for a in _ANNOTATIONS)):
        return True
    cells = {c.strip().strip('"') for c in first.split(",")}
    return all(c in cells for c in _NEEDED)


def epoch_ms(text: str) -> int | None:
    """``2026-11-29T08:00:00.123456789Z`` -> epoch milliseconds (None if not RFC 3339)."""
    m = _RFC3339.match(text)
    if m is None:
        return None
    zone = "+00:00" if m.group(3) == "Z" else m.group(3)
    try:
        whole = datetime.fromisoformat(m.group(1) + zone)
    except ValueError:
        return None
    return int(whole.timestamp()) * 1000 + int((m.group(2) or "0").ljust(9, "0")[:3])


def _rows(path: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, cells) of each CSV record; a blank line gives an empty list."""
    try:
        with open_text(path) as fh:
            reader = csvmod.reader(fh)
            for cells in reader:
                yield reader.line_num, cells
    except csvmod.Error as error:
        raise MetricsError(f"not valid CSV: {error}", file=path) from None
    except (OSError, UnicodeDecodeError, EOFError) as error:
        raise MetricsError(f"cannot read: {error}", file=path) from None


# (measurement, field, tags) -> [(ts_ms, value), ...]
Series = dict[tuple[str, str, tuple[tuple[str, str], ...]], list[tuple[int, float]]]


def read_series(path: str, out: Series) -> None:
    """Add one export's samples to ``out``; a clear error naming the line for a broken export."""
    header: list[str] | None = None
    header_line = 0
    annotations: dict[str, list[str]] = {}
    for line, cells in _rows(path):
        if not cells or not any(c.strip() for c in cells):
            header = None  # a blank line ends a table block: annotations and a header follow
            annotations = {}
            continue
        if cells[0].startswith("#"):
            if cells[0] not in _ANNOTATIONS:
                raise MetricsError(f"unknown annotation {cells[0]!r}", file=path, line=line)
            header = None
            annotations[cells[0]] = cells
            continue
        if header is None:
            if "error" in cells and "reference" in cells and "_measurement" not in cells:
                raise MetricsError("the export is an InfluxDB error table, not metrics", file=path, line=line)
            missing = [c for c in _NEEDED if c not in cells]
            if missing:
                raise MetricsError(
                    "expected a table header (,result,table,_start,_stop,_time,_value,_field,_measurement,"
                    f"<tags>) here; missing {', '.join(missing)}",
                    file=path,
                    line=line,
                )
            for name, annotation in annotations.items():
                if len(annotation) != len(cells):
                    raise MetricsError(
                        f"{name} has {len(annotation)} fields, the header on line {line} has {len(cells)}",
                        file=path,
                        line=line,
                    )
            header, header_line = cells, line
            index = {c: i for i, c in enumerate(header)}
            defaults = annotations.get("#default", [""] * len(header))
            value_type = annotations.get("#datatype", [""] * len(header))[index["_value"]]
            tag_cols = [(c, i) for i, c in enumerate(header) if c not in _NOT_TAGS]
            continue
        if len(cells) != len(header):
            raise MetricsError(
                f"row has {len(cells)} fields, its header (line {header_line}) has {len(header)}",
                file=path,
                line=line,
            )
        row = [c if c != "" else defaults[i] for i, c in enumerate(cells)]
        try:
            value = float(row[index["_value"]])
        except ValueError:
            if value_type not in _NUMERIC and value_type:
                continue  # a gauge of text (Flink writes non-numbers as strings): nothing to read
            raise MetricsError(
                f"_value {row[index['_value']]!r} is not a number", file=path, line=line
            ) from None
        ts = epoch_ms(row[index["_time"]])
        if ts is None:
            raise MetricsError(f"_time {row[index['_time']]!r} is not an RFC 3339 time", file=path, line=line)
        tags = tuple((c, row[i]) for c, i in tag_cols if row[i] != "")
        out.setdefault((row[index["_measurement"]], row[index["_field"]], tags), []).append((ts, value))
    if header is None and not out:
        raise MetricsError("no InfluxDB table header found (',result,table,...,_measurement')", file=path)


def read_files(paths: Sequence[str]) -> tuple[Any, Attempts]:
    """Exports -> one pyarrow table in prometheus_range's columns (``flink_`` + measurement as the
    metric, tags as labels, ``task_id`` as ``vertex_id``; restarts as there) and the attempts seen."""
    series: Series = {}
    for path in paths:
        read_series(path, series)
    fields: dict[str, set[str]] = {}
    for measurement, field_name, _tags in series:
        fields.setdefault(measurement, set()).add(field_name)

    def wanted(measurement: str, field_name: str) -> bool:
        return field_name in ("value", "rate") or (field_name == "count" and fields[measurement] == {"count"})

    result = [
        {"metric": {**dict(tags), "__name__": "flink_" + m}, "values": [(t / 1000, v) for t, v in points]}
        for (m, f, tags), points in series.items()
        if wanted(m, f)
    ]
    if not result:
        raise MetricsError("InfluxDB export holds no gauge, counter or meter samples", file=paths[0])
    out, attempts = Columns(), Attempts()
    add_matrix(out, result, paths[0], attempts=attempts)
    return out.table(), attempts


def read(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """The exports as a Spark DataFrame in the long form the loader normalises."""
    return spark.createDataFrame(read_files(paths)[0])
