"""Any message or path text, however odd, gives well-formed output in every format."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st

from flinktune.findings import Finding, Location, Severity
from flinktune.lint.model import InputProblem, LintResult
from flinktune.report.github import render_github
from flinktune.report.json_report import render_json
from flinktune.report.junit import render_junit
from flinktune.report.sarif import render_sarif

texts = st.text(min_size=1, max_size=40)


def _result(message: str, file: str, key: str) -> LintResult:
    finding = Finding("FTX001", "odd", Severity.ERROR, message, Location(file, 3, key))
    return LintResult(findings=(finding,), problems=(InputProblem(file, message, 2),), files=(file,))


@settings(max_examples=150, deadline=None)
@given(message=texts, file=texts, key=texts)
def test_every_format_stays_well_formed(message: str, file: str, key: str) -> None:
    result = _result(message, file, key)
    out = render_github(result)
    # One workflow command per finding/problem plus the summary: CR and LF (the only line breaks the
    # Actions runner reads) never leak out of a command.
    assert "\r" not in out
    lines = out.rstrip("\n").split("\n")
    assert len(lines) == 3 and lines[0].startswith("::error file=") and lines[1].startswith("::error file=")
    assert json.loads(render_json(result))["findings"][0]["message"] == message
    sarif = json.loads(render_sarif(result))
    assert sarif["runs"][0]["results"][0]["message"]["text"] == message
    root = ET.fromstring(render_junit(result))
    assert root.get("failures") == "1" and root.get("errors") == "1"
