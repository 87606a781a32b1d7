"""What-if evaluation: every derived quantity of the model for given (or swept) parameters.

``evaluate(params, version)`` broadcasts scalar and array parameters together and returns named
quantities, each with its unit and the name of the formula (documented in docs/model.md). One
million points evaluate in well under a second (benchmarks/bench_model.py).

Scenario assumptions: every vertex has parallelism ``parallelism`` and is joined to the next by an
all-to-all pipelined exchange (``exchanges`` of them); default slot sharing with ``slots`` slots per
TaskManager; each producer subtask emits ``rate`` records per second of ``record_size`` bytes, spread
evenly over its ``parallelism`` channels; all channels equally hot unless stated.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from flinktune.errors import FlinktuneError, ModelInputError, UsageError
from flinktune.model import timeout
from flinktune.model._arrays import as_array
from flinktune.model.buffers import INT_MAX
from flinktune.model.memory import TaskManagerMemoryOptions, derive_taskmanager_memory
from flinktune.releases import BUFFERS_FIXED, GATE_REQUIRED_MAX
from flinktune.units import parse_bandwidth, parse_duration_s, parse_float, parse_int, parse_size_bytes
from flinktune.versions import DEFAULT_VERSION, FlinkVersion

MAX_SWEEP_POINTS = 10_000_000


@dataclass(frozen=True)
class Param:
    name: str        # as on the command line / in a profile
    unit: str
    kind: str        # duration | bandwidth | memory | int | float
    default: float | None
    help: str

    @property
    def field(self) -> str:
        return self.name.replace("-", "_")


PARAMS: tuple[Param, ...] = (
    Param("rtt", "s", "duration", 0.001, "round-trip time between TaskManagers"),
    Param("bandwidth", "B/s", "bandwidth", 1.25e9, "NIC bandwidth of a TaskManager (10Gbit/s)"),
    Param("parallelism", "", "int", 100, "parallelism of every vertex"),
    Param("slots", "", "int", 1, "slots per TaskManager (taskmanager.numberOfTaskSlots)"),
    Param("taskmanagers", "", "int", None, "TaskManagers (default: ceil(parallelism / slots))"),
    Param("exchanges", "", "int", 1, "all-to-all exchanges in the job (keyBy, rebalance, ...)"),
    Param("segment-size", "B", "memory", 32768, "taskmanager.memory.segment-size"),
    Param("buffers-per-channel", "", "int", 2, "taskmanager.network.memory.buffers-per-channel"),
    Param("floating", "", "int", 8, "taskmanager.network.memory.floating-buffers-per-gate"),
    Param("record-size", "B", "memory", 100, "serialized record size"),
    Param("rate", "records/s", "float", 1e5, "records per second emitted by one producer subtask"),
    Param("buffer-timeout", "s", "duration", 0.1, "flush interval; 0 = every record, inf = only when full"),
    Param("receiver-free", "s", "duration", 0.0, "time the receiving task holds a buffer before freeing it"),
    Param("per-buffer-overhead", "s", "duration", timeout.DEFAULT_PER_BUFFER_OVERHEAD_S,
          "fixed handling time per network buffer sent"),
    Param("per-buffer-header", "B", "memory", timeout.DEFAULT_PER_BUFFER_HEADER_BYTES,
          "header bytes per network buffer sent"),
    Param("process-size", "B", "memory", 1728 * 1024**2, "taskmanager.memory.process.size"),
    Param("network-memory", "B", "memory", None, "network memory per TaskManager (default: derived)"),
    Param("hot-channels", "", "int", None, "channels of a gate with backlog (default: all)"),
)
PARAM_BY_NAME = {p.name: p for p in PARAMS}
FIXED_ON_2X = ("buffers-per-channel", "floating")


@dataclass(frozen=True)
class Quantity:
    name: str
    unit: str
    formula: str
    value: Any           # float / bool / str, or an ndarray of them
    section: str


def parse_param_value(param: Param, text: object) -> float:
    """One value of ``param`` from text (``2ms``, ``10Gbit/s``, ``32kb``, ``1e5``) or a number, by the
    one unit rule (flinktune.units): durations and bandwidths need their unit, sizes are MemorySize."""
    what = f"--{param.name}"
    try:
        if isinstance(text, bool):
            raise ModelInputError(f"{what}: {text!r} is not a value")
        if param.kind == "duration":
            special = ({"inf": math.inf, "off": math.inf, "disabled": math.inf, "-1": math.inf}
                       if param.name == "buffer-timeout" else None)
            return parse_duration_s(text, what=what, special=special,  # type: ignore[arg-type]
                                    positive=param.name == "rtt")
        if param.kind == "bandwidth":
            return parse_bandwidth(text, what=what)  # type: ignore[arg-type]
        if param.kind == "memory":
            return float(parse_size_bytes(text, what=what))  # type: ignore[arg-type]
        if param.kind == "int":
            if isinstance(text, float) and text.is_integer():
                return float(text)
            if isinstance(text, str) and re.fullmatch(r"\s*[0-9.]+[eE][+]?[0-9]+\s*", text):
                value = float(text)
                if value.is_integer():
                    return value
            return float(parse_int(text if isinstance(text, int) else str(text), bits=64))
        return parse_float(text if isinstance(text, int | float) else str(text))
    except ModelInputError:
        raise
    except FlinktuneError as error:
        message = error.message
        raise ModelInputError(message if message.startswith(f"{what}:") else f"{what}: {message}") from None


def parse_sweep(spec: str) -> tuple[Param, NDArray[np.float64]]:
    """``name=a..b`` (integers, step 1), ``name=a..b:n`` (n points, linear), ``name=a..b:n:log``,
    or ``name=v1,v2,...``; values take units (``rtt=1ms..10ms:10``)."""
    if "=" not in spec:
        raise UsageError(f"--sweep '{spec}' is not like buffers-per-channel=1..16 or rtt=1ms,2ms,5ms")
    name, _, values = spec.partition("=")
    name = name.strip()
    param = PARAM_BY_NAME.get(name)
    if param is None:
        raise UsageError(f"--sweep: unknown parameter '{name}' (one of {', '.join(PARAM_BY_NAME)})")
    values = values.strip()
    if ".." in values:
        lo_text, _, rest = values.partition("..")
        hi_text, _, shape = rest.partition(":")
        lo, hi = parse_param_value(param, lo_text), parse_param_value(param, hi_text)
        if not lo < hi:
            raise UsageError(f"--sweep {name}: the range must go up ({lo_text}..{hi_text})")
        count_text, _, scale = shape.partition(":")
        if not count_text:
            if param.kind != "int":
                raise UsageError(f"--sweep {name}: give the number of points, e.g. {name}={values}:20")
            points = np.arange(lo, hi + 1, dtype=np.float64)
        else:
            count = parse_int(count_text)
            if count < 2:
                raise UsageError(f"--sweep {name}: need at least 2 points")
            if count > MAX_SWEEP_POINTS:
                raise UsageError(f"--sweep {name}: at most {MAX_SWEEP_POINTS} points")
            if scale == "log":
                if lo <= 0:
                    raise UsageError(f"--sweep {name}: a log range must start above 0")
                points = np.geomspace(lo, hi, count)
            elif scale in ("", "lin"):
                points = np.linspace(lo, hi, count)
            else:
                raise UsageError(f"--sweep {name}: unknown scale '{scale}' (lin or log)")
            if param.kind == "int":
                points = np.unique(np.round(points))
    else:
        points = np.array([parse_param_value(param, v) for v in values.split(",") if v.strip()],
                          dtype=np.float64)
        if points.size == 0:
            raise UsageError(f"--sweep {name}: no values")
    if points.size > MAX_SWEEP_POINTS:
        raise UsageError(f"--sweep {name}: at most {MAX_SWEEP_POINTS} points")
    return param, points


def _network_buffers(process: NDArray[np.float64], network: NDArray[np.float64] | None,
                     segment: NDArray[np.float64], version: FlinkVersion) -> NDArray[np.float64]:
    """Available buffers per TaskManager; Flink's derivation runs once per distinct input pair."""
    if network is not None:
        return np.floor(network / segment)
    proc, seg = np.broadcast_arrays(process, segment)
    pairs = np.stack([proc.ravel(), seg.ravel()], axis=1)
    unique, inverse = np.unique(pairs, axis=0, return_inverse=True)
    if len(unique) > 10_000:
        raise ModelInputError("sweeping both process-size and segment-size over more than 10,000 "
                              "combinations is not supported")
    counts = np.array([
        derive_taskmanager_memory(TaskManagerMemoryOptions(process_bytes=int(p), segment_bytes=int(s)),
                                  version).network_buffers
        for p, s in unique
    ], dtype=np.float64)
    return counts[np.asarray(inverse).ravel()].reshape(proc.shape)


