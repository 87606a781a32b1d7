"""``flinktune lint``'s reports (a ``LintResult``): text, json, sarif, github annotations, junit."""

from __future__ import annotations

from typing import Any

from flinktune.report.emit import How

RESULT = "flinktune.lint.model.LintResult"
SCHEMA_VERSION = 2


def text(result: Any, how: How) -> str:
    from flinktune.report.text import render_text

    return render_text(result, color=how.color, verbose=how.verbose)


def json(result: Any, how: How) -> str:
    from flinktune.report.json_report import render_json

    return render_json(result, tool_version=how.tool_version)


def sarif(result: Any, how: How) -> str:
    from flinktune.report.sarif import render_sarif

    return render_sarif(result, tool_version=how.tool_version)


def github(result: Any, how: How) -> str:
    from flinktune.report.github import render_github

    return render_github(result)


def junit(result: Any, how: How) -> str:
    from flinktune.findings import Severity
    from flinktune.report.junit import render_junit

    return render_junit(result, fail_on=Severity(how.fail_on or "warning"))


FORMATS = {"text": text, "json": json, "sarif": sarif, "github": github, "junit": junit}
