"""Which vertex of one run is which vertex of the other.

By vertex id first: Flink derives a JobVertexID from the job's stream graph (StreamGraphHasherV2:
the operator's position, its chained outputs and its inputs; parallelism is not part of it, so state
can be restored after a rescale), so two runs of the same job graph get the same ids, and a rescaled
vertex keeps its id. A changed chain or an operator added upstream changes ids; then vertices are
matched by name (the task name, also as Prometheus filters it). Vertices left over on either side
are reported: the graphs differ. No vertex in common means two different jobs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from flinktune.analysis.diagnose import JobDiagnosis
from flinktune.analysis.facts import VertexFacts
from flinktune.errors import MetricsError


@dataclass(frozen=True)
class Pair:
    before: VertexFacts
    after: VertexFacts
    by: str  # id | name


@dataclass(frozen=True)
class Matching:
    pairs: tuple[Pair, ...]
    only_before: tuple[VertexFacts, ...]
    only_after: tuple[VertexFacts, ...]
    notes: tuple[str, ...]


def _filtered(name: str) -> str:
    """A task name as Flink's Prometheus reporter filters label values ([^a-zA-Z0-9:_] -> _)."""
    return re.sub(r"[^a-zA-Z0-9:_]", "_", name)


def _ids(v: VertexFacts) -> set[str]:
    return {x for x in (v.vertex_id, v.vertex_key) if x and re.fullmatch(r"[0-9a-fA-F]{32}", x)}


def match_vertices(before: JobDiagnosis, after: JobDiagnosis) -> Matching:
    """Pairs of the same vertex; raises MetricsError when the runs share no vertex (different jobs)."""
    left, right = list(before.vertices), list(after.vertices)
    pairs: list[Pair] = []
    for v in list(left):
        same = next((w for w in right if _ids(v) & _ids(w)), None)
        if same is not None:
            pairs.append(Pair(v, same, "id"))
            left.remove(v)
            right.remove(same)
    for key in (lambda v: v.name, lambda v: _filtered(v.name)):
        for v in list(left):
            same = next((w for w in right if key(w) == key(v)), None)
            if same is not None:
                pairs.append(Pair(v, same, "name"))
                left.remove(v)
                right.remove(same)
    by_id = sum(1 for p in pairs if p.by == "id")
    # Without a shared id, a few vertices of the same name ("Source: Custom Source", "Source: Gen") do
    # not make two graphs one job: at least half of each graph must match (a 2-vertex job sharing its
    # source name with a 4-vertex one is another job, though it is half of the smaller).
    if not pairs or (not by_id and 2 * len(pairs) < max(len(before.vertices), len(after.vertices))):
        shared = f"only {len(pairs)} vertex name(s) in common" if pairs else "no vertex in common"
        raise MetricsError(
            f"BEFORE and AFTER are different jobs: {_job(before)} and {_job(after)} share no vertex id and "
            f"{shared} ({_names(before.vertices)} vs {_names(after.vertices)}); nothing to compare"
        )
    order = {v.vertex_key: i for i, v in enumerate(after.vertices)}
    pairs.sort(key=lambda p: order.get(p.after.vertex_key, 0))
    notes: list[str] = []
    for p in pairs:
        if p.before.parallelism != p.after.parallelism:
            notes.append(
                f"{p.after.name}: rescaled from parallelism {p.before.parallelism} to {p.after.parallelism}"
            )
    renamed = [p for p in pairs if p.by == "name" and _ids(p.before) and _ids(p.after)]
    if renamed:
        notes.append(
            f"{len(renamed)} vertex(es) matched by name, their ids differ (the job graph changed "
            f"upstream of them, or operator uids changed): {_names([p.after for p in renamed])}"
        )
    if left or right:
        notes.append(
            "the job graphs differ (a changed chain merges or splits vertices, or an operator was added or "
            "removed): "
            + "; ".join(
                part
                for part in (
                    f"only before: {_names(left)}" if left else "",
                    f"only after: {_names(right)}" if right else "",
                )
                if part
            )
        )
    return Matching(tuple(pairs), tuple(left), tuple(right), tuple(notes))


def _names(vertices: Sequence[VertexFacts]) -> str:
    shown = [v.name for v in vertices[:6]]
    return ", ".join(shown) + (f" and {len(vertices) - 6} more" if len(vertices) > 6 else "")


def _job(diag: JobDiagnosis) -> str:
    if diag.job_name and diag.job_id:
        return f"'{diag.job_name}' ({diag.job_id})"
    return f"'{diag.job_name or diag.job_id or diag.job_key}'"
