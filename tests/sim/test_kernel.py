"""The event kernel: ordering by time, then priority, then insertion (SimPy's rule)."""

from __future__ import annotations

from flinktune.sim.kernel import LATE, NORMAL, URGENT, Kernel


def test_events_run_in_time_priority_then_insertion_order() -> None:
    kernel = Kernel()
    log: list[tuple[float, str]] = []
    kernel.schedule(2.0, lambda a: log.append((kernel.now, a)), "late-2")
    kernel.schedule(1.0, lambda a: log.append((kernel.now, a)), "normal-1a")
    kernel.schedule(1.0, lambda a: log.append((kernel.now, a)), "urgent-1", URGENT)
    kernel.schedule(1.0, lambda a: log.append((kernel.now, a)), "normal-1b", NORMAL)
    kernel.schedule(1.0, lambda a: log.append((kernel.now, a)), "late-1", LATE)
    kernel.run(10.0)
    assert log == [(1.0, "urgent-1"), (1.0, "normal-1a"), (1.0, "normal-1b"), (1.0, "late-1"),
                   (2.0, "late-2")]
    assert kernel.events_processed == 5
    assert kernel.now == 10.0


def test_run_stops_at_the_horizon_and_resumes() -> None:
    kernel = Kernel()
    seen: list[float] = []

    def tick(_: object) -> None:
        seen.append(kernel.now)
        kernel.schedule(1.0, tick)

    kernel.at(0.5, tick)
    kernel.run(2.0)
    assert seen == [0.5, 1.5]
    kernel.run(3.6)
    assert seen == [0.5, 1.5, 2.5, 3.5]
    assert kernel.pending() == 1


def test_at_never_schedules_in_the_past() -> None:
    kernel = Kernel()
    kernel.run(5.0)
    seen: list[float] = []
    kernel.at(1.0, lambda _: seen.append(kernel.now))
    kernel.run(6.0)
    assert seen == [5.0]
