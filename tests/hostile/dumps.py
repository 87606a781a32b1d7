"""Synthetic metric dumps in the canonical long format (DESIGN.md), good and bad, for the
hostile-input tests of ``flinktune analyze``.

A healthy base job: Source (2 subtasks) -> Sink (2 subtasks), 30 samples 1 s apart; the Sink is
busy (~950 ms/s) and the Source back-pressured (~900 ms/s), so a correct analysis names the Sink
as the origin of back pressure. Every bad variant starts from these rows.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

T0 = 1_767_225_600_000
SAMPLES = 30
COLUMNS = ("ts", "job_id", "job_name", "vertex_id", "task_name", "subtask_index", "tm_id", "host", "metric",
           "value")


def base_rows(job_id: str = "j1", job_name: str = "job", source: str = "Source", sink: str = "Sink",
              samples: int = SAMPLES) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i in range(samples):
        ts = T0 + i * 1000
        for task, vid, metrics in (
            (source, "v-src", {"busyTimeMsPerSecond": 80.0, "backPressuredTimeMsPerSecond": 900.0,
                               "idleTimeMsPerSecond": 20.0, "outPoolUsage": 1.0, "inPoolUsage": 0.0,
                               "numRecordsOut": 1000.0 * i}),
            (sink, "v-sink", {"busyTimeMsPerSecond": 950.0, "backPressuredTimeMsPerSecond": 0.0,
                              "idleTimeMsPerSecond": 50.0, "outPoolUsage": 0.0, "inPoolUsage": 1.0,
                              "numRecordsIn": 1000.0 * i}),
        ):
            for sub in (0, 1):
                for metric, value in metrics.items():
                    rows.append({"ts": ts, "job_id": job_id, "job_name": job_name, "vertex_id": vid,
                                 "task_name": task, "subtask_index": sub, "tm_id": f"tm-{sub}", "host": "h",
                                 "metric": metric, "value": value})
    return rows


def write_parquet(path: Path, rows: list[dict[str, Any]], types: dict[str, Any] | None = None,
                  drop: tuple[str, ...] = ()) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    default = {"ts": pa.int64(), "subtask_index": pa.int32(), "value": pa.float64()}
    fields = []
    arrays = []
    for col in COLUMNS:
        if col in drop:
            continue
        typ = (types or {}).get(col, default.get(col, pa.string()))
        fields.append(pa.field(col, typ))
        arrays.append(pa.array([r.get(col) for r in rows], type=typ))
    pq.write_table(pa.Table.from_arrays(arrays, schema=pa.schema(fields)), path)
    return path


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    import csv

    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(COLUMNS))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("NaN" if isinstance(v, float) and math.isnan(v) else v)
                             for k, v in row.items()})
    return path


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    import json

    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    return path
