"""The range a ``collect --prometheus`` pulls: ``--since`` / ``--until`` / ``--last`` to epoch seconds."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from flinktune.errors import UsageError
from flinktune.units import parse_duration_s


def parse_instant(text: str, flag: str) -> float:
    """ISO 8601 (``2024-05-01T10:00:00Z``; no zone means UTC) or epoch seconds -> epoch seconds."""
    value = text.strip()
    if re.fullmatch(r"\d+(\.\d+)?", value):
        return float(value)
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"{flag} {text!r} is not a time: use ISO 8601 (2024-05-01T10:00:00Z) or epoch seconds"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def time_range(since: str | None, until: str | None, last: str | None, now_s: float) -> tuple[float, float]:
    """(start, end) in epoch seconds: ``--last`` before ``--until`` (default now), or ``--since``."""
    if last is not None and since is not None:
        raise UsageError("give --since or --last, not both")
    end = parse_instant(until, "--until") if until is not None else now_s
    if last is not None:
        return end - parse_duration_s(last, what="--last"), end
    if since is None:
        raise UsageError("--prometheus needs a time range: --last 2h, or --since (and --until)")
    return parse_instant(since, "--since"), end
