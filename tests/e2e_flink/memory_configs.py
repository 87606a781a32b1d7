"""A seeded generator of Flink memory configurations covering every way of sizing TaskManager and
JobManager memory, for the BashJavaUtils comparison (test_memory_oracle.py).

Ways of sizing a TaskManager (TaskExecutorProcessUtils / ProcessMemoryUtils, 1.x and 2.x): total
process size; total Flink size; fine-grained task heap + managed (with or without the totals); total
Flink + task heap (network is the rest); the legacy ``taskmanager.heap.size`` / ``.mb`` keys (mapped
to total Flink memory by the 1.x start-up path, MemoryBackwardsCompatibilityUtils; gone in 2.x);
nothing at all. On top, independently: network fraction/min/max (new or deprecated keys), managed
fraction, JVM metaspace and overhead, framework heap/off-heap, task off-heap, segment size and the
1.x ``taskmanager.network.numberOfBuffers``; and the JobManager the same way (process, flink, heap,
legacy ``jobmanager.heap.size`` / ``.mb``, nothing). A share of configurations is deliberately
inconsistent so Flink refuses them.
"""

from __future__ import annotations

import random

MIB = 1024**2
GIB = 1024**3
_FRACTIONS = ("0.05", "0.1", "0.15", "0.2", "0.25", "0.3", "0.33", "0.4", "0.45", "0.5", "0.6", "0.7")
_BAD_FRACTIONS = ("1.0", "1.5", "-0.1")
KINDS = ("process", "flink", "fine-grained", "fine-grained+flink", "fine-grained+process",
         "flink+task-heap", "flink+process", "legacy-heap", "legacy-heap-mb", "legacy-heap+process",
         "nothing", "invalid")


