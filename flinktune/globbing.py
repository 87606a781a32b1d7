"""Glob patterns over folders that may hold symlinks (shared by lint's and analyze's inputs)."""

from __future__ import annotations

import os
import re
from pathlib import Path

GLOB_CHARS = re.compile(r"[*?\[]")


def symlink_loop(pattern: str) -> str | None:
    """A symlink under the pattern's fixed prefix that points at one of its own ancestors.

    A ``**`` glob over such a loop never ends (or ends only at the OS's path limit), so the
    callers refuse the pattern in one line instead.
    """
    parts = Path(pattern).parts
    fixed = list(parts[:next((i for i, part in enumerate(parts) if GLOB_CHARS.search(part)), len(parts))])
    visited: set[str] = set()
    for dirpath, dirnames, _files in os.walk(Path(*fixed) if fixed else Path("."), followlinks=True):
        real = os.path.realpath(dirpath)
        if real in visited:      # an alias of a folder already searched: nothing new below it
            dirnames[:] = []
            continue
        visited.add(real)
        for name in dirnames:
            link = os.path.join(dirpath, name)
            if os.path.islink(link):
                target = os.path.realpath(link)
                if real == target or real.startswith(target.rstrip(os.sep) + os.sep):
                    return link
    return None
