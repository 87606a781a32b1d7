from __future__ import annotations

import xml.etree.ElementTree as ET

from flinktune.findings import Finding, Location, Severity
from flinktune.lint.model import LintResult
from flinktune.report.junit import render_junit


def test_junit_structure(sample_result: LintResult) -> None:
    root = ET.fromstring(render_junit(sample_result, fail_on=Severity.WARNING))
    assert root.tag == "testsuites"
    # 2 findings in conf/flink-conf.yaml, 1 in the manifest, 1 clean file, 1 unreadable input
    assert root.get("tests") == "5" and root.get("failures") == "2" and root.get("errors") == "1"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    conf = suites["conf/flink-conf.yaml"]
    failures = conf.findall("testcase/failure")
    assert [f.get("type") for f in failures] == ["FTC001"]           # the info finding is below --fail-on
    assert conf.find("testcase/system-out").text.startswith("info: odd")
    assert suites["clean.yaml"].find("testcase").get("name") == "clean.yaml: no findings"
    assert suites["unreadable inputs"].find("testcase/error").get("message").startswith("invalid YAML")


def test_junit_fail_on_info_counts_everything(sample_result: LintResult) -> None:
    root = ET.fromstring(render_junit(sample_result, fail_on=Severity.INFO))
    assert root.get("failures") == "3"


def test_junit_survives_control_characters() -> None:
    bad = Finding("FTX001", "x", Severity.ERROR, "bell \x07 and nul \x00", Location("f\x01.yaml", 1, None))
    text = render_junit(LintResult(findings=(bad,), files=("f\x01.yaml",)))
    root = ET.fromstring(text)
    assert root.find("testsuite/testcase/failure").get("message") == "bell \ufffd and nul \ufffd"
