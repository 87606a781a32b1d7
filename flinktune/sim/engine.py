"""Build the network stack of a scenario, run it, sample it like a metrics reporter.

Placement follows Flink's default slot sharing: subtask i of every vertex shares slot i, and
slots fill TaskManagers in order (slot i on TaskManager i // slots_per_tm). Channels between
subtasks on the same TaskManager are local, all others remote over the TaskManager pair's one
connection.

Over 500 lines: building and running the simulated network stack and sampling it like a reporter
share the scenario's state.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from typing import Any

import numpy as np

from flinktune.sim.input import InputChannel, InputGate
from flinktune.sim.kernel import LATE, SAMPLE, Kernel
from flinktune.sim.output import ResultPartition, Router, SimInvariantError, SizeGen
from flinktune.sim.result import (
    COUNTERS,
    GAUGES,
    ChannelStats,
    Invariants,
    Samples,
    SimResult,
    VertexStats,
    percentiles,
)
from flinktune.sim.scenario import Scenario
from flinktune.sim.symmetry import fold_block
from flinktune.sim.task import BACKPRESSURED, BUSY, Task
from flinktune.sim.transport import Connection, Nic

METRIC_NAMES: tuple[str, ...] = GAUGES + COUNTERS
_M = {name: i for i, name in enumerate(METRIC_NAMES)}
DRAIN_LIMIT_S = 120.0
# a drain gives up when no record moved for this long (simulated)
STALL_S = 5.0
# run_scenario(fold=None) folds a repeating job from this many channels on (smaller jobs run in
# full: they are fast anyway, and their results stay those of the reference model)
FOLD_AUTO_CHANNELS = 1024


def hex_id(*parts: str) -> str:
    """A stable 32-hex id (JobID / JobVertexID shape) from names."""
    return hashlib.md5("\x1f".join(parts).encode("utf-8")).hexdigest()


class _Sim:
    """The assembled network stack of one scenario."""

    def __init__(self, scenario: Scenario, rng: np.random.Generator, check_invariants: bool,
                 block: int | None = None) -> None:
        self.sc = scenario
        self.rng = rng
        self.check = check_invariants
        self.kernel = Kernel()
        k = self.kernel
        cl = scenario.cluster
        net = scenario.network
        costs = scenario.costs
        self.latency_s = cl.rtt / 2
        credit = net.credit_based
        vertices = scenario.job.vertices
        # folded (flinktune.sim.symmetry): only subtasks 0 .. block-1 of every vertex are built
        self.block = block
        self.copies = vertices[0].parallelism // block if block else 1
        n_tms = block // cl.slots_per_tm if block else cl.task_managers
        self.nics = [Nic(k, tm, cl.bandwidth, self.latency_s, costs.message_overhead,
                         costs.message_overhead_bytes, credit) for tm in range(n_tms)]
        self.conns: dict[tuple[int, int, int], Connection] = {}
        self.placement = [[i // cl.slots_per_tm for i in range(v.parallelism)] for v in vertices]
        timeout = net.buffer_timeout
        flush_always = timeout is not None and timeout == 0.0
        self.tasks: list[list[Task]] = []
        self.channels: list[tuple[int, int, int, InputChannel]] = []  # (edge, from, to, channel)
        bpc = net.buffers_per_channel
        for vi, vertex in enumerate(vertices):
            downstream = vertices[vi + 1] if vi + 1 < len(vertices) else None
            row: list[Task] = []
            for si in range(block or vertex.parallelism):
                part = router = sizes = None
                if downstream is not None:
                    spec = downstream.input
                    strategy = spec.ship_strategy if spec is not None else "HASH"
                    n_subs = 1 if strategy == "FORWARD" else downstream.parallelism
                    pool = net.output_pool_size or max(n_subs + 1,
                                                       n_subs * bpc + net.floating_buffers_per_gate)
                    part = ResultPartition(n_subs, net.segment_size, pool, net.max_buffers_per_channel)
                    weights = None
                    if spec is not None and spec.weights is not None:
                        w = np.asarray(spec.weights, dtype=np.float64)
                        weights = w / w.sum()
                    elif spec is not None and spec.producer_weights is not None:
                        w = np.asarray(spec.producer_weights[si], dtype=np.float64)
                        weights = w / w.sum()
                    elif spec is not None and spec.hot_subtask is not None:
                        n = downstream.parallelism
                        w = np.full(n, (1 - spec.hot_subtask.share) / max(1, n - 1))
                        w[spec.hot_subtask.index] = spec.hot_subtask.share if n > 1 else 1.0
                        weights = w / w.sum()
                    router = Router(strategy, n_subs, weights, rng, si)
                    sizes = SizeGen(self._record_size(vi), rng)
                factor = vertex.subtask_factors[si] if vertex.subtask_factors else 1.0
                gate = None
                if vi > 0:
                    gate = InputGate(k, credit, 0, 0)
                task = Task(k, vi, si, self.placement[vi][si], is_source=vi == 0,
                            capacity=vertex.capacity * factor, rate=vertex.rate if vi == 0 else None,
                            gate=gate, part=part, router=router, sizes=sizes, flush_always=flush_always,
                            flush_overhead_s=costs.flush_overhead, buffer_overhead_s=costs.buffer_overhead,
                            lat_every=scenario.latency_sample_every, warmup_s=scenario.warmup)
                task.strict_fifo = check_invariants
                if part is not None:
                    part.task = task
                if gate is not None:
                    gate.task = task
                row.append(task)
            self.tasks.append(row)
        # wire the edges
        for vi in range(1, len(vertices)):
            spec = vertices[vi].input
            strategy = spec.ship_strategy if spec is not None else "HASH"
            n_producers = vertices[vi - 1].parallelism
            for di, consumer in enumerate(self.tasks[vi]):
                gate = consumer.gate
                labels = [di] if strategy == "FORWARD" else range(n_producers)
                n_remote = 0
                for label in labels:
                    # the channel from producer ``label`` to this consumer; folded, it is the
                    # representative producer's channel to the consumer shifted by whole blocks
                    if block:
                        shift = (label // block) * block
                        producer = self.tasks[vi - 1][label % block]
                        target = (di - shift) % n_producers
                        dst_tm = self.placement[vi][target]
                        remote = self.placement[vi - 1][label] != self.placement[vi][di]
                    else:
                        producer = self.tasks[vi - 1][label]
                        target = di
                        dst_tm = consumer.tm
                        remote = producer.tm != consumer.tm
                    sub = producer.part.subs[0 if strategy == "FORWARD" else target]
                    n_remote += remote
                    channel = InputChannel(k, gate, label, sub, remote, bpc, self.latency_s)
                    gate.channels.append(channel)
                    sub.channel = channel
                    sub.remote = remote
                    if remote:
                        sub.nic = self.nics[producer.tm]
                        # one connection per TaskManager pair and intermediate result (ConnectionID
                        # carries the result's connection index): two edges never share a FIFO,
                        # which without credits could deadlock across them
                        key = (producer.tm, dst_tm, vi)
                        if key not in self.conns:
                            self.conns[key] = Connection(k, self.nics[producer.tm], producer.tm, dst_tm,
                                                         self.latency_s, net.tcp_window)
                        sub.conn = self.conns[key]
                        if credit:
                            sub.credit = bpc  # initial credit = exclusive buffers
                            sub.max_credit_seen = bpc
                            sub.need_backlog_announce = bpc == 0
                    self.channels.append((vi - 1, label, di, channel))
                if credit:
                    # Flink's floating pool has at least one buffer (required = C*bpc + 1)
                    floating = net.floating_buffers_per_gate
                    if n_remote and bpc == 0:
                        floating = max(1, floating)
                    gate.float_total = gate.float_free = floating
                else:
                    total = net.input_pool_size or max(1, n_remote * bpc + net.floating_buffers_per_gate)
                    gate.pool_total = gate.pool_free = total
        # time series bookkeeping
        self.rows_t: list[float] = []
        self.rows_v: list[int] = []
        self.rows_s: list[int] = []
        self.rows_m: list[int] = []
        self.rows_x: list[float] = []
        self.last_times: dict[tuple[int, int], tuple[float, float, float, float]] = {}
        self.warm_counts: dict[int, tuple[int, int, int]] = {}
        self.warm_task_counts: dict[tuple[int, int], tuple[int, int]] = {}
        self.end_counts: list[tuple[int, int, int]] = []

    def _record_size(self, vi: int) -> Any:
        for vertex in reversed(self.sc.job.vertices[: vi + 1]):
            if vertex.record_size is not None:
                return vertex.record_size
        raise SimInvariantError("no record size")  # validation guarantees the source has one

    # --- scheduling ----------------------------------------------------------------------------
    def start(self) -> None:
        k = self.kernel
        sc = self.sc
        timeout = sc.network.buffer_timeout
        for vi, vertex in enumerate(sc.job.vertices):
            for change in vertex.schedule:
                targets = change.subtasks if change.subtasks is not None else range(vertex.parallelism)
                for si in targets:
                    if si >= len(self.tasks[vi]):
                        continue  # folded: the representative in the first block has the same change
                    k.at(change.at, self._set_factor, (self.tasks[vi][si], change.factor))
            for task in self.tasks[vi]:
                if timeout is not None and timeout > 0 and task.part is not None:
                    phase = float(self.rng.uniform(0, timeout))
                    k.at(phase, self._flusher, (task.part, timeout))
        for task in self.tasks[0]:
            k.at(0.0, lambda t: t.step(), task)
        if sc.checkpoints is not None and sc.checkpoints.interval > 0:
            k.at(sc.checkpoints.interval, self._checkpoint, 1)
        n = 1
        while n * sc.sample_interval <= sc.duration + 1e-9:
            k.at(n * sc.sample_interval, self._sample, None, SAMPLE)
            n += 1
        k.at(sc.warmup, self._snapshot_warm, None, SAMPLE)

    def _set_factor(self, item: tuple[Task, float]) -> None:
        task, factor = item
        task.factor = factor
        task.wake()

    def _flusher(self, item: tuple[ResultPartition, float]) -> None:
        part, interval = item
        flushed = part.flush_all()
        if flushed:
            # handing data to Netty costs the producing side CPU (docs/simulator.md, calibration)
            part.task.flush_debt_s += flushed * self.sc.costs.flush_overhead
        self.kernel.schedule(interval, self._flusher, item, LATE)

    def _checkpoint(self, checkpoint_id: int) -> None:
        if self.kernel.now > self.sc.duration:
            return
        for task in self.tasks[0]:
            task.trigger_checkpoint(checkpoint_id)
        assert self.sc.checkpoints is not None
        self.kernel.schedule(self.sc.checkpoints.interval, self._checkpoint, checkpoint_id + 1)

    def _snapshot_warm(self, _: Any) -> None:
        for index, (_, _, _, channel) in enumerate(self.channels):
            self.warm_counts[index] = (channel.records_in, channel.bytes_in, channel.buffers_in)
        for row in self.tasks:
            for task in row:
                self.warm_task_counts[(task.vertex, task.subtask)] = (task.records_in, task.records_out)

    # --- sampling ------------------------------------------------------------------------------
    def _emit_row(self, t: float, vi: int, si: int, metric: str, value: float) -> None:
        self.rows_t.append(t)
        self.rows_v.append(vi)
        self.rows_s.append(si)
        self.rows_m.append(_M[metric])
        self.rows_x.append(value)

    def _sample(self, _: Any) -> None:
        now = self.kernel.now
        if self.check:
            self.check_invariants()
        for row in self.tasks:
            for task in row:
                key = (task.vertex, task.subtask)
                idle, busy, bp = task.times()
                last = self.last_times.get(key, (0.0, 0.0, 0.0, 0.0))
                span = now - last[0]
                self.last_times[key] = (now, idle, busy, bp)
                vi, si = key
                emit = self._emit_row
                if span > 0:
                    idle_ms = 1000.0 * (idle - last[1]) / span
                    bp_ms = 1000.0 * (bp - last[3]) / span
                    emit(now, vi, si, "idleTimeMsPerSecond", idle_ms)
                    emit(now, vi, si, "backPressuredTimeMsPerSecond", bp_ms)
                    emit(now, vi, si, "busyTimeMsPerSecond", max(0.0, 1000.0 - idle_ms - bp_ms))
                emit(now, vi, si, "isBackPressured", 1.0 if task.state == BACKPRESSURED else 0.0)
                part = task.part
                if part is not None:
                    emit(now, vi, si, "outPoolUsage", part.used / part.pool_size)
                    emit(now, vi, si, "numBytesOut", float(part.bytes_out))
                    emit(now, vi, si, "numBuffersOut", float(sum(s.buffers_out for s in part.subs)))
                emit(now, vi, si, "numRecordsOut", float(task.records_out))
                gate = task.gate
                if gate is not None:
                    in_pool, excl, flt = gate.usage()
                    emit(now, vi, si, "inPoolUsage", in_pool)
                    if gate.credit_mode:
                        emit(now, vi, si, "inputExclusiveBuffersUsage", excl)
                        emit(now, vi, si, "inputFloatingBuffersUsage", flt)
                    bytes_local, bytes_remote, buffers_local, buffers_remote = task.input_counts()
                    emit(now, vi, si, "numRecordsIn", float(task.records_in))
                    emit(now, vi, si, "numBytesInLocal", float(bytes_local))
                    emit(now, vi, si, "numBytesInRemote", float(bytes_remote))
                    emit(now, vi, si, "numBuffersInLocal", float(buffers_local))
                    emit(now, vi, si, "numBuffersInRemote", float(buffers_remote))
                    if self.sc.checkpoints is not None:
                        emit(now, vi, si, "checkpointAlignmentTime", task.alignment_s * 1e9)

    # --- invariants ----------------------------------------------------------------------------
    def check_invariants(self) -> None:
        for row in self.tasks:
            for task in row:
                part = task.part
                if part is not None:
                    held = 0
                    for sub in part.subs:
                        if sub.credit < 0:
                            raise SimInvariantError("negative credit")
                        queued = sum(1 for b in sub.queue if b.event is None)
                        if sub.held < queued:
                            raise SimInvariantError("a subpartition queues buffers it does not hold")
                        held += sub.held
                    if held != part.used or not 0 <= part.used <= part.pool_size:
                        raise SimInvariantError(f"sender pool: {part.used} used, {held} held by queues, "
                                                f"size {part.pool_size}")
                gate = task.gate
                if gate is not None and gate.credit_mode:
                    float_held = 0
                    for channel in gate.channels:
                        if (channel.free_excl < 0 or channel.free_float < 0
                                or channel.free_excl > channel.excl_total):
                            raise SimInvariantError("receiver buffer counts out of range")
                        float_held += channel.free_float
                    if gate.float_free < 0 or gate.float_free + float_held > gate.float_total:
                        raise SimInvariantError("floating buffers not conserved")
                elif gate is not None and not 0 <= gate.pool_free <= gate.pool_total:
                    raise SimInvariantError("input pool out of range")

    # --- drain and conservation ----------------------------------------------------------------
    def conserved(self) -> tuple[bool, str]:
        for vi in range(1, len(self.tasks)):
            sent = sum(t.records_out for t in self.tasks[vi - 1])
            got = sum(t.records_in for t in self.tasks[vi])
            if sent != got:
                return False, f"edge {vi - 1}->{vi}: {sent} records sent, {got} received"
        for vi in range(1, len(self.tasks) - 1):
            got = sum(t.records_in for t in self.tasks[vi])
            out = sum(t.records_out for t in self.tasks[vi])
            if got != out:
                return False, f"vertex {vi}: {got} records in, {out} out"
        for edge, _, _, channel in self.channels:
            if channel.sub.next_seq != channel.records_in:
                return False, (f"a channel of edge {edge}: {channel.sub.next_seq} written, "
                               f"{channel.records_in} read")
        return True, ""

    def drain(self) -> bool:
        k = self.kernel
        for task in self.tasks[0]:
            task.stop()
        end = k.now + DRAIN_LIMIT_S
        progress = -1
        progress_at = k.now
        while k.now < end:
            for row in self.tasks:
                for task in row:
                    if task.part is not None:
                        task.part.flush_all()
            k.run(k.now + 0.01)
            if self.check:
                self.check_invariants()
            idle = all(not t.p_targets and t.partial is None and t.state != BUSY
                       for row in self.tasks for t in row)
            if idle and self.conserved()[0]:
                return True
            moved = sum(c.records_in for _, _, _, c in self.channels)
            if moved != progress or not idle:
                progress, progress_at = moved, k.now
            elif k.now - progress_at > STALL_S:
                return False  # nothing arrived for a long time: records are stuck
        return False


def run_scenario(scenario: Scenario, rng: np.random.Generator, *, check_invariants: bool = False,
                 drain: bool = False, fold: bool | None = None) -> SimResult:
    """Simulate ``scenario``; all randomness comes from ``rng``.

    ``drain`` stops the sources at the end and runs until every record reached the sinks (used to
    check that records are conserved); ``check_invariants`` re-checks buffer and credit accounting
    at every sample and raises SimInvariantError on the first violation. ``fold``: simulate one
    repeating block of TaskManagers and count it for all (flinktune.sim.symmetry) when the job
    repeats; ``None`` folds large jobs only (at least FOLD_AUTO_CHANNELS channels), so small
    ones run on the full reference model; ``False`` never folds.
    """
    wall0 = time.perf_counter()
    block = fold_block(scenario) if fold or fold is None else None
    if fold is None and block is not None and _n_channels(scenario) < FOLD_AUTO_CHANNELS:
        block = None
    sim = _Sim(scenario, rng, check_invariants, block)
    sim.start()
    sim.kernel.run(scenario.duration)
    events = sim.kernel.events_processed
    # steady-state counters end here: the drain below must not count
    sim.end_counts = [(c.records_in, c.bytes_in, c.buffers_in) for _, _, _, c in sim.channels]
    drained = sim.drain() if drain else False
    conserved, detail = sim.conserved() if drain else (True, "not drained")
    wall = time.perf_counter() - wall0
    return _assemble(sim, scenario, events, wall, drained, conserved, detail)


def _n_channels(sc: Scenario) -> int:
    vertices = sc.job.vertices
    total = 0
    for up, down in itertools.pairwise(vertices):
        forward = down.input is not None and down.input.ship_strategy == "FORWARD"
        total += down.parallelism if forward else up.parallelism * down.parallelism
    return total


def _unfold_samples(samples: Samples, block: int, copies: int) -> Samples:
    """Every representative's rows, once per block it stands for (subtask + k * block)."""
    n = len(samples.t_s)
    offsets = np.repeat(np.arange(copies, dtype=np.int32) * block, n)
    t_s = np.tile(samples.t_s, copies)
    vertex = np.tile(samples.vertex, copies)
    subtask = np.tile(samples.subtask, copies) + offsets
    metric = np.tile(samples.metric, copies)
    value = np.tile(samples.value, copies)
    # the reporter's order: by time, then vertex, subtask and metric as emitted
    order = np.lexsort((np.tile(np.arange(n), copies), subtask, vertex, t_s))
    return Samples(t_s=t_s[order], vertex=vertex[order], subtask=subtask[order], metric=metric[order],
                   value=value[order], metric_names=samples.metric_names)


