"""The deployment file formats lint reads, in one table, and the function that reads them all.

A format is one entry of ``READERS``: its name, how a file is recognised (name and the first bytes), and
the module that reads it, which has ``read(path, text, context) -> Found``. The modules load only when a
file of their format is present. A new format is one module and one entry here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from flinktune.deployment.dockerfile import DockerImage
    from flinktune.deployment.model import Deployment

_COMPOSE_NAME = re.compile(r"^(?:docker-)?compose(?:[._-][\w.-]*)?\.ya?ml$|^.*[._-]compose\.ya?ml$",
                           re.IGNORECASE)
_VALUES_NAME = re.compile(r"^values(?:[._-][\w.-]*)?\.ya?ml$|^.*[._-]values\.ya?ml$|^values-[\w.-]+\.ya?ml$",
                          re.IGNORECASE)


def _head_lines(head: str) -> list[str]:
    return head.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _is_compose(name: str, head: str) -> bool:
    """A top-level ``services:`` mapping and no Kubernetes ``apiVersion``: the compose file format."""
    lines = _head_lines(head)
    return any(line.startswith("services:") for line in lines) and not any(
        line.startswith("apiVersion:") for line in lines)


def compose_name(name: str) -> bool:
    return bool(_COMPOSE_NAME.match(name))


def _is_manifest(name: str, head: str) -> bool:
    lines = _head_lines(head)
    return any(line.startswith("apiVersion:") for line in lines) and any(
        line.lstrip("- ").startswith("kind:") for line in lines)


def is_dockerfile_name(name: str) -> bool:
    lower = name.lower()
    return lower == "dockerfile" or lower.startswith("dockerfile.") or lower.endswith((".dockerfile",
                                                                                          "-dockerfile"))


def _is_dockerfile(name: str, head: str) -> bool:
    return is_dockerfile_name(name)


def _is_helm(name: str, head: str) -> bool:
    return name == "Chart.yaml" or bool(_VALUES_NAME.match(name))


class Reader(NamedTuple):
    """A deployment file format: its name, how a file is recognised, and the module that reads it."""

    name: str
    recognises: Callable[[str, str], bool]     # (file name, first bytes as text) -> bool
    module: str                                # has read(path, text, context) -> Found
    stage: int = 1                             # stage 0 is read first: the other formats build on it


class ReadContext:
    """What the readers of one run share: the run's root (bounds where a Dockerfile beside a manifest is
    looked for) and the Dockerfiles read so far (path -> image, None when unreadable), filled by the
    Dockerfile reader and by compose ``build:`` entries."""

    root: str | None
    images: dict[str, DockerImage | None]

    def __init__(self, root: str | None, images: dict[str, DockerImage | None] | None = None) -> None:
        if images is None:
            images = {}
        self.root = root
        self.images = images


# Order matters for recognising: a file is read by the first reader that recognises it.
READERS: tuple[Reader, ...] = (
    Reader("dockerfile", _is_dockerfile, "flinktune.deployment.dockerfile", stage=0),
    Reader("helm", _is_helm, "flinktune.deployment.helm"),
    Reader("compose", _is_compose, "flinktune.deployment.compose"),
    Reader("kubernetes", _is_manifest, "flinktune.deployment.kubernetes"),
)


def recognise(path: str, head: str) -> str | None:
    """The reader of the deployment file at ``path`` (its first bytes ``head``), or None."""
    name = os.path.basename(path)
    lower = name.lower()
    if not (lower.endswith((".yaml", ".yml")) or _is_dockerfile(name, head)):
        return None
    if "/templates/" in path.replace(os.sep, "/") and "{{" in head:
        return "helm"
    for reader in READERS:
        if reader.recognises(name, head):
            return reader.name
    return None


def read_deployment(files: Iterable[tuple[str, str]], root: str | None = None) -> Deployment:
    """Read the deployment files ``(path, reader name)``; ``root`` bounds where a Dockerfile is looked for
    beside a manifest. Unreadable files are listed in ``Deployment.skipped``, never raised."""
    from flinktune.deployment.assemble import assemble

    return assemble(list(files), root)
