"""Throughput of a running job on a real cluster, measured from its own counters over the REST API."""

from __future__ import annotations

import time
from typing import Any


def counter_rate(cluster: Any, job_id: str, vertex: str = "SinkWork", metric: str = "numRecordsIn",
                 window_s: float = 12.0, every_s: float = 0.5) -> float:
    """records/s through ``vertex`` (summed over its subtasks): the least-squares slope of the counter
    sampled every ``every_s`` over ``window_s``. By default what the sink takes in: the job's throughput.

    Not the source's numRecordsOut: the test job's source emits 12-byte records, and behind a slow
    exchange tens of thousands of them fill the free buffers before back pressure reaches the source,
    so for minutes after a start the source emits faster than the job moves records (seen on the
    network-bound job: the source 9,000 records/s while every later vertex took 4,450).

    The REST API refreshes a counter only every ``metrics.fetcher.update-interval`` (1 s in these
    tests), so a first-to-last difference over 10 s is off by up to 10% at each end; the slope over
    ~25 samples averages that staleness out. The ``...PerSecond`` meters are no better: they average
    over 60 s and ramp up after a start.
    """
    vertices = cluster.get(f"/jobs/{job_id}")["vertices"]
    found = next(v for v in vertices if v["name"].startswith(vertex))
    path = f"/jobs/{job_id}/vertices/{found['id']}/subtasks/metrics?get={metric}&agg=sum"
    points: list[tuple[float, float]] = []
    start = time.monotonic()
    while time.monotonic() - start < window_s:
        reply = cluster.get(path) or []
        if reply and reply[0].get("sum") is not None:
            points.append((time.monotonic() - start, float(reply[0]["sum"])))
        time.sleep(every_s)
    assert len(points) >= 5, f"too few {metric} readings for {vertex} from the REST API: {points}"
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_c = sum(c for _, c in points) / n
    var_t = sum((t - mean_t) ** 2 for t, _ in points)
    return sum((t - mean_t) * (c - mean_c) for t, c in points) / var_t


def counter_rates(cluster: Any, job_id: str, wanted: list[tuple[str, str]], window_s: float = 10.0,
                  every_s: float = 0.5) -> dict[tuple[str, str], float]:
    """``counter_rate`` for several (vertex name prefix, counter) at once, sampled in one loop: per
    second, summed over each vertex's subtasks (least-squares slopes)."""
    vertices = cluster.get(f"/jobs/{job_id}")["vertices"]
    paths = {}
    for vertex, metric in wanted:
        found = next(v for v in vertices if v["name"].startswith(vertex))
        base = f"/jobs/{job_id}/vertices/{found['id']}/subtasks/metrics"
        paths[(vertex, metric)] = f"{base}?get={metric}&agg=sum"
    points: dict[tuple[str, str], list[tuple[float, float]]] = {key: [] for key in paths}
    start = time.monotonic()
    while time.monotonic() - start < window_s:
        for key, path in paths.items():
            reply = cluster.get(path) or []
            if reply and reply[0].get("sum") is not None:
                points[key].append((time.monotonic() - start, float(reply[0]["sum"])))
        time.sleep(every_s)
    out = {}
    for key, pts in points.items():
        assert len(pts) >= 5, f"too few {key[1]} readings for {key[0]} from the REST API: {pts}"
        n = len(pts)
        mean_t = sum(t for t, _ in pts) / n
        mean_c = sum(c for _, c in pts) / n
        var_t = sum((t - mean_t) ** 2 for t, _ in pts)
        out[key] = sum((t - mean_t) * (c - mean_c) for t, c in pts) / var_t
    return out


def vertex_shares(cluster: Any, job_id: str, vertices: list[str], window_s: float = 10.0) -> dict[str, dict]:
    """Per vertex: its parallelism and mean shares of time back-pressured, idle and busy (the rest),
    from the accumulated-time counters (Flink 1.16+), and records/s in; sampled together."""
    wanted = [(v, m) for v in vertices for m in ("accumulateBackPressuredTimeMs", "accumulateIdleTimeMs",
                                                  "numRecordsIn")]
    rates = counter_rates(cluster, job_id, wanted, window_s)
    parallelism = {v["name"]: v["parallelism"] for v in cluster.get(f"/jobs/{job_id}")["vertices"]}
    out = {}
    for v in vertices:
        p = next(n for name, n in parallelism.items() if name.startswith(v))
        bp = rates[(v, "accumulateBackPressuredTimeMs")] / 1000 / p
        idle = rates[(v, "accumulateIdleTimeMs")] / 1000 / p
        out[v] = {"p": p, "backpressured": bp, "idle": idle, "busy": 1 - bp - idle,
                  "records_in_per_s": rates[(v, "numRecordsIn")]}
    return out
