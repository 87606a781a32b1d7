"""``flinktune model``'s reports (a ``ModelResult``): text (``-v``: where every input came from), json."""

from __future__ import annotations

from typing import Any

from flinktune.report.emit import How

RESULT = "flinktune.model.what_if.ModelResult"
SCHEMA_VERSION = 2


def text(result: Any, how: How) -> str:
    from flinktune.report.model import render_model_text

    return render_model_text(result, verbose=how.verbose, color=how.color)


def json(result: Any, how: How) -> str:
    from flinktune.report.model import render_model_json

    return render_model_json(result)


FORMATS = {"text": text, "json": json}
