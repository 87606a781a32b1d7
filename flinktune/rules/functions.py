"""The short, fixed list of named functions rule conditions may call.

Each function receives the evaluation context (target version, the document, the environment,
the option catalog and the model) and plain arguments, and returns plain data. Values are in
the language's units: memory in bytes, durations in milliseconds. A function returns ``null``
when it cannot answer (unset key, unparseable value, derivation refused) so that conditions
built on it stay false instead of crashing; the value's syntax is another rule's business.

Over 500 lines: it is the language's whole function table (one small entry per function, each with
its signature and help text), kept in one place so the table and its docs cannot drift; deployment
and general predicates live in deployment_functions.py and general_functions.py.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

from flinktune.config.types import ConfigDocument, ConfigEntry
from flinktune.errors import ConditionError, FlinktuneError
from flinktune.releases import BUFFERS_FIXED, JAVA_11_MINIMUM
from flinktune.rules.lang import Function, to_value, truthy
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
                 env: Mapping[str, object] | None = None, situation: Any = None) -> None:
        self.version = version
        self.document = document
        self.env = dict(env or {})
        self._memo: dict[tuple[str, object], object] = {}
        # Process scope (flinktune.deployment): the deployment and the process a rule is evaluated for;
        # document_at(path) gives the configuration read from a file (a process's mounted config).
        self.deployment: Any = None
        self.process: Any = None
        self.document_at: Any = None
        self.text: str | None = None    # the manifest text of the document, when known (its spec)
        if situation is not None:
            self.__dict__["situation"] = situation

    @cached_property
    def situation(self) -> Any:
        """The resolved situation (flinktune.situation) of the document: lint's runner passes the one it
        resolved; otherwise (rule examples, tests) one is resolved here with ``version`` as given and
        ``env`` as flags."""
        from flinktune.situation import Environment, resolve_situation
        from flinktune.situation.environment import FIELD

        given = {k: v for k, v in self.env.items() if k in FIELD and k != "flink-version" and v is not None}
        environment = Environment().with_values({**given, "flink-version": self.version}, "flag")
        if self.document is None:
            from flinktune.config.types import ConfigDocument, ConfigFormat

            document = ConfigDocument("<none>", ConfigFormat.FLAT, ())
        else:
            document = self.document
        return resolve_situation(document, text=self.text, environment=environment, catalog=self.catalog)

    @cached_property
    def catalog(self) -> Any:
        from flinktune.config.catalog import load_catalog

        return load_catalog()

    @cached_property
    def effective(self) -> Any:
        """The document as the version reads it, operator spec fields and legacy heap keys folded in."""
        if self.document is None:
            from flinktune.config.effective import EffectiveConfig

            return EffectiveConfig(None, self.version, self.catalog)
        return self.situation.effective

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


_KEY_COLON = re.compile(r"([A-Za-z0-9_.-]+):(?=\s|$)")


def _keys_in(ctx: RuleContext, text: object) -> object:
    """The Flink keys written as ``key:`` inside a text (a value that swallowed the next line), also
    when glued to the end of a word (``truejobmanager.rpc.address:``)."""
    if not isinstance(text, str) or ":" not in text:
        return ()
    found: list[str] = []
    for match in _KEY_COLON.finditer(text[:2000]):
        word = match.group(1)
        for start in range(len(word)):
            candidate = word[start:]
            if "." in candidate and (start == 0 or candidate[0].isalpha()) and _ever_known(ctx, candidate):
                found.append(candidate)
                break
    return tuple(found)


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


def _derivation(ctx: RuleContext, which: str) -> tuple[object | None, str | None]:
    """(derived memory, Flink's refusal text) for the situation's effective configuration
    (model.network_fit: the one derivation lint, recommend and model share). With no size set at all
    the refusal is reported for a complete file and nothing for an overlay (situation.completeness);
    both null when a value does not parse (the invalid-value rule reports that)."""
    if ctx.document is None:
        return None, None

    def compute() -> tuple[object | None, str | None]:
        from flinktune.model import network_fit

        if which == "tm":
            verdict = network_fit.taskmanager_memory(ctx.situation)
            return verdict.memory, verdict.error
        memory, error, _sized = network_fit.jobmanager_memory(ctx.situation)
        return memory, error

    return ctx.memo((which + "-derivation", None), compute)  # type: ignore[return-value]


def _tm_derivation(ctx: RuleContext) -> tuple[object | None, str | None]:
    return _derivation(ctx, "tm")


def _jm_derivation(ctx: RuleContext) -> tuple[object | None, str | None]:
    return _derivation(ctx, "jm")


_DERIVATIONS = {"taskmanager": "tm", "jobmanager": "jm"}


def _memory_error(ctx: RuleContext, process: object) -> object:
    which = _DERIVATIONS.get(_text(process, "process"))
    if which is None:
        raise ConditionError(f"unknown process '{process}' (taskmanager or jobmanager)")
    return _derivation(ctx, which)[1]


_TM_COMPONENTS = ("process", "flink", "framework_heap", "framework_off_heap", "task_heap", "task_off_heap",
                  "managed", "network", "jvm_metaspace", "jvm_overhead", "segment")


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


def _fixed_value(ctx: RuleContext, key: object) -> object:
    """The value Flink 2.x hard-codes for a removed buffer option (model.buffers.FIXED_IN_2X)."""
    name = _text(key, "key")
    if not BUFFERS_FIXED.applies(ctx.version):
        return None
    from flinktune.model import buffers

    return buffers.FIXED_IN_2X.get(name)


def _buffer_settings(ctx: RuleContext) -> object:
    """The buffer options in force (flinktune.model.buffers), or null if they do not validate."""

    def compute() -> object:
        from flinktune.errors import ModelInputError
        from flinktune.model import network_fit

        try:
            return network_fit.buffer_settings(ctx.situation)
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


def _network_fit(ctx: RuleContext) -> object:
    """The situation's network-buffer verdict (model.network_fit.network_verdict: the same numbers
    recommend and `model --config` use), as a mapping; null without a document or a derivable memory."""
    if ctx.document is None:
        return None

    def compute() -> object:
        from flinktune.model import network_fit
        from flinktune.units import format_memory

        situation = ctx.situation
        verdict = network_fit.network_verdict(situation)
        if verdict.fit is None or verdict.demand is None:
            return None
        out = verdict.as_dict()
        memory = verdict.memory.memory
        needed = verdict.needed_network_bytes()
        changes = network_fit.network_fix_changes(situation)
        fix = changes[0] if len(changes) == 1 else None
        exchanges = verdict.exchanges
        out.update({
            "network": memory.network_bytes if memory is not None else None,
            "busy": min(verdict.slots.value, verdict.parallelism.value),
            "needed": needed,
            "fix_key": fix[0] if fix else None,
            "fix_value": fix[1] if fix else None,
            "fix_text": _settings_text(changes) if changes else "give the TaskManagers more memory",
            # The demand the fix is sized for, when it is the pessimistic bound (not the certain minimum).
            "sized_for": (f"sized for the {exchanges.value}-exchange bound, {verdict.demand.required} "
                          "buffers, with 25% headroom; "
                          if exchanges is not None and verdict.minimum_demand is not None else ""),
            "exchanges_source": None if exchanges is None else exchanges.describe(),
            "parallelism_source": verdict.parallelism.describe(),
            "minimum_fits": None if verdict.minimum_fit is None else verdict.minimum_fit.fits,
            "needed_text": None if needed is None else format_memory(needed),
            # What the demand assumes about the graph's shape (a blocking batch job: one stage at a time).
            "shape": ("one blocking stage at a time, channels local only where the cluster guarantees it"
                      if verdict.demand.assumption.startswith("batch job") else
                      "every busy slot runs a subtask of every vertex, every channel remote"),
        })
        return out

    # converted to the language's values once (FTC030 and FTC034 read its fields many times)
    return ctx.memo(("network-fit", None), lambda: to_value(compute()))


# ---------------------------------------------------------------------------------------------
# Values of free-text options, JVM flags, deployment hints (issue 14)

# Docker build arguments (Dockerfile ARG, BuildKit's automatic platform ARGs): they exist only
# while an image is built, so nothing can fill them in a running container.
_BUILD_ARGS = ("TARGETARCH", "TARGETOS", "TARGETPLATFORM", "TARGETVARIANT", "BUILDPLATFORM", "BUILDARCH",
               "BUILDOS")
_PLACEHOLDER = re.compile(
    r"\$\{(?:" + "|".join(_BUILD_ARGS) + r")\}"
    r"|/path/to(?:/|$)"                                       # the docs' example path, copied verbatim
    r"|<(?i:your|my|path|bucket|host|insert|replace)[-_ a-zA-Z]*>"
    r"|\b(?:CHANGE_?ME|REPLACE_?ME|YOUR_[A-Z_]+)\b")


def _settings_text(changes: tuple[tuple[str, str], ...]) -> str:
    """``set a: 1, b: 2 and c: 3``."""
    items = [f"{key}: {value}" for key, value in changes]
    return "set " + (", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else items[0])


def _placeholder(_ctx: RuleContext, text: object) -> object:
    """The first placeholder in ``text`` that nothing fills in (see _PLACEHOLDER), or null."""
    if not isinstance(text, str):
        return None
    found = _PLACEHOLDER.search(text)
    if found is None:
        return None
    # ${NAME} is shown as $NAME: finding messages never carry braces (they read as unfilled fields).
    return found.group(0).replace("${", "$").replace("}", "")


_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


def _uri_scheme(_ctx: RuleContext, text: object) -> object:
    """The scheme of a Flink Path text (``s3`` for s3://b/p), or null when it has none (a plain path;
    a Windows drive letter such as D:/x is a path, not a scheme)."""
    if not isinstance(text, str):
        return None
    found = _SCHEME.match(text.strip())
    if found is None or len(found.group(1)) == 1:
        return None
    return found.group(1).lower()


# Container service names and image paths that show a file is meant for Docker or Kubernetes.
_CONTAINER_HOSTS = re.compile(
    r"^(?:flink[-_])?job[-_]?manager(?:[-_].*)?$|^.*-jobmanager(?:[-.].*)?$|^[0-9a-f]{12}$")
_CONTAINER_PATH = re.compile(r"(?:^|[/\\_.-])(?:docker|k8s|kubernetes|helm|compose)(?:[/\\_.-]|$)",
                             re.IGNORECASE)


def _containerised(ctx: RuleContext) -> bool:
    """The document shows it runs in containers: a Kubernetes manifest, a docker/k8s/helm folder in
    its path, a Docker-style JobManager service name, or a path inside the Flink image (/opt/flink)."""

    def compute() -> bool:
        document = ctx.document
        if document is None:
            return False
        if document.format.value in ("FlinkDeployment", "ConfigMap"):
            return True
        if _CONTAINER_PATH.search(document.path):
            return True
        values = document.values()
        address = values.get("jobmanager.rpc.address")
        if isinstance(address, str) and _CONTAINER_HOSTS.match(address.strip().lower()):
            return True
        return any(isinstance(v, str) and ("file:///opt/flink/" in v or v.startswith("/opt/flink/"))
                   for v in values.values())

    return bool(ctx.memo(("containerised", None), compute))


# The options of a JVM command line: -XX:[+-]Name (the name's letters), -X... and --name, each after
# the start or whitespace (a value glued to another word is not an option).
_JVM_OPTION = re.compile(r"(?:^|\s)(?:-XX:[+-]?([A-Za-z]+)|-(X\w+)|--([a-z][\w-]*))")


def _jvm_options(_ctx: RuleContext, text: object) -> tuple[str, ...]:
    """The names of the -XX, -X and -- options in a JVM command-line text, in order (PrintGCDateStamps
    for -XX:+PrintGCDateStamps, Xincgc, illegal-access for --illegal-access=permit)."""
    if not isinstance(text, str):
        return ()
    return tuple(m.group(1) or m.group(2) or m.group(3) for m in _JVM_OPTION.finditer(text))


_JDK_IN_PATH = re.compile(
    r"(?:java|jdk|openjdk|jre|corretto|temurin|zulu)[-_@]?(?:ce-java)?(?:1\.)?(\d{1,2})(?!\d)", re.IGNORECASE)


def _jdk(ctx: RuleContext) -> object:
    """The JDK major version the file shows (env.java.home such as /usr/lib/jvm/java-11-openjdk, else
    the official Flink image tag of the manifest, flink:1.18-java17), else 11 for Flink 2.x (it
    requires Java 11+), else null."""
    home = _raw(ctx, "env.java.home")
    if isinstance(home, str):
        found = _JDK_IN_PATH.search(home)
        if found:
            return int(found.group(1))
    situation = ctx.__dict__.get("situation")
    document = getattr(situation, "document", None) or ctx.document
    if document is not None and document.jdk_hint is not None:
        # the image tag's JDK: from a manifest, or from the deployment that runs the file
        return document.jdk_hint
    return 11 if JAVA_11_MINIMUM.applies(ctx.version) else None


def _deprecated_since(ctx: RuleContext, key: object) -> object:
    """The version that deprecated ``key`` ('1.13 or earlier' when the oldest catalogued one did)."""
    since = getattr(ctx.lookup(_text(key, "key")), "deprecated_since", None)
    if since is None:
        return None
    return f"{since} or earlier" if since == SUPPORTED[0] else str(since)


# Deprecated keys whose successor is not a renamed key (so the catalog has no replacement for
# them) but a different setting that does the job. Sources: the 1.10/1.11 memory migration guide
# (legacy heap sizes: total Flink memory for standalone, total process memory in containers),
# NettyShuffleEnvironmentOptions (numberOfBuffers: network memory = buffers x segment size),
# MetricOptions (reporter .class -> .factory.class), ClusterOptions / TaskManagerOptions 1.19
# (evenly-spread-out-slots -> taskmanager.load-balance.mode: SLOTS).
_SUCCESSORS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"jobmanager\.heap\.(?:size|mb)"),
     "jobmanager.memory.process.size (containers) or jobmanager.memory.flink.size (standalone)"),
    (re.compile(r"taskmanager\.heap\.(?:size|mb)"),
     "taskmanager.memory.process.size (containers) or taskmanager.memory.flink.size (standalone)"),
    (re.compile(r"taskmanager\.network\.numberOfBuffers"),
     "taskmanager.memory.network.min/max (buffers x taskmanager.memory.segment-size)"),
    (re.compile(r"metrics\.reporter\.([^.]+)\.class"), "metrics.reporter.{0}.factory.class"),
    (re.compile(r"cluster\.evenly-spread-out-slots"), "taskmanager.load-balance.mode: SLOTS"),
)


def _successor(ctx: RuleContext, key: object) -> object:
    """What to use instead of a deprecated key: the catalog's replacement key, else the setting
    that took over its job (_SUCCESSORS), else null."""
    name = _text(key, "key")
    found = _replacement(ctx, name)
    if found is not None:
        return found
    stated = getattr(ctx.lookup(name), "successor", None)
    if stated:
        return stated
    for pattern, successor in _SUCCESSORS:
        match = pattern.fullmatch(name)
        if match:
            return successor.format(*match.groups())
    return None


def _completeness(ctx: RuleContext) -> object:
    """'complete' or 'overlay': whether the document is the whole configuration Flink starts with
    (flinktune.situation: a project setting, what the file shows, else complete)."""
    situation = getattr(ctx, "situation", None)
    found = getattr(situation, "completeness", None)
    return getattr(found, "value", None) or "complete"


def _shows_complete(ctx: RuleContext) -> bool:
    """The document is evidently the whole configuration Flink starts with (flinktune.situation:
    ``shows_complete``)."""
    from flinktune.situation.resolve import shows_complete

    situation = getattr(ctx, "situation", None)
    return shows_complete(ctx.document, getattr(situation, "completeness", None))


_MOUNT_PATH = re.compile(r"^\s*-?\s*mountPath:\s*[\"']?([^\"'\s#]+)", re.MULTILINE)


def _volume_mounted(ctx: RuleContext, path: object) -> bool:
    """A Kubernetes manifest in the same file mounts a volume at (a parent of) ``path``, e.g. a
    checkpoint directory file:///flink-data/cp on a volume mounted at /flink-data."""
    document = ctx.document
    if document is None or document.format.value not in ("FlinkDeployment", "ConfigMap"):
        return False

    def mounts() -> tuple[str, ...]:
        from pathlib import Path

        from flinktune.config.textio import read_text_file

        try:
            text = read_text_file(Path(document.path)).text
        except (FlinktuneError, OSError):
            return ()
        return tuple(m.rstrip("/") for m in _MOUNT_PATH.findall(text) if m.rstrip("/"))

    found = ctx.memo(("mounts", None), mounts)
    local = re.sub(r"^file://", "", _text(path, "path"))
    return any(local == m or local.startswith(m + "/") for m in found)  # type: ignore[union-attr]


