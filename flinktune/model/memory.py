"""An exact port of how Flink sizes TaskManager (and JobManager) memory, 1.13 .. 1.20 and 2.x.

Ported (behaviour, not code) from apache/flink:
- ``flink-runtime/.../util/config/memory/ProcessMemoryUtils.java``: which path is taken
  (fine-grained task.heap + managed, else flink.size, else process.size), JVM metaspace and
  overhead, capping a fraction to [min, max], the sanity checks and their error texts;
- ``.../util/config/memory/taskmanager/TaskExecutorFlinkMemoryUtils.java``: network and managed
  memory, the legacy ``taskmanager.network.numberOfBuffers`` path, "Sum of configured ..." checks;
- ``.../util/config/memory/jobmanager/JobManagerFlinkMemoryUtils.java``: the JobManager;
- ``.../util/config/memory/RangeFraction.java``: fraction in [0, 1) and min <= max;
- ``.../taskmanager/NettyShuffleEnvironmentConfiguration.java`` (``calculateNumberOfNetworkBuffers``)
  and ``.../util/ConfigurationParserUtils.java`` (``getPageSize``): buffers = network // segment.
Version differences: ``taskmanager.memory.network.max`` defaults to 1g up to 1.16 and to
``Long.MAX_VALUE`` from 1.17 (FLINK-30472); the legacy number-of-buffers path exists up to 1.20
and is gone in 2.0 (FLINK-33750). Everything else is identical across 1.13 .. 2.x.

No numpy here: the lint path imports this module.

Over 500 lines: an exact port of Flink's memory utilities (TaskExecutorFlinkMemoryUtils,
ProcessMemoryUtils), whose checks and messages are Flink's own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from flinktune.errors import FlinktuneError, ModelInputError
from flinktune.model.javanum import (
    INT_MAX,
    LONG_MAX,
    JavaArithmeticError,
    add,
    human_readable,
    java_double_str,
    java_float,
    multiply,
    option_to_string,
)
from flinktune.record import Record, set_field, store
from flinktune.releases import LEGACY_OPTIONS_REMOVED, NETWORK_MAX_UNBOUNDED
from flinktune.units import parse_float, parse_int, parse_memory_size
from flinktune.versions import DEFAULT_VERSION, FlinkVersion

MIB = 1024**2
GIB = 1024**3

# Option keys (TaskManagerOptions / NettyShuffleEnvironmentOptions), new key first, then the
# deprecated keys Flink still maps onto it.
TM_KEYS: dict[str, tuple[str, ...]] = {
    "process_bytes": ("taskmanager.memory.process.size",),
    "flink_bytes": ("taskmanager.memory.flink.size",),
    "task_heap_bytes": ("taskmanager.memory.task.heap.size",),
    "managed_bytes": ("taskmanager.memory.managed.size", "taskmanager.memory.size"),
    "managed_fraction": ("taskmanager.memory.managed.fraction",),
    "framework_heap_bytes": ("taskmanager.memory.framework.heap.size",),
    "framework_off_heap_bytes": ("taskmanager.memory.framework.off-heap.size",),
    "task_off_heap_bytes": ("taskmanager.memory.task.off-heap.size",),
    "network_fraction": ("taskmanager.memory.network.fraction", "taskmanager.network.memory.fraction"),
    "network_min_bytes": ("taskmanager.memory.network.min", "taskmanager.network.memory.min"),
    "network_max_bytes": ("taskmanager.memory.network.max", "taskmanager.network.memory.max"),
    "jvm_metaspace_bytes": ("taskmanager.memory.jvm-metaspace.size",),
    "jvm_overhead_fraction": ("taskmanager.memory.jvm-overhead.fraction",),
    "jvm_overhead_min_bytes": ("taskmanager.memory.jvm-overhead.min",),
    "jvm_overhead_max_bytes": ("taskmanager.memory.jvm-overhead.max",),
    "segment_bytes": ("taskmanager.memory.segment-size",),
    "legacy_number_of_buffers": ("taskmanager.network.numberOfBuffers",),
}

JM_KEYS: dict[str, tuple[str, ...]] = {
    "process_bytes": ("jobmanager.memory.process.size",),
    "flink_bytes": ("jobmanager.memory.flink.size",),
    "heap_bytes": ("jobmanager.memory.heap.size",),
    "off_heap_bytes": ("jobmanager.memory.off-heap.size",),
    "jvm_metaspace_bytes": ("jobmanager.memory.jvm-metaspace.size",),
    "jvm_overhead_fraction": ("jobmanager.memory.jvm-overhead.fraction",),
    "jvm_overhead_min_bytes": ("jobmanager.memory.jvm-overhead.min",),
    "jvm_overhead_max_bytes": ("jobmanager.memory.jvm-overhead.max",),
}

_FRACTION_FIELDS = {"managed_fraction", "network_fraction", "jvm_overhead_fraction"}
_INT_FIELDS = {"legacy_number_of_buffers"}

# Defaults (TaskManagerOptions @ 1.13 .. 2.0); network max depends on the version.
# How Flink's refusal of a process without any memory size begins (TaskExecutorProcessUtils /
# JobManagerProcessUtils: "Either required fine-grained memory ..."): the one case an overlay merged
# into a configuration that has a size does not hit.
MISSING_SIZE = "Either required"

DEFAULT_FRAMEWORK_HEAP = 128 * MIB
DEFAULT_FRAMEWORK_OFF_HEAP = 128 * MIB
DEFAULT_TASK_OFF_HEAP = 0
DEFAULT_MANAGED_FRACTION = 0.4
DEFAULT_NETWORK_FRACTION = 0.1
DEFAULT_NETWORK_MIN = 64 * MIB
DEFAULT_METASPACE_TM = 256 * MIB
DEFAULT_METASPACE_JM = 256 * MIB
DEFAULT_OVERHEAD_FRACTION = 0.1
DEFAULT_OVERHEAD_MIN = 192 * MIB
DEFAULT_OVERHEAD_MAX = GIB
DEFAULT_SEGMENT = 32 * 1024
DEFAULT_JM_OFF_HEAP = 128 * MIB
MIN_PAGE_SIZE = 4096  # MemoryManager.MIN_PAGE_SIZE


def default_network_max_bytes(version: FlinkVersion) -> int:
    """``taskmanager.memory.network.max`` default: 1g up to 1.16, unbounded from 1.17."""
    return LONG_MAX if NETWORK_MAX_UNBOUNDED.applies(version) else GIB


def legacy_buffers_supported(version: FlinkVersion) -> bool:
    """``taskmanager.network.numberOfBuffers`` is read up to 1.20 and removed in 2.0."""
    return not LEGACY_OPTIONS_REMOVED.applies(version)


class MemoryConfigError(ModelInputError):
    """A memory configuration Flink refuses at start-up; the message is Flink's own text."""


