"""Terminal charts: one sparkline row per series, scaled to a shared maximum."""

from __future__ import annotations

import math
from collections.abc import Sequence

_BLOCKS = " ▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], top: float, width: int = 60) -> str:
    """Values as block characters scaled to ``top`` (resampled to at most ``width`` columns)."""
    vals = [0.0 if (v is None or math.isnan(v)) else float(v) for v in values]
    if not vals:
        return ""
    if len(vals) > width:
        step = len(vals) / width
        vals = [sum(vals[int(i * step):max(int(i * step) + 1, int((i + 1) * step))])
                / max(1, len(vals[int(i * step):max(int(i * step) + 1, int((i + 1) * step))]))
                for i in range(width)]
    scale = top if top > 0 else 1.0
    out = []
    for v in vals:
        level = round(max(0.0, min(1.0, v / scale)) * (len(_BLOCKS) - 1))
        out.append(_BLOCKS[level])
    return "".join(out)


def chart(title: str, rows: Sequence[tuple[str, Sequence[float]]], unit: str, top: float | None = None,
          width: int = 60, span_s: float | None = None) -> str:
    """A titled block of labelled sparklines sharing one scale."""
    finite = [v for _, vals in rows for v in vals if v is not None and not math.isnan(v)]
    peak = top if top is not None else (max(finite) if finite else 1.0)
    label_w = max((len(label) for label, _ in rows), default=0)
    lines = [f"{title} (full block = {format_number(peak)}{unit}"
             + (f", {span_s:g}s across)" if span_s is not None else ")")]
    for label, vals in rows:
        finite_row = [v for v in vals if not math.isnan(v)]
        last = format_number(finite_row[-1]) if finite_row else "-"
        lines.append(f"  {label.ljust(label_w)} |{sparkline(vals, peak, width)}| {last}{unit}")
    return "\n".join(lines)


def format_number(value: float) -> str:
    if value is None or math.isnan(value):
        return "-"
    magnitude = abs(value)
    for factor, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if magnitude >= factor:
            return f"{value / factor:.3g}{suffix}"
    if magnitude >= 10 or magnitude == 0:
        return f"{value:.0f}"
    return f"{value:.2g}"


def bars(title: str, rows: Sequence[tuple[str, float]], unit: str, width: int = 40) -> str:
    """Horizontal bars, one per labelled value, scaled to the largest."""
    finite = [v for _, v in rows if v is not None and not math.isnan(v)]
    peak = max(finite) if finite else 1.0
    label_w = max((len(label) for label, _ in rows), default=0)
    lines = [title]
    for label, value in rows:
        filled = 0 if value is None or math.isnan(value) or peak <= 0 else round(width * value / peak)
        lines.append(f"  {label.ljust(label_w)} |{'█' * filled}{' ' * (width - filled)}| "
                     f"{format_number(value)}{unit}")
    return "\n".join(lines)
