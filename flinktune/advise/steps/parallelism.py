"""Parallelism per vertex when an operator is too slow for its input, and what the rescaled job needs.

Evidence: the dump's true processing rates and the target rate (flinktune.analysis.parallelism;
docs/recommend.md, "Parallelism"). Where Flink reads it:

- ``pipeline.jobvertex-parallelism-overrides`` (Flink 1.17 to 1.20; PipelineOptions
  .PARALLELISM_OVERRIDES, FLINK-29501, a Map ``JobVertexID:parallelism,...``): the Dispatcher applies
  it to every job graph it is given, from the cluster's configuration and (1.19+, FLINK-33534) from the
  job's own, the job's winning (Dispatcher.applyParallelismOverrides, read in flink-dist 1.20.5). It
  overrides a parallelism the job code sets, and the vertex ids of the plan hold as long as the job's
  graph does not change. Entries for other vertices already in the file are kept. Flink 2.x still
  has the option, but its Dispatcher applies it only to a submitted JobGraph (``instanceof JobGraph``
  in Dispatcher.internalSubmitJob, flink-dist 2.3.0), and 2.x clients submit the StreamGraph: the
  overrides are ignored (FLINK-38770, open; measured on 2.3 by tests/e2e_flink/test_parallelism.py).
  So on 2.x it is not written;
- a FlinkDeployment whose vertices all run at ``spec.job.parallelism`` (none set in the job code):
  ``spec.job.parallelism``, when one parallelism serves every vertex;
- otherwise ``parallelism.default`` when every vertex follows it, else the per-vertex table as a
  change by hand: the job code sets it (``setParallelism``).

The rescaled job (``plan.rescaled``) is what the buffers and slots are sized for: its graph (the
network buffers it needs: the network-memory step) and its slots (one slot-sharing group: the largest
vertex parallelism). The other steps keep judging the job as measured. A rescale
no TaskManager size up to the memory ceiling can give the buffers for is withdrawn by the loop, as is
one beyond ``limits.MAX_RESCALE_FACTOR`` of a vertex's parallelism.
"""

from __future__ import annotations

import math
from typing import Any

from flinktune.advise.change import ProposedChange
from flinktune.advise.limits import MAX_RESCALE_FACTOR
from flinktune.advise.plan import Plan
from flinktune.advise.state import KEY_PARALLELISM
from flinktune.change import Applicability
from flinktune.model import buffers as mb
from flinktune.record import replace
from flinktune.releases import PARALLELISM_OVERRIDES, STREAM_GRAPH_SUBMISSION

NAME = "parallelism"
KEY_OVERRIDES = "pipeline.jobvertex-parallelism-overrides"
SPEC_JOB_PARALLELISM = "spec.job.parallelism"
SPEC_REPLICAS = "spec.taskManager.replicas"
METRICS = ("network_needed_bytes",)


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:.3g}"


def _evidence(advice: Any) -> tuple[str, ...]:
    out = [f"target {_rate(t.per_s)} records/s at {t.name}: {t.text}" for t in advice.targets]
    for c in advice.changes:
        r = advice.rate(c.vertex_id)
        if r is None or r.true_rate_per_subtask is None:
            continue
        out.append(f"{c.name}: {_rate(r.true_rate_per_subtask)} records per busy second and subtask "
                   f"({r.method}), {_rate(r.input_per_s or 0.0)} records/s in, busy {r.busy or 0.0:.0%} "
                   "[measured, --metrics]")
    return tuple(out)


def _table(changes: Any) -> str:
    return ", ".join(f"{c.name} {c.parallelism} -> {c.proposed}" for c in changes)


def parse_overrides(text: str) -> dict[str, str]:
    """``id:4,id2:8`` (Flink's Map syntax) -> {id: '4', ...}; unreadable entries are dropped."""
    out: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.strip().strip("'\"").partition(":")
        if sep and key.strip():
            out[key.strip()] = value.strip()
    return out


