"""Read a Dockerfile: the image it builds FROM, the configuration files it bakes into Flink's conf
folder, the jars it puts into lib/ or plugins/, and whether it replaces the official entrypoint.

Only the last build stage counts (the image that runs); ``ARG`` defaults fill ``${VAR}`` in FROM.
Jars are recognised in ``COPY``/``ADD`` destinations and in the usual download and copy commands of
``RUN`` (``wget -P dir``, ``wget -O file``, ``curl -o file``, ``cp``/``mv`` into a folder).
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from typing import TYPE_CHECKING

from flinktune.deployment.images import parse_image
from flinktune.deployment.model import CONF_DIR, FLINK_HOME, Found, Jar, Where
from flinktune.record import Record, store

if TYPE_CHECKING:
    from flinktune.deployment.readers import ReadContext

_ARG_REF = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}?")


class Copy(Record):
    """A file or folder the image copies from the build context."""

    __slots__ = _fields = ("source", "dest", "where")
    source: str  # relative to the build context
    dest: str  # absolute path in the image
    where: Where

    def __init__(self, source: str, dest: str, where: Where) -> None:
        store(self, (source, dest, where))


class DockerImage(Record):
    __slots__ = _fields = ("path", "base", "base_where", "copies", "jars", "entrypoint", "entrypoint_where",
                           "cmd", "env", "conf_dir")
    path: str
    base: str | None  # FROM of the last stage (ARGs filled in)
    base_where: Where | None
    copies: tuple[Copy, ...]
    jars: tuple[Jar, ...]
    entrypoint: tuple[str, ...] | None  # ENTRYPOINT of the last stage, if it sets one
    entrypoint_where: Where | None
    cmd: tuple[str, ...] | None
    env: tuple[tuple[str, str, Where], ...]
    conf_dir: str

    def __init__(self, path: str, base: str | None, base_where: Where | None, copies: tuple[Copy, ...] = (),
                 jars: tuple[Jar, ...] = (), entrypoint: tuple[str, ...] | None = None,
                 entrypoint_where: Where | None = None, cmd: tuple[str, ...] | None = None,
                 env: tuple[tuple[str, str, Where], ...] = (), conf_dir: str = CONF_DIR) -> None:
        store(self, (path, base, base_where, copies, jars, entrypoint, entrypoint_where, cmd, env, conf_dir))


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, instruction) with backslash continuations joined, comments dropped."""
    out: list[tuple[int, str]] = []
    buffer: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not buffer and (not stripped or stripped.startswith("#")):
            continue
        if buffer and stripped.startswith("#"):
            continue
        if not buffer:
            start = number
        if stripped.endswith("\\"):
            buffer.append(stripped[:-1])
            continue
        buffer.append(stripped)
        out.append((start, " ".join(buffer)))
        buffer = []
    if buffer:
        out.append((start, " ".join(buffer)))
    return out


def _exec_form(rest: str) -> tuple[str, ...] | None:
    rest = rest.strip()
    if rest.startswith("["):
        import json

        try:
            value = json.loads(rest)
        except ValueError:
            return None   # not valid JSON: Docker runs it as a shell command line
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return tuple(value)
        return None
    return ("/bin/sh", "-c", rest)


def _split(rest: str) -> list[str]:
    try:
        return shlex.split(rest, comments=False, posix=True)
    except ValueError:
        return rest.split()


def _abs(path: str, workdir: str) -> str:
    path = path.strip().strip("\"'")
    if path.startswith("$FLINK_HOME") or path.startswith("${FLINK_HOME}"):
        path = FLINK_HOME + (path.split("}", 1)[-1] if path.startswith("${") else path[len("$FLINK_HOME"):])
    if not path.startswith("/"):
        path = posixpath.join(workdir, path)
    trailing = path.endswith("/")
    norm = posixpath.normpath(path)
    return norm + "/" if trailing and norm != "/" else norm


def _jar_folder(dest_dir: str) -> str | None:
    dest_dir = dest_dir.rstrip("/")
    for folder in ("lib", "opt", "usrlib"):
        if dest_dir == f"{FLINK_HOME}/{folder}":
            return folder
    if dest_dir.startswith(FLINK_HOME + "/plugins/"):
        return "plugins/" + dest_dir[len(FLINK_HOME) + len("/plugins/"):]
    if dest_dir == FLINK_HOME + "/plugins":
        return "plugins"
    return None


