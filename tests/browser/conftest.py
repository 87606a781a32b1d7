"""Make the DevTools client (chromium.py) importable (pytest runs with --import-mode=importlib)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    """The render times the browser tests measured (reported, not asserted: they depend on the
    machine; benchmarks/bench_html.py measures them side by side)."""
    from chromium import RENDER_TIMES

    if RENDER_TIMES:
        terminalreporter.write_sep(
            "-", "HTML reports in headless Chromium (navigation start to two frames after load)"
        )
        for name, (ms, size) in RENDER_TIMES.items():
            terminalreporter.write_line(f"  {name:24s} {ms:7.0f} ms  {size / 1024:7.0f} KiB")