class _MemoryOptions(Record):
    """Memory options a configuration sets explicitly, by position or by name (None: not set), each
    checked as ``_check_field`` says; ``_keys`` maps each field to its config keys."""

    __slots__ = ()
    _keys: Mapping[str, tuple[str, ...]] = {}

    def __init__(self, *values: int | float | None, **given: int | float | None) -> None:
        _init_options(self, values, given, self._keys)


class TaskManagerMemoryOptions(_MemoryOptions):
    """The TaskManager memory options a configuration sets explicitly (None = not set).

    Sizes in bytes, fractions as written (the derivation applies Java's float rounding).
    """

    __slots__ = _fields = tuple(TM_KEYS)
    process_bytes: int | None
    flink_bytes: int | None
    task_heap_bytes: int | None
    managed_bytes: int | None
    managed_fraction: float | None
    framework_heap_bytes: int | None
    framework_off_heap_bytes: int | None
    task_off_heap_bytes: int | None
    network_fraction: float | None
    network_min_bytes: int | None
    network_max_bytes: int | None
    jvm_metaspace_bytes: int | None
    jvm_overhead_fraction: float | None
    jvm_overhead_min_bytes: int | None
    jvm_overhead_max_bytes: int | None
    segment_bytes: int | None
    legacy_number_of_buffers: int | None
    _keys = TM_KEYS