# Keys whose value is a secret: S3/S3A/Azure/GCS credentials, passwords of key stores, SASL JAAS
# configs (they embed the password), tokens.
_CREDENTIAL_KEY = re.compile(
    r".*(?:secret-key|secret\.key|secret-access-key|password|\.secret|sasl\.jaas\.config)"
    r"|fs\.azure\.account\.key\..+")


def _credential_key(_ctx: RuleContext, key: object) -> bool:
    return isinstance(key, str) and _CREDENTIAL_KEY.fullmatch(key) is not None


def _strip_suffix(_ctx: RuleContext, text: object, suffix: object) -> object:
    value, tail = _text(text, "text"), _text(suffix, "suffix")
    return value[: -len(tail)] if tail and value.endswith(tail) else value


# What the last word of a key says about its value. A did-you-mean across two kinds (rest.bind-host ->
# rest.bind-port) would put an address into a port, so such candidates are dropped.
_WORD_KINDS = {
    **dict.fromkeys(("host", "hosts", "hostname", "address", "addresses"), "address"),
    **dict.fromkeys(("port", "ports"), "port"),
    **dict.fromkeys(("dir", "dirs", "path", "paths", "directory", "directories", "localdir"), "path"),
    **dict.fromkeys(("timeout", "interval", "delay", "duration", "ttl"), "duration"),
    **dict.fromkeys(("size", "memory", "bytes", "mb", "kb"), "size"),
    **dict.fromkeys(("fraction", "ratio"), "fraction"),
    **dict.fromkeys(("enabled", "enable", "disabled"), "switch"),
}
# Words that name the same thing: a key that uses one where Flink uses the other is the same setting.
_SYNONYMS = {"host": ("address", "hostname"), "hostname": ("host", "address"), "address": ("host",),
             "enable": ("enabled",), "enabled": ("enable",), "dirs": ("dir",), "dir": ("dirs",)}


