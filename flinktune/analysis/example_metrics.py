"""The analysis rules' metrics examples: what the web UI showed, as a dump held in memory.

An example of a vertex-scope rule (rules/analysis/FTA*.yaml) may give ``metrics:`` instead of
ready-made ``items:``: a small job graph and each vertex's metric values. The dump is built here,
diagnosed by samples.diagnose_samples (the analysis's own steps, no Spark) and the items the rule
sees are diagnose.vertex_items of the result, so an example fails when the diagnosis is wrong.
The form (docs/rules.md, "Examples of analysis rules"):

    metrics:
      edges: ["Source: Gen --REBALANCE--> Parse --HASH--> Sink"]   # none: no job plan
      vertices:
        "Source: Gen": {backPressuredTimeMsPerSecond: 90%, outPoolUsage: 100%}
        Parse: {backPressuredTimeMsPerSecond: 80%, busyTimeMsPerSecond: 15%}
        Sink: {parallelism: 4, busyTimeMsPerSecond: 98%}

A value is a number in the metric's unit, a percent (of 1000 ms/s for the ...TimeMsPerSecond
gauges, of 1 for the ratios), a rate for counters (``5000/s``: the dump carries the running
total), several values separated by spaces (the samples over time), ``null`` (not measured), or a
list with one such value per subtask.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flinktune.analysis import names
from flinktune.analysis.diagnose import DEFAULT_SEGMENT_BYTES, vertex_items
from flinktune.analysis.parallelism import ScalingOptions
from flinktune.analysis.plan import JobPlan, parse_plan
from flinktune.analysis.samples import Sample, diagnose_samples
from flinktune.errors import FlinktuneError, MetricsError
from flinktune.situation.environment import Environment, parse_parameter
from flinktune.units import parse_duration_s, parse_size_bytes
from flinktune.versions import FlinkVersion

T0_MS = 1_790_000_000_000
DEFAULT_SAMPLES = 10
# An example is a few vertices and samples; rule files may come from anywhere (rules check DIR), so
# the dump they describe is bounded.
MAX_SAMPLES = 1_000
MAX_PARALLELISM = 1_024
MAX_ROWS = 1_000_000
KNOWN = ("job", "interval", "samples", "warmup", "bandwidth", "rtt", "segment_size", "target_rate", "edges",
         "vertices")
# Gauges whose percent is of 1000 ms per second; the other gauges' percent is of 1.
_MS_PER_SECOND = tuple(m for m in names.GAUGES if m.endswith("TimeMsPerSecond"))
# An edge as the web UI's job graph draws it: a labelled arrow (``--HASH-->``; ``-->``: HASH).
_ARROW = re.compile(r"\s+(?:--([A-Z_]+)-->|-->)\s+")


def _problem(text: str) -> MetricsError:
    return MetricsError(f"metrics example: {text}")


def _one_value(metric: str, raw: object) -> list[float | None]:
    """The samples over time of one subtask's metric."""
    if raw is None:
        return [None]
    if isinstance(raw, bool):
        raise _problem(f"{metric}: {raw!r} is not a number")
    if isinstance(raw, int | float):
        return [float(raw)]
    out: list[float | None] = []
    for word in str(raw).split():
        text = word.removesuffix("/s")
        try:
            if text.endswith("%"):
                share = float(text[:-1]) / 100
                out.append(share * 1000.0 if metric in _MS_PER_SECOND else share)
            elif text == "null":
                out.append(None)
            else:
                out.append(float(text))
        except ValueError:
            raise _problem(f"{metric}: '{word}' is not a number, a percent or a rate like 5000/s") from None
        if word.endswith("/s") and metric not in names.COUNTERS:
            raise _problem(f"{metric}: '{word}' is a rate, but {metric} is not a counter")
    if not out:
        raise _problem(f"{metric}: no value")
    return out


