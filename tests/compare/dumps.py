"""Small hand-made dumps for compare's end-to-end tests (Spark): a chain of vertices polled every 2 s,
as `flinktune collect` writes it (metrics.parquet, plan.json, checkpoints.json)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from testkit import DUMP_COLUMNS

from flinktune.analysis.checkpoints import Checkpoint, CheckpointLog, to_document
from flinktune.collect.writer import arrow_schema


@dataclass
class Vertex:
    vertex_id: str
    name: str
    parallelism: int
    rate: float  # records/s through the vertex (all subtasks)
    busy: float = 0.2  # share of time
    backpressured: float = 0.0


@dataclass
class Run:
    job_id: str
    job_name: str
    vertices: Sequence[Vertex]
    seconds: int = 60
    interval_s: int = 2
    noise: float = 0.05  # relative noise of each poll's counter increment and of the gauges
    checkpoints_s: Sequence[float] | None = None  # durations, one checkpoint every 4 s from the start
    start_ms: int = 1_795_000_000_000
    extra: Mapping[str, float] = field(default_factory=dict)


def write(run: Run, folder: Path, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    rows: dict[str, list[object]] = {c: [] for c in DUMP_COLUMNS}
    polls = run.seconds // run.interval_s + 1
    last = len(run.vertices) - 1
    for index, v in enumerate(run.vertices):
        for sub in range(v.parallelism):
            count_in = count_out = 0.0
            for poll in range(polls):
                ts = run.start_ms + 1000 * run.interval_s * poll
                step = max(
                    0.0, v.rate / v.parallelism * run.interval_s * (1 + run.noise * rng.standard_normal())
                )
                if poll:
                    count_in += step if index else 0.0
                    count_out += step if index < last else 0.0

                def share(level: float) -> float:
                    return (
                        float(np.clip(level + run.noise * 0.2 * rng.standard_normal(), 0.0, 1.0))
                        if level
                        else 0.0
                    )

                bp = share(v.backpressured)
                busy = share(v.busy)
                values = {
                    "numRecordsIn": count_in,
                    "numRecordsOut": count_out,
                    "busyTimeMsPerSecond": 1000 * busy,
                    "backPressuredTimeMsPerSecond": 1000 * bp,
                    "idleTimeMsPerSecond": 1000 * max(0.0, 1 - busy - bp),
                    "outPoolUsage": 1.0 if bp > 0.5 else (0.0 if index == last else 0.25),
                    "inPoolUsage": share(0.9 if index and run.vertices[index].busy > 0.8 else 0.1)
                    if index
                    else 0.0,
                }
                for metric, value in values.items():
                    for c, x in (
                        ("ts", ts),
                        ("job_id", run.job_id),
                        ("job_name", run.job_name),
                        ("vertex_id", v.vertex_id),
                        ("task_name", v.name),
                        ("subtask_index", sub),
                        ("tm_id", f"tm-{sub % 2}"),
                        ("host", "localhost"),
                        ("metric", metric),
                        ("value", float(value)),
                    ):
                        rows[c].append(x)
    pq.write_table(pa.Table.from_pydict(rows, schema=arrow_schema()), folder / "metrics.parquet")
    nodes = []
    for index, v in enumerate(run.vertices):
        node: dict[str, object] = {
            "id": v.vertex_id,
            "parallelism": v.parallelism,
            "operator": "",
            "operator_strategy": "",
            "description": v.name,
            "optimizer_properties": {},
        }
        if index:
            node["inputs"] = [
                {
                    "num": 0,
                    "id": run.vertices[index - 1].vertex_id,
                    "ship_strategy": "HASH",
                    "exchange": "pipelined_bounded",
                }
            ]
        nodes.append(node)
    plan = {"plan": {"jid": run.job_id, "name": run.job_name, "type": "STREAMING", "nodes": nodes}}
    (folder / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    if run.checkpoints_s is not None:
        done = tuple(
            Checkpoint(
                i + 1,
                "COMPLETED",
                False,
                run.start_ms + 4000 * i,
                run.start_ms + 4000 * i + int(d * 1000),
                d * 1000 * (1 + run.noise * rng.standard_normal()),
                2e6,
                2e6,
                False,
            )
            for i, d in enumerate(run.checkpoints_s)
        )
        log = CheckpointLog(run.job_id, run.job_name, "rest", done)
        (folder / "checkpoints.json").write_text(json.dumps(to_document(log)), encoding="utf-8")
    return folder


CHAIN = (
    ("a1" * 16, "Source: Gen", 2),
    ("b2" * 16, "Map", 2),
    ("c3" * 16, "Sink: Out", 2),
)


def chain(
    rate: float = 1000.0,
    sink_busy: float = 0.3,
    upstream_bp: float = 0.0,
    parallelism: Mapping[str, int] | None = None,
) -> list[Vertex]:
    out = []
    for vid, name, p in CHAIN:
        p = (parallelism or {}).get(name, p)
        sink = name.startswith("Sink")
        out.append(
            Vertex(
                vid,
                name,
                p,
                rate,
                busy=sink_busy if sink else 0.1,
                backpressured=0.0 if sink else upstream_bp,
            )
        )
    return out
