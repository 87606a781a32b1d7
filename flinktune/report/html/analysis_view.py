"""AnalysisResult -> the plain values the analysis templates draw (positions, colours, texts).

Levels and thresholds are the analysis' own (flinktune.analysis.facts: the web UI's OK <= 10% <
LOW <= 50% < HIGH of JobVertexBackPressureHandler; busy from 50%); colours follow the web UI's
job graph (node.component.ts: back-pressured black, busy red, idle blue).

Over 500 lines: the analysis page's views (graph, heat maps, time series), plain values for one
template.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from flinktune.analysis.diagnose import POOL_HIGH, JobDiagnosis, Origin, job_status
from flinktune.analysis.facts import BUSY, LEVEL_HIGH, LEVEL_LOW, VertexFacts
from flinktune.analysis.job import AnalysisResult
from flinktune.analysis.parallelism import vertex_advice_text
from flinktune.analysis.plan import JobPlan
from flinktune.analysis.render import no_headroom_text
from flinktune.analysis.timeline import JobTimeline, VertexTimeline
from flinktune.findings import Finding
from flinktune.report.html import charts
from flinktune.report.html.layout import layout

NODE_W, NODE_H, GAP_X, GAP_Y, PAD = 200.0, 78.0, 80.0, 26.0, 24.0
# Most columns a per-vertex chart draws and most cells of a heat map: more than a laptop screen
# shows is downsampled (means for the stacked shares, max for the heat map so a hot cell stays).
CHART_COLS = 200
HEAT_COLS = 400
HEAT_ROWS = 128
CHART_W, CHART_H = 470.0, 110.0
# Empty slots (finer than the sampling interval) bridged by the previous sample.
CARRY_SLOTS = 3

COLOURS = {
    "busy": "#d9412b",  # web UI: busy red
    "backpressured": "#2b2b2b",  # web UI: back-pressured black
    "idle": "#4a90d9",  # web UI: idle blue
    "out_pool": "#7b3fa0",
    "in_pool": "#1f8a70",
}

CAUSE_SENTENCE = {
    "all_busy": "Every subtask of {name} is busy ({busy} at most), so the operator is too slow for its load.",
    "hot_subtask": "Subtask {hot} of {name} is busy while its siblings are not: data or resource skew.",
    "slow_receiver": "The input pools of {name} are full while its busy time is low or not reported: "
    "a slow receiver.",
    "network_bottleneck": "{name} waits with empty input pools while its senders' output pools are full "
    "and the link runs near the bandwidth: the network is saturated.",
    "too_few_credits": "{name} waits with empty input pools while its senders' output pools are full, well "
    "below the bandwidth: too few credits (buffers) per channel for the round trip.",
    "network_or_credits": "{name} waits with empty input pools while its senders' output pools are full: "
    "the network or too few credits (give --bandwidth to tell them apart).",
}
ACTION_SENTENCE = {
    "all_busy": "Scale {name} out or make it cheaper; more network buffers will not help.",
    "hot_subtask": "Spread the hot keys (or fix the slow machine) of {name}; neither more parallelism nor "
    "more buffers will help.",
    "slow_receiver": "Find what {name} waits on (an external system, GC, state access); buffers will not "
    "help.",
    "network_bottleneck": "Get a faster link or send fewer bytes; more credits cannot carry more than the "
    "link.",
    "too_few_credits": "Give each channel more credits for the round trip: run flinktune recommend with "
    "--metrics and --rtt.",
    "network_or_credits": "Run again with --bandwidth to tell a saturated link from too few credits.",
}


def pct(x: float | None, digits: int = 0) -> str:
    return "n/a" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.{digits}%}"


def iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _hms(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%H:%M:%S")


@dataclass(frozen=True)
class Answer:
    where: str
    cause: str
    confidence: str
    action: str
    level: str  # css class: bad | ok | unclear


def answer(job: JobDiagnosis, findings: Sequence[Finding]) -> Answer:
    if not job.origins:
        if any(v.backpressured for v in job.vertices):
            return Answer(
                "Back pressure was found, but where it starts is unclear (see the notes).",
                "The metrics do not show a vertex that is not back-pressured downstream of "
                "back-pressured ones.",
                "Confidence: low.",
                "Add the job plan (plan.json) or a longer window and run the analysis again.",
                "unclear",
            )
        if job_status(job) == "no-headroom":
            return Answer(
                no_headroom_text(job),
                "No vertex is back-pressured in at least half of the samples after the warm-up, but one "
                "subtask has almost no idle time left.",
                "Confidence: high for this window.",
                "Give it headroom: see the parallelism below (sized for the target utilisation).",
                "unclear",
            )
        return Answer(
            "No sustained back pressure: nothing holds this job back.",
            "No vertex is back-pressured in at least half of the samples after the warm-up.",
            "Confidence: high for this window.",
            "Nothing to change for back pressure.",
            "ok",
        )
    o: Origin = job.origins[0]
    v = job.vertex(o.vertex_key)
    ups = list(o.upstream_backpressured)
    where = f"Back pressure starts at {o.name}" + (
        f", subtask {o.hot_subtask}" if o.hot_subtask is not None else ""
    )
    where += f"; upstream {', '.join(ups)} {'is' if len(ups) == 1 else 'are'} back-pressured." if ups else "."
    fmt = {"name": o.name, "busy": pct(v.busy_max if v else None), "hot": o.hot_subtask}
    cause = CAUSE_SENTENCE.get(o.cause, "Cause: {cause}.").format(cause=o.cause, **fmt)
    conf = f"Confidence {o.confidence:.0%}, " + (
        "from the job plan's edges."
        if job.has_plan
        else "without a job plan (the busiest vertex that is not back-pressured)."
    )
    action = ACTION_SENTENCE.get(o.cause, "See the findings.").format(**fmt)
    if o.cause in ("all_busy", "hot_subtask") and job.parallelism is not None:
        action = action.rstrip(".") + ": " + vertex_advice_text(job.parallelism, o.vertex_key) + "."
    fixes = [f for f in findings if f.fix is not None and f.location.key == o.name and f.fix.value]
    if fixes:
        f = fixes[0]
        action = action.rstrip(".") + f" ({f.code} proposes {f.fix.key}: {f.fix.value})."  # type: ignore[union-attr]
    return Answer(where, cause, conf, action, "bad")


def _short(name: str, most: int = 28) -> str:
    return name if len(name) <= most else name[: most - 1] + "…"


def _vertex_tip(v: VertexFacts, origin: bool) -> str:
    bits = [
        v.name,
        f"parallelism {v.parallelism}",
        f"back pressure {v.level} (max {pct(v.bp_ratio_max, 1)}, "
        f"above OK in {pct(v.bp_share_above_ok)} of samples)",
        f"busy max {pct(v.busy_max, 1)}, mean {pct(v.busy_mean, 1)}",
        f"idle mean {pct(v.idle_mean, 1)}",
        f"out pool {pct(v.out_pool_mean, 1)}, in pool "
        f"{pct(v.in_pool_mean, 1) if v.has_remote_input else 'n/a'}",
    ]
    if origin:
        bits.insert(1, "ORIGIN of back pressure")
    return " · ".join(bits)


def _state(v: VertexFacts) -> str:
    if v.busy_max is not None and v.busy_max >= BUSY:
        return "busy"
    if v.idle_mean is not None and v.idle_mean >= BUSY:
        return "idle"
    return ""


def graph_view(job: JobDiagnosis, plan: JobPlan | None) -> dict[str, Any]:
    keys = [v.vertex_key for v in job.vertices]
    edges = [
        (e.source_id, e.target_id, e.ship_strategy)
        for e in (plan.edges if plan else ())
        if e.source_id in keys and e.target_id in keys
    ]
    lay = layout(keys, [(a, b) for a, b, _ in edges], NODE_W, NODE_H, GAP_X, GAP_Y)
    origins = {o.vertex_key for o in job.origins}
    nodes = []
    for v in job.vertices:
        p = lay.nodes[v.vertex_key]
        busy, bp, idle = v.busy_mean or 0.0, v.bp_ratio_mean or 0.0, v.idle_mean or 0.0
        total = max(busy + bp + idle, 1e-9)
        bar_w = NODE_W - 16
        segs, x = [], p.x + PAD + 8
        for name, share in (("busy", busy), ("backpressured", bp), ("idle", idle)):
            w = bar_w * share / max(total, 1.0)
            segs.append({"x": x, "w": w, "colour": COLOURS[name]})
            x += w
        state = _state(v)
        nodes.append(
            {
                "key": v.vertex_key,
                "x": p.x + PAD,
                "y": p.y + PAD,
                "w": NODE_W,
                "h": NODE_H,
                "name": v.name,
                "short": _short(v.name),
                "level": v.level,
                "origin": v.vertex_key in origins,
                "line2": f"p={v.parallelism} · {v.level}{' (temporary)' if v.temporary_bp else ''} · bp "
                f"{pct(v.bp_ratio_max)}",
                "line3": f"busy {pct(v.busy_max)} max" + (f" · {state.upper()}" if state else ""),
                "state": state,
                "segs": segs,
                "bar_y": p.y + PAD + NODE_H - 12,
                "tip": _vertex_tip(v, v.vertex_key in origins),
            }
        )
    edge_views = []
    for a, b, ship in edges:
        pa, pb = lay.nodes[a], lay.nodes[b]
        x1, y1 = pa.x + PAD + NODE_W, pa.y + PAD + NODE_H / 2
        x2, y2 = pb.x + PAD - 6, pb.y + PAD + NODE_H / 2
        mx = (x1 + x2) / 2
        edge_views.append(
            {
                "d": f"M{x1:.1f},{y1:.1f} C{mx:.1f},{y1:.1f} {mx:.1f},{y2:.1f} {x2:.1f},{y2:.1f}",
                "label": ship or "?",
                "lx": mx,
                "ly": (y1 + y2) / 2 - 6,
                "tip": f"{job.vertex(a).name} → {job.vertex(b).name}: {ship}",
            }
        )  # type: ignore[union-attr]
    n_bp = sum(1 for v in job.vertices if v.backpressured)
    alt = (
        f"Job graph of {len(nodes)} vertices, left to right along the data flow"
        + ("" if plan else " (no job plan: edges unknown)")
        + f"; {n_bp} back-pressured; "
        + "; ".join(
            f"{v.name}: {v.level}{', origin' if v.vertex_key in origins else ''}"
            f"{', ' + _state(v) if _state(v) else ''}"
            for v in job.vertices
        )
        + "."
    )
    return {
        "nodes": nodes,
        "edges": edge_views,
        "width": lay.width + 2 * PAD,
        "height": max(lay.height, NODE_H) + 2 * PAD,
        "alt": alt,
        "has_edges": bool(edges),
    }


def _slot_text(tl: JobTimeline, group: tuple[int, int]) -> str:
    a = tl.start_ms + group[0] * tl.slot_ms
    b = tl.start_ms + group[1] * tl.slot_ms
    return f"{_hms(a)}–{_hms(b)} (+{(a - tl.start_ms) / 1000:.0f}–{(b - tl.start_ms) / 1000:.0f} s)"


def _warm_width(tl: JobTimeline, col_groups: Sequence[tuple[int, int]], width: float) -> float:
    span = tl.slots * tl.slot_ms
    return max(0.0, min(width, width * (tl.warmup_end_ms - tl.start_ms) / span)) if span else 0.0


def _time_ticks(tl: JobTimeline, width: float) -> list[dict[str, Any]]:
    span_s = tl.slots * tl.slot_ms / 1000
    return [
        {"x": width * t / span_s, "label": f"{t:g} s"} for t in charts.nice_ticks(span_s, 6) if t <= span_s
    ]


def vertex_chart(v: VertexFacts, vt: VertexTimeline | None, tl: JobTimeline | None) -> dict[str, Any] | None:
    if vt is None or tl is None:
        return None
    cols = charts.groups(tl.slots, CHART_COLS)
    all_rows = [(0, len(vt.subtasks))]
    stats: dict[str, np.ndarray] = {}
    filled = {name: charts.ffill(m, CARRY_SLOTS) for name, m in vt.values.items()}
    for name in ("busy", "backpressured", "idle", "out_pool", "in_pool"):
        m = filled.get(name)
        stats[name] = (
            charts.pool(m, all_rows, cols, "mean")[0] if m is not None else np.full(len(cols), np.nan)
        )
    sampled_slots = np.zeros(tl.slots, dtype=bool)
    for m in vt.values.values():
        sampled_slots |= ~np.isnan(m).all(axis=0)
    sampled = np.logical_or.reduceat(sampled_slots, [g[0] for g in cols])
    bp_m = filled.get("backpressured")
    # The worst subtask in each column (the web UI shows a vertex's worst subtask too).
    bp_worst = (
        charts.pool(bp_m, all_rows, cols, "max")[0]
        if bp_m is not None and bp_m.size
        else np.full(len(cols), np.nan)
    )
    cw = CHART_W / len(cols)
    columns = []
    for i, g in enumerate(cols):
        y = CHART_H
        rects = []
        for name in ("busy", "backpressured", "idle"):
            val = stats[name][i]
            if np.isnan(val):
                continue
            h = CHART_H * min(max(val, 0.0), 1.0)
            y -= h
            rects.append({"y": y, "h": h, "colour": COLOURS[name]})
        tip = (
            f"{v.name} · {_slot_text(tl, g)} · mean over {len(vt.subtasks)} subtasks: busy "
            f"{pct(stats['busy'][i], 1)}, back-pressured {pct(stats['backpressured'][i], 1)} (worst "
            f"subtask {pct(float(bp_worst[i]) if np.isfinite(bp_worst[i]) else None, 1)}), idle "
            f"{pct(stats['idle'][i], 1)} · out pool {pct(stats['out_pool'][i], 1)}, in pool "
            f"{pct(stats['in_pool'][i], 1)}"
            + ("" if sampled[i] else " (no sample in this slot: the previous one)")
        )
        columns.append({"x": i * cw, "w": cw, "rects": rects, "tip": tip})

    def line(name: str) -> str:
        pts = []
        for i, val in enumerate(stats[name]):
            if not np.isnan(val):
                pts.append(f"{(i + 0.5) * cw:.1f},{CHART_H * (1 - min(max(val, 0.0), 1.0)):.1f}")
        return " ".join(pts)

    warm = _warm_width(tl, cols, CHART_W)
    analysed = [i for i, g in enumerate(cols) if tl.start_ms + g[1] * tl.slot_ms > tl.warmup_end_ms]

    def mean_after(name: str) -> float | None:
        vals = [stats[name][i] for i in analysed if not np.isnan(stats[name][i])]
        return sum(vals) / len(vals) if vals else None

    alt = (
        f"{v.name}: share of time busy, back-pressured and idle over {tl.slots * tl.slot_ms / 1000:.0f} s "
        f"(mean over {len(vt.subtasks)} subtasks; the first {(tl.warmup_end_ms - tl.start_ms) / 1000:.0f} s "
        f"are warm-up, shaded, not analysed). After the warm-up: busy {pct(mean_after('busy'))}, "
        f"back-pressured {pct(mean_after('backpressured'))}, idle {pct(mean_after('idle'))}; output pool "
        f"usage {pct(mean_after('out_pool'))}, input pool usage {pct(mean_after('in_pool'))}."
    )
    return {
        "columns": columns,
        "warm": warm,
        "w": CHART_W,
        "h": CHART_H,
        "ticks": _time_ticks(tl, CHART_W),
        "out_line": line("out_pool"),
        "in_line": line("in_pool"),
        "alt": alt,
        "pool_high_y": CHART_H * (1 - POOL_HIGH),
        "has_in": bool(line("in_pool")),
        "has_out": bool(line("out_pool")),
    }


def heatmap(
    v: VertexFacts, vt: VertexTimeline | None, tl: JobTimeline | None, name: str, low: str, high: str
) -> dict[str, Any] | None:
    if vt is None or tl is None or name not in vt.values:
        return None
    m = charts.ffill(vt.values[name], CARRY_SLOTS)
    rows = charts.groups(m.shape[0], HEAT_ROWS)
    cols = charts.groups(m.shape[1], HEAT_COLS)
    cells = charts.pool(m, rows, cols, "max")
    img = charts.data_uri(charts.png(charts.ramp(cells, low, high)))
    row_labels = [
        str(vt.subtasks[a]) if b - a == 1 else f"{vt.subtasks[a]}–{vt.subtasks[b - 1]}" for a, b in rows
    ]
    col_labels = [_slot_text(tl, g) for g in cols]
    per_sub = np.nanmean(np.where(np.isnan(m), np.nan, m), axis=1) if m.size else np.array([])
    hot = ""
    if per_sub.size and not np.all(np.isnan(per_sub)):
        i = int(np.nanargmax(per_sub))
        others = np.delete(per_sub, i)
        rest = float(np.nanmean(others)) if others.size and not np.all(np.isnan(others)) else None
        hot = f" Highest: subtask {vt.subtasks[i]} at {pct(float(per_sub[i]))} on average" + (
            f", the others {pct(rest)}." if rest is not None else "."
        )
    label = {"busy": "busy", "backpressured": "back-pressured"}[name]
    alt = (
        f"Heat map of {label} time for the {len(vt.subtasks)} subtasks of {v.name} (rows) over "
        f"{tl.slots * tl.slot_ms / 1000:.0f} s (columns)"
        + (
            f", each cell the maximum of up to {max(b - a for a, b in rows)} subtasks"
            if len(rows) < m.shape[0]
            else ""
        )
        + "."
        + hot
    )
    hh = max(60.0, min(260.0, 4.0 * len(rows)))
    return {
        "uri": img,
        "cells": charts.quantised(cells),
        "rows": len(rows),
        "cols": len(cols),
        "row_labels": "|".join(row_labels),
        "col_labels": "|".join(col_labels),
        "w": CHART_W,
        "h": hh,
        "alt": alt,
        "label": label,
        "warm": _warm_width(tl, cols, CHART_W),
        "vertex": v.name,
        "ticks": _time_ticks(tl, CHART_W),
        "low": low,
        "high": high,
        "first": row_labels[0] if row_labels else "",
        "last": row_labels[-1] if row_labels else "",
    }


def finding_view(f: Finding) -> dict[str, Any]:
    fix = None if f.fix is None else f.fix.describe()
    return {
        "code": f.code,
        "name": f.name,
        "severity": f.severity.value,
        "message": f.message,
        "evidence": list(f.evidence),
        "fix": fix,
        "why": f.why,
        "references": list(f.references),
        "anchor": f"rule-{f.code.lower()}",
        "vertex": f.location.key,
        "confidence": pct(f.confidence) if f.confidence is not None else None,
    }


def _plan_for(job: JobDiagnosis, plan: JobPlan | None, n_jobs: int) -> JobPlan | None:
    if plan is None:
        return None
    if not plan.job_id or plan.job_id in (job.job_id, job.job_key) or n_jobs == 1:
        return plan
    return None


def job_view(result: AnalysisResult, job: JobDiagnosis) -> dict[str, Any]:
    tl = result.timelines.get(job.job_key)
    findings = [f for f in result.findings if f.location.key in {v.name for v in job.vertices}]
    origins = {o.vertex_key for o in job.origins}
    vertices = []
    for v in job.vertices:
        vt = tl.vertices.get(v.vertex_key) if tl else None
        vertices.append(
            {
                "name": v.name,
                "p": v.parallelism,
                "level": v.level,
                "origin": v.vertex_key in origins,
                "temporary": v.temporary_bp,
                "state": _state(v),
                "bp": pct(v.bp_ratio_max),
                "bp_share": pct(v.bp_share_above_ok),
                "busy_max": pct(v.busy_max),
                "busy_mean": pct(v.busy_mean),
                "idle": pct(v.idle_mean),
                "out_pool": pct(v.out_pool_mean),
                "in_pool": pct(v.in_pool_mean) if v.has_remote_input else "-",
                "skew": f"{v.records_in_skew:.2f}" if v.records_in_skew else "-",
                "rate_in": f"{v.records_in_per_s:,.0f}/s" if v.records_in_per_s is not None else "-",
                "chart": vertex_chart(v, vt, tl),
                "heat_busy": heatmap(v, vt, tl, "busy", "#f4f4f4", COLOURS["busy"]),
                "heat_bp": heatmap(v, vt, tl, "backpressured", "#f4f4f4", COLOURS["backpressured"]),
            }
        )
    meta = [("job", job.job_name or "n/a"), ("job id", job.job_id or job.job_key)]
    if job.window_ms:
        meta.append(
            (
                "window analysed",
                f"{iso(job.window_ms[0])} .. {iso(job.window_ms[1])} "
                f"({(job.window_ms[1] - job.window_ms[0]) / 1000:.0f} s, after the warm-up)",
            )
        )
    if tl:
        meta.append(
            ("time slots", f"{tl.slots} of {tl.slot_ms / 1000:.3g} s; warm-up until {iso(tl.warmup_end_ms)}")
        )
    meta.extend(
        [
            ("vertices", str(len(job.vertices))),
            ("subtasks", str(sum(v.parallelism for v in job.vertices))),
            ("job plan", "yes" if job.has_plan else "no"),
        ]
    )
    return {
        "title": job.job_name or job.job_id or job.job_key,
        "job_id": job.job_id,
        "answer": answer(job, findings),
        "graph": graph_view(job, _plan_for(job, result.plan, len(result.jobs))),
        "vertices": vertices,
        "meta": meta,
        "notes": list(job.notes),
        "parallelism": parallelism_view(job),
        "origins": [
            {
                "name": o.name,
                "cause": o.cause,
                "channels": o.channels,
                "confidence": pct(o.confidence),
                "evidence": list(o.evidence),
            }
            for o in job.origins
        ],
    }


def _rate(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}" if x >= 10 else f"{x:.3g}"


def parallelism_view(job: JobDiagnosis) -> dict[str, Any] | None:
    """The parallelism section: rates per vertex and what the target rate needs (analysis/parallelism)."""
    advice = job.parallelism
    if advice is None:
        return None
    rows = []
    scaling = {v.vertex_id: v for v in advice.plan.vertices} if advice.plan is not None else {}
    for r in advice.rates:
        sc = scaling.get(r.vertex_key)
        rows.append({
            "name": r.name, "p": r.parallelism, "in": _rate(r.input_per_s), "busy": pct(r.busy),
            "rate": _rate(r.true_rate_per_subtask), "method": r.method,
            "target": _rate(sc.target_in_per_s) if sc else "-",
            "proposed": ("-" if sc is None else f"{sc.parallelism} → {sc.proposed}" if sc.changed
                         else str(sc.proposed)),
            "predicted": pct(sc.predicted_busy) if sc else "-", "verdict": sc.verdict if sc else "-",
            "reason": sc.reason if sc else "",
        })
    return {
        "targets": [f"{_rate(t.per_s)} records/s at {t.name}: {t.text}" for t in advice.targets],
        "utilization": pct(advice.plan.target_utilization) if advice.plan is not None else None,
        "rows": rows, "blocked": advice.blocked, "withheld": advice.withheld,
        "overrides": advice.overrides or None, "notes": list(advice.notes),
    }


def analysis_view(result: AnalysisResult, tool_version: str = "") -> dict[str, Any]:
    findings = [finding_view(f) for f in result.findings]
    rules: dict[str, dict[str, Any]] = {}
    for f in findings:
        rules.setdefault(
            f["code"],
            {
                "code": f["code"],
                "name": f["name"],
                "why": f["why"],
                "references": f["references"],
                "anchor": f["anchor"],
            },
        )
    return {
        "jobs": [job_view(result, j) for j in result.jobs],
        "findings": findings,
        "rules": sorted(rules.values(), key=lambda r: r["code"]),
        "meta": [
            ("inputs", ", ".join(result.inputs)),
            ("job plan file", result.plan_file or "none found"),
            ("samples read", f"{result.samples:,}"),
            ("flinktune", tool_version or "n/a"),
        ],
        "notes": list(result.notes),
        "thresholds": {
            "low": pct(LEVEL_LOW),
            "high": pct(LEVEL_HIGH),
            "busy": pct(BUSY),
            "pool_high": pct(POOL_HIGH),
        },
    }
