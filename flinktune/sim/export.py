"""Write a run as a metrics dump: canonical long-format parquet plus Flink's REST job plan.

Layout of ``out_dir`` (the same as the real dumps in the team's data folder):
``metrics.parquet`` (columns exactly as docs/metrics-schema / DESIGN.md: ts int64 epoch ms, job_id,
job_name, vertex_id, task_name, subtask_index int32, tm_id, host, metric, value double),
``plan.json`` (``/jobs/:jobid/plan``), ``job-vertices.json`` (subtask placement) and, when the
scenario states one, ``ground_truth.json``.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from flinktune.errors import WriteError
from flinktune.sim.result import SimResult


def plan_json(result: SimResult) -> dict[str, Any]:
    """The shape of Flink's REST ``/jobs/:jobid/plan`` (flink-facts.md §5); sink first, as Flink lists."""
    sc = result.scenario
    nodes = []
    for vi, vertex in enumerate(sc.job.vertices):
        node: dict[str, Any] = {
            "id": result.vertex_ids[vi], "parallelism": vertex.parallelism, "operator": "",
            "operator_strategy": "", "description": f"{vertex.name}<br/>",
        }
        if vi > 0:
            spec = vertex.input
            node["inputs"] = [{"num": 0, "id": result.vertex_ids[vi - 1],
                               "ship_strategy": spec.ship_strategy if spec is not None else "HASH",
                               "exchange": "pipelined_bounded"}]
        node["optimizer_properties"] = {}
        nodes.append(node)
    nodes.reverse()
    return {"plan": {"jid": result.job_id, "name": sc.job.name, "type": "STREAMING", "nodes": nodes}}


def vertices_json(result: SimResult) -> dict[str, Any]:
    sc = result.scenario
    vertices = []
    for vi, vertex in enumerate(sc.job.vertices):
        subtasks = []
        for si in range(vertex.parallelism):
            tm_id, host = result.tm_host(result.placement[vi][si])
            subtasks.append({"subtask": si, "host": host, "taskmanager_id": tm_id, "status": "RUNNING",
                             "attempt": 0})
        vertices.append({"id": result.vertex_ids[vi], "name": vertex.name,
                         "parallelism": vertex.parallelism, "subtasks": subtasks})
    return {"job": {"jid": result.job_id, "name": sc.job.name, "state": "RUNNING",
                    "start-time": sc.start_epoch_ms, "job-type": "STREAMING"},
            "vertices": vertices}


def metrics_table(result: SimResult) -> Any:
    """The samples as a pyarrow Table in the canonical schema."""
    import pyarrow as pa

    sc = result.scenario
    s = result.samples
    names = [v.name for v in sc.job.vertices]
    ts = (sc.start_epoch_ms + np.rint(s.t_s * 1000.0)).astype(np.int64)
    vertex_ids = np.asarray(result.vertex_ids, dtype=object)[s.vertex]
    task_names = np.asarray(names, dtype=object)[s.vertex]
    tm_ids = []
    hosts = []
    for vi, si in zip(s.vertex.tolist(), s.subtask.tolist(), strict=True):
        tm_id, host = result.tm_host(result.placement[vi][si])
        tm_ids.append(tm_id)
        hosts.append(host)
    metric = np.asarray(s.metric_names, dtype=object)[s.metric]
    schema = pa.schema([
        ("ts", pa.int64()), ("job_id", pa.string()), ("job_name", pa.string()),
        ("vertex_id", pa.string()), ("task_name", pa.string()), ("subtask_index", pa.int32()),
        ("tm_id", pa.string()), ("host", pa.string()), ("metric", pa.string()), ("value", pa.float64()),
    ])
    n = len(ts)
    return pa.table({
        "ts": pa.array(ts, pa.int64()),
        "job_id": pa.array([result.job_id] * n, pa.string()),
        "job_name": pa.array([sc.job.name] * n, pa.string()),
        "vertex_id": pa.array(vertex_ids.tolist(), pa.string()),
        "task_name": pa.array(task_names.tolist(), pa.string()),
        "subtask_index": pa.array(s.subtask, pa.int32()),
        "tm_id": pa.array(tm_ids, pa.string()),
        "host": pa.array(hosts, pa.string()),
        "metric": pa.array(metric.tolist(), pa.string()),
        "value": pa.array(s.value, pa.float64()),
    }, schema=schema)


def _atomic_write(path: Path, write: Any) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def export_dump(result: SimResult, out_dir: str | Path) -> Path:
    """Write the dump into ``out_dir`` (created if needed); returns the path of metrics.parquet."""
    import pyarrow.parquet as pq

    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        table = metrics_table(result)
        parquet = out / "metrics.parquet"
        _atomic_write(parquet, lambda tmp: pq.write_table(table, tmp))
        documents = {"plan.json": plan_json(result), "job-vertices.json": vertices_json(result)}
        if result.scenario.ground_truth is not None:
            documents["ground_truth.json"] = {"scenario": result.scenario.name,
                                              **result.scenario.ground_truth}
        for name, doc in documents.items():
            text = json.dumps(doc, indent=1, sort_keys=False) + "\n"
            _atomic_write(out / name, lambda tmp, text=text: Path(tmp).write_text(text, encoding="utf-8"))
    except OSError as error:
        raise WriteError(f"cannot write the dump: {error.strerror or error}", file=str(out)) from None
    return parquet
