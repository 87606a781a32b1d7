"""Find the deployment files beside the configuration files a lint run was given.

Cheap on purpose (it runs on every lint): for each folder argument the walk already sees every file;
for each file named on the command line, the file's folder and up to ``ANCESTORS`` folders above it are
listed (not recursed); YAML files are sniffed only where a deployment is likely: compose-named files
anywhere, other YAML in the named file's own folder. A folder above that directly holds a compose file,
a Dockerfile, a Helm chart or a ``.git`` folder is a project root: it is searched recursively (bounded),
which finds manifests, charts and Dockerfiles in sibling folders (``kubernetes/`` beside ``flink/``). Not
compose files: those count only in the named file's folder and the folders above it (docs/lint.md), so
an unrelated one elsewhere in the project is never read (nor fails the run when unreadable).
"""

from __future__ import annotations

import os

from flinktune.deployment.readers import compose_name, is_dockerfile_name, recognise

ANCESTORS = 3
MAX_FILES = 2000          # files looked at in one recursive project search
MAX_DEPTH = 5
_SNIFF = 4096
_SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", "site-packages", "target", "build", "dist"})


def head_of(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(_SNIFF).decode("utf-8", errors="replace")
    except OSError:
        return ""


def _listing(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return sorted(entries, key=lambda entry: entry.name)
    except OSError:
        return []


def search_tree(root: str, found: dict[str, str], budget: list[int], depth: int = 0) -> None:
    """Every deployment file under ``root`` (bounded by ``budget`` files and MAX_DEPTH)."""
    if depth > MAX_DEPTH:
        return
    for entry in _listing(root):
        if budget[0] <= 0:
            return
        if entry.is_dir(follow_symlinks=False):
            if not entry.name.startswith(".") and entry.name not in _SKIP_DIRS:
                search_tree(entry.path, found, budget, depth + 1)
            continue
        budget[0] -= 1
        name = entry.name
        if not (name.lower().endswith((".yaml", ".yml")) or is_dockerfile_name(name)):
            continue
        kind = recognise(entry.path, "" if is_dockerfile_name(name) else head_of(entry.path))
        if kind is not None:
            found.setdefault(entry.path, kind)


def _project_root(folder: str, listing: list[os.DirEntry[str]] | None = None) -> bool:
    for entry in _listing(folder) if listing is None else listing:
        name = entry.name
        if name == ".git" or name == "Chart.yaml" or is_dockerfile_name(name) or compose_name(name):
            return True
    return False


def beside(paths: list[str], folders: list[str], manifests: tuple[str, ...] = ()) -> dict[str, str]:
    """Deployment files (path -> reader) near the files named on the command line and above the folders
    given (the folders themselves are walked by the caller). Other YAML files of a named file's own folder
    are sniffed only for named Kubernetes manifests (``manifests``): the workloads that mount a ConfigMap
    sit beside it, while a plain configuration file is mounted by compose files and Dockerfiles."""
    found: dict[str, str] = {}
    named = {os.path.abspath(m) for m in manifests}
    starts: list[tuple[str, bool]] = [(os.path.dirname(os.path.abspath(p)), os.path.abspath(p) in named
                                       or os.sep + "templates" + os.sep in os.path.abspath(p)) for p in paths]
    starts += [(os.path.dirname(os.path.abspath(f.rstrip(os.sep) or f)), False) for f in folders]
    roots: set[str] = set()
    looked: set[tuple[str, bool]] = set()
    listings: dict[str, list[os.DirEntry[str]]] = {}
    for folder, own in dict.fromkeys(starts):     # the files of one folder share one walk up
        current = folder
        for level in range(ANCESTORS + 1):
            if current not in listings:
                listings[current] = _listing(current)
            sniff = own and level == 0
            if (current, sniff) not in looked:
                looked.add((current, sniff))
                for entry in listings[current]:
                    if not entry.is_file():
                        continue
                    name = entry.name
                    if is_dockerfile_name(name):
                        found.setdefault(entry.path, "dockerfile")
                    elif name.lower().endswith((".yaml", ".yml")) and (
                            compose_name(name) or name == "Chart.yaml" or sniff):
                        kind = recognise(entry.path, head_of(entry.path))
                        if kind is not None:
                            found.setdefault(entry.path, kind)
            if level > 0 and _project_root(current, listings[current]):
                roots.add(current)
            if os.path.isdir(os.path.join(current, ".git")):
                roots.add(current)
                break
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        if own and os.path.basename(folder) == "templates":
            roots.add(os.path.dirname(folder))
    budget = [MAX_FILES]
    project: dict[str, str] = {}
    for root in sorted(roots, key=len):
        search_tree(root, project, budget)
    for path, kind in project.items():
        # A compose file below a folder above runs something else (a sibling tool, an old setup):
        # only the ones on the way up, found above, are the named file's.
        if kind != "compose":
            found.setdefault(path, kind)
    return found
