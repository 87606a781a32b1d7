"""``flinktune model``: what-if numbers from the analytic model (see docs/model.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from flinktune.cli.common import EXIT_OK, emit_report, guarded

# (option name, help) for every model parameter; values are text so they can carry units.
_PARAM_OPTIONS = (
    "rtt", "bandwidth", "parallelism", "slots", "taskmanagers", "exchanges", "segment-size",
    "buffers-per-channel", "floating", "record-size", "rate", "buffer-timeout", "receiver-free",
    "per-buffer-overhead", "per-buffer-header", "process-size", "network-memory", "hot-channels",
)

# Flink keys that set a model parameter when --config is given.
_CONFIG_KEYS = {
    "taskmanager.memory.segment-size": ("segment-size", "memory"),
    "taskmanager.network.memory.buffers-per-channel": ("buffers-per-channel", "int"),
    "taskmanager.network.memory.floating-buffers-per-gate": ("floating", "int"),
    "taskmanager.numberOfTaskSlots": ("slots", "int"),
    "parallelism.default": ("parallelism", "int"),
}

_DEFAULT_COLUMNS = ("channel_throughput", "credit_ceiling", "nic_fair_share", "fill_ratio",
                    "added_latency_mean", "buffers_required_per_taskmanager", "fits")


def model(
    rtt: Annotated[str | None, typer.Option(
        "--rtt", help="Round-trip time, e.g. 2ms (default 1ms).")] = None,
    bandwidth: Annotated[str | None, typer.Option(
        "--bandwidth", help="NIC bandwidth per TaskManager, e.g. 10Gbit/s (default 10Gbit/s).")] = None,
    parallelism: Annotated[str | None, typer.Option(
        "--parallelism", help="Parallelism of every vertex (default 100).")] = None,
    slots: Annotated[str | None, typer.Option("--slots", help="Slots per TaskManager (default 1).")] = None,
    taskmanagers: Annotated[str | None, typer.Option(
        "--taskmanagers", help="TaskManagers (default ceil(parallelism / slots)).")] = None,
    exchanges: Annotated[str | None, typer.Option(
        "--exchanges", help="All-to-all exchanges in the job (default 1; with --config, what lint and "
        "recommend assume: a pessimistic 3).")] = None,
    segment_size: Annotated[str | None, typer.Option(
        "--segment-size", help="Network buffer size, e.g. 32kb (default 32kb).")] = None,
    buffers_per_channel: Annotated[str | None, typer.Option(
        "--buffers-per-channel", help="Exclusive buffers per channel (default 2; fixed on 2.x).")] = None,
    floating: Annotated[str | None, typer.Option(
        "--floating", help="Floating buffers per gate (default 8; fixed on 2.x).")] = None,
    record_size: Annotated[str | None, typer.Option(
        "--record-size", help="Serialized record size, e.g. 200b (default 100b).")] = None,
    rate: Annotated[str | None, typer.Option(
        "--rate", help="Records/s emitted by one producer subtask (default 1e5).")] = None,
    buffer_timeout: Annotated[str | None, typer.Option(
        "--buffer-timeout",
        help="Flush interval; 0 = every record, off = only when full (default 100ms).")] = None,
    receiver_free: Annotated[str | None, typer.Option(
        "--receiver-free", help="Time a receiver holds a buffer before freeing it (default 0).")] = None,
    per_buffer_overhead: Annotated[str | None, typer.Option(
        "--per-buffer-overhead", help="Fixed cost per buffer sent (default 5us).")] = None,
    per_buffer_header: Annotated[str | None, typer.Option(
        "--per-buffer-header", help="Header bytes per buffer sent (default 39b).")] = None,
    process_size: Annotated[str | None, typer.Option(
        "--process-size", help="taskmanager.memory.process.size (default 1728m).")] = None,
    network_memory: Annotated[str | None, typer.Option(
        "--network-memory",
        help="Network memory per TaskManager (default derived from process size).")] = None,
    hot_channels: Annotated[str | None, typer.Option(
        "--hot-channels", help="Channels of a gate with backlog (skew) (default all).")] = None,
    flink_version: Annotated[str | None, typer.Option(
        "--flink-version", metavar="X.Y",
        help="Flink version (default: the profile's, else the --config file's as lint reads it, else 1.20).")
    ] = None,
    profile: Annotated[Path | None, typer.Option(
        "--profile", metavar="FILE", help="YAML file of parameter: value pairs (flags override it).")] = None,
    config: Annotated[Path | None, typer.Option(
        "--config", metavar="FILE", help="Take what a Flink config file sets (flags override it).")] = None,
    sweep: Annotated[str | None, typer.Option(
        "--sweep", metavar="PARAM=RANGE",
        help="Sweep one parameter: a..b (integers), a..b:n[:log], or v1,v2,...")] = None,
    chart: Annotated[str, typer.Option(
        "--chart", metavar="QUANTITY", help="Quantity charted in a sweep.")] = "channel_throughput",
    show: Annotated[str | None, typer.Option(
        "--show", metavar="Q1,Q2", help="Quantities shown as columns in a sweep.")] = None,
    output_format: Annotated[str, typer.Option("--format", "-f", help="text or json.")] = "text",
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="FILE", help="Write the report to FILE (atomically) instead of stdout.")
    ] = None,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Also say where every input came from (flag, profile, config line, "
        "default), in the text report.")] = False,
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", help="Errors only on stderr (model prints no progress or notes there anyway; "
        "accepted as in every command).")] = False,
    no_color: Annotated[bool, typer.Option(
        "--no-color", help="No ANSI colours (the model's report never has any; accepted as in every "
        "command).")] = False,
) -> None:
    """What-if: credit, RTT, bandwidth, buffer timeout and network memory of Flink's network stack."""
    flags = {
        "rtt": rtt, "bandwidth": bandwidth, "parallelism": parallelism, "slots": slots,
        "taskmanagers": taskmanagers, "exchanges": exchanges, "segment-size": segment_size,
        "buffers-per-channel": buffers_per_channel, "floating": floating, "record-size": record_size,
        "rate": rate, "buffer-timeout": buffer_timeout, "receiver-free": receiver_free,
        "per-buffer-overhead": per_buffer_overhead, "per-buffer-header": per_buffer_header,
        "process-size": process_size, "network-memory": network_memory, "hot-channels": hot_channels,
    }

    # The text report is plain (rich with no colour system) and model writes nothing on stderr
    # but errors, so --no-color and --quiet change nothing here; they exist so that every command
    # takes the same shared flags.
    del quiet, no_color

    def run() -> int:
        text = _run(flags, flink_version, profile, config, sweep, chart, show, output_format, verbose)
        if output_format == "json":
            from flinktune.cli.common import json_output

            text = json_output("model", [str(p) for p in (config, profile) if p is not None], text)
        emit_report(text, output)
        return EXIT_OK

    raise typer.Exit(guarded(run))


