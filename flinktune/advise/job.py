"""The job facts the planner reads, taken from the resolved Situation (flinktune.situation: version,
parallelism, slots, TaskManagers, exchanges bound, workload, rtt, bandwidth, each with its source),
plus the per-subtask rate, record size and skew (a flag wins, then the dump, then a profile)."""

from __future__ import annotations

from typing import Any

from flinktune.advise.measured import Measured
from flinktune.advise.state import Job
from flinktune.errors import FlinktuneError
from flinktune.model import buffers as mb
from flinktune.model.layout import check_placement
from flinktune.model.network_fit import blocking_batch, plan_graph
from flinktune.record import replace
from flinktune.situation import Environment, Situation


def _plan_inner(plan: Any) -> dict[str, Any]:
    if not plan:
        return {}
    inner = plan.get("plan", plan)
    return inner if isinstance(inner, dict) else {}


def _longest_path(graph: mb.JobGraph) -> int:
    """Exchanges a record crosses on the longest source-to-sink path of the plan (flush waits add up)."""
    incoming: dict[str, list[str]] = {v.id: [] for v in graph.vertices}
    for edge in graph.edges:
        incoming[edge.target].append(edge.source)
    depth: dict[str, int] = {}

    def walk(vertex: str, seen: frozenset[str]) -> int:
        if vertex in depth:
            return depth[vertex]
        if vertex in seen:      # a cycle (iterations): count it once
            return 0
        best = max((walk(src, seen | {vertex}) + 1 for src in incoming[vertex]), default=0)
        depth[vertex] = best
        return best

    return max((walk(v.id, frozenset()) for v in graph.vertices), default=0)


def _multi_input_vertices(plan: Any, graph: mb.JobGraph | None) -> tuple[str, ...]:
    """Vertices reading more than one input (several gates or a union): debloating's weak spot."""
    if graph is None:
        return ()
    nodes = _plan_inner(plan).get("nodes", [])
    names = {str(n.get("id")): str(n.get("description") or n.get("id")) for n in nodes if isinstance(n, dict)}
    return tuple(names.get(v.id, v.id) for v in graph.vertices
                 if sum(1 for e in graph.edges if e.target == v.id) > 1)


_MEASURED = {"rate": "rate_per_subtask", "record-size": "record_bytes", "skew": "skew"}


def resolve_job(situation: Situation, measured: Measured | None) -> tuple[Job, Environment, list[str]]:
    """The planner's Job, the environment as reported (values and sources), and what was assumed."""
    env = situation.environment
    assumptions: list[str] = situation.unreadable_job_values()
    found: dict[str, Any] = {}
    sources: dict[str, str] = dict(env.sources)
    for name, attr in _MEASURED.items():
        value, where = env.value(name), env.source(name)
        m_value = getattr(measured, attr, None) if measured is not None else None
        if where != "flag" and m_value is not None:
            value, where = m_value, "metrics"
        found[name] = value
        if value is not None and where:
            sources[name] = where
    from_plan = plan_graph(situation)
    graph = from_plan[0] if from_plan is not None else None
    if situation.plan_note:
        assumptions.append(situation.plan_note)
    if from_plan is not None and from_plan[1] is not None:
        assumptions.append(from_plan[1].describe())
    parallelism, slots = situation.parallelism, situation.slots
    if parallelism.source == "default" and not any(a.startswith("parallelism 1:") for a in assumptions):
        assumptions.append("parallelism 1 (nothing says otherwise: give --parallelism)")
    if situation.rtt_s.source == "default":
        assumptions.append("round trip 1 ms for the model's numbers only (never a reason to change a "
                           "setting; "
                           "give --rtt)")
    if situation.bandwidth_bytes_per_s.source == "default":
        assumptions.append("10 Gbit/s per TaskManager for the model's numbers only (give --bandwidth)")
    if graph is not None:
        exchanges = _longest_path(graph) or 1
        exchanges_source = "plan"
    else:
        exchanges = situation.exchanges.value
        exchanges_source = situation.exchanges.source
        if exchanges_source == "default":
            shape = ("a batch job's stages one after another, the busiest joining two exchanges, "
                     "channels local only where the cluster guarantees it" if blocking_batch(situation)
                     else "every slot hosting a subtask of every vertex")
            assumptions.append(f"no job plan: buffer demand sized for a pessimistic bound of {exchanges} "
                               f"all-to-all exchanges, {shape} (give --plan, or --exchanges N)")
    job = Job(parallelism=parallelism.value, slots=slots.value, taskmanagers=situation.taskmanagers.value,
              exchanges=exchanges, workload=situation.workload.value, rtt_s=situation.rtt_s.value,
              bandwidth_bytes_per_s=situation.bandwidth_bytes_per_s.value, rate_per_subtask=found["rate"],
              record_bytes=found["record-size"], latency_target_s=env.latency_target_s, skew=found["skew"],
              graph=graph, multi_input_vertices=_multi_input_vertices(situation.plan, graph),
              placement=dict(situation.placement) if graph is not None and situation.placement else None,
              exchanges_source=exchanges_source, deployment=situation.deployment.value)
    if job.placement is not None and graph is not None:
        try:
            check_placement(graph, job.placement)
        except FlinktuneError as error:
            # A placement that does not match the plan (another run, other slots) is worse than none.
            job = replace(job, placement=None)
            assumptions.append(f"the subtask placement beside the dump was not used: {error.message}")
    for name, attr in (("parallelism", "parallelism"), ("slots", "slots"), ("taskmanagers", "taskmanagers"),
                       ("workload", "workload"), ("rtt", "rtt_s"), ("bandwidth", "bandwidth_bytes_per_s")):
        sources[name] = getattr(situation, attr).source
    sources["exchanges"] = exchanges_source
    if job.placement and situation.taskmanagers.source == "derived":
        # The TaskManagers the job ran on (collect's job.json) beat ceil(parallelism / slots).
        job = replace(job, taskmanagers=len(set(job.placement.values())))
        sources["taskmanagers"] = "metrics"
    resolved = replace(env, parallelism=job.parallelism, slots=job.slots, taskmanagers=job.taskmanagers,
                       rtt_s=job.rtt_s, bandwidth_bytes_per_s=job.bandwidth_bytes_per_s,
                       workload=job.workload,
                       exchanges=job.exchanges, rate_per_subtask=job.rate_per_subtask,
                       record_bytes=job.record_bytes, skew=job.skew, sources=tuple(sorted(sources.items())))
    if job.rate_per_subtask is None or job.record_bytes is None:
        assumptions.append("no rate / record size: throughput needs are unknown (nothing is sized for them), "
                           "latency and drain times are upper bounds")
    return job, resolved, assumptions
