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
   subtask. This only removes today's back pressure: it is no goal, and the report says so. It is
   shown but not acted on when the sources are back-pressured over 90% of the time, or idle 10% or
   more while back-pressured above OK (10%): they wait for a rate limit or their input and catch up in
   between, so the formula overstates.

Parallelism will not help, and none is proposed, when back pressure starts at the network (a
saturated link, too few credits: buffers or the link are the fix), when the origin's input is
dominated by one key (model.scaling's "hot-key"), or a source waits for its input ("source-bound").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from flinktune.analysis.capacity import (
    UNBLOCKED_RELIABLE_BACKPRESSURE,
    VertexRates,
    vertex_rates,
)
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
from flinktune.releases import ADAPTIVE_PARTITIONER
from flinktune.versions import FlinkVersion

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
    reliable: bool = True   # False: an unblocked estimate from a source back-pressured most of the
    #                         time, or one that is also idle (capacity.UNBLOCKED_MAX_IDLE)

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

    def as_dict(self) -> dict[str, object]:
        """Plain values for the JSON reports (analyze and recommend)."""
        scaling = {v.vertex_id: v for v in self.plan.vertices} if self.plan is not None else {}
        vertices = []
        for r in self.rates:
            s = scaling.get(r.vertex_key)
            vertices.append({
                "name": r.name, "vertex_id": self.vertex_ids.get(r.vertex_key, r.vertex_key),
                "parallelism": r.parallelism, "is_source": r.is_source, "method": r.method,
                "input_per_s": r.input_per_s, "output_per_s": r.output_per_s, "busy": r.busy,
                "busiest": r.busiest, "backpressured": r.backpressured,
                "true_rate_per_subtask": r.true_rate_per_subtask, "capacity_per_s": r.capacity_per_s,
                "busiest_input_share": r.busiest_input_share,
                "busiest_input_subtask": r.busiest_input_subtask,
                "backlog_growth_per_s": r.backlog_growth_per_s,
                "target_in_per_s": s.target_in_per_s if s else None,
                "needed": s.needed if s else None, "proposed": s.proposed if s else None,
                "max_parallelism": s.max_parallelism if s else None,
                "max_parallelism_source": s.max_parallelism_source if s else None,
                "predicted_busy": s.predicted_busy if s else None,
                "predicted_busiest": s.predicted_busiest if s else None,
                "verdict": s.verdict if s else None, "reason": s.reason if s else None,
                "subtasks": [{"index": t.subtask_index, "records_per_s": t.records_per_s, "busy": t.busy,
                              "backpressured": t.backpressured, "true_rate": t.true_rate}
                             for t in r.subtasks],
            })
        return {
            "target_utilization": self.plan.target_utilization if self.plan is not None else None,
            "targets": [{"vertex": t.name, "vertex_id": self.vertex_ids.get(t.vertex_key, t.vertex_key),
                         "per_s": t.per_s, "basis": t.basis, "reliable": t.reliable, "text": t.text}
                        for t in self.targets],
            "blocked": self.blocked, "withheld": self.withheld, "notes": list(self.notes),
            "overrides": self.overrides or None,
            "changes": [{"vertex": c.name, "vertex_id": self.vertex_ids.get(c.vertex_id, c.vertex_id),
                         "from": c.parallelism, "to": c.proposed} for c in self.changes],
            "vertices": vertices,
        }

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
                                  (s.backpressured_max or 0.0) <= UNBLOCKED_RELIABLE_BACKPRESSURE
                                  and not s.waits_for_input))
    return out


def advise_parallelism(vertices: Sequence[VertexFacts], plan: JobPlan | None, origins: Sequence[object],
                       options: ScalingOptions, version: FlinkVersion | None = None) -> ParallelismAdvice:
    """The rates of every vertex and, with a plan, the parallelism the target rate needs.

    ``vertices`` in topological order; ``origins``: flinktune.analysis.diagnose.Origin values;
    ``version``: the Flink version the advice targets (the adaptive partitioner is 2.3+)."""
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
        if cause == "hot_subtask" and at is not None and not _keyed(plan, at.vertex_id):
            # A hot subtask behind a rebalance or rescale is a slow subtask, not a hot key.
            notes.append(f"{at.name} reads a rebalance/rescale exchange, so its hot subtask is a slow one "
                         "(its machine, its TaskManager), not a hot key"
                         + ("; Flink 2.3+ can route records away from it: "
                            "taskmanager.network.adaptive-partitioner.enabled: true (FLIP-339)"
                            if version is not None and ADAPTIVE_PARTITIONER.applies(version) else ""))
    withheld = None
    rough = [t for t in targets if not t.reliable]
    if rough:
        rough_keys = {t.vertex_key for t in rough}
        worst = max((r.backpressured_max or 0.0) for r in sources if r.vertex_key in rough_keys)
        waiting = [r for r in sources if r.vertex_key in rough_keys and r.waits_for_input]
        idle = max((r.idle_mean or 0.0) for r in waiting) if waiting else 0.0
        state = ("state the target rate (--target-rate NAME=RATE, or --rate per producer subtask) to size "
                 "the parallelism")
        if worst <= UNBLOCKED_RELIABLE_BACKPRESSURE and waiting:
            withheld = (f"the sources are idle {idle:.0%} of the time besides back-pressured {worst:.0%}: "
                        "they wait for their input (a rate limit, an empty partition) and catch up in "
                        "between, so back pressure is not all that holds them back and out / (1 - bp) "
                        f"overstates what they would send; {state}")
        else:
            withheld = (f"the sources are back-pressured {worst:.0%} of the time, so what they would send "
                        f"unblocked is not measurable from this dump (the figures are rough); {state}")
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


