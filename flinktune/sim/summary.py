"""Plain-text and JSON views of a run (the CLI prints them; tests read them as strings)."""

from __future__ import annotations

import math
from typing import Any

from flinktune.sim.charts import bars, chart, format_number
from flinktune.sim.result import SimResult

MAX_CHANNEL_ROWS = 32


def _ms(value: float) -> str:
    return "-" if value is None or math.isnan(value) else f"{value * 1e3:.2f}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(c.rjust(w) if i else c.ljust(w)
                               for i, (c, w) in enumerate(zip(row, widths, strict=True))))
    return "\n".join(lines)


def render_text(result: SimResult, charts: bool = True) -> str:
    sc = result.scenario
    rate = result.events_processed / result.wall_s if result.wall_s > 0 else float("nan")
    mode = "credit-based" if sc.network.credit_based else "no credits (Flink < 1.5)"
    timeout = sc.network.buffer_timeout
    timeout_text = "off" if timeout is None else f"{timeout * 1e3:g}ms"
    out = [f"scenario {sc.name}: {sc.duration:g}s simulated ({sc.warmup:g}s warm-up) "
           f"in {result.wall_s:.2f}s, "
           f"{result.events_processed} events ({format_number(rate)} events/s)",
           f"  {sc.cluster.task_managers} TaskManagers x {sc.cluster.slots_per_tm} slots, rtt "
           f"{sc.cluster.rtt * 1e3:g}ms, {format_number(sc.cluster.bandwidth * 8)}bit/s per TM, {mode}, "
           f"segment {sc.network.segment_size}b, buffers-per-channel {sc.network.buffers_per_channel}, "
           f"floating {sc.network.floating_buffers_per_gate}, buffer timeout {timeout_text}", ""]
    copies = int(result.extra.get("fold_copies", 1.0))
    if copies > 1:
        block = sc.job.vertices[0].parallelism // copies
        tms = block // sc.cluster.slots_per_tm
        out[-1:-1] = [f"  fast path: the job repeats every {tms} TaskManager(s); "
                      f"one block of {block} subtasks per vertex simulated and counted {copies} times "
                      "(--reference simulates every subtask)"]
    rows = []
    for v in result.vertices:
        rows.append([v.name, str(v.parallelism), format_number(v.records_in_per_s),
                     format_number(v.records_out_per_s), _ms(v.latency_s["p50"]), _ms(v.latency_s["p99"]),
                     f"{v.busy_ms_per_s:.0f}", f"{v.backpressured_ms_per_s:.0f}", f"{v.idle_ms_per_s:.0f}",
                     "-" if math.isnan(v.out_pool_usage) else f"{v.out_pool_usage:.2f}",
                     "-" if math.isnan(v.in_pool_usage) else f"{v.in_pool_usage:.2f}"])
    out.append("vertices (steady state; latency = source to this vertex, ms)")
    out.append(_table(["vertex", "p", "in/s", "out/s", "lat p50", "lat p99", "busy", "backpr", "idle",
                       "outPool", "inPool"], rows))
    out.append("")
    chans = sorted(result.channels, key=lambda c: (c.producer != sc.job.vertices[0].name, -c.bytes_per_s))
    shown = chans[:MAX_CHANNEL_ROWS]
    rows = [[f"{c.producer}[{c.from_subtask}] -> {c.consumer}[{c.to_subtask}]",
             "remote" if c.remote else "local", format_number(c.records_per_s),
             format_number(c.bytes_per_s) + "B", _ms(c.latency_s["p50"]), _ms(c.latency_s["p99"])]
            for c in shown]
    out.append("channels (steady state; latency = written into the channel to deserialised, ms)")
    out.append(_table(["channel", "kind", "records/s", "bytes/s", "lat p50", "lat p99"], rows))
    if len(chans) > len(shown):
        out.append(f"  ... {len(chans) - len(shown)} more channels (use --format json for all)")
    if charts:
        out.append("")
        out.append(render_charts(result))
    inv = result.invariants
    if inv.fifo_violations:
        out.append(f"WARNING: {inv.fifo_violations} records arrived out of order (simulator bug)")
    return "\n".join(out)


