"""Translation symmetry of a scenario over its TaskManagers: simulate one block, count it many times.

With Flink's default slot sharing, subtask i of every vertex runs on TaskManager i // slots. When
every vertex has the same parallelism P filling whole TaskManagers, and nothing in the scenario
tells subtask s from subtask s + q (q = d x slots: speeds, speed schedules, key weights all repeat
with period q), then shifting the whole job by q subtasks (d TaskManagers) maps it onto itself:
every channel (s -> t) behaves like (s + q -> t + q). The simulator then builds only the first
block of q subtasks per vertex (TaskManagers 0 .. d-1) and closes it like a periodic boundary: the
channel from producer s to consumer t is delivered to consumer t mod q as its input from producer
(s - (t // q) q) mod P, over the NIC of s's TaskManager, local exactly when s and t share a
TaskManager in the full job. Each representative channel and subtask then stands for P / q
identical ones (same rates, credits, pools and placement class, statistically: keys and phases
are still drawn at random per representative). A hot subtask or one slow TaskManager breaks the
symmetry; the smallest period that survives is used, which may be the whole job (no folding).
"""

from __future__ import annotations

from flinktune.sim.scenario import Scenario, VertexSpec

# A block keeps at least this many subtasks per vertex: every input gate then sees that many
# independent producers. Folded, the P / q channels one representative producer feeds into a gate
# share its blocked/unblocked state, where in the full job they come from P / q producers with
# states of their own; with one or two producers per gate that correlation showed in credit-bound
# runs (few-credits-long-rtt at p = 4 folded by two: 8% less throughput), with four it did not.
MIN_BLOCK_SUBTASKS = 4


def _shift_invariant(values: tuple[float, ...] | None, q: int) -> bool:
    if values is None:
        return True
    n = len(values)
    return all(values[s] == values[(s + q) % n] for s in range(n))


def fold_block(sc: Scenario) -> int | None:
    """Subtasks per vertex in the smallest repeating block, or None when the job does not repeat."""
    vertices = sc.job.vertices
    p = vertices[0].parallelism
    slots = sc.cluster.slots_per_tm
    if any(v.parallelism != p for v in vertices) or p % slots:
        return None
    tms = p // slots
    for d in range(1, tms):
        if tms % d:
            continue
        q = d * slots
        if q < MIN_BLOCK_SUBTASKS:
            continue
        if all(_vertex_repeats(v, q, p) for v in vertices):
            return q
    return None


def _vertex_repeats(vertex: VertexSpec, q: int, p: int) -> bool:
    if not _shift_invariant(vertex.subtask_factors, q):
        return False
    for change in vertex.schedule:
        if change.subtasks is not None:
            chosen = set(change.subtasks)
            if {(s + q) % p for s in chosen} != chosen:
                return False
    spec = vertex.input
    if spec is None:
        return True
    if spec.hot_subtask is not None:
        return False
    if not _shift_invariant(spec.weights, q):
        return False
    rows = spec.producer_weights
    if rows is not None:
        return all(rows[(s + q) % p][(t + q) % p] == rows[s][t] for s in range(p) for t in range(p))
    return True
