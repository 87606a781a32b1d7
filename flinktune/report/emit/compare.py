"""``flinktune compare``'s reports (a ``Comparison``): text, json, markdown, html (one page)."""

from __future__ import annotations

from typing import Any

from flinktune.report.emit import How

RESULT = "flinktune.compare.value.Comparison"
SCHEMA_VERSION = 1


def text(result: Any, how: How) -> str:
    from flinktune.report.compare import render_text

    return render_text(result, color=how.color)


def json(result: Any, how: How) -> dict[str, Any]:
    from flinktune.report.compare import comparison_dict

    return comparison_dict(result)


def markdown(result: Any, how: How) -> str:
    from flinktune.report.compare import render_markdown

    return render_markdown(result)


def html(result: Any, how: How) -> str:
    from flinktune.report.html import render_compare_html

    return render_compare_html(result, how.tool_version)


FORMATS = {"text": text, "json": json, "markdown": markdown, "html": html}