class TaskManagerMemory(Record):
    """Every TaskManager memory component in bytes, as Flink derives it.

    A Record (flinktune.record), not a dataclass: the lint imports this module on every
    run, and the derived results need no generated methods."""

    __slots__ = _fields = ("version", "path", "framework_heap_bytes", "framework_off_heap_bytes",
                           "task_heap_bytes", "task_off_heap_bytes", "network_bytes", "managed_bytes",
                           "jvm_metaspace_bytes", "jvm_overhead_bytes", "segment_bytes", "network_source",
                           "notes")
    version: FlinkVersion
    path: str                      # fine-grained | flink-size | process-size
    framework_heap_bytes: int
    framework_off_heap_bytes: int
    task_heap_bytes: int
    task_off_heap_bytes: int
    network_bytes: int
    managed_bytes: int
    jvm_metaspace_bytes: int
    jvm_overhead_bytes: int
    segment_bytes: int
    network_source: str            # fraction | min | max | remainder | legacy-number-of-buffers
    notes: tuple[str, ...]         # what Flink would log (caps applied, ignored options)

    def __init__(self, version: FlinkVersion, path: str, framework_heap_bytes: int,
                 framework_off_heap_bytes: int, task_heap_bytes: int, task_off_heap_bytes: int,
                 network_bytes: int, managed_bytes: int, jvm_metaspace_bytes: int, jvm_overhead_bytes: int,
                 segment_bytes: int, network_source: str, notes: tuple[str, ...] = ()) -> None:
        store(self, (version, path, framework_heap_bytes, framework_off_heap_bytes, task_heap_bytes,
                      task_off_heap_bytes, network_bytes, managed_bytes, jvm_metaspace_bytes,
                      jvm_overhead_bytes, segment_bytes, network_source, notes))

    @property
    def total_flink_bytes(self) -> int:
        return (self.framework_heap_bytes + self.framework_off_heap_bytes + self.task_heap_bytes
                + self.task_off_heap_bytes + self.network_bytes + self.managed_bytes)

    @property
    def total_process_bytes(self) -> int:
        return self.total_flink_bytes + self.jvm_metaspace_bytes + self.jvm_overhead_bytes

    @property
    def jvm_heap_bytes(self) -> int:
        """``-Xmx`` / ``-Xms``."""
        return self.framework_heap_bytes + self.task_heap_bytes

    @property
    def jvm_direct_bytes(self) -> int:
        """``-XX:MaxDirectMemorySize``."""
        return self.framework_off_heap_bytes + self.task_off_heap_bytes + self.network_bytes

    @property
    def network_buffers(self) -> int:
        """``NettyShuffleEnvironmentConfiguration.calculateNumberOfNetworkBuffers``."""
        return self.network_bytes // self.segment_bytes

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": str(self.version), "path": self.path,
            "framework_heap_bytes": self.framework_heap_bytes,
            "framework_off_heap_bytes": self.framework_off_heap_bytes,
            "task_heap_bytes": self.task_heap_bytes, "task_off_heap_bytes": self.task_off_heap_bytes,
            "network_bytes": self.network_bytes, "managed_bytes": self.managed_bytes,
            "jvm_metaspace_bytes": self.jvm_metaspace_bytes, "jvm_overhead_bytes": self.jvm_overhead_bytes,
            "total_flink_bytes": self.total_flink_bytes, "total_process_bytes": self.total_process_bytes,
            "jvm_heap_bytes": self.jvm_heap_bytes, "jvm_direct_bytes": self.jvm_direct_bytes,
            "segment_bytes": self.segment_bytes, "network_buffers": self.network_buffers,
            "network_source": self.network_source, "notes": list(self.notes),
        }


def _check_field(name: str, value: object, keys: Mapping[str, tuple[str, ...]]) -> None:
    if value is None:
        return
    key = keys[name][0]
    if name in _FRACTION_FIELDS:
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(float(value)):
            raise ModelInputError(f"{key} must be a number, got {value!r}")
        return  # range is Flink's own check (RangeFraction), reproduced with its text
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModelInputError(f"{key} must be a whole number of bytes, got {value!r}")
    if name in _INT_FIELDS:
        if not -(2**31) <= value <= INT_MAX:
            raise ModelInputError(f"{key} must fit in a 32-bit integer, got {value}")
        return
    if value < 0:
        raise ModelInputError(f"{key} must not be negative, got {value} bytes")
    if value > LONG_MAX:
        raise ModelInputError(f"{key} exceeds a 64-bit byte count")


def _init_options(record: Record, values: tuple[object, ...], given: Mapping[str, object],
                  keys: Mapping[str, tuple[str, ...]]) -> None:
    """Store an options record's fields, by position or by name (None: not set), each checked as
    ``_check_field`` says."""
    given = {**dict(zip(record._fields, values, strict=False)), **given}
    unknown = sorted(given.keys() - keys.keys())
    if unknown or len(values) > len(record._fields):
        raise TypeError(f"{type(record).__name__}() got an unexpected argument {unknown[:1] or values}")
    for name in record._fields:
        value = given.get(name)
        _check_field(name, value, keys)
        set_field(record, name, value)


# ---------------------------------------------------------------------------------------------
# RangeFraction and the capped derivations (ProcessMemoryUtils)
# ---------------------------------------------------------------------------------------------

class _Range(Record):
    """A min/max/fraction option triple as Flink's RangeFraction holds it."""

    __slots__ = _fields = ("min_bytes", "max_bytes", "fraction")
    min_bytes: int
    max_bytes: int
    fraction: float   # already float-rounded and widened, as Flink holds it

    def __init__(self, min_bytes: int, max_bytes: int, fraction: float) -> None:
        store(self, (min_bytes, max_bytes, fraction))


def _range(option: str, fraction: float, min_bytes: int, max_bytes: int, default_text: str,
           fallback_keys: tuple[str, ...] = ()) -> _Range:
    widened = java_float(float(fraction))
    if min_bytes <= max_bytes and 0 <= widened < 1:
        return _Range(min_bytes, max_bytes, widened)
    # RangeFraction's constructor checks min <= max first, then the fraction; Flink wraps its text.
    cause = ("min value must be less or equal to max value" if min_bytes > max_bytes
             else "fraction must be in range [0, 1)")
    raise MemoryConfigError(
        f"Inconsistently configured {option_to_string(option, default_text, fallback_keys)} "
        f"({java_double_str(widened)}) and its min ({human_readable(min_bytes)}), "
        f"max ({human_readable(max_bytes)}) value {cause}"
    )


