"""``flinktune model``: what-if numbers from the analytic model (see docs/model.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flinktune.cli.common import EXIT_OK, checked_format, emit, guarded, target_utilization_share
from flinktune.cli.flags import FlinkVersion, Format, NoColor, Output, Profile, Quiet, Verbose


def model(
    rtt: Annotated[str | None, typer.Option(
        "--rtt", help="Round-trip time, e.g. 2ms (default 1ms).")] = None,
    bandwidth: Annotated[str | None, typer.Option(
        "--bandwidth", help="NIC bandwidth per TaskManager, e.g. 10Gbit/s (default 10Gbit/s).")] = None,
    parallelism: Annotated[str | None, typer.Option(
        "--parallelism", help="Parallelism of every vertex (default 100).")] = None,
    slots: Annotated[str | None, typer.Option("--slots", help="Slots per TaskManager (default 1).")] = None,
    taskmanagers: Annotated[str | None, typer.Option(
        "--taskmanagers", help="TaskManagers (default ceil(parallelism / slots)).")] = None,
    exchanges: Annotated[str | None, typer.Option(
        "--exchanges", help="All-to-all exchanges in the job (default 1; with --config, what lint and "
        "recommend assume: a pessimistic 3).")] = None,
    segment_size: Annotated[str | None, typer.Option(
        "--segment-size", help="Network buffer size, e.g. 32kb (default 32kb).")] = None,
    buffers_per_channel: Annotated[str | None, typer.Option(
        "--buffers-per-channel", help="Exclusive buffers per channel (default 2; fixed on 2.x).")] = None,
    floating: Annotated[str | None, typer.Option(
        "--floating", help="Floating buffers per gate (default 8; fixed on 2.x).")] = None,
    record_size: Annotated[str | None, typer.Option(
        "--record-size", help="Serialized record size, e.g. 200b (default 100b).")] = None,
    rate: Annotated[str | None, typer.Option(
        "--rate", help="Records/s emitted by one producer subtask (default 1e5).")] = None,
    buffer_timeout: Annotated[str | None, typer.Option(
        "--buffer-timeout",
        help="Flush interval; 0 = every record, off = only when full (default 100ms).")] = None,
    receiver_free: Annotated[str | None, typer.Option(
        "--receiver-free", help="Time a receiver holds a buffer before freeing it (default 0).")] = None,
    per_buffer_overhead: Annotated[str | None, typer.Option(
        "--per-buffer-overhead", help="Fixed cost per buffer sent (default 5us).")] = None,
    per_buffer_header: Annotated[str | None, typer.Option(
        "--per-buffer-header", help="Header bytes per buffer sent (default 39b).")] = None,
    process_size: Annotated[str | None, typer.Option(
        "--process-size", help="taskmanager.memory.process.size (default 1728m).")] = None,
    network_memory: Annotated[str | None, typer.Option(
        "--network-memory",
        help="Network memory per TaskManager (default derived from process size).")] = None,
    hot_channels: Annotated[str | None, typer.Option(
        "--hot-channels", help="Channels of a gate with backlog (skew) (default all).")] = None,
    capacity: Annotated[str | None, typer.Option(
        "--capacity", metavar="RATE",
        help="Parallelism what-if: records one subtask takes per second of busy time (its true processing "
             "rate; `analyze` measures it). With --target-rate.")] = None,
    target_rate: Annotated[str | None, typer.Option(
        "--target-rate", metavar="RATE", help="Parallelism what-if: records/s the vertex must take.")] = None,
    max_parallelism: Annotated[str | None, typer.Option(
        "--max-parallelism", metavar="N",
        help="Parallelism what-if: the vertex's key groups (default: Flink's for --parallelism).")] = None,
    keyed: Annotated[bool, typer.Option(
        "--keyed",
        help="Parallelism what-if: the vertex reads a keyBy (its load splits by key groups).")] = False,
    target_utilization: Annotated[str | None, typer.Option(
        "--target-utilization", metavar="PCT",
        help="Parallelism what-if: the share of time a subtask may be busy at the target (default 70%).")
    ] = None,
    flink_version: Annotated[str | None, FlinkVersion(
        "the profile's, else the --config file's as lint reads it, else 1.20")] = None,
    profile: Annotated[Path | None, Profile("parameter: value pairs")] = None,
    config: Annotated[Path | None, typer.Option(
        "--config", metavar="FILE", help="Take what a Flink config file sets (flags override it).")] = None,
    sweep: Annotated[str | None, typer.Option(
        "--sweep", metavar="PARAM=RANGE",
        help="Sweep one parameter: a..b (integers), a..b:n[:log], or v1,v2,...")] = None,
    chart: Annotated[str, typer.Option(
        "--chart", metavar="QUANTITY", help="Quantity charted in a sweep.")] = "channel_throughput",
    show: Annotated[str | None, typer.Option(
        "--show", metavar="Q1,Q2", help="Quantities shown as columns in a sweep.")] = None,
    output_format: Annotated[str, Format("model")] = "text",
    output: Annotated[Path | None, Output()] = None,
    verbose: Annotated[bool, Verbose(
        "in the text report, where every input came from (flag, profile, config line, default).")] = False,
    quiet: Annotated[bool, Quiet()] = False,
    no_color: Annotated[bool, NoColor()] = False,
) -> None:
    """What-if: credit, RTT, bandwidth, buffer timeout and network memory of Flink's network stack."""
    flags = {
        "rtt": rtt, "bandwidth": bandwidth, "parallelism": parallelism, "slots": slots,
        "taskmanagers": taskmanagers, "exchanges": exchanges, "segment-size": segment_size,
        "buffers-per-channel": buffers_per_channel, "floating": floating, "record-size": record_size,
        "rate": rate, "buffer-timeout": buffer_timeout, "receiver-free": receiver_free,
        "per-buffer-overhead": per_buffer_overhead, "per-buffer-header": per_buffer_header,
        "process-size": process_size, "network-memory": network_memory, "hot-channels": hot_channels,
    }

    # Nothing but errors goes to stderr here: --quiet holds as it is.
    del quiet

    def run() -> int:
        from flinktune.model.what_if import parallelism_what_if, what_if

        fmt = checked_format("model", output_format)
        utilization = None if target_utilization is None else target_utilization_share(target_utilization)
        scaling = parallelism_what_if(capacity, target_rate, parallelism, max_parallelism, keyed, utilization)
        result = what_if(flags, flink_version=flink_version, profile=profile, config=config, sweep=sweep,
                         chart=chart, show=show, parallelism=scaling)
        emit("model", result, fmt, output=output, no_color=no_color, verbose=verbose,
             inputs=[p for p in (config, profile) if p is not None])
        return EXIT_OK

    raise typer.Exit(guarded(run))


def register(app: typer.Typer) -> None:
    app.command("model")(model)
