"""Speed of the simulator's kernel against an equivalent SimPy model (benchmarks/simpy_credit_model.py).

Both simulate the same job (source -> HASH -> sink over 2 TaskManagers, credit-based flow control
with exclusive and floating buffers, output flusher, NIC per TaskManager) for the same simulated
time, in several regimes. Reported per engine: CPU seconds (process time, robust on a shared
machine), events processed and events per CPU second, records simulated per CPU second; and the
ratio of CPU times (the fair speed figure: the engines count events differently, SimPy also
counts process resumptions and container puts/gets the callback kernel does not need). The two
models must agree on the number of records moved. A bare-kernel line compares one timer event in
each engine.

Every case runs twice in flinktune.sim: the reference core (``fold=False``: every subtask and
channel built) and the fast path (``fold=True``: one repeating block of TaskManagers simulated and
counted for all, flinktune.sim.symmetry; identical to the reference when the job does not repeat).
Large cases (parallelism 64 on 16 TaskManagers) compare with SimPy over a shorter simulated time.

Production-sized jobs (``--production``): sample_configs/scenarios/slow-sink.yaml scaled to every
vertex at parallelism 64 (16 TaskManagers x 4 slots) and 256 (64 x 4), 30 s simulated, each run
in a child process so that wall time and peak memory (max RSS) are the whole process's.

Run: flock /tmp/flinktune-heavy.lock .venv/bin/python benchmarks/bench_sim.py
     [--sim-seconds 2] [--large-sim-seconds 0.5] [--repeat 3] [--production] [--reference-production]
Writes benchmarks/results/sim.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import simpy
import simpy_credit_model as sp

from flinktune.sim import run_scenario
from flinktune.sim.scenario import PYTHON_VALUES, Scenario

RESULTS = Path(__file__).resolve().parent / "results" / "sim.md"
ROOT = Path(__file__).resolve().parents[1]


def scaled_scenario(base: str, parallelism: int, slots: int, seconds: float,
                    weights: list[float] | None = None) -> Scenario:
    """A sample scenario with every vertex at ``parallelism`` on parallelism/slots TaskManagers."""
    from flinktune.sim import load_scenario

    data: dict[str, Any] = load_scenario(ROOT / "sample_configs" / "scenarios" / f"{base}.yaml").model_dump()
    data["duration"] = seconds
    data["warmup"] = min(data["warmup"], seconds / 3)
    data["cluster"]["task_managers"] = parallelism // slots
    data["cluster"]["slots_per_tm"] = slots
    for vertex in data["job"]["vertices"]:
        vertex["parallelism"] = parallelism
        spec = vertex.get("input")
        if spec and spec.get("hot_subtask") is not None and weights is not None:
            spec["hot_subtask"] = None
            spec["weights"] = weights
    return Scenario.model_validate(data, context=PYTHON_VALUES)


def periodic_hot_weights(parallelism: int, period: int, index: int, share: float) -> list[float]:
    """hot-subtask.yaml's skew repeated: subtask ``index`` of every ``period`` gets ``share`` of its block."""
    weights = []
    for s in range(parallelism):
        weights.append(share if s % period == index else (1 - share) / (period - 1))
    return weights


PRODUCTION = {
    "slow-sink p=64 (16 TM x 4 slots), 30 s": ("slow-sink", 64, None),
    "slow-sink p=256 (64 TM x 4 slots), 30 s": ("slow-sink", 256, None),
    "hot subtask every 16th, p=64, 30 s": ("hot-subtask", 64, periodic_hot_weights(64, 16, 2, 0.55)),
}


def production_child(name: str, fold: bool) -> None:
    """Run one production case in this process and print JSON (wall, CPU, max RSS, rates)."""
    import resource

    base, p, weights = PRODUCTION[name]
    sc = scaled_scenario(base, p, 4, 30.0, weights)
    t0 = time.perf_counter()
    c0 = time.process_time()
    result = run_scenario(sc, np.random.default_rng(1), fold=fold)
    out = {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
           "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
           "copies": result.extra["fold_copies"], "events": result.events_processed,
           "sink_rec_s": result.vertices[-1].records_in_per_s,
           "source_bp_ms_s": result.vertices[0].backpressured_ms_per_s,
           "source_out_pool": result.vertices[0].out_pool_usage}
    print(json.dumps(out))