def _assemble(sim: _Sim, sc: Scenario, events: int, wall: float, drained: bool, conserved: bool,
              detail: str) -> SimResult:
    job_id = hex_id("job", sc.name, sc.job.name)
    vertex_ids = tuple(hex_id("vertex", sc.name, v.name, str(i)) for i, v in enumerate(sc.job.vertices))
    samples = Samples(
        t_s=np.asarray(sim.rows_t, dtype=np.float64), vertex=np.asarray(sim.rows_v, dtype=np.int32),
        subtask=np.asarray(sim.rows_s, dtype=np.int32), metric=np.asarray(sim.rows_m, dtype=np.int32),
        value=np.asarray(sim.rows_x, dtype=np.float64), metric_names=METRIC_NAMES)
    block = sim.block
    copies = sim.copies
    if block:
        samples = _unfold_samples(samples, block, copies)
    steady = sc.duration - sc.warmup
    names = [v.name for v in sc.job.vertices]
    channels: list[ChannelStats] = []
    edges: list[int] = []
    fifo = 0
    for index, (edge, frm, to, channel) in enumerate(sim.channels):
        r0, b0, _ = sim.warm_counts.get(index, (0, 0, 0))
        fifo += channel.fifo_violations
        latency = percentiles(channel.lat_channel)
        n_up = len(sim.placement[edge])
        for copy in range(copies):
            shift = copy * (block or 0)
            channels.append(ChannelStats(
                producer=names[edge], consumer=names[edge + 1], from_subtask=(frm + shift) % n_up,
                to_subtask=to + shift, remote=channel.remote, records=channel.records_in,
                bytes=channel.bytes_in, buffers=channel.buffers_in,
                records_per_s=(sim.end_counts[index][0] - r0) / steady,
                bytes_per_s=(sim.end_counts[index][1] - b0) / steady,
                latency_s=latency, max_credit=channel.sub.max_credit_seen))
            edges.append(edge)
    if block:
        order = sorted(range(len(channels)),
                       key=lambda i: (edges[i], channels[i].to_subtask, channels[i].from_subtask))
        channels = [channels[i] for i in order]
    vertices = []
    for vi, row in enumerate(sim.tasks):
        rin, rout = _vertex_rates(sim, samples, vi, sc)
        lats: list[float] = []
        for task in row:
            lats.extend(task.lat_vertex)
        vertices.append(VertexStats(
            name=names[vi], vertex_id=vertex_ids[vi], parallelism=len(row) * copies,
            records_in_per_s=rin, records_out_per_s=rout, latency_s=percentiles(lats),
            busy_ms_per_s=_mean_metric(samples, "busyTimeMsPerSecond", vi, sc.warmup),
            backpressured_ms_per_s=_mean_metric(samples, "backPressuredTimeMsPerSecond", vi, sc.warmup),
            idle_ms_per_s=_mean_metric(samples, "idleTimeMsPerSecond", vi, sc.warmup),
            out_pool_usage=_mean_metric(samples, "outPoolUsage", vi, sc.warmup),
            in_pool_usage=_mean_metric(samples, "inPoolUsage", vi, sc.warmup)))
    sinks = sim.tasks[-1]
    return SimResult(
        scenario=sc, job_id=job_id, vertex_ids=vertex_ids,
        placement=tuple(tuple(p) for p in sim.placement), samples=samples, channels=tuple(channels),
        vertices=tuple(vertices), events_processed=events, wall_s=wall,
        invariants=Invariants(fifo_violations=fifo, records_conserved=conserved, drained=drained,
                              detail=detail),
        checkpoints_completed=min((t.checkpoints_done for t in sinks), default=0),
        extra={"nic_busy_s": copies * sum(n.busy_s for n in sim.nics),
               "messages": float(copies * sum(n.messages for n in sim.nics)),
               "fold_copies": float(copies)})


