"""Read the configuration files processes mount, once per run (a process's base configuration, the
ConfigMap it mounts)."""

from __future__ import annotations

import os

from flinktune.config.types import ConfigDocument, ConfigFormat
from flinktune.errors import FlinktuneError


class DocumentCache:
    """``document_at(path, name=None)``: the configuration in ``path`` (the ConfigMap ``name`` of a
    manifest), or None when the file cannot be read or holds no single configuration."""

    def __init__(self) -> None:
        self._documents: dict[str, ConfigDocument | None] = {}

    def document_at(self, path: str, name: str | None = None) -> ConfigDocument | None:
        key = os.path.normcase(os.path.abspath(path)) + "\0" + (name or "")
        if key not in self._documents:
            from flinktune.config.reader import read_config_file

            try:
                found = read_config_file(path)
            except (FlinktuneError, OSError, ValueError):
                found = []
            if name is not None:
                found = [d for d in found if d.name == name and d.format is ConfigFormat.CONFIGMAP]
            self._documents[key] = found[0] if len(found) == 1 else None
        return self._documents[key]
