"""Baseline files: findings accepted once, so that only new ones fail the build.

A finding's fingerprint hashes its code, its file (relative to the baseline file's folder, so the
baseline works from any working folder), its config key and its message with line references
removed. Line numbers are left out on purpose: adding a key elsewhere in the file must not turn
every old finding into a new one. Identical fingerprints are counted, so a second copy of a
problem is still new.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from flinktune.config.safe_load import load_json
from flinktune.errors import ConfigError
from flinktune.findings import Finding

BASELINE_FORMAT = "flinktune-baseline"
BASELINE_VERSION = 1
_LINE_REFERENCE = re.compile(r"\b(line|lines)\s+\d+(\s*(,|and|-)\s*\d+)*", re.IGNORECASE)


def _relative_file(file: str, base_dir: Path) -> str:
    absolute = os.path.abspath(file)
    try:
        rel = os.path.relpath(absolute, os.path.abspath(base_dir))
    except ValueError:  # another drive on Windows
        rel = absolute
    return Path(rel).as_posix()


def normalised_message(message: str) -> str:
    return _LINE_REFERENCE.sub(r"\1 N", " ".join(message.split()))


def fingerprint(finding: Finding, base_dir: Path) -> str:
    parts = (
        finding.code,
        _relative_file(finding.location.file, base_dir),
        finding.location.key or "",
        normalised_message(finding.message),
    )
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:24]


@dataclass(frozen=True)
class Baseline:
    path: Path
    counts: tuple[tuple[str, int], ...]

    def split(self, findings: tuple[Finding, ...] | list[Finding]) -> tuple[list[Finding], list[Finding]]:
        """(new findings, findings already in the baseline)."""
        remaining = Counter(dict(self.counts))
        base_dir = self.path.parent
        new: list[Finding] = []
        known: list[Finding] = []
        for finding in findings:
            fp = fingerprint(finding, base_dir)
            if remaining[fp] > 0:
                remaining[fp] -= 1
                known.append(finding)
            else:
                new.append(finding)
        return new, known


def load_baseline(path: Path) -> Baseline:
    if not path.is_file():
        raise ConfigError("baseline file not found (create it with --write-baseline)", file=str(path))
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError("baseline file is not UTF-8 text", file=str(path)) from None
    except OSError as error:
        raise ConfigError(f"cannot read baseline: {error.strerror or error}", file=str(path)) from None
    data = load_json(text, file=str(path), prefix="baseline is not valid JSON")
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT:
        raise ConfigError(f"not a flinktune baseline (expected \"format\": \"{BASELINE_FORMAT}\")",
                          file=str(path))
    entries = data.get("findings")
    if not isinstance(entries, list):
        raise ConfigError("baseline has no \"findings\" list", file=str(path))
    counts: Counter[str] = Counter()
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("fingerprint"), str):
            raise ConfigError(f"baseline entry {index} has no \"fingerprint\" string", file=str(path))
        counts[entry["fingerprint"]] += 1
    return Baseline(path, tuple(sorted(counts.items())))


def render_baseline(findings: tuple[Finding, ...] | list[Finding], path: Path) -> str:
    """The baseline file's text for ``findings`` (stable order, readable for code review)."""
    base_dir = path.parent
    entries = [
        {
            "fingerprint": fingerprint(f, base_dir),
            "code": f.code,
            "file": _relative_file(f.location.file, base_dir),
            "key": f.location.key,
            "message": f.message,
        }
        for f in findings
    ]
    entries.sort(key=lambda e: (e["file"], e["code"], e["key"] or "", e["fingerprint"]))
    doc = {"format": BASELINE_FORMAT, "version": BASELINE_VERSION, "findings": entries}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def write_baseline(findings: tuple[Finding, ...] | list[Finding], path: Path) -> int:
    """Write (atomically) the baseline for ``findings``; returns how many entries it holds."""
    from flinktune.config.writer import write_file_atomic

    # No backup: the baseline is flinktune's own output, normally kept under version control.
    write_file_atomic(str(path), render_baseline(findings, path).encode("utf-8"), backup_suffix=None)
    return len(findings)
