"""Message and fix templates: ``text {name} text {name.field:memory}``.

Deliberately not ``str.format`` (which can reach attributes of Python objects): a placeholder is
a bound name or let-name, optionally followed by ``.field`` look-ups into plain mappings, and an
optional format spec from a fixed list. ``{{`` and ``}}`` are literal braces.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from flinktune.errors import ConditionError
from flinktune.rules.lang import _Frozen, _set
from flinktune.units import format_duration, format_memory

_BRACE = re.compile(r"[{}]")
_PLACEHOLDER = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)((?:\.[A-Za-z0-9][A-Za-z0-9_-]*)*)(?::([a-z_]+))?$")

_KIB = 1024
SPECS: dict[str, str] = {
    "": "the value as text (numbers without trailing .0, lists joined with ', ')",
    "memory": "bytes as a readable Flink size: 64mb, or 128.0mb when not a whole unit",
    "flink_memory": "bytes as exact Flink MemorySize text (64mb, 134217730b): use in fix values",
    "duration": "milliseconds as a Flink duration: 100 ms, 5 s",
    "percent": "a ratio as a percentage: 0.25 -> 25%",
    "int": "rounded to a whole number",
    "list": "a list joined with ', '",
}


class Placeholder(_Frozen):
    """A ``{name.field:spec}`` placeholder of a template."""

    __slots__ = ("name", "path", "spec")
    _fields = ("name", "path", "spec")
    name: str
    path: tuple[str, ...]
    spec: str

    def __init__(self, name: str, path: tuple[str, ...], spec: str) -> None:
        _set(self, "name", name)
        _set(self, "path", path)
        _set(self, "spec", spec)


class Template(_Frozen):
    """A message or fix template: literal text and placeholders (a slotted record, not a dataclass,
    for start-up time: see flinktune.rules.lang._Frozen)."""

    __slots__ = ("parts", "source")
    _fields = ("source", "parts")
    source: str
    parts: tuple[str | Placeholder, ...]

    def __init__(self, source: str, parts: tuple[str | Placeholder, ...]) -> None:
        _set(self, "source", source)
        _set(self, "parts", parts)

    def names(self) -> frozenset[str]:
        return frozenset(p.name for p in self.parts if isinstance(p, Placeholder))

    def render(self, values: Mapping[str, object]) -> str:
        out: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            value = values.get(part.name)
            for field in part.path:
                value = value.get(field) if isinstance(value, Mapping) else None
            out.append(format_value(value, part.spec))
        return "".join(out)


def parse_template(source: str) -> Template:
    if not isinstance(source, str):
        raise ConditionError("a template must be a string")
    parts: list[str | Placeholder] = []
    text: list[str] = []
    i, n = 0, len(source)
    while i < n:
        # Plain text up to the next brace in one step (messages are long, braces few).
        brace = _BRACE.search(source, i)
        stop = brace.start() if brace is not None else n
        if stop > i:
            text.append(source[i:stop])
            i = stop
            continue
        ch = source[i]
        if ch == "{" and source.startswith("{{", i):
            text.append("{")
            i += 2
            continue
        if ch == "}" and source.startswith("}}", i):
            text.append("}")
            i += 2
            continue
        if ch == "}":
            raise ConditionError(f"unmatched '}}' at column {i + 1} (write '}}}}' for a brace)")
        if ch == "{":
            end = source.find("}", i)
            if end < 0:
                raise ConditionError(f"unclosed '{{' at column {i + 1}")
            inner = source[i + 1:end].strip()
            match = _PLACEHOLDER.match(inner)
            if match is None:
                raise ConditionError(f"bad placeholder '{{{inner}}}' at column {i + 1} "
                                     "(use {name}, {name.field} or {name:spec})")
            name, path, spec = match.group(1), match.group(2), match.group(3) or ""
            if spec not in SPECS:
                raise ConditionError(f"unknown format '{spec}' in '{{{inner}}}' "
                                     f"(one of {', '.join(s for s in SPECS if s)})")
            if text:
                parts.append("".join(text))
                text = []
            parts.append(Placeholder(name, tuple(p for p in path.split(".") if p), spec))
            i = end + 1
            continue
    if text:
        parts.append("".join(text))
    return Template(source, tuple(parts))


def _plain(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.4g}" if abs(value) < 1e-3 or abs(value) >= 1e6 else f"{round(value, 4)}"
    if isinstance(value, tuple | list):
        return ", ".join(_plain(v) for v in value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {_plain(v)}" for k, v in value.items())
    return str(value)


def readable_memory(num_bytes: int | float) -> str:
    whole = int(num_bytes)
    if whole == num_bytes:
        exact = format_memory(abs(whole))
        if not exact.endswith("b") or exact.endswith(("kb", "mb", "gb", "tb")) or abs(whole) < _KIB:
            return ("-" if whole < 0 else "") + exact
    size = abs(float(num_bytes))
    for label, unit in (("tb", _KIB**4), ("gb", _KIB**3), ("mb", _KIB**2), ("kb", _KIB)):
        if size >= unit:
            return ("-" if num_bytes < 0 else "") + f"{size / unit:.1f}{label}"
    return f"{int(num_bytes)}b"


def format_value(value: object, spec: str = "") -> str:
    if value is None or spec in ("", "list"):
        return _plain(value)
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    # inf/NaN (a config may say .inf) have no whole-number form: print them as they are.
    if not is_number or (isinstance(value, float) and not math.isfinite(value)):
        return _plain(value)
    if spec == "memory":
        return readable_memory(value)  # type: ignore[arg-type]
    if spec == "flink_memory":
        return format_memory(int(value))  # type: ignore[arg-type]
    if spec == "duration":
        return format_duration(round(float(value) * 1_000_000))  # type: ignore[arg-type]
    if spec == "percent":
        return f"{float(value) * 100:.0f}%"  # type: ignore[arg-type]
    if spec == "int":
        return str(round(float(value)))  # type: ignore[arg-type]
    return _plain(value)
