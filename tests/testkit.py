"""Helpers shared by tests in several folders (importable through tests/conftest.py)."""

from __future__ import annotations

import difflib
from typing import AnyStr

# DESIGN.md "Metrics dump": the canonical long-format columns, in order. Written out here rather
# than taken from flinktune.collect.writer so that the tests check the writer against the design.
DUMP_COLUMNS = [
    "ts",
    "job_id",
    "job_name",
    "vertex_id",
    "task_name",
    "subtask_index",
    "tm_id",
    "host",
    "metric",
    "value",
]


def changed_lines(before: AnyStr, after: AnyStr) -> tuple[list[AnyStr], list[AnyStr]]:
    """Original lines removed or replaced, and lines added (with endings, byte-exact)."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    removed: list[AnyStr] = []
    added: list[AnyStr] = []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op != "equal":
            removed += a[a0:a1]
            added += b[b0:b1]
    return removed, added


def default_sigint() -> None:
    """``preexec_fn`` for a child that a test interrupts with SIGINT: start it with SIGINT at its
    default, as a terminal would. A suite started in the background (``cmd &`` in a script) passes
    SIGINT on ignored, and flinktune, like any well-behaved tool, then keeps ignoring it."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
