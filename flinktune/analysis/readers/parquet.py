"""Parquet dumps (files, folders, partitioned datasets): schema and time bounds from the footers."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from flinktune.analysis.readers import is_remote
from flinktune.errors import MetricsError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

NAME = "parquet"
EXTENSIONS = (".parquet", ".parq")
LABEL = ".parquet"
REFINES = None


def parquet_files(paths: Sequence[str]) -> list[str]:
    out: list[str] = []
    for p in paths:
        if is_remote(p):
            return []
        if os.path.isdir(p):
            out.extend(
                str(f)
                for f in sorted(Path(p).rglob("*"))
                if f.is_file() and f.name.lower().endswith(EXTENSIONS)
            )
        else:
            out.append(p)
    return out


_ARROW_TO_SPARK = {
    "int64": "bigint",
    "int32": "int",
    "int16": "smallint",
    "int8": "tinyint",
    "uint32": "bigint",
    "double": "double",
    "float": "float",
    "string": "string",
    "large_string": "string",
    "bool": "boolean",
}


def parquet_types(paths: Sequence[str]) -> dict[str, str] | None:
    """Column -> Spark type name of local parquet files, from their footers (read by pyarrow).
    None when the files differ or a type has no plain mapping (Spark then reads the footers)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = parquet_files(paths)
    if not files or any(
        os.path.isdir(p) and any(d.name.count("=") for d in Path(p).iterdir()) for p in paths
    ):
        return None
    found: dict[str, str] | None = None
    for f in files:
        this: dict[str, str] = {}
        for fld in pq.read_schema(f):
            typ = fld.type
            # Dictionary-encoded strings (pyarrow's default for repetitive text) read as strings.
            # (Only dictionaries: list and map types have a value_type too, and are not numbers.)
            t = str(typ.value_type) if pa.types.is_dictionary(typ) else str(typ)
            if t.startswith("timestamp"):
                this[fld.name] = "timestamp"
            elif t in _ARROW_TO_SPARK:
                this[fld.name] = _ARROW_TO_SPARK[t]
            else:
                return None
        if found is not None and list(this.items()) != list(found.items()):
            return None
        found = this
    return found


def parquet_schema_ddl(paths: Sequence[str]) -> str | None:
    """The Spark schema of local parquet files from their footers, so Spark need not run a job
    to read the footers itself (None: see parquet_types)."""
    types = parquet_types(paths)
    return None if types is None else ", ".join(f"`{name}` {typ}" for name, typ in types.items())


def check_parquet(paths: Sequence[str]) -> tuple[int, int] | None:
    """Validate local parquet footers (one clear line naming a corrupt file) and return the
    (min, max) of an int64 ``ts`` column from the row-group statistics when every file has them:
    the time bounds for free, without a Spark pass."""
    import pyarrow.parquet as pq

    lo: int | None = None
    hi: int | None = None
    stats_ok = True
    files = parquet_files(paths)
    if not files:
        return None
    for f in files:
        try:
            meta = pq.read_metadata(f)
        except Exception as error:
            raise MetricsError(f"not a readable parquet file: {str(error).splitlines()[0]}", file=f) from None
        schema = meta.schema.to_arrow_schema()
        if "ts" not in schema.names or str(schema.field("ts").type) != "int64":
            stats_ok = False
            continue
        idx = schema.names.index("ts")
        for rg in range(meta.num_row_groups):
            st = meta.row_group(rg).column(idx).statistics
            if st is None or not st.has_min_max:
                stats_ok = False
                break
            lo = st.min if lo is None else min(lo, st.min)
            hi = st.max if hi is None else max(hi, st.max)
    if not stats_ok or lo is None or hi is None:
        return None
    return int(lo), int(hi)



def read(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    check_parquet(paths)
    # Only *.parquet files: a dump folder also holds plan.json, configs, scrapes.
    reader = spark.read.option("pathGlobFilter", "*.parq*")
    ddl = parquet_schema_ddl(paths)
    if ddl is not None:
        reader = reader.schema(ddl)
    return reader.parquet(*paths)
