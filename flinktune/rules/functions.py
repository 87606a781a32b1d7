"""The short, fixed list of named functions rule conditions may call.

Each function receives the evaluation context (target version, the document, the environment,
the option catalog and the model) and plain arguments, and returns plain data. Values are in
the language's units: memory in bytes, durations in milliseconds. A function returns ``null``
when it cannot answer (unset key, unparseable value, derivation refused) so that conditions
built on it stay false instead of crashing; the value's syntax is another rule's business.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

from flinktune.config.types import ConfigDocument, ConfigEntry
from flinktune.errors import ConditionError, FlinktuneError
from flinktune.rules.lang import Function, truthy
from flinktune.rules.template import format_value
from flinktune.units import (
    parse_bool,
    parse_duration,
    parse_enum,
    parse_float,
    parse_int,
    parse_list,
    parse_memory_size,
)
from flinktune.versions import SUPPORTED, FlinkVersion, parse_version

# ---------------------------------------------------------------------------------------------
# The context: everything a function may look at, computed lazily and once per document.


class RuleContext:
    """What functions see. Built by the engine; never handed to rule text itself."""

    def __init__(self, version: FlinkVersion, document: ConfigDocument | None = None,
                 env: Mapping[str, object] | None = None) -> None:
        self.version = version
        self.document = document
        self.env = dict(env or {})
        self._memo: dict[tuple[str, object], object] = {}

    @cached_property
    def catalog(self) -> Any:
        from flinktune.config.catalog import load_catalog

        return load_catalog()

    @cached_property
    def effective(self) -> Any:
        from flinktune.config.effective import EffectiveConfig

        return EffectiveConfig(self.document, self.version, self.catalog)

    def resolve(self, key: str) -> Any:
        """Which entry (or default) Flink reads for ``key`` (flinktune.config.effective)."""
        return self.memo(("resolve", key), lambda: self.effective.resolve(key))

    def memo(self, key: tuple[str, object], compute: Callable[[], object]) -> object:
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = compute()
            return value

    def lookup(self, key: str, version: FlinkVersion | None = None) -> Any:
        # The target version's lookups (nearly all) are memoised by key alone: hashing a
        # FlinkVersion runs Python code, and rules look keys up thousands of times per corpus.
        if version is None or version == self.version:
            return self.memo(("lookup", key), lambda: self.catalog.lookup(key, self.version))
        return self.memo(("lookup", (key, version)), lambda: self.catalog.lookup(key, version))


# ---------------------------------------------------------------------------------------------
# Helpers


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise ConditionError(f"{what} must be a string")
    return value


def _number(value: object, what: str) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConditionError(f"{what} must be a number")
    return value


def _kind(status: Any) -> str:
    kind = getattr(status, "kind", "unknown")
    return str(getattr(kind, "value", kind))


def _type_family(type_text: object) -> str:
    """Collapse the catalog's type names to the families the language knows."""
    text = str(getattr(type_text, "value", type_text) or "").lower()
    if "memory" in text:
        return "memory"
    if "duration" in text:
        return "duration"
    if text.startswith("list"):
        return "list"
    if text.startswith("map"):
        return "map"
    if "bool" in text:
        return "boolean"
    if text in ("int", "integer"):
        return "integer"
    if text == "long":
        return "long"
    if text in ("float", "double"):
        return "float"
    if "enum" in text:
        return "enum"
    return "string"


def _spec(ctx: RuleContext, key: str) -> Any:
    return getattr(ctx.lookup(key), "spec", None)


