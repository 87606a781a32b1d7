from __future__ import annotations

from flinktune.findings import Finding, Location, Severity
from flinktune.lint.selection import is_selected, select_findings


def test_select_and_ignore_by_prefix() -> None:
    assert is_selected("FTN001", (), ())
    assert is_selected("FTN001", ("FTN",), ())
    assert not is_selected("FTC001", ("FTN",), ())
    assert not is_selected("FTN001", ("FT",), ("FTN0",))
    assert is_selected("ftn001", ("FTN",), ())


def test_longest_override_wins() -> None:
    codes = ("FTN001", "FTN003", "FTC001")
    findings = [Finding(c, "n", Severity.WARNING, "m", Location("f", 1)) for c in codes]
    out = select_findings(findings, (), ("FTC",), (("FTN", Severity.INFO), ("FTN003", Severity.ERROR)))
    assert [(f.code, f.severity) for f in out] == [("FTN001", Severity.INFO), ("FTN003", Severity.ERROR)]
