"""Simulator scenarios: a YAML file validated by pydantic (unknown fields are errors).

Sizes use Flink's MemorySize syntax (``32kb``), bandwidth the CLI syntax (``10Gbit/s``), times a
number with a unit (``100ms``, ``0.5s``, ``20us``; ``0`` alone is allowed). An error is one line
naming the file, the line and the field.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from flinktune.config.safe_load import load_yaml
from flinktune.errors import ScenarioError, ValueSyntaxError
from flinktune.units import (
    SECONDS_PER_TIME_UNIT,
    parse_bandwidth,
    parse_bandwidth_bytes_per_s,
    parse_memory_size,
    split_decimal_time,
)

_TIME_UNITS = ("ns", "us", "µs", "ms", "s", "min")   # of units.SECONDS_PER_TIME_UNIT


def parse_seconds(value: Any) -> float:
    """``100ms`` -> 0.1. A bare number needs a unit unless it is 0."""
    if isinstance(value, bool):
        raise ValueError(f"time '{value}' is a boolean")
    if isinstance(value, int | float):
        if value == 0:
            return 0.0
        raise ValueError(f"time '{value}' needs a unit (ns, us, ms, s, min)")
    parsed = split_decimal_time(str(value)[:200])
    if parsed is None or (parsed[1] is not None and parsed[1] not in _TIME_UNITS):
        raise ValueError(f"time '{value}' is not like 100ms, 0.5s or 20us")
    number, unit = parsed
    if unit is None and number != 0:
        raise ValueError(f"time '{value}' needs a unit (ns, us, ms, s, min)")
    return number * SECONDS_PER_TIME_UNIT[unit or "s"]


def _bytes(value: Any) -> int:
    try:
        return parse_memory_size(value if isinstance(value, int | str) else str(value)).bytes
    except ValueSyntaxError as error:
        raise ValueError(error.message) from None


def _bandwidth(value: Any, info: ValidationInfo) -> float:
    # Python callers (sweeps, tests) pass bytes per second; YAML must spell the unit (the one unit
    # rule, flinktune.units.parse_bandwidth: a bare number, 10G and 10gb are refused).
    try:
        if info.context and info.context.get("numbers_are_seconds"):
            return parse_bandwidth_bytes_per_s(value)
        return parse_bandwidth(value, what="")  # the error names cluster.bandwidth and its line
    except ValueSyntaxError as error:
        raise ValueError(error.message) from None


def _seconds(value: Any, info: ValidationInfo) -> float:
    # Python callers (sweeps, tests) pass floats in seconds; YAML must spell the unit.
    if info.context and info.context.get("numbers_are_seconds") and isinstance(value, int | float) \
            and not isinstance(value, bool):
        return float(value)
    return parse_seconds(value)


def _timeout(value: Any, info: ValidationInfo) -> float | None:
    # Flink's -1 / "execution.buffer-timeout.enabled: false": flush only when a buffer is full.
    if value is None or value is False or value == -1 or str(value).strip().lower() in ("off", "-1"):
        return None
    return _seconds(value, info)


PYTHON_VALUES = {"numbers_are_seconds": True}

Seconds = Annotated[float, BeforeValidator(_seconds), Field(ge=0)]
Bytes = Annotated[int, BeforeValidator(_bytes)]
BytesPerSecond = Annotated[float, BeforeValidator(_bandwidth)]
Timeout = Annotated[float | None, BeforeValidator(_timeout)]


class _Strict(BaseModel):
    # allow_inf_nan=False: an infinite capacity or rate is a typo, and the simulator cannot run it.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class ClusterSpec(_Strict):
    task_managers: int = Field(2, ge=1, le=64)
    slots_per_tm: int = Field(2, ge=1, le=64)
    bandwidth: BytesPerSecond = Field(1.25e9, description="egress bandwidth of each TaskManager's NIC")
    rtt: Seconds = Field(0.001, description="round-trip time between TaskManagers (one way = rtt/2)")


class NetworkSpec(_Strict):
    segment_size: Bytes = 32768
    buffers_per_channel: int = Field(2, ge=0, le=10_000)
    floating_buffers_per_gate: int = Field(8, ge=0, le=100_000)
    # 1 would leave an operator no buffer to write with once every channel holds its current one
    max_buffers_per_channel: int = Field(10, ge=2, le=100_000)
    buffer_timeout: Timeout = 0.1
    credit_based: bool = True
    # Without credits the sender puts at most this much on one TCP connection (Netty's watermark).
    tcp_window: Bytes = 4 * 1024 * 1024
    # Optional overrides of the pool sizes Flink derives (the seed experiment uses 2 buffers).
    output_pool_size: int | None = Field(None, ge=1)
    input_pool_size: int | None = Field(None, ge=1)

    @model_validator(mode="after")
    def _segment(self) -> NetworkSpec:
        if not 64 <= self.segment_size <= 64 * 1024 * 1024:
            raise ValueError("segment_size must be between 64b and 64mb")
        return self


class CostSpec(_Strict):
    """Per-buffer costs that make small (early-flushed) buffers expensive; see docs/simulator.md."""

    # sender Netty thread per message written
    message_overhead: Seconds = 5e-6
    # bytes per message besides the payload: Netty frame header (4 length + 4 magic + 1 id) and the
    # BufferResponse header (16 receiver id + 4 sequence + 4 backlog + 1 type + 1 compressed + 4
    # size) = 39 (NettyMessage.java, Flink 1.13-1.20)
    message_overhead_bytes: Bytes = 39
    # receiving task per buffer polled and deserialised (poll, recycle, credit bookkeeping)
    buffer_overhead: Seconds = 2e-6
    # producing task per subpartition flushed to Netty (every record when buffer-timeout is 0)
    flush_overhead: Seconds = 1e-6


class RecordSize(_Strict):
    fixed: Bytes | None = None
    uniform: tuple[Bytes, Bytes] | None = None
    lognormal_mean: Bytes | None = None
    lognormal_sigma: float = Field(0.5, ge=0, le=3)

    @model_validator(mode="after")
    def _one(self) -> RecordSize:
        given = [x for x in (self.fixed, self.uniform, self.lognormal_mean) if x is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of fixed, uniform, lognormal_mean")
        if self.uniform is not None and not 1 <= self.uniform[0] <= self.uniform[1]:
            raise ValueError("uniform needs 1 <= low <= high")
        if (self.fixed or 1) < 1 or (self.lognormal_mean or 1) < 1:
            raise ValueError("record sizes must be at least 1 byte")
        return self

    @property
    def mean_bytes(self) -> float:
        if self.fixed is not None:
            return float(self.fixed)
        if self.uniform is not None:
            return (self.uniform[0] + self.uniform[1]) / 2
        return float(self.lognormal_mean or 1)


class SpeedChange(_Strict):
    at: Seconds
    factor: float = Field(ge=0, le=1000)
    subtasks: tuple[int, ...] | None = None


class HotSubtask(_Strict):
    index: int = Field(ge=0)
    share: float = Field(gt=0, lt=1)


ShipStrategy = Literal["HASH", "REBALANCE", "FORWARD"]


class InputSpec(_Strict):
    ship_strategy: ShipStrategy = "HASH"
    # HASH only: data skew, either explicit weights per downstream subtask or one hot subtask.
    weights: tuple[float, ...] | None = None
    hot_subtask: HotSubtask | None = None
    # Data skew that differs per producer (e.g. Kafka partitions holding different keys): one row of
    # weights per upstream subtask.
    producer_weights: tuple[tuple[float, ...], ...] | None = None


class VertexSpec(_Strict):
    name: str = Field(min_length=1, max_length=200)
    parallelism: int = Field(ge=1, le=512)
    capacity: float = Field(gt=0, description="records per second one subtask can process at full speed")
    rate: float | None = Field(None, gt=0, description="sources: offered load per subtask (records/s)")
    record_size: RecordSize | None = None
    input: InputSpec | None = None
    subtask_factors: tuple[float, ...] | None = None
    schedule: tuple[SpeedChange, ...] = ()


class CheckpointSpec(_Strict):
    interval: Seconds


class JobSpec(_Strict):
    name: str = Field("simulated-job", min_length=1, max_length=200)
    vertices: tuple[VertexSpec, ...] = Field(min_length=2)


class Scenario(_Strict):
    name: str = Field(min_length=1, max_length=200)
    description: str = ""
    duration: Seconds = 10.0
    warmup: Seconds = 1.0
    sample_interval: Seconds = 1.0
    latency_sample_every: int = Field(4, ge=1)
    start_epoch_ms: int = 1_767_225_600_000  # 2026-01-01T00:00:00Z
    cluster: ClusterSpec = ClusterSpec()
    network: NetworkSpec = NetworkSpec()
    costs: CostSpec = CostSpec()
    checkpoints: CheckpointSpec | None = None
    job: JobSpec
    # What the scenario is built to show (bottleneck, expected signature); exported as
    # ground_truth.json beside the dump so analysis tests can check their verdicts.
    ground_truth: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        if self.duration <= 0 or self.duration > 3600:
            raise ValueError("duration must be > 0 and at most 1h")
        if not 0 < self.sample_interval <= self.duration:
            raise ValueError("sample_interval must be > 0 and at most the duration")
        if self.warmup >= self.duration:
            raise ValueError("warmup must be shorter than the duration")
        slots = self.cluster.task_managers * self.cluster.slots_per_tm
        if self.checkpoints is not None and (not self.network.credit_based
                                             or self.network.buffers_per_channel == 0):
            # aligned barriers hold input buffers; without exclusive credits that can deadlock
            raise ValueError("checkpoints need credit_based: true and buffers_per_channel >= 1")
        names = set()
        for index, vertex in enumerate(self.job.vertices):
            if vertex.name in names:
                raise ValueError(f"vertex name '{vertex.name}' is used twice")
            names.add(vertex.name)
            if vertex.parallelism > slots:
                raise ValueError(f"vertex '{vertex.name}' has parallelism {vertex.parallelism} but the "
                                 f"cluster has only {slots} slots")
            if index == 0:
                if vertex.input is not None:
                    raise ValueError(f"the first vertex '{vertex.name}' is the source and has no input")
                if vertex.record_size is None:
                    raise ValueError(f"the source '{vertex.name}' needs a record_size")
            else:
                if vertex.rate is not None:
                    raise ValueError(f"'rate' is for the source only (vertex '{vertex.name}')")
                spec = vertex.input or InputSpec()
                upstream = self.job.vertices[index - 1]
                if spec.ship_strategy == "FORWARD" and upstream.parallelism != vertex.parallelism:
                    raise ValueError(f"FORWARD into '{vertex.name}' needs equal parallelism")
                skewed = [x for x in (spec.weights, spec.hot_subtask, spec.producer_weights) if x is not None]
                if skewed and spec.ship_strategy != "HASH":
                    raise ValueError(f"weights/hot_subtask into '{vertex.name}' need ship_strategy HASH")
                if len(skewed) > 1:
                    raise ValueError("give one of weights, hot_subtask, producer_weights "
                                     f"into '{vertex.name}'")
                rows = spec.producer_weights or ()
                if spec.producer_weights is not None and (
                        len(rows) != upstream.parallelism
                        or any(len(r) != vertex.parallelism or min(r) < 0 or sum(r) <= 0 for r in rows)):
                    raise ValueError(f"producer_weights into '{vertex.name}' need "
                                     f"{upstream.parallelism} rows of {vertex.parallelism} "
                                     "non-negative values with a positive sum")
                if spec.weights is not None and (len(spec.weights) != vertex.parallelism
                                                 or min(spec.weights) < 0 or sum(spec.weights) <= 0):
                    raise ValueError(f"weights into '{vertex.name}' need {vertex.parallelism} "
                                     "non-negative values with a positive sum")
                if spec.hot_subtask is not None and spec.hot_subtask.index >= vertex.parallelism:
                    raise ValueError(f"hot_subtask index into '{vertex.name}' is out of range")
            if vertex.subtask_factors is not None and (
                    len(vertex.subtask_factors) != vertex.parallelism
                    or any(not 0 < f <= 1000 or math.isnan(f) for f in vertex.subtask_factors)):
                raise ValueError(f"subtask_factors of '{vertex.name}' need {vertex.parallelism} "
                                 "values in (0, 1000]")
            for change in vertex.schedule:
                bad = [s for s in (change.subtasks or ()) if s >= vertex.parallelism]
                if bad:
                    raise ValueError(f"schedule of '{vertex.name}' names subtask {bad[0]} "
                                     f"but parallelism is {vertex.parallelism}")
        return self

    def with_overrides(self, **network: Any) -> Scenario:
        """A copy with some network settings replaced (used by ``--sweep``)."""
        data = self.model_dump()
        data["network"].update(network)
        return Scenario.model_validate(data, context=PYTHON_VALUES)


# --- loading with line numbers -------------------------------------------------------------

def _line_of(node: yaml.Node | None, path: tuple[int | str, ...]) -> int | None:
    """The 1-based line of the YAML node at ``path`` (or of its deepest existing parent)."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in path:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
            if match is None:
                key = next((k for k, _ in node.value if getattr(k, "value", None) == part), None)
                return key.start_mark.line + 1 if key is not None else line
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return line
        line = node.start_mark.line + 1
    return line


def scenario_from_text(text: str, file: str = "<scenario>") -> Scenario:
    data = load_yaml(text, file=file, error=ScenarioError)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)  # line numbers for validation errors
    except (yaml.YAMLError, RecursionError):
        node = None
    if not isinstance(data, dict):
        raise ScenarioError("a scenario is a YAML mapping (name, job, ...)", file=file, line=1)
    try:
        return Scenario.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        loc = tuple(first.get("loc", ()))
        where = ".".join(str(p) for p in loc) or "scenario"
        message = first.get("msg", "invalid").removeprefix("Value error, ")
        if first.get("type") == "extra_forbidden":
            message = "unknown field"
        extra = f" (and {error.error_count() - 1} more problems)" if error.error_count() > 1 else ""
        raise ScenarioError(f"{where}: {message}{extra}", file=file, line=_line_of(node, loc)) from None


def load_scenario(path: str | Path) -> Scenario:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ScenarioError(f"cannot read scenario: {error.strerror or error}", file=str(path)) from None
    if len(raw) > 1_000_000:
        raise ScenarioError("scenario file is larger than 1 MB", file=str(path))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError("scenario file is not UTF-8 text", file=str(path)) from None
    return scenario_from_text(text, file=str(path))
