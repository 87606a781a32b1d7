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
