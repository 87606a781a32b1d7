"""One envelope for every command's JSON output, and strict JSON (RFC 8259) only.

Every JSON document flinktune prints starts with the same fields: ``tool``, ``version``,
``schema_version`` (of that command's document), ``command`` and ``inputs`` (the files, folders
or scenario the command read), then the command's own fields. Each command's document is
described by a JSON Schema shipped in ``flinktune/data/schemas/<command>.schema.json``; the
report pipeline (``flinktune.report.emit``) wraps every ``--format json`` report.

Python's ``json`` writes ``NaN`` and ``Infinity`` for non-finite floats, which strict parsers
reject; here they become ``null`` (the number is unknown) and ``allow_nan=False`` guards the rest.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

TOOL: Final[str] = "flinktune"
ENVELOPE_FIELDS: Final[tuple[str, ...]] = ("tool", "version", "schema_version", "command", "inputs")


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by None, recursively."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def wrap(command: str, inputs: Sequence[str], body: Mapping[str, Any], tool_version: str,
         schema_version: int) -> dict[str, Any]:
    """The envelope first, then the command's own fields (envelope names in ``body`` are dropped).
    ``schema_version``: of the command's document (``SCHEMA_VERSION`` of its report module)."""
    doc: dict[str, Any] = {
        "tool": TOOL,
        "version": tool_version,
        "schema_version": schema_version,
        "command": command,
        "inputs": [str(i) for i in inputs],
    }
    doc.update((k, v) for k, v in body.items() if k not in ENVELOPE_FIELDS)
    return doc


def dumps(doc: Any, indent: int | None = 2) -> str:
    """Strict JSON text with a final newline."""
    return json.dumps(finite(doc), indent=indent, ensure_ascii=False, allow_nan=False) + "\n"


def _constant(name: str) -> None:
    # NaN / Infinity / -Infinity written by a renderer: an unknown number.
    return None


def rewrap(command: str, inputs: Sequence[str], text: str, tool_version: str, schema_version: int) -> str:
    """A renderer's JSON text (an object) in the envelope, as strict JSON."""
    body = json.loads(text, parse_constant=_constant)
    if not isinstance(body, dict):
        body = {"result": body}
    return dumps(wrap(command, inputs, body, tool_version, schema_version))
