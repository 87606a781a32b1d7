"""`flinktune collect`: scrape a running Flink job's metrics over REST into the canonical dump."""

from flinktune.collect.catalog import DEFAULT_METRICS, MetricSpec, canonical_name, metric_specs
from flinktune.collect.collector import CollectOptions, CollectResult, PollReport, StartInfo, collect
from flinktune.collect.rest import FlinkRestClient, RetryPolicy
from flinktune.collect.writer import COLUMNS, JOB_FILE, METRICS_FILE, PARTS_DIR, PLAN_FILE

__all__ = [
    "COLUMNS",
    "DEFAULT_METRICS",
    "JOB_FILE",
    "METRICS_FILE",
    "PARTS_DIR",
    "PLAN_FILE",
    "CollectOptions",
    "CollectResult",
    "FlinkRestClient",
    "MetricSpec",
    "PollReport",
    "RetryPolicy",
    "StartInfo",
    "canonical_name",
    "collect",
    "metric_specs",
]
