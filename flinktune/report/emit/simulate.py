"""``flinktune simulate``'s reports (a ``SimulateResult``: one run or a sweep): text, json."""

from __future__ import annotations

import math
from typing import Any

from flinktune.report.emit import How

RESULT = "flinktune.sim.runs.SimulateResult"
SCHEMA_VERSION = 2


def text(result: Any, how: How) -> str:
    from flinktune.sim.summary import render_sweep, render_text

    if result.sweep is None:
        return render_text(result.runs[0][1], charts=result.charts)
    return render_sweep(result.sweep, list(result.runs))


def json(result: Any, how: How) -> str:
    import json as json_module

    from flinktune.sim.summary import to_json

    if result.sweep is None:
        doc = to_json(result.runs[0][1])
    else:
        doc = {"sweep": result.sweep, "runs": [{"value": label, **to_json(r)} for label, r in result.runs]}
    return json_module.dumps(doc, default=_nan_safe)


def _nan_safe(value: object) -> object:
    if isinstance(value, float) and math.isnan(value):
        return None
    return str(value)


FORMATS = {"text": text, "json": json}
