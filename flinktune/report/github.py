"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request.

Format: ``::error file=F,line=L,title=T::message`` (docs.github.com, "Workflow commands for
GitHub Actions"); data is escaped %, CR, LF and property values also ':' and ','.
"""

from __future__ import annotations

from flinktune.findings import Severity
from flinktune.lint.model import LintResult
from flinktune.report.text import held_lines, visible

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    # CR/LF first (the runner's line breaks), then other invisible characters as \\u + 4 hex digits.
    escaped = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return visible(escaped)


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, message: str, file: str, line: int | None, title: str) -> str:
    props = [f"file={escape_property(file)}"]
    if line is not None:
        props.append(f"line={line}")
    props.append(f"title={escape_property(title)}")
    return f"::{kind} {','.join(props)}::{escape_data(message)}"


def render_github(result: LintResult) -> str:
    out = []
    for finding in result.findings:
        # An annotation names one place: the others the finding rests on go into its text.
        message = finding.message + "".join(f"\nsee also: {related}" for related in finding.related)
        out.append(_command(_COMMAND[finding.severity], message, finding.location.file,
                            finding.location.line, f"{finding.code} {finding.name}"))
    for problem in result.problems:
        out.append(_command("error", f"not linted: {problem.message}", problem.file, problem.line,
                            "flinktune: unreadable input"))
    # Held-back deprecations are no annotation (not a finding): a line of the log says what they are.
    out.extend(f"flinktune: {escape_data(line)}" for fv in result.versions for line in held_lines(fv))
    counts = result.counts()
    out.append(f"flinktune: {len(result.files)} files checked: {counts['error']} errors, "
               f"{counts['warning']} warnings, {counts['info']} info, {len(result.problems)} not linted")
    return "\n".join(out) + "\n"
