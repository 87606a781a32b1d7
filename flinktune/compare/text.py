"""Words and numbers for a comparison's figures, shared by the headline and every emitter."""

from __future__ import annotations

from flinktune.compare import figures as fg
from flinktune.compare.value import FigureChange
from flinktune.units import readable


def value_text(value: float | None, unit: str) -> str:
    """A figure's value: shares and usages in percent, rates with thousands separators, seconds
    and bytes as every report shows them (units.readable)."""
    if value is None:
        return "n/a"
    if unit in ("share", "usage"):
        return f"{value:.0%}" if abs(value) >= 0.01 or value == 0 else f"{value:.1%}"
    if unit == "records/s":
        return f"{value:,.0f} records/s" if abs(value) >= 10 else f"{value:.3g} records/s"
    if unit in ("s", "B"):
        return readable(value, unit)
    if unit == "ratio":
        return f"{value:.2f}"
    return f"{value:.3g} {unit}".strip()


# A relative bound beyond this says only "no upper limit" (an interval from two or three batches can
# reach +1e33%); its digits would only be noise in the table.
RELATIVE_SHOWN_MAX = 99.99  # +9,999%


def _signed(x: float, unit: str, relative: bool) -> str:
    if relative:
        if x > RELATIVE_SHOWN_MAX:
            return f">{RELATIVE_SHOWN_MAX:+,.0%}"
        return f"{x:+,.0%}" if abs(x) >= 0.01 else f"{x:+.1%}"
    if unit in ("share", "usage"):
        return f"{x * 100:+.1f} pp"
    if unit == "ratio":
        return f"{x:+.2f}"
    return "+" + value_text(x, unit) if x >= 0 else "-" + value_text(-x, unit)


def delta_text(c: FigureChange) -> str:
    """The change and its interval, e.g. ``-63% [-70%, -55%]`` or ``+1.2 pp [-0.4 pp, +2.8 pp]``;
    relative for checkpoint figures and rates."""
    if c.delta is None:
        return "n/a"
    relative = c.figure.log or (c.figure.relative and c.relative is not None)
    if c.figure.log:
        d, lo, hi = c.delta, c.low, c.high
    elif relative and c.before:
        d = c.delta / abs(c.before)
        lo = c.low / abs(c.before) if c.low is not None else None
        hi = c.high / abs(c.before) if c.high is not None else None
    else:
        d, lo, hi = c.delta, c.low, c.high
    text = _signed(d, c.figure.unit, relative)
    if lo is not None and hi is not None:
        text += f" [{_signed(lo, c.figure.unit, relative)}, {_signed(hi, c.figure.unit, relative)}]"
    return text


def change_phrase(c: FigureChange) -> str:
    """``checkpoint duration -63% (10.8 s -> 4.0 s)``, ``throughput no measurable change (...)``."""
    name = c.figure.label.split(" (")[0]
    values = f"{value_text(c.before, c.figure.unit)} -> {value_text(c.after, c.figure.unit)}"
    if c.verdict in (fg.BETTER, fg.WORSE, fg.HIGHER, fg.LOWER):
        shown = delta_text(c).split(" [")[0]
        return f"{name} {c.verdict} {shown} ({values})"
    return f"{name} {c.verdict} ({values})"
