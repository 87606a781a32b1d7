"""Speed of the simulator's kernel against an equivalent SimPy model (benchmarks/simpy_credit_model.py).

Both simulate the same job (source -> HASH -> sink over 2 TaskManagers, credit-based flow control
with exclusive and floating buffers, output flusher, NIC per TaskManager) for the same simulated
time, in several regimes. Reported per engine: CPU seconds (process time, robust on a shared
machine), events processed and events per CPU second, records simulated per CPU second; and the
ratio of CPU times (the fair speed figure: the engines count events differently, SimPy also
counts process resumptions and container puts/gets the callback kernel does not need). The two
models must agree on the number of records moved. A bare-kernel line compares one timer event in
each engine.

Run: .venv/bin/python benchmarks/bench_sim.py [--sim-seconds 2] [--repeat 3]
Writes benchmarks/results/sim.md.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import simpy
import simpy_credit_model as sp

from flinktune.sim import run_scenario
from flinktune.sim.scenario import PYTHON_VALUES, Scenario

RESULTS = Path(__file__).resolve().parent / "results" / "sim.md"


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
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cases = {
        "record-bound: 4 x 100k rec/s of 200 B": sp.Config(),
        "network-bound: 100 Mbit/s, 2 KiB records": sp.Config(bandwidth=1.25e7, record_bytes=2048,
                                                              source_capacity=20000.0),
        "event-bound: 1 record per 4 KiB buffer": sp.Config(record_bytes=4096, segment=4096,
                                                            source_capacity=20000.0),
        "flusher-bound: 1 ms timeout, 8 x 8 channels": sp.Config(slots=4, timeout_s=0.001,
                                                                 source_capacity=20000.0),
    }
    lines = ["# Simulator kernel vs SimPy", "",
             f"Same job and simulated time in both engines; best of {args.repeat} runs; "
             f"{args.sim_seconds:g} s simulated. Python {platform.python_version()}, "
             f"SimPy {simpy.__version__}, machine shared by several processes (2 cores).", "",
             "| case | engine | CPU s | events | events/CPU s | records | records/CPU s | sink rec/s (sim) |",
             "|---|---|---|---|---|---|---|---|"]
    for name, cfg in cases.items():
        sc = flinktune_scenario(cfg, args.sim_seconds)
        best_ft = best_sp = float("inf")
        ft_events = ft_records = sp_events = sp_records = 0
        for _ in range(args.repeat):
            t0 = time.process_time()
            result = run_scenario(sc, np.random.default_rng(1))
            wall = time.process_time() - t0
            if wall < best_ft:
                best_ft = wall
                ft_events = result.events_processed
                ft_records = sum(c.records for c in result.channels)
            t0 = time.process_time()
            events, records = sp.run(cfg, args.sim_seconds, seed=1)
            wall = time.process_time() - t0
            if wall < best_sp:
                best_sp, sp_events, sp_records = wall, events, records
        for engine, wall, events, records in (("flinktune.sim", best_ft, ft_events, ft_records),
                                              ("SimPy model", best_sp, sp_events, sp_records)):
            lines.append(f"| {name} | {engine} | {wall:.2f} | {events} | {events / wall:,.0f} | {records} | "
                         f"{records / wall:,.0f} | {records / args.sim_seconds:,.0f} |")
        lines.append(f"| {name} | **SimPy CPU / ours** | **{best_sp / best_ft:.1f}x** | | | "
                     f"records agree within {100 * abs(ft_records / sp_records - 1):.1f}% | | |")
        print(lines[-3], lines[-2], lines[-1], sep="\n", flush=True)
    ours, theirs = bare_kernel()
    lines += ["", f"Bare kernel, one timer event re-scheduling itself: flinktune.sim.kernel {ours:,.0f} "
              f"events/CPU s, SimPy {theirs:,.0f} events/CPU s ({ours / theirs:.1f}x).", ""]
    print(lines[-2])
    lines += ["", "The callback kernel processes fewer, coarser events than SimPy for the same work (SimPy",
              "resumes a generator per wait and triggers an event per container put/get), so the fair",
              "speed figure is the CPU time for the same simulated run; the events/CPU s columns are each",
              "engine's own event rate. flinktune.sim writes a source's chunk of equal-size records in",
              "bulk (one run per subpartition while no record needs a new buffer), so in the record-bound",
              "case its cost is per event, not per record; the SimPy model, like most SimPy code, loops",
              "over records. With few records per event (network-bound, flusher-bound, one record per",
              "buffer) both engines are bound by per-event Python overhead."]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
