"""``flinktune collect``'s reports (a ``CollectResult`` from REST polling or a ``PrometheusResult``):
text (the one summary line), json (every field, paths as text)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from flinktune.report.emit import How

RESULT = ("flinktune.collect.collector.CollectResult", "flinktune.collect.prometheus.PrometheusResult")
SCHEMA_VERSION = 1


def _polled(result: Any) -> bool:
    from flinktune.collect.collector import CollectResult

    return isinstance(result, CollectResult)


def summary(result: Any) -> str:
    """One line: what was collected from which job, and where it is."""
    if _polled(result):
        where = str(result.metrics_path) if result.metrics_path else "no metrics (no subtask answered)"
        return (f"collected {result.polls} polls, {result.rows} rows from job {result.job_name!r} "
                f"({result.job_id}, Flink {result.flink_version}) into {where}; plan in {result.plan_path}")
    where = str(result.metrics_path) if result.metrics_path else "no metrics (no samples in the range)"
    plan_note = f"plan from {result.plan_source}" if result.plan_path else "no plan"
    line = (f"pulled {result.metrics} metrics of {result.series} series in {result.chunks} chunks "
            f"({result.requests} requests), {result.rows} rows of job {result.job_name!r} ({result.job_id}) "
            f"into {where}; {plan_note}")
    return "stopped early: " + line if result.stop_reason == "interrupted" else line


def text(result: Any, how: How) -> str:
    return summary(result)


def json(result: Any, how: How) -> dict[str, Any]:
    fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
    body: dict[str, Any] = {"source": "rest" if _polled(result) else "prometheus"}
    body.update({name: str(value) if isinstance(value, Path) else list(value) if isinstance(value, tuple)
                 else value for name, value in fields.items()})
    return body


FORMATS = {"text": text, "json": json}
