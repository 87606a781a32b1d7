"""Reading the first line of a local text dump, gzipped or not (shared by the text readers)."""

from __future__ import annotations

import gzip

from flinktune.errors import MetricsError


def open_text(path: str):  # type: ignore[no-untyped-def]
    return gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz") else open(path, encoding="utf-8")


def first_line(path: str) -> str:
    try:
        with open_text(path) as fh:
            for line in fh:
                if line.strip():
                    return line.rstrip("\n")
    except (OSError, UnicodeDecodeError, EOFError) as error:
        raise MetricsError(f"cannot read: {error}", file=path) from None
    raise MetricsError("file is empty", file=path)

