"""The one "which line of this file sets this key" helper (profiles, project configs, YAML/TOML).

Config files themselves do not need it: their readers keep every entry's line.
"""

from __future__ import annotations

import re


def line_of_key(text: str, key: str) -> int | None:
    """The 1-based line of the first ``key:`` (YAML) or ``key =`` (TOML) at the start of a line,
    quoted or not; None when the text has no such line."""
    pattern = re.compile(rf"^[ \t]*['\"]?{re.escape(key)}['\"]?[ \t]*[:=]", re.MULTILINE)
    match = pattern.search(text)
    return None if match is None else text.count("\n", 0, match.start()) + 1
