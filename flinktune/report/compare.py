"""Rendering a ``Comparison`` (flinktune.compare) as text, markdown or a JSON document; no printing.

The verdict comes first, in one line; then each run, the back-pressure origin, the job's figures and
each vertex's, every change with its interval, then the predictions and notes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from flinktune.compare import figures as fg
from flinktune.compare.text import delta_text, value_text
from flinktune.compare.value import Comparison, FigureChange, Prediction, SideInfo

_COLOURS = {fg.BETTER: "32", fg.WORSE: "31", fg.HIGHER: "33", fg.LOWER: "33"}


def _iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def side_line(side: SideInfo) -> str:
    name = side.job_name or side.job_id or side.job_key
    ident = f" ({side.job_id})" if side.job_id and side.job_name else ""
    window = ""
    if side.window_ms:
        start, end = side.window_ms
        window = f", {_iso(start)} .. {_iso(end)} ({(end - start) / 1000:.0f} s after the warm-up)"
    checkpoints = (
        "no checkpoint statistics"
        if side.checkpoints is None
        else f"{side.checkpoints} checkpoint(s)"
        + (f", {side.failed_checkpoints} failed" if side.failed_checkpoints else "")
    )
    return f"{side.label}: {name}{ident} from {', '.join(side.inputs)}{window}; {side.status}; {checkpoints}"


def confidence_line(c: Comparison) -> str:
    per = 1.0 - (1.0 - c.confidence) / max(1, c.judged)
    return (
        f"intervals: {c.confidence:.0%} family-wise over the {c.judged} figure(s) judged (each at "
        f"{per:.3%}); a change is called only outside its interval and beyond the figure's floor "
        "(docs/compare.md)"
    )


def _row(c: FigureChange) -> tuple[str, str, str, str, str]:
    return (
        c.figure.label,
        value_text(c.before, c.figure.unit),
        value_text(c.after, c.figure.unit),
        delta_text(c),
        c.verdict + (f" ({c.note})" if c.note else ""),
    )


_HEADER = ("figure", "before", "after", "change [interval]", "verdict")


def _table(rows: Sequence[tuple[str, ...]], indent: str, colour: bool, verdicts: Sequence[str]) -> list[str]:
    widths = [max(len(r[i]) for r in (_HEADER, *rows)) for i in range(len(_HEADER))]
    out = [indent + "  ".join(h.ljust(w) for h, w in zip(_HEADER, widths, strict=True)).rstrip()]
    for row, verdict in zip(rows, verdicts, strict=True):
        line = "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()
        code = _COLOURS.get(verdict)
        out.append(indent + (f"\x1b[{code}m{line}\x1b[0m" if colour and code else line))
    return out


def _prediction_line(p: Prediction) -> str:
    predicted = (
        f"predicted {value_text(p.predicted_before, p.unit)} -> {value_text(p.predicted_after, p.unit)}"
    )
    measured = (
        f"; measured {value_text(p.measured_before, p.unit)} -> {value_text(p.measured_after, p.unit)}"
        if p.measured_before is not None or p.measured_after is not None
        else ""
    )
    return f"{p.label}: {predicted}{measured}: {p.verdict} ({p.rule})"


def render_text(c: Comparison, *, color: bool = False) -> str:
    head = c.headline
    code = _COLOURS.get(c.verdict, "31" if c.verdict == "mixed" else None)
    lines = [f"\x1b[1;{code}m{head}\x1b[0m" if color and code else head, ""]
    lines += ["  " + side_line(c.before), "  " + side_line(c.after), "  " + c.origin]
    lines += [f"  graph: {n}" for n in c.graph_notes]
    lines += ["", "Job:"]
    lines += _table([_row(x) for x in c.job], "  ", color, [x.verdict for x in c.job])
    for v in c.vertices:
        scale = (
            f", parallelism {v.parallelism[0]} -> {v.parallelism[1]}"
            if v.rescaled
            else f", p {v.parallelism[1]}"
        )
        renamed = f" (before: {v.name_before})" if v.name_before != v.name else ""
        lines += ["", f"Vertex {v.name}{renamed} (matched by {v.matched_by}{scale}):"]
        lines += _table([_row(x) for x in v.changes], "  ", color, [x.verdict for x in v.changes])
    if c.predictions:
        lines += ["", "Predicted (recommend) against measured:"]
        lines += [f"  - {_prediction_line(p)}" for p in c.predictions]
    lines += ["", "Notes:", f"  - {confidence_line(c)}"]
    lines += [f"  - {n}" for n in c.notes]
    return "\n".join(lines) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def _md_table(changes: Sequence[FigureChange]) -> list[str]:
    out = ["| " + " | ".join(_HEADER) + " |", "|" + "---|" * len(_HEADER)]
    for x in changes:
        row = _row(x)
        verdict = f"**{row[4]}**" if x.measurable else row[4]
        out.append("| " + " | ".join(_md_cell(v) for v in (*row[:4], verdict)) + " |")
    return out


def render_markdown(c: Comparison) -> str:
    lines = [f"## flinktune compare: {c.verdict}", "", f"**{_md_cell(c.headline)}**", ""]
    lines += [f"- {_md_cell(side_line(c.before))}", f"- {_md_cell(side_line(c.after))}", f"- {c.origin}"]
    lines += [f"- graph: {_md_cell(n)}" for n in c.graph_notes]
    lines += ["", "### Job", "", *_md_table(c.job)]
    for v in c.vertices:
        scale = f", parallelism {v.parallelism[0]} -> {v.parallelism[1]}" if v.rescaled else ""
        lines += ["", f"### {_md_cell(v.name)}{scale}", "", *_md_table(v.changes)]
    if c.predictions:
        lines += ["", "### Predicted against measured", ""]
        lines += [f"- {_md_cell(_prediction_line(p))}" for p in c.predictions]
    lines += ["", f"_{confidence_line(c)}_"]
    lines += [f"- {_md_cell(n)}" for n in c.notes]
    return "\n".join(lines) + "\n"


def figure_dict(c: FigureChange) -> dict[str, Any]:
    relative = c.figure.log
    return {
        "name": c.figure.name,
        "label": c.figure.label,
        "unit": c.figure.unit,
        "better": c.figure.better,
        "before": c.before,
        "after": c.after,
        "change": c.delta,
        "change_is_relative": relative,
        "low": c.low,
        "high": c.high,
        "relative_change": c.delta if relative else c.relative,
        "verdict": c.verdict,
        "floor": {"value": c.figure.floor, "relative": c.figure.relative},
        "samples": {"before": c.samples[0], "after": c.samples[1]},
        "batches": {"before": c.batches[0], "after": c.batches[1]},
        "windows_per_batch": {"before": c.batch_windows[0], "after": c.batch_windows[1]},
        "informative": c.informative,
        "note": c.note or None,
    }


def _side_dict(s: SideInfo) -> dict[str, Any]:
    return {
        "inputs": list(s.inputs),
        "job_id": s.job_id,
        "job_name": s.job_name,
        "window_ms": list(s.window_ms) if s.window_ms else None,
        "status": s.status,
        "origins": [{"vertex": name, "cause": cause} for name, cause in s.origins],
        "checkpoints": s.checkpoints,
        "failed_checkpoints": s.failed_checkpoints,
        "plan_file": s.plan_file,
        "checkpoints_file": s.checkpoints_file,
    }


def comparison_dict(c: Comparison) -> dict[str, Any]:
    """The compare document (flinktune/data/schemas/compare.schema.json), without the envelope."""
    return {
        "verdict": c.verdict,
        "headline": c.headline,
        "confidence": c.confidence,
        "figures_judged": c.judged,
        "before": _side_dict(c.before),
        "after": _side_dict(c.after),
        "origin": c.origin,
        "job": [figure_dict(x) for x in c.job],
        "vertices": [
            {
                "key": v.key,
                "name": v.name,
                "name_before": v.name_before,
                "matched_by": v.matched_by,
                "parallelism": {"before": v.parallelism[0], "after": v.parallelism[1]},
                "figures": [figure_dict(x) for x in v.changes],
            }
            for v in c.vertices
        ],
        "graph": {
            "only_before": list(c.only_before),
            "only_after": list(c.only_after),
            "notes": list(c.graph_notes),
        },
        "predictions": [
            {
                "name": p.name,
                "label": p.label,
                "unit": p.unit,
                "predicted": {"before": p.predicted_before, "after": p.predicted_after},
                "measured": {"before": p.measured_before, "after": p.measured_after},
                "verdict": p.verdict,
                "rule": p.rule,
            }
            for p in c.predictions
        ],
        "notes": list(c.notes),
    }
