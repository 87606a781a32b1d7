"""``flinktune rules list``'s reports (a ``RuleSet``): text (``-v``: why and source too), json, markdown."""

from __future__ import annotations

from typing import Any

from flinktune.report.emit import How

RESULT = "flinktune.rules.ruleset.RuleSet"
SCHEMA_VERSION = 2


def text(result: Any, how: How) -> str:
    from flinktune.report.text import in_colour
    from flinktune.rules.describe import render_list_text

    return render_list_text(result, verbose=how.verbose, paint=in_colour if how.color else None)


def json(result: Any, how: How) -> str:
    from flinktune.rules.describe import render_list_json

    return render_list_json(result)


def markdown(result: Any, how: How) -> str:
    from flinktune.rules.describe import render_markdown

    return render_markdown(result)


FORMATS = {"text": text, "json": json, "markdown": markdown}
