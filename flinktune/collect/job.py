"""Find the job to collect from and read its vertices and subtask placement.

Endpoints (flink-facts.md §4.4/§5; rest_v1_dispatcher.yml @1.20): ``/config`` (flink-version),
``/jobs/overview``, ``/jobs/:jobid`` (state, vertices), ``/jobs/:jobid/vertices/:vertexid``
(subtasks with their TaskManager), ``/jobs/:jobid/plan``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from flinktune.collect.rest import FlinkRestClient, HttpStatusError
from flinktune.errors import CollectError

# JobStatus.isGloballyTerminalState @1.20: these never run again.
TERMINAL_STATES = frozenset({"FINISHED", "CANCELED", "FAILED"})
_JOB_ID = re.compile(r"^[0-9a-fA-F]{32}$")


@dataclass(frozen=True)
class SubtaskPlacement:
    subtask_index: int
    tm_id: str | None
    host: str | None
    status: str | None


@dataclass(frozen=True)
class VertexInfo:
    vertex_id: str
    name: str
    parallelism: int
    subtasks: tuple[SubtaskPlacement, ...] = ()
    # The number of key groups (/jobs/:jobid vertices[].maxParallelism): a rescale's ceiling.
    max_parallelism: int | None = None


@dataclass(frozen=True)
class JobInfo:
    job_id: str
    name: str
    state: str
    vertices: tuple[VertexInfo, ...]
    # Flink 2.x: /jobs/:id's stream graph while operators are still to become job vertices (batch).
    stream_graph: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    pending_operators: int = 0


def check_flink(client: FlinkRestClient) -> str:
    """Return the Flink version the REST API reports; a clear error if it is not Flink's REST API."""
    try:
        config = client.get_json("/config")
    except HttpStatusError as error:
        raise CollectError(
            f"{client.base_url} does not look like Flink's REST API "
            f"(GET /config answered HTTP {error.status})"
        ) from None
    if not isinstance(config, dict) or "flink-version" not in config:
        raise CollectError(
            f"{client.base_url} does not look like Flink's REST API (no flink-version in /config)"
        )
    return str(config["flink-version"])


def _overview(client: FlinkRestClient) -> list[dict[str, Any]]:
    jobs = client.get_json("/jobs/overview")
    if not isinstance(jobs, dict) or not isinstance(jobs.get("jobs"), list):
        raise CollectError(f"GET {client.url_for('/jobs/overview')} answered an unexpected shape")
    return [j for j in jobs["jobs"] if isinstance(j, dict)]


def resolve_job_id(client: FlinkRestClient, job_id: str | None, job_name: str | None) -> str:
    """The one job to collect: by id, by name, or the only running job."""
    if job_id is not None and job_name is not None:
        raise CollectError("give --job or --job-name, not both")
    if job_id is not None:
        if not _JOB_ID.match(job_id):
            raise CollectError(f"--job {job_id!r} is not a Flink job id (32 hex digits)")
        return job_id.lower()
    jobs = _overview(client)
    if job_name is not None:
        named = [j for j in jobs if j.get("name") == job_name]
        live = [j for j in named if j.get("state") not in TERMINAL_STATES]
        if len(live) == 1:
            return str(live[0]["jid"])
        if len(live) > 1:
            ids = ", ".join(str(j["jid"]) for j in live)
            raise CollectError(
                f"{len(live)} running jobs are named {job_name!r} ({ids}): pick one with --job"
            )
        if named:
            states = ", ".join(sorted({str(j.get("state")) for j in named}))
            raise CollectError(
                f"job {job_name!r} is no longer running (state {states}); collect needs a running job"
            )
        running = ", ".join(repr(j.get("name")) for j in jobs if j.get("state") not in TERMINAL_STATES)
        raise CollectError(f"no job named {job_name!r} on {client.base_url} (running: {running or 'none'})")
    live = [j for j in jobs if j.get("state") not in TERMINAL_STATES]
    if len(live) == 1:
        return str(live[0]["jid"])
    if not live:
        raise CollectError(f"no running job on {client.base_url}")
    names = ", ".join(f"{j.get('name')!r} ({j.get('jid')})" for j in live)
    raise CollectError(f"{len(live)} jobs are running ({names}): pick one with --job or --job-name")