def _run(flags: dict[str, str | None], flink_version: str | None, profile: Path | None, config: Path | None,
         sweep: str | None, chart: str, show: str | None, output_format: str, verbose: bool = False) -> str:
    from flinktune.errors import UsageError
    from flinktune.model.sweep import PARAM_BY_NAME, evaluate, parse_param_value, parse_sweep
    from flinktune.situation import Environment, parse_parameters, read_profile

    if output_format not in ("text", "json"):
        raise UsageError(f"--format must be text or json, not '{output_format}'")
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
    if config is not None:
        version = _from_config(config, env, values, sources, notes)
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
    if version.major >= 2:
        notes.append(f"Flink {version}: buffers-per-channel=2, floating-buffers-per-gate=8, "
                     "max-buffers-per-channel=10 and max-overdraft-buffers-per-gate=20 are hard-coded; "
                     "they cannot be tuned.")
    notes.extend(_timeout_notes(version, values.get("buffer-timeout")))
    quantities = evaluate(values, version)
    if output_format == "json":
        return _render_json(version, values, sources, notes, quantities, swept)
    origins = _origins(values, sources, env) if verbose else None
    return _render_text(version, values, sources, notes, quantities, swept, chart, show, origins)


def _origins(values: dict[str, Any], sources: dict[str, str], env: Any) -> list[str]:
    """--verbose: where the version and every model input came from; inputs nobody set are the
    model's defaults (docs/model.md), listed so the reader sees every number the formulas used."""
    from flinktune.model.sweep import PARAMS

    version_from = (sources.get("flink-version") or env.location("flink-version")
                    or env.source("flink-version"))
    out = [f"flink-version: {version_from or 'default'}"]
    out.extend(f"{name}: {sources.get(name, 'flag')}" for name in values)
    defaults = [p.name for p in PARAMS if p.name not in values]
    if defaults:
        out.append(f"defaults (docs/model.md): {', '.join(defaults)}")
    return out