def _vertex_values(name: str, spec: Mapping[str, Any]) -> tuple[int, dict[str, list[list[float | None]]]]:
    """The vertex's parallelism and, per metric, each subtask's samples over time."""
    given = {k: v for k, v in spec.items() if k not in ("parallelism", "tm")}
    lists = {len(v) for v in given.values() if isinstance(v, list)}
    parallelism = spec.get("parallelism", max(lists, default=1))
    whole = isinstance(parallelism, int) and not isinstance(parallelism, bool)
    if not whole or not 1 <= parallelism <= MAX_PARALLELISM:
        raise _problem(f"'{name}': parallelism {parallelism!r} is not a whole number from 1 to "
                       f"{MAX_PARALLELISM}")
    values: dict[str, list[list[float | None]]] = {}
    for metric, raw in given.items():
        if metric not in names.METRICS:
            raise _problem(f"'{name}': '{metric}' is not a metric the analysis reads "
                           f"({', '.join(names.METRICS)})")
        per_subtask = raw if isinstance(raw, list) else [raw] * parallelism
        if len(per_subtask) != parallelism:
            raise _problem(f"'{name}': {metric} gives {len(per_subtask)} subtasks, "
                           f"the parallelism is {parallelism}")
        values[metric] = [_one_value(metric, r) for r in per_subtask]
    # What an example leaves out: neither back-pressured nor busy.
    for metric in ("backPressuredTimeMsPerSecond", "busyTimeMsPerSecond"):
        values.setdefault(metric, [[0.0]] * parallelism)
    return parallelism, values


def vertex_id(name: str) -> str:
    """A stable JobVertexID-like id for a vertex named in an example."""
    return hashlib.md5(name.encode("utf-8")).hexdigest()


def _plan(job: str, vertices: Mapping[str, int], edges: object) -> JobPlan | None:
    if edges is None:
        return None
    if not isinstance(edges, list) or not all(isinstance(e, str) for e in edges):
        raise _problem("edges: a list of 'A --HASH--> B' strings")
    inputs: dict[str, list[dict[str, str]]] = {name: [] for name in vertices}
    for text in edges:
        parts = _ARROW.split(text.strip())
        if len(parts) < 3:
            raise _problem(f"edge '{text}': write it as 'A --HASH--> B' (or A --> B, "
                           "A --REBALANCE--> B, ...)")
        for i in range(0, len(parts) - 2, 2):
            source, ship, target = parts[i].strip(), parts[i + 1] or "HASH", parts[i + 2].strip()
            for end in (source, target):
                if end not in vertices:
                    raise _problem(f"edge '{text}': no vertex '{end}' under vertices")
            exchange = "pipelined_bounded"
            inputs[target].append({"id": vertex_id(source), "ship_strategy": ship, "exchange": exchange})
    data = {
        "vertices": [{"id": vertex_id(n), "name": n} for n in vertices],
        "plan": {"jid": job, "name": job, "nodes": [
            {"id": vertex_id(n), "parallelism": p, "description": n, "inputs": inputs[n]}
            for n, p in vertices.items()]},
    }
    return parse_plan(data, "metrics example")


def _scaling(target: object) -> ScalingOptions:
    if target is None:
        return ScalingOptions()
    rates = target.items() if isinstance(target, Mapping) else [("*", target)]
    out = []
    for key, rate in rates:
        if isinstance(rate, bool) or not isinstance(rate, int | float) or rate <= 0:
            raise _problem(f"target_rate: {rate!r} is not records per second above 0")
        out.append((str(key), float(rate)))
    return ScalingOptions(target_rates=tuple(out))


@dataclass(frozen=True)
class ExampleDump:
    """A metrics example as analyze would read it: the samples, the job plan and the flags."""

    samples: tuple[Sample, ...]
    plan: JobPlan | None
    env: Environment
    scaling: ScalingOptions
    segment_bytes: int
    warmup: str


