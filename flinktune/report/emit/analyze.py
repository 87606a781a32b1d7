"""``flinktune analyze``'s reports (an ``AnalysisResult``): text, json, markdown, html (one page)."""

from __future__ import annotations

from typing import Any

from flinktune.report.emit import How

RESULT = "flinktune.analysis.job.AnalysisResult"
SCHEMA_VERSION = 2


def text(result: Any, how: How) -> str:
    from flinktune.analysis.render import render_text

    return render_text(result, color=how.color)


def json(result: Any, how: How) -> str:
    from flinktune.analysis.render import render_json

    return render_json(result, how.tool_version)


def markdown(result: Any, how: How) -> str:
    from flinktune.analysis.render import render_markdown

    return render_markdown(result)


def html(result: Any, how: How) -> str:
    from flinktune.report.html import render_analysis_html

    return render_analysis_html(result, how.tool_version)


FORMATS = {"text": text, "json": json, "markdown": markdown, "html": html}
