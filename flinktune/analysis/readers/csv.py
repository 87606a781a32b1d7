"""CSV dumps (``.csv``, ``.tsv``, gzipped or not): every column text, by an explicit schema."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from flinktune.analysis.readers import is_remote
from flinktune.analysis.readers.files import first_line
from flinktune.errors import MetricsError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

NAME = "csv"
EXTENSIONS = (".csv", ".csv.gz", ".tsv")
LABEL = ".csv"
REFINES = None

_TYPED: dict[str, str] = {"subtask_index": "string", "ts": "string", "value": "string"}


def csv_columns(paths: Sequence[str]) -> tuple[list[str], str]:
    """The column names and separator Spark's CSV reader gets: the first local file's header (every
    file's first line is a header; columns are matched by position)."""
    local = [p for p in paths if not is_remote(p)]
    header = first_line(local[0]) if local else None
    if header is None:
        raise MetricsError("CSV dumps on remote storage need a local copy or parquet", file=paths[0])
    sep = "\t" if paths[0].endswith(".tsv") else ","
    cols = [c.strip().strip('"') for c in header.split(sep)]
    if len(cols) < 2 or len(set(cols)) != len(cols):
        raise MetricsError("CSV header is missing or repeats a column", file=local[0], line=1)
    return cols, sep


def read(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    from pyspark.sql.types import StringType, StructField, StructType

    cols, sep = csv_columns(paths)
    # Every CSV column is read as text with an explicit schema and cast by us: a wrong type then
    # surfaces as a clear error instead of a silently inferred string column.
    schema = StructType([StructField(c, StringType(), True) for c in cols])
    # escape='"': CSV writers (Python's csv, pandas, Excel) double a quote inside a quoted field
    # (RFC 4180); Spark's default escape is a backslash, which splits such a row in the wrong place.
    # (text_cache.py reads local files with the same options in pyarrow.)
    return spark.read.csv(
        list(paths),
        schema=schema,
        header=True,
        sep=sep,
        mode="PERMISSIVE",
        enforceSchema=True,
        quote='"',
        escape='"',
    )
