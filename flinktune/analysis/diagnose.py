"""Where back pressure starts and why: pure functions over the per-vertex facts.

Following Flink's own guidance (seed: "Flink Network Stack Vol. 2: Monitoring, Metrics, and that
Backpressure Thing", and docs ops/monitoring/back_pressure for the busy/back-pressured time
metrics of 1.13+):

- origin: the vertex downstream of back-pressured ones that is not back-pressured itself
  (usually busy);
- cause at the origin: busy receiver (all subtasks busy: scale out; one hot subtask: skew,
  scaling will not help), or, when the receiver is neither busy nor holding full input pools
  while its senders' output pools are full, the network: a saturated link (throughput near
  the bandwidth) or too few credits for the round trip (low throughput);
- channels: floating buffers full and exclusive ones not -> some channels; exclusive ones full
  too -> most or all channels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flinktune.analysis.facts import BUSY, LEVEL_HIGH, SubtaskFacts, VertexFacts, rollup_vertex
from flinktune.analysis.plan import JobPlan
from flinktune.model.link import LINK_SATURATED, link_share
from flinktune.situation.environment import Environment

# Pool usage seen as "high": well above the ~0.25 a healthy sender's output pool rests at (one
# partly filled buffer held per channel; real-flink-notes.md) and close to full.
POOL_HIGH = 0.75
IN_POOL_HIGH = 0.5
FLOATING_FULL = 0.9
EXCLUSIVE_HIGH = 0.5

CAUSES = (
    "all_busy",
    "hot_subtask",
    "slow_receiver",
    "network_bottleneck",
    "too_few_credits",
    "network_or_credits",
)


# taskmanager.memory.segment-size: 32 KiB by default in every version (flink-facts.md).
DEFAULT_SEGMENT_BYTES = 32 * 1024


@dataclass(frozen=True)
class Origin:
    vertex_key: str
    name: str
    cause: str
    channels: str  # some | all | unknown
    confidence: float
    hot_subtask: int | None
    upstream_backpressured: tuple[str, ...]
    upstream_not_backpressured: tuple[str, ...]
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class JobDiagnosis:
    job_key: str
    job_id: str | None
    job_name: str | None
    vertices: tuple[VertexFacts, ...]  # topological order when a plan is known
    origins: tuple[Origin, ...]
    has_plan: bool
    single_sample: bool
    notes: tuple[str, ...] = field(default=())
    strips: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # vertex_key -> (bp, busy)
    window_ms: tuple[int, int] | None = None  # the samples analysed, after the warm-up
    # Rates and the parallelism a target rate needs (flinktune.analysis.parallelism.ParallelismAdvice).
    parallelism: Any = None

    def vertex(self, key: str) -> VertexFacts | None:
        for v in self.vertices:
            if v.vertex_key == key:
                return v
        return None


def _fmt(x: float | None, pct: bool = True) -> str:
    if x is None:
        return "n/a"
    return f"{x:.0%}" if pct else f"{x:.3g}"


def build_vertices(
    subtasks: Sequence[SubtaskFacts], plan: JobPlan | None, names_seen: Mapping[tuple[str, str], str]
) -> dict[str, list[VertexFacts]]:
    """Group subtasks per job and vertex; name vertices from the plan when it knows them (so a
    Prometheus dump, whose label values have spaces and arrows filtered, reads the same)."""
    grouped: dict[tuple[str, str], list[SubtaskFacts]] = {}
    for s in subtasks:
        grouped.setdefault((s.job_key, s.vertex_key), []).append(s)
    out: dict[str, list[VertexFacts]] = {}
    for (job, vkey), subs in grouped.items():
        name = (plan.name_of(vkey) if plan else None) or names_seen.get((job, vkey)) or vkey
        vid = vkey if plan and plan.name_of(vkey) else None
        out.setdefault(job, []).append(rollup_vertex(job, vkey, name, subs, vid))
    return out


def _order(vertices: list[VertexFacts], plan: JobPlan | None) -> tuple[list[VertexFacts], bool]:
    if plan is not None:
        known = {v.vertex_key: v for v in vertices}
        ordered = [known[k] for k in plan.topological_order() if k in known]
        if ordered:
            # Vertices the plan does not name (operator-scoped phantoms, other jobs) are dropped.
            return ordered, True
    return sorted(vertices, key=lambda v: v.name), False


def _channels(v: VertexFacts) -> str:
    if not v.has_remote_input or v.floating_mean is None:
        return "unknown"
    if v.floating_mean >= FLOATING_FULL:
        return "all" if (v.exclusive_mean or 0.0) >= EXCLUSIVE_HIGH else "some"
    if (v.exclusive_mean or 0.0) >= EXCLUSIVE_HIGH:
        return "all"
    return "unknown"


def _is_hot(v: VertexFacts) -> int | None:
    """One subtask (or very few) busy while the rest are not: skew."""
    if v.parallelism < 2 or v.busy_max is None or v.busy_max < BUSY:
        return None
    few = max(1, v.parallelism // 4)
    if len(v.busy_subtasks) > few:
        return None
    others = [
        s.busy_ratio
        for s in v.subtasks
        if s.subtask_index not in v.busy_subtasks and s.busy_ratio is not None
    ]
    if others and max(others) >= BUSY * 0.8:
        return None
    hottest = max((s for s in v.subtasks if s.busy_ratio is not None), key=lambda s: s.busy_ratio or 0.0)
    return hottest.subtask_index


def _network_cause(
    receiver: VertexFacts, all_vertices: Sequence[VertexFacts], env: Environment, senders_full: bool = True
) -> tuple[str, float, list[str]]:
    evidence: list[str] = []
    if env.bandwidth_bytes_per_s:
        per_tm: dict[str, float] = {}
        for v in all_vertices:
            for s in v.subtasks:
                if s.bytes_in_remote_per_s:
                    per_tm[s.tm_id or "?"] = per_tm.get(s.tm_id or "?", 0.0) + s.bytes_in_remote_per_s
        busiest = max(per_tm.values(), default=0.0)
        share = link_share(busiest, env.bandwidth_bytes_per_s)
        evidence.append(
            f"busiest TaskManager receives {busiest / 1e6:.3g} MB/s over the network, "
            f"{share:.0%} of the {env.bandwidth_bytes_per_s / 1e6:.3g} MB/s bandwidth given"
        )
        if share >= LINK_SATURATED:
            return "network_bottleneck", 0.75, evidence
        evidence.append(
            "throughput well below the link's bandwidth while senders wait: credits "
            "(buffers per channel) cannot cover the round trip"
        )
        return "too_few_credits", 0.7 if senders_full else 0.6, evidence
    evidence.append(
        "receivers idle with low input pool usage while senders' output pools are full: "
        "the network or too few credits for the round trip (give --bandwidth to tell them apart)"
    )
    return "network_or_credits", 0.5, evidence


def find_origins(vertices: Sequence[VertexFacts], plan: JobPlan | None, env: Environment) -> list[Origin]:
    bp = {v.vertex_key for v in vertices if v.backpressured}
    if not bp:
        return []
    names = {v.vertex_key: v.name for v in vertices}
    by_key = {v.vertex_key: v for v in vertices}
    candidates: list[tuple[VertexFacts, list[str]]] = []
    if plan is not None:
        for v in vertices:
            if v.backpressured:
                continue
            ups = [u for u in plan.upstream(v.vertex_key) if u in bp]
            if ups:
                candidates.append((v, ups))
    else:
        busy = [v for v in vertices if not v.backpressured and (v.busy_max or 0.0) >= BUSY]
        for v in sorted(busy, key=lambda v: -(v.busy_max or 0.0))[:1]:
            candidates.append((v, sorted(bp)))
    origins: list[Origin] = []
    for v, ups in candidates:
        evidence: list[str] = []
        senders = [by_key[u] for u in ups if u in by_key]
        senders_out = max((s.out_pool_mean or 0.0 for s in senders), default=0.0)
        evidence.append(
            "upstream back-pressured: "
            + ", ".join(
                f"{names[u]} ({_fmt(by_key[u].bp_ratio_max)} of the time, "
                f"output pool {_fmt(by_key[u].out_pool_mean)})"
                for u in ups
                if u in by_key
            )
        )
        evidence.append(
            f"{v.name}: back-pressured {_fmt(v.bp_ratio_max)} (level {v.level}), busy max "
            f"{_fmt(v.busy_max)} over {v.parallelism} subtasks, input pool "
            f"{_fmt(v.in_pool_mean) if v.has_remote_input else 'n/a (no remote channels)'}"
        )
        hot = _is_hot(v)
        busy = (v.busy_max or 0.0) >= BUSY
        in_high = v.has_remote_input and (v.in_pool_mean or 0.0) >= IN_POOL_HIGH
        if busy and hot is not None:
            cause, conf = "hot_subtask", 0.85
            evidence.append(
                f"subtask {hot} is busy {_fmt(max(s.busy_ratio or 0 for s in v.subtasks))} while the "
                f"median subtask is busy {_fmt(v.busy_median)}; records-in skew "
                f"{_fmt(v.records_in_skew, pct=False)}x"
            )
        elif busy:
            cause, conf = "all_busy", 0.85
            evidence.append(
                f"{len(v.busy_subtasks)} of {v.parallelism} subtasks busy at least {BUSY:.0%} of "
                f"the time (mean {_fmt(v.busy_mean)})"
            )
        elif in_high:
            cause, conf = "slow_receiver", 0.6
            evidence.append(f"input pool {_fmt(v.in_pool_mean)} full but busy time low or not reported")
        elif senders_out >= POOL_HIGH or env.bandwidth_bytes_per_s:
            # With a bandwidth the measured remote bytes tell the link from the credits even when
            # the senders' pools are only partly full (only their remote subpartitions back up).
            cause, conf, extra = _network_cause(v, vertices, env, senders_full=senders_out >= POOL_HIGH)
            evidence.extend(extra)
        else:
            cause, conf = "network_or_credits", 0.4
            evidence.append("neither busy nor holding full pools: cause unclear from these metrics")
        ancestors = plan.ancestors(v.vertex_key) if plan else tuple(ups)
        ups_bp = tuple(names.get(a, a) for a in ancestors if a in bp)
        ups_not = tuple(names.get(a, a) for a in ancestors if a in by_key and a not in bp)
        if plan is None:
            conf *= 0.7
            evidence.append("no job plan: origin inferred from busy time alone")
        if ups_not:
            conf *= 0.85
        origins.append(
            Origin(
                vertex_key=v.vertex_key,
                name=v.name,
                cause=cause,
                channels=_channels(v),
                confidence=round(conf, 2),
                hot_subtask=hot if cause == "hot_subtask" else None,
                upstream_backpressured=ups_bp,
                upstream_not_backpressured=ups_not,
                evidence=tuple(evidence),
            )
        )
    return origins


def diagnose_job(
    job_key: str,
    vertices: list[VertexFacts],
    plan: JobPlan | None,
    env: Environment,
    job_id: str | None = None,
    job_name: str | None = None,
    strips: Mapping[str, tuple[str, str]] | None = None,
    window_ms: tuple[int, int] | None = None,
) -> JobDiagnosis:
    ordered, has_plan = _order(vertices, plan)
    single = all(s.samples <= 1 for v in ordered for s in v.subtasks)
    notes: list[str] = []
    if not has_plan:
        notes.append(
            "no job plan (plan.json beside the dump or --plan): edges unknown, vertices in name order, "
            "origin inferred from busy time alone"
        )
    if single:
        notes.append(
            "one sample per metric (a single scrape): levels describe that instant only; no counter "
            "rates (meters only, 60 s averages), no warm-up trim, sustained vs temporary unknown"
        )
    origins = find_origins(ordered, plan if has_plan else None, env)
    if single:
        origins = [
            Origin(
                o.vertex_key,
                o.name,
                o.cause,
                o.channels,
                round(o.confidence * 0.8, 2),
                o.hot_subtask,
                o.upstream_backpressured,
                o.upstream_not_backpressured,
                o.evidence,
            )
            for o in origins
        ]
    return JobDiagnosis(
        job_key=job_key,
        job_id=job_id,
        job_name=job_name,
        vertices=tuple(ordered),
        origins=tuple(origins),
        has_plan=has_plan,
        single_sample=single,
        notes=tuple(notes),
        strips=dict(strips or {}),
        window_ms=window_ms,
    )


def vertex_items(diag: JobDiagnosis, segment_bytes: int = DEFAULT_SEGMENT_BYTES) -> list[dict[str, object]]:
    """The facts the analysis rules (rules/analysis/FTA*.yaml, scope ``vertex``) read as ``item``."""
    from flinktune.analysis.parallelism import vertex_advice_text

    origins = {o.vertex_key: o for o in diag.origins}
    any_bp = any(v.backpressured for v in diag.vertices)
    items: list[dict[str, object]] = []
    for v in diag.vertices:
        o = origins.get(v.vertex_key)
        fill = (v.remote_buffer_bytes / segment_bytes) if v.remote_buffer_bytes else None
        items.append(
            {
                "job": diag.job_name or diag.job_id or diag.job_key,
                "name": v.name,
                "vertex_id": v.vertex_id or v.vertex_key,
                "parallelism": v.parallelism,
                "level": v.level,
                "bp_ratio": v.bp_ratio_max,
                "bp_share": v.bp_share_above_ok,
                "backpressured": v.backpressured,
                "temporary_bp": v.temporary_bp,
                "job_backpressured": any_bp,
                "busy_max": v.busy_max,
                "busy_mean": v.busy_mean,
                "busy_subtasks": list(v.busy_subtasks),
                "out_pool": v.out_pool_mean,
                "in_pool": v.in_pool_mean,
                "floating": v.floating_mean,
                "exclusive": v.exclusive_mean,
                "is_origin": o is not None,
                "cause": o.cause if o else None,
                "channels": o.channels if o else None,
                "confidence": o.confidence if o else None,
                "hot_subtask": o.hot_subtask if o else None,
                "upstream_backpressured": list(o.upstream_backpressured) if o else [],
                "upstream_not_backpressured": list(o.upstream_not_backpressured) if o else [],
                "evidence": "; ".join(o.evidence) if o else "",
                "records_in_skew": None if v.records_in_skew is None else round(v.records_in_skew, 2),
                "avg_record_bytes": v.avg_record_bytes,
                "remote_buffer_bytes": v.remote_buffer_bytes,
                "buffer_fill": fill,
                "segment_bytes": segment_bytes,
                "has_plan": diag.has_plan,
                "single_sample": diag.single_sample,
                # The parallelism the target rate needs, or why none (analysis/parallelism.py): FTA002.
                "scaling": vertex_advice_text(diag.parallelism, v.vertex_key),
                "proposed_parallelism": _proposed(diag.parallelism, v.vertex_key),
            }
        )
    return items


def _proposed(advice: Any, vertex_key: str) -> int | None:
    if advice is None:
        return None
    change = next((c for c in advice.changes if c.vertex_id == vertex_key), None)
    return change.proposed if change is not None else None


__all__ = [
    "CAUSES",
    "DEFAULT_SEGMENT_BYTES",
    "LEVEL_HIGH",
    "JobDiagnosis",
    "Origin",
    "build_vertices",
    "diagnose_job",
    "find_origins",
    "vertex_items",
]


# The measurements a verdict rests on (docs/analysis.md): without back pressure on any vertex there
# is no basis for "nothing holds this job back". Names as the dump schema spells them.
JUDGING_METRICS: tuple[tuple[str, str], ...] = (
    ("backPressuredTimeMsPerSecond", "bp_ratio_max"),
    ("busyTimeMsPerSecond", "busy_max"),
    ("outPoolUsage", "out_pool_mean"),
)


def missing_judging_metrics(job: JobDiagnosis) -> tuple[str, ...]:
    """The judging metrics that no vertex of ``job`` has."""
    return tuple(
        metric for metric, attr in JUDGING_METRICS if all(getattr(v, attr) is None for v in job.vertices)
    )


def job_status(job: JobDiagnosis) -> str:
    """``back-pressured``, ``no-headroom`` (no sustained back pressure, but a subtask busy at least 90%
    of the time: the next burst back-pressures it), ``healthy`` or ``cannot-judge`` (no vertex has a
    back-pressure measure)."""
    if "backPressuredTimeMsPerSecond" in missing_judging_metrics(job):
        return "cannot-judge"
    if job.origins or any(v.backpressured for v in job.vertices):
        return "back-pressured"
    if headroom_vertex(job) is not None:
        return "no-headroom"
    return "healthy"


def headroom_vertex(job: JobDiagnosis) -> VertexFacts | None:
    """The vertex that leaves the job no headroom (flinktune.analysis.parallelism.no_headroom)."""
    from flinktune.analysis.parallelism import no_headroom

    return no_headroom(job.parallelism, job.vertices)