def production(name: str, fold: bool) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, __file__, "--child", name, "--child-fold", str(int(fold))],
                          capture_output=True, text=True, check=True, env=env)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def flinktune_scenario(cfg: sp.Config, seconds: float) -> Scenario:
    p = cfg.task_managers * cfg.slots
    return Scenario.model_validate({
        "name": "bench", "duration": seconds, "warmup": min(0.5, seconds / 4), "sample_interval": seconds,
        "latency_sample_every": 1_000_000,
        "cluster": {"task_managers": cfg.task_managers, "slots_per_tm": cfg.slots, "bandwidth": cfg.bandwidth,
                    "rtt": cfg.rtt_s},
        "network": {"segment_size": cfg.segment, "buffers_per_channel": cfg.bpc,
                    "floating_buffers_per_gate": cfg.floating, "buffer_timeout": cfg.timeout_s},
        "costs": {"message_overhead": cfg.message_overhead_s, "message_overhead_bytes": cfg.header_bytes,
                  "buffer_overhead": cfg.buffer_overhead_s, "flush_overhead": 0.0},
        "job": {"vertices": [
            {"name": "src", "parallelism": p, "capacity": cfg.source_capacity,
             "record_size": {"fixed": cfg.record_bytes}},
            {"name": "sink", "parallelism": p, "capacity": cfg.sink_capacity,
             "input": {"ship_strategy": "HASH"}},
        ]},
    }, context=PYTHON_VALUES)


