"""What ``compare`` returns: frozen values, rendered by the report emitters (text, json, markdown,
html); no printing here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from flinktune.compare.figures import BETTER, MEASURABLE, WORSE, Figure


@dataclass(frozen=True)
class FigureChange:
    """One figure on both sides. ``delta`` = after - before (for a ``log`` figure: the relative
    change of the geometric means, after / before - 1); ``low`` / ``high``: its interval;
    ``relative``: delta / before for a linear figure with a non-zero before."""

    figure: Figure
    before: float | None
    after: float | None
    delta: float | None
    low: float | None
    high: float | None
    relative: float | None
    verdict: str
    samples: tuple[int, int] = (0, 0)  # windows (or checkpoints) each side contributed
    batches: tuple[int, int] = (0, 0)
    batch_windows: tuple[int, int] = (0, 0)
    note: str = ""
    # False when the runs could not tell a change the size of the figure's floor (too few samples,
    # or an interval too wide): "no measurable change" then says the runs were too short or unsteady.
    informative: bool = True

    @property
    def measurable(self) -> bool:
        return self.verdict in MEASURABLE


@dataclass(frozen=True)
class SideInfo:
    """One run as compare read it."""

    label: str  # before | after
    inputs: tuple[str, ...]
    job_key: str
    job_id: str | None
    job_name: str | None
    window_ms: tuple[int, int] | None  # analysed, after the warm-up
    status: str  # healthy | back-pressured | cannot-judge
    origins: tuple[tuple[str, str], ...]  # (vertex name, cause)
    checkpoints: int | None  # completed checkpoints in the window; None: no checkpoint data
    failed_checkpoints: int | None
    plan_file: str | None = None
    checkpoints_file: str | None = None


@dataclass(frozen=True)
class VertexComparison:
    key: str  # the after side's vertex key
    name: str
    name_before: str
    matched_by: str  # id | name
    parallelism: tuple[int, int]
    changes: tuple[FigureChange, ...]

    @property
    def rescaled(self) -> bool:
        return self.parallelism[0] != self.parallelism[1]


@dataclass(frozen=True)
class Prediction:
    """A predicted effect of the recommendation next to what the AFTER run measured."""

    name: str
    label: str
    unit: str
    predicted_before: float | None
    predicted_after: float | None
    measured_before: float | None
    measured_after: float | None
    verdict: str  # e.g. "within 3x", "off by more than 3x", "lower bound holds", "not measured"
    rule: str  # what the docs state for this prediction


@dataclass(frozen=True, eq=False)
class SeriesPair:
    """A figure's window values on both sides, for charts (seconds from each run's first window)."""

    label: str
    unit: str
    before_t_s: np.ndarray
    before: np.ndarray
    after_t_s: np.ndarray
    after: np.ndarray


@dataclass(frozen=True, eq=False)
class Comparison:
    before: SideInfo
    after: SideInfo
    verdict: str  # better | worse | mixed | changed | no measurable change | cannot tell
    headline: str  # one line, the verdict first
    job: tuple[FigureChange, ...]
    origin: str  # what happened to the back-pressure origin, in words
    vertices: tuple[VertexComparison, ...]
    only_before: tuple[str, ...]
    only_after: tuple[str, ...]
    graph_notes: tuple[str, ...]
    predictions: tuple[Prediction, ...]
    confidence: float  # family-wise, over every figure judged
    judged: int  # figures with an interval (the Bonferroni family)
    notes: tuple[str, ...] = ()
    series: Mapping[str, SeriesPair] = field(default_factory=dict)  # "job:<figure>" or "<vertex>:<figure>"

    def all_changes(self) -> tuple[FigureChange, ...]:
        return self.job + tuple(c for v in self.vertices for c in v.changes)

    @property
    def worse(self) -> bool:
        return any(c.verdict == WORSE for c in self.all_changes())

    @property
    def better(self) -> bool:
        return any(c.verdict == BETTER for c in self.all_changes())

    @property
    def changed(self) -> bool:
        return any(c.measurable for c in self.all_changes())