def render_charts(result: SimResult) -> str:
    sc = result.scenario
    s = result.samples
    blocks = []
    rows = []
    for vi, vertex in enumerate(sc.job.vertices):
        _, rates = s.rate("numRecordsOut" if vi == 0 else "numRecordsIn", vi)
        rows.append((vertex.name, list(rates)))
    blocks.append(chart("throughput over time, records/s per vertex", rows, "/s", span_s=sc.duration))
    rows = []
    for vi, vertex in enumerate(sc.job.vertices):
        if vi < len(sc.job.vertices) - 1:
            _, usage = s.series("outPoolUsage", vi)
            rows.append((f"{vertex.name} outPoolUsage", list(usage)))
        if vi > 0:
            _, usage = s.series("inPoolUsage", vi)
            rows.append((f"{vertex.name} inPoolUsage", list(usage)))
    blocks.append(chart("buffer pool usage over time (mean over subtasks)", rows, "", top=1.0,
                        span_s=sc.duration))
    return "\n\n".join(blocks)


def render_sweep(key: str, runs: list[tuple[str, SimResult]]) -> str:
    rows = []
    sink_rates = []
    p50s = []
    for label, result in runs:
        sink = result.vertices[-1]
        source = result.vertices[0]
        sink_rates.append(sink.records_in_per_s)
        p50s.append(sink.latency_s["p50"])
        rows.append([label, format_number(source.records_out_per_s), format_number(sink.records_in_per_s),
                     _ms(sink.latency_s["p50"]), _ms(sink.latency_s["p99"]),
                     f"{source.backpressured_ms_per_s:.0f}"])
    best = max((r for r in sink_rates if not math.isnan(r)), default=float("nan"))
    for row, r in zip(rows, sink_rates, strict=True):
        row.append(f"{100 * r / best:.0f}%" if best and not math.isnan(r) else "-")
    out = [f"sweep of {key} (sink throughput and source-to-sink latency, steady state)",
           _table([key, "source out/s", "sink in/s", "lat p50 ms", "lat p99 ms", "src backpr", "of best"],
                  rows),
           "", bars("sink throughput (records/s)",
                    [(lbl, r) for (lbl, _), r in zip(runs, sink_rates, strict=True)], "/s"),
           "", bars("latency p50 (ms)",
                    [(lbl, p * 1e3) for (lbl, _), p in zip(runs, p50s, strict=True)], "ms")]
    return "\n".join(out)


def to_json(result: SimResult) -> dict[str, Any]:
    sc = result.scenario
    return {
        "scenario": sc.name, "job_id": result.job_id, "duration_s": sc.duration, "warmup_s": sc.warmup,
        "events": result.events_processed, "wall_s": result.wall_s,
        "fold_copies": int(result.extra.get("fold_copies", 1.0)),
        "vertices": [{"name": v.name, "vertex_id": v.vertex_id, "parallelism": v.parallelism,
                      "records_in_per_s": v.records_in_per_s, "records_out_per_s": v.records_out_per_s,
                      "latency_s": v.latency_s, "busy_ms_per_s": v.busy_ms_per_s,
                      "backpressured_ms_per_s": v.backpressured_ms_per_s, "idle_ms_per_s": v.idle_ms_per_s,
                      "out_pool_usage": v.out_pool_usage, "in_pool_usage": v.in_pool_usage}
                     for v in result.vertices],
        "channels": [{"producer": c.producer, "from_subtask": c.from_subtask, "consumer": c.consumer,
                      "to_subtask": c.to_subtask, "remote": c.remote, "records_per_s": c.records_per_s,
                      "bytes_per_s": c.bytes_per_s, "latency_s": c.latency_s} for c in result.channels],
    }
