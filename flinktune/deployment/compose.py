"""Read a docker-compose file: its Flink services as processes, and their ``FLINK_PROPERTIES`` as
configuration documents.

Compose semantics used (docs.docker.com/reference/compose-file/services): ``volumes`` short
(``src:dst[:ro]``) and long syntax; a bind source is relative to the compose file's folder; a named
volume is one storage shared by every service that mounts it; ``tmpfs`` and anonymous volumes are
private; ``build`` (a folder, or ``context`` + ``dockerfile``) names the Dockerfile; ``deploy.replicas``
or ``scale`` the number of containers; ``mem_limit`` / ``deploy.resources.limits.memory`` the memory limit;
a service is reachable under its name, ``container_name``, ``hostname`` and network ``aliases``.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from flinktune.config.flat import parse_flat_lines
from flinktune.config.types import FLINK_PROPERTIES, ConfigDocument, ConfigFormat
from flinktune.deployment.common import (
    config_sources,
    docker_bytes,
    dynamic_properties,
    effective_role,
    image_facts,
    memory_limit,
    mount_jars,
    replicas_of,
    role_of,
    script_entrypoint,
)
from flinktune.deployment.dockerfile import DockerImage, read_dockerfile
from flinktune.deployment.model import CONF_DIR, EnvVar, Found, Mount, Process, Where
from flinktune.deployment.nodes import View

if TYPE_CHECKING:
    from flinktune.deployment.readers import ReadContext

_DEFAULTED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:?-)([^}]*)\}")


def interpolate(text: str | None) -> str | None:
    """Compose's own interpolation, as far as the file tells: ``${VAR:-default}`` and ``${VAR-default}``
    become the default (no .env is read), ``$$`` a literal ``$``; ``${VAR}`` stays (its value is unknown).
    (docs.docker.com/reference/compose-file/interpolation)"""
    if text is None or "$" not in text:
        return text
    text = _DEFAULTED.sub(lambda m: m.group(3), text)
    return text.replace("$$", "$")


def _command(view: View | None) -> tuple[str, ...]:
    if view is None:
        return ()
    if view.is_list:
        return tuple(view.scalars())
    text = view.text
    return tuple(text.split()) if text else ()


def _env(service: View, file: str) -> tuple[tuple[EnvVar, ...], list[tuple[str, int, int | None, str]]]:
    """Environment variables, and for FLINK_PROPERTIES: (value, line of its first value line, block
    start, service) for the overlay document."""
    found: list[EnvVar] = []
    overlays: list[tuple[str, int, int | None, str]] = []
    env = service.get("environment")
    if env is None:
        return (), overlays
    if env.is_map:
        for name, value, line in env.items():
            text = interpolate(value.text)
            found.append(EnvVar(name, text, Where(file, line)))
            if name == FLINK_PROPERTIES and text:
                first = value.block_first_line
                overlays.append((text, first if first is not None else value.line, first, name))
    elif env.is_list:
        for item in env.list():
            text = interpolate(item.text)
            if text is None:
                continue
            name, sep, value = text.partition("=")
            name = name.strip()
            found.append(EnvVar(name, value if sep else None, Where(file, item.line)))
            if name == FLINK_PROPERTIES and value.strip():
                first = item.block_first_line
                # "FLINK_PROPERTIES=" sits on the first line of the item; the value's lines follow.
                offset = text[: text.index("=") + 1].count("\n")
                line = (first if first is not None else item.line) + offset
                if value.startswith("\n"):
                    value = value[1:]
                    line += 1
                overlays.append((value, line, first, name))
    return tuple(found), overlays


def _mounts(service: View, file: str, folder: str, named: dict[str, str]) -> tuple[Mount, ...]:
    mounts: list[Mount] = []
    volumes = service.get("volumes")
    for item in volumes.list() if volumes is not None else []:
        where = Where(file, item.line)
        if item.is_map:
            kind = item.str_at("type") or "volume"
            source = item.str_at("source") or ""
            target = (item.str_at("target") or "").rstrip("/")
            read_only = (item.str_at("read_only") or "false").lower() == "true"
        else:
            text = interpolate(item.text) or ""
            parts = text.split(":")
            if len(parts) == 1:
                kind, source, target, read_only = "anonymous", "", parts[0].rstrip("/"), False
            else:
                source, target = parts[0], parts[1].rstrip("/")
                read_only = len(parts) > 2 and "ro" in parts[2].split(",")
                kind = "bind" if source.startswith((".", "/", "~", "$")) else "volume"
        if not target:
            continue
        if kind == "bind":
            host = os.path.normpath(os.path.join(folder, os.path.expanduser(source)))
            mounts.append(Mount(target, "bind", host, f"host:{host}", read_only, where))
        elif kind == "volume" and source:
            name = named.get(source, source)
            mounts.append(Mount(target, "volume", source, f"volume:{file}:{name}", read_only, where))
        elif kind == "tmpfs":
            mounts.append(Mount(target, "tmpfs", "tmpfs", None, read_only, where))
        else:
            mounts.append(Mount(target, "anonymous", "", None, read_only, where))
    tmpfs = service.get("tmpfs")
    items = [] if tmpfs is None else tmpfs.list() if tmpfs.is_list else [tmpfs]
    for item in items:
        text = (item.text or "").split(":")[0].rstrip("/")
        if text:
            mounts.append(Mount(text, "tmpfs", "tmpfs", None, False, Where(file, item.line)))
    return tuple(mounts)


def _names(service: View, name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    hostnames = [name]
    for key in ("container_name", "hostname"):
        value = service.str_at(key)
        if value:
            hostnames.append(value)
    networks: list[str] = []
    nets = service.get("networks")
    if nets is not None and nets.is_list:
        networks = nets.scalars()
    elif nets is not None and nets.is_map:
        for net, value, _line in nets.items():
            networks.append(net)
            aliases = value.get("aliases") if value.is_map else None
            if aliases is not None:
                hostnames.extend(aliases.scalars())
    mode = service.str_at("network_mode")
    if mode:
        networks = [mode]
    return tuple(dict.fromkeys(hostnames)), tuple(networks) or ("default",)


def _build(service: View, folder: str) -> tuple[str | None, str | None]:
    """(build context folder, Dockerfile path) of a service that is built here."""
    build = service.get("build")
    if build is None:
        return None, None
    if build.text is not None:
        context, dockerfile = build.text, "Dockerfile"
    else:
        context = build.str_at("context") or "."
        dockerfile = build.str_at("dockerfile") or "Dockerfile"
    if "$" in dockerfile:
        # ${VAR-Dockerfile}: the default applies unless the variable is set
        dockerfile = dockerfile.split("-", 1)[-1].rstrip("}") if "-" in dockerfile else "Dockerfile"
    context_dir = os.path.normpath(os.path.join(folder, context))
    return context_dir, os.path.normpath(os.path.join(context_dir, dockerfile))


def _overlay_document(file: str, service: str, value: str, line: int) -> ConfigDocument:
    lines = value.split("\n")
    entries, issues = parse_flat_lines(iter(lines), file, first_line=line)
    return ConfigDocument(path=file, format=ConfigFormat.FLAT, entries=entries, issues=issues,
                          name=f"{service} {FLINK_PROPERTIES}", origin=FLINK_PROPERTIES)


def read_compose(file: str, root: View, dockerfiles: dict[str, DockerImage | None]
                 ) -> tuple[list[Process], list[ConfigDocument]]:
    """Processes and FLINK_PROPERTIES documents of a compose file (``root`` its top-level mapping).
    ``dockerfiles`` caches the Dockerfiles read (path -> image, None when unreadable)."""
    folder = os.path.dirname(os.path.abspath(file))
    services = root.get("services")
    named: dict[str, str] = {}
    volumes = root.get("volumes")
    if volumes is not None and volumes.is_map:
        for name, value, _line in volumes.items():
            named[name] = (value.str_at("name") if value.is_map else None) or name
    processes: list[Process] = []
    documents: list[ConfigDocument] = []
    if services is None or not services.is_map:
        return processes, documents
    for name, service, line in services.items():
        if not service.is_map:
            continue
        image = interpolate(service.str_at("image"))
        context_dir, dockerfile_path = _build(service, folder)
        dockerfile = None
        if dockerfile_path is not None:
            if dockerfile_path not in dockerfiles:
                dockerfiles[dockerfile_path] = _read_dockerfile(dockerfile_path)
            dockerfile = dockerfiles[dockerfile_path]
        command_view = service.get("command")
        command = _command(command_view)
        entrypoint = _command(service.get("entrypoint"))
        if not command and dockerfile is not None and dockerfile.cmd:
            command = dockerfile.cmd
        role = role_of(command, name, service.str_at("container_name") or "",
                       service.str_at("hostname") or "")
        facts = image_facts(image, dockerfile)
        flinkish = bool(facts["official"]) or (role is not None and (
            "flink" in (image or "").lower() or dockerfile is not None))
        if role is None or not flinkish:
            continue
        if entrypoint:
            facts["official"] = any("docker-entrypoint" in word for word in entrypoint)
        script = script_entrypoint(entrypoint or (dockerfile.entrypoint if dockerfile is not None else None))
        script_where = None
        if script and entrypoint:
            script_where = Where(file, service.get("entrypoint").line, "entrypoint")  # type: ignore[union-attr]
        elif script and dockerfile is not None:
            script_where = dockerfile.entrypoint_where
        role, intended = effective_role(script, command, role)
        where = Where(file, line, f"service {name}")
        env, overlays = _env(service, file)
        mounts = _mounts(service, file, folder, named)
        conf_dir = next((var.value for var in env if var.name == "FLINK_CONF_DIR" and var.value), None) or (
            dockerfile.conf_dir if dockerfile is not None else CONF_DIR)
        sources = config_sources(mounts, dockerfile, context_dir, conf_dir)
        jars = (dockerfile.jars if dockerfile is not None else ()) + mount_jars(mounts)
        memory_view = service.path("deploy", "resources", "limits", "memory") or service.get("mem_limit")
        replicas_view = service.path("deploy", "replicas") or service.get("scale")
        replicas, known = replicas_of(replicas_view)
        hostnames, networks = _names(service, name)
        command_where = Where(file, command_view.line, "command") if command_view is not None else None
        image_where = None
        if service.get("image") is not None:
            image_where = Where(file, service.get("image").line, f"image {image}")  # type: ignore[union-attr]
        if dockerfile is not None and dockerfile.base_where is not None:
            image_where = Where(dockerfile.base_where.file, dockerfile.base_where.line,
                                f"FROM {dockerfile.base}")
        processes.append(Process(
            name=name, role=role, platform="compose", where=where, group=file, image=image or (
                dockerfile.base if dockerfile is not None else None), image_where=image_where,
            flink_version=facts["flink_version"], flink_patch=facts["flink_patch"],  # type: ignore[arg-type]
            version_source=str(facts["version_source"]), jdk=facts["jdk"],  # type: ignore[arg-type]
            image_moving=bool(facts["image_moving"]), official=bool(facts["official"]),
            image_official=bool(facts["image_official"]), command=command,
            command_where=command_where, dynamic=dynamic_properties(command, command_where or where), env=env,
            mounts=mounts, config=sources, jars=jars,
            memory_limit_bytes=None if memory_view is None else memory_limit(
                interpolate(memory_view.text), docker_bytes, file, memory_view.line, "memory limit"),
            memory_limit_where=None if memory_view is None else Where(file, memory_view.line, "memory limit"),
            replicas=replicas,
            replicas_where=None if replicas_view is None else Where(file, replicas_view.line),
            replicas_known=known, hostnames=hostnames, networks=networks,
            dockerfile=dockerfile.path if dockerfile is not None else None,
            entrypoint_overridden=bool(entrypoint) or (
                dockerfile is not None and dockerfile.entrypoint is not None),
            entrypoint=script, entrypoint_where=script_where, intended_role=intended))
        for value, first, _block, _var in overlays:
            documents.append(_overlay_document(file, name, value, first))
    return processes, documents


def _read_dockerfile(path: str) -> DockerImage | None:
    from flinktune.config.textio import read_text_file

    try:
        return read_dockerfile(path, read_text_file(path).text)
    except (OSError, ValueError, Exception):
        return None


def read(path: str, text: str, context: ReadContext) -> Found:
    """The reader of ``readers.READERS``."""
    from flinktune.config.yaml_config import compose_documents

    processes, documents = read_compose(path, View(compose_documents(text, file=path)[0]), context.images)
    return Found(processes=tuple(processes), documents=tuple(documents))