def _cap(description: str, relative: int, rng: _Range, notes: list[str]) -> tuple[int, str]:
    if relative > rng.max_bytes:
        notes.append(f"The derived from fraction {description} ({human_readable(relative)}) is greater than "
                     f"its max value {human_readable(rng.max_bytes)}, max value will be used instead")
        return rng.max_bytes, "max"
    if relative < rng.min_bytes:
        notes.append(f"The derived from fraction {description} ({human_readable(relative)}) is less than "
                     f"its min value {human_readable(rng.min_bytes)}, min value will be used instead")
        return rng.min_bytes, "min"
    return relative, "fraction"


def _with_fraction(description: str, base: int, rng: _Range, notes: list[str]) -> tuple[int, str]:
    return _cap(description, multiply(base, rng.fraction), rng, notes)


def _with_inverse_fraction(description: str, base: int, rng: _Range, notes: list[str]) -> tuple[int, str]:
    return _cap(description, multiply(base, rng.fraction / (1 - rng.fraction)), rng, notes)


def _subtract(a: int, b: int) -> int:
    if a - b < 0:  # new MemorySize(negative) -> IllegalArgumentException
        raise MemoryConfigError("bytes must be >= 0")
    return a - b


def _page_size(segment_bytes: int) -> int:
    """``ConfigurationParserUtils.getPageSize``: int, >= 4096, a power of two."""
    key = "taskmanager.memory.segment-size"
    if segment_bytes > INT_MAX:
        raise MemoryConfigError(f"Cannot downcast {segment_bytes} to int (value of {key})")
    if segment_bytes < MIN_PAGE_SIZE:
        raise MemoryConfigError(f"Invalid configuration value for {key} : {segment_bytes} - "
                                f"Minimum memory segment size is {MIN_PAGE_SIZE}")
    if segment_bytes & (segment_bytes - 1):
        raise MemoryConfigError(f"Invalid configuration value for {key} : {segment_bytes} - "
                                "Memory segment size must be a power of 2.")
    return segment_bytes


# ---------------------------------------------------------------------------------------------
# TaskManager
# ---------------------------------------------------------------------------------------------

class _TmResolved(Record):
    """TaskManager memory options with Flink's defaults filled in."""

    __slots__ = _fields = ("framework_heap", "framework_off_heap", "task_off_heap", "metaspace", "segment",
                           "network", "managed", "overhead", "legacy_network_bytes", "network_fraction_set")
    framework_heap: int
    framework_off_heap: int
    task_off_heap: int
    metaspace: int
    segment: int
    network: _Range
    managed: _Range
    overhead: _Range
    legacy_network_bytes: int | None
    network_fraction_set: bool

    def __init__(self, framework_heap: int, framework_off_heap: int, task_off_heap: int, metaspace: int,
                 segment: int, network: _Range, managed: _Range, overhead: _Range,
                 legacy_network_bytes: int | None, network_fraction_set: bool) -> None:
        store(self, (framework_heap, framework_off_heap, task_off_heap, metaspace, segment, network, managed,
                      overhead, legacy_network_bytes, network_fraction_set))


def _resolve_tm(options: TaskManagerMemoryOptions, version: FlinkVersion, notes: list[str]) -> _TmResolved:
    def pick(value: int | None, default: int) -> int:
        return default if value is None else value

    segment = _page_size(pick(options.segment_bytes, DEFAULT_SEGMENT))
    network_set = (options.network_fraction is not None or options.network_min_bytes is not None
                   or options.network_max_bytes is not None)
    legacy_bytes = None
    if options.legacy_number_of_buffers is not None:
        if not legacy_buffers_supported(version):
            notes.append("taskmanager.network.numberOfBuffers was removed in Flink 2.0 and is ignored")
        elif network_set:
            notes.append("Ignoring old (but still present) network buffer configuration via "
                         "taskmanager.network.numberOfBuffers")
        else:
            legacy_bytes = options.legacy_number_of_buffers * segment
            if legacy_bytes < 0:
                raise MemoryConfigError("bytes must be >= 0")
    # The order of range construction follows Flink: network, then managed, then overhead are
    # each built where first used; an inconsistent one fails with its own message either way.
    network = _range(
        "taskmanager.memory.network.fraction",
        DEFAULT_NETWORK_FRACTION if options.network_fraction is None else options.network_fraction,
        pick(options.network_min_bytes, DEFAULT_NETWORK_MIN),
        pick(options.network_max_bytes, default_network_max_bytes(version)),
        "0.1", ("taskmanager.network.memory.fraction",),
    ) if legacy_bytes is None else _Range(0, LONG_MAX, 0.0)
    # Flink builds the managed range only when it derives managed memory from the fraction.
    managed = _range(
        "taskmanager.memory.managed.fraction",
        DEFAULT_MANAGED_FRACTION if options.managed_fraction is None else options.managed_fraction,
        0, LONG_MAX, "0.4",
    ) if options.managed_bytes is None else _Range(0, LONG_MAX, 0.0)
    overhead = _range(
        "taskmanager.memory.jvm-overhead.fraction",
        DEFAULT_OVERHEAD_FRACTION if options.jvm_overhead_fraction is None else options.jvm_overhead_fraction,
        pick(options.jvm_overhead_min_bytes, DEFAULT_OVERHEAD_MIN),
        pick(options.jvm_overhead_max_bytes, DEFAULT_OVERHEAD_MAX),
        "0.1",
    )
    return _TmResolved(
        framework_heap=pick(options.framework_heap_bytes, DEFAULT_FRAMEWORK_HEAP),
        framework_off_heap=pick(options.framework_off_heap_bytes, DEFAULT_FRAMEWORK_OFF_HEAP),
        task_off_heap=pick(options.task_off_heap_bytes, DEFAULT_TASK_OFF_HEAP),
        metaspace=pick(options.jvm_metaspace_bytes, DEFAULT_METASPACE_TM),
        segment=segment, network=network, managed=managed, overhead=overhead,
        legacy_network_bytes=legacy_bytes,
        network_fraction_set=options.network_fraction is not None,
    )


