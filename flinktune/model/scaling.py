"""How many parallel subtasks each vertex needs for a target rate: DS2's rescale policy, offline.

The facts and formulas (docs/recommend.md, "Parallelism"):

- A subtask's **true processing rate** is the records it handled per second it was busy
  (``records / busy time``; measured in flinktune.analysis.capacity). A vertex with ``p`` subtasks
  sustains ``p x rate`` records/s at 100% busy when the load is even.
- **Target utilisation** ``u`` (default 0.7): a vertex is sized so that its subtasks are busy at most
  ``u`` of the time at the target rate, leaving room for bursts and catch-up. The Kubernetes
  operator's autoscaler sizes the same way: ``targetCapacity = targetDataRate / utilization.target``
  and ``newParallelism = ceil(p x targetCapacity / trueProcessingRate)``
  (flink-autoscaler JobVertexScaler.computeScaleTargetParallelism, AutoScalerUtils
  .getTargetProcessingCapacity; ``job.autoscaler.utilization.target`` defaults to 0.7 in
  AutoScalerOptions).
- **Walk downstream** in topological order (DS2, Kalavri et al., OSDI 2018; strymon-system/ds2
  controller/src/policy/scaling.rs, ``evaluate_scaling_policy``): a source must take its target rate;
  every other vertex must take what its upstream vertices would send once they are sized, i.e. each
  upstream vertex's target input times the records that vertex sends on the edge per record it takes
  in (measured: the operator's selectivity). So every vertex that would become the next bottleneck is
  sized in the same step, not found one rescale at a time.
- **Key groups**: a keyed vertex (fed by a HASH exchange) splits its keys into ``maxParallelism`` key
  groups and gives subtask ``i`` a contiguous range of ``floor`` or ``ceil(N / p)`` of them
  (KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex), so its busiest subtask takes
  ``ceil(N / p) / N`` of the load, not ``1 / p``; the autoscaler's key-group alignment accepts a
  parallelism only where that share drops (ParallelismAligner.firstAlignedInRegion). A parallelism is
  never above ``maxParallelism``: Flink refuses it (and the key groups of a restored state fix it).
  Unset, it is ``min(max(roundUpToPowerOfTwo(p + p / 2), 128), 32768)`` of the parallelism the job
  first ran with (KeyGroupRangeAssignment.computeDefaultMaxParallelism).
- **Skew**: one key group lives on one subtask. From the busiest subtask's measured share of the
  input the largest key group's share is estimated (the others taken as even); when that key alone
  would keep a subtask busier than ``u`` at the target rate, more parallelism cannot help.

Pure Python over frozen values, no numpy (the model CLI and the advisor import it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from flinktune.errors import ModelInputError
from flinktune.record import replace

# job.autoscaler.utilization.target's default (flink-autoscaler AutoScalerOptions.UTILIZATION_TARGET).
DEFAULT_TARGET_UTILIZATION = 0.7
# KeyGroupRangeAssignment: DEFAULT_LOWER_BOUND_MAX_PARALLELISM and UPPER_BOUND_MAX_PARALLELISM.
MIN_DEFAULT_MAX_PARALLELISM = 128
UPPER_BOUND_MAX_PARALLELISM = 1 << 15
# A vertex whose input share of its busiest subtask is at most this much above the even share has
# no skew worth naming (sampling noise, key groups of unequal size).
SKEW_TOLERANCE = 1.2
# A source asked for more than this share above what it emits, neither busy (below the target
# utilisation) nor back-pressured (at most the web UI's OK level, 10%), waits for its input.
SOURCE_SLACK = 0.05
SOURCE_BACKPRESSURE_OK = 0.10
KEYED_STRATEGIES = frozenset({"HASH"})


def default_max_parallelism(parallelism: int) -> int:
    """Flink's max parallelism for an operator that sets none (KeyGroupRangeAssignment
    .computeDefaultMaxParallelism, 1.13 to 2.x): ``min(max(roundUpToPowerOfTwo(p + p/2), 128), 32768)``."""
    if parallelism < 1:
        raise ModelInputError(f"parallelism must be at least 1, not {parallelism}")
    wanted = parallelism + parallelism // 2
    power = 1 << (wanted - 1).bit_length() if wanted > 1 else 1
    return min(max(power, MIN_DEFAULT_MAX_PARALLELISM), UPPER_BOUND_MAX_PARALLELISM)


def key_groups_of_busiest(max_parallelism: int, parallelism: int) -> int:
    """Key groups of the subtask holding the most: ``ceil(N / p)``."""
    return -(-max_parallelism // parallelism)


def hot_key_share(busiest_share: float, parallelism: int, max_parallelism: int) -> float:
    """The largest key group's share of a keyed vertex's input, estimated from the busiest subtask's
    measured share ``h`` at ``parallelism``: that subtask holds the hot group and ``c = (ceil(N/p) - 1)
    / (N - 1)`` of the rest, so ``h = s + c (1 - s)``. Clamped to [1/N, 1]."""
    n = max_parallelism
    if n <= 1:
        return 1.0
    c = (key_groups_of_busiest(n, parallelism) - 1) / (n - 1)
    s = (busiest_share - c) / (1 - c) if c < 1 else busiest_share
    return min(1.0, max(1.0 / n, s))


def busiest_share(parallelism: int, keyed: bool, max_parallelism: int | None,
                  hot_share: float | None) -> float:
    """The share of a vertex's input its busiest subtask takes at ``parallelism``: ``1/p`` for an
    evenly spread input (rebalance, rescale, forward), the key-group model for a keyed one
    (``hot_share``: the largest key group's share, see ``hot_key_share``)."""
    if not keyed or max_parallelism is None:
        return 1.0 / parallelism
    n = max_parallelism
    s = hot_share if hot_share is not None else 1.0 / n
    if n <= 1:
        return 1.0
    return s + (key_groups_of_busiest(n, parallelism) - 1) * (1 - s) / (n - 1)


@dataclass(frozen=True)
class VertexLoad:
    """What was measured of one vertex (flinktune.analysis.capacity), or stated (``flinktune model``)."""

    vertex_id: str
    name: str
    parallelism: int
    true_rate_per_subtask: float | None     # records per busy second of one subtask
    input_per_s: float | None = None        # observed records/s in (a source: records out)
    output_per_s: float | None = None       # observed records/s out
    busy: float | None = None               # mean share of time busy
    backpressured: float | None = None      # mean share of time back-pressured
    max_parallelism: int | None = None
    max_parallelism_source: str = "default"  # job (measured) | config | stated | default (Flink's rule)
    keyed: bool = False                     # fed by a HASH exchange: work split by key groups
    busiest_input_share: float | None = None  # the busiest subtask's measured share of the input
    is_source: bool = False

    def __post_init__(self) -> None:
        if self.parallelism < 1:
            raise ModelInputError(f"parallelism of vertex '{self.name}' must be at least 1")
        if self.true_rate_per_subtask is not None and not self.true_rate_per_subtask > 0:
            raise ModelInputError(f"the per-subtask capacity of '{self.name}' must be above zero")

    @property
    def key_groups(self) -> int:
        return self.max_parallelism or default_max_parallelism(self.parallelism)

    @property
    def hot_key_share(self) -> float | None:
        """The largest key group's share of the input, when the vertex is keyed and skewed."""
        if not self.keyed or self.busiest_input_share is None:
            return None
        even = busiest_share(self.parallelism, True, self.key_groups, None)
        if self.busiest_input_share <= even * SKEW_TOLERANCE:
            return None
        return hot_key_share(self.busiest_input_share, self.parallelism, self.key_groups)

    def share(self, parallelism: int) -> float:
        return busiest_share(parallelism, self.keyed, self.key_groups, self.hot_key_share)


@dataclass(frozen=True)
class Link:
    source: str
    target: str
    ship_strategy: str = "HASH"


# Verdicts of a vertex: its parallelism is enough; raise it; raise it as far as the key groups allow
# (capped); more would not help (hot key; a source that delivers no more); or nothing to size it by.
VERDICTS = ("enough", "scale-out", "capped", "hot-key", "source-bound", "no-data")


@dataclass(frozen=True)
class VertexScaling:
    vertex_id: str
    name: str
    parallelism: int
    proposed: int                     # never below the current parallelism, never above the cap
    needed: int | None                # uncapped (None: no parallelism reaches the target)
    max_parallelism: int
    max_parallelism_source: str
    target_in_per_s: float | None     # what the vertex must take in
    reachable_in_per_s: float | None  # what it takes at ``proposed`` when its busiest subtask is 100% busy
    predicted_busy: float | None      # mean share of time busy at ``proposed`` and the target
    predicted_busiest: float | None   # the busiest subtask's
    verdict: str
    reason: str
    true_rate_per_subtask: float | None = None
    is_source: bool = False

    @property
    def changed(self) -> bool:
        return self.proposed != self.parallelism


@dataclass(frozen=True)
class ScalingPlan:
    target_utilization: float
    vertices: tuple[VertexScaling, ...]     # topological order
    source_targets: Mapping[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def changes(self) -> tuple[VertexScaling, ...]:
        return tuple(v for v in self.vertices if v.changed)

    @property
    def reaches_target(self) -> bool:
        return all(v.verdict in ("enough", "scale-out") for v in self.vertices)

    def vertex(self, vertex_id: str) -> VertexScaling | None:
        return next((v for v in self.vertices if v.vertex_id == vertex_id), None)

    @property
    def max_parallelism_after(self) -> int:
        return max((v.proposed for v in self.vertices), default=0)


def check_utilization(value: float) -> float:
    if not 0 < value <= 1:
        raise ModelInputError(f"target utilisation must be above 0% and at most 100%, not {value:.0%}")
    return value


def needed_parallelism(load: VertexLoad, target_in_per_s: float, utilization: float,
                       limit: int) -> int | None:
    """The smallest parallelism up to ``limit`` at which the busiest subtask is busy at most
    ``utilization`` of the time at ``target_in_per_s``; None when none is (a hot key, or the limit)."""
    rate = load.true_rate_per_subtask
    assert rate is not None
    budget = utilization * rate
    if target_in_per_s <= 0:
        return 1
    if not load.keyed:
        p = max(1, math.ceil(target_in_per_s / budget - 1e-9))
        return p if p <= limit else None
    for p in range(1, limit + 1):
        if target_in_per_s * load.share(p) <= budget * (1 + 1e-9):
            return p
    return None


def _topological(loads: Sequence[VertexLoad], links: Sequence[Link]) -> list[VertexLoad]:
    by_id = {v.vertex_id: v for v in loads}
    indegree = {v.vertex_id: 0 for v in loads}
    for link in links:
        if link.source in by_id and link.target in by_id:
            indegree[link.target] += 1
    ready = [v.vertex_id for v in loads if indegree[v.vertex_id] == 0]
    order: list[str] = []
    while ready:
        vid = ready.pop(0)
        order.append(vid)
        for link in links:
            if link.source == vid and link.target in indegree:
                indegree[link.target] -= 1
                if indegree[link.target] == 0:
                    ready.append(link.target)
    order.extend(v.vertex_id for v in loads if v.vertex_id not in order)
    return [by_id[v] for v in order]


def edge_ratio(source: VertexLoad, target: VertexLoad, links: Sequence[Link],
               loads: Mapping[str, VertexLoad]) -> float | None:
    """Records ``target`` receives from ``source`` per record ``source`` takes in: the source's own
    output over its input (its selectivity; a source's is 1). Every consumer of a stream gets all of
    it, so each output edge carries the whole output (side outputs, which split it, are not told
    apart by the task's counters). The receiver's input is used only when the sender's output is not
    counted: under back pressure it lags the sender's output by what the buffers between them hold
    (tens of thousands of small records), where the sender's own ratio does not (the autoscaler's
    ScalingMetricEvaluator.computeEdgeOutputRatio reads the same two counters). None when neither
    is counted."""
    if not source.input_per_s:
        return None
    if source.output_per_s is not None:
        return source.output_per_s / source.input_per_s
    inputs = [lk for lk in links if lk.target == target.vertex_id and lk.source in loads]
    if len(inputs) == 1 and target.input_per_s is not None:
        return target.input_per_s / source.input_per_s
    return None


def _text_rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:.3g}"


def rescale(loads: Sequence[VertexLoad], links: Sequence[Link], source_targets: Mapping[str, float],
            utilization: float = DEFAULT_TARGET_UTILIZATION) -> ScalingPlan:
    """Each vertex's parallelism for the sources' target rates (``source_targets``: vertex id ->
    records/s it must emit), walking the graph downstream (module docstring). Never proposes fewer
    subtasks than a vertex has (a scale-down is shown as ``needed`` only) nor more than its max
    parallelism."""
    check_utilization(utilization)
    by_id = {v.vertex_id: v for v in loads}
    ordered = _topological(loads, links)
    incoming: dict[str, float] = {}          # target input per vertex, summed over its upstream
    unknown_in: dict[str, list[str]] = {}
    out: list[VertexScaling] = []
    notes: list[str] = []
    for v in ordered:
        ups = [lk for lk in links if lk.target == v.vertex_id and lk.source in by_id]
        if v.is_source or not ups:
            target = source_targets.get(v.vertex_id)
        else:
            target = incoming.get(v.vertex_id) if v.vertex_id not in unknown_in else None
        cap = v.key_groups
        scaling = _size(v, target, cap, utilization)
        if v.vertex_id in unknown_in and target is None:
            scaling = _no_data(v, cap, "the rate it must take is unknown: no records counted on "
                               + ", ".join(unknown_in[v.vertex_id]))
        out.append(scaling)
        # What this vertex passes on: its target input, or what it can take when it cannot reach it.
        flow = scaling.target_in_per_s
        if flow is not None and scaling.reachable_in_per_s is not None:
            flow = min(flow, scaling.reachable_in_per_s)
        for lk in links:
            if lk.source != v.vertex_id or lk.target not in by_id:
                continue
            ratio = edge_ratio(v, by_id[lk.target], links, by_id)
            if flow is None or ratio is None:
                unknown_in.setdefault(lk.target, []).append(v.name)
                continue
            incoming[lk.target] = incoming.get(lk.target, 0.0) + flow * ratio
    if any(s.verdict not in ("enough", "scale-out", "no-data") for s in out):
        notes.append("the target rate is not reachable by parallelism alone: see the vertices marked "
                     + ", ".join(sorted({s.verdict for s in out if s.verdict not in
                                         ("enough", "scale-out", "no-data")})))
    return ScalingPlan(utilization, tuple(out), dict(source_targets), tuple(notes))


def _no_data(v: VertexLoad, cap: int, why: str) -> VertexScaling:
    return VertexScaling(v.vertex_id, v.name, v.parallelism, v.parallelism, None, cap,
                         v.max_parallelism_source, None, None, None, None, "no-data", why,
                         v.true_rate_per_subtask, v.is_source)


def _size(v: VertexLoad, target: float | None, cap: int, utilization: float) -> VertexScaling:
    if target is None:
        return _no_data(v, cap, "no target rate for this source" if v.is_source else "no target rate")
    if v.is_source and _waits_for_input(v, target, utilization):
        reason = (f"it emits {_text_rate(v.input_per_s or 0.0)} records/s while busy "
                  f"{v.busy or 0.0:.0%} and back-pressured {v.backpressured or 0.0:.0%} of the time: it "
                  "waits for its input (the external system, its partitions, a rate limit), so no "
                  f"parallelism in Flink brings the {_text_rate(target)} records/s asked for")
        # Downstream is still sized for the target: the job must take it once the source delivers.
        return VertexScaling(v.vertex_id, v.name, v.parallelism, v.parallelism, None, cap,
                             v.max_parallelism_source, target, None, None, None, "source-bound", reason,
                             v.true_rate_per_subtask, True)
    rate = v.true_rate_per_subtask
    if rate is None:
        return VertexScaling(v.vertex_id, v.name, v.parallelism, v.parallelism, None, cap,
                             v.max_parallelism_source, target, None, None, None, "no-data",
                             "no busy time or records counted: its capacity is unknown", None, v.is_source)
    limit = max(cap, v.parallelism)
    needed = needed_parallelism(v, target, utilization, limit)
    hot = v.hot_key_share
    even = max(1, math.ceil(target / (utilization * rate) - 1e-9))   # with no key groups or skew
    if needed is not None:
        proposed = max(needed, v.parallelism)
        verdict = "scale-out" if proposed > v.parallelism else "enough"
        if verdict == "enough":
            reason = (f"{v.parallelism} subtasks take {_text_rate(target)} records/s at most "
                      f"{utilization:.0%} busy" + (f" ({needed} would do)" if needed < v.parallelism else ""))
        else:
            reason = (f"{_text_rate(target)} records/s at {_text_rate(rate)} per busy second and subtask "
                      f"needs {needed} subtasks to stay at most {utilization:.0%} busy")
            if v.keyed and needed > even:
                reason += f" ({even} if the key groups split evenly)"
    elif hot is not None and target * hot > utilization * rate:
        proposed, verdict = v.parallelism, "hot-key"
        reason = (f"one key group carries about {hot:.0%} of its input: {_text_rate(target * hot)} records/s "
                  f"on one subtask, more than one subtask takes at {utilization:.0%} busy "
                  f"({_text_rate(utilization * rate)}); more parallelism will not spread one key "
                  "(pre-aggregate or salt the hot key)")
    else:
        proposed, verdict, needed = limit, "capped", even
        reason = (f"needs {even} subtasks for {_text_rate(target)} records/s, but its max "
                  f"parallelism is {cap} ({_cap_source(v.max_parallelism_source)})")
    share = v.share(proposed)
    busiest = target * share / rate
    mean = target / (proposed * rate)
    reachable = rate / share       # the vertex's input when its busiest subtask is 100% busy
    if v.is_source and verdict in ("scale-out", "capped"):
        reason += "; a source uses no more subtasks than it has splits (partitions): check there are enough"
    return VertexScaling(v.vertex_id, v.name, v.parallelism, proposed, needed, cap, v.max_parallelism_source,
                         target, reachable, mean, busiest, verdict, reason, rate, v.is_source)


def _waits_for_input(v: VertexLoad, target: float, utilization: float) -> bool:
    """A source asked for more than it emits while neither busy nor back-pressured: its input, not
    Flink, sets its pace (the walk's "source-bound")."""
    emitted = v.input_per_s
    return (emitted is not None and target > emitted * (1 + SOURCE_SLACK) and (v.busy or 0.0) < utilization
            and (v.backpressured or 0.0) <= SOURCE_BACKPRESSURE_OK)


def _cap_source(source: str) -> str:
    return {"job": "as the job runs", "config": "pipeline.max-parallelism", "stated": "as stated",
            }.get(source, "Flink's default for its parallelism")


@dataclass(frozen=True)
class WhatIf:
    """One vertex against a rate (``flinktune model --capacity``): the parallelism it needs and how busy
    its subtasks are at a given parallelism."""

    target_in_per_s: float
    capacity_per_subtask: float
    utilization: float
    keyed: bool
    max_parallelism: int
    parallelism: int | None             # the parallelism asked about
    busy: float | None                  # mean share of time busy at ``parallelism``
    busiest: float | None               # the busiest subtask's (key groups)
    scaling: VertexScaling              # what the target needs (model.scaling's verdict)

    def as_dict(self) -> dict[str, object]:
        s = self.scaling
        return {"target_in_per_s": self.target_in_per_s, "capacity_per_subtask": self.capacity_per_subtask,
                "target_utilization": self.utilization, "keyed": self.keyed,
                "max_parallelism": self.max_parallelism, "parallelism": self.parallelism,
                "busy": self.busy, "busiest": self.busiest, "needed": s.needed,
                "verdict": s.verdict, "reason": s.reason, "predicted_busy_at_needed": s.predicted_busy}


def what_if(target_in_per_s: float, capacity_per_subtask: float, *, parallelism: int | None = None,
            keyed: bool = False, max_parallelism: int | None = None,
            utilization: float = DEFAULT_TARGET_UTILIZATION) -> WhatIf:
    """The parallelism ``target_in_per_s`` needs at ``capacity_per_subtask`` records per busy second,
    and, at ``parallelism``, the share of time its subtasks are busy (above 100%: it cannot keep up)."""
    check_utilization(utilization)
    if not target_in_per_s >= 0:
        raise ModelInputError("the target rate must be zero or more")
    load = VertexLoad("vertex", "the vertex", parallelism or 1, capacity_per_subtask, keyed=keyed,
                      max_parallelism=max_parallelism, max_parallelism_source="stated" if max_parallelism
                      else "default")
    cap = load.key_groups
    scaled = _size(replace(load, parallelism=1), target_in_per_s, cap, utilization)
    busy = busiest = None
    if parallelism is not None:
        busy = target_in_per_s / (parallelism * capacity_per_subtask)
        busiest = target_in_per_s * load.share(parallelism) / capacity_per_subtask
    return WhatIf(target_in_per_s, capacity_per_subtask, utilization, keyed, cap, parallelism, busy, busiest,
                  scaled)


__all__ = [
    "DEFAULT_TARGET_UTILIZATION",
    "Link",
    "ScalingPlan",
    "VertexLoad",
    "VertexScaling",
    "WhatIf",
    "busiest_share",
    "default_max_parallelism",
    "hot_key_share",
    "needed_parallelism",
    "rescale",
    "what_if",
]
