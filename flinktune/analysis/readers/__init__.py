"""The metric input formats: one module per format, registered in ``READERS``.

A reader module declares:

    NAME = "csv"                       # the format's name (an InputSet's ``fmt``)
    EXTENSIONS = (".csv", ".csv.gz")   # file names it reads (lower case), () when only claimed
    LABEL = ".csv"                     # how a message names it ("folder holds no metrics file (...)")
    REFINES = None                     # or the format whose files it may claim by content
    def claims(path) -> bool           # with REFINES: this file is of this format, not the refined one
    def read(spark, paths) -> DataFrame  # the file's own columns; load.py makes them canonical

``READERS``' order is the preference in a folder: a folder is read as its first format found
(parquet before text), so a dump folder's plan.json or a Prometheus sample beside the parquet is
not read. Adding a format is one module here and one entry in ``READERS``.
"""

from __future__ import annotations

import importlib
import re
from types import ModuleType

# Formats found by extension, in folder preference; then formats that claim another's files.
READERS: tuple[str, ...] = ("parquet", "csv", "jsonlines", "prometheus", "prometheus_range", "influx_csv")


def modules() -> tuple[ModuleType, ...]:
    return tuple(importlib.import_module(f"flinktune.analysis.readers.{name}") for name in READERS)


def reader(fmt: str) -> ModuleType:
    """The module reading format ``fmt`` (an InputSet's format name)."""
    for module in modules():
        if fmt == module.NAME:
            return module
    raise KeyError(fmt)


def format_of(path: str) -> str | None:
    """The format a file name says (by extension; claims by content come later, see ``refine``)."""
    low = path.lower()
    for module in modules():
        if module.EXTENSIONS and low.endswith(module.EXTENSIONS):
            return module.NAME
    return None


def folder_order() -> tuple[str, ...]:
    return tuple(module.NAME for module in modules() if module.EXTENSIONS)


def labels() -> str:
    """The formats for a message: ``.parquet, .csv, .jsonl, .prom``."""
    return ", ".join(module.LABEL for module in modules() if module.EXTENSIONS)


def refine(by_fmt: dict[str, list[str]]) -> dict[str, list[str]]:
    """Files another format claims by content move to it (a saved Prometheus range answer is a
    .json file, an InfluxDB export a .csv file); formats left without files drop out."""
    out = {fmt: list(paths) for fmt, paths in by_fmt.items()}
    for module in modules():
        base = getattr(module, "REFINES", None)
        if base is None or base not in out:
            continue
        claimed = [p for p in out[base] if not is_remote(p) and module.claims(p)]
        if claimed:
            out.setdefault(module.NAME, []).extend(claimed)
            out[base] = [p for p in out[base] if p not in claimed]
            if not out[base]:
                del out[base]
    return out


def is_remote(path: str) -> bool:
    return re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", path) is not None and not path.startswith("file://")