def _gate_and_partition(bpc: NDArray[np.float64], fpg: NDArray[np.float64], p: NDArray[np.float64],
                        version: FlinkVersion) -> tuple[NDArray[np.float64], ...]:
    """Vectorised ``input_gate_buffers`` / ``result_partition_buffers`` for pipelined-bounded,
    all-remote gates (same formulas as buffers.py, checked against it in the tests)."""
    if not GATE_REQUIRED_MAX.applies(version):
        gate_req = p * bpc + 1
        gate_target = p * bpc + fpg
    else:
        required = np.minimum(float(INT_MAX), p * bpc + 1)
        exclusive = np.minimum(bpc, np.floor((required - 1) / p))
        floating_min = np.maximum(required - p * exclusive, 1)
        floating_max = np.maximum(p * bpc + fpg - p * exclusive, floating_min)
        gate_req = p * exclusive + floating_min
        gate_target = p * exclusive + floating_max
    part_req = p + 1
    part_target = np.maximum(part_req, p * bpc + fpg)
    return gate_req, gate_target, part_req, part_target


def evaluate(params: Mapping[str, Any], version: FlinkVersion = DEFAULT_VERSION) -> dict[str, Quantity]:
    """All derived quantities. ``params`` maps parameter names (``buffers-per-channel`` or
    ``buffers_per_channel``) to numbers or numpy arrays in base units (s, B, B/s)."""
    given = {str(k).replace("_", "-"): v for k, v in params.items() if v is not None}
    unknown = sorted(set(given) - set(PARAM_BY_NAME))
    if unknown:
        raise ModelInputError(f"unknown model parameter(s): {', '.join(unknown)}")
    if BUFFERS_FIXED.applies(version):
        for name in FIXED_ON_2X:
            if name in given and np.any(np.asarray(given[name], dtype=np.float64)
                                        != (2 if name == "buffers-per-channel" else 8)):
                raise ModelInputError(
                    f"{name} is fixed in Flink {version} (buffers-per-channel=2, "
                    "floating-buffers-per-gate=8, "
                    "max-buffers-per-channel=10, max-overdraft-buffers-per-gate=20); it cannot be tuned")
    def get(name: str, **kw: bool) -> NDArray[np.float64]:
        param = PARAM_BY_NAME[name]
        value = given.get(name, param.default)
        integer = param.kind == "int"
        return as_array(name, value, integer=integer, **kw)

    rtt = get("rtt")
    bw = get("bandwidth")
    p = get("parallelism")
    slots = get("slots")
    exchanges = get("exchanges")
    seg = get("segment-size")
    bpc = get("buffers-per-channel", allow_zero=True)
    fpg = get("floating", allow_zero=True)
    rec = get("record-size")
    rate = get("rate")
    tmo = get("buffer-timeout", allow_zero=True, allow_inf=True)
    free = get("receiver-free", allow_zero=True)
    overhead = get("per-buffer-overhead", allow_zero=True)
    header = get("per-buffer-header", allow_zero=True)
    process = get("process-size")
    network = get("network-memory") if "network-memory" in given else None
    if GATE_REQUIRED_MAX.applies(version) and np.any(fpg < 1):
        raise ModelInputError("The configured floating buffer should be at least 1, please increase the "
                              "value of taskmanager.network.memory.floating-buffers-per-gate.")
    tms = get("taskmanagers") if "taskmanagers" in given else np.ceil(p / slots)
    if np.any(tms * slots < p):
        raise ModelInputError("parallelism exceeds taskmanagers * slots: the job cannot be scheduled")
    per_tm = np.minimum(np.ceil(p / tms), slots) if "taskmanagers" in given else np.minimum(slots, p)
    hot = get("hot-channels") if "hot-channels" in given else p
    if np.any(hot > p):
        raise ModelInputError("hot-channels cannot exceed parallelism")

    out: dict[str, Quantity] = {}

    def put(name: str, unit: str, formula: str, value: Any, section: str) -> None:
        out[name] = Quantity(name, unit, formula, value, section)

    put("taskmanagers", "", "ceil(parallelism / slots)", tms, "placement")
    put("subtasks_per_taskmanager", "", "min(slots, parallelism)", per_tm, "placement")
    remote = per_tm * (p - per_tm) * exchanges
    put("remote_channels_per_taskmanager", "", "remote-channels = k*(p-k) per exchange", remote, "placement")
    put("channels_per_connection", "", "multiplexed-channels = k*k per TaskManager pair", per_tm * per_tm,
        "placement")

    bdp = bw * rtt
    put("bandwidth_delay_product", "B", "bdp = bandwidth * rtt", bdp, "credit")
    put("bdp_buffers", "buffers", "bdp / segment", bdp / seg, "credit")
    loop = rtt + free
    credits_all = bpc + fpg / p
    credits_hot = bpc + fpg / hot
    put("credits_per_channel", "buffers", "credits = bpc + floating / hot-channels", credits_hot, "credit")
    put("credit_ceiling_exclusive", "B/s", "ceiling = bpc * segment / (rtt + receiver-free)",
        bpc * seg / loop, "credit")
    put("credit_ceiling", "B/s", "ceiling = credits * segment / (rtt + receiver-free)",
        credits_hot * seg / loop, "credit")
    put("credit_ceiling_one_hot", "B/s", "ceiling = (bpc + floating) * segment / (rtt + receiver-free)",
        (bpc + fpg) * seg / loop, "credit")
    share = bw / np.maximum(remote, 1)
    put("nic_fair_share", "B/s", "share = bandwidth / remote-channels", share, "credit")
    ceiling = credits_hot * seg / loop
    channel = np.minimum(ceiling, share)
    put("channel_throughput", "B/s", "min(credit ceiling, NIC share)", channel, "credit")
    put("credit_bound", "", "ceiling < share (else the NIC share binds)", ceiling < share, "credit")
    put("taskmanager_throughput", "B/s", "channel throughput * remote-channels (<= bandwidth)",
        np.minimum(channel * np.maximum(remote, 1), bw), "credit")
    put("buffers_per_channel_needed", "buffers", "ceil(share * (rtt + receiver-free) / segment)",
        np.ceil(np.round(share * loop / seg, 9)), "credit")
    put("floating_skew_gain", "x", "(bpc + floating/hot) / (bpc + floating/p)", credits_hot / credits_all,
        "credit")

    channel_rate = rate / p
    offered = channel_rate * rec
    put("offered_per_channel", "B/s", "rate * record-size / parallelism", offered, "load")
    with np.errstate(divide="ignore", invalid="ignore"):
        put("channel_utilisation", "", "offered / channel throughput", offered / channel, "load")
    fill_time = seg / offered
    finite_tmo = np.where(np.isinf(tmo), 0.0, tmo)
    per_tick = np.where(np.isinf(tmo), np.inf, offered * finite_tmo)   # bytes gathered per flusher tick
    chunk = np.minimum(seg, np.maximum(rec, per_tick))
    put("buffer_fill_time", "s", "fill-time = segment / offered", fill_time, "timeout")
    put("leaves_full", "", "fill-time <= timeout", fill_time <= tmo, "timeout")
    put("flush_chunk", "B", "chunk = min(segment, max(record, offered * timeout))", chunk, "timeout")
    put("fill_ratio", "", "chunk / segment", chunk / seg, "timeout")
    put("buffers_per_second", "1/s", "offered / chunk", offered / chunk, "timeout")
    wait = np.minimum(fill_time, tmo)
    put("added_latency_mean", "s", "min(fill-time, timeout) / 2", wait / 2, "timeout")
    put("added_latency_max", "s", "min(fill-time, timeout)", wait, "timeout")
    link = np.minimum(share, bw)

    def efficiency(c: NDArray[np.float64]) -> NDArray[np.float64]:
        return (c / link) / ((c + header) / link + overhead)

    put("timeout_throughput_factor", "", "efficiency(chunk) / efficiency(segment)",
        efficiency(chunk) / efficiency(seg), "timeout")
    put("flusher_cpu_share", "", "buffers/s * per-buffer-overhead * channels per subtask",
        offered / chunk * overhead * p, "timeout")

    gate_bytes = (p * bpc + fpg) * seg
    put("gate_inflight_max", "B", "(p * bpc + floating) * segment", gate_bytes, "inflight")
    consume = rate * rec
    put("barrier_drain_time", "s", "gate in-flight (full buffers) / (rate * record-size)",
        gate_bytes / consume, "inflight")

    gate_req, gate_target, part_req, part_target = _gate_and_partition(bpc, fpg, p, version)
    required = per_tm * exchanges * (gate_req + part_req)
    target = per_tm * exchanges * (gate_target + part_target)
    available = _network_buffers(process, network, seg, version)
    put("buffers_required_per_taskmanager", "buffers", "k * exchanges * (gate required + partition required)",
        required, "memory")
    put("buffers_target_per_taskmanager", "buffers", "k * exchanges * (gate target + partition target)",
        target, "memory")
    put("network_buffers_available", "buffers", "floor(network memory / segment)", available, "memory")
    put("fits", "", "required <= available", required <= available, "memory")
    # Not defined (NaN: "n/a" in text, null in JSON) when no buffer is available, not target / 1.
    with np.errstate(divide="ignore", invalid="ignore"):
        usage = np.where(available > 0, 100 * target / np.where(available > 0, available, 1), np.nan)
    put("requested_memory_usage", "%", "100 * target / available", usage, "memory")
    put("network_memory_required", "B", "required * segment", required * seg, "memory")
    return out


def broadcast_shape(quantities: Mapping[str, Quantity]) -> tuple[int, ...]:
    return np.broadcast_shapes(*(np.shape(q.value) for q in quantities.values()))


def to_jsonable(value: Any) -> Any:
    """ndarray / numpy scalars -> lists / Python scalars; inf -> "inf"."""
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return to_jsonable(value.item())
        return [to_jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
