"""Blocking (batch) shuffles: write buffers, files and read memory, hash versus sort-merge.

Facts (flink-facts §1.2, §2.3, §6; FLIP-148):
- Hash shuffle (``BoundedBlockingResultPartition``) keeps one buffer per subpartition at least
  (pool minimum ``Sp + 1``) and writes one file per subpartition; FLIP-148's example: parallelism
  10,000 with 32 KiB buffers needs "at least 320M" (10,000 x 32 KiB = 320,000 KiB) per result partition.
- Sort-merge shuffle (``SortMergeResultPartition``) needs ``sort-shuffle.min-buffers`` whatever the
  parallelism and writes one data file plus one index file per result partition.
- Which one: blocking and ``Sp >= taskmanager.network.sort-shuffle.min-parallelism`` => sort
  (default Integer.MAX_VALUE up to 1.14, i.e. hash; 1 from 1.15, i.e. sort; fixed 1 in 2.x).
- Reading sort-shuffle data uses ``taskmanager.memory.framework.off-heap.batch-shuffle.size``
  (32m until 1.14, 64m from 1.15), cut from framework off-heap memory (128m), so it must be smaller.

No numpy here (scalar, used by the rules engine).
"""

from __future__ import annotations

from dataclasses import dataclass

from flinktune.errors import ModelInputError
from flinktune.model.buffers import BufferSettings, PartitionType, result_partition_buffers
from flinktune.releases import SORT_SHUFFLE_DEFAULT
from flinktune.versions import FlinkVersion

MIB = 1024**2


def _positive(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ModelInputError(f"{name} must be a positive whole number, got {value!r}")
    return value


def hash_shuffle_min_bytes(subpartitions: int, segment_bytes: int) -> int:
    """FLIP-148's bound: a hash-based blocking result partition needs one buffer per subpartition."""
    return _positive("subpartitions", subpartitions) * _positive("segment_bytes", segment_bytes)


def default_batch_shuffle_read_bytes(version: FlinkVersion) -> int:
    """``taskmanager.memory.framework.off-heap.batch-shuffle.size`` default: 32m until 1.14, 64m after."""
    return 64 * MIB if SORT_SHUFFLE_DEFAULT.applies(version) else 32 * MIB


@dataclass(frozen=True)
class BlockingPartitionPlan:
    kind: str                    # hash-blocking | sort-blocking
    write_buffers: int           # the result partition's required buffers
    write_bytes: int
    files_per_partition: int     # files one producer subtask leaves on disk
    files_per_edge: int          # ... times the producer parallelism
    open_files_while_writing: int


def blocking_partition_plan(settings: BufferSettings, producer_parallelism: int, subpartitions: int,
                            segment_bytes: int) -> BlockingPartitionPlan:
    """Memory and files of one blocking edge (``producer_parallelism`` partitions of ``subpartitions``)."""
    producers = _positive("producer_parallelism", producer_parallelism)
    seg = _positive("segment_bytes", segment_bytes)
    part = result_partition_buffers(settings, subpartitions, PartitionType.BLOCKING)
    if part.kind == "sort-blocking":
        files, open_files = 2, 1            # PartitionedFile: data + index, one written at a time
    else:
        files, open_files = subpartitions, subpartitions   # one file per subpartition, all open
    return BlockingPartitionPlan(part.kind, part.required, part.required * seg, files, files * producers,
                                 open_files)


@dataclass(frozen=True)
class ReadMemoryCheck:
    read_bytes: int
    read_buffers: int
    framework_off_heap_bytes: int
    fits_in_framework_off_heap: bool
    buffers_per_reader: float     # read buffers shared by concurrently read partitions
    message: str | None


def batch_shuffle_read_check(read_bytes: int, framework_off_heap_bytes: int, segment_bytes: int,
                             concurrent_partitions: int = 1) -> ReadMemoryCheck:
    """Is ``batch-shuffle.size`` below framework off-heap, and how many buffers each reader gets."""
    rb = _positive("batch-shuffle read bytes", read_bytes)
    fo = _positive("framework off-heap bytes", framework_off_heap_bytes)
    seg = _positive("segment_bytes", segment_bytes)
    readers = _positive("concurrent_partitions", concurrent_partitions)
    buffers = rb // seg
    fits = rb < fo
    message = None if fits else (
        "taskmanager.memory.framework.off-heap.batch-shuffle.size is cut from "
        "taskmanager.memory.framework.off-heap.size and must be smaller than it; raise both together")
    return ReadMemoryCheck(rb, buffers, fo, fits, buffers / readers, message)
