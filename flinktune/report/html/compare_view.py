"""The HTML page of a ``Comparison``: the verdict, the figures, and both runs' time series drawn on
the same axes (seconds from each run's first window after the warm-up)."""

from __future__ import annotations

from typing import Any

import numpy as np

from flinktune.compare import figures as fg
from flinktune.compare.text import delta_text, value_text
from flinktune.compare.value import Comparison, FigureChange, SeriesPair
from flinktune.report.compare import confidence_line, side_line
from flinktune.report.html import charts

BEFORE = "#4a6fa5"
AFTER = "#e0742d"
_VERDICT_CLASS = {fg.BETTER: "better", fg.WORSE: "worse", fg.HIGHER: "moved", fg.LOWER: "moved"}
_CHARTED = ("throughput", "backpressured", "busy", "checkpoint_duration")


def _row(c: FigureChange) -> dict[str, str]:
    note = f" ({c.note})" if c.note else ""
    return {
        "label": c.figure.label,
        "before": value_text(c.before, c.figure.unit),
        "after": value_text(c.after, c.figure.unit),
        "change": delta_text(c),
        "verdict": c.verdict + note,
        "cls": _VERDICT_CLASS.get(c.verdict, ""),
    }


def _tick(unit: str):  # type: ignore[no-untyped-def]
    """Short axis labels (the chart's title names the unit)."""
    if unit == "records/s":
        return lambda y: f"{y / 1000:.3g}k" if abs(y) >= 1000 else f"{y:.3g}"
    return lambda y: value_text(y, unit)


def _chart(pair: SeriesPair) -> dict[str, Any] | None:
    """Both runs on one axis: the union of their times, each run's values where it has them."""
    tb, yb = np.asarray(pair.before_t_s, float), np.asarray(pair.before, float)
    ta, ya = np.asarray(pair.after_t_s, float), np.asarray(pair.after, float)
    keep_b, keep_a = ~np.isnan(yb), ~np.isnan(ya)
    if not keep_b.any() and not keep_a.any():
        return None
    xs = np.unique(np.concatenate([tb[keep_b], ta[keep_a]]))
    if len(xs) < 2:
        return None

    def on(grid: np.ndarray, t: np.ndarray, y: np.ndarray) -> np.ndarray:
        out = np.full(len(grid), np.nan)
        out[np.searchsorted(grid, t)] = y
        return out

    unit = pair.unit
    y_max = 1.0 if unit == "share" else None
    chart = charts.line_chart(
        xs=xs,
        lines=[
            {"label": "before", "ys": on(xs, tb[keep_b], yb[keep_b]), "colour": BEFORE, "dash": "5 3"},
            {"label": "after", "ys": on(xs, ta[keep_a], ya[keep_a]), "colour": AFTER},
        ],
        x_fmt=lambda x: f"{x:.0f} s",
        y_fmt=_tick(unit),
        y_max=y_max,
    )
    return {"chart": chart, "alt": pair.label, "title": pair.label, "xlabel": "seconds after the warm-up"}


def _pair(before: float | None, after: float | None, unit: str) -> str:
    return f"{value_text(before, unit)} -> {value_text(after, unit)}"


def compare_view(c: Comparison, tool_version: str) -> dict[str, Any]:
    job_charts = [
        ch for name in _CHARTED if (p := c.series.get(f"job:{name}")) is not None and (ch := _chart(p))
    ]
    vertices = []
    for v in c.vertices:
        drawn = []
        for name in _CHARTED[:3]:
            pair = c.series.get(f"{v.key}:{name}")
            chart = _chart(pair) if pair is not None else None
            if chart is not None:
                drawn.append(chart)
        scale = (
            f"parallelism {v.parallelism[0]} -> {v.parallelism[1]}"
            if v.rescaled
            else f"parallelism {v.parallelism[1]}"
        )
        vertices.append(
            {
                "name": v.name,
                "meta": f"matched by {v.matched_by}; {scale}",
                "rows": [_row(x) for x in v.changes],
                "charts": drawn,
            }
        )
    return {
        "verdict": c.verdict,
        "cls": {fg.BETTER: "better", fg.WORSE: "worse", "mixed": "worse"}.get(c.verdict, ""),
        "headline": c.headline,
        "sides": [side_line(c.before), side_line(c.after)],
        "origin": c.origin,
        "graph": list(c.graph_notes),
        "job": [_row(x) for x in c.job],
        "job_charts": job_charts,
        "vertices": vertices,
        "predictions": [
            {
                "label": p.label,
                "predicted": _pair(p.predicted_before, p.predicted_after, p.unit),
                "measured": (
                    f"{value_text(p.measured_before, p.unit)} -> {value_text(p.measured_after, p.unit)}"
                    if p.measured_before is not None or p.measured_after is not None
                    else "not measured"
                ),
                "verdict": p.verdict,
                "rule": p.rule,
            }
            for p in c.predictions
        ],
        "notes": [confidence_line(c), *c.notes],
        "version": tool_version,
        "colours": {"before": BEFORE, "after": AFTER},
    }
