"""The analysis report as text (rich), markdown or JSON: strings, so every format is testable.

Origin and cause first, then the vertex table in topological order (status, busy, back-pressured
time, pool usages, skew, a time strip), then the findings with their evidence and fixes.
"""

from __future__ import annotations

import io
import json
from typing import Any

from flinktune.analysis.diagnose import JobDiagnosis, headroom_vertex, job_status, missing_judging_metrics
from flinktune.analysis.job import AnalysisResult
from flinktune.analysis.parallelism import render_lines, render_markdown_lines
from flinktune.findings import Finding

JSON_SCHEMA_VERSION = 1

CAUSE_TEXT = {
    "all_busy": "every subtask busy: scale out",
    "hot_subtask": "one hot subtask (skew): scaling will not help",
    "slow_receiver": "slow receiver: input pools full",
    "network_bottleneck": "network bottleneck: link saturated",
    "too_few_credits": "too few credits for the round trip",
    "network_or_credits": "network or credits (give --bandwidth to tell apart)",
}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def _num(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}g}"


def finding_to_dict(finding: Finding) -> dict[str, Any]:
    # An analysis finding is about a vertex, not a config line: its key is the vertex.
    return {
        ("vertex" if name == "key" else name): value
        for name, value in finding.as_dict().items()
        if name != "line"
    }


def job_title(job: JobDiagnosis) -> str:
    """The job's name, else its id, else what the dump calls it; never blank (a dump without job
    columns names no job)."""
    return job.job_name or job.job_id or job.job_key or "(the dump names no job)"


def job_to_dict(job: JobDiagnosis) -> dict[str, Any]:
    return {
        "job_id": job.job_id,
        "job_name": job.job_name,
        # healthy | no-headroom | back-pressured | cannot-judge (the dump lacks what a verdict rests on)
        "status": job_status(job),
        "missing_metrics": list(missing_judging_metrics(job)),
        "has_plan": job.has_plan,
        "single_sample": job.single_sample,
        "window_ms": list(job.window_ms) if job.window_ms else None,
        "notes": list(job.notes),
        # Rates and the parallelism the target rate needs (analysis/parallelism.py).
        "parallelism": job.parallelism.as_dict() if job.parallelism is not None else None,
        "origins": [
            {
                "vertex": o.name,
                "vertex_id": o.vertex_key,
                "cause": o.cause,
                "channels": o.channels,
                "confidence": o.confidence,
                "hot_subtask": o.hot_subtask,
                "upstream_backpressured": list(o.upstream_backpressured),
                "upstream_not_backpressured": list(o.upstream_not_backpressured),
                "evidence": list(o.evidence),
            }
            for o in job.origins
        ],
        "vertices": [
            {
                "name": v.name,
                "vertex_id": v.vertex_key,
                "parallelism": v.parallelism,
                "level": v.level,
                "backpressured": v.backpressured,
                "temporary_backpressure": v.temporary_bp,
                "backpressured_ratio_max": v.bp_ratio_max,
                "backpressured_share_of_samples": v.bp_share_above_ok,
                "busy_max": v.busy_max,
                "busy_mean": v.busy_mean,
                "busy_subtasks": list(v.busy_subtasks),
                "idle_mean": v.idle_mean,
                "out_pool_usage": v.out_pool_mean,
                "in_pool_usage": v.in_pool_mean,
                "floating_buffers_usage": v.floating_mean,
                "exclusive_buffers_usage": v.exclusive_mean,
                "records_in_per_s": v.records_in_per_s,
                "records_out_per_s": v.records_out_per_s,
                "records_in_skew": v.records_in_skew,
                "busy_skew": v.busy_skew,
                "avg_record_bytes": v.avg_record_bytes,
                "remote_buffer_bytes": v.remote_buffer_bytes,
                "strip_backpressure": job.strips.get(v.vertex_key, ("", ""))[0],
                "strip_busy": job.strips.get(v.vertex_key, ("", ""))[1],
                "subtasks": [
                    {
                        "index": s.subtask_index,
                        "tm_id": s.tm_id,
                        "level": s.level,
                        "backpressured_ratio": s.bp_ratio,
                        "busy": s.busy_ratio,
                        "idle": s.idle_ratio,
                        "out_pool_usage": s.out_pool,
                        "in_pool_usage": s.in_pool,
                        "records_in_per_s": s.records_in_per_s,
                        "samples": s.samples,
                    }
                    for s in v.subtasks
                ],
            }
            for v in job.vertices
        ],
    }


def render_json(result: AnalysisResult, tool_version: str = "") -> str:
    doc = {
        "tool": "flinktune",
        "version": tool_version,
        "schema_version": JSON_SCHEMA_VERSION,
        "inputs": list(result.inputs),
        "plan": result.plan_file,
        "samples": result.samples,
        "jobs": [job_to_dict(j) for j in result.jobs],
        "findings": [finding_to_dict(f) for f in result.findings],
    }
    return json.dumps(doc, indent=2, default=str) + "\n"


