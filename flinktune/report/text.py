"""Plain text for people: one line per finding, like compilers and ruff print them."""

from __future__ import annotations

import unicodedata

from flinktune.change import Applicability
from flinktune.findings import Finding, Severity
from flinktune.lint.model import FileVersion, LintResult

# Control, format (bidi overrides, zero-width) and line/paragraph separators: shown escaped, so a
# hostile or broken key cannot reorder or hide text in a terminal or a CI log ("trojan source").
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def visible(text: str) -> str:
    """``text`` with invisible and control characters as ``\\u`` + four hex digit escapes (tab as ``\\t``)."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if unicodedata.category(ch) in _INVISIBLE_CATEGORIES:
            if ch == "\t":
                out.append("\\t")
            else:
                out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return "".join(out)


_COLOURS = {Severity.ERROR: "\x1b[31m", Severity.WARNING: "\x1b[33m", Severity.INFO: "\x1b[36m"}
_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"
_GREEN = "\x1b[32m"


def in_colour(severity: Severity, text: str) -> str:
    """``text`` in the colour of ``severity`` (red errors, yellow warnings, cyan info), for every text
    report that shows severities."""
    return f"{_COLOURS[severity]}{text}{_RESET}"


def bold(text: str) -> str:
    return f"{_BOLD}{text}{_RESET}"


def added(text: str) -> str:
    return f"{_GREEN}{text}{_RESET}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _finding_lines(finding: Finding, result: LintResult, color: bool, verbose: bool) -> list[str]:
    severity = finding.severity.value
    if color:
        severity = in_colour(finding.severity, severity)
        code = bold(finding.code)
    else:
        code = finding.code
    where, message = visible(str(finding.location)), visible(finding.message)
    lines = [f"{where}: {severity} {code} [{finding.name}] {message}"]
    for related in finding.related:
        text = f"    see also: {visible(str(related))}"
        lines.append(f"{_DIM}{text}{_RESET}" if color else text)
    if finding.fix is not None:
        hint = " (fixable with --fix)" if finding.fix.applicability is Applicability.SAFE else ""
        text = f"    fix: {visible(finding.fix.describe())}{hint}"
        lines.append(f"{_DIM}{text}{_RESET}" if color else text)
    if verbose and finding.why:
        lines.append(f"    why: {visible(' '.join(finding.why.split()))}")
    if verbose:
        lines.extend(f"    see: {ref}" for ref in finding.references)
    return lines


def held_lines(fv: FileVersion) -> list[str]:
    """One line per release for the deprecations held back at a version nobody named
    (runner._held_deprecations)."""
    by_release: dict[object, list[str]] = {}
    for line, key, new_key, since in fv.held:
        where = f" (line {line})" if line is not None else ""
        by_release.setdefault(since, []).append(f"{key}{where} -> {new_key}" if new_key else f"{key}{where}")
    name = f" ({fv.document})" if fv.document else ""
    checked = (f"checked against Flink {fv.version}, inferred: {fv.detail}" if fv.source == "inferred"
               else f"checked against Flink {fv.version}, the default")
    out = []
    for since, keys in by_release.items():
        many = len(keys) > 1
        hold = "they hold" if many else "it holds"
        out.append(f"{fv.file}{name}: not reported: {len(keys)} key{'s' if many else ''} deprecated in Flink "
                   f"{since} ({', '.join(keys)}): {hold} only from Flink {since} on, and nothing names this "
                   f"file's version ({checked}); state it with "
                   "`# flinktune: flink-version=` or --flink-version to have "
                   f"{'them' if many else 'it'} reported.")
    return out


def render_text(result: LintResult, *, color: bool = False, verbose: bool = False) -> str:
    out: list[str] = []
    if verbose:
        for fv in result.versions:
            name = f" ({fv.document})" if fv.document else ""
            why = f"{fv.source}: {fv.detail}" if fv.detail else fv.source
            out.append(visible(f"{fv.file}{name}: checked against Flink {fv.version} ({why})"))
    for fix in result.fixes:
        where = f"{fix.file}:{fix.line}" if fix.line is not None else fix.file
        out.append(visible(f"{where}: fixed {fix.proposed_by}: {fix.describe_done()}"))
    for finding in result.findings:
        out.extend(_finding_lines(finding, result, color, verbose))
    out.extend(visible(line) for fv in result.versions for line in held_lines(fv))
    # Inputs that could not be read are not repeated here: the CLI prints one line each on stderr.
    counts = result.counts()
    summary = (f"{_plural(len(result.files), 'file')} checked: {_plural(counts['error'], 'error')}, "
               f"{_plural(counts['warning'], 'warning')}, {counts['info']} info")
    extras = []
    if result.problems:
        extras.append(f"{_plural(len(result.problems), 'input')} not linted")
    if result.suppressed:
        extras.append(f"{result.suppressed} suppressed inline")
    if result.baselined:
        extras.append(f"{result.baselined} in the baseline")
    if result.fixes:
        extras.append(f"{_plural(len(result.fixes), 'fix')} applied".replace("fixs", "fixes"))
    if extras:
        summary += " (" + "; ".join(extras) + ")"
    out.append(summary + ".")
    return "\n".join(out) + "\n"
