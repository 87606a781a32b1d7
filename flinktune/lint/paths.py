"""Turn FILE / folder / glob arguments into the list of files to lint.

A file named on the command line is always linted. In a folder (searched recursively, hidden
folders and the usual build/virtualenv folders skipped) a file counts when it is:

* named ``flink-conf.yaml`` (or ends with ``flink-conf.yaml``/``.yml``);
* named ``config.yaml``/``.yml`` (or ``*config.yaml``, e.g. ``flink_config.yaml``) and mentions a
  ``jobmanager``/``taskmanager`` key, so that other tools' ``config.yaml`` files are left alone;
* any other ``*.yaml``/``*.yml`` whose content is a Flink config whatever its name
  (``flink-prod.yaml``): a flat Flink key at the start of a line (``taskmanager.memory.process.size:``,
  ``state.backend.type:``, ...) or a top-level ``jobmanager:``/``taskmanager:`` block, or that
  declares ``kind: FlinkDeployment`` or ``kind: FlinkSessionJob``, or a ``kind: ConfigMap``
  carrying a ``flink-conf.yaml`` or ``config.yaml`` entry.

A folder in which nothing counts is an input problem (exit 2), never "0 files checked" and a pass.
Globs (``conf/**/*.yaml``) are expanded like a shell would; every match counts as named.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from flinktune.globbing import GLOB_CHARS, symlink_loop
from flinktune.lint.model import InputProblem
from flinktune.record import Record, set_field

_SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", "site-packages", "target", "build", "dist"})
_YAML_SUFFIXES = (".yaml", ".yml")
_SNIFF_BYTES = 64 * 1024
_FLINK_KIND = re.compile(rb"^\s*kind:\s*['\"]?(FlinkDeployment|FlinkSessionJob)\b", re.MULTILINE)
_CONFIGMAP_KIND = re.compile(rb"^\s*kind:\s*['\"]?ConfigMap\b", re.MULTILINE)
_EMBEDDED_CONF = re.compile(rb"^\s+['\"]?(flink-conf\.yaml|config\.yaml)['\"]?\s*:", re.MULTILINE)
_FLINK_KEYS = re.compile(rb"^\s*(jobmanager|taskmanager)[.:]", re.MULTILINE)
# Content that makes any YAML file a Flink config: a flat key under one of Flink's option roots
# (flink-conf.yaml's format; Flink's docs, "Configuration"), or a top-level jobmanager/taskmanager
# block (config.yaml's nested format, Flink 1.19+). Column 0 only: a docker-compose file's
# indented `jobmanager:` service is not a Flink config.
_FLINK_CONTENT = re.compile(
    rb"^(?:(?:jobmanager|taskmanager|state|execution|parallelism|pipeline|restart-strategy"
    rb"|high-availability|rest|metrics|blob|heartbeat|cluster|env|classloader|kubernetes|table"
    rb"|web|io\.tmp)\.[A-Za-z0-9_.-]+\s*:|(?:jobmanager|taskmanager):\s*(?:#.*)?$)",
    re.MULTILINE,
)
# What a folder search looks for, for the message when a folder holds none.
LOOKED_FOR = (
    "no Flink config found (looked for *.yaml/*.yml files holding Flink options, e.g. flink-conf.yaml, "
    "config.yaml, kind: FlinkDeployment); name a file to lint it whatever it holds"
)


class Expanded(Record):
    """The files FILE... arguments stand for, and the arguments that stood for none. ``deployment``:
    (path, reader) of the deployment files (compose, manifests, Helm, Dockerfiles) found in the folders
    given or named explicitly; ``root`` the folder they are searched under."""

    __slots__ = _fields = ("files", "problems", "deployment", "named", "folders")
    files: tuple[str, ...]
    problems: tuple[InputProblem, ...]
    deployment: tuple[tuple[str, str], ...]
    named: tuple[str, ...]          # the config files named explicitly (their surroundings are searched)
    folders: tuple[str, ...]        # the folder arguments

    def __init__(self, files: tuple[str, ...], problems: tuple[InputProblem, ...],
                 deployment: tuple[tuple[str, str], ...] = (), named: tuple[str, ...] = (),
                 folders: tuple[str, ...] = ()) -> None:
        set_field(self, "files", files)
        set_field(self, "problems", problems)
        set_field(self, "deployment", deployment)
        set_field(self, "named", named)
        set_field(self, "folders", folders)


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(_SNIFF_BYTES)
    except OSError:
        return b""


def is_flink_config_candidate(path: Path, head: bytes | None = None) -> bool:
    """Whether a file found while walking a folder should be linted (see the module doc)."""
    name = path.name.lower()
    if not name.endswith(_YAML_SUFFIXES):
        return False
    stem = name.rsplit(".", 1)[0]
    if stem.endswith("flink-conf"):
        return True
    head = _head(path) if head is None else head
    if stem.endswith("config"):
        return bool(_FLINK_KEYS.search(head))
    if _FLINK_KIND.search(head) or _FLINK_CONTENT.search(head):
        return True
    return bool(_CONFIGMAP_KIND.search(head) and _EMBEDDED_CONF.search(head))


def _deployment_kind(path: Path, head: bytes | None) -> str | None:
    """The deployment reader of a file met while walking (docker-compose, manifest, Helm, Dockerfile)."""
    name = path.name.lower()
    if not (name.endswith(_YAML_SUFFIXES) or "dockerfile" in name):
        return None
    from flinktune.deployment.readers import recognise

    text = "" if head is None else head[:4096].decode("utf-8", errors="replace")
    return recognise(str(path), text)


def _walk(root: Path, follow_symlinks: bool, deployment: list[tuple[str, str]] | None = None) -> list[str]:
    found: list[str] = []
    visited: set[tuple[int, int]] = set()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=follow_symlinks):
        if follow_symlinks:
            # Each real folder once: two links to an ancestor would otherwise make an exponential walk.
            try:
                info = os.stat(dirpath)
            except OSError:
                dirnames[:] = []
                continue
            if (info.st_dev, info.st_ino) in visited:
                dirnames[:] = []
                continue
            visited.add((info.st_dev, info.st_ino))
        dirnames[:] = sorted(
            d for d in dirnames
            if not d.startswith(".") and d not in _SKIP_DIRS
            and (follow_symlinks or not os.path.islink(os.path.join(dirpath, d)))
        )
        for name in sorted(filenames):
            full = Path(dirpath, name)
            if not follow_symlinks and full.is_symlink():
                continue
            if not full.is_file():
                continue
            lower = name.lower()
            head = _head(full) if lower.endswith(_YAML_SUFFIXES) else None
            kind = _deployment_kind(full, head) if deployment is not None else None
            if kind is not None and deployment is not None:
                deployment.append((str(full), kind))
            if kind in ("compose", "dockerfile", "helm"):
                continue    # a deployment file, not a Flink config (manifests can be both)
            if is_flink_config_candidate(full, head):
                found.append(str(full))
    return found


def expand_paths(arguments: list[str] | tuple[str, ...], *, follow_symlinks: bool = False) -> Expanded:
    """Expand the command-line arguments; a missing file or an empty glob is an input problem."""
    files: list[str] = []
    problems: list[InputProblem] = []
    seen: set[str] = set()
    deployment: list[tuple[str, str]] = []
    named: list[str] = []
    folders: list[str] = []

    def add(name: str) -> None:
        key = os.path.normcase(os.path.abspath(name))
        if key not in seen:
            seen.add(key)
            files.append(name)

    for argument in arguments:
        path = Path(argument)
        if path.is_dir():
            before = len(deployment)
            found = _walk(path, follow_symlinks, deployment)
            folders.append(argument)
            if not found and len(deployment) == before:
                problems.append(InputProblem(argument, LOOKED_FOR))
            for name in found:
                add(name)
        elif path.exists() or path.is_symlink():
            # Named explicitly: always linted, whatever its name (the reader decides the format),
            # unless it is a deployment file (a compose file is never read as a Flink config).
            kind = _deployment_kind(path, _head(path)) if path.is_file() else None
            if kind is not None:
                deployment.append((argument, kind))
                named.append(argument)
            if kind not in ("compose", "dockerfile", "helm"):
                add(argument)
                named.append(argument)
        elif GLOB_CHARS.search(argument):
            import glob  # only for glob arguments

            loop = symlink_loop(argument) if "**" in argument else None
            if loop is not None:
                # glob's '**' follows symlinked folders and never ends in a loop (exponentially so).
                problems.append(InputProblem(argument, f"'**' would not end: {loop} is a symlink loop; "
                                                       "name the folder instead"))
                continue
            matches = sorted(glob.glob(argument, recursive=True))
            matched_files = []
            for match in matches:
                if Path(match).is_file():
                    kind = _deployment_kind(Path(match), _head(Path(match)))
                    if kind is not None:
                        deployment.append((match, kind))
                    if kind not in ("compose", "dockerfile", "helm"):
                        matched_files.append(match)
                        named.append(match)
            for match in matches:
                if Path(match).is_dir():
                    matched_files.extend(_walk(Path(match), follow_symlinks, deployment))
                    folders.append(match)
            if not matched_files and not deployment:
                problems.append(InputProblem(argument, "no file matches this pattern"))
            for name in matched_files:
                add(name)
        else:
            problems.append(InputProblem(argument, "no such file or folder"))
    unique = tuple(dict.fromkeys(deployment))
    return Expanded(tuple(files), tuple(problems), unique, tuple(dict.fromkeys(named)), tuple(folders))