def _jars_in_run(command: str, workdir: str, where: Where) -> list[Jar]:
    """Jars a RUN command downloads or copies into Flink's folders."""
    jars: list[Jar] = []
    for part in re.split(r"&&|;|\|\|", command):
        words = _split(part)
        if not words:
            continue
        tool = posixpath.basename(words[0])
        urls = [w for w in words if w.endswith(".jar")]
        target_dir = None
        target_file = None
        if tool == "wget":
            for i, word in enumerate(words):
                if word in ("-P", "--directory-prefix") and i + 1 < len(words):
                    target_dir = words[i + 1]
                elif word.startswith("--directory-prefix="):
                    target_dir = word.split("=", 1)[1]
                elif word in ("-O", "--output-document") and i + 1 < len(words):
                    target_file = words[i + 1]
        elif tool == "curl":
            for i, word in enumerate(words):
                if word in ("-o", "--output") and i + 1 < len(words):
                    target_file = words[i + 1]
        elif tool in ("cp", "mv", "ln"):
            args = [w for w in words[1:] if not w.startswith("-")]
            if len(args) >= 2:
                dest = args[-1]
                sources = [a for a in args[:-1] if a.endswith(".jar")]
                if dest.endswith(".jar"):
                    target_file = dest
                else:
                    target_dir = dest
                urls = sources
        if target_file is not None and target_file.endswith(".jar"):
            path = _abs(target_file, workdir)
            folder = _jar_folder(posixpath.dirname(path))
            if folder is not None:
                source = _abs(urls[0], workdir) if tool in ("cp", "mv", "ln") and urls else None
                jars.append(Jar(posixpath.basename(path), folder, where, source))
        elif target_dir is not None:
            folder = _jar_folder(_abs(target_dir + "/", workdir))
            if folder is not None:
                for url in urls:
                    name = posixpath.basename(url.split("?", 1)[0])
                    if name.endswith(".jar") and "*" not in name:
                        source = _abs(url, workdir) if tool in ("cp", "mv", "ln") else None
                        jars.append(Jar(name, folder, where, source))
    return jars


def read_dockerfile(path: str, text: str) -> DockerImage:
    args: dict[str, str] = {}
    stage_base: str | None = None
    base_where: Where | None = None
    copies: list[Copy] = []
    jars: list[Jar] = []
    env: list[tuple[str, str, Where]] = []
    entrypoint: tuple[str, ...] | None = None
    entrypoint_where: Where | None = None
    cmd: tuple[str, ...] | None = None
    workdir = "/"

    def fill(value: str) -> str:
        return _ARG_REF.sub(lambda m: args.get(m.group(1), m.group(2) or m.group(0)), value)

    for line, instruction in _logical_lines(text):
        keyword, _, rest = instruction.partition(" ")
        keyword = keyword.upper()
        where = Where(path, line)
        if keyword == "ARG":
            name, _, default = rest.strip().partition("=")
            if default and name.strip() not in args:
                args[name.strip()] = default.strip().strip("\"'")
        elif keyword == "FROM":
            words = [w for w in rest.split() if not w.startswith("--")]
            stage_base = fill(words[0]) if words else None
            base_where = where
            # A new stage starts from scratch: what earlier stages copied is not in this image.
            copies, jars, env = [], [], []
            entrypoint, entrypoint_where, cmd = None, None, None
            # The official image's Dockerfile ends with WORKDIR $FLINK_HOME.
            base_ref = parse_image(stage_base)
            workdir = FLINK_HOME if base_ref is not None and base_ref.official else "/"
        elif keyword == "WORKDIR":
            workdir = _abs(fill(rest.strip()), workdir).rstrip("/") or "/"
        elif keyword == "ENV":
            parts = rest.strip()
            if "=" in parts.split(" ", 1)[0]:
                for word in _split(parts):
                    name, _, value = word.partition("=")
                    env.append((name, value, where))
            else:
                name, _, value = parts.partition(" ")
                env.append((name.strip(), value.strip(), where))
        elif keyword in ("COPY", "ADD"):
            words = _split(rest)
            if any(w.startswith("--from") for w in words):
                continue
            words = [w for w in words if not w.startswith("--")]
            if rest.strip().startswith("["):
                form = _exec_form(rest)
                words = list(form) if form else words
            if len(words) < 2:
                continue
            dest = _abs(fill(words[-1]), workdir)
            for source in words[:-1]:
                source = fill(source)
                if source.startswith(("http://", "https://")):
                    name = posixpath.basename(source)
                    folder = _jar_folder(dest if dest.endswith("/") else posixpath.dirname(dest))
                    if name.endswith(".jar") and folder is not None:
                        jars.append(Jar(name, folder, where))
                    continue
                target = posixpath.join(dest, posixpath.basename(source.rstrip("/"))) \
                    if dest.endswith("/") or len(words) > 2 else dest
                copies.append(Copy(source, target.rstrip("/"), where))
                if source.endswith(".jar") and "*" not in source:
                    folder = _jar_folder(posixpath.dirname(target))
                    if folder is not None:
                        jars.append(Jar(posixpath.basename(target), folder, where))
        elif keyword == "RUN":
            jars.extend(_jars_in_run(fill(rest), workdir, where))
        elif keyword == "ENTRYPOINT":
            entrypoint, entrypoint_where = _exec_form(rest), where
        elif keyword == "CMD":
            cmd = _exec_form(rest)
    conf_dir = next((value for name, value, _ in env if name == "FLINK_CONF_DIR"), CONF_DIR)
    return DockerImage(path=path, base=stage_base, base_where=base_where, copies=tuple(copies),
                       jars=tuple(jars), entrypoint=entrypoint, entrypoint_where=entrypoint_where, cmd=cmd,
                       env=tuple(env), conf_dir=conf_dir)


def context_path(context_dir: str, source: str) -> str:
    return os.path.normpath(os.path.join(context_dir, source))


def read(path: str, text: str, context: ReadContext) -> Found:
    """The reader of ``readers.READERS``: a Dockerfile holds no process of its own; the compose files
    and manifests that run its image find it in ``context.images``."""
    context.images[os.path.abspath(path)] = read_dockerfile(path, text)
    return Found()
