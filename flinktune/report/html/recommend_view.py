"""Recommendations -> the values the recommend template draws: changes with reasons and
before/after numbers, and the model's curves behind them (flinktune.model, the same functions
and inputs the advisor used: advise.state.ConfigState reads each side's settings).

Over 500 lines: the recommend page's views (changes, the model's curves, parallelism, lint errors),
plain values for one template.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from flinktune.advise.change import ProposedChange, Recommendation
from flinktune.advise.state import ConfigState
from flinktune.change import Applicability
from flinktune.config.catalog import load_catalog
from flinktune.config.reader import read_config_text
from flinktune.errors import FlinktuneError
from flinktune.findings import Finding
from flinktune.model import buffers as mb
from flinktune.model import credit, inflight, timeout
from flinktune.releases import BUFFERS_FIXED
from flinktune.report.diff import unified_diff
from flinktune.report.html import charts
from flinktune.report.recommend import format_value

CURRENT, RECOMMENDED = "#5f6368", "#d0021b"


def _bytes_s(x: float) -> str:
    return format_value(x, "B/s")


def _bytes(x: float) -> str:
    return format_value(x, "B")


def _secs(x: float) -> str:
    return format_value(x, "s")


def _states(rec: Recommendation, index: int) -> tuple[ConfigState, ConfigState] | None:
    """The settings before and after, read the way the advisor reads them."""
    catalog = load_catalog()
    try:
        out = []
        for text in (rec.original_text, rec.new_text):
            doc = read_config_text(text, rec.path)[index]
            out.append(
                ConfigState(dict(doc.values()), rec.version, catalog, rec.job, doc.path, doc.format, {}, doc)
            )
        return out[0], out[1]
    except (FlinktuneError, IndexError):
        return None


def _credits_chart(rec: Recommendation, before: ConfigState, after: ConfigState) -> dict[str, Any] | None:
    job = rec.job
    if job.workload != "streaming":
        return None
    try:
        s0, s1 = before.settings, after.settings
    except FlinktuneError:
        return None
    p = job.parallelism
    remote = job.remote_channels_per_taskmanager
    share = job.bandwidth_bytes_per_s / remote if remote else None
    offered = job.channel_offered_bytes_per_s
    hlines = []
    if share is not None:
        hlines.append(
            {
                "label": "NIC share per channel",
                "y": share / 1e6,
                "colour": "#1f8a70",
                "tip": f"NIC share per channel: {_bytes_s(share)} ({remote} remote channels per TaskManager)",
            }
        )
    if offered:
        hlines.append(
            {
                "label": "offered per channel (no headroom)",
                "y": offered / 1e6,
                "colour": "#e08a00",
                "tip": f"offered per channel: {_bytes_s(offered)}",
            }
        )
    if BUFFERS_FIXED.applies(rec.version):
        # 2.x fixes the credits (2 exclusive + 8 floating per gate): the lever is the segment size.
        xs = np.array([2.0**k for k in range(12, 19)])
        credits0 = s0.buffers_per_channel + s0.floating_per_gate / p
        ys = np.asarray(credit.credit_ceiling_bytes_per_s(credits0, xs, job.rtt_s), dtype=float) / 1e6
        points = [
            {
                "label": "current",
                "x": before.segment_bytes,
                "colour": CURRENT,
                "y": float(credit.credit_ceiling_bytes_per_s(credits0, before.segment_bytes, job.rtt_s))
                / 1e6,
            },
            {
                "label": "recommended",
                "x": after.segment_bytes,
                "colour": RECOMMENDED,
                "y": float(credit.credit_ceiling_bytes_per_s(credits0, after.segment_bytes, job.rtt_s)) / 1e6,
            },
        ]
        chart = charts.line_chart(
            xs=xs,
            lines=[{"label": "credit ceiling", "ys": ys, "colour": "#333"}],
            points=points,
            hlines=hlines,
            log_x=True,
            x_fmt=lambda x: _bytes(x),
            y_fmt=lambda y: f"{y:.3g} MB/s",
        )
        title = (
            f"Throughput ceiling per channel against segment size (Flink {rec.version}: 2 buffers per "
            f"channel and 8 floating per gate are fixed), round trip {_secs(job.rtt_s)}"
        )
        xlabel = "segment size"
    else:
        hi = max(16, 2 * s1.buffers_per_channel, 2 * s0.buffers_per_channel)
        xs = np.arange(1, hi + 1, dtype=float)
        lines = []
        for label, st, colour, dash in (
            ("at the current segment size", before, CURRENT, "5 3"),
            ("at the recommended segment size", after, RECOMMENDED, ""),
        ):
            if label.startswith("at the recommended") and st.segment_bytes == before.segment_bytes:
                continue
            ys = (
                np.asarray(
                    credit.credit_ceiling_bytes_per_s(
                        xs + st.settings.floating_per_gate / p, st.segment_bytes, job.rtt_s
                    ),
                    dtype=float,
                )
                / 1e6
            )
            lines.append(
                {
                    "label": f"{label} ({_bytes(st.segment_bytes)})"
                    if len(lines) or after.segment_bytes != before.segment_bytes
                    else f"segment {_bytes(st.segment_bytes)}",
                    "ys": ys,
                    "colour": colour,
                    "dash": dash,
                }
            )
        points = []
        for label, st, colour in (("current", before, CURRENT), ("recommended", after, RECOMMENDED)):
            ceiling = float(
                credit.credit_ceiling_bytes_per_s(
                    st.settings.buffers_per_channel + st.settings.floating_per_gate / p,
                    st.segment_bytes,
                    job.rtt_s,
                )
            )
            points.append(
                {
                    "label": label,
                    "x": st.settings.buffers_per_channel,
                    "y": ceiling / 1e6,
                    "colour": colour,
                    "tip": f"{label}: {st.settings.buffers_per_channel} buffers per "
                    f"channel of {_bytes(st.segment_bytes)}: {_bytes_s(ceiling)}",
                }
            )
        chart = charts.line_chart(
            xs=xs,
            lines=lines,
            points=points,
            hlines=hlines,
            x_fmt=lambda x: f"{x:g}",
            y_fmt=lambda y: f"{y:.3g} MB/s",
        )
        title = (
            f"Throughput ceiling per channel against buffers (credits) per channel, round trip "
            f"{_secs(job.rtt_s)}, {s0.floating_per_gate}/{s1.floating_per_gate} floating per gate shared "
            f"by {p} channels"
        )
        xlabel = "buffers per channel"
    pts = "; ".join(f"{m['label']} {m['tip']}" for m in points)
    alt = (
        f"{title}. Ceiling = credits × segment / round trip. {pts}. "
        + "; ".join(h["tip"] for h in hlines)
        + "."
    )
    return {"title": title, "chart": chart, "alt": alt, "xlabel": xlabel, "ylabel": "MB/s"}


def _latency_chart(rec: Recommendation, before: ConfigState, after: ConfigState) -> dict[str, Any] | None:
    job = rec.job
    if job.workload != "streaming":
        return None
    t0, t1 = before.timeout.effective_timeout_s, after.timeout.effective_timeout_s
    finite = [t for t in (t0, t1) if math.isfinite(t)]
    hi = max([0.2, *[2 * t for t in finite]])
    xs = np.linspace(0.0, hi, 81)
    offered = job.channel_offered_bytes_per_s
    if offered and job.record_bytes:
        lam = offered / job.record_bytes

        def lat(t: np.ndarray | float, seg: int) -> Any:
            return timeout.added_latency_s(lam, job.record_bytes, seg, t)[1]

        basis = f"at {lam:,.0f} records/s of {_bytes(job.record_bytes)} per channel"
    else:

        def lat(t: np.ndarray | float, seg: int) -> Any:
            return t

        basis = "without a rate: the timeout itself is the bound"
    lines = [
        {
            "label": f"segment {_bytes(before.segment_bytes)}",
            "colour": CURRENT,
            "dash": "5 3",
            "ys": np.asarray(lat(xs, before.segment_bytes), dtype=float) * 1000,
        }
    ]
    if after.segment_bytes != before.segment_bytes:
        lines.append(
            {
                "label": f"segment {_bytes(after.segment_bytes)}",
                "colour": RECOMMENDED,
                "ys": np.asarray(lat(xs, after.segment_bytes), dtype=float) * 1000,
            }
        )
    points = []
    for label, st, t, colour in (("current", before, t0, CURRENT), ("recommended", after, t1, RECOMMENDED)):
        if math.isfinite(t):
            y = float(np.asarray(lat(t, st.segment_bytes))) * 1000
            points.append(
                {
                    "label": label,
                    "x": t * 1000,
                    "y": y,
                    "colour": colour,
                    "tip": f"{label}: timeout {_secs(t)} ({st.timeout.kind}) adds at most {y:.3g} ms",
                }
            )
    hlines = []
    if job.latency_target_s:
        hlines.append(
            {
                "label": "latency target",
                "y": job.latency_target_s * 1000,
                "colour": "#e08a00",
                "tip": f"latency target {_secs(job.latency_target_s)}",
            }
        )
    chart = charts.line_chart(
        xs=xs * 1000,
        lines=lines,
        points=points,
        hlines=hlines,
        x_fmt=lambda x: f"{x:g} ms",
        y_fmt=lambda y: f"{y:.3g} ms",
    )
    title = f"Added latency per exchange against buffer timeout ({basis})"
    alt = (
        f"{title}: min(time to fill a buffer, timeout). "
        + "; ".join(p["tip"] for p in points)
        + ("; " + hlines[0]["tip"] if hlines else "")
        + "."
    )
    return {"title": title, "chart": chart, "alt": alt, "xlabel": "buffer timeout", "ylabel": "ms"}


def _memory_chart(rec: Recommendation, before: ConfigState, after: ConfigState) -> dict[str, Any] | None:
    job = rec.job
    try:
        s0, s1 = before.settings, after.settings
    except FlinktuneError:
        return None
    hi_p = max(16, 4 * job.parallelism)
    xs = np.unique(np.round(np.geomspace(max(job.slots, 1), hi_p, 40)).astype(int))
    lines = []
    for label, st, s, colour, dash in (
        ("needed, current settings", before, s0, CURRENT, "5 3"),
        ("needed, recommended settings", after, s1, RECOMMENDED, ""),
    ):
        try:
            ys = [
                mb.worst_case_taskmanager_buffers(int(x), job.slots, s, exchanges=job.exchanges).required
                * st.segment_bytes
                / 2**20
                for x in xs
            ]
        except FlinktuneError:
            continue
        lines.append({"label": label, "ys": np.array(ys, dtype=float), "colour": colour, "dash": dash})
    if not lines:
        return None
    hlines = []
    same = rec.before.get("network_available_bytes") == rec.after.get("network_available_bytes")
    for label, key, colour in (
        ("available" + ("" if same else ", current"), "before", "#1f8a70"),
        ("available, recommended", "after", "#0b5d9e"),
    ):
        avail = getattr(rec, key).get("network_available_bytes")
        if key == "after" and same:
            continue
        if avail:
            hlines.append(
                {
                    "label": label,
                    "y": avail / 2**20,
                    "colour": colour,
                    "tip": f"network memory {label}: {_bytes(avail)}",
                }
            )
    points = []
    for label, key, colour in (("current", "before", CURRENT), ("recommended", "after", RECOMMENDED)):
        need = getattr(rec, key).get("network_needed_bytes")
        if need:
            points.append(
                {
                    "label": label,
                    "x": job.parallelism,
                    "y": need / 2**20,
                    "colour": colour,
                    "tip": f"{label}: this job (parallelism {job.parallelism}) needs {_bytes(need)} "
                    "per TaskManager at start-up",
                }
            )
    chart = charts.line_chart(
        xs=xs.astype(float),
        lines=lines,
        points=points,
        hlines=hlines,
        log_x=True,
        log_y=True,  # what a job needs is often a few MiB of hundreds available
        x_fmt=lambda x: f"{x:g}",
        y_fmt=lambda y: f"{y:.4g} MiB",
    )
    title = (
        f"Network memory per TaskManager against parallelism: needed at start-up ({job.exchanges} "
        f"all-to-all exchange(s), {job.slots} slots, every channel remote: the bound; the points are this "
        "job's demand) and available"
    )
    alt = title + ". " + "; ".join(p["tip"] for p in points + hlines) + "."
    return {"title": title, "chart": chart, "alt": alt, "xlabel": "parallelism", "ylabel": "MiB"}


def _inflight_chart(rec: Recommendation, before: ConfigState, after: ConfigState) -> dict[str, Any] | None:
    rows = []
    for name, label, fmt in (
        ("gate_inflight_bytes", "in flight per input gate", _bytes),
        ("drain_time_s", "time to drain it", _secs),
    ):
        b, a = rec.before.get(name), rec.after.get(name)
        if b is None and a is None:
            continue
        top = max(x for x in (b, a) if x is not None) or 1.0
        rows.append(
            {
                "label": label,
                "bars": [
                    {
                        "who": "current",
                        "w": 300 * (b or 0) / top,
                        "text": fmt(b) if b is not None else "n/a",
                        "colour": CURRENT,
                    },
                    {
                        "who": "recommended",
                        "w": 300 * (a or 0) / top,
                        "text": fmt(a) if a is not None else "n/a",
                        "colour": RECOMMENDED,
                    },
                ],
            }
        )
    if not rows:
        return None
    consume = rec.job.consume_bytes_per_s
    # The same model's curve: in-flight data against buffers per channel, after the change.
    alt = (
        "In-flight data and drain time, current and recommended: "
        + "; ".join(f"{r['label']} {r['bars'][0]['text']} -> {r['bars'][1]['text']}" for r in rows)
        + (
            f" (drained at {_bytes_s(consume)} per subtask)."
            if consume
            else " (no rate: drain time unknown)."
        )
    )
    curve = None
    try:
        s1 = after.settings
        p = rec.job.parallelism
        xs = np.arange(0, max(16, 2 * s1.buffers_per_channel) + 1, dtype=float)
        ys = (
            np.asarray(
                inflight.gate_inflight_bytes(p, xs, s1.floating_per_gate, after.segment_bytes), dtype=float
            )
            / 2**20
        )
        points = [
            {
                "label": lbl,
                "x": st.settings.buffers_per_channel,
                "colour": c,
                "y": float(
                    inflight.gate_inflight_bytes(
                        p, st.settings.buffers_per_channel, st.settings.floating_per_gate, st.segment_bytes
                    )
                )
                / 2**20,
            }
            for lbl, st, c in (("current", before, CURRENT), ("recommended", after, RECOMMENDED))
        ]
        curve = charts.line_chart(
            xs=xs,
            lines=[{"label": "in flight per gate (full buffers)", "ys": ys, "colour": "#333"}],
            points=points,
            x_fmt=lambda x: f"{x:g} per channel",
            y_fmt=lambda y: f"{y:.3g} MiB",
        )
    except FlinktuneError:
        curve = None
    return {
        "rows": rows,
        "alt": alt,
        "curve": curve,
        "curve_alt": f"In-flight data per input gate of {rec.job.parallelism} channels against buffers per "
        "channel, full buffers: (channels × buffers per channel + floating) × segment.",
    }


def _effects(change: ProposedChange) -> list[dict[str, Any]]:
    out = []
    for e in change.effects:
        b, a = e.before, e.after
        ratio = None
        if b and a is not None and isinstance(b, float | int) and math.isfinite(b) and math.isfinite(a):
            ratio = a / b
        out.append(
            {
                "label": e.label,
                "before": format_value(b, e.unit),
                "after": format_value(a, e.unit),
                "ratio": f"×{ratio:.3g}" if ratio is not None else "",
            }
        )
    return out


def _diff_lines(patch: str) -> list[dict[str, str]]:
    out = []
    for line in patch.splitlines():
        kind = (
            "hunk"
            if line.startswith("@@")
            else "add"
            if line.startswith("+") and not line.startswith("+++")
            else "del"
            if line.startswith("-") and not line.startswith("---")
            else ""
        )
        out.append({"kind": kind, "text": line})
    return out


def one_view(rec: Recommendation, index: int) -> dict[str, Any]:
    from flinktune.report.recommend import _current_text, _environment_lines, _key_text, _network_lines

    states = _states(rec, index)
    curves = []
    inflight_view = None
    if states is not None:
        for make in (_credits_chart, _latency_chart, _memory_chart):
            view = make(rec, *states)
            if view is not None:
                curves.append(view)
        inflight_view = _inflight_chart(rec, *states)
    changes = [
        {
            "n": i,
            "key": _key_text(c),
            "current": _current_text(c),
            "recommended": "(delete)" if c.action == "delete" else (c.value or ""),
            "why": c.why,
            "effects": _effects(c),
            "manual": c.applicability is Applicability.MANUAL,
        }
        for i, c in enumerate(rec.changes, 1)
    ]
    measured = None
    if rec.measured is not None:
        m = rec.measured
        measured = (
            f"back pressure starts at {m.origin} ({m.cause})" if m.origin else "no back-pressure origin found"
        ) + (f"; remote buffers {m.buffer_fill:.0%} full" if m.buffer_fill is not None else "")
    return {
        "title": rec.path + (f" ({rec.name})" if rec.name else ""),
        "version": str(rec.version),
        "environment": " ".join(line.strip() for line in _environment_lines(rec)),
        "assumptions": list(rec.assumptions),
        "measured": measured,
        "network": [line.strip() for line in _network_lines(rec)],
        "changes": changes,
        "notes": list(rec.notes),
        "withheld": list(rec.withheld),
        "curves": curves,
        "inflight": inflight_view,
    }


def recommend_view(
    recs: Sequence[Recommendation], *, path: str, original_text: str, new_text: str,
    lint_errors: Sequence[Finding] = (),
) -> dict[str, Any]:
    patch = unified_diff(original_text, new_text, path)
    n_changes = sum(len(r.changes) for r in recs)
    summary = (
        f"{n_changes} change{'s' if n_changes != 1 else ''} proposed for Flink "
        f"{', '.join(sorted({str(r.version) for r in recs}))}."
        if n_changes
        else "No changes: the configuration already fits this job and environment."
    )
    return {
        "path": path,
        "summary": summary,
        "recs": [one_view(r, i) for i, r in enumerate(recs)],
        "diff": _diff_lines(patch),
        "has_diff": bool(patch),
        # what lint still reports as errors in the recommended file (these changes do not fix them)
        "lint_errors": [{"where": str(f.location), "code": f.code, "name": f.name, "message": f.message}
                        for f in lint_errors],
    }