def _last_word(key: str) -> str:
    return re.split(r"[.-]", key.lower())[-1]


def _key_kind(key: str) -> str | None:
    return _WORD_KINDS.get(_last_word(key))


def _typed_suggestions(ctx: RuleContext, key: object) -> tuple[str, ...]:
    """suggestions(key) without candidates whose last word names another kind of value."""
    name = _text(key, "key")
    kind = _key_kind(name)
    found = _suggestions(ctx, name)
    if kind is None:
        return found
    return tuple(k for k in found if _key_kind(k) in (None, kind))


def _synonym_key(ctx: RuleContext, key: object) -> object:
    """The known key that differs from ``key`` only by a synonym in its last word
    (rest.bind-host -> rest.bind-address), or null."""
    name = _text(key, "key")
    word = _last_word(name)
    stem = name[: len(name) - len(word)]
    for other in _SYNONYMS.get(word, ()):
        candidate = stem + other
        if _known(ctx, candidate):
            return candidate
    return None


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
        _f("keys_in", (1, 1), _keys_in,
           "keys_in(text): Flink keys written as 'key:' inside a text (also glued to a word), in order"),
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
        _f("memory_error", (1, 1), _memory_error,
           "memory_error(process): Flink's own error text if the memory derivation of process "
           "('taskmanager' or 'jobmanager') fails, else null"),
        _f("tm_memory", (1, 1), _tm_memory,
           "tm_memory(component): derived TaskManager memory component in bytes ("
           + ", ".join(_TM_COMPONENTS) + "; network buffers: tm_memory('network') // tm_memory('segment'))"),
        _f("fixed_value", (1, 1), _fixed_value,
           "fixed_value(key): the value Flink 2.x hard-codes for a removed buffer option, else null"),
        _f("buffers_required", (2, 2), _buffers_required,
           "buffers_required(parallelism, slots): buffers one TaskManager must hand out at start-up, worst "
           "case (one all-to-all exchange at that parallelism, every slot busy, every channel remote)"),
        _f("network_fit", (0, 0), _network_fit,
           "network_fit(): the network-buffer verdict of the situation (fits, fails_for_sure, required, "
           "minimum_required, available, segment_bytes, parallelism, slots, busy, exchanges, graph_known, "
           "assumption, message, needed, fix_key, fix_value): the numbers recommend and model use"),
        _f("buffers_target", (2, 2), _buffers_target,
           "buffers_target(parallelism, slots): buffers the pools grow to in the same worst case"),
        # values, JVM flags and deployment hints
        _f("placeholder", (1, 1), _placeholder,
           "placeholder(text): the first placeholder nothing fills in (${TARGETARCH}, /path/to/, "
           "<your-...>), or null"),
        _f("uri_scheme", (1, 1), _uri_scheme,
           "uri_scheme(text): the scheme of a path (s3, hdfs, file), or null"),
        _f("containerised", (0, 0), _containerised,
           "containerised(): the document shows it runs in containers (manifest, docker/k8s path, service "
           "names, /opt/flink paths)"),
        _f("jvm_options", (1, 1), _jvm_options,
           "jvm_options(text): the names of the -XX, -X and -- options in a JVM command line, in order "
           "(-XX:+PrintGCDateStamps -> PrintGCDateStamps, --illegal-access=deny -> illegal-access)"),
        _f("jdk", (0, 0), _jdk,
           "jdk(): the JDK major version the file shows (env.java.home; 11 for Flink 2.x), or null"),
        _f("deprecated_since", (1, 1), _deprecated_since,
           "deprecated_since(key): the Flink version that deprecated key, or null"),
        _f("successor", (1, 1), _successor,
           "successor(key): the key or setting that replaces a deprecated key, or null"),
        _f("strip_suffix", (2, 2), _strip_suffix, "strip_suffix(text, suffix): text without suffix"),
        _f("credential_key", (1, 1), _credential_key,
           "credential_key(key): the key holds a secret (secret keys, passwords, SASL JAAS configs)"),
        _f("shows_complete", (0, 0), _shows_complete,
           "shows_complete(): the document is evidently the whole configuration (stated, a mounted "
           "ConfigMap, Docker entrypoint traces, or a full file)"),
        _f("volume_mounted", (1, 1), _volume_mounted,
           "volume_mounted(path): a manifest in the same file mounts a volume at (a parent of) path"),
        _f("completeness", (0, 0), _completeness,
           "completeness(): 'complete' or 'overlay' (the file is merged into another configuration)"),
        _f("typed_suggestions", (1, 1), _typed_suggestions,
           "typed_suggestions(key): suggestions(key) without keys whose name says another kind of value "
           "(port for host)"),
        _f("synonym_key", (1, 1), _synonym_key,
           "synonym_key(key): the known key that differs only by a synonym in its last word "
           "(bind-host -> bind-address), or null"),
    )
}


def _with_deployment_functions() -> Mapping[str, Function]:
    from flinktune.rules.deployment_functions import DEPLOYMENT_FUNCTIONS
    from flinktune.rules.general_functions import GENERAL_FUNCTIONS

    return {**FUNCTIONS, **GENERAL_FUNCTIONS, **DEPLOYMENT_FUNCTIONS}


FUNCTIONS = _with_deployment_functions()
