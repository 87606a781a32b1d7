"""Renderers: every output format is a function ``LintResult -> str`` (no typer, no printing)."""

from __future__ import annotations

from collections.abc import Mapping

from flinktune.errors import UsageError
from flinktune.findings import Severity
from flinktune.lint.model import LintResult

FORMATS: tuple[str, ...] = ("auto", "text", "json", "sarif", "github", "junit")


def resolve_format(name: str, environ: Mapping[str, str]) -> str:
    """``auto`` is ``github`` under GitHub Actions (GITHUB_ACTIONS=true), else ``text``."""
    name = name.lower()
    if name not in FORMATS:
        raise UsageError(f"unknown format '{name}' (choose from {', '.join(FORMATS)})")
    if name == "auto":
        return "github" if environ.get("GITHUB_ACTIONS", "").lower() == "true" else "text"
    return name


def render(name: str, result: LintResult, *, fail_on: Severity = Severity.WARNING, color: bool = False,
           verbose: bool = False, tool_version: str = "") -> str:
    """Render ``result`` in format ``name`` (already resolved, not ``auto``)."""
    if name == "text":
        from flinktune.report.text import render_text

        return render_text(result, color=color, verbose=verbose)
    if name == "json":
        from flinktune.report.json_report import render_json

        return render_json(result, tool_version=tool_version)
    if name == "sarif":
        from flinktune.report.sarif import render_sarif

        return render_sarif(result, tool_version=tool_version)
    if name == "github":
        from flinktune.report.github import render_github

        return render_github(result)
    if name == "junit":
        from flinktune.report.junit import render_junit

        return render_junit(result, fail_on=fail_on)
    raise UsageError(f"unknown format '{name}'")
