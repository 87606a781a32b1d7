from __future__ import annotations

from flinktune.findings import Severity
from flinktune.lint.model import LintResult
from flinktune.report.emit import How, formats, render, resolve_format
from flinktune.report.text import render_text


def test_text_lines_and_summary(sample_result: LintResult) -> None:
    out = render_text(sample_result)
    lines = out.splitlines()
    assert lines[0] == "conf/flink-conf.yaml:9: fixed FTC009: deleted taskmanager.network.numberOfBuffers"
    assert lines[1] == ("conf/flink-conf.yaml:3: warning FTC001 [deprecated-key] "
                        "taskmanager.network.memory.min is deprecated; use taskmanager.memory.network.min")
    assert lines[2] == ("    fix: rename taskmanager.network.memory.min to taskmanager.memory.network.min "
                        "(fixable with --fix)")
    assert "k8s/deploy ment.yaml:12: error FTN002 [network-min-above-max]" in out
    assert "conf/flink-conf.yaml: info FTX003 [note]" in out
    assert lines[-1] == ("3 files checked: 1 error, 1 warning, 1 info (1 input not linted; "
                         "2 suppressed inline; 1 in the baseline; 1 fix applied).")
    assert "\x1b[" not in out


def test_text_colour_and_verbose(sample_result: LintResult) -> None:
    out = render_text(sample_result, color=True, verbose=True)
    assert "\x1b[31merror\x1b[0m" in out
    assert "    why: Deprecated keys are removed in later versions." in out
    assert "    see: https://nightlies.apache.org/" in out


def test_text_clean(empty_result: LintResult) -> None:
    assert render_text(empty_result) == "1 file checked: 0 errors, 0 warnings, 0 info.\n"


def test_auto_format_picks_github_under_actions() -> None:
    assert resolve_format("lint", "auto", {"GITHUB_ACTIONS": "true"}) == "github"
    assert resolve_format("lint", "auto", {}) == "text"
    assert resolve_format("lint", "SARIF", {"GITHUB_ACTIONS": "true"}) == "sarif"


def test_unknown_format_is_a_usage_error() -> None:
    import pytest

    from flinktune.errors import UsageError

    with pytest.raises(UsageError, match="--format must be auto, text, json, sarif, github or junit, not"):
        resolve_format("lint", "xml", {})


def test_render_dispatches(sample_result: LintResult) -> None:
    assert formats("lint") == ("auto", "text", "json", "sarif", "github", "junit")
    for name in formats("lint")[1:]:
        assert render("lint", sample_result, name, How(fail_on="warning")).strip()


def test_invisible_characters_are_escaped() -> None:
    from flinktune.findings import Finding, Location
    from flinktune.report.text import visible

    assert visible("t\u00e4sk \u2603 \U0001f600") == "t\u00e4sk \u2603 \U0001f600"     # printable: unchanged
    assert visible("a\u202eb\u200bc\td\x07") == "a\\u202eb\\u200bc\\td\\u0007"
    finding = Finding("FTC025", "odd-key", Severity.WARNING, "key 'x\u202ey'",
                      Location("f\u2028.yaml", 1, "x"))
    out = render_text(LintResult(findings=(finding,), files=("f\u2028.yaml",)))
    assert out.splitlines()[0] == "f\\u2028.yaml:1: warning FTC025 [odd-key] key 'x\\u202ey'"
