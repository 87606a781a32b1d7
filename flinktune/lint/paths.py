"""Turn FILE / folder / glob arguments into the list of files to lint.

A file named on the command line is always linted. In a folder (searched recursively, hidden
folders and the usual build/virtualenv folders skipped) a file counts when it is:

* named ``flink-conf.yaml`` (or ends with ``flink-conf.yaml``/``.yml``);
* named ``config.yaml``/``.yml`` (or ``*config.yaml``, e.g. ``flink_config.yaml``) and mentions a
  ``jobmanager``/``taskmanager`` key, so that other tools' ``config.yaml`` files are left alone;
* any other ``*.yaml``/``*.yml`` that declares ``kind: FlinkDeployment`` or
  ``kind: FlinkSessionJob``, or a ``kind: ConfigMap`` carrying a ``flink-conf.yaml`` or
  ``config.yaml`` entry.

Globs (``conf/**/*.yaml``) are expanded like a shell would; every match counts as named.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from flinktune.lint.model import InputProblem

_SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", "site-packages", "target", "build", "dist"})
_YAML_SUFFIXES = (".yaml", ".yml")
_SNIFF_BYTES = 64 * 1024
_GLOB_CHARS = re.compile(r"[*?\[]")
_FLINK_KIND = re.compile(rb"^\s*kind:\s*['\"]?(FlinkDeployment|FlinkSessionJob)\b", re.MULTILINE)
_CONFIGMAP_KIND = re.compile(rb"^\s*kind:\s*['\"]?ConfigMap\b", re.MULTILINE)
_EMBEDDED_CONF = re.compile(rb"^\s+['\"]?(flink-conf\.yaml|config\.yaml)['\"]?\s*:", re.MULTILINE)
_FLINK_KEYS = re.compile(rb"^\s*(jobmanager|taskmanager)[.:]", re.MULTILINE)


@dataclass(frozen=True)
class Expanded:
    """The files FILE... arguments stand for, and the arguments that stood for none."""

    files: tuple[str, ...]
    problems: tuple[InputProblem, ...]


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(_SNIFF_BYTES)
    except OSError:
        return b""


def is_flink_config_candidate(path: Path) -> bool:
    """Whether a file found while walking a folder should be linted (see the module doc)."""
    name = path.name.lower()
    if not name.endswith(_YAML_SUFFIXES):
        return False
    stem = name.rsplit(".", 1)[0]
    if stem.endswith("flink-conf"):
        return True
    head = _head(path)
    if stem.endswith("config"):
        return bool(_FLINK_KEYS.search(head))
    if _FLINK_KIND.search(head):
        return True
    return bool(_CONFIGMAP_KIND.search(head) and _EMBEDDED_CONF.search(head))


def _walk(root: Path, follow_symlinks: bool) -> list[str]:
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=follow_symlinks):
        dirnames[:] = sorted(
            d for d in dirnames
            if not d.startswith(".") and d not in _SKIP_DIRS
            and (follow_symlinks or not os.path.islink(os.path.join(dirpath, d)))
        )
        for name in sorted(filenames):
            full = Path(dirpath, name)
            if not follow_symlinks and full.is_symlink():
                continue
            if full.is_file() and is_flink_config_candidate(full):
                found.append(str(full))
    return found


def expand_paths(arguments: list[str] | tuple[str, ...], *, follow_symlinks: bool = False) -> Expanded:
    """Expand the command-line arguments; a missing file or an empty glob is an input problem."""
    files: list[str] = []
    problems: list[InputProblem] = []
    seen: set[str] = set()

    def add(name: str) -> None:
        key = os.path.normcase(os.path.abspath(name))
        if key not in seen:
            seen.add(key)
            files.append(name)

    for argument in arguments:
        path = Path(argument)
        if path.is_dir():
            for name in _walk(path, follow_symlinks):
                add(name)
        elif path.exists() or path.is_symlink():
            # Named explicitly: always linted, whatever its name (the reader decides the format).
            add(argument)
        elif _GLOB_CHARS.search(argument):
            import glob  # only for glob arguments

            matches = sorted(glob.glob(argument, recursive=True))
            matched_files = [m for m in matches if Path(m).is_file()]
            for match in matches:
                if Path(match).is_dir():
                    matched_files.extend(_walk(Path(match), follow_symlinks))
            if not matched_files:
                problems.append(InputProblem(argument, "no file matches this pattern"))
            for name in matched_files:
                add(name)
        else:
            problems.append(InputProblem(argument, "no such file or folder"))
    return Expanded(tuple(files), tuple(problems))
