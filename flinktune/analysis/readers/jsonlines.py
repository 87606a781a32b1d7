"""JSON-lines dumps (``.jsonl``, ``.ndjson``, ``.json``, gzipped or not): the schema from the first record."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from flinktune.analysis.readers import is_remote
from flinktune.analysis.readers.files import first_line
from flinktune.errors import MetricsError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

NAME = "json"
EXTENSIONS = (".jsonl", ".ndjson", ".json", ".jsonl.gz", ".ndjson.gz", ".json.gz")
LABEL = ".jsonl"
REFINES = None


def json_fields(paths: Sequence[str]) -> list[tuple[str, str]]:
    """(name, Spark type) of each field Spark's JSON reader gets, from the first record of the first
    local file: text for strings, booleans and nulls, bigint for whole-number times and subtasks,
    double for other numbers."""
    local = [p for p in paths if not is_remote(p)]
    if not local:
        raise MetricsError("JSON-lines dumps on remote storage need a local copy or parquet", file=paths[0])
    first = first_line(local[0])
    try:
        record = json.loads(first)
    except json.JSONDecodeError as error:
        raise MetricsError(f"not JSON lines: {error.msg}", file=local[0], line=1) from None
    if not isinstance(record, dict):
        raise MetricsError("JSON lines must hold one object per line", file=local[0], line=1)
    fields = []
    for key, val in record.items():
        if isinstance(val, bool | str) or val is None:
            fields.append((key, "string"))
        elif isinstance(val, int) and key in ("ts", "timestamp", "ts_ms", "subtask_index", "subtask"):
            fields.append((key, "bigint"))
        elif isinstance(val, int | float):
            fields.append((key, "double"))
        else:
            fields.append((key, "string"))
    return fields


def read(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    spark_types = {"string": StringType(), "bigint": LongType(), "double": DoubleType()}
    schema = StructType([StructField(key, spark_types[typ], True) for key, typ in json_fields(paths)])
    return spark.read.json(list(paths), schema=schema, mode="PERMISSIVE")
