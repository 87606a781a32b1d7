"""The figures ``compare`` judges, as data: what each measures, which way is better, and the
smallest change it reports (docs/compare.md, "What counts as a change").

A difference is called only when it leaves its interval (stats.py) **and** is at least the figure's
``floor``: a statistically clear change of 0.3 percentage points of busy time is real but not
something to act on, and two runs of the same job on the same machine differ by that much
(placement, JIT). Floors are absolute for shares of time and pool usages (their scale is 0..1),
relative for rates and checkpoint figures.
"""

from __future__ import annotations

from dataclasses import dataclass

HIGHER = "higher"
LOWER = "lower"
NEITHER = "neither"


@dataclass(frozen=True)
class Figure:
    name: str
    label: str
    unit: str  # records/s | share | usage | ratio | s | B
    better: str  # HIGHER | LOWER | NEITHER: which direction is an improvement
    floor: float  # the smallest change reported
    relative: bool  # floor relative to the BEFORE value (else absolute, in the figure's unit)
    log: bool = False  # judged on logarithms (skewed, positive: checkpoint durations and sizes)
    family: str = ""  # figures whose windows share an autocorrelation (stats.pooled_autocorrelation)
    min_abs: float = 0.0  # and at least this much in the figure's unit (a 20 -> 30 ms checkpoint is +50%)

    @property
    def wide(self) -> float:
        """An interval whose half-width is beyond this (absolute for shares, usages and ratios; relative
        to BEFORE for rates and checkpoint figures) says nothing: the verdict is "cannot tell", not
        "no measurable change"."""
        return 1.0 if self.relative else 0.5


# 10%: two runs of one config on real Flink (the closed-loop e2e no-op pair) differed by +5.1% in
# throughput with an interval excluding zero; a run's own noise does not show the drift between runs.
THROUGHPUT = Figure("throughput", "throughput", "records/s", HIGHER, 0.10, True, family="rate")
BACKPRESSURED = Figure(
    "backpressured", "back-pressured (worst subtask)", "share", LOWER, 0.05, False, family="backpressured"
)
BUSY = Figure("busy", "busy (mean of subtasks)", "share", NEITHER, 0.05, False, family="busy")
BUSY_MAX = Figure("busy_max", "busy (busiest subtask)", "share", NEITHER, 0.05, False, family="busy")
IDLE = Figure("idle", "idle (mean of subtasks)", "share", NEITHER, 0.05, False, family="idle")
OUT_POOL = Figure("out_pool", "output pool usage", "usage", LOWER, 0.05, False, family="out_pool")
IN_POOL = Figure("in_pool", "input pool usage (remote)", "usage", LOWER, 0.05, False, family="in_pool")
SKEW = Figure("skew", "records-in skew (max/mean)", "ratio", LOWER, 0.1, False, family="rate")
# 20%: the same no-op pair's median checkpoint duration differed by +11% (3.01 s -> 3.33 s, interval
# +4.9% .. +16.7%) in another run: under back pressure a checkpoint waits for buffers to drain, which
# moves with the machine's load; the 10% floor called it "worse".
CHECKPOINT_DURATION = Figure(
    "checkpoint_duration",
    "checkpoint duration (median)",
    "s",
    LOWER,
    0.20,
    True,
    log=True,
    family="checkpoint_duration",
    min_abs=0.05,
)
CHECKPOINT_SIZE = Figure(
    "checkpoint_size",
    "checkpoint size (median, full)",
    "B",
    LOWER,
    0.10,
    True,
    log=True,
    family="checkpoint_size",
    min_abs=1024.0,
)

JOB_FIGURES: tuple[Figure, ...] = (THROUGHPUT, BACKPRESSURED, CHECKPOINT_DURATION, CHECKPOINT_SIZE)
VERTEX_FIGURES: tuple[Figure, ...] = (
    THROUGHPUT,
    BACKPRESSURED,
    BUSY,
    BUSY_MAX,
    IDLE,
    OUT_POOL,
    IN_POOL,
    SKEW,
)

# Which window series (analysis/windows.py) each vertex figure reads; throughput and skew are
# computed from the records rates.
WINDOW_SERIES: dict[str, str] = {
    "backpressured": "backpressured_max",
    "busy": "busy_mean",
    "busy_max": "busy_max",
    "idle": "idle_mean",
    "out_pool": "out_pool_mean",
    "in_pool": "in_pool_mean",
}

# Verdicts of one figure.
BETTER = "better"
WORSE = "worse"
SAME = "no measurable change"
NOT_MEASURED = "not measured"
CANNOT_TELL = "cannot tell"  # the whole comparison: no figure had an informative interval
TOO_WIDE = "too wide"  # internal: an interval that says nothing (reported as SAME with a note)
MEASURABLE = frozenset({BETTER, WORSE, HIGHER, LOWER})
