"""``flinktune compare BEFORE AFTER``: did the change help? Two runs of one job, figure by figure,
each difference judged against the noise of both runs (docs/compare.md)."""

from __future__ import annotations

from flinktune.compare.judge import Run, compare_runs
from flinktune.compare.run import CompareOptions, compare
from flinktune.compare.value import Comparison, FigureChange, Prediction, SideInfo, VertexComparison

__all__ = [
    "CompareOptions",
    "Comparison",
    "FigureChange",
    "Prediction",
    "Run",
    "SideInfo",
    "VertexComparison",
    "compare",
    "compare_runs",
]
