"""Rendering a ``Recommendation`` (flinktune.advise) as text or JSON; no printing here."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from typing import Any

from flinktune.advise.engine import Effect, ProposedChange, Recommendation
from flinktune.advise.state import jsonable
from flinktune.change import Applicability
from flinktune.findings import Finding, Severity
from flinktune.model.network_fit import fit_words
from flinktune.report.diff import unified_diff
from flinktune.report.text import bold, in_colour
from flinktune.units import readable

_ENV_ORDER = ("flink-version", "workload", "parallelism", "slots", "taskmanagers", "exchanges", "rtt",
              "bandwidth", "rate", "record-size", "skew", "latency-target")


def format_value(value: float | None, unit: str) -> str:
    return readable(value, unit)


def _usage_text(percent: float) -> str:
    """RequestedMemoryUsage: not defined without network buffers (``n/a``, as JSON's null), not inf%."""
    return f"{percent:.0f}%" if percent < float("inf") else "n/a"


def _effect_text(effect: Effect) -> str:
    return (f"{effect.label}: {format_value(effect.before, effect.unit)} -> "
            f"{format_value(effect.after, effect.unit)}")


def _current_text(change: ProposedChange) -> str:
    if change.current is not None:
        return change.current
    return f"(default {change.default})" if change.default is not None else "(not set)"


def _recommended_text(change: ProposedChange) -> str:
    if change.action == "delete":
        return "(delete)"
    return change.value or ""


def _key_text(change: ProposedChange) -> str:
    if change.action == "rename":
        return f"{change.key} -> {change.new_key}"
    if change.applicability is Applicability.MANUAL:
        return f"{change.key} (by hand)"
    return change.key


# The factor docs/recommend.md states between the predicted and the measured barrier wait.
PREDICTION_FACTOR = 2


def _environment_lines(rec: Recommendation) -> list[str]:
    env = rec.environment
    job = rec.job
    values = {
        "flink-version": str(rec.version), "workload": job.workload, "parallelism": str(job.parallelism),
        "slots": str(job.slots), "taskmanagers": str(job.taskmanagers), "exchanges": str(job.exchanges),
        "rtt": format_value(job.rtt_s, "s"), "bandwidth": format_value(job.bandwidth_bytes_per_s, "B/s"),
        "rate": f"{job.rate_per_subtask:,.0f} records/s per subtask" if job.rate_per_subtask else None,
        "record-size": format_value(job.record_bytes, "B") if job.record_bytes else None,
        "skew": f"{job.skew:.3g}x" if job.skew else None,
        "latency-target": format_value(job.latency_target_s, "s") if job.latency_target_s else None,
    }
    parts = []
    for name in _ENV_ORDER:
        value = values.get(name)
        if value is None:
            continue
        where = env.source(name)
        parts.append(f"{name} {value}" + (f" [{where}]" if where and where not in ("flag",) else ""))
    return textwrap.wrap("; ".join(parts), 100, initial_indent="  ", subsequent_indent="  ")


def _network_lines(rec: Recommendation) -> list[str]:
    out = []
    if rec.size_maybe_elsewhere:
        # lint's rule (FTC050): a short file may be merged into the image's configuration, which has a size.
        out.append("  original: no TaskManager memory size is set in this file. If it is the whole "
                   f"configuration, Flink refuses it: {rec.original_memory_error} If it is merged into "
                   "another (the image's flink-conf.yaml, FLINK_PROPERTIES), that one's size applies: give "
                   "the whole configuration to size the network")
    elif rec.original_memory_error:
        out.append(f"  original: Flink refuses this TaskManager memory setup: {rec.original_memory_error}")
    elif rec.original_fit is not None:
        fit = rec.original_fit
        verdict, at_bound = fit_words(fit, rec.original_minimum_fit)
        out.append(f"  original: needs {fit.required} buffers at start-up (pools grow to {fit.target}), "
                   f"{fit.total_buffers} available of {fit.segment_bytes} bytes: {verdict} "
                   f"(RequestedMemoryUsage {_usage_text(fit.requested_usage_percent)})")
        if fit.message and at_bound:
            out.append(f"  a job with {rec.job.exchanges} all-to-all exchanges would fail with (give --plan "
                       f"or --exchanges to judge this job): {fit.message}")
        elif fit.message:
            out.append(f"  Flink would fail the job with: {fit.message}")
        if fit.message and fit.racing_text:
            out.append(f"  ({fit.racing_text})")
    if rec.final_memory_error and rec.size_maybe_elsewhere:
        out.append("  recommended: not sized (no memory size in this file)")
    elif rec.final_memory_error:
        out.append(f"  recommended: memory setup refused: {rec.final_memory_error}")
    elif rec.final_fit is not None and rec.changes:
        fit = rec.final_fit
        out.append(f"  recommended: needs {fit.required} buffers, {fit.total_buffers} available "
                   f"({'fits' if fit.fits else 'DOES NOT FIT'}, RequestedMemoryUsage "
                   f"{_usage_text(fit.requested_usage_percent)})")
    out.append(f"  demand assumption: {rec.demand_assumption}")
    op = rec.operator_network
    if op is not None:  # the FlinkDeployment turns the operator's memory tuning on: its figure, to compare
        out.append(f"  Kubernetes operator (job.autoscaler.memory.tuning.enabled) would set network.min/max "
                   f"to {op.memory.network_bytes:,} bytes ({op.memory.segments} buffers: every channel "
                   f"charged as remote, every slot full; {op.assumption}); see docs/model.md 2a")
    return out


def render_recommendation_text(rec: Recommendation, *, diff: bool = True, color: bool = False) -> str:
    """The text report of one document; ``color``: headings bold, a configuration that does not fit
    in red (a terminal)."""
    name = f" ({rec.name})" if rec.name else ""
    lines = [f"{rec.path}{name}: recommendations for Flink {rec.version}", "", "Environment:"]
    lines.extend(_environment_lines(rec))
    if rec.assumptions:
        lines.append("Assumed:")
        lines.extend(f"  - {a}" for a in rec.assumptions)
    if rec.measured is not None:
        m = rec.measured
        lines.append("Measured (--metrics):")
        bits = [f"back pressure starts at {m.origin} ({m.cause})" if m.origin else "no back-pressure origin "
                                                                                   "found"]
        if m.buffer_fill is not None:
            bits.append(f"remote buffers {m.buffer_fill:.0%} full")
        lines.append("  " + "; ".join(bits))
    advice = rec.measured.parallelism_advice if rec.measured is not None else None
    if advice is not None and advice.plan is not None:
        from flinktune.analysis.parallelism import render_lines

        lines.extend(render_lines(advice))
    lines.append("Network memory per TaskManager:")
    lines.extend(_network_lines(rec))
    if rec.barrier_wait_s[0] is not None and rec.measured is not None:
        before, after = rec.barrier_wait_s
        lines.append("Checkpoint barrier under back pressure (predicted, whole path):")
        lines.append(f"  waits about {before:.3g} s over {rec.measured.backpressured_exchanges} "
                     "back-pressured "
                     f"exchange(s) (input gates and output queues)"
                     + (f"; with the changes about {after:.3g} s"
                        if after is not None and rec.changes else "")
                     + f" (docs/recommend.md: with debloating within {PREDICTION_FACTOR}x of real Flink; "
                       "with full default buffers a lower bound)")
    lines.append("")
    if not rec.changes:
        if rec.size_maybe_elsewhere:
            lines.append("No changes proposed: without a memory size, the network memory is not sized "
                         "(above).")
        elif rec.original_memory_error or (rec.original_fit is not None and not rec.original_fit.fits):
            lines.append("No changes proposed, but the configuration has a problem (above); see the notes.")
        elif rec.withheld:
            lines.append("No changes: nothing measured or stated shows that Flink's defaults limit this job.")
        else:
            lines.append("No changes: the configuration already fits this job and environment.")
    else:
        rows = [(str(i), _key_text(c), _current_text(c), _recommended_text(c))
                for i, c in enumerate(rec.changes, 1)]
        header = ("#", "key", "current", "recommended")
        widths = [max(len(r[i]) for r in [*rows, header]) for i in range(4)]
        widths[1] = min(widths[1], 70)
        lines.append(f"Changes ({len(rec.changes)}):")
        lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
        lines.append("  " + "  ".join("-" * w for w in widths))
        for row, change in zip(rows, rec.changes, strict=True):
            lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
            lines.extend(textwrap.wrap("why: " + change.why, 100, initial_indent="       ",
                                       subsequent_indent="            "))
            if change.evidence:
                lines.extend(textwrap.wrap("evidence: " + "; ".join(change.evidence), 100,
                                           initial_indent="       ", subsequent_indent="            "))
            for effect in change.effects:
                lines.append("       effect: " + _effect_text(effect))
    if rec.withheld:
        lines.append("")
        lines.append("Not changed without evidence (what would be checked, and how to provide it):")
        for item in rec.withheld:
            lines.extend(textwrap.wrap(item, 100, initial_indent="  - ", subsequent_indent="    "))
    if rec.notes:
        lines.append("")
        lines.append("Notes:")
        for note in rec.notes:
            lines.extend(textwrap.wrap(note, 100, initial_indent="  - ", subsequent_indent="    "))
    if color:
        lines = [_coloured(line, index == 0) for index, line in enumerate(lines)]
    if diff:
        patch = unified_diff(rec.original_text, rec.new_text, rec.path, color=color)
        if patch:
            lines.append("")
            lines.append(patch.rstrip("\n"))
    return "\n".join(lines) + "\n"


def _coloured(line: str, first: bool) -> str:
    if line and not line[0].isspace() and (first or line.endswith(":")):
        return bold(line)                                   # the title and the section headings
    for verdict in ("DOES NOT FIT", "does NOT fit", "Flink refuses", "memory setup refused"):
        if verdict in line:
            return line.replace(verdict, in_colour(Severity.ERROR, verdict))
    return line


def _change_json(change: ProposedChange) -> dict[str, Any]:
    # "spec": a FlinkDeployment spec field set (target spec), as this document has always said.
    action = "spec" if change.target == "spec" and change.action == "set" else change.action
    return {
        "key": change.key, "action": action, "new_key": change.new_key, "line": change.line,
        "current": change.current, "default": change.default, "recommended": change.value,
        "why": change.why, "evidence": list(change.evidence), "step": change.proposed_by,
        "effects": [{"name": e.name, "label": e.label, "unit": e.unit, "before": jsonable(e.before),
                     "after": jsonable(e.after)} for e in change.effects],
    }


def _fit_json(fit: Any) -> dict[str, Any] | None:
    if fit is None:
        return None
    return {"fits": fit.fits, "required": fit.required, "target": fit.target,
            "total_buffers": fit.total_buffers, "segment_bytes": fit.segment_bytes,
            "requested_usage_percent": round(fit.requested_usage_percent, 2), "message": fit.message,
            "racing_requests": list(fit.racing)}


def _parallelism_json(rec: Recommendation) -> dict[str, Any] | None:
    advice = rec.measured.parallelism_advice if rec.measured is not None else None
    return advice.as_dict() if advice is not None else None


def recommendation_dict(rec: Recommendation) -> dict[str, Any]:
    job = rec.job
    return {
        "file": rec.path, "document": rec.name, "format": rec.format.value, "flink_version": str(rec.version),
        "job": {"workload": job.workload, "parallelism": job.parallelism, "slots": job.slots,
                "taskmanagers": job.taskmanagers, "exchanges": job.exchanges, "rtt_s": job.rtt_s,
                "bandwidth_bytes_per_s": job.bandwidth_bytes_per_s, "rate_per_subtask": job.rate_per_subtask,
                "record_bytes": job.record_bytes, "latency_target_s": job.latency_target_s, "skew": job.skew},
        "sources": dict(rec.environment.sources),
        "assumptions": list(rec.assumptions),
        "measured": rec.measured.as_dict() if rec.measured is not None else None,
        "changes": [_change_json(c) for c in rec.changes],
        "notes": list(rec.notes),
        "withheld": list(rec.withheld),
        "barrier_wait_s": {"before": rec.barrier_wait_s[0], "after": rec.barrier_wait_s[1]},
        "parallelism": _parallelism_json(rec),
        "network": {"original": _fit_json(rec.original_fit),
                    "original_one_exchange": _fit_json(rec.original_minimum_fit),
                    "original_fails_for_sure": rec.original_fails_for_sure,
                    "original_memory_error": rec.original_memory_error,
                    # No size in the file, which may be merged into a configuration that has one.
                    "original_size_maybe_elsewhere": rec.size_maybe_elsewhere,
                    "recommended": _fit_json(rec.final_fit),
                    "recommended_memory_error": rec.final_memory_error,
                    "demand_assumption": rec.demand_assumption,
                    "operator_memory_tuning": None if rec.operator_network is None else {
                        "network_bytes": rec.operator_network.memory.network_bytes,
                        "buffers": rec.operator_network.memory.segments,
                        "assumption": rec.operator_network.assumption}},
        "model": {"before": {k: jsonable(v) for k, v in rec.before.items()},
                  "after": {k: jsonable(v) for k, v in rec.after.items()}},
        "diff": unified_diff(rec.original_text, rec.new_text, rec.path),
    }


def render_recommendation_json(recs: list[Recommendation], lint_errors: Sequence[Finding] = ()) -> str:
    """``lint_errors``: the errors lint still reports on the recommended file (what these changes do not
    fix; flinktune.lint.runner.lint_errors_in_text)."""
    doc = {"recommendations": [recommendation_dict(r) for r in recs],
           "lint_errors": [f.as_dict() for f in lint_errors]}
    return json.dumps(doc, indent=2) + "\n"


def render_lint_errors_text(lint_errors: Sequence[Finding], path: str) -> str:
    """The errors the recommended file keeps (empty when none)."""
    if not lint_errors:
        return ""
    lines = ["", f"Lint errors these changes do not fix (`flinktune lint {path}` reports them):"]
    lines += [f"  {f.location}: {f.code} [{f.name}] {f.message}" for f in lint_errors]
    return "\n".join(lines) + "\n"