def _rescaled_graph(graph: mb.JobGraph | None, proposed: dict[str, int]) -> mb.JobGraph | None:
    if graph is None:
        return None
    return mb.JobGraph(tuple(mb.Vertex(v.id, proposed.get(v.id, v.parallelism)) for v in graph.vertices),
                       graph.edges)


def _one_parallelism(advice: Any) -> int | None:
    """The one parallelism that serves every vertex when they all run at the same one today."""
    current = {r.parallelism for r in advice.rates}
    if len(current) != 1 or not advice.changes:
        return None
    return max(c.proposed for c in advice.plan.vertices)


def propose(plan: Plan) -> None:
    m = plan.measured
    advice = getattr(m, "parallelism_advice", None) if m is not None else None
    if advice is None:
        return
    if advice.blocked is not None:
        plan.notes.append(f"Parallelism will not help: {advice.blocked}.")
        return
    if advice.withheld is not None:
        plan.withhold(f"parallelism: {advice.withheld}")
        return
    if advice.plan is not None:
        for v in advice.plan.vertices:
            if v.verdict in ("capped", "source-bound", "hot-key"):
                plan.notes.append(f"Parallelism of {v.name}: {v.reason}.")
    changes = advice.changes
    if not changes:
        return
    absurd = [c for c in changes if c.proposed > MAX_RESCALE_FACTOR * c.parallelism]
    if absurd:
        plan.withhold(f"parallelism: {_table(absurd)} is more than {MAX_RESCALE_FACTOR}x in one step, beyond "
                      "what one dump's rates support; rescale part of the way, collect again and rerun "
                      "(docs/recommend.md, 'Parallelism')")
        return
    proposed = {c.vertex_id: c.proposed for c in changes}
    evidence = _evidence(advice)
    why = (f"{_table(changes)}: each vertex sized for the target rate at "
           f"{advice.plan.target_utilization:.0%} busy from its true processing rate, walking the graph "
           "downstream (the next bottleneck in the same step)")
    # The rescaled job is what the later steps size (network buffers) and what the slots must hold.
    job = plan.job
    graph = _rescaled_graph(job.graph, {advice.vertex_ids.get(k, k): p for k, p in proposed.items()})
    largest = max([job.parallelism, *proposed.values()]) if graph is None else max(
        v.parallelism for v in graph.vertices)
    _write(plan, advice, proposed, why, evidence, slots_by_hand=_slots_by_hand(plan, largest, job))
    plan.rescaled = replace(job, graph=graph, parallelism=largest, placement=None)
    _slots(plan, largest, job)


def _slots_by_hand(plan: Plan, needed: int, before: Any) -> bool:
    """The rescaled job needs more slots than the TaskManagers that run give, and only a change made by
    hand (more TaskManagers) gives them: a parallelism written alone would leave the job waiting for
    slots until slot.request.timeout fails it."""
    have = before.taskmanagers * before.slots
    if needed <= have or plan.job_sources.get("taskmanagers", "derived") == "derived":
        return False
    # On a FlinkDeployment the operator starts them, or spec.taskManager.replicas is written beside it.
    spec = plan.spec
    return not (spec.kind == "FlinkDeployment"
                and (spec.mode != "standalone" or spec.taskmanager_replicas is not None))