def _convert(family: str, value: object, enum_values: tuple[str, ...] = ()) -> object:
    """Parse ``value`` as Flink would for an option of ``family``; raise ValueSyntaxError."""
    if family == "memory":
        return parse_memory_size(value if isinstance(value, int) else str(value)).bytes
    if family == "duration":
        # A YAML float (1.5) goes through the text parser, which refuses it as Flink does.
        nanos = parse_duration(value if isinstance(value, int) else str(value)).nanos
        ms = nanos / 1e6
        return int(ms) if ms.is_integer() else ms
    if family == "boolean":
        return parse_bool(value if isinstance(value, bool) else str(value))
    if family == "integer":
        return parse_int(value if isinstance(value, int) else str(value), bits=32)
    if family == "long":
        return parse_int(value if isinstance(value, int) else str(value), bits=64)
    if family == "float":
        return parse_float(value if isinstance(value, int | float) else str(value))
    if family == "enum" and enum_values:
        return parse_enum(str(value), tuple(enum_values))
    if family == "list":
        return parse_list(value if isinstance(value, list) else str(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str | int | float | list | dict) or value is None else str(value)


def _entry_for(ctx: RuleContext, key: str) -> ConfigEntry | None:
    """The entry Flink reads for ``key``: the key itself when the document sets it, else what
    EffectiveConfig resolves (the option's deprecated and fallback keys, new key first)."""
    if ctx.document is None:
        return None
    entry = ctx.document.get(key)
    if entry is not None:
        return entry
    resolved = ctx.resolve(key).entry
    return resolved if isinstance(resolved, ConfigEntry) else None


# ---------------------------------------------------------------------------------------------
# Generic functions


def _if(_ctx: RuleContext, cond: Callable[[], object], then: Callable[[], object],
        otherwise: Callable[[], object]) -> object:
    return then() if truthy(cond()) else otherwise()


def _coalesce(_ctx: RuleContext, *thunks: Callable[[], object]) -> object:
    for thunk in thunks:
        value = thunk()
        if value is not None:
            return value
    return None


def _flatten_numbers(args: tuple[object, ...], what: str) -> list[float | int]:
    items: list[object] = list(args[0]) if len(args) == 1 and isinstance(args[0], tuple) else list(args)
    return [_number(item, what) for item in items if item is not None]


def _min(_ctx: RuleContext, *args: object) -> object:
    numbers = _flatten_numbers(args, "min() arguments")
    return min(numbers) if numbers else None


def _max(_ctx: RuleContext, *args: object) -> object:
    numbers = _flatten_numbers(args, "max() arguments")
    return max(numbers) if numbers else None


def _nullable(fn: Callable[..., object]) -> Callable[..., object]:
    def wrapper(_ctx: RuleContext, *args: object) -> object:
        if any(arg is None for arg in args):
            return None
        return fn(*args)

    return wrapper


def _len(value: object) -> int:
    if isinstance(value, str | tuple | dict):
        return len(value)
    raise ConditionError("len() needs a string, list or mapping")


def _any_all(which: Callable[[Any], bool]) -> Callable[..., object]:
    def impl(_ctx: RuleContext, items: object) -> object:
        if items is None:
            return which is not any
        if not isinstance(items, tuple):
            raise ConditionError("needs a list of booleans")
        return which(item is True for item in items)

    return impl


def _is_power_of_two(value: object) -> bool:
    number = _number(value, "is_power_of_two() argument")
    return isinstance(number, int) and number > 0 and number & (number - 1) == 0


def _memory(_ctx: RuleContext, text: object) -> object:
    if text is None:
        return None
    try:
        return _convert("memory", text)
    except FlinktuneError:
        return None


def _duration(_ctx: RuleContext, text: object) -> object:
    if text is None:
        return None
    try:
        return _convert("duration", text)
    except FlinktuneError:
        return None


def _version_at_least(ctx: RuleContext, text: object) -> bool:
    try:
        wanted = parse_version(_text(text, "version_at_least() argument"))
    except FlinktuneError as error:
        raise ConditionError(error.message) from None
    return ctx.version >= wanted


# ---------------------------------------------------------------------------------------------
# Catalog functions


def _status(ctx: RuleContext, key: object) -> str:
    return _kind(ctx.lookup(_text(key, "key")))


def _known(ctx: RuleContext, key: object) -> bool:
    return _status(ctx, key) in ("option", "deprecated-alias", "fallback-alias", "family")


def _ever_known(ctx: RuleContext, key: object) -> bool:
    name = _text(key, "key")
    return any(_kind(ctx.lookup(name, version)) not in ("unknown",) for version in SUPPORTED)


def _canonical(ctx: RuleContext, key: object) -> object:
    status = ctx.lookup(_text(key, "key"))
    return getattr(status, "canonical_key", None) or (key if _kind(status) == "option" else None)


def _deprecated(ctx: RuleContext, key: object) -> bool:
    status = ctx.lookup(_text(key, "key"))
    return bool(getattr(status, "deprecated", False)) or _kind(status) == "deprecated-alias"


def _replacement(ctx: RuleContext, key: object) -> object:
    """The key to use instead of a deprecated or removed one. A plain fallback key (jobmanager.rpc.address
    for rest.address) is an option in its own right and has no replacement."""
    status = ctx.lookup(_text(key, "key"))
    kind = _kind(status)
    replacement = getattr(status, "replacement", None)
    if kind == "deprecated-alias":
        return str(replacement or getattr(status, "canonical_key", None) or "") or None
    if (kind == "option" and getattr(status, "deprecated", False)) or kind == "removed":
        return str(replacement) if replacement else None
    return None


def _version_text(value: object) -> object:
    return None if value is None else str(value)


def _removed_in(ctx: RuleContext, key: object) -> object:
    return _version_text(getattr(ctx.lookup(_text(key, "key")), "removed_in", None))


def _since(ctx: RuleContext, key: object) -> object:
    status = ctx.lookup(_text(key, "key"))
    since = getattr(status, "since", None) or getattr(getattr(status, "spec", None), "since", None)
    return _version_text(since)


def _suggestions(ctx: RuleContext, key: object) -> tuple[str, ...]:
    name = _text(key, "key")
    found = ctx.memo(("suggestions", name), lambda: ctx.catalog.suggest(name, ctx.version))
    if isinstance(found, str):
        return (found,)
    return tuple(str(k) for k in (found or ()))


def _suggest(ctx: RuleContext, key: object) -> object:
    found = _suggestions(ctx, key)
    return found[0] if found else None


_MAX_DISTANCE_CHARS = 256


def _edit_distance(_ctx: RuleContext, a: object, b: object) -> object:
    """Optimal-string-alignment distance (a swap of neighbours counts once), case-insensitive."""
    if a is None or b is None:
        return None
    left, right = _text(a, "text").lower(), _text(b, "text").lower()
    if len(left) > _MAX_DISTANCE_CHARS or len(right) > _MAX_DISTANCE_CHARS:
        return None
    # A common prefix and suffix do not change the distance, and keys share long ones
    # (taskmanager.memory. ...): dropping them first makes the quadratic part small.
    start = 0
    while start < len(left) and start < len(right) and left[start] == right[start]:
        start += 1
    left, right = left[start:], right[start:]
    end = 0
    while end < len(left) and end < len(right) and left[-1 - end] == right[-1 - end]:
        end += 1
    if end:
        left, right = left[:-end], right[:-end]
    previous2: list[int] = []
    previous = list(range(len(right) + 1))
    for i in range(1, len(left) + 1):
        current = [i] + [0] * len(right)
        for j in range(1, len(right) + 1):
            cost = 0 if left[i - 1] == right[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and left[i - 1] == right[j - 2] and left[i - 2] == right[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[len(right)]


def _option_type(ctx: RuleContext, key: object) -> object:
    spec = _spec(ctx, _text(key, "key"))
    return None if spec is None else _type_family(getattr(spec, "type", None))


def _enum_values(spec: Any) -> tuple[str, ...]:
    values = getattr(spec, "enum_values", None) or ()
    return tuple(str(v) for v in values)


def _value_error(ctx: RuleContext, key: object, value: object) -> object:
    """Why Flink would not parse ``value`` for ``key`` (null when it would, or the type is unknown)."""
    spec = _spec(ctx, _text(key, "key"))
    if spec is None or value is None:
        return None
    if "<" in str(getattr(spec, "key", "")):
        # A templated key (metrics.reporter.<name>.port): each plugin declares its own type for the
        # parameter (the Prometheus reporter takes port ranges), so the catalog's type is a guess.
        return None
    family = _type_family(getattr(spec, "type", None))
    if family in ("string", "map"):
        return None
    if isinstance(value, dict):
        return f"expected a single {family} value but found a nested mapping"
    if family == "list":
        return None
    try:
        _convert(family, list(value) if isinstance(value, tuple) else value, _enum_values(spec))
    except FlinktuneError as error:
        return error.message
    return None


def _valid_value(ctx: RuleContext, key: object, value: object) -> bool:
    return _value_error(ctx, key, value) is None


def _default(ctx: RuleContext, key: object) -> object:
    spec = _spec(ctx, _text(key, "key"))
    if spec is None:
        return None
    default = getattr(spec, "default", None)
    if default is None:
        return None
    try:
        return _convert(_type_family(getattr(spec, "type", None)), default, _enum_values(spec))
    except FlinktuneError:
        return None


# ---------------------------------------------------------------------------------------------
# Config functions: the effective typed value for the target version


def _config(ctx: RuleContext, key: object) -> object:
    name = _text(key, "key")

    def compute() -> object:
        resolved = ctx.resolve(name)
        spec = resolved.spec
        if spec is None or resolved.value is None:
            # The target version does not read this key (unknown, removed, not yet there), or
            # the option has no default and is not set.
            return None
        try:
            return _convert(_type_family(spec.type), resolved.value, _enum_values(spec))
        except FlinktuneError:
            return None  # an unparseable value: FTC010 reports it

    return ctx.memo(("config", name), compute)


def _is_set(ctx: RuleContext, key: object) -> bool:
    return _entry_for(ctx, _text(key, "key")) is not None


def _raw(ctx: RuleContext, key: object) -> object:
    entry = _entry_for(ctx, _text(key, "key"))
    return None if entry is None else entry.raw


def _set_key(ctx: RuleContext, key: object) -> object:
    """Which key the file actually uses for ``key`` (itself or a deprecated alias), or null."""
    entry = _entry_for(ctx, _text(key, "key"))
    return None if entry is None else entry.key


# ---------------------------------------------------------------------------------------------
# Model functions (flinktune.model.memory / buffers: numpy-free)


def _memory_source(ctx: RuleContext) -> dict[str, object]:
    """Raw key -> value of the document (last wins); the model resolves aliases and defaults."""
    return dict(ctx.document.values()) if ctx.document is not None else {}


def _derivation(ctx: RuleContext, which: str) -> tuple[object | None, str | None]:
    """(derived memory, Flink's refusal text). Both null when the document sets no size at all
    (deployments often supply it elsewhere, e.g. the operator's spec.taskManager.resource) or a
    value does not parse (the invalid-value rule reports that)."""

    def compute() -> tuple[object | None, str | None]:
        from flinktune.errors import ModelInputError
        from flinktune.model import memory

        source = _memory_source(ctx)
        try:
            if which == "tm":
                options = memory.taskmanager_memory_options(source)
            else:
                options = memory.jobmanager_memory_options(source)
        except ModelInputError:
            return None, None
        if which == "tm":
            sized = (options.process_bytes, options.flink_bytes, options.task_heap_bytes)
        else:
            sized = (options.process_bytes, options.flink_bytes, options.heap_bytes)
        if all(size is None for size in sized):
            return None, None
        try:
            if which == "tm":
                return memory.derive_taskmanager_memory(options, ctx.version), None
            return memory.derive_jobmanager_memory(options), None
        except ModelInputError as error:
            return None, error.message

    return ctx.memo((which + "-derivation", None), compute)  # type: ignore[return-value]


def _tm_derivation(ctx: RuleContext) -> tuple[object | None, str | None]:
    return _derivation(ctx, "tm")


def _jm_derivation(ctx: RuleContext) -> tuple[object | None, str | None]:
    return _derivation(ctx, "jm")


def _tm_memory_error(ctx: RuleContext) -> object:
    return _tm_derivation(ctx)[1]


def _jm_memory_error(ctx: RuleContext) -> object:
    return _jm_derivation(ctx)[1]


_TM_COMPONENTS = ("process", "flink", "framework_heap", "framework_off_heap", "task_heap", "task_off_heap",
                  "managed", "network", "jvm_metaspace", "jvm_overhead")


def _tm_memory(ctx: RuleContext, component: object) -> object:
    name = _text(component, "component")
    if name not in _TM_COMPONENTS:
        known = ", ".join(_TM_COMPONENTS)
        raise ConditionError(f"unknown TaskManager memory component '{name}' (one of {known})")
    derived, _error = _tm_derivation(ctx)
    if derived is None:
        return None
    return _component_bytes(derived, name)


def _component_bytes(derived: object, name: str) -> object:
    attr = {"process": "total_process_bytes", "flink": "total_flink_bytes"}.get(name, f"{name}_bytes")
    value = getattr(derived, attr, None)
    return None if value is None else int(value)


def _network_buffers(ctx: RuleContext) -> object:
    derived, _error = _tm_derivation(ctx)
    return None if derived is None else derived.network_buffers  # type: ignore[attr-defined]


def _fixed_value(ctx: RuleContext, key: object) -> object:
    """The value Flink 2.x hard-codes for a removed buffer option (model.buffers.FIXED_IN_2X)."""
    name = _text(key, "key")
    if ctx.version < FlinkVersion(2, 0):
        return None
    from flinktune.model import buffers

    return buffers.FIXED_IN_2X.get(name)


def _buffer_settings(ctx: RuleContext) -> object:
    """The buffer options in force (flinktune.model.buffers), or null if they do not validate."""

    def compute() -> object:
        from flinktune.errors import ModelInputError
        from flinktune.model import buffers

        def whole(key: str) -> int | None:
            value = _config(ctx, key)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        try:
            return buffers.buffer_settings(
                ctx.version,
                buffers_per_channel=whole(buffers.KEY_BPC),
                floating_per_gate=whole(buffers.KEY_FPG),
                max_buffers_per_channel=whole(buffers.KEY_MAX_PER_CHANNEL),
                max_overdraft_per_gate=(whole(buffers.KEY_OVERDRAFT) if _is_set(ctx, buffers.KEY_OVERDRAFT)
                                        else None),
                required_per_gate_max=whole(buffers.KEY_REQUIRED_MAX),
                sort_shuffle_min_parallelism=whole(buffers.KEY_SORT_MIN_PAR),
                sort_shuffle_min_buffers=whole(buffers.KEY_SORT_MIN_BUF),
            )
        except ModelInputError:
            return None

    return ctx.memo(("buffer-settings", None), compute)


def _worst_case(ctx: RuleContext, parallelism: object, slots: object) -> object:
    if parallelism is None or slots is None:
        return None
    p = _number(parallelism, "parallelism")
    s = _number(slots, "slots")
    if not isinstance(p, int) or not isinstance(s, int) or p < 1 or s < 1:
        return None
    settings = _buffer_settings(ctx)
    if settings is None:
        return None

    def compute() -> object:
        from flinktune.errors import ModelInputError
        from flinktune.model import buffers

        try:
            return buffers.worst_case_taskmanager_buffers(p, s, settings)  # type: ignore[arg-type]
        except ModelInputError:
            return None

    return ctx.memo(("worst-case", (p, s)), compute)


def _buffers_required(ctx: RuleContext, parallelism: object, slots: object) -> object:
    """Buffers one TaskManager must hand out at start-up in the worst case (model.buffers)."""
    demand = _worst_case(ctx, parallelism, slots)
    return None if demand is None else demand.required  # type: ignore[attr-defined]


def _buffers_target(ctx: RuleContext, parallelism: object, slots: object) -> object:
    """Buffers the pools of one TaskManager grow to in the worst case (model.buffers)."""
    demand = _worst_case(ctx, parallelism, slots)
    return None if demand is None else demand.target  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------------
# The registry


def _f(name: str, arity: tuple[int, int], impl: Callable[..., object], doc: str,
       lazy: bool = False) -> Function:
    return Function(name=name, min_args=arity[0], max_args=arity[1], impl=impl, doc=doc, lazy=lazy)


FUNCTIONS: Mapping[str, Function] = {
    fn.name: fn for fn in (
        # control and plain values
        _f("if", (3, 3), _if,
           "if(cond, a, b): a when cond is true, else b (only one side is evaluated)", True),
        _f("coalesce", (1, 8), _coalesce, "coalesce(a, b, ...): the first argument that is not null", True),
        _f("min", (1, 16), _min, "min(a, b, ...) or min(list): smallest number, nulls ignored"),
        _f("max", (1, 16), _max, "max(a, b, ...) or max(list): largest number, nulls ignored"),
        _f("abs", (1, 1), _nullable(lambda x: abs(_number(x, "abs() argument"))), "absolute value"),
        _f("floor", (1, 1), _nullable(lambda x: math.floor(_number(x, "floor() argument"))), "round down"),
        _f("ceil", (1, 1), _nullable(lambda x: math.ceil(_number(x, "ceil() argument"))), "round up"),
        _f("len", (1, 1), _nullable(_len), "length of a string, list or mapping"),
        _f("lower", (1, 1), _nullable(lambda s: _text(s, "lower() argument").lower()), "lower-case text"),
        _f("starts_with", (2, 2), _nullable(lambda s, p: _text(s, "text").startswith(_text(p, "prefix"))),
           "starts_with(text, prefix)"),
        _f("ends_with", (2, 2), _nullable(lambda s, p: _text(s, "text").endswith(_text(p, "suffix"))),
           "ends_with(text, suffix)"),
        _f("any", (1, 1), _any_all(any), "any(list): some item is true"),
        _f("all", (1, 1), _any_all(all), "all(list): every item is true"),
        _f("text", (1, 1), lambda _ctx, value: format_value(value), "text(x): x as text (null gives 'null')"),
        _f("is_power_of_two", (1, 1), _nullable(_is_power_of_two), "whole number that is a power of two"),
        # units
        _f("memory", (1, 1), _memory, "memory(text): bytes of a Flink MemorySize text, null if unparseable"),
        _f("duration", (1, 1), _duration,
           "duration(text): milliseconds of a Flink Duration text, null if unparseable"),
        _f("version_at_least", (1, 1), _version_at_least, "version_at_least('1.18'): target version >= 1.18"),
        # catalog
        _f("status", (1, 1), _status,
           "status(key): option | deprecated-alias | fallback-alias | family | removed | not-yet | unknown"),
        _f("known", (1, 1), _known, "known(key): the target version reads this key"),
        _f("ever_known", (1, 1), _ever_known, "ever_known(key): some supported Flink version has this key"),
        _f("canonical", (1, 1), _canonical, "canonical(key): the option key this key or alias maps to"),
        _f("deprecated", (1, 1), _deprecated, "deprecated(key): deprecated in the target version"),
        _f("replacement", (1, 1), _replacement, "replacement(key): the key to use instead, or null"),
        _f("removed_in", (1, 1), _removed_in, "removed_in(key): version that removed the key, or null"),
        _f("since", (1, 1), _since, "since(key): version that introduced the key, or null"),
        _f("suggest", (1, 1), _suggest, "suggest(key): the closest known key (did-you-mean), or null"),
        _f("suggestions", (1, 1), _suggestions, "suggestions(key): up to 3 close known keys, closest first"),
        _f("edit_distance", (2, 2), _edit_distance,
           "edit_distance(a, b): number of single-character edits (swaps count once), case-insensitive"),
        _f("option_type", (1, 1), _option_type,
           "option_type(key): memory | duration | boolean | integer | long | float | enum | list | map "
           "| string"),
        _f("value_error", (2, 2), _value_error,
           "value_error(key, value): why Flink cannot parse value, or null"),
        _f("valid_value", (2, 2), _valid_value, "valid_value(key, value): Flink can parse value for key"),
        _f("default", (1, 1), _default, "default(key): the option's default in the target version (typed)"),
        # the document
        _f("config", (1, 1), _config,
           "config(key): effective typed value (memory in bytes, durations in ms), the default if unset"),
        _f("is_set", (1, 1), _is_set, "is_set(key): the document sets key (or an alias of it)"),
        _f("raw", (1, 1), _raw, "raw(key): the value text as written, or null"),
        _f("set_key", (1, 1), _set_key, "set_key(key): the key as written in the document (maybe an alias)"),
        # model
        _f("tm_memory_error", (0, 0), _tm_memory_error,
           "tm_memory_error(): Flink's own error text if TaskManager memory derivation fails, else null"),
        _f("jm_memory_error", (0, 0), _jm_memory_error,
           "jm_memory_error(): Flink's own error text if JobManager memory derivation fails, else null"),
        _f("tm_memory", (1, 1), _tm_memory,
           "tm_memory(component): derived TaskManager memory component in bytes ("
           + ", ".join(_TM_COMPONENTS) + ")"),
        _f("fixed_value", (1, 1), _fixed_value,
           "fixed_value(key): the value Flink 2.x hard-codes for a removed buffer option, else null"),
        _f("network_buffers", (0, 0), _network_buffers,
           "network_buffers(): network buffers per TaskManager (network memory / segment size)"),
        _f("buffers_required", (2, 2), _buffers_required,
           "buffers_required(parallelism, slots): buffers one TaskManager must hand out at start-up, worst "
           "case (one all-to-all exchange at that parallelism, every slot busy, every channel remote)"),
        _f("buffers_target", (2, 2), _buffers_target,
           "buffers_target(parallelism, slots): buffers the pools grow to in the same worst case"),
    )
}