# Environment parameters that are model parameters of the same name and unit.
_ENV_TO_MODEL = ("rtt", "bandwidth", "parallelism", "slots", "taskmanagers", "exchanges", "record-size",
                 "rate")


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


def _timeout_notes(version: Any, timeout_value: Any) -> list[str]:
    import numpy as np

    from flinktune.model.timeout_mode import buffer_timeout_mode

    if timeout_value is None or np.ndim(timeout_value) != 0:
        return []
    value = float(timeout_value)
    if np.isinf(value):
        if version.major == 1 and version.minor < 18:
            return [f"Flink {version}: 'flush only when full' is env.setBufferTimeout(-1) in code; a config "
                    "file cannot express it before 1.18 (execution.buffer-timeout.enabled: false)."]
        return [buffer_timeout_mode(version, enabled=False).explanation]
    return [buffer_timeout_mode(version, interval_s=value).explanation]


def _from_config(path: Path, env: Any, values: dict[str, Any], sources: dict[str, str],
                 notes: list[str]) -> Any:
    """What the config sets, read through the one Situation (version, operator spec, legacy keys,
    job), so `model --config` models what `lint` and `recommend` judge. Returns the version."""
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
    effective = situation.effective

    def put(name: str, value: float, where: str) -> None:
        values[name] = value
        sources[name] = where

    def where(key: str) -> str:
        entry = effective.entry(key)
        return f"{entry.file}:{entry.line} ({key})" if entry is not None and entry.line else f"{path}: {key}"

    if effective.is_set("taskmanager.memory.segment-size"):
        put("segment-size", float(effective.memory_bytes("taskmanager.memory.segment-size")),
            where("taskmanager.memory.segment-size"))
    if version.major < 2:
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
        return version
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
    return version


# ------------------------------------------------------------------------------------------ output

