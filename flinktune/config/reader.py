"""One entry point for every place Flink configuration lives: detect the format, then read it.

Detection, first match wins:
1. the file is named exactly ``flink-conf.yaml`` -> legacy flat format (as Flink reads that name);
   exactly ``config.yaml`` -> standard YAML;
2. top-level ``apiVersion:`` and ``kind:`` keys -> Kubernetes manifest(s);
3. the name ends in ``flink-conf.yaml`` / ``flink-conf.yml`` -> flat; in ``config.yaml`` /
   ``config.yml`` -> YAML;
4. the content: a ``key:`` line followed by a more indented line (nested mappings) or a YAML
   list item, or a key whose value is a flow mapping ``{...}`` -> YAML; otherwise flat (legacy files
   are the common case before Flink 1.19).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from flinktune.config.flat import read_flat_file, read_flat_text
from flinktune.config.textio import MAX_YAML_BYTES, read_text_file, sniff_head
from flinktune.config.types import ConfigDocument, ConfigFormat
from flinktune.errors import ConfigError

_MANIFEST_API = re.compile(r"^apiVersion[ \t]*:", re.MULTILINE)
_MANIFEST_KIND = re.compile(r"^kind[ \t]*:", re.MULTILINE)
# "key:" with nothing but an optional comment after it: a YAML block opener.
_OPENER = re.compile(r"^([ \t]*)[^\s#-][^#]*:[ \t]*(#.*)?$")
_LIST_ITEM = re.compile(r"^[ \t]*- ")
# "key: {...}" (or "key: {" opening one over several lines): a mapping in YAML, while the flat format
# would keep the braces as text, which no Flink option reads (its maps are written k1:v1,k2:v2).
_FLOW_MAPPING = re.compile(r"^[^\s#-][^#{]*?:[ \t]+\{([^#]*\}|[ \t]*)[ \t]*(#.*)?$")
_SNIFF_LINES = 2000


def _sniff_nested(head: str) -> bool:
    opener_indent: int | None = None
    for count, line in enumerate(head.splitlines()):
        if count > _SNIFF_LINES:
            break
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" \t"))
        if opener_indent is not None and (indent > opener_indent or _LIST_ITEM.match(line)):
            return True
        if _FLOW_MAPPING.match(line):
            return True
        match = _OPENER.match(line)
        opener_indent = len(match.group(1)) if match else None
    return False


def detect_format(name: str, head: str) -> ConfigFormat:
    """The format of a file named ``name`` starting with ``head`` (see the module docstring).

    Manifests are reported as ``DEPLOYMENT``: the manifest reader then yields DEPLOYMENT or
    CONFIGMAP documents per Kubernetes object.
    """
    base = os.path.basename(name).lower()
    if "\r" in head:
        head = head.replace("\r\n", "\n").replace("\r", "\n")   # old Mac line breaks: ^ must still match
    if base == "flink-conf.yaml":
        return ConfigFormat.FLAT
    if base == "config.yaml":
        return ConfigFormat.YAML
    if _MANIFEST_API.search(head) and _MANIFEST_KIND.search(head):
        return ConfigFormat.DEPLOYMENT
    if base.endswith(("flink-conf.yaml", "flink-conf.yml")):
        return ConfigFormat.FLAT
    if base.endswith(("config.yaml", "config.yml")):
        return ConfigFormat.YAML
    return ConfigFormat.YAML if _sniff_nested(head) else ConfigFormat.FLAT


def _as_format(format: ConfigFormat | str | None) -> ConfigFormat | None:
    if format is None or isinstance(format, ConfigFormat):
        return format
    try:
        return ConfigFormat(format)
    except ValueError:
        names = ", ".join(f.value for f in ConfigFormat)
        raise ConfigError(f"unknown config format '{format}' (use one of {names})") from None


def read_config_text(text: str, file: str, format: ConfigFormat | str | None = None) -> list[ConfigDocument]:
    """Read configuration held in ``text`` (``file`` names it in entries and errors).

    ``format`` forces a format (a ConfigFormat or its value, e.g. "config.yaml"); CONFIGMAP is
    treated like DEPLOYMENT (both are manifests).
    """
    format = _as_format(format)
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\x00" in text:
        raise ConfigError("contains NUL characters; not a Flink config", file=file,
                          line=text[:text.index("\x00")].count("\n") + 1)
    fmt = format or detect_format(file, text[:64 * 1024])
    if fmt is ConfigFormat.FLAT:
        return [read_flat_text(text, file)]
    if len(text) > MAX_YAML_BYTES:
        raise ConfigError(f"is larger than {MAX_YAML_BYTES // (1024 * 1024)} MiB; too large for a "
                          "YAML config", file=file)
    # The YAML readers (and PyYAML under them) load only for YAML input: a flink-conf.yaml lint,
    # the common CI case, starts faster without them.
    if fmt is ConfigFormat.YAML:
        from flinktune.config.yaml_config import read_yaml_text

        return [read_yaml_text(text, file)]
    from flinktune.config.k8s import read_manifest_text

    return read_manifest_text(text, file)


def read_config_file(path: str | os.PathLike[str], format: ConfigFormat | str | None = None,
                     ) -> list[ConfigDocument]:
    """Read a config file of any supported format; bad input raises one-line ``ConfigError``.

    A manifest with no Flink configuration in it gives an empty list.
    """
    format = _as_format(format)
    file = str(path)
    head_bytes, _size = sniff_head(path)
    if format is None:
        head = head_bytes.decode("utf-8", errors="replace")
        if head_bytes[:2] in (b"\xff\xfe", b"\xfe\xff"):
            head = head_bytes.decode("utf-16", errors="replace")
        format = detect_format(Path(file).name, head.lstrip("\ufeff"))
    if format is ConfigFormat.FLAT:
        return [read_flat_file(path)]
    decoded = read_text_file(path, max_bytes=MAX_YAML_BYTES)
    return read_config_text(decoded.text, file, format)


# What lint and recommend say of a config file that sets nothing: there is nothing to judge, and a
# pass (or advice for Flink's defaults) would claim a cluster was checked when none was described.
NO_OPTION = "holds no Flink option (empty, or only comments)"


def holds_no_option(documents: list[ConfigDocument]) -> bool:
    """Whether a file read as ``documents`` is a config file (flink-conf.yaml, config.yaml) that sets
    nothing: no entry and no line the reader flagged. A manifest is never such a file: a FlinkDeployment
    or ConfigMap without options still describes pods, and a manifest with no Flink config reads as no
    document at all."""
    return bool(documents) and all(
        document.format in (ConfigFormat.FLAT, ConfigFormat.YAML) and not document.entries
        and not document.issues for document in documents)
