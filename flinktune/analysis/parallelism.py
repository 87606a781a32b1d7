"""When buffers cannot help, what will: each vertex's parallelism for a target rate, from the dump.

The rates come from flinktune.analysis.capacity (true processing rate per subtask, observed input,
utilisation); the walk from flinktune.model.scaling (DS2's rescale policy at the autoscaler's target
utilisation, capped by max parallelism). This module picks the target rate and says when
parallelism will not help (docs/analysis.md, "Parallelism"):

Target rate of each source, first found wins:

1. stated for that source (``--target-rate NAME=RATE``; a profile's ``target-rate``);
2. stated per producer subtask (``--rate``, a profile's ``rate``) times the source's parallelism;
3. measured: the source's backlog (``pendingRecords``) grew, so it receives what it emits plus
   that growth (the autoscaler's target data rate, ``inputRate + lagRate``);
4. estimated: what the sources would emit if nothing were back-pressured, ``out / (1 - bp)`` per
   subtask. This only removes today's back pressure: it is no goal, and the report says so.

Parallelism will not help, and none is proposed, when back pressure starts at the network (a
saturated link, too few credits: buffers or the link are the fix), when the origin's input is
dominated by one key (model.scaling's "hot-key"), or a source waits for its input ("source-bound").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from flinktune.analysis.capacity import UNBLOCKED_RELIABLE_BACKPRESSURE, VertexRates, vertex_rates
from flinktune.analysis.facts import VertexFacts
from flinktune.analysis.plan import JobPlan
from flinktune.errors import UsageError
from flinktune.model.scaling import (
    DEFAULT_TARGET_UTILIZATION,
    KEYED_STRATEGIES,
    Link,
    ScalingPlan,
    VertexLoad,
    rescale,
)

# A job that is not back-pressured but has a subtask busy at least this share of the time has no
# headroom: the next burst back-pressures it (reported instead of "nothing holds this job back").
NO_HEADROOM_BUSY = 0.9
# Origin causes that more subtasks cannot cure: the network sets the pace (flinktune.analysis.diagnose).
NETWORK_CAUSES = ("network_bottleneck", "too_few_credits", "network_or_credits")
BASIS_TEXT = {
    "stated": "stated with --target-rate",
    "stated-per-subtask": "stated per producer subtask (--rate) times the source's parallelism",
    "backlog": "measured: the source's backlog (pendingRecords) grew",
    "unblocked": "estimated: what the sources would emit if nothing were back-pressured (out / (1 - bp)); "
                 "this only removes today's back pressure, it is no target (state one with --target-rate)",
}


@dataclass(frozen=True)
class ScalingOptions:
    """What the user states for sizing: the target utilisation, per-source target rates (name or
    vertex id -> records/s, or ``*`` for the job's one source), the rate per producer subtask
    (``--rate``) and the max parallelism the configuration sets (``pipeline.max-parallelism``)."""

    target_utilization: float = DEFAULT_TARGET_UTILIZATION
    target_rates: tuple[tuple[str, float], ...] = ()
    rate_per_subtask: float | None = None
    max_parallelism: int | None = None


@dataclass(frozen=True)
class TargetRate:
    vertex_key: str
    name: str
    per_s: float
    basis: str          # stated | stated-per-subtask | backlog | unblocked
    reliable: bool = True   # False: an unblocked estimate from a source back-pressured most of the time

    @property
    def text(self) -> str:
        return BASIS_TEXT[self.basis]


@dataclass(frozen=True)
class ParallelismAdvice:
    rates: tuple[VertexRates, ...]                 # topological order
    targets: tuple[TargetRate, ...] = ()
    plan: ScalingPlan | None = None
    blocked: str | None = None                     # why no parallelism is proposed at all
    notes: tuple[str, ...] = ()
    withheld: str | None = None                    # computed, but not proposed without a stated rate
    vertex_ids: Mapping[str, str] = field(default_factory=dict)   # vertex key -> JobVertexID (plan)

    @property
    def changes(self) -> tuple:  # type: ignore[type-arg]
        if self.plan is None or self.blocked is not None or self.withheld is not None:
            return ()
        return self.plan.changes

    @property
    def overrides(self) -> str:
        """``pipeline.jobvertex-parallelism-overrides``'s value (JobVertexID:parallelism, comma-
        separated: PipelineOptions.PARALLELISM_OVERRIDES, a Map option) for the proposed changes."""
        return ",".join(f"{self.vertex_ids.get(c.vertex_id, c.vertex_id)}:{c.proposed}" for c in self.changes)

    def rate(self, vertex_key: str) -> VertexRates | None:
        return next((r for r in self.rates if r.vertex_key == vertex_key), None)

    @property
    def busiest(self) -> VertexRates | None:
        known = [r for r in self.rates if r.busiest is not None]
        return max(known, key=lambda r: r.busiest or 0.0, default=None)


def _keyed(plan: JobPlan, vertex_key: str) -> bool:
    return any(e.target_id == vertex_key and e.ship_strategy.upper() in KEYED_STRATEGIES for e in plan.edges)


def _match_source(key: str, sources: Sequence[VertexRates]) -> VertexRates | None:
    want = key.strip().lower()
    for s in sources:
        names = {s.vertex_key.lower(), s.name.lower(), s.name.lower().removeprefix("source: ")}
        if want in names:
            return s
    return None


def _targets(sources: Sequence[VertexRates], options: ScalingOptions) -> list[TargetRate]:
    stated: dict[str, float] = {}
    for key, value in options.target_rates:
        if key == "*":
            if len(sources) != 1:
                raise UsageError(f"--target-rate {value:g}: the job has {len(sources)} sources "
                                 f"({', '.join(s.name for s in sources)}); give NAME=RATE for each")
            stated[sources[0].vertex_key] = value
            continue
        found = _match_source(key, sources)
        if found is None:
            raise UsageError(f"--target-rate {key}={value:g}: no source vertex named {key!r} (sources: "
                             f"{', '.join(s.name for s in sources) or 'none'})")
        stated[found.vertex_key] = value
    out = []
    for s in sources:
        if s.vertex_key in stated:
            out.append(TargetRate(s.vertex_key, s.name, stated[s.vertex_key], "stated"))
        elif options.rate_per_subtask is not None:
            out.append(TargetRate(s.vertex_key, s.name, options.rate_per_subtask * s.parallelism,
                                  "stated-per-subtask"))
        elif s.backlog_growth_per_s is not None and s.input_per_s is not None:
            out.append(TargetRate(s.vertex_key, s.name, max(0.0, s.input_per_s + s.backlog_growth_per_s),
                                  "backlog"))
        elif (unblocked := s.unblocked_output_per_s) is not None:
            out.append(TargetRate(s.vertex_key, s.name, unblocked, "unblocked",
                                  (s.backpressured_max or 0.0) <= UNBLOCKED_RELIABLE_BACKPRESSURE))
    return out


def advise_parallelism(vertices: Sequence[VertexFacts], plan: JobPlan | None, origins: Sequence[object],
                       options: ScalingOptions) -> ParallelismAdvice:
    """The rates of every vertex and, with a plan, the parallelism the target rate needs.

    ``vertices`` in topological order; ``origins``: flinktune.analysis.diagnose.Origin values."""
    if plan is None:
        rates = tuple(vertex_rates(v, is_source=False) for v in vertices)
        return ParallelismAdvice(rates, notes=("no job plan: the graph decides which vertices feed which, "
                                               "so no parallelism is sized (give plan.json or --plan)",))
    keys = {v.vertex_key for v in vertices}
    rates = tuple(vertex_rates(v, is_source=not any(u in keys for u in plan.upstream(v.vertex_key)))
                  for v in vertices)
    sources = [r for r in rates if r.is_source]
    targets = _targets(sources, options)
    links = [Link(e.source_id, e.target_id, e.ship_strategy.upper()) for e in plan.edges
             if e.source_id in keys and e.target_id in keys]
    notes: list[str] = []
    loads = []
    for r in rates:
        limit, where = plan.max_parallelism_of(r.vertex_key), "job"
        if limit is None and options.max_parallelism and options.max_parallelism > 0:
            limit, where = options.max_parallelism, "config"
        loads.append(VertexLoad(
            r.vertex_key, r.name, r.parallelism, r.true_rate_per_subtask, input_per_s=r.input_per_s,
            output_per_s=r.output_per_s, busy=r.busy, backpressured=r.backpressured, max_parallelism=limit,
            max_parallelism_source=where if limit is not None else "default",
            keyed=_keyed(plan, r.vertex_key), busiest_input_share=r.busiest_input_share,
            is_source=r.is_source))
    scaling = rescale(loads, links, {t.vertex_key: t.per_s for t in targets}, options.target_utilization)
    if any(t.basis == "unblocked" for t in targets):
        notes.append("target rate " + BASIS_TEXT["unblocked"])
    methods = sorted({r.method for r in rates if r.method in ("gauges", "mixed")})
    if methods:
        notes.append("true processing rates from the 60 s busy-time averages (busyTimeMsPerSecond), not "
                     "the accumulated idle and back-pressured time (accumulate*TimeMs, Flink 1.16+): less "
                     "exact over short windows")
    blocked = None
    origin = origins[0] if origins else None
    cause = getattr(origin, "cause", None)
    if cause in NETWORK_CAUSES:
        blocked = (f"back pressure starts at the network ({cause.replace('_', ' ')} at "
                   f"{getattr(origin, 'name', '?')}), not at a slow operator: more subtasks send over the "
                   "same links, so parallelism will not help; see the buffer and link advice")
    elif origin is not None:
        at = scaling.vertex(getattr(origin, "vertex_key", ""))
        if at is not None and at.verdict == "hot-key":
            blocked = f"{at.name}: {at.reason}"
    withheld = None
    rough = [t for t in targets if not t.reliable]
    if rough:
        rough_keys = {t.vertex_key for t in rough}
        worst = max((r.backpressured_max or 0.0) for r in sources if r.vertex_key in rough_keys)
        withheld = (f"the sources are back-pressured {worst:.0%} of the time, so what they would send "
                    "unblocked is not measurable from this dump (the figures are rough); state the target "
                    "rate (--target-rate NAME=RATE, or --rate per producer subtask) to size the parallelism")
    ids = {v.vertex_key: (v.vertex_id or v.vertex_key) for v in vertices}
    return ParallelismAdvice(rates, tuple(targets), scaling, blocked, tuple(notes), withheld=withheld,
                             vertex_ids=ids)


def no_headroom(advice: ParallelismAdvice | None, vertices: Sequence[VertexFacts]) -> VertexFacts | None:
    """The vertex whose busiest subtask is busy at least NO_HEADROOM_BUSY of the time, if any."""
    by_key = {v.vertex_key: v for v in vertices}
    if advice is not None and advice.busiest is not None:
        top = advice.busiest
        if (top.busiest or 0.0) >= NO_HEADROOM_BUSY:
            return by_key.get(top.vertex_key)
        return None
    known = [v for v in vertices if v.busy_max is not None]
    top_v = max(known, key=lambda v: v.busy_max or 0.0, default=None)
    return top_v if top_v is not None and (top_v.busy_max or 0.0) >= NO_HEADROOM_BUSY else None