def _sum_exceeds_message(parts: list[tuple[str, int]], total_name: str, total: int) -> str:
    named = [f"{name} ({human_readable(size)})" for name, size in parts]
    listed = ", ".join(named[:-1]) + " and " + named[-1]
    return f"Sum of configured {listed} exceed configured {total_name} ({human_readable(total)})."


def _check_network_in_range(r: _TmResolved, network: int) -> None:
    """``sanityCheckNetworkMemoryWithExplicitlySetTotalFlinkAndHeapMemory``."""
    prefix = ("If Total Flink, Task Heap and (or) Managed Memory sizes are explicitly configured then the "
              "Network Memory size is the rest of the Total Flink memory after subtracting all other "
              "configured types of memory, but the derived Network Memory is inconsistent with its "
              "configuration.")
    if r.legacy_network_bytes is not None:
        if network != r.legacy_network_bytes:
            raise MemoryConfigError(
                f"{prefix} Derived Network Memory size ({human_readable(network)}) does not match "
                f"configured Network Memory size ({human_readable(r.legacy_network_bytes)})."
            )
        return
    if network > r.network.max_bytes or network < r.network.min_bytes:
        raise MemoryConfigError(
            f"{prefix} Derived Network Memory size ({human_readable(network)}) is not in configured "
            f"Network Memory range [{human_readable(r.network.min_bytes)}, "
            f"{human_readable(r.network.max_bytes)}]."
        )


def _network_from_options(r: _TmResolved, base: int, inverse: bool, notes: list[str]) -> tuple[int, str]:
    if r.legacy_network_bytes is not None:
        return r.legacy_network_bytes, "legacy-number-of-buffers"
    derive = _with_inverse_fraction if inverse else _with_fraction
    return derive("network memory", base, r.network, notes)


def _tm_fine_grained(o: TaskManagerMemoryOptions, r: _TmResolved, notes: list[str]
                     ) -> tuple[int, int, int, int, str]:
    """``deriveFromRequiredFineGrainedOptions``: task heap and managed both set."""
    assert o.task_heap_bytes is not None and o.managed_bytes is not None
    task_heap, managed = o.task_heap_bytes, o.managed_bytes
    exclude_network = add(add(add(add(r.framework_heap, r.framework_off_heap), task_heap), r.task_off_heap),
                          managed)
    if o.flink_bytes is not None:
        total_flink = o.flink_bytes
        if exclude_network > total_flink:
            raise MemoryConfigError(_sum_exceeds_message(
                [("Framework Heap Memory", r.framework_heap),
                 ("Framework Off-Heap Memory", r.framework_off_heap),
                 ("Task Heap Memory", task_heap), ("Task Off-Heap Memory", r.task_off_heap),
                 ("Managed Memory", managed)], "Total Flink Memory", total_flink))
        network = total_flink - exclude_network
        _check_network_in_range(r, network)
        source = "remainder"
    else:
        network, source = _network_from_options(r, exclude_network, True, notes)
    return task_heap, managed, network, add(exclude_network, network), source


def _tm_from_total_flink(o: TaskManagerMemoryOptions, r: _TmResolved, total_flink: int, notes: list[str]
                         ) -> tuple[int, int, int, str]:
    """``deriveFromTotalFlinkMemory``; returns task heap, managed, network, network source."""
    if o.managed_bytes is not None:
        managed = o.managed_bytes
    else:
        managed, _ = _with_fraction("managed memory", total_flink, r.managed, notes)
    if o.task_heap_bytes is not None:
        task_heap = o.task_heap_bytes
        exclude_network = add(add(add(add(r.framework_heap, r.framework_off_heap), task_heap),
                                  r.task_off_heap), managed)
        if exclude_network > total_flink:
            raise MemoryConfigError(_sum_exceeds_message(
                [("Framework Heap Memory", r.framework_heap),
                 ("Framework Off-Heap Memory", r.framework_off_heap),
                 ("Task Heap Memory", task_heap), ("Task Off-Heap Memory", r.task_off_heap),
                 ("Managed Memory", managed)], "Total Flink Memory", total_flink))
        network = total_flink - exclude_network
        _check_network_in_range(r, network)
        return task_heap, managed, network, "remainder"
    network, source = _network_from_options(r, total_flink, False, notes)
    exclude_heap = add(add(add(add(r.framework_heap, r.framework_off_heap), r.task_off_heap), managed),
                       network)
    if exclude_heap > total_flink:
        raise MemoryConfigError(_sum_exceeds_message(
            [("Framework Heap Memory", r.framework_heap), ("Framework Off-Heap Memory", r.framework_off_heap),
             ("Task Off-Heap Memory", r.task_off_heap), ("Managed Memory", managed),
             ("Network Memory", network)], "Total Flink Memory", total_flink))
    return total_flink - exclude_heap, managed, network, source


