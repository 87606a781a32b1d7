"""select / ignore by code prefix and per-code severity overrides.

A finding is kept when ``select`` is empty or one of its prefixes matches the code, and no
``ignore`` prefix matches it. When several severity overrides match, the longest (most specific)
prefix wins, so ``{FTN: info, FTN003: error}`` does what it says.

A selector that matches no rule the run knows is a mistake to report, not an empty selection: a
typo in ``--select`` would otherwise turn every rule off and a CI check green.
"""

from __future__ import annotations

from flinktune.findings import Finding, Severity
from flinktune.record import replace


def _matches(code: str, prefix: str) -> bool:
    return code.upper().startswith(prefix.upper())


def is_selected(code: str, select: tuple[str, ...], ignore: tuple[str, ...]) -> bool:
    if select and not any(_matches(code, p) for p in select):
        return False
    return not any(_matches(code, p) for p in ignore)


def matches_no_rule(selectors: tuple[str, ...] | list[str], codes: frozenset[str]) -> list[str]:
    """The selectors (codes or prefixes) that match none of ``codes``, in order."""
    return [s for s in selectors if not any(_matches(code, s) for code in codes)]


def no_rule_hint(codes: frozenset[str]) -> str:
    """What to say after "matches no lint rule": what a code looks like, and where the codes are listed."""
    example = f"codes look like {min(codes)}; " if codes else ""
    return f"({example}`flinktune rules list` lists them)"


def override_severity(finding: Finding, overrides: tuple[tuple[str, Severity], ...]) -> Finding:
    best: tuple[int, Severity] | None = None
    for prefix, severity in overrides:
        if _matches(finding.code, prefix) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), severity)
    if best is None or best[1] == finding.severity:
        return finding
    return replace(finding, severity=best[1])


def select_findings(findings: list[Finding] | tuple[Finding, ...], select: tuple[str, ...],
                    ignore: tuple[str, ...], overrides: tuple[tuple[str, Severity], ...]) -> list[Finding]:
    return [override_severity(f, overrides) for f in findings if is_selected(f.code, select, ignore)]