def read_job(client: FlinkRestClient, job_id: str) -> JobInfo:
    """State and vertices of a job; an unknown job id is a clear error."""
    try:
        detail = client.get_json(f"/jobs/{job_id}")
    except HttpStatusError as error:
        if error.status in (400, 404):
            raise CollectError(f"no job {job_id} on {client.base_url} (HTTP {error.status})") from None
        raise
    if not isinstance(detail, dict) or "state" not in detail:
        raise CollectError(f"GET {client.url_for('/jobs/' + job_id)} answered an unexpected shape")
    vertices = tuple(
        VertexInfo(
            vertex_id=str(v["id"]), name=str(v.get("name", v["id"])),
            parallelism=int(v.get("parallelism", 0)), max_parallelism=_positive(v.get("maxParallelism")),
        )
        for v in detail.get("vertices", [])
        if isinstance(v, dict) and "id" in v
    )
    pending = detail.get("pending-operators")
    stream = detail.get("stream-graph")
    return JobInfo(
        job_id=job_id, name=str(detail.get("name", "")), state=str(detail["state"]), vertices=vertices,
        stream_graph=stream if isinstance(stream, dict) else None,
        pending_operators=pending if isinstance(pending, int) and not isinstance(pending, bool) else 0,
    )


def _positive(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _host_of(subtask: dict[str, Any]) -> str | None:
    host = subtask.get("host")
    if isinstance(host, str) and host:
        return host
    endpoint = subtask.get("endpoint")
    if isinstance(endpoint, str) and endpoint:
        return endpoint.rsplit(":", 1)[0]
    return None


def read_placement(client: FlinkRestClient, job_id: str, vertex: VertexInfo) -> VertexInfo:
    """The vertex with each subtask's TaskManager id, host and status."""
    detail = client.get_json(f"/jobs/{job_id}/vertices/{vertex.vertex_id}")
    subtasks = []
    for s in detail.get("subtasks", []) if isinstance(detail, dict) else []:
        if not isinstance(s, dict) or "subtask" not in s:
            continue
        tm = s.get("taskmanager-id")
        subtasks.append(
            SubtaskPlacement(
                subtask_index=int(s["subtask"]),
                tm_id=str(tm) if tm not in (None, "", "(unassigned)") else None,
                host=_host_of(s),
                status=s.get("status"),
            )
        )
    return VertexInfo(vertex.vertex_id, vertex.name, vertex.parallelism, tuple(subtasks),
                      vertex.max_parallelism)


def placement_document(job: JobInfo, flink_version: str) -> dict[str, Any]:
    """What `job.json` holds: the job and each subtask's TaskManager (the model uses placement)."""
    return {
        "job": {"jid": job.job_id, "name": job.name, "state": job.state, "flink-version": flink_version},
        "vertices": [
            {
                "id": v.vertex_id,
                "name": v.name,
                "parallelism": v.parallelism,
                **({"maxParallelism": v.max_parallelism} if v.max_parallelism else {}),
                "subtasks": [
                    {
                        "subtask": s.subtask_index,
                        "host": s.host,
                        "taskmanager_id": s.tm_id,
                        "status": s.status,
                    }
                    for s in v.subtasks
                ],
            }
            for v in job.vertices
        ],
    }


def plan_with_stream_graph(plan: Any, details: Any) -> Any:
    """``/jobs/:id/plan`` with ``/jobs/:id``'s ``stream-graph`` and ``pending-operators`` beside it when
    Flink (2.x, a batch job) has not built the whole job graph yet: the plan then lacks the vertices
    still to come, and the reader completes it from the stream graph (situation.plan). ``details`` is
    the ``/jobs/:id`` JSON or a JobInfo read from it."""
    if isinstance(details, JobInfo):
        details = {"pending-operators": details.pending_operators, "stream-graph": details.stream_graph}
    if not isinstance(plan, dict) or not isinstance(details, dict):
        return plan
    pending = details.get("pending-operators")
    if isinstance(pending, int) and pending > 0 and isinstance(details.get("stream-graph"), dict):
        return {**plan, "stream-graph": details["stream-graph"], "pending-operators": pending}
    return plan