def _overhead_with_process(process: int, metaspace: int, overhead_rng: _Range, notes: list[str]) -> int:
    """``deriveJvmMetaspaceAndOverheadWithTotalProcessMemory``."""
    overhead, _ = _with_fraction("jvm overhead memory", process, overhead_rng, notes)
    if metaspace + overhead > process:
        raise MemoryConfigError(
            f"Sum of configured JVM Metaspace ({human_readable(metaspace)}) and JVM Overhead "
            f"({human_readable(overhead)}) exceed configured Total Process Memory "
            f"({human_readable(process)})."
        )
    return overhead


def _overhead_from_total_flink(total_flink: int, metaspace: int, process: int | None,
                               overhead_rng: _Range, notes: list[str]) -> int:
    """``deriveJvmMetaspaceAndOverheadFromTotalFlinkMemory``."""
    flink_and_metaspace = add(total_flink, metaspace)
    if process is not None:
        if process < flink_and_metaspace:
            raise MemoryConfigError(
                f"The configured Total Process Memory size ({human_readable(process)}) is less than the "
                f"sum of the derived Total Flink Memory size ({human_readable(total_flink)}) and the "
                f"configured or default JVM Metaspace size  ({human_readable(metaspace)})."
            )
        overhead = process - flink_and_metaspace
        if overhead > overhead_rng.max_bytes or overhead < overhead_rng.min_bytes:
            raise MemoryConfigError(
                f"Derived JVM Overhead size ({human_readable(overhead)}) is not in configured JVM Overhead "
                f"range [{human_readable(overhead_rng.min_bytes)}, {human_readable(overhead_rng.max_bytes)}]."
            )
        return overhead
    overhead, _ = _with_inverse_fraction("jvm overhead memory", flink_and_metaspace, overhead_rng, notes)
    return overhead


def derive_taskmanager_memory(options: TaskManagerMemoryOptions,
                              version: FlinkVersion = DEFAULT_VERSION) -> TaskManagerMemory:
    """``TaskExecutorProcessUtils.processSpecFromConfig`` for the given explicit options.

    Raises MemoryConfigError with Flink's text where Flink refuses to start the TaskManager.
    """
    notes: list[str] = []
    try:
        return _derive_tm(options, version, notes)
    except JavaArithmeticError as error:
        raise MemoryConfigError(str(error)) from None


def _derive_tm(o: TaskManagerMemoryOptions, version: FlinkVersion, notes: list[str]) -> TaskManagerMemory:
    fine_grained = o.task_heap_bytes is not None and o.managed_bytes is not None
    if not fine_grained and o.flink_bytes is None and o.process_bytes is None:
        raise MemoryConfigError(
            f"{MISSING_SIZE} fine-grained memory (taskmanager.memory.task.heap.size and "
            "taskmanager.memory.managed.size), or Total Flink Memory size "
            f"({option_to_string('taskmanager.memory.flink.size', 'null')}), or Total Process Memory size "
            f"({option_to_string('taskmanager.memory.process.size', 'null')}) need to be configured "
            "explicitly."
        )
    r = _resolve_tm(o, version, notes)
    if fine_grained:
        path = "fine-grained"
        task_heap, managed, network, total_flink, source = _tm_fine_grained(o, r, notes)
        overhead = _overhead_from_total_flink(total_flink, r.metaspace, o.process_bytes, r.overhead, notes)
    elif o.flink_bytes is not None:
        path = "flink-size"
        total_flink = o.flink_bytes
        task_heap, managed, network, source = _tm_from_total_flink(o, r, total_flink, notes)
        overhead = _overhead_from_total_flink(total_flink, r.metaspace, o.process_bytes, r.overhead, notes)
    else:
        path = "process-size"
        assert o.process_bytes is not None
        overhead = _overhead_with_process(o.process_bytes, r.metaspace, r.overhead, notes)
        total_flink = _subtract(o.process_bytes, r.metaspace + overhead)
        task_heap, managed, network, source = _tm_from_total_flink(o, r, total_flink, notes)
    if network // r.segment > INT_MAX:
        raise MemoryConfigError(f"The given number of memory bytes ({network}) corresponds to more than "
                                "MAX_INT pages.")
    return TaskManagerMemory(
        version=version, path=path,
        framework_heap_bytes=r.framework_heap, framework_off_heap_bytes=r.framework_off_heap,
        task_heap_bytes=task_heap, task_off_heap_bytes=r.task_off_heap,
        network_bytes=network, managed_bytes=managed,
        jvm_metaspace_bytes=r.metaspace, jvm_overhead_bytes=overhead,
        segment_bytes=r.segment, network_source=source, notes=tuple(notes),
    )


