"""``recommend``: from a config, the environment and (optionally) measurements to a coherent set of
config changes, each with its reason and its effect in model numbers.

The steps run in a fixed order on a working copy of the file's values; every later step sees the
earlier steps' values, and the network memory is sized last, for the buffer settings actually
recommended. Each decision accepts the current value inside a tolerance band and proposes a value
well inside that band, so running ``recommend`` on its own output proposes nothing more.

Flink facts used here (flink-facts.md; sources in the comments there):
- buffers-per-channel / floating-buffers-per-gate / max-overdraft / sort-shuffle.min-parallelism
  exist in 1.x only; 2.0 hard-codes 2 / 8 / 20 / 1 (NettyShuffleEnvironmentConfiguration @2.0).
- buffers for a target rate: ``throughput * round trip / segment`` (docs: network_mem_tuning).
- buffer timeout: ``execution.buffer-timeout`` up to 1.17; ``.interval`` / ``.enabled`` from 1.18.
- debloating 1.14+; poor with several inputs / unions of different rates; with parallelism above
  ~200 the docs ask for floating buffers >= parallelism (network_mem_tuning @1.15+).
- hash blocking shuffle needs one buffer per subpartition (FLIP-148); sort-merge is the default
  from 1.15 (min-parallelism 1), opt-in before; min-buffers >= 2048 in production; its read
  memory comes out of framework off-heap (batch_shuffle docs, TaskManagerOptions).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from flinktune.advise.deployment import DeploymentSpec, deployment_spec
from flinktune.advise.environment import DEFAULT_BANDWIDTH_BYTES_PER_S, DEFAULT_RTT_S, Environment
from flinktune.advise.measured import NOT_NETWORK, Measured
from flinktune.advise.state import (
    DEBLOAT_DEFAULT_TARGET_S,
    KEY_DEBLOAT,
    KEY_DEBLOAT_TARGET,
    KEY_FLINK,
    KEY_FRAMEWORK_OFF_HEAP,
    KEY_LEGACY_BUFFERS,
    KEY_NET_FRACTION,
    KEY_NET_MAX,
    KEY_NET_MIN,
    KEY_PARALLELISM,
    KEY_PROCESS,
    KEY_READ,
    KEY_RUNTIME_MODE,
    KEY_SEGMENT,
    KEY_SLOTS,
    KEY_TIMEOUT_ENABLED,
    KEY_TIMEOUT_INTERVAL,
    KEY_TIMEOUT_OLD,
    METRICS,
    V1_14,
    V1_16,
    V1_18,
    V2_0,
    ConfigState,
    Job,
)
from flinktune.config.catalog import Catalog, load_catalog
from flinktune.config.types import ConfigDocument, ConfigFormat, ConfigValue
from flinktune.config.writer import Edit, apply_edits
from flinktune.errors import FlinktuneError, ModelInputError
from flinktune.model import buffers as mb
from flinktune.model.blocking import default_batch_shuffle_read_bytes, hash_shuffle_min_bytes
from flinktune.units import format_duration, format_memory, parse_memory_size
from flinktune.versions import FlinkVersion

MIB = 1024**2
V1_15 = FlinkVersion(1, 15)

# Tolerance bands (idempotency): accept what is within the band, propose what is well inside it.
NETWORK_ACCEPT = 1.10            # current network buffers >= 1.10 x required: fine
NETWORK_MARGIN = 1.25            # proposed: >= 1.25 x required (and >= what the pools want, streaming)
THROUGHPUT_HEADROOM = 1.5        # credits for 1.5 x the measured/assumed per-channel rate
MAX_BPC = 16                     # beyond this, bigger segments are the better lever
MAX_SEGMENT = 256 * 1024
LARGE_BATCH_PARALLELISM = 100
HUGE_BATCH_PARALLELISM = 1000
SORT_MIN_BUFFERS_PRODUCTION = 2048   # NettyShuffleEnvironmentOptions description: >= 2048 in production
BATCH_FLOATING = 4096               # batch_shuffle docs' example with buffers-per-channel 0
DEBLOAT_HIGH_PARALLELISM = 200
HEAP_FLOOR_PER_SLOT = 128 * MIB
MAX_PROCESS = 256 * 1024**3          # no TaskManager larger than this is proposed
NICE_TIMEOUTS_MS = (1, 2, 5, 10, 20, 50, 100)
MIN_SEGMENT_DEFAULT = 256            # taskmanager.memory.min-segment-size, 1.15+ (1 kb in 1.14)

# Network-stack keys this advisor owns: removed ones are deleted with an explanation.
OWNED_PREFIXES = ("taskmanager.network.", "taskmanager.memory.segment-size", "taskmanager.memory.network.",
                  "execution.buffer-timeout", "taskmanager.net.")


@dataclass(frozen=True)
class Effect:
    name: str
    label: str
    unit: str
    before: float | None
    after: float | None


@dataclass(frozen=True)
class Change:
    key: str
    action: str                      # set | delete | rename | manual (outside what the writer edits)
    current: str | None              # as written (None: not set)
    default: str | None              # what Flink uses when the key is not set
    recommended: str | None          # None for delete
    why: str
    new_key: str | None = None
    line: int | None = None
    effects: tuple[Effect, ...] = ()
    metrics: tuple[str, ...] = field(default=(), repr=False)

    @property
    def shown_key(self) -> str:
        return self.new_key if self.action == "rename" and self.new_key else self.key

    def edit(self) -> Edit | None:
        if self.action == "set":
            return Edit("set", self.key, self.recommended)
        if self.action == "delete":
            return Edit("delete", self.key)
        if self.action == "rename":
            return Edit("rename", self.key, self.recommended, self.new_key)
        return None


@dataclass(frozen=True)
class Recommendation:
    path: str
    format: ConfigFormat
    name: str | None
    version: FlinkVersion
    job: Job
    environment: Environment
    changes: tuple[Change, ...]
    notes: tuple[str, ...]
    measured: Measured | None
    before: dict[str, float | None]
    after: dict[str, float | None]
    demand_assumption: str
    original_fit: mb.NetworkFit | None
    original_memory_error: str | None
    final_fit: mb.NetworkFit | None
    final_memory_error: str | None
    original_text: str
    new_text: str
    assumptions: tuple[str, ...] = ()

    @property
    def edits(self) -> list[Edit]:
        return [e for e in (c.edit() for c in self.changes) if e is not None]

    @property
    def manual(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.action == "manual")


# ---------------------------------------------------------------------------------------------
# Helpers


def _mb_text(num_bytes: int) -> str:
    return format_memory(num_bytes)


def _round_up_mib(num_bytes: float) -> int:
    return math.ceil(num_bytes / MIB) * MIB


def _next_pow2(n: float) -> int:
    return 1 << max(12, math.ceil(math.log2(max(n, 1))))


def _size_text(num_bytes: float) -> str:
    """A computed size for a sentence (config values use Flink's own syntax instead)."""
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if num_bytes >= size:
            return f"{num_bytes / size:.3g} {unit}"
    return f"{num_bytes:.0f} B"


def _ms_text(seconds: float) -> str:
    return format_duration(round(seconds * 1e9))


def _nice_timeout_s(limit_s: float) -> float:
    """The largest 'round' flush interval not above ``limit_s`` (0 = flush every record)."""
    best = 0.0
    for ms in NICE_TIMEOUTS_MS:
        if ms / 1000 <= limit_s + 1e-12:
            best = ms / 1000
    return best


def _raw(value: ConfigValue) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _rate_text(bytes_per_s: float) -> str:
    for unit, size in (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if bytes_per_s >= size:
            return f"{bytes_per_s / size:.3g} {unit}"
    return f"{bytes_per_s:.3g} B/s"


# ---------------------------------------------------------------------------------------------
# The planner


class _Planner:
    def __init__(self, document: ConfigDocument, version: FlinkVersion, catalog: Catalog, job: Job,
                 overlay: dict[str, ConfigValue], spec: DeploymentSpec, measured: Measured | None) -> None:
        self.document = document
        self.version = version
        self.catalog = catalog
        self.job = job
        self.overlay = dict(overlay)
        self.spec = spec
        self.measured = measured
        self.values: dict[str, ConfigValue] = dict(document.values())
        self.changes: list[Change] = []
        self.states: list[ConfigState] = [self.state()]
        self.notes: list[str] = []

    # ------------------------------------------------------------------ state

    def state(self) -> ConfigState:
        return ConfigState(dict(self.values), self.version, self.catalog, self.job, self.document.path,
                           self.document.format, dict(self.overlay), self.document)

    @property
    def current(self) -> ConfigState:
        return self.states[-1]

    def exists(self, key: str) -> bool:
        return self.catalog.lookup(key, self.version).kind == "option"

    def readable(self, key: str) -> bool:
        """The version reads the key: an option, or a deprecated alias it still honours."""
        return self.catalog.lookup(key, self.version).kind in ("option", "deprecated-alias")

    def _line(self, key: str) -> int | None:
        entry = self.document.get(key)
        return entry.line if entry is not None and entry.line > 0 else None

    def _default(self, key: str) -> str | None:
        spec = self.catalog.spec(key, self.version)
        return None if spec is None or spec.default is None else str(spec.default)

    def _aliases_set(self, canonical: str) -> list[str]:
        found = []
        for key in self.values:
            if key == canonical:
                continue
            status = self.catalog.lookup(key, self.version)
            if canonical in (status.replacement, status.canonical_key):
                found.append(key)
        return found

    def add(self, change: Change) -> None:
        if change.action == "set":
            self.values[change.key] = change.recommended
        elif change.action == "delete":
            self.values.pop(change.key, None)
        elif change.action == "rename":
            assert change.new_key is not None
            old = self.values.pop(change.key, None)
            self.values[change.new_key] = change.recommended if change.recommended is not None else old
        self.changes.append(change)
        self.states.append(self.state())

    def set_option(self, key: str, value: str, why: str, metrics: tuple[str, ...]) -> None:
        """Set ``key`` (a current option of the version); an old alias in the file is renamed."""
        if not self.exists(key):
            self.notes.append(f"(internal) {key} does not exist in Flink {self.version}; not proposed")
            return
        aliases = self._aliases_set(key)
        if key not in self.values and aliases:
            alias = aliases[-1]
            self.add(Change(alias, "rename", _raw(self.values.get(alias)), self._default(key), value,
                            why + f" ({alias} is the deprecated name of {key})", new_key=key,
                            line=self._line(alias), metrics=metrics))
            return
        self.add(Change(key, "set", _raw(self.values.get(key)), self._default(key), value, why,
                        line=self._line(key), metrics=metrics))

    def delete(self, key: str, why: str, metrics: tuple[str, ...] = ()) -> None:
        if key not in self.values:
            return
        self.add(Change(key, "delete", _raw(self.values.get(key)), None, None, why, line=self._line(key),
                        metrics=metrics))

    # ------------------------------------------------------------------ steps

    def removed_keys(self) -> None:
        """Network keys the target version no longer reads: delete them and say what replaced them."""
        for key in list(self.values):
            if not key.startswith(OWNED_PREFIXES):
                continue
            status = self.catalog.lookup(key, self.version)
            if status.kind != "removed":
                continue
            fixed = mb.FIXED_IN_2X.get(key)
            if fixed is not None:
                what = (f"Flink {self.version} hard-codes it to {fixed}, so the line only misleads; the "
                        "levers that remain are network memory, segment size, buffer timeout and buffer "
                        "debloating")
            else:
                what = f"Flink {self.version} ignores it, so the line only misleads"
            self.delete(key, f"removed in Flink {status.removed_in or '2.0'}: {what}")

    def invalid_values(self) -> None:
        """Values Flink rejects at start-up (NettyShuffleEnvironmentConfiguration 1.17+,
        ConfigurationParserUtils.getPageSize): replace them first, or nothing else can be computed."""
        state = self.current
        seg = state.eff.memory_bytes(KEY_SEGMENT) if state.is_set(KEY_SEGMENT) else None
        if seg is not None and (seg < 4096 or seg & (seg - 1)):
            fixed = _next_pow2(max(seg, 4096))
            self.set_option(KEY_SEGMENT, _mb_text(fixed),
                            f"Flink refuses {_mb_text(seg)}: the segment size must be a power of two of at "
                            "least 4096 bytes", ("network_available_bytes",))
        if self.version >= V2_0:
            return
        bpc = state.integer(mb.KEY_BPC) if state.is_set(mb.KEY_BPC) else None
        if bpc is not None and bpc < 0:
            self.set_option(mb.KEY_BPC, "2", f"{mb.KEY_BPC}: Must be non-negative (Flink's check); 2 is the "
                            "default", ("channel_ceiling_bytes_per_s",))
        fpg = state.integer(mb.KEY_FPG) if state.is_set(mb.KEY_FPG) else None
        if fpg is not None and fpg < 1:
            self.set_option(mb.KEY_FPG, "8", "The configured floating buffer should be at least 1 (Flink's "
                            "check from 1.17; a gate without floating buffers stalls before); 8 is the "
                            "default",
                            ("channel_ceiling_bytes_per_s",))
        required = (state.integer(mb.KEY_REQUIRED_MAX)
                    if self.version >= FlinkVersion(1, 17) and state.is_set(mb.KEY_REQUIRED_MAX) else None)
        if required is not None and required < 1:
            self.delete(mb.KEY_REQUIRED_MAX, "At least one buffer is required for each gate (Flink's check); "
                        "the docs advise leaving it unset")

    def legacy_memory(self) -> None:
        """``taskmanager.heap.size`` (pre-1.10) is what the memory model cannot size: map it."""
        if self.version >= V2_0 or "taskmanager.heap.size" not in self.values:
            return
        _memory, error = self.current.memory_or_error()
        if error is None or "need to be configured explicitly" not in error:
            return
        self.add(Change("taskmanager.heap.size", "rename", _raw(self.values["taskmanager.heap.size"]), None,
                        _raw(self.values["taskmanager.heap.size"]),
                        "pre-1.10 key: a standalone cluster reads it as the total Flink memory "
                        "(FLIP-49 legacy mapping; YARN/Kubernetes read it as the process size, check "
                        "which you run); without a size Flink refuses to start the TaskManager",
                        new_key=KEY_FLINK, line=self._line("taskmanager.heap.size"),
                        metrics=("network_available_bytes", "task_heap_bytes")))

    def legacy_buffers(self) -> None:
        if KEY_LEGACY_BUFFERS not in self.values or self.version >= V2_0:
            return
        if any(self.current.is_set(k) for k in (KEY_NET_MIN, KEY_NET_MAX, KEY_NET_FRACTION)):
            self.delete(KEY_LEGACY_BUFFERS, "ignored: network memory fraction/min/max are set, so Flink logs "
                        "'Ignoring old (but still present) network buffer configuration'; the key is "
                        "deprecated and gone in 2.0")

    def credits(self) -> None:
        """buffers-per-channel / floating-buffers-per-gate (1.x) or segment size (2.x) for the rate."""
        job = self.job
        if job.workload != "streaming":
            return
        if self.measured is not None and self.measured.not_network:
            return
        remote = job.remote_channels_per_taskmanager
        if remote == 0:
            self.notes.append("All subtasks share one TaskManager: every channel is local and needs no "
                              "credits; buffer counts do not limit throughput.")
            return
        state = self.current
        settings = state.settings
        seg = state.segment_bytes
        share = job.bandwidth_bytes_per_s / remote
        offered = job.channel_offered_bytes_per_s
        if offered is not None:
            want = min(offered * THROUGHPUT_HEADROOM, share)
            basis = (f"{_rate_text(offered)} offered per channel (x{THROUGHPUT_HEADROOM} headroom, at most "
                     "the "
                     f"NIC share {_rate_text(share)})")
        else:
            want = share
            basis = (f"the NIC share per channel: {_rate_text(job.bandwidth_bytes_per_s)} over {remote} "
                     "remote "
                     f"channels = {_rate_text(share)} (no rate given)")
        floor_note = ""
        credit_bound = self.measured is not None and self.measured.cause in ("too_few_credits",
                                                                             "network_or_credits")
        if (credit_bound and job.rate_per_subtask is not None and self.measured is not None
                and self.measured.rate_per_subtask == job.rate_per_subtask):
            floor_note = ("; the rate was measured while credit-bound, so it is a floor: give --rate for the "
                          "rate the job must sustain")
        need = self._credits_for(want, seg)
        metrics = ("channel_ceiling_bytes_per_s", "channel_throughput_bytes_per_s", "gate_inflight_bytes",
                   "drain_time_s", "network_needed_bytes")
        if state.version < V2_0:
            if need > MAX_BPC:
                new_seg = min(MAX_SEGMENT, _next_pow2(want * job.rtt_s / MAX_BPC))
                if new_seg > seg:
                    self.set_option(KEY_SEGMENT, _mb_text(new_seg),
                                    f"{basis} x rtt {job.rtt_s * 1000:g} ms needs {need} buffers of "
                                    f"{_mb_text(seg)} per channel; larger buffers carry the bandwidth-delay "
                                    "product with fewer of them", metrics)
                    seg = new_seg
                    need = self._credits_for(want, seg)
            value = min(max(need, 2), MAX_BPC)
            if need > MAX_BPC:
                self.notes.append(
                    f"The channels would need {need} credits of {_mb_text(seg)}; buffers per channel stop "
                    f"at {MAX_BPC} and segments at {_mb_text(MAX_SEGMENT)} here, so the credit ceiling stays "
                    "below the link: fewer remote channels (more slots per TaskManager) or a shorter round "
                    "trip help more than buffers.")
            if value > settings.buffers_per_channel:
                self.set_option(mb.KEY_BPC, str(value),
                                f"{basis} x rtt {job.rtt_s * 1000:g} ms / {_mb_text(seg)} segments = {need} "
                                "credits per channel (docs: throughput x buffer round trip / buffer size); "
                                f"{settings.buffers_per_channel} cap each channel below that{floor_note}",
                                metrics)
            self._floating(want, share, seg, metrics)
        else:
            fixed_credits = settings.buffers_per_channel + settings.floating_per_gate / job.parallelism
            if need > fixed_credits:
                new_seg = min(MAX_SEGMENT, _next_pow2(want * job.rtt_s / settings.buffers_per_channel))
                if new_seg > seg:
                    self.set_option(KEY_SEGMENT, _mb_text(new_seg),
                                    f"{basis} x rtt {job.rtt_s * 1000:g} ms needs {need} credits of "
                                    f"{_mb_text(seg)}; Flink {self.version} fixes buffers-per-channel at "
                                    f"{settings.buffers_per_channel} and floating buffers at "
                                    f"{settings.floating_per_gate} (removed options), so the buffer size is "
                                    "the lever that remains", metrics)

    def _credits_for(self, bytes_per_s: float, seg: int) -> int:
        from flinktune.model.credit import buffers_for_throughput

        return int(buffers_for_throughput(bytes_per_s, seg, self.job.rtt_s))

    def _floating(self, want: float, share: float, seg: int, metrics: tuple[str, ...]) -> None:
        job = self.job
        skew = job.skew
        measured_some = self.measured is not None and self.measured.channels == "some"
        if (skew is None or skew <= 1.2) and not measured_some:
            return
        settings = self.current.settings
        factor = skew if skew and skew > 1 else 2.0
        hot = min(want * factor, job.bandwidth_bytes_per_s / max(job.per_taskmanager, 1))
        hot_credits = self._credits_for(hot, seg)
        need = hot_credits - settings.buffers_per_channel
        if need > settings.floating_per_gate:
            where = (f"skew {skew:.3g}x" if skew else "measured: floating buffers full, exclusive ones not "
                     "(some channels hot)")
            self.set_option(mb.KEY_FPG, str(need),
                            f"{where}: a hot channel carries about {_rate_text(hot)} and needs {hot_credits} "
                            f"credits; floating buffers go to the channels with backlog, so the gate needs "
                            f"{need} on top of the exclusive {settings.buffers_per_channel}", metrics)

    def segment_for_records(self) -> None:
        job = self.job
        seg = self.current.segment_bytes
        # Streaming only: pipelined writers block on a record that spans buffers when back-pressured;
        # blocking shuffles spill whole buffers and do not care, while their memory scales with the size.
        if job.workload != "streaming" or job.record_bytes is None or job.record_bytes <= seg:
            return
        new_seg = min(MAX_SEGMENT, _next_pow2(job.record_bytes))
        if new_seg <= seg:
            return
        self.set_option(KEY_SEGMENT, _mb_text(new_seg),
                        f"records of {job.record_bytes:.0f} B are larger than a {_mb_text(seg)} buffer: each "
                        "spans several buffers (and needs overdraft buffers when back-pressured)",
                        ("channel_ceiling_bytes_per_s", "added_latency_s", "gate_inflight_bytes",
                         "network_needed_bytes"))

    def batch_shuffle(self) -> None:
        job = self.job
        if job.workload != "batch":
            return
        state = self.current
        settings = state.settings
        p = job.parallelism
        seg = state.segment_bytes
        metrics = ("network_needed_bytes", "network_available_bytes")
        hash_bytes = hash_shuffle_min_bytes(p, seg)
        if self.version < V2_0 and settings.sort_shuffle_min_parallelism > p:
            why = (f"hash shuffle (FLIP-148) keeps one buffer per subpartition: {p} x {_mb_text(seg)} = "
                   f"{_size_text(hash_bytes)} per result partition and {p} files per producer, random IO on "
                   "read; sort-merge shuffle needs a fixed number of buffers and writes one data and one "
                   "index file per partition")
            if self.version < V1_15:
                self.set_option(mb.KEY_SORT_MIN_PAR, "1", why + " (opt-in before 1.15, the default from "
                                                                "1.15)",
                                metrics)
            else:
                self.delete(mb.KEY_SORT_MIN_PAR, why + " (the default, 1, uses it)", metrics)
        state = self.current
        settings = state.settings
        sort_used = self.version >= V2_0 or settings.sort_shuffle_min_parallelism <= p
        if not sort_used or p < LARGE_BATCH_PARALLELISM:
            return
        if settings.sort_shuffle_min_buffers < SORT_MIN_BUFFERS_PRODUCTION:
            self.set_option(mb.KEY_SORT_MIN_BUF, str(SORT_MIN_BUFFERS_PRODUCTION),
                            f"{settings.sort_shuffle_min_buffers} write buffers per sort-merge partition are "
                            "few for a large job: fewer, larger spills and sequential reads; the option's "
                            f"own guidance is at least {SORT_MIN_BUFFERS_PRODUCTION} in production", metrics)
        if self.version < V2_0 and (settings.buffers_per_channel > 0
                                    or settings.floating_per_gate < BATCH_FLOATING):
            if settings.buffers_per_channel > 0:
                gate = mb.input_gate_buffers(settings, p, p, mb.PartitionType.BLOCKING)
                self.set_option(mb.KEY_BPC, "0",
                                f"a blocking input gate with {p} channels requires {gate.required} buffers "
                                "when each channel holds exclusive ones; the batch shuffle guide suggests 0 "
                                "exclusive and a large floating pool shared by the channels being read",
                                metrics)
            if self.current.settings.floating_per_gate < BATCH_FLOATING:
                self.set_option(mb.KEY_FPG, str(BATCH_FLOATING),
                                "with no exclusive buffers all reading credits come from the floating pool "
                                f"(batch shuffle guide example: {BATCH_FLOATING})", metrics)
        read_default = default_batch_shuffle_read_bytes(self.version)
        read_want = 256 * MIB if p >= HUGE_BATCH_PARALLELISM else 128 * MIB
        read_now = state.eff.memory_bytes(KEY_READ) or read_default
        if read_now < read_want:
            fo_now = state.eff.memory_bytes(KEY_FRAMEWORK_OFF_HEAP) or 128 * MIB
            rest = max(128 * MIB - read_default, 64 * MIB)   # what framework off-heap keeps besides reading
            self.set_option(KEY_READ, _mb_text(read_want),
                            f"{p} consumers read sort-merge data through {_mb_text(read_now)} of read "
                            "buffers "
                            f"shared by every partition read at once; the batch shuffle guide suggests "
                            f"256m-512m for large jobs (\"Read buffer request timeout\" otherwise)",
                            ("task_heap_bytes",))
            if fo_now <= read_want + rest - 1:
                self.set_option(KEY_FRAMEWORK_OFF_HEAP, _mb_text(read_want + rest),
                                f"the batch-shuffle read memory is cut from framework off-heap and must be "
                                f"smaller than it; keep {_mb_text(rest)} for the rest of the framework",
                                ("task_heap_bytes",))

    def buffer_timeout(self) -> None:
        job = self.job
        if job.workload != "streaming":
            return
        state = self.current
        # Keys the version does not read yet (1.18 options in an older file).
        # FLINK-32023 added .interval / .enabled in 1.18 (ExecutionOptions); the catalog also lists them
        # for late 1.16 / 1.17 patch releases (a backport), so only versions without them lose them.
        if self.version < V1_18 and not self.exists(KEY_TIMEOUT_INTERVAL):
            if KEY_TIMEOUT_ENABLED in self.values:
                self.delete(KEY_TIMEOUT_ENABLED, f"added in 1.18: Flink {self.version} ignores it (only "
                            "env.setBufferTimeout(-1) in code flushes only when full)")
            if KEY_TIMEOUT_INTERVAL in self.values and KEY_TIMEOUT_OLD not in self.values:
                self.add(Change(KEY_TIMEOUT_INTERVAL, "rename", _raw(self.values[KEY_TIMEOUT_INTERVAL]), None,
                                _raw(self.values[KEY_TIMEOUT_INTERVAL]),
                                f"added in 1.18: Flink {self.version} reads execution.buffer-timeout",
                                new_key=KEY_TIMEOUT_OLD, line=self._line(KEY_TIMEOUT_INTERVAL),
                                metrics=("added_latency_s",)))
            state = self.current
        target = job.latency_target_s
        if target is None:
            mode = state.timeout
            if mode.kind == "every-record" and job.rate_per_subtask:
                self.notes.append("The buffer timeout is 0 (flush after every record) and no latency target "
                                  "was given: each record travels in its own buffer, which costs throughput "
                                  "and CPU; give --latency-target to size it.")
            return
        hops = job.exchanges
        budget = target / hops                 # what flushing may add on each exchange at most
        proposal = _nice_timeout_s(target / (2 * hops))
        mode = state.timeout
        added = self._added_latency(state, mode.effective_timeout_s)
        low = mode.effective_timeout_s < proposal / 4 and proposal >= 0.004
        if added <= budget and not low and mode.kind != "when-full":
            return
        metrics = ("added_latency_s",)
        if added > budget:
            why = (f"latency target {_ms_text(target)} over {hops} exchange(s): flushing may add at most "
                   f"{_ms_text(budget)} per exchange, the current setting adds up to "
                   f"{'unbounded' if math.isinf(added) else _ms_text(added)}; half the budget is left for "
                   "processing and the network")
        else:
            why = (f"flushing every {_ms_text(mode.effective_timeout_s)} is far below what the latency "
                   "target "
                   f"{_ms_text(target)} needs; partly filled buffers cost throughput and CPU")
        value = _ms_text(proposal) if proposal > 0 else "0 ms"
        if self.version < V1_18:
            # The key every 1.x release reads (a deprecated alias only in patch releases with FLINK-32023).
            self.add(Change(KEY_TIMEOUT_OLD, "set", _raw(self.values.get(KEY_TIMEOUT_OLD)),
                            self._default(KEY_TIMEOUT_OLD), value, why, line=self._line(KEY_TIMEOUT_OLD),
                            metrics=metrics))
        else:
            if state.eff.boolean(KEY_TIMEOUT_ENABLED) is False:
                self.set_option(KEY_TIMEOUT_ENABLED, "true",
                                "execution.buffer-timeout.enabled=false flushes only full buffers: no "
                                "latency bound at all", metrics)
            if abs(self.current.timeout.effective_timeout_s - proposal) > 1e-9:
                if KEY_TIMEOUT_INTERVAL not in self.values and KEY_TIMEOUT_OLD in self.values:
                    self.add(Change(KEY_TIMEOUT_OLD, "rename", _raw(self.values[KEY_TIMEOUT_OLD]),
                                    self._default(KEY_TIMEOUT_INTERVAL), value,
                                    why + f" (since 1.18 the option is {KEY_TIMEOUT_INTERVAL}; the old key "
                                          "is "
                                    "its deprecated alias)", new_key=KEY_TIMEOUT_INTERVAL,
                                    line=self._line(KEY_TIMEOUT_OLD), metrics=metrics))
                else:
                    self.set_option(KEY_TIMEOUT_INTERVAL, value, why, metrics)

    def _added_latency(self, state: ConfigState, timeout_s: float) -> float:
        from flinktune.model.timeout import added_latency_s

        job = self.job
        offered = job.channel_offered_bytes_per_s
        if offered and job.record_bytes:
            return float(added_latency_s(offered / job.record_bytes, job.record_bytes, state.segment_bytes,
                                         timeout_s)[1])
        return timeout_s

    def debloat(self) -> None:
        job = self.job
        if job.workload != "streaming" or self.version < V1_14:
            return
        state = self.current
        consume = job.consume_bytes_per_s
        if consume is None:
            if not state.debloat:
                self.notes.append("Buffer debloating: without --rate and --record-size (or --metrics) the "
                                  "drain time of in-flight data is unknown, so it is neither proposed nor "
                                  "ruled out.")
            return
        settings = state.settings
        seg = state.segment_bytes
        p = job.parallelism
        pool = p * settings.buffers_per_channel + settings.floating_per_gate
        gate_bytes = pool * seg
        drain = gate_bytes / consume
        target = DEBLOAT_DEFAULT_TARGET_S
        if job.latency_target_s is not None and job.latency_target_s < target:
            target = max(job.latency_target_s, 0.1)
        min_seg = state.eff.memory_bytes("taskmanager.memory.min-segment-size") or MIN_SEGMENT_DEFAULT
        debloated_size = consume * target / max(pool, 1)
        metrics = ("gate_inflight_bytes", "drain_time_s")
        if job.multi_input_vertices:
            names = ", ".join(job.multi_input_vertices[:3])
            poorly = (f"buffer debloating is known to work poorly for tasks with several inputs or unions of "
                      f"different rates ({names}): it sizes every channel's buffers from the task's total "
                      "throughput (Flink docs, network memory tuning)")
            if state.debloat:
                self.set_option(KEY_DEBLOAT, "false", poorly, metrics)
            else:
                self.notes.append(poorly[0].upper() + poorly[1:] + "; it is not proposed.")
            return
        if state.debloat:
            current = state.debloat_target_s
            if job.latency_target_s is not None and not (target / 2 <= current <= target * 2):
                self.set_option(KEY_DEBLOAT_TARGET, _ms_text(target),
                                f"in-flight data should drain within the latency target "
                                f"{_ms_text(job.latency_target_s)} under back pressure", metrics)
            return
        if drain <= DEBLOAT_DEFAULT_TARGET_S:
            return
        if debloated_size < min_seg:
            self.notes.append(f"Buffer debloating would want buffers of {debloated_size:.0f} B, below "
                              f"min-segment-size ({min_seg} B): at this low rate it cannot shrink in-flight "
                              "data further and is not proposed.")
            return
        self.set_option(KEY_DEBLOAT, "true",
                        f"a full input gate holds {_size_text(gate_bytes)} ({pool} buffers), "
                        f"{drain:.3g} s of input at {_rate_text(consume)}: aligned checkpoint barriers wait "
                        f"that long under back pressure; debloating keeps about {target:g} s in flight",
                        metrics)
        if target != DEBLOAT_DEFAULT_TARGET_S:
            self.set_option(KEY_DEBLOAT_TARGET, _ms_text(target),
                            "bring in-flight data toward the latency target "
                            f"{_ms_text(job.latency_target_s or 0)} "
                            "(not below 100 ms: smaller targets shrink buffers until they cost throughput)",
                            metrics)
        if self.version < V2_0 and p > DEBLOAT_HIGH_PARALLELISM and settings.floating_per_gate < p:
            self.set_option(mb.KEY_FPG, str(p),
                            f"with debloating at parallelism {p} (> {DEBLOAT_HIGH_PARALLELISM}) the docs "
                            "ask for "
                            "at least as many floating buffers as the parallelism", metrics)

    def overdraft(self) -> None:
        job = self.job
        if job.workload != "streaming" or job.record_bytes is None:
            return
        seg = self.current.segment_bytes
        need = math.ceil(job.record_bytes / seg)
        if self.version >= V2_0:
            if need > mb.FIXED_IN_2X[mb.KEY_OVERDRAFT]:
                self.notes.append(f"Records of {job.record_bytes:.0f} B need {need} buffers each; Flink "
                                  f"{self.version} allows a fixed {mb.FIXED_IN_2X[mb.KEY_OVERDRAFT]} "
                                  "overdraft "
                                  "buffers: a back-pressured task blocks mid-record. Larger segments help.")
            return
        if self.version < V1_16:
            return
        current = self.current.settings.max_overdraft_per_gate
        if need > current:
            self.set_option(mb.KEY_OVERDRAFT, str(need),
                            f"a record of {job.record_bytes:.0f} B fills {need} buffers of {_mb_text(seg)}; "
                            "overdraft buffers let a back-pressured task finish writing it instead of "
                            "blocking the mailbox", ("network_needed_bytes",))

    def network_memory(self) -> None:
        state = self.current
        seg = state.segment_bytes
        demand = state.demand
        memory, error = state.memory_or_error()
        if memory is None:
            self.notes.append(f"TaskManager memory cannot be derived ({error}); network memory is not sized. "
                              f"The job needs {demand.required} buffers ({_mb_text(demand.required * seg)}) "
                              "per TaskManager.")
            return
        streaming = self.job.workload == "streaming"
        available = memory.network_buffers
        accept = available >= math.ceil(demand.required * NETWORK_ACCEPT) and (
            not streaming or available >= demand.target)
        if accept:
            return
        want_buffers = math.ceil(demand.required * NETWORK_MARGIN)
        if streaming:
            want_buffers = max(want_buffers, demand.target)
        want_bytes = _round_up_mib(want_buffers * seg)
        heap_before = memory.task_heap_bytes
        basis = ("the pools' target" if streaming and want_buffers == demand.target
                 else f"{NETWORK_MARGIN:g} x required")
        why = (f"the busiest TaskManager needs {demand.required} buffers at start-up and its pools grow to "
               f"{demand.target} ({demand.assumption}); {available} are available. Sized for "
               f"{want_buffers} buffers ({basis})")
        metrics = ("network_needed_bytes", "network_available_bytes", "task_heap_bytes")
        max_now = state.eff.memory_bytes(KEY_NET_MAX)
        if max_now is not None and max_now < want_bytes:
            self.set_option(KEY_NET_MAX, _mb_text(want_bytes),
                            f"network.max ({_mb_text(max_now)}) caps the network memory below what the job "
                            "needs", metrics)
        mark = len(self.changes)
        self.set_option(KEY_NET_MIN, _mb_text(want_bytes), why, metrics)
        self.legacy_buffers()
        if not self._fit_process(heap_before):
            self.rollback(mark)
            needed = _size_text(demand.required * seg)
            self.notes.append(f"The job needs {demand.required} network buffers ({needed}) per TaskManager; "
                              f"no TaskManager size up to {_size_text(MAX_PROCESS)} (or no "
                              "size set to raise) leaves room for the other memory pools: run fewer slots "
                              "per TaskManager or a lower parallelism. Network memory is left as it is.")

    def memory_fit(self) -> None:
        """Whatever the steps before took (network, read buffers in framework off-heap) must still fit."""
        original, _error = self.states[0].memory_or_error()
        if not self._fit_process(original.task_heap_bytes if original is not None else 1 << 62):
            _memory, error = self.current.memory_or_error()
            problem = error or "task heap too small"
            self.notes.append(f"The recommended memory setup does not fit the TaskManager ({problem}) and no "
                              "size could be raised; set taskmanager.memory.process.size.")

    def _fit_process(self, heap_before: int) -> bool:
        """Raise the TaskManager size when the changes squeeze the task heap too far (or no longer fit).

        False when no size up to ``MAX_PROCESS`` works (or there is no size to raise)."""
        slots = self.job.slots
        floor = max(32 * MIB * slots, min(heap_before, HEAP_FLOOR_PER_SLOT * slots))
        memory, error = self.current.memory_or_error()
        if memory is not None and memory.task_heap_bytes >= floor:
            return True
        state = self.current
        if memory is None and error is not None and "need to be configured" in error:
            return True       # no size at all: reported elsewhere, nothing to raise
        size_key = KEY_PROCESS
        base = state.eff.memory_bytes(KEY_PROCESS) if state.is_set(KEY_PROCESS) else None
        if self.overlay.get(KEY_PROCESS) is not None:
            base = parse_memory_size(str(self.overlay[KEY_PROCESS])).bytes
        if base is None and state.is_set(KEY_FLINK):
            size_key, base = KEY_FLINK, state.eff.memory_bytes(KEY_FLINK)
        if base is None:
            return False
        size = base
        found = False
        while size < MAX_PROCESS:
            # Steps of 256 MiB, growing with the size (an eighth of it) so large demands converge fast.
            size += max(256 * MIB, (size // 8) // (256 * MIB) * (256 * MIB))
            trial = dict(self.values)
            overlay = dict(self.overlay)
            if self.overlay.get(KEY_PROCESS) is not None:
                overlay[KEY_PROCESS] = _mb_text(size)
            else:
                trial[size_key] = _mb_text(size)
            candidate = ConfigState(trial, self.version, self.catalog, self.job, self.document.path,
                                    self.document.format, overlay, self.document)
            mem, _err = candidate.memory_or_error()
            if mem is not None and mem.task_heap_bytes >= floor:
                found = True
                break
        if not found:
            return False
        if memory is None:
            reason = f"with these changes the memory pools no longer fit in {_mb_text(base)}: {error}"
        else:
            heap = _size_text(memory.task_heap_bytes)
            reason = (f"with these changes the task heap would shrink to {heap} for {slots} slot(s) (kept at "
                      f"least {_size_text(floor)})")
        metrics = ("network_available_bytes", "task_heap_bytes")
        if self.overlay.get(KEY_PROCESS) is not None:
            self.overlay[KEY_PROCESS] = _mb_text(size)
            self.add(Change("spec.taskManager.resource.memory", "manual", self.spec.taskmanager_memory_text,
                            None, _mb_text(size), reason + "; the operator maps this field to "
                            "taskmanager.memory.process.size (edit it by hand: outside flinkConfiguration)",
                            line=self.spec.taskmanager_memory_line, metrics=metrics))
        else:
            self.set_option(size_key, _mb_text(size), reason, metrics)
        return True

    def rollback(self, mark: int) -> None:
        """Undo the changes made since ``len(self.changes) == mark``."""
        self.changes = self.changes[:mark]
        self.states = self.states[:mark + 1]
        self.values = dict(self.states[-1].values)
        self.overlay = dict(self.states[-1].memory_overlay)

    def current_network_min(self) -> int:
        return self.current.eff.memory_bytes(KEY_NET_MIN) or 0

    # ------------------------------------------------------------------ finish

    def verify_keys(self) -> None:
        """Never propose a key the target version lacks (belt and braces over each step)."""
        kept = []
        for change in self.changes:
            key = change.new_key if change.action == "rename" else change.key
            if change.action in ("set", "rename") and not self.readable(key or ""):
                self.notes.append(f"(internal) dropped a change to {key}: not an option of Flink "
                                  f"{self.version}")
                continue
            kept.append(change)
        self.changes = kept

    def with_effects(self) -> list[Change]:
        out = []
        for index, change in enumerate(self.changes):
            before = self.states[index].snapshot()
            after = self.states[index + 1].snapshot()
            effects = tuple(Effect(name, METRICS[name][0], METRICS[name][1], before.get(name),
                                   after.get(name))
                            for name in change.metrics if name in METRICS
                            and (before.get(name) is not None or after.get(name) is not None))
            out.append(replace(change, effects=effects))
        return out


# ---------------------------------------------------------------------------------------------
# Entry point


def resolve_job(document: ConfigDocument, version: FlinkVersion, env: Environment, catalog: Catalog,
                spec: DeploymentSpec, measured: Measured | None, plan: dict[str, Any] | None,
                placement: mb.Placement | None = None) -> tuple[Job, Environment, list[str]]:
    """The job facts, from flags/profile > metrics > plan > deployment spec > config > assumptions."""
    state = ConfigState(dict(document.values()), version, catalog,
                        Job(1, 1, 1, 1, "streaming", DEFAULT_RTT_S, DEFAULT_BANDWIDTH_BYTES_PER_S, None, None,
                            None, None), document.path, document.format, {}, document)
    assumptions: list[str] = []
    values: dict[str, Any] = {}
    explicit = {name for name, where in env.sources if where == "flag"}

    def pick(name: str, candidates: list[tuple[Any, str]]) -> Any:
        current = getattr(env, _FIELDS[name])
        if current is not None and name in explicit:
            return current
        for value, where in candidates:
            if value is not None and (where == "metrics" or current is None):
                values.setdefault(name, (value, where))
                return value
        if current is not None:
            return current
        return None

    graph = mb.job_graph_from_plan(plan) if plan is not None else None
    m = measured
    plan_p = max((v.parallelism for v in graph.vertices), default=None) if graph else None
    config_p = state.integer(KEY_PARALLELISM) if state.is_set(KEY_PARALLELISM) else None
    parallelism = pick("parallelism", [(m.parallelism if m else None, "metrics"), (plan_p, "plan"),
                                       (spec.parallelism, "spec.job.parallelism"), (config_p, "config")])
    if parallelism is None:
        parallelism = 1
        assumptions.append("parallelism 1 (nothing says otherwise: give --parallelism)")
    slots = env.slots or (state.integer(KEY_SLOTS) if state.is_set(KEY_SLOTS) else None)
    if slots is None:
        slots = 1
        if not env.slots:
            values.setdefault("slots", (1, "default"))
    mode = (state.eff.string(KEY_RUNTIME_MODE) or "").upper() if state.exists(KEY_RUNTIME_MODE) else ""
    plan_type = str(_plan_inner(plan).get("type", "")).upper() if plan else ""
    workload = env.workload or ("batch" if "BATCH" in (mode, plan_type) else "streaming")
    rate = pick("rate", [(m.rate_per_subtask if m else None, "metrics")])
    record = pick("record-size", [(m.record_bytes if m else None, "metrics")])
    skew = pick("skew", [(m.skew if m else None, "metrics")])
    rtt = env.rtt_s
    if rtt is None:
        rtt = DEFAULT_RTT_S
        assumptions.append("round trip 1 ms (a healthy LAN, per the Flink docs; give --rtt)")
    bandwidth = env.bandwidth_bytes_per_s
    if bandwidth is None:
        bandwidth = DEFAULT_BANDWIDTH_BYTES_PER_S
        assumptions.append("10 Gbit/s per TaskManager (give --bandwidth)")
    taskmanagers = env.taskmanagers or math.ceil(parallelism / slots)
    multi = _multi_input_vertices(plan, graph)
    exchanges = env.exchanges or (_longest_path(graph) if graph is not None else None) or 1
    job = Job(parallelism=parallelism, slots=slots, taskmanagers=taskmanagers, exchanges=exchanges,
              workload=workload, rtt_s=rtt, bandwidth_bytes_per_s=bandwidth, rate_per_subtask=rate,
              record_bytes=record, latency_target_s=env.latency_target_s, skew=skew, graph=graph,
              multi_input_vertices=multi, placement=placement if graph is not None else None)
    if job.placement is not None:
        try:
            mb.taskmanager_buffers(graph, mb.buffer_settings(version), slots, placement=job.placement)
        except FlinktuneError as error:
            # A placement that does not match the plan (another run, other slots) is worse than none.
            job = replace(job, placement=None)
            assumptions.append(f"the subtask placement beside the dump was not used: {error.message}")
    resolved = env.with_values({name: v for name, (v, _w) in values.items()}, "derived")
    sources = dict(resolved.sources)
    for name, (_v, where) in values.items():
        sources[name] = where
    resolved = replace(resolved, sources=tuple(sorted(sources.items())), parallelism=parallelism,
                       slots=slots, rtt_s=rtt, bandwidth_bytes_per_s=bandwidth, workload=workload,
                       taskmanagers=taskmanagers)
    if rate is None or record is None:
        assumptions.append("no rate / record size: throughput needs are taken as the NIC share per channel, "
                           "and "
                           "latency and drain times are upper bounds")
    return job, resolved, assumptions


def _plan_inner(plan: dict[str, Any] | None) -> dict[str, Any]:
    if not plan:
        return {}
    inner = plan.get("plan", plan)
    return inner if isinstance(inner, dict) else {}


def _longest_path(graph: mb.JobGraph) -> int:
    """Exchanges a record crosses on the longest source-to-sink path of the plan (flush waits add up)."""
    incoming: dict[str, list[str]] = {v.id: [] for v in graph.vertices}
    for edge in graph.edges:
        incoming[edge.target].append(edge.source)
    depth: dict[str, int] = {}

    def walk(vertex: str, seen: frozenset[str]) -> int:
        if vertex in depth:
            return depth[vertex]
        if vertex in seen:      # a cycle (iterations): count it once
            return 0
        best = max((walk(src, seen | {vertex}) + 1 for src in incoming[vertex]), default=0)
        depth[vertex] = best
        return best

    return max((walk(v.id, frozenset()) for v in graph.vertices), default=0)


def _multi_input_vertices(plan: dict[str, Any] | None, graph: mb.JobGraph | None) -> tuple[str, ...]:
    """Vertices reading more than one input (several gates or a union): debloating's weak spot."""
    if graph is None:
        return ()
    nodes = _plan_inner(plan).get("nodes", [])
    names = {str(n.get("id")): str(n.get("description") or n.get("id")) for n in nodes if isinstance(n, dict)}
    return tuple(names.get(v.id, v.id) for v in graph.vertices
                 if sum(1 for e in graph.edges if e.target == v.id) > 1)


_FIELDS = {"parallelism": "parallelism", "rate": "rate_per_subtask", "record-size": "record_bytes",
           "skew": "skew"}


def recommend(document: ConfigDocument, text: str, version: FlinkVersion, env: Environment | None = None, *,
              measured: Measured | None = None, plan: dict[str, Any] | None = None,
              placement: mb.Placement | None = None,
              catalog: Catalog | None = None) -> Recommendation:
    """A coherent, version-aware set of changes for ``document`` (read from ``text``)."""
    catalog = catalog or load_catalog()
    env = env or Environment()
    spec = deployment_spec(text, document)
    overlay: dict[str, ConfigValue] = {}
    if spec.taskmanager_memory_bytes is not None:
        overlay[KEY_PROCESS] = _mb_text(spec.taskmanager_memory_bytes)
    job, resolved_env, assumptions = resolve_job(document, version, env, catalog, spec, measured, plan,
                                                 placement)
    planner = _Planner(document, version, catalog, job, overlay, spec, measured)
    notes = planner.notes
    if measured is not None and measured.cause in NOT_NETWORK:
        notes.append(f"Back pressure starts at {measured.origin or 'a task'}: {NOT_NETWORK[measured.cause]}. "
                     "Buffer tuning will not fix it (network memory is still checked so that the job can "
                     "start).")
    elif measured is not None and measured.cause == "network_bottleneck":
        notes.append(f"Back pressure starts at {measured.origin}: the link is near its bandwidth. More "
                     "credits "
                     "cannot carry more than the link; fewer remote channels (slots, parallelism) or less "
                     "data "
                     "(compression for batch shuffles) can.")
    if version >= V2_0:
        notes.append(f"Flink {version} removed buffers-per-channel (fixed 2), floating-buffers-per-gate (8), "
                     "max-buffers-per-channel (10) and max-overdraft-buffers-per-gate (20): buffer advice "
                     "is given "
                     "through network memory, segment size, buffer timeout and debloating instead.")
    original = planner.current
    original_memory, original_error = original.memory_or_error()
    original_fit = None
    try:
        if original_memory is not None:
            original_fit = mb.fits(original.demand, original_memory.network_buffers, original.segment_bytes)
    except ModelInputError as error:       # buffer values Flink refuses: invalid_values replaces them
        original_error = error.message

    steps: list[Callable[[], None]] = [
        planner.removed_keys, planner.invalid_values, planner.legacy_memory, planner.segment_for_records,
        planner.credits, planner.batch_shuffle, planner.buffer_timeout, planner.debloat, planner.overdraft,
        planner.memory_fit, planner.network_memory, planner.memory_fit, planner.legacy_buffers,
    ]
    for step in steps:
        step()
    planner.verify_keys()
    changes = planner.with_effects()
    final = planner.current
    final_memory, final_error = final.memory_or_error()
    final_demand = final.demand
    final_fit = (mb.fits(final_demand, final_memory.network_buffers, final.segment_bytes)
                 if final_memory is not None else None)
    edits = [e for e in (c.edit() for c in changes) if e is not None]
    try:
        new_text = apply_edits(text, document, edits) if edits else text
    except FlinktuneError:
        raise
    return Recommendation(
        path=document.path, format=document.format, name=document.name, version=version, job=job,
        environment=resolved_env, changes=tuple(changes), notes=tuple(notes), measured=measured,
        before=original.snapshot(), after=final.snapshot(), demand_assumption=final_demand.assumption,
        original_fit=original_fit, original_memory_error=original_error, final_fit=final_fit,
        final_memory_error=final_error, original_text=text, new_text=new_text, assumptions=tuple(assumptions),
    )


def recommend_text(text: str, path: str, env: Environment | None, *,
                   version_of: Callable[[ConfigDocument], FlinkVersion],
                   measured_for: Callable[[ConfigDocument, FlinkVersion], Measured | None] | None = None,
                   plan: dict[str, Any] | None = None, catalog: Catalog | None = None,
                   placement: mb.Placement | None = None
                   ) -> list[Recommendation]:
    """Every Flink configuration in a file's ``text``, one after the other: each document is re-read
    from the text the previous one's edits produced, so the last ``new_text`` holds all changes."""
    from flinktune.config.reader import read_config_text
    from flinktune.errors import ConfigError

    catalog = catalog or load_catalog()
    count = len(read_config_text(text, path))
    if count == 0:
        raise ConfigError("holds no Flink configuration (no FlinkDeployment, ConfigMap or config keys)",
                          file=path)
    out: list[Recommendation] = []
    current = text
    for index in range(count):
        document = read_config_text(current, path)[index]
        version = version_of(document)
        measured = measured_for(document, version) if measured_for is not None else None
        rec = recommend(document, current, version, env, measured=measured, plan=plan, catalog=catalog,
                        placement=placement)
        out.append(rec)
        current = rec.new_text
    return out


__all__ = ["Change", "Effect", "Recommendation", "recommend", "recommend_text", "resolve_job"]
