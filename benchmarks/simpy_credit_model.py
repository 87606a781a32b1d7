"""The credit-flow core written the SimPy way, for the speed comparison in bench_sim.py only.

Same mechanics as flinktune.sim for a source -> HASH -> sink job with credit-based flow control:
sources serialise records (fixed size) in chunks into subpartition buffers taken from a bounded
pool (a simpy.Container), buffers leave when full or on the output flusher's tick, one NIC per
TaskManager serves ready subpartitions round robin (a simpy.Store of turns), each message costs
``overhead + (bytes + header) / bandwidth`` and arrives RTT/2 later; receivers hold exclusive
buffers announced as credits plus a floating pool asked for by backlog; a buffer's credit returns
after the consumer has processed it. Local channels hand buffers over directly. Processes are
generators and every wait is a SimPy event, which is what SimPy users write.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import simpy


@dataclass
class Config:
    task_managers: int = 2
    slots: int = 2
    segment: int = 32768
    bpc: int = 2
    floating: int = 8
    timeout_s: float = 0.01
    bandwidth: float = 1.25e8
    rtt_s: float = 0.001
    source_capacity: float = 100000.0
    sink_capacity: float = 400000.0
    record_bytes: int = 200
    message_overhead_s: float = 5e-6
    header_bytes: int = 39
    buffer_overhead_s: float = 2e-6
    chunk_s: float = 0.00025


class Buf:
    __slots__ = ("finished", "read", "recs", "ri", "size")

    def __init__(self) -> None:
        self.size = 0
        self.read = 0
        self.finished = False
        self.recs: list[tuple[int, int, float]] = []
        self.ri = 0


class Sub:
    __slots__ = ("channel", "credit", "cur", "flush_req", "in_ready", "nfinished", "nic", "pool", "queue",
                 "remote", "seq")

    def __init__(self, pool: simpy.Container) -> None:
        self.pool = pool
        self.queue: deque[Buf] = deque()
        self.cur: Buf | None = None
        self.nfinished = 0
        self.flush_req = False
        self.credit = 0
        self.in_ready = False
        self.remote = False
        self.nic: Nic | None = None
        self.channel: Channel | None = None
        self.seq = 0

    def sendable(self) -> bool:
        if not self.queue:
            return False
        head = self.queue[0]
        return head.finished or (self.flush_req and head.size > head.read)

    def backlog(self) -> int:
        cur = self.cur
        return self.nfinished + (1 if self.flush_req and cur is not None and cur.size > cur.read else 0)

    def poll(self) -> tuple[Buf, int, list[tuple[int, int, float]], bool]:
        head = self.queue[0]
        if len(self.queue) == 1:
            self.flush_req = False
        recs = head.recs[head.ri:]
        head.ri = len(head.recs)
        nbytes = head.size - head.read
        head.read = head.size
        done = head.finished
        if done:
            self.queue.popleft()
            self.nfinished -= 1
        return head, nbytes, recs, done


class Nic:
    def __init__(self, model: Model) -> None:
        self.model = model
        self.turns = simpy.Store(model.env)

    def offer(self, sub: Sub) -> None:
        if sub.in_ready or not sub.sendable() or sub.credit <= 0:
            return
        sub.in_ready = True
        self.turns.put(sub)

    def run(self):  # type: ignore[no-untyped-def]
        env = self.model.env
        cfg = self.model.cfg
        latency = cfg.rtt_s / 2
        while True:
            sub = yield self.turns.get()
            sub.in_ready = False
            if not sub.sendable() or sub.credit <= 0:
                continue
            _, nbytes, recs, done = sub.poll()
            sub.credit -= 1
            backlog = sub.backlog()
            if sub.sendable() and sub.credit > 0:
                sub.in_ready = True
                self.turns.put(sub)
            yield env.timeout(cfg.message_overhead_s + (nbytes + cfg.header_bytes) / cfg.bandwidth)
            if done:
                yield sub.pool.put(1)
            env.process(self.model.deliver(sub.channel, (nbytes, recs, backlog), latency))


class Channel:
    __slots__ = ("free_excl", "free_float", "gate", "received", "remote", "required", "sub", "waiting")

    def __init__(self, gate: Gate, sub: Sub, remote: bool, bpc: int) -> None:
        self.gate = gate
        self.sub = sub
        self.remote = remote
        self.received: deque[tuple[int, list[tuple[int, int, float]], bool]] = deque()
        self.free_excl = bpc if remote else 0
        self.free_float = 0
        self.required = self.free_excl
        self.waiting = False


class Gate:
    def __init__(self, model: Model, floating: int) -> None:
        self.model = model
        self.avail = simpy.Store(model.env)
        self.queued: set[int] = set()
        self.float_free = floating
        self.waiters: deque[Channel] = deque()
        self.records = 0

    def notify(self, channel: Channel) -> None:
        if id(channel) not in self.queued:
            self.queued.add(id(channel))
            self.avail.put(channel)


class Model:
    def __init__(self, env: simpy.Environment, cfg: Config, rng: np.random.Generator) -> None:
        self.env = env
        self.cfg = cfg
        self.rng = rng
        p = cfg.task_managers * cfg.slots
        self.nics = [Nic(self) for _ in range(cfg.task_managers)]
        pool = max(p + 1, p * cfg.bpc + cfg.floating)
        self.pools = [simpy.Container(env, capacity=pool, init=pool) for _ in range(p)]
        self.subs = [[Sub(self.pools[i]) for _ in range(p)] for i in range(p)]
        self.gates = [Gate(self, cfg.floating) for _ in range(p)]
        for i in range(p):
            for j in range(p):
                sub = self.subs[i][j]
                remote = i // cfg.slots != j // cfg.slots
                sub.remote = remote
                sub.nic = self.nics[i // cfg.slots]
                sub.channel = Channel(self.gates[j], sub, remote, cfg.bpc)
                sub.credit = cfg.bpc if remote else 0
        for nic in self.nics:
            env.process(nic.run())
        for i in range(p):
            env.process(self.source(i))
            env.process(self.flusher(i))
            env.process(self.sink(self.gates[i]))

    # sending side -----------------------------------------------------------------------------
    def notify(self, sub: Sub) -> None:
        if sub.remote:
            assert sub.nic is not None
            sub.nic.offer(sub)
        else:
            assert sub.channel is not None
            sub.channel.gate.notify(sub.channel)

    def finish(self, sub: Sub) -> None:
        cur = sub.cur
        assert cur is not None
        cur.finished = True
        sub.cur = None
        sub.nfinished += 1
        self.notify(sub)

    def source(self, index: int):  # type: ignore[no-untyped-def]
        env = self.env
        cfg = self.cfg
        subs = self.subs[index]
        seg = cfg.segment
        n = max(1, int(cfg.source_capacity * cfg.chunk_s))
        size = cfg.record_bytes
        keys: list[int] = []
        while True:
            yield env.timeout(n / cfg.source_capacity)
            now = env.now
            if len(keys) < n:  # keys drawn in blocks, as flinktune.sim's Router does
                keys += self.rng.integers(0, len(subs), size=max(4096, n)).tolist()
            chunk, keys = keys[:n], keys[n:]
            for target in chunk:
                sub = subs[target]
                remaining = size
                seq = sub.seq
                sub.seq += 1
                while True:
                    if sub.cur is None:
                        yield sub.pool.get(1)
                        sub.cur = Buf()
                        sub.queue.append(sub.cur)
                    cur = sub.cur
                    space = seg - cur.size
                    if remaining <= space:
                        cur.size += remaining
                        cur.recs.append((cur.size, seq, now))
                        if cur.size == seg:
                            self.finish(sub)
                        break
                    cur.size = seg
                    remaining -= space
                    self.finish(sub)

    def flusher(self, index: int):  # type: ignore[no-untyped-def]
        while True:
            yield self.env.timeout(self.cfg.timeout_s)
            for sub in self.subs[index]:
                cur = sub.cur
                if cur is not None and cur.size > cur.read and not sub.flush_req:
                    sub.flush_req = True
                    self.notify(sub)

    # receiving side ---------------------------------------------------------------------------
    def deliver(self, channel: Channel, item: tuple[int, list[tuple[int, int, float]], int], delay: float):  # type: ignore[no-untyped-def]
        yield self.env.timeout(delay)
        nbytes, recs, backlog = item
        floating = channel.free_float > 0
        if floating:
            channel.free_float -= 1
        else:
            channel.free_excl -= 1
        channel.received.append((nbytes, recs, floating))
        channel.gate.notify(channel)
        self.on_backlog(channel, backlog)

    def on_backlog(self, channel: Channel, backlog: int) -> None:
        gate = channel.gate
        channel.required = backlog + self.cfg.bpc
        added = 0
        while channel.free_excl + channel.free_float < channel.required and gate.float_free > 0:
            gate.float_free -= 1
            channel.free_float += 1
            added += 1
        if channel.free_excl + channel.free_float < channel.required and not channel.waiting:
            channel.waiting = True
            gate.waiters.append(channel)
        if added:
            self.env.process(self.credit(channel.sub, added))

    def credit(self, sub: Sub, amount: int):  # type: ignore[no-untyped-def]
        yield self.env.timeout(self.cfg.rtt_s / 2)
        sub.credit += amount
        assert sub.nic is not None
        sub.nic.offer(sub)

    def return_floating(self, gate: Gate) -> None:
        while gate.waiters:
            channel = gate.waiters[0]
            if channel.free_excl + channel.free_float >= channel.required:
                gate.waiters.popleft()
                channel.waiting = False
                continue
            channel.free_float += 1
            if channel.free_excl + channel.free_float >= channel.required:
                gate.waiters.popleft()
                channel.waiting = False
            self.env.process(self.credit(channel.sub, 1))
            return
        gate.float_free += 1

    def sink(self, gate: Gate):  # type: ignore[no-untyped-def]
        env = self.env
        cfg = self.cfg
        while True:
            channel = yield gate.avail.get()
            gate.queued.discard(id(channel))
            if channel.remote:
                if not channel.received:
                    continue
                _, recs, floating = channel.received.popleft()
                more = bool(channel.received)
            else:
                sub = channel.sub
                if not sub.sendable():
                    continue
                _, _, recs, done = sub.poll()
                floating = False
                more = sub.sendable()
            if more:
                gate.notify(channel)
            yield env.timeout(cfg.buffer_overhead_s + len(recs) / cfg.sink_capacity)
            gate.records += len(recs)
            if not channel.remote:
                if done:
                    yield channel.sub.pool.put(1)
            elif floating:
                self.return_floating(gate)
            else:
                channel.free_excl += 1
                if channel.free_excl + channel.free_float > channel.required and channel.free_float > 0:
                    channel.free_float -= 1
                    self.return_floating(gate)
                else:
                    env.process(self.credit(channel.sub, 1))


def run(cfg: Config, until_s: float, seed: int) -> tuple[int, int]:
    """Simulate; returns (SimPy events processed, records received by the sinks)."""
    env = simpy.Environment()
    model = Model(env, cfg, np.random.default_rng(seed))
    events = 0
    step = env.step
    peek = env.peek
    while peek() <= until_s:
        step()
        events += 1
    return events, sum(g.records for g in model.gates)