# ---------------------------------------------------------------------------------------------
# JobManager (JobManagerFlinkMemoryUtils + ProcessMemoryUtils)
# ---------------------------------------------------------------------------------------------

class JobManagerMemoryOptions(_MemoryOptions):
    """The JobManager memory options a config sets (None: not set)."""

    __slots__ = _fields = tuple(JM_KEYS)
    process_bytes: int | None
    flink_bytes: int | None
    heap_bytes: int | None
    off_heap_bytes: int | None
    jvm_metaspace_bytes: int | None
    jvm_overhead_fraction: float | None
    jvm_overhead_min_bytes: int | None
    jvm_overhead_max_bytes: int | None
    _keys = JM_KEYS


class JobManagerMemory(Record):
    """The JobManager memory Flink derives at start-up."""

    __slots__ = _fields = ("path", "heap_bytes", "off_heap_bytes", "jvm_metaspace_bytes",
                           "jvm_overhead_bytes")
    path: str
    heap_bytes: int
    off_heap_bytes: int
    jvm_metaspace_bytes: int
    jvm_overhead_bytes: int

    def __init__(self, path: str, heap_bytes: int, off_heap_bytes: int, jvm_metaspace_bytes: int,
                 jvm_overhead_bytes: int) -> None:
        store(self, (path, heap_bytes, off_heap_bytes, jvm_metaspace_bytes, jvm_overhead_bytes))

    @property
    def total_flink_bytes(self) -> int:
        return self.heap_bytes + self.off_heap_bytes

    @property
    def total_process_bytes(self) -> int:
        return self.total_flink_bytes + self.jvm_metaspace_bytes + self.jvm_overhead_bytes


def derive_jobmanager_memory(o: JobManagerMemoryOptions) -> JobManagerMemory:
    """``JobManagerProcessUtils.processSpecFromConfig`` (same in 1.13 .. 2.x)."""
    notes: list[str] = []
    try:
        off_heap = DEFAULT_JM_OFF_HEAP if o.off_heap_bytes is None else o.off_heap_bytes
        metaspace = DEFAULT_METASPACE_JM if o.jvm_metaspace_bytes is None else o.jvm_metaspace_bytes
        overhead_rng = _range(
            "jobmanager.memory.jvm-overhead.fraction",
            DEFAULT_OVERHEAD_FRACTION if o.jvm_overhead_fraction is None else o.jvm_overhead_fraction,
            DEFAULT_OVERHEAD_MIN if o.jvm_overhead_min_bytes is None else o.jvm_overhead_min_bytes,
            DEFAULT_OVERHEAD_MAX if o.jvm_overhead_max_bytes is None else o.jvm_overhead_max_bytes,
            "0.1",
        )
        if o.heap_bytes is not None:
            # JobManagerFlinkMemoryUtils.deriveFromRequiredFineGrainedOptions (1.20.5 / 2.3.0, checked
            # against BashJavaUtils): with Total Flink Memory also set, an explicit off-heap must add
            # up exactly; an unset one is the rest (total - heap), not its 128m default.
            heap = o.heap_bytes
            consistent = ("Please, make the configuration consistent or configure only one option: either "
                          "JVM Heap or Total Flink Memory.")
            if o.flink_bytes is not None and o.off_heap_bytes is not None:
                if add(heap, off_heap) != o.flink_bytes:
                    raise MemoryConfigError(
                        f"Sum of the configured JVM Heap Memory ({human_readable(heap)}) and the configured "
                        f"Off-heap Memory ({human_readable(off_heap)}) does not match the configured Total "
                        f"Flink Memory ({human_readable(o.flink_bytes)}). {consistent}"
                    )
            elif o.flink_bytes is not None:
                if o.flink_bytes < heap:
                    raise MemoryConfigError(
                        f"The configured JVM Heap Memory ({human_readable(heap)}) exceeds the configured "
                        f"Total Flink Memory ({human_readable(o.flink_bytes)}). {consistent}"
                    )
                off_heap = o.flink_bytes - heap
            total_flink = add(heap, off_heap)
            overhead = _overhead_from_total_flink(total_flink, metaspace, o.process_bytes, overhead_rng,
                                                  notes)
            return JobManagerMemory("fine-grained", heap, off_heap, metaspace, overhead)
        if o.flink_bytes is not None:
            total_flink = o.flink_bytes
            path = "flink-size"
            overhead = -1
        elif o.process_bytes is not None:
            overhead = _overhead_with_process(o.process_bytes, metaspace, overhead_rng, notes)
            total_flink = _subtract(o.process_bytes, metaspace + overhead)
            path = "process-size"
        else:
            raise MemoryConfigError(
                f"{MISSING_SIZE} fine-grained memory (jobmanager.memory.heap.size), or Total Flink Memory "
                f"size ({option_to_string('jobmanager.memory.flink.size', 'null')}), or Total Process "
                f"Memory size ({option_to_string('jobmanager.memory.process.size', 'null')}) need to be "
                "configured explicitly."
            )
        if total_flink <= off_heap:
            raise MemoryConfigError(
                f"The configured Total Flink Memory ({human_readable(total_flink)}) is less than the "
                f"configured Off-heap Memory ({human_readable(off_heap)})."
            )
        heap = total_flink - off_heap
        if overhead < 0:
            overhead = _overhead_from_total_flink(total_flink, metaspace, o.process_bytes, overhead_rng,
                                                  notes)
        return JobManagerMemory(path, heap, off_heap, metaspace, overhead)
    except JavaArithmeticError as error:
        raise MemoryConfigError(str(error)) from None


