"""Reading the job graph a user gives: Flink's ``/jobs/:jobid/plan`` JSON (``--plan``, ``plan.json``
beside a dump) and ``flinktune collect``'s ``job.json`` (subtask placement). Plain data here; the
model turns it into a JobGraph (model.buffers.job_graph_from_plan / placement_from_job_json)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flinktune.errors import ConfigError


def read_json_object(path: str | Path, what: str = "the plan") -> dict[str, Any]:
    """A JSON object from ``path``; bad input is one ConfigError naming the file."""
    from flinktune.config.safe_load import load_json

    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read {what}: {error.strerror or error}", file=file) from None
    except UnicodeDecodeError:
        raise ConfigError(f"{what} is not JSON: not UTF-8 text", file=file) from None
    data = load_json(text, file=file, prefix=f"{what} is not JSON")
    if not isinstance(data, dict):
        raise ConfigError(f"{what} must be a JSON object", file=file)
    return data


PENDING_KEY = "pending-operators"
STREAM_GRAPH_KEY = "stream-graph"


def with_pending_operators(document: Mapping[str, Any]) -> tuple[Mapping[str, Any], int]:
    """The plan with the operators Flink has not yet turned into job vertices, and how many.

    Flink 2.x builds a batch job's graph as the job runs (the adaptive graph manager, FLIP-469):
    ``/jobs/:jobid/plan`` holds only the job vertices made so far (a job that failed in its first
    stage shows its sources alone), while ``/jobs/:jobid`` also gives ``stream-graph`` (every
    operator, with ``job_vertex_id`` once it has one) and ``pending-operators``. Given such a
    document (or a plan with those two keys beside it), pending operators become vertices: chained
    where Flink chains them (a single FORWARD input at the same parallelism; StreamingJobGraphGenerator
    .isChainable), joined by the plan's own exchange type (blocking when it has none), at their
    stream-graph parallelism (-1: not decided yet, which the model charges at the scheduler's bound).
    Anything else is returned as it is, with 0."""
    inner = document.get("plan", document)
    pending = document.get(PENDING_KEY)
    stream = document.get(STREAM_GRAPH_KEY)
    if (not isinstance(inner, Mapping) or not isinstance(inner.get("nodes"), list)
            or not isinstance(pending, int) or isinstance(pending, bool) or pending <= 0
            or not isinstance(stream, Mapping) or not isinstance(stream.get("nodes"), list)):
        return document, 0
    operators = {str(n["id"]): n for n in stream["nodes"] if isinstance(n, Mapping) and "id" in n}
    waiting = [op for op in operators.values() if not op.get("job_vertex_id")]
    if not waiting:
        return document, 0
    exchanges = [str(i.get("exchange")) for n in inner["nodes"] if isinstance(n, Mapping)
                 for i in n.get("inputs") or [] if isinstance(i, Mapping) and i.get("exchange")]
    exchange = exchanges[0] if exchanges else "blocking"
    group = {str(op["id"]): str(op["id"]) for op in waiting}

    def root(op_id: str) -> str:
        while group[op_id] != op_id:
            group[op_id] = group[group[op_id]]
            op_id = group[op_id]
        return op_id

    def inputs(op: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        return [i for i in op.get("inputs") or [] if isinstance(i, Mapping)]

    for op in waiting:
        ins = inputs(op)
        if len(ins) != 1:
            continue
        up = operators.get(str(ins[0].get("id")))
        forward = str(ins[0].get("ship_strategy", "")).upper() == "FORWARD"
        if (up is not None and not up.get("job_vertex_id") and forward
                and up.get("parallelism") == op.get("parallelism")):
            group[root(str(op["id"]))] = root(str(up["id"]))

    def vertex_of(op_id: str) -> str:
        op = operators.get(op_id)
        if op is None:
            return op_id     # not in the stream graph: the plan reader reports the unknown vertex
        return str(op.get("job_vertex_id") or f"pending-{root(op_id)}")

    nodes: dict[str, dict[str, Any]] = {}
    for op in waiting:
        vid = vertex_of(str(op["id"]))
        node = nodes.setdefault(vid, {"id": vid, "parallelism": op.get("parallelism"), "description": "",
                                      "inputs": []})
        name = str(op.get("description") or op.get("operator") or op["id"])
        node["description"] = f"{node['description']}<br/>+- {name}" if node["description"] else name
        for item in inputs(op):
            source = vertex_of(str(item.get("id")))
            if source != vid:
                node["inputs"].append({"num": len(node["inputs"]), "id": source, "exchange": exchange,
                                       "ship_strategy": item.get("ship_strategy", "HASH")})
    completed = {**inner, "nodes": [*inner["nodes"], *nodes.values()]}
    return {"plan": completed}, len(waiting)
