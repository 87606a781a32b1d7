"""The job graph from Flink's REST ``/jobs/:jobid/plan`` answer (flink-facts.md §5).

Edges are stored on the consumer only (``nodes[].inputs[].id``); the reverse map gives
downstream. Also accepted: the bare ``{"jid", "nodes"}`` object and ``/jobs/:jobid`` (which
embeds ``plan`` and lists ``vertices[].name``, the task names metrics carry).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from flinktune.errors import MetricsError


@dataclass(frozen=True)
class Edge:
    source_id: str
    target_id: str
    ship_strategy: str
    exchange: str


@dataclass(frozen=True)
class PlanVertex:
    vertex_id: str
    name: str
    parallelism: int
    max_parallelism: int | None = None  # /jobs/:jobid vertices[].maxParallelism (collect's job.json)


@dataclass(frozen=True)
class JobPlan:
    job_id: str
    job_name: str
    vertices: tuple[PlanVertex, ...]
    edges: tuple[Edge, ...]
    source_file: str = ""

    def upstream(self, vertex_id: str) -> tuple[str, ...]:
        return tuple(e.source_id for e in self.edges if e.target_id == vertex_id)

    def downstream(self, vertex_id: str) -> tuple[str, ...]:
        return tuple(e.target_id for e in self.edges if e.source_id == vertex_id)

    def ancestors(self, vertex_id: str) -> tuple[str, ...]:
        seen: list[str] = []
        todo = list(self.upstream(vertex_id))
        while todo:
            v = todo.pop()
            if v not in seen:
                seen.append(v)
                todo.extend(self.upstream(v))
        return tuple(seen)

    def topological_order(self) -> tuple[str, ...]:
        """Sources first; ties keep the order of ``vertices`` (Kahn's algorithm)."""
        ids = [v.vertex_id for v in self.vertices]
        indegree = {v: len(self.upstream(v)) for v in ids}
        order: list[str] = []
        ready = [v for v in ids if indegree[v] == 0]
        while ready:
            v = ready.pop(0)
            order.append(v)
            for d in self.downstream(v):
                indegree[d] -= 1
                if indegree[d] == 0:
                    ready.append(d)
        # A cycle cannot come from Flink; keep whatever is left rather than drop vertices.
        order.extend(v for v in ids if v not in order)
        return tuple(order)

    def id_for(self, key: str) -> str | None:
        """The plan's vertex id for a metrics key: the id itself, the task name, or the task name
        as the Prometheus reporter filters it (characters outside [a-zA-Z0-9:_] become '_')."""
        for v in self.vertices:
            if key == v.vertex_id:
                return v.vertex_id
        for v in self.vertices:
            if key == v.name or key == prometheus_filtered(v.name):
                return v.vertex_id
        return None

    def max_parallelism_of(self, vertex_id: str) -> int | None:
        for v in self.vertices:
            if v.vertex_id == vertex_id:
                return v.max_parallelism
        return None

    def with_max_parallelism(self, found: dict[str, int]) -> JobPlan:
        """The plan with the vertices' max parallelism from elsewhere (``job.json``) where it has none."""
        vertices = tuple(
            v if v.max_parallelism is not None or v.vertex_id not in found
            else PlanVertex(v.vertex_id, v.name, v.parallelism, found[v.vertex_id])
            for v in self.vertices
        )
        return JobPlan(self.job_id, self.job_name, vertices, self.edges, self.source_file)

    def name_of(self, vertex_id: str) -> str | None:
        for v in self.vertices:
            if v.vertex_id == vertex_id:
                return v.name
        return None


def prometheus_filtered(text: str) -> str:
    """AbstractPrometheusReporter's label-value filter (flink-facts.md §4.3)."""
    return re.sub(r"[^a-zA-Z0-9:_]", "_", text)


def name_from_description(description: str) -> str:
    """``SinkWork<br/>+- Discard: Writer<br/>`` -> ``SinkWork -> Discard: Writer`` (the task name
    Flink gives a chain: operator names joined by `` -> ``)."""
    parts = [re.sub(r"^\s*\+-\s*", "", p).strip() for p in re.split(r"<br\s*/?>", description)]
    return " -> ".join(p for p in parts if p)


def parse_plan(data: object, source_file: str = "") -> JobPlan:
    if not isinstance(data, dict):
        raise MetricsError("job plan is not a JSON object", file=source_file or None)
    names: dict[str, str] = {}
    limits = max_parallelism_in(data)
    if isinstance(data.get("vertices"), list):
        for v in data["vertices"]:
            if isinstance(v, dict) and "id" in v and "name" in v:
                names[str(v["id"])] = str(v["name"])
    plan = data.get("plan", data)
    if not isinstance(plan, dict) or not isinstance(plan.get("nodes"), list):
        raise MetricsError(
            "job plan has no 'nodes' list (expected Flink's /jobs/:jobid/plan answer)",
            file=source_file or None,
        )
    vertices: list[PlanVertex] = []
    edges: list[Edge] = []
    for node in plan["nodes"]:
        if not isinstance(node, dict) or "id" not in node:
            raise MetricsError("job plan node without an 'id'", file=source_file or None)
        vid = str(node["id"])
        name = names.get(vid) or name_from_description(str(node.get("description", ""))) or vid
        try:
            parallelism = int(node.get("parallelism", 0))
        except (TypeError, ValueError, OverflowError):  # OverflowError: Infinity / 1e999
            raise MetricsError(
                f"job plan node {vid} has a non-integer parallelism", file=source_file or None
            ) from None
        vertices.append(PlanVertex(vid, name, parallelism, limits.get(vid)))
        for inp in node.get("inputs", []) or []:
            if isinstance(inp, dict) and "id" in inp:
                edges.append(
                    Edge(str(inp["id"]), vid, str(inp.get("ship_strategy", "")), str(inp.get("exchange", "")))
                )
    return JobPlan(
        str(plan.get("jid", "")), str(plan.get("name", "")), tuple(vertices), tuple(edges), source_file
    )


def max_parallelism_in(data: object) -> dict[str, int]:
    """Vertex id -> max parallelism from a ``/jobs/:jobid`` answer or collect's ``job.json``
    (``vertices[].maxParallelism``); empty when it says nothing."""
    out: dict[str, int] = {}
    vertices = data.get("vertices") if isinstance(data, dict) else None
    for v in vertices if isinstance(vertices, list) else []:
        if isinstance(v, dict) and "id" in v:
            limit = v.get("maxParallelism")
            if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
                out[str(v["id"])] = limit
    return out


def max_parallelism_beside(inputs: list[str]) -> dict[str, int]:
    """The vertices' max parallelism from ``job.json`` beside the dump (flinktune collect), if any."""
    for item in inputs:
        p = Path(item)
        candidate = (p if p.is_dir() else p.parent) / "job.json"
        if candidate.is_file():
            try:
                return max_parallelism_in(json.loads(candidate.read_text(encoding="utf-8")))
            except (OSError, ValueError, RecursionError):
                return {}   # the placement file is a courtesy here: the plan stands without it
    return {}


def load_plan(path: str | Path) -> JobPlan:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise MetricsError(f"cannot read job plan: {error}", file=str(p)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise MetricsError(
            f"job plan is not valid JSON: {error.msg}", file=str(p), line=error.lineno
        ) from None
    except (ValueError, RecursionError) as error:  # over-long integers, absurd nesting
        problem = "nests too deeply" if isinstance(error, RecursionError) else str(error).split(";")[0]
        raise MetricsError(f"job plan is not valid JSON: {problem}", file=str(p)) from None
    return parse_plan(data, str(p))


def find_plan_beside(inputs: list[str]) -> Path | None:
    """A ``plan.json`` in the dump's folder (or the folder itself when a folder is given)."""
    for item in inputs:
        p = Path(item)
        folder = p if p.is_dir() else p.parent
        candidate = folder / "plan.json"
        if candidate.is_file():
            return candidate
    return None