def _rate(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 10 else f"{value:.3g}"


def vertex_advice_text(advice: ParallelismAdvice | None, vertex_key: str) -> str:
    """One sentence on a vertex's parallelism: what the target rate needs, or why none is proposed
    (the analysis rules' ``item.scaling``, FTA002)."""
    if advice is None or advice.plan is None:
        return ("its parallelism is not sized: the job plan (plan.json) gives the graph the target rate is "
                "walked through" if advice is None or not advice.rates else advice.notes[0])
    if advice.blocked is not None:
        return f"parallelism will not help: {advice.blocked}"
    v = advice.plan.vertex(vertex_key)
    if v is None:
        return "no rates for this vertex"
    target = "; ".join(f"{_rate(t.per_s)} records/s at {t.name} ({t.basis})" for t in advice.targets)
    if v.verdict in ("scale-out", "enough") and advice.withheld is None:
        return (f"parallelism {v.proposed} (now {v.parallelism}) for {target}: {v.reason}; predicted "
                f"{v.predicted_busy or 0.0:.0%} busy")
    if advice.withheld is not None:
        return f"about {v.needed or v.proposed} subtasks (rough): {advice.withheld}"
    return v.reason


def render_lines(advice: ParallelismAdvice | None) -> list[str]:
    """The parallelism block of the text and markdown reports (plain lines)."""
    if advice is None:
        return []
    out: list[str] = []
    if advice.plan is None:
        return [f"Parallelism: {n}" for n in advice.notes]
    targets = "; ".join(f"{_rate(t.per_s)} records/s at {t.name} ({t.text})" for t in advice.targets)
    out.append(f"Parallelism for {targets or 'no target rate'}, each subtask at most "
               f"{advice.plan.target_utilization:.0%} busy:")
    for v in advice.plan.vertices:
        r = advice.rate(v.vertex_id)
        rate = r.true_rate_per_subtask if r is not None else None
        observed = r.input_per_s if r is not None else None
        busy = r.busy if r is not None else None
        arrow = f"{v.parallelism} -> {v.proposed}" if v.changed else f"{v.parallelism}"
        out.append(f"  {v.name}: {arrow} [{v.verdict}] in {_rate(observed)} records/s, busy "
                   f"{'-' if busy is None else f'{busy:.0%}'}, {_rate(rate)} per busy second and subtask; "
                   f"target in {_rate(v.target_in_per_s)}, predicted busy "
                   f"{'-' if v.predicted_busy is None else f'{v.predicted_busy:.0%}'}")
        out.append(f"      {v.reason}")
    out.extend(f"  {line}" for line in _closing(advice, "pipeline.jobvertex-parallelism-overrides: {}"))
    return out


def _closing(advice: ParallelismAdvice, overrides: str) -> list[str]:
    """What to write, or why nothing (and the notes): the last lines of the text and markdown blocks."""
    out = []
    if advice.blocked is not None:
        out.append(f"Parallelism will not help: {advice.blocked}.")
    elif advice.withheld is not None:
        out.append(f"Not proposed: {advice.withheld}.")
    elif advice.overrides:
        out.append(f"Flink 1.17 to 1.20: {overrides.format(advice.overrides)}; 2.x: in the job code "
                   "(`flinktune recommend --metrics` writes what the version reads, with the network memory "
                   "and slots it needs)")
    out.extend(f"note: {n}" for n in advice.notes)
    return out


def render_markdown_lines(advice: ParallelismAdvice | None) -> list[str]:
    """The parallelism block of the markdown report: a table, then what to write or why not."""
    if advice is None:
        return []
    if advice.plan is None:
        return [f"- Parallelism: {n}" for n in advice.notes]
    targets = "; ".join(f"{_rate(t.per_s)} records/s at {t.name} ({t.text})" for t in advice.targets)
    out = [f"**Parallelism** for {targets or 'no target rate'}, each subtask at most "
           f"{advice.plan.target_utilization:.0%} busy:", "",
           "| vertex | p | records/s in | busy | per busy second and subtask | target in | parallelism | "
           "predicted busy | verdict | why |", "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for v in advice.plan.vertices:
        r = advice.rate(v.vertex_id)
        busy = "-" if r is None or r.busy is None else f"{r.busy:.0%}"
        predicted = "-" if v.predicted_busy is None else f"{v.predicted_busy:.0%}"
        arrow = f"{v.parallelism} -> {v.proposed}" if v.changed else str(v.parallelism)
        out.append(f"| {v.name.replace('|', chr(92) + '|')} | {v.parallelism} | "
                   f"{_rate(r.input_per_s if r else None)} | {busy} | "
                   f"{_rate(r.true_rate_per_subtask if r else None)} | {_rate(v.target_in_per_s)} | "
                   f"{arrow} | {predicted} | {v.verdict} | {v.reason.replace('|', chr(92) + '|')} |")
    out.append("")
    out.extend(f"- {line}" for line in _closing(advice, "`pipeline.jobvertex-parallelism-overrides: {}`"))
    return out
