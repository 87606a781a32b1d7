"""One million what-if points through the vectorised model, against a per-point Python loop.

Workload: 1,000,000 random scenarios (RTT 0.1-10 ms, bandwidth 1-100 Gbit/s, parallelism 1-2000,
slots 1-16, buffers-per-channel 0-16, floating 1-64, record size 10 B-10 KiB, rate 1e2-1e7 records/s,
buffer timeout 0-200 ms) for Flink 1.20; every quantity of ``flinktune.model.sweep.evaluate``.

Named baseline: the same points evaluated one at a time (a Python loop calling ``evaluate`` with
scalars), which is how a non-vectorised model would be used. The loop runs on a sample of points and
is extrapolated to one million; both figures are reported with the median of the repetitions.
The aim (issue 3): one million points well under a second.

Run:  .venv/bin/python benchmarks/bench_model.py [--points 1000000] [--repeat 5] [--loop-sample 2000]
Writes benchmarks/results/model.md and benchmarks/results/model.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flinktune.model.sweep import evaluate  # noqa: E402
from flinktune.versions import FlinkVersion  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
VERSION = FlinkVersion(1, 20)


def scenarios(n: int, seed: int = 42) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "rtt": rng.uniform(1e-4, 1e-2, n),
        "bandwidth": rng.uniform(1.25e8, 1.25e10, n),
        "parallelism": rng.integers(1, 2001, n).astype(np.float64),
        "slots": rng.integers(1, 17, n).astype(np.float64),
        "buffers-per-channel": rng.integers(0, 17, n).astype(np.float64),
        "floating": rng.integers(1, 65, n).astype(np.float64),
        "record-size": rng.uniform(10, 10240, n),
        "rate": 10 ** rng.uniform(2, 7, n),
        "buffer-timeout": rng.uniform(0, 0.2, n),
    }


def time_vectorised(points: dict[str, np.ndarray], repeat: int) -> list[float]:
    evaluate({k: v[:1000] for k, v in points.items()}, VERSION)  # warm-up (imports, first allocations)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = evaluate(points, VERSION)
        times.append(time.perf_counter() - start)
        assert np.shape(out["channel_throughput"].value) == (len(points["rtt"]),)
    return times


def time_loop(points: dict[str, np.ndarray], sample: int, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for i in range(sample):
            evaluate({k: float(v[i]) for k, v in points.items()}, VERSION)
        times.append(time.perf_counter() - start)
    return times


def check_agreement(points: dict[str, np.ndarray], k: int = 200) -> float:
    """Largest relative difference between the vectorised and the per-point results (should be 0)."""
    vec = evaluate({key: v[:k] for key, v in points.items()}, VERSION)
    worst = 0.0
    for i in range(k):
        one = evaluate({key: float(v[i]) for key, v in points.items()}, VERSION)
        for name, q in one.items():
            a = float(np.asarray(q.value, dtype=np.float64))
            b = float(np.broadcast_to(np.asarray(vec[name].value, dtype=np.float64), (k,))[i])
            if np.isfinite(a) and np.isfinite(b) and a != b:
                worst = max(worst, abs(a - b) / max(abs(a), abs(b)))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--loop-sample", type=int, default=2000)
    args = parser.parse_args()

    points = scenarios(args.points)
    vec = time_vectorised(points, args.repeat)
    loop = time_loop(points, args.loop_sample, max(1, args.repeat // 2))
    vec_median = statistics.median(vec)
    per_point = statistics.median(loop) / args.loop_sample
    loop_extrapolated = per_point * args.points
    agreement = check_agreement(points)
    quantities = len(evaluate({k: v[:10] for k, v in points.items()}, VERSION))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")

    result = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(), "numpy": np.__version__, "machine": platform.machine(),
        "cpus": os.cpu_count(), "load_average_1min": load,
        "points": args.points, "quantities_per_point": quantities, "repeat": args.repeat,
        "vectorised_seconds": vec, "vectorised_median_s": vec_median,
        "loop_sample": args.loop_sample, "loop_seconds": loop, "loop_per_point_s": per_point,
        "loop_extrapolated_s": loop_extrapolated, "speedup": loop_extrapolated / vec_median,
        "max_relative_difference_vectorised_vs_loop": agreement,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "model.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    row_vec = (f"| vectorised (`evaluate` on arrays), median of {args.repeat} | {vec_median:.3f} s "
               f"| {vec_median / args.points * 1e9:.0f} ns |")
    row_loop = (f"| baseline: Python loop of scalar `evaluate` calls ({args.loop_sample:,} points timed, "
                f"extrapolated) | {loop_extrapolated:.1f} s | {per_point * 1e6:.1f} µs |")
    runs = ", ".join(f"{t:.3f}" for t in vec)
    md = f"""# Model benchmark: {args.points:,} what-if points

Measured {result['date']} on {result['machine']} ({result['cpus']} CPUs, 1-min load average {load:.2f}),
Python {result['python']}, numpy {result['numpy']}. Command: `.venv/bin/python benchmarks/bench_model.py`.

Workload: {args.points:,} random scenarios (RTT, bandwidth, parallelism, slots, buffers-per-channel,
floating buffers, record size, rate, buffer timeout all varying), Flink 1.20, {quantities} quantities
each (`flinktune.model.sweep.evaluate`).

| approach | time for {args.points:,} points | per point |
|---|---|---|
{row_vec}
{row_loop}

Speed-up: {loop_extrapolated / vec_median:,.0f}x. All vectorised runs (s): {runs}.
Vectorised and per-point results agree (largest relative difference on 200 points: {agreement:.1e}).

Aim: one million points well under a second. The machine is shared (2 CPUs); the load average above
says how busy it was, and the first run of a process is slower (page faults on fresh arrays).
"""
    (RESULTS / "model.md").write_text(md, encoding="utf-8")
    print(md)


if __name__ == "__main__":
    main()