def _fmt(value: Any, unit: str) -> str:
    import math

    import numpy as np

    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    v = float(value)
    if math.isnan(v):
        return "n/a"
    if math.isinf(v):
        return ("off" if unit == "s" else "unbounded") if v > 0 else "-inf"
    if unit == "B":
        for size, label in ((1024**3, "GiB"), (1024**2, "MiB"), (1024, "KiB")):
            if abs(v) >= size:
                return f"{v / size:,.2f} {label}"
        return f"{v:,.0f} B"
    if unit == "B/s":
        for size, label in ((1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s")):
            if abs(v) >= size:
                return f"{v / size:,.2f} {label}"
        return f"{v:,.1f} B/s"
    if unit == "s":
        if v == 0:
            return "0 s"
        for size, label in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
            if abs(v) >= size:
                return f"{v / size:,.3g} {label}"
        return f"{v * 1e9:,.3g} ns"
    if unit == "%":
        return f"{v:,.1f} %"
    if unit == "buffers" and v.is_integer():
        return f"{v:,.0f}"
    text = f"{v:,.4g}"
    return f"{text} {unit}".rstrip() if unit not in ("", "x") else (text + ("x" if unit == "x" else ""))


def _scalar(value: Any) -> Any:
    import numpy as np

    array = np.asarray(value)
    return array.item() if array.ndim == 0 else value


def _render_text(version: Any, values: dict[str, Any], sources: dict[str, str], notes: list[str],
                 quantities: dict[str, Any], swept: tuple[str, Any] | None, chart: str,
                 show: str | None, origins: list[str] | None = None) -> str:
    import io

    import numpy as np
    from rich.console import Console
    from rich.table import Table

    from flinktune.errors import UsageError
    from flinktune.model.sweep import PARAM_BY_NAME

    buffer = io.StringIO()
    console = Console(file=buffer, width=120, color_system=None, highlight=False)
    console.print(f"flinktune model  (Flink {version})")
    inputs = ", ".join(f"{name}={_fmt(_scalar(v), PARAM_BY_NAME[name].unit)}" for name, v in values.items()
                       if np.ndim(v) == 0)
    if inputs:
        console.print(f"inputs: {inputs}")
    if origins:
        console.print("sources:")
        for origin in origins:
            console.print(f"  {origin}")
    for note in notes:
        console.print(f"note: {note}")
    if swept is None:
        table = Table(show_header=True, header_style="bold")
        table.add_column("section")
        table.add_column("quantity")
        table.add_column("value", justify="right")
        table.add_column("formula")
        for q in quantities.values():
            table.add_row(q.section, q.name, _fmt(_scalar(q.value), q.unit), q.formula)
        console.print(table)
        return buffer.getvalue()
    name, points = swept
    columns = [c.strip() for c in show.split(",")] if show else list(_DEFAULT_COLUMNS)
    unknown = [c for c in [*columns, chart] if c not in quantities]
    if unknown:
        raise UsageError(f"unknown quantity {', '.join(unknown)} (one of {', '.join(quantities)})")
    param_unit = PARAM_BY_NAME[name].unit
    table = Table(show_header=True, header_style="bold")
    table.add_column(name, justify="right", overflow="fold")
    for column in columns:
        unit = quantities[column].unit
        table.add_column(f"{column}" + (f" [{unit}]" if unit else ""), justify="right", overflow="fold")
    size = len(points)
    broadcast = {c: np.broadcast_to(np.asarray(quantities[c].value), (size,)) for c in {*columns, chart}}
    limit = 200
    for i in range(min(size, limit)):
        cells = (_fmt(broadcast[c][i], quantities[c].unit) for c in columns)
        table.add_row(_fmt(points[i], param_unit), *cells)
    console.print(table)
    if size > limit:
        console.print(f"... {size - limit} more rows (use --format json for all)")
    console.print(f"\n{chart} ({quantities[chart].formula}) against {name}:")
    console.print(_bar_chart([_fmt(points[i], param_unit) for i in range(min(size, limit))],
                             broadcast[chart][:limit], quantities[chart].unit))
    return buffer.getvalue()


def _bar_chart(labels: list[str], values: Any, unit: str, width: int = 50) -> str:
    """Plain-text horizontal bars (no colour), one line per point, scaled to the largest finite value."""
    import numpy as np

    numeric = np.asarray(values, dtype=np.float64)
    finite = numeric[np.isfinite(numeric)]
    top = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    label_width = max((len(label) for label in labels), default=0)
    lines = []
    for label, value in zip(labels, numeric, strict=True):
        if not np.isfinite(value):
            bar = "~" * width
        else:
            eighths = round(max(float(value), 0.0) / top * width * 8)
            bar = "█" * (eighths // 8) + ("▏▎▍▌▋▊▉"[eighths % 8 - 1] if eighths % 8 else "")
        lines.append(f"{label.rjust(label_width)} │{bar.ljust(width)} {_fmt(value, unit)}")
    return "\n".join(lines)


def _render_json(version: Any, values: dict[str, Any], sources: dict[str, str], notes: list[str],
                 quantities: dict[str, Any], swept: tuple[str, Any] | None) -> str:
    import json

    from flinktune.model.sweep import to_jsonable

    payload = {
        "flink_version": str(version),
        "parameters": {name: to_jsonable(v) for name, v in values.items()
                       if swept is None or name != swept[0]},
        "sources": sources,
        "notes": notes,
        "sweep": None if swept is None else {"parameter": swept[0], "values": to_jsonable(swept[1])},
        # One type per field: a single value under "value", a sweep's one value per point under
        # "values" (a list), never a field that is a number in one output and a list in another.
        "quantities": {q.name: {("value" if swept is None else "values"):
                                _one_type(to_jsonable(q.value), swept),
                                "unit": q.unit, "formula": q.formula, "section": q.section}
                       for q in quantities.values()},
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def register(app: typer.Typer) -> None:
    app.command("model")(model)


def _one_type(value: Any, swept: tuple[str, Any] | None) -> Any:
    """In a sweep every quantity is a list with one value per point, also one the swept
    parameter does not change (the model gives those as one number)."""
    if swept is None or isinstance(value, list):
        return value
    return [value] * len(to_jsonable_points(swept[1]))


def to_jsonable_points(points: Any) -> list[Any]:
    from flinktune.model.sweep import to_jsonable

    converted = to_jsonable(points)
    return converted if isinstance(converted, list) else [converted]
