"""A value and where it came from: the report can then say which numbers are facts and which are
assumptions, and a finding can cite the file and line it used."""

from __future__ import annotations

from typing import Generic, TypeVar

from flinktune.record import Record, store

T = TypeVar("T")

# Where a value can come from, strongest first (not every value has every kind).
SOURCES = ("flag", "profile", "project", "comment", "config", "spec", "deployment", "metrics", "plan",
           "inferred", "derived", "default")


class Sourced(Record, Generic[T]):
    """``value`` and its origin: ``source`` is one of SOURCES; ``file``/``line`` point at the text
    when there is one; ``detail`` names the key, flag or field (``spec.job.parallelism``)."""

    __slots__ = _fields = ("value", "source", "file", "line", "detail")
    value: T
    source: str
    file: str | None
    line: int | None
    detail: str

    def __init__(self, value: T, source: str, file: str | None = None, line: int | None = None,
                 detail: str = "") -> None:
        store(self, (value, source, file, line, detail))

    def describe(self) -> str:
        """``flag --rtt``, ``profile.yaml:3``, ``conf.yaml:12 (taskmanager.heap.size)``, ``default``."""
        where = self.file or ""
        if where and self.line is not None:
            where = f"{where}:{self.line}"
        parts = [p for p in (where or self.source, f"({self.detail})" if self.detail else "")
                 if p]
        if self.source == "flag" and self.detail:
            return f"flag {self.detail}"
        return " ".join(parts)

    @property
    def stated(self) -> bool:
        """Said by the user or measured (not inferred, derived or defaulted)."""
        return self.source not in ("inferred", "derived", "default")