def _write(plan: Plan, advice: Any, proposed: dict[str, int], why: str, evidence: tuple[str, ...],
           slots_by_hand: bool = False) -> None:
    spec = plan.spec
    one = _one_parallelism(advice)
    if (spec.kind == "FlinkDeployment" and spec.parallelism is not None and one is not None
            and all(r.parallelism == spec.parallelism for r in advice.rates)):
        plan.add(ProposedChange("set", SPEC_JOB_PARALLELISM, str(one), target="spec",
                                why=why + f"; every vertex runs at spec.job.parallelism, so {one} serves "
                                "them all", line=spec.parallelism_line, evidence=evidence,
                                current=str(spec.parallelism), metrics=METRICS))
        return
    if PARALLELISM_OVERRIDES.applies(plan.version) and not STREAM_GRAPH_SUBMISSION.applies(plan.version):
        merged = parse_overrides(str(plan.values.get(KEY_OVERRIDES) or ""))
        for key, p in proposed.items():
            merged[advice.vertex_ids.get(key, key)] = str(p)
        value = ",".join(f"{k}:{v}" for k, v in merged.items())
        why += ("; the Dispatcher applies it to the job's vertices by id (also over a parallelism the job "
                "code sets)")
        if slots_by_hand:
            # Do no harm: --write never leaves a file that fails the job without the hand-made change.
            plan.add(ProposedChange("manual", KEY_OVERRIDES, value, applicability=Applicability.MANUAL,
                                    why=why + "; set it together with the TaskManagers below, not before: "
                                    "alone it leaves the job waiting for slots", evidence=evidence,
                                    current=str(plan.values.get(KEY_OVERRIDES) or "") or None))
            return
        plan.set_option(KEY_OVERRIDES, value, why, METRICS, evidence)
        return
    if one is not None and all(r.parallelism == plan.job.parallelism for r in advice.rates):
        plan.set_option(KEY_PARALLELISM, str(one),
                        why + f"; every vertex follows the default parallelism, so {one} serves them all",
                        METRICS, evidence)
        return
    reason = (f"Flink {plan.version} applies no per-vertex override to the jobs its clients submit "
              "(pipeline.jobvertex-parallelism-overrides reaches only a submitted JobGraph; 2.x clients "
              "submit the StreamGraph: FLINK-38770)" if STREAM_GRAPH_SUBMISSION.applies(plan.version) else
              f"Flink {plan.version} has no per-vertex override (pipeline.jobvertex-parallelism-overrides, "
              "1.17+)")
    plan.add(ProposedChange("manual", "setParallelism", _table(advice.changes),
                            applicability=Applicability.MANUAL,
                            why=why + f"; {reason}: set it in the job code", evidence=evidence))


def _slots(plan: Plan, needed: int, before: Any) -> None:
    """One slot-sharing group: the rescaled job needs as many slots as its largest vertex."""
    slots = before.slots
    have = before.taskmanagers * slots
    where = plan.job_sources.get("taskmanagers", "derived")
    if needed <= have and where != "derived":
        return
    tms = math.ceil(needed / slots)
    spec = plan.spec
    if spec.kind == "FlinkDeployment" and spec.mode != "standalone":
        plan.notes.append(f"The rescaled job needs {needed} slots: {tms} TaskManagers of {slots}; the "
                          "operator's resource manager starts them as the job asks for slots.")
        plan.rescaled = replace(plan.sized_job, taskmanagers=max(tms, before.taskmanagers))
        return
    if where == "derived":
        plan.notes.append(f"The rescaled job needs {needed} slots (one slot-sharing group: its largest "
                          f"vertex): {tms} TaskManagers of {slots} slots. How many run was not given "
                          "(--taskmanagers, or collect's job.json beside the dump).")
        plan.rescaled = replace(plan.sized_job, taskmanagers=tms)
        return
    why = (f"the rescaled job needs {needed} slots (one slot-sharing group: its largest vertex), "
           f"{before.taskmanagers} TaskManagers of {slots} give {have}: Flink would wait for slots and fail "
           "the job (slot.request.timeout)")
    ev = (f"{before.taskmanagers} TaskManagers [{where}], taskmanager.numberOfTaskSlots {slots}",)
    if spec.kind == "FlinkDeployment" and spec.taskmanager_replicas is not None:
        plan.add(ProposedChange("set", SPEC_REPLICAS, str(tms), target="spec", why=why,
                                line=spec.taskmanager_replicas_line, evidence=ev,
                                current=str(spec.taskmanager_replicas)))
    else:
        plan.add(ProposedChange("manual", "TaskManagers", str(tms), applicability=Applicability.MANUAL,
                                why=why + f": run {tms} TaskManagers of {slots} slots", evidence=ev,
                                current=str(before.taskmanagers)))
    plan.rescaled = replace(plan.sized_job, taskmanagers=tms)
