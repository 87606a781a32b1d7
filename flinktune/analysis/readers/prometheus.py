"""Prometheus text exposition scrapes (``.prom``, ``.txt``, gzipped or not)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from flinktune.analysis.readers import is_remote
from flinktune.errors import MetricsError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

NAME = "prometheus"
EXTENSIONS = (".prom", ".txt", ".prom.gz", ".txt.gz")
LABEL = ".prom"
REFINES = None


def read(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """The Prometheus text exposition format: ``name{label="v",...} value [timestamp_ms]``.
    Without a timestamp on the line, the file's modification time stands in (one scrape)."""
    from pyspark.sql import functions as F

    frames = []
    for p in paths:
        if not is_remote(p):
            if os.path.getsize(p) == 0:
                raise MetricsError("file is empty", file=p)
            mtime_ms = int(os.stat(p).st_mtime * 1000)
        else:
            mtime_ms = 0
        frames.append(spark.read.text(p).withColumn("_mtime", F.lit(mtime_ms)))
    df = frames[0]
    for extra in frames[1:]:
        df = df.unionByName(extra)
    line = F.trim(F.col("value"))
    pattern = r"^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{.*\})?)\s+(\S+)(?:\s+(-?\d+))?$"
    parsed = (
        df.where(~line.startswith("#") & (F.length(line) > 0))
        .select(
            F.regexp_extract(line, pattern, 1).alias("metric"),
            F.regexp_extract(line, pattern, 2).alias("_v"),
            F.regexp_extract(line, pattern, 3).alias("_t"),
            F.col("_mtime"),
        )
        .where(F.col("metric") != "")
    )
    return parsed.select(
        F.when(F.col("_t") != "", F.col("_t").cast("bigint")).otherwise(F.col("_mtime")).alias("ts"),
        F.col("metric"),
        F.col("_v").cast("double").alias("value"),
    )
