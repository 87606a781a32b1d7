"""The fast path's first half, pure pyarrow (it runs while the JVM starts): what the footers and
dictionaries of a local long-form parquet dump tell before Spark reads a row (the distinct metric
names mapped to canonical ones, whether it holds one job, a bound on its series). load.py's
``_canonical_by_hash`` uses it to make rows canonical by hashed name, without per-row text work.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from flinktune.analysis import names
from flinktune.analysis.readers.parquet import parquet_files, parquet_types

if TYPE_CHECKING:
    from flinktune.analysis.load import InputSet


_PY_REST = re.compile(
    r"^((?:Shuffle\.Netty\.(?:Input\.Buffers|Output\.Buffers|Input)\.|buffers\.)?)([A-Za-z]+)$"
)


def python_name(name: str) -> tuple[str, int] | None:
    """The Python twin of normalise_names for names without scope (short names, REST ids,
    legacy buffers.*, Prometheus task names): (canonical metric, rank), or None when the
    analysis does not read it."""
    if name in names.METRICS:
        return name, names.GROUP_RANK[""]
    if name in names.ALIASES:
        return names.ALIASES[name], names.GROUP_RANK[""]
    for op in names.OPERATOR_METRICS:
        if name.endswith("." + op) or name == names.PROMETHEUS_OPERATOR_PREFIX + op:
            return op, names.GROUP_RANK[""]
    if name.startswith(names.PROMETHEUS_TASK_PREFIX) and not name.startswith(
        names.PROMETHEUS_OPERATOR_PREFIX
    ):
        rest = name[len(names.PROMETHEUS_TASK_PREFIX) :]
        m = re.match(r"^(.*?)([A-Za-z0-9]+)$", rest)
        if m is None:
            return None
        group, metric = m.group(1).replace("_", "."), m.group(2)
    else:
        m = _PY_REST.match(name)
        if m is None:
            return None
        group, metric = m.group(1), m.group(2)
    if metric not in names.METRICS or group not in names.GROUP_RANK:
        return None
    return metric, names.GROUP_RANK[group]


@dataclass(frozen=True)
class DumpNames:
    """What the parquet footers and dictionaries of a long-form dump tell before Spark reads it:
    the distinct metric names the analysis reads, mapped to (canonical metric, rank); the job key
    when every row has the same one (None when it varies); and an upper bound on the number of
    series (jobs x vertices x subtasks x metrics; None when the footers cannot tell)."""

    metrics: dict[str, tuple[str, int]]
    job_key: str | None
    series_bound: int | None = None
    rows: int | None = None  # in the footers
    unread: bool = True  # some name in the dump is one the analysis does not read


def _distinct_in_chunks(column) -> set[str]:  # type: ignore[no-untyped-def]
    out: set[str] = set()
    for chunk in column.chunks:
        values = chunk.dictionary if hasattr(chunk, "dictionary") else chunk.unique()
        out.update(v for v in values.to_pylist() if v is not None)
    return out


def prescan(inp: InputSet) -> DumpNames | None:
    """For a local long-form parquet dump with the canonical columns: the distinct metric names
    (read from the files' dictionaries by pyarrow, no Spark pass) mapped to canonical names,
    whether the dump holds one job, and a bound on its series. None when a name carries scope or
    labels (full identifiers, ``name{...}``): those need the row-by-row normalisation. Pure
    pyarrow, so it can run while the JVM starts."""
    import pyarrow.parquet as pq

    if inp.fmt != "parquet":
        return None
    types = parquet_types(inp.paths)
    if types is None or types.get("metric") != "string" or types.get("ts") not in ("bigint", "int"):
        return None
    if types.get("value") in (None, "string") or not ({"vertex_id", "task_name"} & set(types)):
        return None
    files = parquet_files(inp.paths)
    partitioned = any(
        os.path.isdir(p) and any("=" in d.name for d in Path(p).rglob("*") if d.is_dir()) for p in inp.paths
    )
    if not files or partitioned:
        return None
    job_cols = [c for c in ("job_id", "job_name") if types.get(c) == "string"]
    vertex_cols = [c for c in ("vertex_id", "task_name") if types.get(c) == "string"]
    distinct: set[str] = set()
    # Per job and vertex column: distinct non-null values and whether any row is null.
    seen: dict[str, tuple[set[str], bool]] = {c: (set(), False) for c in (*job_cols, *vertex_cols)}
    # Text subtask indexes have text statistics ("9" > "10"): no bound from those.
    integer = ("int", "bigint", "smallint", "tinyint")
    max_subtask: int | None = 0 if types.get("subtask_index") in (None, *integer) else None
    # Distinct (job, vertex) pairs: several jobs' vertices are not every job's (None: not known).
    pairs: set[tuple[str, str]] | None = set()
    rows = 0
    for f in files:
        pf = pq.ParquetFile(f, read_dictionary=["metric", *seen])
        rows += pf.metadata.num_rows
        present = set(pf.schema_arrow.names)
        names_in_file = pf.schema_arrow.names
        for rg in range(pf.num_row_groups):
            cols = ["metric", *[c for c in seen if c in present]]
            table = pf.read_row_group(rg, columns=cols)
            distinct |= _distinct_in_chunks(table.column("metric"))
            if len(distinct) > 5000:
                return None
            for c in seen:
                values, has_null = seen[c]
                if c not in present:
                    seen[c] = (values, True)
                    continue
                column = table.column(c)
                seen[c] = (values | _distinct_in_chunks(column), has_null or column.null_count > 0)
            if pairs is not None:
                found = _owner_pairs(table, job_cols, vertex_cols)
                pairs = None if found is None else pairs | found
            if "subtask_index" in present and max_subtask is not None:
                st = pf.metadata.row_group(rg).column(names_in_file.index("subtask_index")).statistics
                max_subtask = max(max_subtask, int(st.max)) if st is not None and st.has_min_max else None
    mapping: dict[str, tuple[str, int]] = {}
    for name in distinct:
        if "{" in name or ".taskmanager." in name:
            return None
        hit = python_name(name)
        if hit is not None:
            mapping[name] = hit
    job_key = _constant_job_key({c: seen[c] for c in job_cols})
    bound = None
    if max_subtask is not None:
        if pairs is not None:
            owners = max(1, len(pairs))
        else:
            jobs = 1 if job_key is not None else sum(len(seen[c][0]) for c in job_cols) + 1
            owners = jobs * max(1, sum(len(seen[c][0]) for c in vertex_cols))
        bound = owners * (max_subtask + 1) * max(1, len(set(mapping.values())))
    return DumpNames(mapping, job_key, bound, rows, unread=len(mapping) < len(distinct))


def _key_column(table, columns: Sequence[str]):  # type: ignore[no-untyped-def]
    """The column that alone gives coalesce(columns...) on every row of the row group: the first
    present one when it has no null; '' when none is present; None when it has nulls (the key
    would need the next column: not worth it here)."""
    for c in columns:
        if c in table.column_names:
            column = table.column(c)
            return column if column.null_count == 0 else None
    return ""


def _owner_pairs(table, job_cols: Sequence[str], vertex_cols: Sequence[str]) -> set[tuple[str, str]] | None:  # type: ignore[no-untyped-def]
    """Distinct (job key, vertex key) pairs of one row group, from the dictionary codes (one
    bincount, no per-row Python), or None when they cannot be told cheaply."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    job = _key_column(table, job_cols)
    vertex = _key_column(table, vertex_cols)
    if job is None or vertex is None or isinstance(vertex, str):
        return None
    jobs_here = {""} if isinstance(job, str) else _distinct_in_chunks(job)
    if len(jobs_here) == 1:
        # One job in the row group (the common case): its pairs are its vertex names, read from
        # the dictionaries, with no pass over the rows.
        (only,) = jobs_here
        return {(only, v) for v in _distinct_in_chunks(vertex)}
    codes = []
    dictionaries = []
    for column in (job, vertex):
        if isinstance(column, str):  # no job column: one job, ''
            codes.append(np.zeros(len(table), dtype=np.int64))
            dictionaries.append([""])
            continue
        arr = column.combine_chunks()
        enc = arr if pa.types.is_dictionary(arr.type) else pc.dictionary_encode(arr)
        codes.append(enc.indices.to_numpy(zero_copy_only=False).astype(np.int64))
        dictionaries.append(enc.dictionary.to_pylist())
    width = max(1, len(dictionaries[1]))
    combined = codes[0] * width + codes[1]
    if len(dictionaries[0]) * width <= 1 << 24:
        hit = np.flatnonzero(np.bincount(combined, minlength=len(dictionaries[0]) * width))
    else:
        hit = np.unique(combined)
    return {(dictionaries[0][c // width], dictionaries[1][c % width]) for c in hit.tolist()}


def _constant_job_key(jobs: dict[str, tuple[set[str], bool]]) -> str | None:
    """coalesce(job_id, job_name, '') when it is the same on every row, else None."""
    for c in ("job_id", "job_name"):
        if c not in jobs:
            continue
        seen, has_null = jobs[c]
        if not seen:
            continue  # all null: the next column decides
        return next(iter(seen)) if len(seen) == 1 and not has_null else None
    return ""
