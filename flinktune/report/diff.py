"""A unified diff of a config before and after edits (git-style ``a/`` ``b/`` labels)."""

from __future__ import annotations

import difflib


def unified_diff(before: str, after: str, path: str, *, context: int = 3, color: bool = False) -> str:
    """``diff -u`` of two texts; empty when they are equal. A missing final newline is marked as
    diff does, so the patch applies. ``color``: removed lines red, added lines green (a terminal)."""
    if before == after:
        return ""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    lines = []
    for line in difflib.unified_diff(old, new, f"a/{path.lstrip('/')}", f"b/{path.lstrip('/')}", n=context):
        if line.endswith("\n"):
            lines.append(line)
        else:
            lines.append(line + "\n\\ No newline at end of file\n")
    return "".join(_coloured(line) for line in lines) if color else "".join(lines)


def _coloured(line: str) -> str:
    from flinktune.findings import Severity
    from flinktune.report.text import added, in_colour

    first, newline, rest = line.partition("\n")          # rest: a "\ No newline at end of file" marker
    if first.startswith(("+++", "---")) or not first.startswith(("+", "-")):
        return line
    return (added(first) if first.startswith("+") else in_colour(Severity.ERROR, first)) + newline + rest
