"""Helpers the compose and Kubernetes readers share: what a container's command says about its role,
dynamic properties, memory limits, and which mounts put a configuration file into Flink's conf folder."""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from collections.abc import Callable

from flinktune.deployment.dockerfile import DockerImage, context_path
from flinktune.deployment.images import default_jdk, parse_image
from flinktune.deployment.model import (
    CONF_DIR,
    CONF_FILE_NAMES,
    FLINK_HOME,
    JOBMANAGER,
    TASKMANAGER,
    ConfigSource,
    Jar,
    Mount,
    Where,
)
from flinktune.errors import ConfigError

# The official entrypoint's commands (docker-entrypoint.sh: jobmanager | standalone-job | taskmanager |
# history-server), the scripts of Flink's bin/ folder, and the native Kubernetes entry scripts.
_JM_WORDS = ("jobmanager", "standalone-job", "kubernetes-jobmanager.sh", "jobmanager.sh", "standalone-job.sh",
             "start-cluster.sh")
_TM_WORDS = ("taskmanager", "kubernetes-taskmanager.sh", "taskmanager.sh")
_NAME_JM = re.compile(r"job[-_]?manager|flink[-_]?master|(?:^|[-_])jm(?:$|[-_])", re.IGNORECASE)
_NAME_TM = re.compile(r"task[-_]?manager|flink[-_]?worker|(?:^|[-_])tm(?:$|[-_])", re.IGNORECASE)
_DYNAMIC = re.compile(r"(?:^|\s)-D\s*([A-Za-z0-9_.\-]+)=(\"[^\"]*\"|'[^']*'|\S+)")


def words_of(command: tuple[str, ...]) -> list[str]:
    """The words of a command: a shell command line ('sh -c "..."') split once more."""
    out: list[str] = []
    for word in command:
        if " " in word.strip():
            try:
                out.extend(shlex.split(word))
            except ValueError:
                out.extend(word.split())
        else:
            out.append(word)
    return out


def role_of(command: tuple[str, ...], *names: str) -> str | None:
    """jobmanager | taskmanager from the command the container runs, else from its names."""
    words = [posixpath.basename(w) for w in words_of(command)]
    if words:
        if words[0] in ("jobmanager", "standalone-job"):
            return JOBMANAGER
        if words[0] == "taskmanager":
            return TASKMANAGER
        if words[0] in ("help", "history-server"):
            return None
    for word in words:
        if word in _JM_WORDS[2:]:
            return JOBMANAGER
        if word in _TM_WORDS[1:]:
            return TASKMANAGER
    for name in names:
        if not name:
            continue
        if _NAME_JM.search(name):
            return JOBMANAGER
        if _NAME_TM.search(name):
            return TASKMANAGER
    return None


def dynamic_properties(command: tuple[str, ...], where: Where) -> tuple[tuple[str, str, Where], ...]:
    """``-Dkey=value`` arguments (Flink's dynamic properties win over the configuration file)."""
    text = " ".join(command)
    found = []
    for match in _DYNAMIC.finditer(text):
        value = match.group(2).strip("\"'")
        found.append((match.group(1), value, where))
    return tuple(found)


# Docker's byte values (go-units RAMInBytes: b, k, m, g, t, p, binary, an optional trailing b) and
# Kubernetes quantities (apimachinery resource.Quantity: binary Ki..Ei, decimal n..E, or an exponent e3).
_DOCKER_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([bkmgtp]?)b?\s*$", re.IGNORECASE)
_QUANTITY = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?|\.[0-9]+)\s*"
                       r"(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|K|M|G|T|P|E|[eE][+-]?[0-9]+)?\s*$")
_QUANTITY_SCALE = {None: 1, "Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "Ti": 1024**4, "Pi": 1024**5,
                   "Ei": 1024**6,
                   "n": 1e-9, "u": 1e-6, "m": 0.001, "k": 1000, "K": 1000, "M": 1000**2, "G": 1000**3,
                   "T": 1000**4, "P": 1000**5, "E": 1000**6}


def docker_bytes(text: str | None) -> int | None:
    """A compose memory size (``512m``, ``1g``, ``1024M``: binary units, as Docker reads them)."""
    if text is None:
        return None
    match = _DOCKER_SIZE.match(str(text))
    if match is None:
        return None
    scale = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4,
             "p": 1024**5}[match.group(2).lower()]
    return int(float(match.group(1)) * scale)


def quantity_bytes(text: str | None) -> int | None:
    """A Kubernetes memory quantity (``1Gi``, ``1024M``, ``2G``)."""
    if text is None:
        return None
    match = _QUANTITY.match(str(text))
    if match is None:
        return None
    suffix = match.group(2)
    if suffix is not None and suffix[0] in "eE" and len(suffix) > 1:
        return int(float(match.group(1)) * 10 ** int(suffix[1:]))
    return int(float(match.group(1)) * _QUANTITY_SCALE[suffix])