def _headline(job: JobDiagnosis) -> list[str]:
    if job_status(job) == "cannot-judge":
        return [f"Cannot judge: the dump lacks {', '.join(missing_judging_metrics(job))}."]
    if not job.origins:
        if any(v.backpressured for v in job.vertices):
            return ["Back pressure found, origin unclear (see notes)."]
        if job_status(job) == "no-headroom":
            return [no_headroom_text(job)]
        return ["No sustained back pressure: nothing holds this job back."]
    lines = []
    for o in job.origins:
        lines.append(
            f"Origin: {o.name} | cause: {CAUSE_TEXT.get(o.cause, o.cause)} | channels: {o.channels} "
            f"| confidence {o.confidence:.0%}"
        )
        lines.extend(f"  - {e}" for e in o.evidence)
    return lines


def no_headroom_text(job: JobDiagnosis) -> str:
    """The headline of a job at its edge: not back-pressured, but a subtask busy nearly all the time."""
    v = headroom_vertex(job)
    rates = job.parallelism.rate(v.vertex_key) if job.parallelism is not None and v is not None else None
    busiest = rates.busiest if rates is not None else (v.busy_max if v is not None else None)
    name = v.name if v is not None else "a vertex"
    return (f"No sustained back pressure, but no headroom: a subtask of {name} is busy "
            f"{busiest or 0.0:.0%} of the time, so the next burst back-pressures the job (see Parallelism).")


def _fix_text(f: Finding) -> str | None:
    return None if f.fix is None else f.fix.describe()


def render_text(result: AnalysisResult, color: bool = False, width: int = 140) -> str:
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=color, no_color=not color, width=width, highlight=False)
    for job in result.jobs:
        title = job_title(job)
        console.print(
            f"[bold]Job {title}[/bold]" + (f" ({job.job_id})" if job.job_id and job.job_name else "")
        )
        for line in _headline(job):
            console.print(line, markup=False)
        table = Table(show_lines=False, pad_edge=False)
        for col, just in (
            ("vertex", "left"),
            ("p", "right"),
            ("status", "left"),
            ("back-pressured", "right"),
            ("busy max", "right"),
            ("busy mean", "right"),
            ("out pool", "right"),
            ("in pool", "right"),
            ("skew", "right"),
            ("back pressure / busy over time", "left"),
        ):
            table.add_column(col, justify=just, no_wrap=col.startswith("back pressure /"))  # type: ignore[arg-type]
        origins = {o.vertex_key for o in job.origins}
        for v in job.vertices:
            status = (
                v.level
                + (" origin" if v.vertex_key in origins else "")
                + (" (temporary)" if v.temporary_bp else "")
            )
            bp_strip, busy_strip = job.strips.get(v.vertex_key, ("", ""))
            table.add_row(
                v.name,
                str(v.parallelism),
                status,
                _pct(v.bp_ratio_max),
                _pct(v.busy_max),
                _pct(v.busy_mean),
                _pct(v.out_pool_mean),
                _pct(v.in_pool_mean) if v.has_remote_input else "-",
                _num(v.records_in_skew, 2),
                f"{bp_strip}\n{busy_strip}",
            )
        console.print(table)
        for line in render_lines(job.parallelism):
            console.print(line, markup=False)
        for note in job.notes:
            console.print(f"note: {note}", markup=False)
        console.print(
            "strip: · OK  ▒ LOW  █ HIGH (top: back-pressured time, bottom: busy time)", markup=False
        )
    if result.findings:
        console.print("")
        console.print("[bold]Findings[/bold]")
        for f in result.findings:
            conf = f" (confidence {f.confidence:.0%})" if f.confidence is not None else ""
            console.print(f"{f.severity.value} {f.code} {f.name}: {f.message}{conf}", markup=False)
            fix = _fix_text(f)
            if fix:
                console.print(f"    fix: {fix}", markup=False)
    else:
        console.print("No findings.")
    return buf.getvalue()


def render_markdown(result: AnalysisResult) -> str:
    out: list[str] = ["# flinktune analyze", ""]
    for job in result.jobs:
        out.append(f"## Job {job_title(job)}")
        out.append("")
        out.extend(_headline(job))
        out.append("")
        out.append(
            "| vertex | p | status | back-pressured | busy max | busy mean | out pool | in pool | skew | "
            "back pressure over time | busy over time |"
        )
        out.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|")
        origins = {o.vertex_key for o in job.origins}
        for v in job.vertices:
            bp_strip, busy_strip = job.strips.get(v.vertex_key, ("", ""))
            status = v.level + (" **origin**" if v.vertex_key in origins else "")
            name = v.name.replace("|", "\\|")
            out.append(
                f"| {name} | {v.parallelism} | {status} | {_pct(v.bp_ratio_max)} | {_pct(v.busy_max)} | "
                f"{_pct(v.busy_mean)} | {_pct(v.out_pool_mean)} | "
                f"{_pct(v.in_pool_mean) if v.has_remote_input else '-'} | {_num(v.records_in_skew, 2)} | "
                f"`{bp_strip}` | `{busy_strip}` |"
            )
        out.append("")
        parallelism = render_markdown_lines(job.parallelism)
        if parallelism:
            out.extend(parallelism)
            out.append("")
        out.extend(f"- note: {n}" for n in job.notes)
        out.append("")
    out.append("## Findings")
    out.append("")
    if not result.findings:
        out.append("No findings.")
    for f in result.findings:
        conf = f" (confidence {f.confidence:.0%})" if f.confidence is not None else ""
        out.append(f"- **{f.severity.value} {f.code}** {f.name}: {f.message}{conf}")
        fix = _fix_text(f)
        if fix:
            out.append(f"  - fix: `{fix}`")
    return "\n".join(out) + "\n"
