"""JUnit XML, for CI systems that show test reports (GitLab, Jenkins, Azure).

One test suite per linted file and one test case per finding; a finding at or above
``--fail-on`` is a <failure>, one below it passes and carries its text in <system-out>.
A clean file is one passing test case; an input that could not be read is an <error>.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from flinktune.findings import Severity
from flinktune.lint.model import LintResult


def _xml_safe(text: str) -> str:
    # XML 1.0 forbids most control characters; a config with odd bytes must not break the report.
    return "".join(ch if ch in "\t\n\r" or ord(ch) >= 0x20 else "\ufffd" for ch in text)


def render_junit(result: LintResult, *, fail_on: Severity = Severity.WARNING) -> str:
    root = ET.Element("testsuites", name="flinktune lint")
    by_file: dict[str, list] = {f: [] for f in result.files}
    for finding in result.findings:
        by_file.setdefault(finding.location.file, []).append(finding)
    total = failures = errors = 0
    for file, findings in by_file.items():
        suite = ET.SubElement(root, "testsuite", name=_xml_safe(file))
        suite_failures = 0
        if not findings:
            ET.SubElement(suite, "testcase", classname="flinktune.lint",
                          name=_xml_safe(f"{file}: no findings"))
        for finding in findings:
            case = ET.SubElement(
                suite, "testcase", classname=f"flinktune.{finding.code}",
                name=_xml_safe(f"{finding.location}: {finding.code} {finding.name}"),
            )
            text = _xml_safe(f"{finding.severity.value}: {finding.message}"
                             + (f"\nwhy: {finding.why}" if finding.why else ""))
            if finding.severity.at_least(fail_on):
                failure = ET.SubElement(case, "failure", type=finding.code,
                                        message=_xml_safe(finding.message))
                failure.text = text
                suite_failures += 1
            else:
                ET.SubElement(case, "system-out").text = text
        cases = max(1, len(findings))
        suite.set("tests", str(cases))
        suite.set("failures", str(suite_failures))
        suite.set("errors", "0")
        total += cases
        failures += suite_failures
    if result.problems:
        suite = ET.SubElement(root, "testsuite", name="unreadable inputs")
        for problem in result.problems:
            case = ET.SubElement(suite, "testcase", classname="flinktune.input", name=_xml_safe(problem.file))
            error = ET.SubElement(case, "error", type="InputProblem", message=_xml_safe(problem.message))
            error.text = _xml_safe(problem.one_line())
        suite.set("tests", str(len(result.problems)))
        suite.set("failures", "0")
        suite.set("errors", str(len(result.problems)))
        total += len(result.problems)
        errors += len(result.problems)
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", str(errors))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
