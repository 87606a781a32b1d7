"""Hand-made runs for compare's tests without Spark: a job's vertices (as the diagnosis gives them)
and each vertex's figures per time window (as analysis/windows.py gives them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from flinktune.analysis.checkpoints import Checkpoint, CheckpointLog
from flinktune.analysis.diagnose import diagnose_job
from flinktune.analysis.facts import SubtaskFacts, rollup_vertex
from flinktune.analysis.windows import FIGURES, JobWindows, VertexWindows
from flinktune.compare.judge import Run
from flinktune.situation.environment import Environment

SLOT_MS = 2000


def subtask(job: str, vertex: str, index: int, busy: float = 0.2, bp: float = 0.0) -> SubtaskFacts:
    return SubtaskFacts(
        job_key=job,
        vertex_key=vertex,
        subtask_index=index,
        tm_id="tm",
        samples=30,
        bp_ratio=bp,
        bp_max=bp,
        bp_share_above_ok=1.0 if bp > 0.1 else 0.0,
        bp_share_high=1.0 if bp > 0.5 else 0.0,
        bp_source="backPressuredTimeMsPerSecond",
        busy_ratio=busy,
        idle_ratio=max(0.0, 1 - busy - bp),
        out_pool=0.25,
        out_pool_max=0.25,
        out_pool_share_high=0.0,
        in_pool=0.1,
        in_pool_share_high=0.0,
        floating=0.0,
        exclusive=0.0,
        records_in_per_s=100.0,
        records_out_per_s=100.0,
        bytes_out_per_s=1e4,
        bytes_in_remote_per_s=1e4,
        buffers_in_remote_per_s=10.0,
        has_remote_input=True,
    )


def run(
    label: str,
    vertices: Sequence[tuple[str, str, int]],
    values: Mapping[str, Mapping[str, np.ndarray]],
    *,
    job_id: str = "a" * 32,
    job_name: str = "job",
    checkpoints: Sequence[float] | None = None,
    sizes: Sequence[float] | None = None,
    bp: Mapping[str, float] | None = None,
    start_ms: int = 1_000_000,
) -> Run:
    """``vertices``: (vertex key, name, parallelism) in order (the first is the source);
    ``values[vertex key][figure]``: the window values (figures of analysis/windows.py; missing
    figures are NaN, ``records_in`` rows are the vertex rate split evenly over the subtasks);
    ``checkpoints``: durations in seconds, one checkpoint every 3 s from the start."""
    n = max(len(a) for v in values.values() for a in v.values())
    facts = [
        rollup_vertex(
            job_id,
            key,
            name,
            [subtask(job_id, key, i, bp=(bp or {}).get(key, 0.0)) for i in range(p)],
            key if len(key) == 32 else None,
        )
        for key, name, p in vertices
    ]
    window = (start_ms, start_ms + n * SLOT_MS)
    diag = diagnose_job(job_id, facts, None, Environment(), job_id, job_name, None, window)
    vertex_windows = {}
    for key, _name, p in vertices:
        figures = {
            f: np.asarray(values.get(key, {}).get(f, np.full(n, np.nan)), dtype=np.float64) for f in FIGURES
        }
        rate = figures["records_in_per_s"]
        vertex_windows[key] = VertexWindows(tuple(range(p)), figures, np.vstack([rate / p] * p))
    jw = JobWindows(start_ms, SLOT_MS, n, start_ms, vertex_windows)
    log = None
    if checkpoints is not None:
        log = CheckpointLog(
            job_id,
            job_name,
            "rest",
            tuple(
                Checkpoint(
                    i + 1,
                    "COMPLETED",
                    False,
                    start_ms + 3000 * i,
                    start_ms + 3000 * i + int(d * 1000),
                    d * 1000,
                    (sizes[i] if sizes else 1e6),
                    (sizes[i] if sizes else 1e6),
                )
                for i, d in enumerate(checkpoints)
            ),
        )
    return Run(label, (f"{label}/dump",), diag, jw, log)


def ar1(rng: np.random.Generator, n: int, phi: float, level: float, scale: float) -> np.ndarray:
    e = rng.standard_normal(n + 50)
    x = np.zeros(n + 50)
    for i in range(1, n + 50):
        x[i] = phi * x[i - 1] + e[i]
    return level + scale * x[50:] * np.sqrt(1 - phi * phi)


def noisy_vertex(
    rng: np.random.Generator,
    n: int,
    phi: float,
    rate: float,
    busy: float,
    source: bool = False,
    bp: float = 0.0,
    sink: bool = False,
) -> dict[str, np.ndarray]:
    """A vertex's figures: its rate with 5% noise, the time and pool shares with a few points."""

    def share(level: float) -> np.ndarray:
        return np.clip(ar1(rng, n, phi, level, 0.03), 0.0, 1.0)

    flow = ar1(rng, n, phi, rate, 0.05 * rate)
    return {
        "records_in_per_s": np.zeros(n) if source else flow,
        "records_out_per_s": np.zeros(n) if sink else flow,
        "backpressured_max": share(bp) if bp else np.zeros(n),
        "backpressured_mean": share(bp) if bp else np.zeros(n),
        "busy_max": share(min(1.0, busy + 0.05)),
        "busy_mean": share(busy),
        "idle_mean": share(1.0 - busy - bp),
        "out_pool_mean": share(0.25),
        "in_pool_mean": np.full(n, np.nan) if source else share(0.1),
    }


VERTICES = (("1" * 32, "Source: Gen", 4), ("2" * 32, "Map", 4), ("3" * 32, "Sink: Out", 4))