def example_dump(metrics: Mapping[str, Any]) -> ExampleDump:
    """The dump a metrics example describes (MetricsError, one line, when it cannot be read)."""
    unknown = sorted(set(metrics) - set(KNOWN))
    if unknown:
        raise _problem(f"unknown key {unknown[0]!r} (one of {', '.join(KNOWN)})")
    vertices = metrics.get("vertices")
    if not isinstance(vertices, Mapping) or not vertices or not all(
            isinstance(spec, Mapping) for spec in vertices.values()):
        raise _problem("'vertices' maps each vertex name to its metric values")
    try:
        stated = {name: parse_parameter(name, metrics[name], where=name)
                  for name in ("bandwidth", "rtt") if metrics.get(name) is not None}
        env = Environment().with_values(stated, "flag")
        interval_s = parse_duration_s(metrics.get("interval", "10s"), what="interval")
        segment_bytes = (DEFAULT_SEGMENT_BYTES if metrics.get("segment_size") is None
                         else parse_size_bytes(metrics["segment_size"], what="segment_size"))
    except FlinktuneError as error:
        raise _problem(error.one_line()) from None
    interval_ms = round(interval_s * 1000)
    if not 0 < interval_ms <= 86_400_000:
        raise _problem("interval: must be above zero and at most a day")
    job = str(metrics.get("job", "example"))
    specs = {str(name): spec for name, spec in vertices.items()}
    parsed = {name: _vertex_values(name, spec) for name, spec in specs.items()}
    lengths = {len(s) for _p, values in parsed.values() for subs in values.values() for s in subs} - {1}
    if len(lengths) > 1:
        raise _problem(f"the series over time have different lengths: {sorted(lengths)}")
    count = metrics.get("samples", max(lengths, default=DEFAULT_SAMPLES))
    whole = isinstance(count, int) and not isinstance(count, bool) and 1 <= count <= MAX_SAMPLES
    if not whole or (lengths and count not in lengths):
        raise _problem(f"samples: {count!r}, expected a whole number from 1 to {MAX_SAMPLES} that matches "
                       "the series over time")
    rows = count * sum(p * len(values) for p, values in parsed.values())
    if rows > MAX_ROWS:
        raise _problem(f"{rows} samples in all, more than an example needs (at most {MAX_ROWS})")
    plan = _plan(job, {n: p for n, (p, _v) in parsed.items()}, metrics.get("edges"))
    samples: list[Sample] = []
    for name, (parallelism, values) in parsed.items():
        # Slot sharing, one slot per TaskManager: subtask i of every vertex shares TaskManager i.
        tms = specs[name].get("tm", [f"tm-{i}" for i in range(parallelism)])
        tms = tms if isinstance(tms, list) else [tms] * parallelism
        if len(tms) != parallelism:
            raise _problem(f"'{name}': tm names {len(tms)} TaskManagers, the parallelism is {parallelism}")
        for metric, subtasks in values.items():
            for index, series in enumerate(subtasks):
                total = 0.0
                for i in range(count):
                    value = series[i] if len(series) > 1 else series[0]
                    if metric in names.COUNTERS and value is not None:
                        # A counter is given as its rate: the dump holds its running total.
                        total += value * interval_ms / 1000.0 if i else 0.0
                        value = total
                    samples.append(Sample(T0_MS + i * interval_ms, job, job, vertex_id(name), name, index,
                                          str(tms[index]), metric, value))
    return ExampleDump(tuple(samples), plan, env, _scaling(metrics.get("target_rate")), segment_bytes,
                       str(metrics.get("warmup", "0%")))


def items_from_metrics(
    metrics: Mapping[str, Any], version: FlinkVersion
) -> tuple[list[dict[str, object]], dict[str, object]]:
    """The vertex items the analysis rules see for a metrics example, and the rule environment
    job.findings_for gives them (segment_bytes, bandwidth_bytes_per_s, rtt_s)."""
    from flinktune.analysis.job import parse_warmup

    dump = example_dump(metrics)
    try:
        warm_frac, warm_ms = parse_warmup(dump.warmup)
    except FlinktuneError as error:
        raise _problem(error.one_line()) from None
    diagnosed = diagnose_samples(dump.samples, dump.plan, dump.env, dump.scaling, version, warm_frac, warm_ms)
    items = [item for diag in diagnosed.jobs for item in vertex_items(diag, dump.segment_bytes)]
    rule_env: dict[str, object] = {"segment_bytes": dump.segment_bytes,
                                   "bandwidth_bytes_per_s": dump.env.bandwidth_bytes_per_s,
                                   "rtt_s": dump.env.rtt_s}
    return items, rule_env