def _mean_metric(samples: Samples, metric: str, vertex: int, after_s: float) -> float:
    if metric not in samples.metric_names:
        return float("nan")
    code = samples.metric_names.index(metric)
    mask = (samples.metric == code) & (samples.vertex == vertex) & (samples.t_s > after_s)
    values = samples.value[mask]
    values = values[~np.isnan(values)]
    return float(values.mean()) if len(values) else float("nan")


def _vertex_rates(sim: _Sim, samples: Samples, vi: int, sc: Scenario) -> tuple[float, float]:
    rates = []
    for counter in ("numRecordsIn", "numRecordsOut"):
        code = samples.metric_names.index(counter)
        mask = (samples.metric == code) & (samples.vertex == vi)
        times = samples.t_s[mask]
        if not len(times):
            rates.append(float("nan"))
            continue
        values = samples.value[mask]
        t_end = times.max()
        end_total = values[times == t_end].sum()
        after = times[times >= sc.warmup - 1e-9]
        t0 = after.min() if len(after) else 0.0
        start_total = values[times == t0].sum() if len(after) and t0 < t_end else 0.0
        span = t_end - t0 if t0 < t_end else t_end
        rates.append(float((end_total - start_total) / span) if span > 0 else float("nan"))
    return rates[0], rates[1]
