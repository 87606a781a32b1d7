"""What a source would send unblocked (``out / (1 - bp)``) is acted on only while back pressure is all
that holds the source back (analysis.parallelism, capacity.UNBLOCKED_MAX_IDLE).

Measured on real Flink 1.20 (tests/e2e_flink, the slow-sink loop): a DataGen source limited to 20,000
records/s, back-pressured 64% of the time, read as 51,676 records/s unblocked, and recommend sized the
sink 4 -> 26 for it. A source that is idle part of the time (idleTimeMsPerSecond: it waits for its
rate limit or its input) catches up between back-pressured spells, so the formula overstates it.
Runs the in-memory diagnosis (analysis.samples), no Spark.
"""

from __future__ import annotations

from flinktune.analysis.example_metrics import example_dump
from flinktune.analysis.samples import diagnose_samples
from flinktune.versions import parse_version


def _advice(source: dict[str, object]):  # type: ignore[no-untyped-def]
    dump = example_dump({
        "edges": ["Source: Gen --REBALANCE--> Sink"],
        "vertices": {
            "Source: Gen": {"parallelism": 2, "numRecordsOut": "5000/s", **source},
            "Sink": {"parallelism": 2, "numRecordsIn": "5000/s", "busyTimeMsPerSecond": "100%"},
        },
    })
    (diag,) = diagnose_samples(dump.samples, dump.plan, dump.env, dump.scaling, parse_version("1.20")).jobs
    return diag.parallelism


def test_a_source_held_back_only_by_back_pressure_sizes_the_job() -> None:
    advice = _advice({"busyTimeMsPerSecond": "40%", "backPressuredTimeMsPerSecond": "60%",
                      "idleTimeMsPerSecond": "0%"})
    (target,) = advice.targets
    assert target.basis == "unblocked" and target.reliable
    assert abs(target.per_s - 25_000) < 1         # 2 x 5,000 / (1 - 0.6)
    assert advice.withheld is None and advice.changes


def test_a_source_that_also_waits_for_its_input_is_only_an_estimate() -> None:
    advice = _advice({"busyTimeMsPerSecond": "6%", "backPressuredTimeMsPerSecond": "64%",
                      "idleTimeMsPerSecond": "30%"})
    (target,) = advice.targets
    assert target.basis == "unblocked" and not target.reliable
    assert advice.withheld is not None and not advice.changes
    assert "idle 30% of the time besides back-pressured 64%" in advice.withheld
    assert "--target-rate" in advice.withheld


def test_idle_time_comes_back_from_busy_and_back_pressure_when_not_reported() -> None:
    advice = _advice({"busyTimeMsPerSecond": "6%", "backPressuredTimeMsPerSecond": "64%"})
    (target,) = advice.targets
    assert not target.reliable


def test_an_idle_source_that_is_not_back_pressured_sends_what_it_gets() -> None:
    # Back pressure at or below OK (10%): out / (1 - bp) is within 11% of out, whatever the idle time.
    advice = _advice({"busyTimeMsPerSecond": "5%", "backPressuredTimeMsPerSecond": "0%",
                      "idleTimeMsPerSecond": "95%"})
    (target,) = advice.targets
    assert target.reliable and abs(target.per_s - 10_000) < 1
