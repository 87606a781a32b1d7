"""What a metrics dump measured, in the terms the advisor needs.

``measure(...)`` runs the Spark analysis (imported lazily: only ``--metrics`` pays for pyspark and a
JVM) and ``measured_from_analysis`` reduces its result to rates, record size, buffer fill, skew and
where back pressure starts. Those replace the profile's assumptions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from flinktune.situation.environment import Environment
from flinktune.versions import FlinkVersion

# Causes of back pressure (flinktune.analysis.diagnose.CAUSES) that more network buffers cannot cure.
NOT_NETWORK = {
    "all_busy": "every subtask of the origin is busy: the operator is too slow for the load (scale it out "
                "or make it cheaper)",
    "hot_subtask": "one subtask of the origin is busy while the others are not: data skew (spread the hot "
                   "keys); scaling out will not help either",
    "slow_receiver": "the receiving operator holds its input buffers: it is the bottleneck, not the network",
}
NETWORK = ("network_bottleneck", "too_few_credits", "network_or_credits")


@dataclass(frozen=True)
class Measured:
    """Job-level numbers from a dump (None where the dump does not say)."""

    job: str | None
    parallelism: int | None
    rate_per_subtask: float | None        # records/s a producer subtask emits into the exchange
    record_bytes: float | None
    buffer_fill: float | None             # bytes per received remote buffer / segment size
    skew: float | None                    # max / mean records in over the subtasks of the worst vertex
    origin: str | None                    # where back pressure starts
    cause: str | None                     # flinktune.analysis cause class
    channels: str | None                  # some | all | unknown (floating vs exclusive usage)
    evidence: tuple[str, ...] = ()
    # Where the in-flight data sits (receivers of back-pressured exchanges vs the senders' queues).
    in_pool_usage: float | None = None        # the origin's inPoolUsage (else back-pressured receivers')
    out_pool_usage: float | None = None       # back-pressured senders' outPoolUsage (max of means)
    backpressured_exchanges: int = 0          # back-pressured vertices = exchanges with full queues
    remote_in_bytes_per_s: float | None = None  # the busiest TaskManager's received network bytes/s
    # The whole analysis (an AnalysisResult with its time series), when a report draws it.
    analysis: Any = field(default=None, repr=False, compare=False)
    # The rates and the parallelism the target rate needs (flinktune.analysis.parallelism
    # .ParallelismAdvice), when the dump and its plan give them.
    parallelism_advice: Any = field(default=None, compare=False)

    @property
    def not_network(self) -> bool:
        return self.cause in NOT_NETWORK

    def as_dict(self) -> dict[str, Any]:
        return {"job": self.job, "parallelism": self.parallelism, "rate_per_subtask": self.rate_per_subtask,
                "record_bytes": self.record_bytes, "buffer_fill": self.buffer_fill, "skew": self.skew,
                "origin": self.origin, "cause": self.cause, "channels": self.channels,
                "evidence": list(self.evidence), "in_pool_usage": self.in_pool_usage,
                "out_pool_usage": self.out_pool_usage,
                "backpressured_exchanges": self.backpressured_exchanges,
                "remote_in_bytes_per_s": self.remote_in_bytes_per_s}


def measured_from_analysis(result: Any, segment_bytes: int) -> Measured:
    """Reduce an ``AnalysisResult`` (flinktune.analysis) to a ``Measured`` (the busiest job)."""
    jobs = list(getattr(result, "jobs", ()))
    if not jobs:
        return Measured(None, None, None, None, None, None, None, None, None,
                        ("the dump held no job with task metrics",))
    job = max(jobs, key=lambda j: sum((v.bytes_out_per_s or 0.0) for v in j.vertices))
    vertices: Sequence[Any] = job.vertices
    producers = [v for v in vertices if v.bytes_out_per_s and v.records_out_per_s]
    # The exchange that carries most bytes decides the network load.
    busiest = max(producers, key=lambda v: v.bytes_out_per_s, default=None)
    rate = record = None
    evidence: list[str] = []
    if busiest is not None:
        rate = busiest.records_out_per_s / max(busiest.parallelism, 1)
        record = busiest.avg_record_bytes
        evidence.append(f"{busiest.name}: {busiest.records_out_per_s:.4g} records/s out over "
                        f"{busiest.parallelism} subtasks, {record or 0:.4g} B per record")
    fills = [v.remote_buffer_bytes / segment_bytes for v in vertices if v.remote_buffer_bytes]
    fill = min(1.0, sum(fills) / len(fills)) if fills else None
    skews = [v.records_in_skew for v in vertices if v.records_in_skew]
    skew = max(skews) if skews else None
    parallelism = max((v.parallelism for v in vertices), default=None)
    origin = cause = channels = None
    if job.origins:
        first = job.origins[0]
        origin, cause, channels = first.name, first.cause, first.channels
        evidence.extend(first.evidence)
    # Receivers of back-pressured exchanges: back-pressured vertices with input, and the origins.
    origin_keys = {getattr(o, "vertex_key", o.name) for o in job.origins}

    def fact(v: Any, name: str) -> Any:
        return getattr(v, name, None)

    # Where back pressure starts decides where the data waits: the origin's input pools full (a slow
    # receiver) hold it in the gates all along the chain; the origin's pools empty while its senders
    # wait (a saturated link, too few credits) leave it in the senders' queues and on the wire, even
    # though the back-pressured vertices further up have full inputs of their own.
    with_input = [v for v in vertices if fact(v, "has_remote_input") and fact(v, "in_pool_mean") is not None]
    receivers = ([v for v in with_input if fact(v, "vertex_key") in origin_keys]
                 or [v for v in with_input if fact(v, "backpressured")])
    senders = [v for v in vertices if fact(v, "backpressured") and fact(v, "out_pool_mean") is not None]
    per_tm: dict[str, float] = {}
    for v in vertices:
        for s in getattr(v, "subtasks", ()):
            if getattr(s, "bytes_in_remote_per_s", None):
                per_tm[s.tm_id or "?"] = per_tm.get(s.tm_id or "?", 0.0) + s.bytes_in_remote_per_s
    return Measured(job.job_name or job.job_id or job.job_key, parallelism, rate, record, fill, skew,
                    origin, cause, channels, tuple(evidence),
                    in_pool_usage=max((v.in_pool_mean for v in receivers), default=None),
                    out_pool_usage=max((v.out_pool_mean for v in senders), default=None),
                    backpressured_exchanges=sum(1 for v in vertices if fact(v, "backpressured")),
                    remote_in_bytes_per_s=max(per_tm.values(), default=None),
                    parallelism_advice=getattr(job, "parallelism", None))


def measure(inputs: Sequence[str], *, plan_path: str | None, version: FlinkVersion,
            segment_bytes: int, env: Environment | None = None,
            progress: Callable[[str], None] | None = None, session: Any = None, timeline: bool = False,
            spark_log: bool = False, scaling: Any = None) -> Measured:
    """Run the analysis on a dump (files, folders or globs) and reduce it (``session``: reuse a
    SparkSession, as the tests do). ``env``: the situation's environment (rtt, bandwidth).
    ``timeline``: keep the per-subtask time series, for a report that draws them; the analysis is
    then ``Measured.analysis``. ``spark_log``: Spark's own log on stderr. ``scaling``:
    flinktune.analysis.parallelism.ScalingOptions (target rates and utilisation)."""
    from flinktune.analysis import AnalysisOptions, analyze
    from flinktune.analysis.parallelism import ScalingOptions
    from flinktune.record import replace

    options = AnalysisOptions(inputs=tuple(inputs), plan_path=plan_path, version=version,
                              env=env or Environment(), segment_bytes=segment_bytes, timeline=timeline,
                              scaling=scaling or ScalingOptions())
    result = analyze(options, progress=progress, session=session, spark_log=spark_log)
    measured = measured_from_analysis(result, segment_bytes)
    return replace(measured, analysis=result) if timeline else measured
