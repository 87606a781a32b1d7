"""Flink versions flinktune supports (``RELEASES``), parsed and ordered; what changed in each is
``flinktune.releases``."""

from __future__ import annotations

import re

from flinktune.errors import UsageError


class FlinkVersion:
    """A Flink release line, ``major.minor``: frozen, ordered, hashable (as a frozen, ordered
    dataclass of its two fields would be). A plain slotted class because the catalog compares and
    hashes versions on every key lookup, and a lint defines it at every start (issue 26)."""

    __slots__ = ("_key", "major", "minor")
    major: int
    minor: int

    def __init__(self, major: int, minor: int) -> None:
        object.__setattr__(self, "major", major)
        object.__setattr__(self, "minor", minor)
        object.__setattr__(self, "_key", (major, minor))

    def __setattr__(self, name: str, value: object) -> None:
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot assign to field '{name}'")

    def __delattr__(self, name: str) -> None:
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot delete field '{name}'")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not FlinkVersion:
            return NotImplemented
        return self._key == other._key  # type: ignore[attr-defined,no-any-return]

    def __hash__(self) -> int:
        return hash(self._key)

    def __lt__(self, other: FlinkVersion) -> bool:
        if other.__class__ is not FlinkVersion:
            return NotImplemented
        return self._key < other._key

    def __le__(self, other: FlinkVersion) -> bool:
        if other.__class__ is not FlinkVersion:
            return NotImplemented
        return self._key <= other._key

    def __gt__(self, other: FlinkVersion) -> bool:
        if other.__class__ is not FlinkVersion:
            return NotImplemented
        return self._key > other._key

    def __ge__(self, other: FlinkVersion) -> bool:
        if other.__class__ is not FlinkVersion:
            return NotImplemented
        return self._key >= other._key

    def __repr__(self) -> str:
        return f"FlinkVersion(major={self.major!r}, minor={self.minor!r})"

    def __reduce__(self) -> tuple[object, tuple[int, int]]:
        return (FlinkVersion, self._key)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


# The release lines flinktune knows, oldest first, each with its newest patch release (PyPI's
# apache-flink-libraries when the option catalog was generated; tools/catalog/generate.py reads this
# table). Adding a release is one entry here and its option catalog (flinktune/data); what a release
# changed that flinktune models is in flinktune/releases.py.
PATCH_RELEASES: tuple[tuple[str, str], ...] = (
    ("1.13", "1.13.6"), ("1.14", "1.14.6"), ("1.15", "1.15.4"), ("1.16", "1.16.3"), ("1.17", "1.17.2"),
    ("1.18", "1.18.1"), ("1.19", "1.19.3"), ("1.20", "1.20.5"), ("2.0", "2.0.2"), ("2.1", "2.1.3"),
    ("2.2", "2.2.1"), ("2.3", "2.3.0"),
)
RELEASES: tuple[str, ...] = tuple(line for line, _patch in PATCH_RELEASES)
SUPPORTED: tuple[FlinkVersion, ...] = tuple(
    FlinkVersion(int(major), int(minor)) for major, minor in (line.split(".") for line in RELEASES))
# Used when neither the file nor --flink-version says which Flink it targets: the newest 1.x,
# because most configs in the wild are flat flink-conf.yaml files for the 1.x line.
DEFAULT_VERSION = FlinkVersion(1, 20)

_VERSION_TEXT = re.compile(r"^\s*v?(\d+)[._](\d+)(?:[._]\d+)?(?:[-.].*)?\s*$", re.IGNORECASE)


# What a version source says when the release is older than the oldest catalog flinktune has and is
# judged as that one instead (an image such as flink:1.8.1): advice for it then says so.
OLDER_THAN_SUPPORTED = f"older than {SUPPORTED[0]} and judged as {SUPPORTED[0]}"


def parse_version(text: str) -> FlinkVersion:
    """Accept ``1.20``, ``1.20.1``, ``v1_20`` (the operator's enum), ``2.0-preview1``."""
    match = _VERSION_TEXT.match(str(text))
    if match is None:
        raise UsageError(f"Flink version '{text}' is not like 1.20 or 2.0")
    version = FlinkVersion(int(match.group(1)), int(match.group(2)))
    if version < SUPPORTED[0]:
        raise UsageError(f"Flink {version} is older than the oldest supported version {SUPPORTED[0]}")
    return version


def newest_known() -> FlinkVersion:
    return SUPPORTED[-1]


def newest_patches() -> dict[str, str]:
    """The newest patch release flinktune knows of each release line ("1.20" -> "1.20.5") and of each
    major version's newest line ("1" -> "1.20.5", "2" -> "2.3.0")."""
    out = dict(PATCH_RELEASES)
    for line, patch in PATCH_RELEASES:       # oldest first: a major's newest line is written last
        out[line.split(".")[0]] = patch
    return out
