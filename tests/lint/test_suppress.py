from __future__ import annotations

from flinktune.findings import Finding, Location, Severity
from flinktune.lint.suppress import apply_suppressions, parse_directives


def _f(code: str, line: int | None) -> Finding:
    return Finding(code, "n", Severity.WARNING, f"{code} here", Location("f.yaml", line, "k"))


TEXT = """\
a.b: 1 # flinktune: disable=FTC001 reason="legacy cluster, removed in Q3"
c.d: 2  # flinktune: disable=FTC002, FTN reason="ok"
e.f: 3
# flinktune: disable-file=FTX009
# flinktune: flink-version=1.17
g.h: 4 # just a comment mentioning flinktune: nothing else
"""


def test_parse_directives() -> None:
    d = parse_directives(TEXT)
    assert [(s.line, s.codes, s.file_wide, s.reason) for s in d.suppressions] == [
        (1, ("FTC001",), False, "legacy cluster, removed in Q3"),
        (2, ("FTC002", "FTN"), False, "ok"),
        (4, ("FTX009",), True, None),
    ]
    assert d.flink_version == "1.17" and d.flink_version_line == 5


def test_suppression_on_the_line_and_file_wide() -> None:
    findings = [_f("FTC001", 1), _f("FTC001", 3), _f("FTN004", 2), _f("FTX009", 6), _f("FTX009", None)]
    out = apply_suppressions(findings, parse_directives(TEXT), "f.yaml")
    assert [(f.code, f.location.line) for f in out.kept] == [("FTC001", 3)]
    assert len(out.suppressed) == 4
    # FTC002 on line 2 silenced nothing: reported as FTL001 at that line
    assert [(u.code, u.location.line, u.severity) for u in out.unused] == [("FTL001", 2, Severity.WARNING)]
    assert "FTC002" in out.unused[0].message


def test_no_directives_means_nothing_changes() -> None:
    findings = [_f("FTC001", 1)]
    out = apply_suppressions(findings, parse_directives("a: 1\n"), "f.yaml")
    assert out.kept == tuple(findings) and out.suppressed == () and out.unused == ()
