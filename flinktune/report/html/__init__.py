"""Self-contained HTML reports for ``analyze`` and ``recommend`` (``--format html``).

One file, nothing fetched when it opens (a Content-Security-Policy forbids it): the styles and the
small hover script are inlined, charts are SVG drawn from the numbers here, heat maps are PNG
data URIs. Built from Jinja2 templates (package data in ``templates/``); jinja2 comes with the
``html`` extra, so nothing on lint's path imports this package.
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from flinktune.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Sequence

    import jinja2

    from flinktune.advise.engine import Recommendation
    from flinktune.analysis.job import AnalysisResult
    from flinktune.compare.value import Comparison
    from flinktune.findings import Finding


def _px(value: float) -> str:
    """SVG coordinates with one decimal and no trailing zeros (smaller files)."""
    text = f"{float(value):.1f}"
    return text[:-2] if text.endswith(".0") else text


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    try:
        import jinja2
    except ImportError:
        raise UsageError("--format html needs the 'html' extra: pip install 'flinktune[html]'") from None
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("flinktune.report.html", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["px"] = _px
    return env


def _asset(name: str) -> str:
    return resources.files("flinktune.report.html").joinpath("templates", name).read_text(encoding="utf-8")


def _page(template: str, **values: Any) -> str:
    env = environment()
    return env.get_template(template).render(
        css=_asset("style.css"),
        js=_asset("report.js"),
        generated=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        **values,
    )


def render_analysis_html(result: AnalysisResult, tool_version: str = "") -> str:
    from flinktune.report.html.analysis_view import analysis_view

    view = analysis_view(result, tool_version)
    title = ", ".join(j["title"] for j in view["jobs"]) or "no job"
    return _page("analysis.html.j2", a=view, title=title, version=tool_version)


def render_recommend_html(
    recs: list[Recommendation],
    *,
    path: str,
    original_text: str,
    new_text: str,
    analysis: AnalysisResult | None = None,
    tool_version: str = "",
    lint_errors: Sequence[Finding] = (),
) -> str:
    from flinktune.report.html.analysis_view import analysis_view
    from flinktune.report.html.recommend_view import recommend_view

    view = recommend_view(recs, path=path, original_text=original_text, new_text=new_text,
                          lint_errors=lint_errors)
    a = analysis_view(analysis, tool_version) if analysis is not None else None
    return _page("recommend.html.j2", r=view, a=a, title=path, version=tool_version)


def render_compare_html(comparison: Comparison, tool_version: str = "") -> str:
    from flinktune.report.html.compare_view import compare_view

    return _page("compare.html.j2", c=compare_view(comparison, tool_version), version=tool_version)
