"""What the configuration cannot say about the job: network, scale, load and goals.

Values come, in increasing precedence, from defaults, the config file (slots, parallelism), a
FlinkDeployment's ``spec`` (``spec.job.parallelism``; the operator maps it onto the job), a profile
file, the command-line flags and, with ``--metrics``, what the analysis measured. Each value keeps
where it came from so the report can say which numbers are assumptions.

Units follow ``flinktune model``: ``rate`` is records per second emitted by one producer subtask;
``rtt`` a duration; ``bandwidth`` the NIC bandwidth of one TaskManager.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from flinktune.errors import ConfigError, FlinktuneError, UsageError
from flinktune.model.sweep import Param, parse_param_value
from flinktune.units import parse_bandwidth_bytes_per_s, parse_float, parse_int, parse_memory_size
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

# Assumptions used when nothing says otherwise (docs: a healthy LAN has ~1 ms buffer round trip).
DEFAULT_RTT_S = 0.001
DEFAULT_BANDWIDTH_BYTES_PER_S = 1.25e9   # 10 Gbit/s


@dataclass(frozen=True)
class Environment:
    rtt_s: float | None = None
    bandwidth_bytes_per_s: float | None = None
    parallelism: int | None = None
    slots: int | None = None
    taskmanagers: int | None = None
    exchanges: int | None = None
    record_bytes: float | None = None
    rate_per_subtask: float | None = None      # records/s emitted by one producer subtask
    latency_target_s: float | None = None
    skew: float | None = None
    workload: str | None = None
    flink_version: FlinkVersion | None = None
    sources: tuple[tuple[str, str], ...] = field(default=())   # parameter -> where it came from

    def source(self, name: str) -> str | None:
        for key, where in self.sources:
            if key == name:
                return where
        return None

    def with_values(self, values: Mapping[str, Any], where: str) -> Environment:
        """A copy with ``values`` (parsed, by parameter name) set and their source recorded."""
        changes: dict[str, Any] = {}
        sources = dict(self.sources)
        for name, value in values.items():
            if value is None:
                continue
            changes[_FIELD[name]] = value
            sources[name] = where
        return replace(self, **changes, sources=tuple(sorted(sources.items())))


_FIELD = {
    "rtt": "rtt_s", "bandwidth": "bandwidth_bytes_per_s", "parallelism": "parallelism", "slots": "slots",
    "taskmanagers": "taskmanagers", "exchanges": "exchanges", "record-size": "record_bytes",
    "rate": "rate_per_subtask", "latency-target": "latency_target_s", "skew": "skew",
    "workload": "workload", "flink-version": "flink_version",
}


def parse_parameter(name: str, value: object, *, where: str = "") -> Any:
    """One environment value from text (or a YAML number: seconds for durations, bytes for sizes)."""
    if name not in PARAMETERS:
        raise UsageError(f"unknown environment parameter '{name}' (one of {', '.join(PARAMETERS)})")
    kind = PARAMETERS[name][0]
    prefix = f"{where}{name}: " if where else f"--{name}: "
    if isinstance(value, bool) or value is None:
        raise UsageError(f"{prefix}{value!r} is not a value")
    try:
        if kind == "duration":
            if isinstance(value, int | float):
                seconds = float(value)      # a number in a profile is in seconds, as in `model`
            else:
                # Decimal durations (0.5ms) are fine here: these are measurements, not Flink values.
                seconds = parse_param_value(Param(name, "s", "duration", None, ""), str(value).strip())
            if not math.isfinite(seconds) or seconds <= 0:
                raise UsageError(f"{prefix}must be above zero, got {value!r}")
            return seconds
        if kind == "bandwidth":
            result = parse_bandwidth_bytes_per_s(value if isinstance(value, int | float) else str(value))
            if result <= 0:
                raise UsageError(f"{prefix}must be above zero, got {value!r}")
            return result
        if kind == "memory":
            size = (float(value) if isinstance(value, int | float)
                    else float(parse_memory_size(str(value)).bytes))
            if size <= 0:
                raise UsageError(f"{prefix}must be above zero, got {value!r}")
            return size
        if kind == "int":
            number = parse_int(value if isinstance(value, int) else str(value))
            if number < 1:
                raise UsageError(f"{prefix}must be at least 1, got {value!r}")
            return number
        if kind == "float":
            number_f = parse_float(value if isinstance(value, int | float) else str(value))
            if not math.isfinite(number_f) or number_f <= 0:
                raise UsageError(f"{prefix}must be above zero, got {value!r}")
            return number_f
        if kind == "workload":
            text = str(value).strip().lower()
            if text not in WORKLOADS:
                raise UsageError(f"{prefix}'{value}' is not one of {', '.join(WORKLOADS)}")
            return text
        return parse_version(str(value))
    except UsageError:
        raise
    except FlinktuneError as error:
        raise UsageError(f"{prefix}{error.message}") from None
    except OverflowError:  # float() of a YAML integer with hundreds of digits
        raise UsageError(f"{prefix}{str(value)[:64]} is too large") from None


def parse_parameters(values: Mapping[str, object], *, where: str = "") -> dict[str, Any]:
    return {name: parse_parameter(name, value, where=where) for name, value in values.items()
            if value is not None}


def load_profile(path: str | Path) -> dict[str, Any]:
    """A profile file: a YAML mapping of the parameter names above (``rtt: 2ms``)."""
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
        return {}
    if not isinstance(data, dict):
        raise ConfigError("a profile is a mapping of parameter: value (rtt: 2ms, parallelism: 64, ...)",
                          file=file)
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = str(key).strip().replace("_", "-")
        if name not in PARAMETERS:
            raise ConfigError(f"unknown profile parameter '{key}' (one of {', '.join(PARAMETERS)})",
                              file=file, line=_line_of(text, str(key)))
        try:
            out[name] = parse_parameter(name, value, where="")
        except FlinktuneError as error:
            raise ConfigError(f"{name}: {error.message.removeprefix(f'--{name}: ')}", file=file,
                              line=_line_of(text, str(key))) from None
    return out


def _line_of(text: str, key: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(f"{key}:"):
            return number
    return None
