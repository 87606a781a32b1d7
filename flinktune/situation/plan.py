"""Reading the job graph a user gives: Flink's ``/jobs/:jobid/plan`` JSON (``--plan``, ``plan.json``
beside a dump) and ``flinktune collect``'s ``job.json`` (subtask placement). Plain data here; the
model turns it into a JobGraph (model.buffers.job_graph_from_plan / placement_from_job_json)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flinktune.errors import ConfigError


def read_json_object(path: str | Path, what: str = "the plan") -> dict[str, Any]:
    """A JSON object from ``path``; bad input is one ConfigError naming the file."""
    from flinktune.config.safe_load import load_json

    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read {what}: {error.strerror or error}", file=file) from None
    except UnicodeDecodeError:
        raise ConfigError(f"{what} is not JSON: not UTF-8 text", file=file) from None
    data = load_json(text, file=file, prefix=f"{what} is not JSON")
    if not isinstance(data, dict):
        raise ConfigError(f"{what} must be a JSON object", file=file)
    return data
