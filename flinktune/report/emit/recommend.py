"""``flinktune recommend``'s reports (a ``RecommendResult``): text (each document, then one diff of the
whole file), json, html (one page, with the analysis's charts when --metrics ran)."""

from __future__ import annotations

from typing import Any

from flinktune.report.emit import How

RESULT = "flinktune.advise.file.RecommendResult"
SCHEMA_VERSION = 2


def text(result: Any, how: How) -> str:
    from flinktune.report.diff import unified_diff
    from flinktune.report.recommend import render_lint_errors_text, render_recommendation_text

    parts = [render_recommendation_text(rec, diff=False, color=how.color) for rec in result.recommendations]
    patch = unified_diff(result.original_text, result.new_text, result.path, color=how.color)
    if patch:
        parts.append("\n" + patch)
    parts.append(render_lint_errors_text(result.lint_errors, result.path))
    return "".join(parts)


def json(result: Any, how: How) -> str:
    from flinktune.report.recommend import render_recommendation_json

    return render_recommendation_json(list(result.recommendations), result.lint_errors)


def html(result: Any, how: How) -> str:
    from flinktune.report.html import render_recommend_html

    return render_recommend_html(list(result.recommendations), path=result.path,
                                 original_text=result.original_text, new_text=result.new_text,
                                 analysis=result.analysis, tool_version=how.tool_version,
                                 lint_errors=result.lint_errors)


FORMATS = {"text": text, "json": json, "html": html}