def _size(rng: random.Random, num_bytes: int) -> str:
    """``num_bytes`` written the way users write it (units are powers of 1024, Flink's MemorySize)."""
    if num_bytes % GIB == 0 and rng.random() < 0.5:
        return rng.choice(("{}g", "{}gb", "{} gb", "{}GB")).format(num_bytes // GIB)
    if num_bytes % MIB == 0 and rng.random() < 0.8:
        return rng.choice(("{}m", "{}mb", "{} mb", "{}MB")).format(num_bytes // MIB)
    if num_bytes % 1024 == 0 and rng.random() < 0.5:
        return rng.choice(("{}k", "{}kb")).format(num_bytes // 1024)
    return rng.choice(("{}", "{}b", "{} bytes")).format(num_bytes)


def _mib(rng: random.Random, lo: int, hi: int, odd: float = 0.15) -> int:
    """A size between lo and hi MiB, now and then not a whole number of MiB."""
    value = rng.randint(lo, hi) * MIB
    if rng.random() < odd:
        value += rng.randint(1, MIB - 1)
    return value


def _tm_extras(rng: random.Random, cfg: dict[str, str]) -> None:
    if rng.random() < 0.35:
        key = rng.choice(("taskmanager.memory.network.fraction", "taskmanager.network.memory.fraction"))
        cfg[key] = rng.choice(_FRACTIONS[:8])
    if rng.random() < 0.3:
        key = rng.choice(("taskmanager.memory.network.min", "taskmanager.network.memory.min"))
        cfg[key] = _size(rng, _mib(rng, 8, 256))
    if rng.random() < 0.3:
        key = rng.choice(("taskmanager.memory.network.max", "taskmanager.network.memory.max"))
        cfg[key] = _size(rng, _mib(rng, 32, 2048))
    if rng.random() < 0.1:  # both spellings: the new key wins
        cfg["taskmanager.network.memory.fraction"] = rng.choice(_FRACTIONS[:6])
        cfg["taskmanager.memory.network.fraction"] = rng.choice(_FRACTIONS[:6])
    if rng.random() < 0.3:
        cfg["taskmanager.memory.managed.fraction"] = rng.choice(_FRACTIONS)
    if rng.random() < 0.25:
        cfg["taskmanager.memory.jvm-metaspace.size"] = _size(rng, _mib(rng, 64, 512))
    if rng.random() < 0.25:
        cfg["taskmanager.memory.jvm-overhead.fraction"] = rng.choice(_FRACTIONS[:6])
    if rng.random() < 0.2:
        cfg["taskmanager.memory.jvm-overhead.min"] = _size(rng, _mib(rng, 64, 384))
    if rng.random() < 0.2:
        cfg["taskmanager.memory.jvm-overhead.max"] = _size(rng, _mib(rng, 256, 2048))
    if rng.random() < 0.2:
        cfg["taskmanager.memory.framework.heap.size"] = _size(rng, _mib(rng, 32, 256))
    if rng.random() < 0.2:
        cfg["taskmanager.memory.framework.off-heap.size"] = _size(rng, _mib(rng, 32, 256))
    if rng.random() < 0.2:
        cfg["taskmanager.memory.task.off-heap.size"] = _size(rng, _mib(rng, 0, 256))
    if rng.random() < 0.15:
        cfg["taskmanager.memory.segment-size"] = rng.choice(("4kb", "16kb", "32kb", "64kb", "128 kb", "1mb"))
    if rng.random() < 0.12:
        cfg["taskmanager.network.numberOfBuffers"] = str(rng.randint(256, 8192))


def _jm(rng: random.Random, cfg: dict[str, str]) -> None:
    way = rng.choice(("process", "process", "flink", "heap", "heap+flink", "legacy", "legacy-mb", "nothing"))
    if way == "process":
        cfg["jobmanager.memory.process.size"] = _size(rng, _mib(rng, 600, 8192))
    elif way == "flink":
        cfg["jobmanager.memory.flink.size"] = _size(rng, _mib(rng, 200, 4096))
    elif way.startswith("heap"):
        cfg["jobmanager.memory.heap.size"] = _size(rng, _mib(rng, 128, 4096))
        if way == "heap+flink":
            cfg["jobmanager.memory.flink.size"] = _size(rng, _mib(rng, 200, 4096))
    elif way == "legacy":
        cfg["jobmanager.heap.size"] = _size(rng, _mib(rng, 256, 4096))
    elif way == "legacy-mb":
        cfg["jobmanager.heap.mb"] = str(rng.randint(256, 4096))
    if rng.random() < 0.25:
        cfg["jobmanager.memory.off-heap.size"] = _size(rng, _mib(rng, 16, 512))
    if rng.random() < 0.2:
        cfg["jobmanager.memory.jvm-metaspace.size"] = _size(rng, _mib(rng, 64, 512))
    if rng.random() < 0.2:
        cfg["jobmanager.memory.jvm-overhead.fraction"] = rng.choice(_FRACTIONS[:6])


def _invalid(rng: random.Random, cfg: dict[str, str]) -> None:
    """One inconsistency Flink refuses, on top of a process-size config."""
    cfg["taskmanager.memory.process.size"] = _size(rng, _mib(rng, 768, 4096))
    what = rng.randrange(9)
    if what == 0:
        cfg["taskmanager.memory.network.min"] = "300m"
        cfg["taskmanager.memory.network.max"] = "100m"
    elif what == 1:
        cfg["taskmanager.memory.network.fraction"] = rng.choice(_BAD_FRACTIONS)
    elif what == 2:
        cfg["taskmanager.memory.managed.fraction"] = rng.choice(_BAD_FRACTIONS)
    elif what == 3:
        cfg["taskmanager.memory.jvm-overhead.fraction"] = rng.choice(_BAD_FRACTIONS)
    elif what == 4:
        cfg["taskmanager.memory.network.min"] = _size(rng, _mib(rng, 4096, 9000))
    elif what == 5:
        cfg["taskmanager.memory.jvm-metaspace.size"] = _size(rng, _mib(rng, 4096, 9000))
    elif what == 6:
        cfg["taskmanager.memory.segment-size"] = rng.choice(("2kb", "48kb", "1000", "3mb"))
    elif what == 7:
        cfg["taskmanager.memory.managed.fraction"] = rng.choice(("0.8", "0.9", "0.95"))
    else:
        cfg["taskmanager.memory.flink.size"] = _size(rng, _mib(rng, 300, 600))
        cfg["taskmanager.memory.task.heap.size"] = _size(rng, _mib(rng, 400, 800))


def generate(seed: int, count: int) -> list[tuple[str, dict[str, str]]]:
    """``count`` (kind, config) pairs; every kind appears, in turn, so any count >= len(KINDS) covers all."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        kind = KINDS[n % len(KINDS)]
        cfg: dict[str, str] = {}
        if kind == "process":
            cfg["taskmanager.memory.process.size"] = _size(rng, _mib(rng, 700, 16384))
        elif kind == "flink":
            cfg["taskmanager.memory.flink.size"] = _size(rng, _mib(rng, 400, 12288))
        elif kind.startswith("fine-grained"):
            cfg["taskmanager.memory.task.heap.size"] = _size(rng, _mib(rng, 64, 4096))
            cfg[rng.choice(("taskmanager.memory.managed.size", "taskmanager.memory.size"))] = _size(
                rng, _mib(rng, 0, 4096)
            )
            if kind.endswith("+flink"):
                cfg["taskmanager.memory.flink.size"] = _size(rng, _mib(rng, 600, 10000))
            if kind.endswith("+process"):
                cfg["taskmanager.memory.process.size"] = _size(rng, _mib(rng, 1000, 12000))
        elif kind == "flink+task-heap":
            cfg["taskmanager.memory.flink.size"] = _size(rng, _mib(rng, 600, 8192))
            cfg["taskmanager.memory.task.heap.size"] = _size(rng, _mib(rng, 64, 2048))
        elif kind == "flink+process":
            cfg["taskmanager.memory.flink.size"] = _size(rng, _mib(rng, 600, 8192))
            cfg["taskmanager.memory.process.size"] = _size(rng, _mib(rng, 800, 10000))
        elif kind.startswith("legacy-heap"):
            if kind == "legacy-heap-mb":
                cfg["taskmanager.heap.mb"] = str(rng.randint(512, 8192))
            else:
                cfg["taskmanager.heap.size"] = _size(rng, _mib(rng, 512, 8192))
            if kind.endswith("+process"):
                cfg["taskmanager.memory.process.size"] = _size(rng, _mib(rng, 1000, 12000))
        elif kind == "invalid":
            _invalid(rng, cfg)
        if kind != "nothing" or rng.random() < 0.5:
            _tm_extras(rng, cfg)
        _jm(rng, cfg)
        out.append((kind, cfg))
    return out