def memory_limit(text: str | None, parse: Callable[[str | None], int | None], file: str, line: int,
                 what: str) -> int | None:
    """A container's memory limit in bytes; None when unset or templated (``${MEM}``, ``{{ .Values }}``:
    unknown until deployed). A limit that is set but not a size is refused with its file and line: the
    platform would refuse it too, and every memory finding would rest on a misread."""
    if text is None or "$" in text or "{{" in text:
        return None
    found = parse(text)
    if found is None:
        raise ConfigError(f"{what} '{text}' is not a memory size", file=file, line=line)
    return found


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def config_sources(mounts: tuple[Mount, ...], image: DockerImage | None, context_dir: str | None,
                   conf_dir: str = CONF_DIR) -> tuple[ConfigSource, ...]:
    """The configuration files mounts and the image's COPY put into Flink's conf folder. A later mount
    over the same path wins (as in the container)."""
    sources: list[ConfigSource] = []
    if image is not None and context_dir is not None:
        for copy in image.copies:
            if copy.dest == conf_dir:
                folder = context_path(context_dir, copy.source)
                for name in CONF_FILE_NAMES:
                    sources.append(ConfigSource(os.path.join(folder, name), None, name, f"{conf_dir}/{name}",
                                                "baked", True, copy.where))
            elif posixpath.dirname(copy.dest) == conf_dir:
                sources.append(ConfigSource(context_path(context_dir, copy.source), None,
                                            posixpath.basename(copy.dest), copy.dest, "baked", True,
                                            copy.where))
    for mount in mounts:
        if mount.path == conf_dir:
            if mount.kind == "bind":
                for name in CONF_FILE_NAMES:
                    sources.append(ConfigSource(os.path.join(mount.source, name), None, name,
                                                f"{conf_dir}/{name}", "bind-dir", not mount.read_only,
                                                mount.where))
            elif mount.kind == "configmap":
                keys = [key for key, path in mount.items if path in CONF_FILE_NAMES] if mount.items \
                    else list(CONF_FILE_NAMES)
                for key in keys:
                    path = dict(mount.items).get(key, key) if mount.items else key
                    sources.append(ConfigSource(None, mount.source, key, f"{conf_dir}/{path}", "configmap",
                                                False, mount.where))
            else:
                sources.append(ConfigSource(None, None, None, conf_dir, "unknown", not mount.read_only,
                                            mount.where))
        elif posixpath.dirname(mount.path) == conf_dir:
            name = posixpath.basename(mount.path)
            if mount.kind == "bind":
                sources.append(ConfigSource(mount.source, None, name, mount.path, "bind-file",
                                            not mount.read_only,
                                            mount.where))
            elif mount.kind == "configmap":
                sources.append(ConfigSource(None, mount.source, mount.sub_path or name, mount.path,
                                            "configmap",
                                            False, mount.where))
            elif mount.kind in ("emptyDir", "volume", "pvc"):
                sources.append(ConfigSource(None, None, name, mount.path, "unknown", not mount.read_only,
                                            mount.where))
    return tuple(sources)


def mount_jars(mounts: tuple[Mount, ...]) -> tuple[Jar, ...]:
    jars = []
    for mount in mounts:
        if mount.path.endswith(".jar") and _under(mount.path, FLINK_HOME):
            folder = posixpath.dirname(mount.path)[len(FLINK_HOME) + 1:]
            jars.append(Jar(posixpath.basename(mount.path), folder, mount.where))
    return tuple(jars)


def replicas_of(view: object) -> tuple[int, bool]:
    """(replicas, whether the files say how many) of a compose ``deploy.replicas``/``scale`` or a
    workload's ``spec.replicas`` node: one when absent, unknown when templated or not a number."""
    if view is None:
        return 1, True
    try:
        return int(getattr(view, "text", None) or "1"), True
    except ValueError:
        return 1, False


def script_entrypoint(entrypoint: tuple[str, ...] | None) -> tuple[str, ...]:
    """The entrypoint when it runs one of Flink's scripts itself (jobmanager.sh, taskmanager.sh,
    standalone-job.sh ...) rather than the official docker-entrypoint.sh; empty otherwise."""
    if not entrypoint or any("docker-entrypoint" in word for word in entrypoint):
        return ()
    names = {posixpath.basename(word) for word in words_of(entrypoint)}
    return tuple(entrypoint) if names & set(_JM_WORDS[2:] + _TM_WORDS[1:]) else ()


def effective_role(entrypoint: tuple[str, ...], arguments: tuple[str, ...], role: str | None
                   ) -> tuple[str | None, str | None]:
    """(the role the container runs, the role its arguments or names asked for when they differ): a
    Flink script as entrypoint decides the role, whatever the arguments appended to it say."""
    if not entrypoint:
        return role, None
    runs = role_of(entrypoint + arguments)
    if runs is None or runs == role:
        return role, None
    return runs, role


def image_facts(image: str | None, dockerfile: DockerImage | None) -> dict[str, object]:
    """Flink version, JDK, whether the official entrypoint runs, from the image or its Dockerfile."""
    ref = parse_image(image)
    base = parse_image(dockerfile.base) if dockerfile is not None else None
    facts: dict[str, object] = {"official": False, "image_official": False, "flink_version": None,
                                "flink_patch": None, "jdk": None, "image_moving": False, "version_source": ""}
    chosen = None
    if base is not None and base.official:
        chosen = base
        facts["version_source"] = f"FROM {base.reference} in {dockerfile.path}"  # type: ignore[union-attr]
    elif ref is not None and ref.official:
        chosen = ref
        facts["version_source"] = f"image {ref.reference}"
    if chosen is not None:
        facts.update(official=True, image_official=True, flink_version=chosen.version,
                     flink_patch=chosen.patch,
                     jdk=chosen.jdk, image_moving=chosen.moving)
        if chosen.moving and chosen.version is None:
            # latest / untagged: the newest release, a Flink 2.x image since 2.0.0 (release.metadata of
            # apache/flink-docker), judged as the newest version flinktune knows.
            from flinktune.versions import SUPPORTED

            newest = f"{SUPPORTED[-1].major}.{SUPPORTED[-1].minor}"
            facts.update(flink_version=newest, jdk=chosen.jdk or default_jdk(newest))
            facts["version_source"] = (f"{facts['version_source']} (the newest release, judged as {newest}, "
                                       "the newest flinktune knows)")
        if dockerfile is not None and dockerfile.entrypoint is not None and not any(
                "docker-entrypoint" in word for word in dockerfile.entrypoint):
            facts["official"] = False
    return facts