def bare_kernel(n: int = 300_000) -> tuple[float, float]:
    from flinktune.sim.kernel import Kernel

    kernel = Kernel()

    def tick(i: int) -> None:
        if i < n:
            kernel.schedule(0.001, tick, i + 1)

    t0 = time.process_time()
    kernel.at(0.0, tick, 0)
    kernel.run(1e12)
    ours = n / (time.process_time() - t0)
    env = simpy.Environment()

    def proc(env: simpy.Environment):  # type: ignore[no-untyped-def]
        for _ in range(n):
            yield env.timeout(0.001)

    env.process(proc(env))
    t0 = time.process_time()
    env.run()
    return ours, n / (time.process_time() - t0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sim-seconds", type=float, default=2.0)
    parser.add_argument("--large-sim-seconds", type=float, default=0.5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--production", action="store_true", help="also the 30 s production-sized jobs")
    parser.add_argument("--reference-production", action="store_true",
                        help="also run the p = 64 production-sized jobs on the reference core (minutes)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-fold", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        production_child(args.child, bool(args.child_fold))
        return
    large = {
        "large record-bound: p=64 on 16 x 4, 100k rec/s each": sp.Config(task_managers=16, slots=4),
        "large network-bound: p=64 on 16 x 4, 100 Mbit/s": sp.Config(task_managers=16, slots=4,
                                                                      bandwidth=1.25e7, record_bytes=2048,
                                                                      source_capacity=20000.0),
    }
    cases = {
        "record-bound: 4 x 100k rec/s of 200 B": sp.Config(),
        "network-bound: 100 Mbit/s, 2 KiB records": sp.Config(bandwidth=1.25e7, record_bytes=2048,
                                                              source_capacity=20000.0),
        "event-bound: 1 record per 4 KiB buffer": sp.Config(record_bytes=4096, segment=4096,
                                                            source_capacity=20000.0),
        "flusher-bound: 1 ms timeout, 8 x 8 channels": sp.Config(slots=4, timeout_s=0.001,
                                                                 source_capacity=20000.0),
    }
    lines = ["# Simulator vs SimPy, and production-sized jobs", "",
             f"Same job and simulated time in all engines; best of {args.repeat} runs (large cases: 1 run); "
             f"{args.sim_seconds:g} s simulated ({args.large_sim_seconds:g} s for the large cases). "
             f"Python {platform.python_version()}, SimPy {simpy.__version__}, machine shared by several "
             f"processes (2 cores; load average {os.getloadavg()[0]:.1f} at the start).", "",
             "flinktune.sim reference: the full discrete-event model. fast path: `fold=True`, one repeating "
             "block of TaskManagers (at least 4 subtasks per vertex) simulated and counted for all; the "
             "2 x 2 slot cases do not fold (a block would be the whole job), so there it is the reference.",
             "",
             "| case | engine | CPU s | events | events/CPU s | records | records/CPU s | sink rec/s (sim) |",
             "|---|---|---|---|---|---|---|---|"]
    runs = [(name, cfg, args.sim_seconds, args.repeat) for name, cfg in cases.items()]
    runs += [(name, cfg, args.large_sim_seconds, 1) for name, cfg in large.items()]
    for name, cfg, seconds, repeat in runs:
        sc = flinktune_scenario(cfg, seconds)
        best = {"reference": float("inf"), "fast": float("inf"), "simpy": float("inf")}
        stats: dict[str, tuple[int, int]] = {}
        for _ in range(repeat):
            for engine, fold in (("reference", False), ("fast", True)):
                t0 = time.process_time()
                result = run_scenario(sc, np.random.default_rng(1), fold=fold)
                cpu = time.process_time() - t0
                if cpu < best[engine]:
                    best[engine] = cpu
                    stats[engine] = (result.events_processed, sum(c.records for c in result.channels))
            t0 = time.process_time()
            events, records = sp.run(cfg, seconds, seed=1)
            cpu = time.process_time() - t0
            if cpu < best["simpy"]:
                best["simpy"] = cpu
                stats["simpy"] = (events, records)
        for engine, label in (("reference", "flinktune.sim reference"), ("fast", "flinktune.sim fast path"),
                              ("simpy", "SimPy model")):
            cpu = best[engine]
            events, records = stats[engine]
            lines.append(f"| {name} | {label} | {cpu:.2f} | {events} | {events / cpu:,.0f} | {records} | "
                         f"{records / cpu:,.0f} | {records / seconds:,.0f} |")
        sp_records = stats["simpy"][1]
        agree = max(abs(stats[e][1] / sp_records - 1) for e in ("reference", "fast"))
        ratio_ref = best["simpy"] / best["reference"]
        ratio_fast = best["simpy"] / best["fast"]
        lines.append(f"| {name} | **SimPy CPU / ours** | **reference {ratio_ref:.1f}x, "
                     f"fast path {ratio_fast:.1f}x** | | | "
                     f"records agree within {100 * agree:.1f}% | | |")
        print(*lines[-4:], sep="\n", flush=True)
    if args.production:
        lines += ["", "## Production-sized jobs (30 s simulated, one child process each)", "",
                  "| job | engine | wall s | CPU s | max RSS MB | blocks counted | events | sink rec/s | "
                  "source backpressured ms/s | source outPoolUsage |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for name in PRODUCTION:
            # the reference at p = 256 would take the better part of an hour: p = 64 only
            reference = args.reference_production and PRODUCTION[name][1] <= 64
            engines = [("fast path", True)] + ([("reference", False)] if reference else [])
            for label, fold in engines:
                r = production(name, fold)
                lines.append(f"| {name} | {label} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
                             f"{r['max_rss_mb']:.0f} | {r['copies']:.0f} | {r['events']} | "
                             f"{r['sink_rec_s']:,.0f} | {r['source_bp_ms_s']:.0f} | "
                             f"{r['source_out_pool']:.3f} |")
                print(lines[-1], flush=True)
    ours, theirs = bare_kernel()
    lines += ["", f"Bare kernel, one timer event re-scheduling itself: flinktune.sim.kernel {ours:,.0f} "
              f"events/CPU s, SimPy {theirs:,.0f} events/CPU s ({ours / theirs:.1f}x).", ""]
    print(lines[-2])
    lines += ["", "The callback kernel processes fewer, coarser events than SimPy for the same work (SimPy",
              "resumes a generator per wait and triggers an event per container put/get), so the fair",
              "speed figure is the CPU time for the same simulated run; the events/CPU s columns are each",
              "engine's own event rate. flinktune.sim logs a source's chunk of equal-size records that",
              "only appends to buffers (flinktune.sim.chunklog) and writes each subpartition's share as",
              "one run when the buffer is read, flushed or needs a new buffer, so in the record-bound",
              "case its cost is per event, not per record; the SimPy model, like most SimPy code, loops",
              "over records. With few records per event (network-bound, flusher-bound, one record per",
              "buffer) both engines are bound by per-event Python overhead.", "",
              "The fast path's gain is the number of blocks counted (TaskManagers / TaskManagers per",
              "block): none on the 2 x 2 slot cases (a block keeps at least 4 subtasks), 2x on 8 x 8,",
              "16x at p = 64 on 16 x 4. Wall times of the production jobs include waiting for the CPU",
              "on the shared machine (see the load average above); CPU seconds are the robust figure.",
              "A single hot subtask (hot-subtask.yaml scaled) does not repeat, so it runs on the",
              "reference; the 'every 16th' variant repeats every 4 TaskManagers and folds in 4."]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