# ---------------------------------------------------------------------------------------------
# Reading the options from a configuration
# ---------------------------------------------------------------------------------------------

RawGetter = Callable[[str], object | None]


def _effective_getter(source: object) -> tuple[Callable[[str], bool], Callable[[str, str], object]]:
    """(is_set, read) for a mapping, a getter, or an EffectiveConfig (H1) by duck typing."""
    is_set = getattr(source, "is_set", None)
    if callable(is_set) and hasattr(source, "memory_bytes"):
        def read_effective(key: str, kind: str) -> object:
            if kind == "memory":
                return source.memory_bytes(key)  # type: ignore[attr-defined]
            if kind == "float":
                return source.floating(key)  # type: ignore[attr-defined]
            return source.integer(key)  # type: ignore[attr-defined]
        return is_set, read_effective
    if isinstance(source, Mapping):
        mapping = source
        return (lambda key: mapping.get(key) not in (None, "")), (lambda key, _kind: mapping.get(key))
    if callable(source):
        getter = source
        return (lambda key: getter(key) not in (None, "")), (lambda key, _kind: getter(key))
    raise ModelInputError(f"cannot read memory options from a {type(source).__name__}")


def _parse(key: str, kind: str, raw: object) -> object:
    try:
        if kind == "memory":
            if isinstance(raw, int) and not isinstance(raw, bool):
                return raw
            return parse_memory_size(str(raw)).bytes
        if kind == "float":
            return parse_float(raw)  # type: ignore[arg-type]
        return parse_int(raw)  # type: ignore[arg-type]
    except FlinktuneError as error:
        raise MemoryConfigError(f"Cannot read {'memory size' if kind == 'memory' else 'value'} from config "
                                f"option '{key}': {error.message}") from None


def _read_options(source: object, keys: Mapping[str, tuple[str, ...]]) -> dict[str, object]:
    is_set, read = _effective_getter(source)
    values: dict[str, object] = {}
    for name, candidates in keys.items():
        if name == "legacy_number_of_buffers" and any(
                n in values for n in ("network_fraction", "network_min_bytes", "network_max_bytes")):
            continue  # Flink never parses it then (isUsingLegacyNetworkConfigs), so neither do we
        kind = "float" if name in _FRACTION_FIELDS else "int" if name in _INT_FIELDS else "memory"
        for key in candidates:  # new key first: it wins over a deprecated one
            if is_set(key):
                values[name] = _parse(key, kind, read(key, kind))
                break
    return values


def taskmanager_memory_options(source: Mapping[str, object] | RawGetter | object) -> TaskManagerMemoryOptions:
    """The explicit TaskManager memory options of a configuration.

    ``source`` is a mapping of raw values (``{"taskmanager.memory.process.size": "1728m"}``), a
    getter ``key -> raw value or None``, or an EffectiveConfig (``is_set`` / ``memory_bytes`` /
    ``floating`` / ``integer``). Deprecated keys are honoured; the new key wins when both are set.
    The legacy ``taskmanager.heap.size`` / ``.mb`` keys are not read here: the situation layer maps
    them as the version and deployment do (flinktune.situation.legacy) into the EffectiveConfig.
    """
    return TaskManagerMemoryOptions(**_read_options(source, TM_KEYS))  # type: ignore[arg-type]


def jobmanager_memory_options(source: Mapping[str, object] | RawGetter | object) -> JobManagerMemoryOptions:
    return JobManagerMemoryOptions(**_read_options(source, JM_KEYS))  # type: ignore[arg-type]


def taskmanager_memory_from_config(source: Mapping[str, object] | RawGetter | object,
                                   version: FlinkVersion = DEFAULT_VERSION) -> TaskManagerMemory:
    """Shortcut: read the options and derive."""
    return derive_taskmanager_memory(taskmanager_memory_options(source), version)
