"""What the configuration cannot say about the job: network, scale, load and goals.

ONE type (``Environment``) and ONE profile format for every command (``lint``, ``model``,
``recommend``, ``simulate``). Values come, in increasing precedence, from defaults, the config file
(slots, parallelism), a FlinkDeployment's ``spec``, a profile file, the command-line flags and,
with ``--metrics``, what the analysis measured. Each value keeps where it came from so the report
can say which numbers are assumptions.

Units (the one rule, flinktune.units): durations and bandwidths need their unit (``rtt: 2ms``,
``bandwidth: 10Gbit/s``; a bare number other than 0 is refused with one line naming file and line);
sizes follow Flink's MemorySize (a bare number is bytes). ``rate`` is records per second emitted
by one producer subtask; ``bandwidth`` the NIC bandwidth of one TaskManager.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flinktune.errors import ConfigError, FlinktuneError, UsageError
from flinktune.record import Record, replace, store
from flinktune.situation.lines import line_of_key
from flinktune.units import (
    parse_bandwidth,
    parse_duration_s,
    parse_float,
    parse_int,
    parse_size_bytes,
)
from flinktune.versions import FlinkVersion, parse_version

WORKLOADS = ("streaming", "batch")

# name -> (kind, help). Names are the flag names without "--" and the keys of a profile file.
PARAMETERS: dict[str, tuple[str, str]] = {
    "rtt": ("duration", "round-trip time between TaskManagers (e.g. 1ms, 2ms across zones)"),
    "bandwidth": ("bandwidth", "NIC bandwidth of one TaskManager (e.g. 10Gbit/s)"),
    "parallelism": ("int", "parallelism of the job's vertices"),
    "slots": ("int", "slots per TaskManager"),
    "taskmanagers": ("int", "number of TaskManagers"),
    "exchanges": ("int", "all-to-all exchanges (keyBy, rebalance) in the job when no plan is given"),
    "record-size": ("memory", "serialized record size"),
    "rate": ("float", "records per second emitted by one producer subtask"),
    "latency-target": ("duration", "end-to-end latency the job must meet"),
    "skew": ("float", "hottest channel's load over the mean (1 = even)"),
    "workload": ("workload", "streaming or batch"),
    "flink-version": ("version", "target Flink version"),
}

# What-if knobs of `flinktune model` (they are config settings, which the other commands read from
# the config file). Same unit rule; "buffer-timeout" also takes off / inf / -1 (flush only when full).
WHAT_IF_PARAMETERS: dict[str, tuple[str, str]] = {
    "segment-size": ("memory", "taskmanager.memory.segment-size"),
    "buffers-per-channel": ("int0", "taskmanager.network.memory.buffers-per-channel"),
    "floating": ("int0", "taskmanager.network.memory.floating-buffers-per-gate"),
    "buffer-timeout": ("timeout", "flush interval; 0 = every record, off = only when full"),
    "receiver-free": ("duration0", "time the receiving task holds a buffer before freeing it"),
    "per-buffer-overhead": ("duration0", "fixed handling time per network buffer sent"),
    "per-buffer-header": ("memory0", "header bytes per network buffer sent"),
    "process-size": ("memory", "taskmanager.memory.process.size"),
    "network-memory": ("memory", "network memory per TaskManager"),
    "hot-channels": ("int", "channels of a gate with backlog (skew)"),
}

# Assumptions used when nothing says otherwise (docs: a healthy LAN has ~1 ms buffer round trip).
DEFAULT_RTT_S = 0.001
DEFAULT_BANDWIDTH_BYTES_PER_S = 1.25e9   # 10 Gbit/s

_TIMEOUT_WORDS = {"off": math.inf, "inf": math.inf, "disabled": math.inf, "-1": math.inf}


class Environment(Record):
    """The environment facts, ``None`` where nothing said them; ``sources`` maps a parameter name to
    the kind of source (flag | profile | metrics | derived | ...) and ``locations`` to its file:line."""

    __slots__ = _fields = ("rtt_s", "bandwidth_bytes_per_s", "parallelism", "slots", "taskmanagers",
                           "exchanges", "record_bytes", "rate_per_subtask", "latency_target_s", "skew",
                           "workload", "flink_version", "sources", "locations", "what_if")
    rtt_s: float | None
    bandwidth_bytes_per_s: float | None
    parallelism: int | None
    slots: int | None
    taskmanagers: int | None
    exchanges: int | None
    record_bytes: float | None
    rate_per_subtask: float | None  # records/s emitted by one producer subtask
    latency_target_s: float | None
    skew: float | None
    workload: str | None
    flink_version: FlinkVersion | None
    sources: tuple[tuple[str, str], ...]  # parameter -> where it came from
    locations: tuple[tuple[str, str], ...]  # parameter -> "profile.yaml:3", "--rtt"
    what_if: tuple[tuple[str, float], ...]  # model-only knobs from a profile

    def __init__(self, rtt_s: float | None = None, bandwidth_bytes_per_s: float | None = None,
                 parallelism: int | None = None, slots: int | None = None, taskmanagers: int | None = None,
                 exchanges: int | None = None, record_bytes: float | None = None,
                 rate_per_subtask: float | None = None, latency_target_s: float | None = None,
                 skew: float | None = None, workload: str | None = None,
                 flink_version: FlinkVersion | None = None, sources: tuple[tuple[str, str], ...] = (),
                 locations: tuple[tuple[str, str], ...] = (),
                 what_if: tuple[tuple[str, float], ...] = ()) -> None:
        store(self, (rtt_s, bandwidth_bytes_per_s, parallelism, slots, taskmanagers, exchanges, record_bytes,
                     rate_per_subtask, latency_target_s, skew, workload, flink_version, sources, locations,
                     what_if))

    def source(self, name: str) -> str | None:
        for key, where in self.sources:
            if key == name:
                return where
        return None

    def location(self, name: str) -> str | None:
        for key, where in self.locations:
            if key == name:
                return where
        return None

    def value(self, name: str) -> Any:
        return getattr(self, FIELD[name])

    def with_values(self, values: Mapping[str, Any], where: str,
                    locations: Mapping[str, str] | None = None) -> Environment:
        """A copy with ``values`` (parsed, by parameter name) set and their source recorded.
        What-if names (``segment-size``) go to ``what_if``."""
        changes: dict[str, Any] = {}
        sources = dict(self.sources)
        places = dict(self.locations)
        what_if = dict(self.what_if)
        for name, value in values.items():
            if value is None:
                continue
            if name in WHAT_IF_PARAMETERS:
                what_if[name] = value
            else:
                changes[FIELD[name]] = value
            sources[name] = where
            if locations and name in locations:
                places[name] = locations[name]
            elif where == "flag":
                places[name] = f"--{name}"
        return replace(self, **changes, sources=tuple(sorted(sources.items())),
                       locations=tuple(sorted(places.items())), what_if=tuple(sorted(what_if.items())))


FIELD = {
    "rtt": "rtt_s", "bandwidth": "bandwidth_bytes_per_s", "parallelism": "parallelism", "slots": "slots",
    "taskmanagers": "taskmanagers", "exchanges": "exchanges", "record-size": "record_bytes",
    "rate": "rate_per_subtask", "latency-target": "latency_target_s", "skew": "skew",
    "workload": "workload", "flink-version": "flink_version",
}


def parse_parameter(name: str, value: object, *, where: str = "") -> Any:
    """One value from text or a YAML scalar, by the one unit rule. ``where`` prefixes messages
    (``--rtt`` for a flag, ``rtt`` inside a profile whose file:line the caller adds)."""
    kind = (PARAMETERS.get(name) or WHAT_IF_PARAMETERS.get(name) or (None,))[0]
    if kind is None:
        known = ", ".join([*PARAMETERS, *WHAT_IF_PARAMETERS])
        raise UsageError(f"unknown parameter '{name}' (one of {known})")
    what = where or f"--{name}"
    if isinstance(value, bool) or value is None:
        raise UsageError(f"{what}: {value!r} is not a value")
    try:
        if kind in ("duration", "duration0", "timeout"):
            # An rtt or latency target ("duration") must be above zero, a bare 0 too (docs/model.md).
            return parse_duration_s(value, what=what,  # type: ignore[arg-type]
                                    special=_TIMEOUT_WORDS if kind == "timeout" else None,
                                    positive=kind == "duration")
        if kind == "bandwidth":
            return parse_bandwidth(value, what=what)  # type: ignore[arg-type]
        if kind in ("memory", "memory0"):
            size = parse_size_bytes(value, what=what)  # type: ignore[arg-type]
            if size <= 0 and kind == "memory":
                raise UsageError(f"{what}: must be above zero, got {value!r}")
            return float(size) if name == "record-size" else size
        if kind in ("int", "int0"):
            number = parse_int(value if isinstance(value, int) else str(value), bits=64)
            if number < (0 if kind == "int0" else 1):
                raise UsageError(f"{what}: must be at least {0 if kind == 'int0' else 1}, got {value!r}")
            return number
        if kind == "float":
            number_f = parse_float(value if isinstance(value, int | float) else str(value))
            if not math.isfinite(number_f) or number_f <= 0:
                raise UsageError(f"{what}: must be above zero, got {value!r}")
            return number_f
        if kind == "workload":
            text = str(value).strip().lower()
            if text not in WORKLOADS:
                raise UsageError(f"{what}: '{value}' is not one of {', '.join(WORKLOADS)}")
            return text
        return parse_version(str(value))
    except UsageError:
        raise
    except FlinktuneError as error:
        message = error.message
        raise UsageError(message if message.startswith(f"{what}:") else f"{what}: {message}") from None
    except OverflowError:  # float() of a YAML integer with hundreds of digits
        raise UsageError(f"{what}: {str(value)[:64]} is too large") from None


def parse_parameters(values: Mapping[str, object], *, where: str = "") -> dict[str, Any]:
    """Flags (text) by parameter name; ``None`` values are skipped."""
    return {name: parse_parameter(name, value, where=where) for name, value in values.items()
            if value is not None}


class Profile(Record):
    """A parsed profile file: values by parameter name and the line each was on."""

    __slots__ = _fields = ("path", "values", "lines")
    path: str
    values: Mapping[str, Any]
    lines: Mapping[str, int]

    def __init__(self, path: str, values: Mapping[str, Any], lines: Mapping[str, int]) -> None:
        store(self, (path, values, lines))

    def locations(self) -> dict[str, str]:
        return {name: f"{self.path}:{line}" for name, line in self.lines.items()}

    def apply(self, env: Environment) -> Environment:
        return env.with_values(self.values, "profile", self.locations())


def read_profile(path: str | Path, *, what_if: bool = False) -> Profile:
    """A profile file: a YAML mapping of the parameter names above (``rtt: 2ms``). ``what_if``
    also accepts the model-only knobs (``segment-size``); other commands refuse them at their line."""
    from flinktune.config.safe_load import load_yaml

    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read profile: {error.strerror or error}", file=file) from None
    except UnicodeDecodeError:
        raise ConfigError("cannot read profile: not UTF-8 text", file=file) from None
    data = load_yaml(text, file=file, prefix="profile is not valid YAML")
    if data is None:
        return Profile(file, {}, {})
    if not isinstance(data, dict):
        raise ConfigError("a profile is a mapping of parameter: value (rtt: 2ms, parallelism: 64, ...)",
                          file=file)
    values: dict[str, Any] = {}
    lines: dict[str, int] = {}
    for key, value in data.items():
        name = str(key).strip().replace("_", "-")
        line = line_of_key(text, str(key))
        if name in WHAT_IF_PARAMETERS and not what_if:
            raise ConfigError(f"{name} is a what-if knob of 'flinktune model'; this command reads it from "
                              "the config file", file=file, line=line)
        if name not in PARAMETERS and name not in WHAT_IF_PARAMETERS:
            known = ", ".join([*PARAMETERS, *WHAT_IF_PARAMETERS] if what_if else PARAMETERS)
            raise ConfigError(f"unknown parameter '{key}' (one of {known})", file=file, line=line)
        try:
            values[name] = parse_parameter(name, value, where=name)
        except FlinktuneError as error:
            raise ConfigError(error.message, file=file, line=line) from None
        if line is not None:
            lines[name] = line
    return Profile(file, values, lines)


def load_profile(path: str | Path, *, what_if: bool = False) -> dict[str, Any]:
    """The values of a profile file by parameter name (see ``read_profile``)."""
    return dict(read_profile(path, what_if=what_if).values)
