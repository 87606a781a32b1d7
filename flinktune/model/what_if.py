"""``flinktune model``: the model's inputs from flags, a profile and a config file, and its numbers.

``what_if`` gathers every parameter with where it came from (flag, profile line, config line through
the one Situation, sweep, default), the notes a reader needs (fixed 2.x buffers, buffer-timeout
mode, the network-buffer verdict lint and recommend give), and evaluates the formulas
(``flinktune.model.sweep``). Rendering is the report's (``flinktune.report.model``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flinktune.releases import BUFFER_TIMEOUT_SWITCH, BUFFERS_FIXED
from flinktune.versions import FlinkVersion

# Environment parameters that are model parameters of the same name and unit.
_ENV_TO_MODEL = ("rtt", "bandwidth", "parallelism", "slots", "taskmanagers", "exchanges", "record-size",
                 "rate")


@dataclass(frozen=True)
class ModelResult:
    """What ``flinktune model`` computed: the inputs, their sources, notes and every quantity."""

    version: FlinkVersion
    values: dict[str, Any]                    # parameter -> value (a sweep's parameter: its points)
    sources: dict[str, str]                   # parameter -> where it came from
    notes: tuple[str, ...]
    quantities: dict[str, Any]                # name -> flinktune.model.sweep Quantity
    swept: tuple[str, Any] | None             # (parameter, points) of --sweep
    chart: str                                # the quantity charted in a sweep
    show: str | None                          # the quantities shown as columns in a sweep (Q1,Q2)
    origins: tuple[str, ...]                  # where the version and every input came from (-v)
    parallelism: Any = None                   # model.scaling.WhatIf (--capacity), else None


def what_if(flags: Mapping[str, str | None], *, flink_version: str | None = None, profile: Path | None = None,
            config: Path | None = None, sweep: str | None = None, chart: str = "channel_throughput",
            show: str | None = None, parallelism: Any = None) -> ModelResult:
    """The model for ``flags`` (parameter -> text with units; None: not given) over a profile and a
    config file (flags win), with one parameter swept (``PARAM=RANGE``)."""
    from flinktune.model.sweep import PARAM_BY_NAME, evaluate, parse_param_value, parse_sweep
    from flinktune.situation import Environment, parse_parameters, read_profile

    values: dict[str, Any] = {}
    notes: list[str] = []
    sources: dict[str, str] = {}
    # One Environment and one profile format for every command (flinktune.situation); the model's
    # what-if knobs (segment-size, ...) are accepted in a profile here only.
    env = Environment()
    if profile is not None:
        env = read_profile(profile, what_if=True).apply(env)
    given = {name: flags.get(name) for name in _ENV_TO_MODEL}
    env = env.with_values(parse_parameters({**given, "flink-version": flink_version}), "flag")
    version = env.flink_version
    situation = None
    from_config: set[str] = set()
    if config is not None:
        swept_name = sweep.partition("=")[0].strip() if sweep is not None else ""
        version, situation = _from_config(config, env, values, sources, notes, from_config,
                                          settled=(swept_name,))
    _from_environment(env, values, sources, notes)
    version = version or env.flink_version
    if version is None:
        from flinktune.versions import DEFAULT_VERSION

        version = DEFAULT_VERSION
    for name, text in flags.items():
        if text is not None:
            values[name] = parse_param_value(PARAM_BY_NAME[name], text)
            sources[name] = "flag"
    swept = None
    if sweep is not None:
        param, points = parse_sweep(sweep)
        values[param.name] = points
        sources[param.name] = "sweep"
        swept = (param.name, points)
    if BUFFERS_FIXED.applies(version):
        notes.append(f"Flink {version}: buffers-per-channel=2, floating-buffers-per-gate=8, "
                     "max-buffers-per-channel=10 and max-overdraft-buffers-per-gate=20 are hard-coded; "
                     "they cannot be tuned.")
    batch = situation is not None and situation.workload.value == "batch"
    if not batch or sources.get("buffer-timeout") == "flag":
        notes.extend(_timeout_notes(version, values.get("buffer-timeout"), batch=batch))
    if "process-size" in values and "process-size" not in from_config and "network-memory" in from_config:
        notes.append(f"--process-size is not used: {config} sizes the TaskManager memory (give "
                     "--network-memory to try another network size).")
    quantities = evaluate(values, version)
    if situation is not None:
        _with_network_verdict(situation, values, from_config, swept, quantities)
    if batch:
        # StreamGraphGenerator disables checkpointing in BATCH mode: no barriers to drain.
        quantities.pop("barrier_drain_time", None)
        notes.append("BATCH: no checkpoints (Flink disables checkpointing in BATCH mode), so no barrier "
                     "drain time.")
    return ModelResult(version, values, sources, tuple(notes), quantities, swept, chart, show,
                       _origins(values, sources, env), parallelism)


def parallelism_what_if(capacity: str | None, target_rate: str | None, parallelism: str | None,
                        max_parallelism: str | None, keyed: bool, target_utilization: float | None) -> Any:
    """model.scaling.what_if for the parallelism flags (text, as given; the utilisation as a share), or
    None without --capacity."""
    from flinktune.errors import UsageError
    from flinktune.model.scaling import DEFAULT_TARGET_UTILIZATION
    from flinktune.model.scaling import what_if as vertex_what_if

    if capacity is None:
        if target_rate is not None or max_parallelism is not None or keyed or target_utilization is not None:
            raise UsageError("the parallelism what-if needs --capacity (records per busy second of one "
                             "subtask)")
        return None
    if target_rate is None:
        raise UsageError("--capacity needs --target-rate (records/s the vertex must take)")

    def number(text: str, flag: str, integer: bool = False) -> float:
        try:
            value = int(text) if integer else float(text)
        except ValueError:
            kind = "a whole number" if integer else "a number"
            raise UsageError(f"{flag} {text}: expected {kind}") from None
        if not value > 0 or value == float("inf"):
            raise UsageError(f"{flag} {text}: must be above zero")
        return value

    utilization = DEFAULT_TARGET_UTILIZATION if target_utilization is None else target_utilization
    given = int(number(parallelism, "--parallelism", True)) if parallelism else None
    return vertex_what_if(number(target_rate, "--target-rate"), number(capacity, "--capacity"),
                          parallelism=given, keyed=keyed, utilization=utilization,
                          max_parallelism=int(number(max_parallelism, "--max-parallelism", True))
                          if max_parallelism else None)


def _origins(values: dict[str, Any], sources: dict[str, str], env: Any) -> tuple[str, ...]:
    """Where the version and every model input came from; inputs nobody set are the model's
    defaults (docs/model.md), listed so the reader sees every number the formulas used."""
    from flinktune.model.sweep import PARAMS

    version_from = (sources.get("flink-version") or env.location("flink-version")
                    or env.source("flink-version"))
    out = [f"flink-version: {version_from or 'default'}"]
    out.extend(f"{name}: {sources.get(name, 'flag')}" for name in values)
    defaults = [p.name for p in PARAMS if p.name not in values]
    if defaults:
        out.append(f"defaults (docs/model.md): {', '.join(defaults)}")
    return tuple(out)


def _from_environment(env: Any, values: dict[str, Any], sources: dict[str, str], notes: list[str]) -> None:
    """Profile values (flags come later and win)."""
    for name in _ENV_TO_MODEL:
        value = env.value(name)
        if value is not None and env.source(name) == "profile":
            values[name] = float(value)
            sources[name] = env.location(name) or "profile"
    for name, value in env.what_if:
        values[name] = float(value)
        sources[name] = env.location(name) or "profile"
    unused = [name for name in ("latency-target", "skew", "workload")
              if env.value(name) is not None and env.source(name) == "profile"]
    if unused:
        notes.append(f"the profile's {', '.join(unused)} are read by recommend and simulate; the model's "
                     "formulas do not use them.")


def _timeout_notes(version: Any, timeout_value: Any, batch: bool = False) -> list[str]:
    """What the buffer timeout in force means; ``batch``: a BATCH config whose timeout a flag sets
    (Flink ignores it there: a what-if only)."""
    import numpy as np

    from flinktune.model.timeout_mode import buffer_timeout_mode

    if batch:
        return ["--buffer-timeout is a what-if here: Flink uses no buffer timeout for this BATCH job."]
    if timeout_value is None or np.ndim(timeout_value) != 0:
        return []
    value = float(timeout_value)
    if np.isinf(value):
        if not BUFFER_TIMEOUT_SWITCH.applies(version):
            return [f"Flink {version}: 'flush only when full' is env.setBufferTimeout(-1) in code; a config "
                    "file cannot express it before 1.18 (execution.buffer-timeout.enabled: false)."]
        return [buffer_timeout_mode(version, enabled=False).explanation]
    return [buffer_timeout_mode(version, interval_s=value).explanation]


def _from_config(path: Path, env: Any, values: dict[str, Any], sources: dict[str, str],
                 notes: list[str], from_config: set[str], settled: tuple[str, ...] = ()) -> tuple[Any, Any]:
    """What the config sets, read through the one Situation (version, operator spec, legacy keys,
    job), so `model --config` models what `lint` and `recommend` judge; the names it set go to
    ``from_config``. A parallelism or slot count the file gives unreadably is refused as recommend
    refuses it, unless a flag, the profile or the sweep (``settled``) gives it. Returns the version
    and the situation."""
    from flinktune.config.reader import read_config_file
    from flinktune.config.textio import read_text_file
    from flinktune.errors import ConfigError
    from flinktune.model import network_fit
    from flinktune.situation import resolve_situation

    documents = read_config_file(path)
    if not documents:
        raise ConfigError("holds no Flink configuration", file=str(path))
    document = documents[0]
    if len(documents) > 1:
        notes.append(f"{path} holds {len(documents)} configurations; using the first ({document.name}).")
    text = read_text_file(path).text
    situation = resolve_situation(document, text=text, environment=env)
    version = situation.flink_version
    sources["flink-version"] = situation.version.describe()
    notes.extend(situation.notes)
    notes.extend(situation.unreadable_job_values(settled))
    effective = situation.effective

    def put(name: str, value: float, where: str) -> None:
        values[name] = value
        sources[name] = where
        from_config.add(name)

    def where(key: str) -> str:
        entry = effective.entry(key)
        return f"{entry.file}:{entry.line} ({key})" if entry is not None and entry.line else f"{path}: {key}"

    if effective.is_set("taskmanager.memory.segment-size"):
        put("segment-size", float(effective.memory_bytes("taskmanager.memory.segment-size")),
            where("taskmanager.memory.segment-size"))
    if not BUFFERS_FIXED.applies(version):
        for key, name in (("taskmanager.network.memory.buffers-per-channel", "buffers-per-channel"),
                          ("taskmanager.network.memory.floating-buffers-per-gate", "floating")):
            if effective.is_set(key):
                put(name, float(effective.integer(key)), where(key))
    for name in ("parallelism", "slots", "exchanges"):
        found = getattr(situation, name)
        if situation.plan is None and (found.source != "default" or name == "exchanges"):
            put(name, float(found.value), found.describe())
    for key in ("execution.buffer-timeout.interval", "execution.buffer-timeout"):
        if effective.is_set(key) and effective.status(key).kind == "option":
            duration = effective.duration(key)
            if duration is not None:
                put("buffer-timeout", duration.seconds, where(key))
            break
    if effective.is_set("execution.buffer-timeout.enabled") and effective.boolean(
            "execution.buffer-timeout.enabled") is False:
        put("buffer-timeout", float("inf"), where("execution.buffer-timeout.enabled"))
    if situation.workload.value == "batch":
        # Flink turns the buffer timeout off for a BATCH job, whatever the file says: 1.13 to 1.17
        # StreamGraphGenerator.setDefaultBufferTimeout(-1), 1.18+ execution.buffer-timeout.enabled=false.
        from flinktune.model.timeout_mode import buffer_timeout_mode

        put("buffer-timeout", float("inf"), situation.workload.describe())
        notes.append(buffer_timeout_mode(version, batch_runtime=True).explanation)
    memory = network_fit.taskmanager_memory(situation)
    if memory.error is not None and memory.sized:
        sizes = ("taskmanager.memory.process.size", "taskmanager.memory.flink.size",
                 "taskmanager.memory.task.heap.size")
        entry = next((effective.entry(k) for k in sizes if effective.entry(k) is not None), None)
        raise ConfigError(f"Flink would refuse this TaskManager memory configuration: {memory.error}",
                          file=entry.file if entry else str(path), line=None if entry is None else entry.line)
    if memory.memory is None:
        notes.append(f"{path} sets no TaskManager memory size (Flink refuses to start such a config); "
                     "assuming taskmanager.memory.process.size: 1728m (the size Flink's distribution ships).")
        return version, situation
    put("network-memory", float(memory.memory.network_bytes), f"{path}: derived ({memory.memory.path})")
    verdict = network_fit.network_verdict(situation)
    if verdict.fit is not None and verdict.demand is not None:
        state, at_bound = network_fit.fit_words(verdict.fit, verdict.minimum_fit, "does NOT fit")
        fails = ("; a job with that many exchanges would fail with: " if at_bound else ": ")
        race = f" ({verdict.fit.racing_text})" if verdict.fit.message and verdict.fit.racing_text else ""
        notes.append("network buffers (the check lint and recommend make): "
                     f"{verdict.demand.required} needed, {verdict.fit.total_buffers} available: {state} "
                     f"({verdict.assumption})"
                     + (f"{fails}{verdict.fit.message}{race}" if verdict.fit.message else ""))
    return version, situation


# Model parameters the network-buffer demand and the buffers available depend on; the config's
# situation sees parallelism, slots, taskmanagers and exchanges through its environment.
_DEMAND = ("parallelism", "slots", "taskmanagers", "exchanges", "segment-size", "buffers-per-channel",
           "floating", "process-size", "network-memory")
_JOB = ("parallelism", "slots", "taskmanagers", "exchanges")
_KEYS = {"segment-size": "taskmanager.memory.segment-size",
         "buffers-per-channel": "taskmanager.network.memory.buffers-per-channel",
         "floating": "taskmanager.network.memory.floating-buffers-per-gate"}
# A sweep of a demand parameter with --config is judged point by point (one verdict each).
MAX_VERDICT_POINTS = 500


def _with_network_verdict(situation: Any, values: dict[str, Any], from_config: set[str],
                          swept: tuple[str, Any] | None, quantities: dict[str, Any]) -> None:
    """With --config the memory figures (required, target, available, fits) are THE network verdict
    of the situation (network_fit.network_verdict, what lint and recommend report), at every point of
    a sweep: one required figure and one verdict per report. A batch job's demand is its busiest
    stage (model.batch), not the streaming chain."""
    import numpy as np

    from flinktune.errors import ModelInputError, UsageError
    from flinktune.model import network_fit
    from flinktune.model.sweep import PARAM_BY_NAME, Quantity
    from flinktune.units import readable

    per_point = swept is not None and swept[0] in _DEMAND
    points = list(swept[1]) if per_point and swept is not None else [None]
    if len(points) > MAX_VERDICT_POINTS:
        raise UsageError(f"--sweep {swept[0]}: with --config each point is judged as lint and "  # type: ignore[index]
                         f"recommend judge it; at most {MAX_VERDICT_POINTS} points")
    rows = []
    for point in points:
        at = dict(values)
        if point is not None and swept is not None:
            at[swept[0]] = float(point)
        verdict = network_fit.network_verdict(_situation_at(situation, at, from_config, swept))
        if verdict.fit is None or verdict.demand is None:
            where = "" if point is None or swept is None else \
                f" at {swept[0]}={readable(float(point), PARAM_BY_NAME[swept[0]].unit)}"
            reason = verdict.memory.error or verdict.settings_error or "no TaskManager memory size"
            raise ModelInputError(f"no network-buffer verdict{where}: {reason}")
        rows.append((verdict.demand.required, verdict.demand.target, verdict.available,
                     verdict.segment_bytes, verdict.fit.fits))
    # Floats as the formulas give them (a JSON field keeps its type), fits a bool.
    required, target, available, segment, fits = (
        np.array(column, dtype=bool if i == 4 else np.float64) if per_point
        else (bool(column[0]) if i == 4 else float(column[0]))
        for i, column in enumerate(zip(*rows, strict=True)))
    batch = situation.workload.value == "batch"

    def put(name: str, value: Any, formula: str | None = None) -> None:
        old = quantities[name]
        quantities[name] = Quantity(name, old.unit, formula if batch and formula else old.formula, value,
                                    old.section)

    put("buffers_required_per_taskmanager", required, "busiest batch stage's required (lint's verdict)")
    put("buffers_target_per_taskmanager", target, "busiest batch stage's target (lint's verdict)")
    put("network_buffers_available", available)
    put("fits", fits, "every batch stage, in run order, fits (lint's verdict)")
    put("requested_memory_usage", 100 * np.asarray(target) / np.maximum(available, 1))
    put("network_memory_required", np.asarray(required) * np.asarray(segment))


def _situation_at(situation: Any, at: dict[str, Any], from_config: set[str],
                  swept: tuple[str, Any] | None) -> Any:
    """The config's situation with the model's own values where they are not the config's: a swept
    job parameter in its environment; a flag's, profile's or sweep's segment size, buffers per
    channel, floating buffers or network memory as the option Flink reads; the process size when
    the file sizes no memory (the model assumes one)."""
    from flinktune.config.types import ConfigEntry
    from flinktune.record import replace
    from flinktune.situation import parse_parameters

    env = situation.environment
    if swept is not None and swept[0] in _JOB:
        env = env.with_values(parse_parameters({swept[0]: str(int(at[swept[0]]))}), "flag")
    settings: dict[str, str] = {}
    for name, key in _KEYS.items():
        if name in at and name not in from_config:
            settings[key] = str(int(at[name])) if name != "segment-size" else f"{int(at[name])}b"
    if "network-memory" in at and "network-memory" not in from_config:
        size = f"{int(at['network-memory'])}b"
        settings["taskmanager.memory.network.min"] = settings["taskmanager.memory.network.max"] = size
    if "network-memory" not in from_config and not situation.sets_memory_size("taskmanager"):
        from flinktune.model.sweep import PARAM_BY_NAME

        process = at.get("process-size", PARAM_BY_NAME["process-size"].default)
        settings["taskmanager.memory.process.size"] = f"{int(process)}b"
    if env is situation.environment and not settings:
        return situation
    document = situation.document
    entries = (*(e for e in document.entries if e.key not in settings),
               *(ConfigEntry(k, v, v, document.path, 0) for k, v in settings.items()))
    return replace(situation, environment=env, document=replace(document, entries=entries))
