"""The value Flink would use for a key: the file's entry under the key or one of its aliases,
else the version's default.

Resolution follows ``Configuration.getOptional`` (Flink 1.13 .. 2.x): the option's own key
first, then its fallback and deprecated keys in the order the option declares them; a Map option
also collects prefixed entries (``<key>.<k>: v``). Within one key the last entry in the file wins,
as ``ConfigDocument.get`` does. A deprecated option that also is an alias of a
successor resolves through the successor. Keys that the target version does not read (removed, not yet
introduced) resolve to nothing; keys outside the catalog (plugin families, unknown keys) resolve
only to what the file says, without a default.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from flinktune.config.catalog import Catalog, KeyStatus, OptionSpec, load_catalog
from flinktune.config.types import ConfigDocument, ConfigEntry, ConfigValue
from flinktune.errors import CatalogError, ValueSyntaxError
from flinktune.record import Record, set_field, store
from flinktune.units import (
    Duration,
    parse_bool,
    parse_duration,
    parse_enum,
    parse_float,
    parse_int,
    parse_list,
    parse_memory_size,
)
from flinktune.versions import FlinkVersion

T = TypeVar("T")


class Resolved(Record):
    """Where the effective value of a key comes from."""

    __slots__ = _fields = ("key", "status", "spec", "entry", "value")
    key: str                                  # the key asked for
    status: KeyStatus
    spec: OptionSpec | None                   # the option whose value this is
    entry: ConfigEntry | None                 # the file entry that provided the value, if any
    value: ConfigValue                        # that entry's value, else the default text, else None

    def __init__(self, key: str, status: KeyStatus, spec: OptionSpec | None, entry: ConfigEntry | None,
                 value: ConfigValue) -> None:
        set_field(self, "key", key)
        set_field(self, "status", status)
        set_field(self, "spec", spec)
        set_field(self, "entry", entry)
        set_field(self, "value", value)

    @property
    def from_default(self) -> bool:
        return self.entry is None and self.value is not None


class EffectiveConfig(Record):
    """A configuration document as one Flink version reads it."""

    __slots__ = ("_last", "catalog", "document", "version")
    _fields = ("document", "version", "catalog")
    document: ConfigDocument | None
    version: FlinkVersion
    catalog: Catalog
    _last: dict[str, ConfigEntry]

    def __init__(self, document: ConfigDocument | None, version: FlinkVersion,
                 catalog: Catalog | None = None) -> None:
        if catalog is None:
            catalog = load_catalog()
        store(self, (document, version, catalog))
        self.__post_init__()

    def __post_init__(self) -> None:
        last: dict[str, ConfigEntry] = {}
        if self.document is not None:
            for entry in self.document.entries:
                last[entry.key] = entry
        object.__setattr__(self, "_last", last)

    # ------------------------------------------------------------------ resolution

    def resolve(self, key: str) -> Resolved:
        status = self.catalog.lookup(key, self.version)
        spec = status.spec
        if status.kind == "option" and status.deprecated and status.replacement is not None:
            # A deprecated option that is also an alias of its successor (the 1.x
            # taskmanager.network.memory.* keys): Flink's code reads the successor.
            successor = self.catalog.spec(status.replacement, self.version)
            if successor is not None:
                spec = successor
        if spec is None:
            if status.kind in ("removed", "not-yet"):
                return Resolved(key, status, None, None, None)
            entry = self._last.get(key)
            return Resolved(key, status, None, entry, None if entry is None else entry.value)
        order = spec.resolution_order if not spec.is_template else (key,)
        for candidate in order:
            entry = self._last.get(candidate)
            if entry is not None:
                return Resolved(key, status, spec, entry, entry.value)
        if spec.type == "Map":
            prefixed = self._prefixed_map(order)
            if prefixed is not None:
                entry, mapping = prefixed
                return Resolved(key, status, spec, entry, mapping)
        return Resolved(key, status, spec, None, spec.default)

    def _prefixed_map(self, order: tuple[str, ...]) -> tuple[ConfigEntry, dict[str, object]] | None:
        for candidate in order:
            prefix = candidate + "."
            found = [e for k, e in self._last.items() if k.startswith(prefix)]
            if found:
                found.sort(key=lambda e: e.line)
                return found[0], {e.key[len(prefix):]: e.value for e in found}
        return None

    def status(self, key: str) -> KeyStatus:
        return self.catalog.lookup(key, self.version)

    def is_set(self, key: str) -> bool:
        """The file sets the key or one of the keys Flink reads in its place."""
        return self.resolve(key).entry is not None

    def entry(self, key: str) -> ConfigEntry | None:
        """The entry that provides the value (for file:line in messages), None if defaulted."""
        return self.resolve(key).entry

    def raw(self, key: str) -> ConfigValue:
        """The effective value before conversion: the file's value or the default text."""
        return self.resolve(key).value

    # ------------------------------------------------------------------ typed accessors

    def memory_bytes(self, key: str) -> int | None:
        return self._convert(key, lambda v: parse_memory_size(_scalar(v, "memory size")).bytes)

    def duration(self, key: str) -> Duration | None:
        return self._convert(key, lambda v: parse_duration(_scalar(v, "duration")))

    def integer(self, key: str) -> int | None:
        spec = self.resolve(key).spec
        bits = 64 if spec is not None and spec.type == "Long" else 32
        return self._convert(key, lambda v: parse_int(_scalar(v, "integer"), bits=bits))

    def floating(self, key: str) -> float | None:
        return self._convert(key, lambda v: parse_float(_scalar(v, "number")))

    def boolean(self, key: str) -> bool | None:
        return self._convert(key, lambda v: parse_bool(_scalar(v, "boolean")))

    def string(self, key: str) -> str | None:
        return self._convert(key, _as_string)

    def enum(self, key: str) -> str | None:
        """The enum constant (Flink's spelling) the value names."""
        spec = self.resolve(key).spec
        allowed = spec.enum_values if spec is not None else ()
        if not allowed:
            return self.string(key)
        return self._convert(key, lambda v: parse_enum(_as_string(v) or "", allowed))

    def string_list(self, key: str) -> list[str] | None:
        return self._convert(key, lambda v: parse_list(v if isinstance(v, list) else _as_string(v) or ""))

    def _convert(self, key: str, convert: Callable[[ConfigValue], T]) -> T | None:
        resolved = self.resolve(key)
        if resolved.value is None:
            return None
        try:
            return convert(resolved.value)
        except ValueSyntaxError as error:
            if resolved.entry is None:
                raise CatalogError(
                    f"default of {key} for Flink {self.version} ('{resolved.value}') does not parse: "
                    f"{error.message}") from error
            entry = resolved.entry
            raise ValueSyntaxError(f"{entry.key}: {error.message}", file=entry.file,
                                   line=entry.line) from error


def _scalar(value: ConfigValue, what: str) -> str | int | float | bool:
    if isinstance(value, list | dict):
        raise ValueSyntaxError(f"{what} value is a {'list' if isinstance(value, list) else 'map'}")
    assert value is not None
    if isinstance(value, float) and what in ("memory size", "duration", "integer"):
        # config.yaml `1.5` for a whole-number option: Flink converts via the string form.
        return repr(value)
    return value


def _as_string(value: ConfigValue) -> str | None:
    """The string Flink's ConfigurationUtils.convertToString would produce."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ";".join(str(item) for item in value)
    if isinstance(value, dict):
        return ",".join(f"{k}:{v}" for k, v in value.items())
    return str(value)
