"""Diagnosis on facts built inline (no Spark): the seed's tables, cell by cell.

Seed: "Flink Network Stack Vol. 2: Monitoring, Metrics, and that Backpressure Thing" (flink.apache.org,
2019-07-23): origin = the operator after the last back-pressured one; slow receiver vs network (receivers'
inPoolUsage low while a sender's outPoolUsage is high); too few credits (low throughput, outPoolUsage ~100%,
receivers' inPoolUsage low); floating vs exclusive usage for some vs all channels; one subtask vs all.
Levels: OK <= 0.10 < LOW <= 0.50 < HIGH (JobVertexBackPressureHandler, docs ops/monitoring/back_pressure).
"""

from __future__ import annotations

from flinktune.analysis.diagnose import diagnose_job, vertex_items
from flinktune.analysis.facts import SubtaskFacts, bp_level, rollup_vertex
from flinktune.analysis.plan import parse_plan
from flinktune.situation import Environment

PLAN = parse_plan(
    {
        "plan": {
            "jid": "j",
            "nodes": [
                {
                    "id": "sink",
                    "parallelism": 4,
                    "description": "Sink",
                    "inputs": [{"id": "mid", "ship_strategy": "HASH"}],
                },
                {
                    "id": "mid",
                    "parallelism": 4,
                    "description": "Mid",
                    "inputs": [{"id": "src", "ship_strategy": "HASH"}],
                },
                {"id": "src", "parallelism": 4, "description": "Src"},
            ],
        }
    }
)


def sub(
    i: int,
    *,
    bp: float = 0.0,
    busy: float = 0.05,
    out: float = 0.25,
    inp: float | None = 0.0,
    fl: float | None = 0.0,
    ex: float | None = 0.0,
    rin: float = 1000.0,
    share: float | None = None,
    share_hi: float | None = None,
    tm: str = "tm1",
    bytes_in: float | None = 1e6,
) -> SubtaskFacts:
    above = share if share is not None else (1.0 if bp > 0.1 else 0.0)
    return SubtaskFacts(
        job_key="j",
        vertex_key="",
        subtask_index=i,
        tm_id=tm,
        samples=30,
        bp_ratio=bp,
        bp_max=bp,
        bp_share_above_ok=above,
        bp_share_high=share_hi if share_hi is not None else (1.0 if bp > 0.5 else 0.0),
        bp_source="backPressuredTimeMsPerSecond",
        busy_ratio=busy,
        idle_ratio=max(0.0, 1 - busy - bp),
        out_pool=out,
        out_pool_max=out,
        out_pool_share_high=None,
        in_pool=inp,
        in_pool_share_high=None,
        floating=fl,
        exclusive=ex,
        records_in_per_s=rin,
        records_out_per_s=rin,
        bytes_out_per_s=rin * 100,
        bytes_in_remote_per_s=bytes_in,
        buffers_in_remote_per_s=(bytes_in or 0) / 30000 or None,
        has_remote_input=inp is not None,
    )


def vertex(key: str, subs: list[SubtaskFacts]):  # type: ignore[no-untyped-def]
    import dataclasses

    subs = [dataclasses.replace(s, vertex_key=key) for s in subs]
    return rollup_vertex("j", key, PLAN.name_of(key) or key, subs, key)


SRC_BP = [sub(i, bp=0.9, busy=0.1, out=1.0, inp=None, fl=None, ex=None, bytes_in=None) for i in range(4)]
MID_BP = [sub(i, bp=0.9, busy=0.1, out=1.0, inp=1.0, fl=1.0, ex=1.0) for i in range(4)]
SINK_OK = [sub(i) for i in range(4)]


def test_levels_follow_the_web_ui_thresholds() -> None:
    assert [bp_level(x) for x in (0.0, 0.10, 0.11, 0.5, 0.51, 1.0)] == [
        "OK",
        "OK",
        "LOW",
        "LOW",
        "HIGH",
        "HIGH",
    ]


def test_healthy_job_has_no_origin_and_no_items_flagged() -> None:
    d = diagnose_job(
        "j",
        [
            vertex("src", [sub(i, inp=None, out=0.25) for i in range(4)]),
            vertex("mid", SINK_OK),
            vertex("sink", SINK_OK),
        ],
        PLAN,
        Environment(),
    )
    assert d.origins == ()
    assert not any(i["is_origin"] or i["backpressured"] for i in vertex_items(d))


def test_slow_sink_all_busy_is_origin_with_all_upstream_backpressured() -> None:
    sink = [sub(i, busy=0.98, inp=1.0, fl=1.0, ex=1.0) for i in range(4)]
    d = diagnose_job(
        "j", [vertex("src", SRC_BP), vertex("mid", MID_BP), vertex("sink", sink)], PLAN, Environment()
    )
    (o,) = d.origins
    assert (o.vertex_key, o.cause, o.channels) == ("sink", "all_busy", "all")
    assert set(o.upstream_backpressured) == {"Src", "Mid"} and o.upstream_not_backpressured == ()
    assert [v.vertex_key for v in d.vertices] == ["src", "mid", "sink"]


def test_one_hot_subtask_is_skew() -> None:
    mid = [sub(i, busy=0.2, inp=0.1, rin=500) for i in range(4)]
    mid[2] = sub(2, busy=0.99, inp=1.0, fl=1.0, ex=0.2, rin=3000)
    d = diagnose_job(
        "j", [vertex("src", SRC_BP), vertex("mid", mid), vertex("sink", SINK_OK)], PLAN, Environment()
    )
    (o,) = d.origins
    assert (o.vertex_key, o.cause, o.hot_subtask) == ("mid", "hot_subtask", 2)


def test_network_bottleneck_vs_too_few_credits_by_bandwidth() -> None:
    # Receivers idle with empty input pools, senders' output pools full.
    mid = [sub(i, busy=0.05, inp=0.02, fl=0.0, ex=0.02, bytes_in=3e6, tm=f"tm{i % 2}") for i in range(4)]
    vs = [vertex("src", SRC_BP), vertex("mid", mid), vertex("sink", SINK_OK)]
    saturated = diagnose_job("j", vs, PLAN, Environment(bandwidth_bytes_per_s=12.5e6))
    assert saturated.origins[0].cause == "network_bottleneck"  # 6 MB/s per TM of 12.5 MB/s ... plus sink's
    starved = diagnose_job("j", vs, PLAN, Environment(bandwidth_bytes_per_s=1.25e9))
    assert starved.origins[0].cause == "too_few_credits"
    unknown = diagnose_job("j", vs, PLAN, Environment())
    assert unknown.origins[0].cause == "network_or_credits" and unknown.origins[0].confidence <= 0.5


def test_some_channels_when_floating_full_and_exclusive_low() -> None:
    mid = [sub(i, busy=0.9, inp=0.6, fl=0.95, ex=0.2) for i in range(4)]
    d = diagnose_job(
        "j", [vertex("src", SRC_BP), vertex("mid", mid), vertex("sink", SINK_OK)], PLAN, Environment()
    )
    assert d.origins[0].channels == "some"


def test_temporary_backpressure_is_not_an_origin_trigger() -> None:
    # HIGH in a fifth of the samples only: temporary, not sustained.
    src = [
        sub(i, bp=0.2, share=0.2, share_hi=0.2, inp=None, fl=None, ex=None, bytes_in=None) for i in range(4)
    ]
    d = diagnose_job(
        "j", [vertex("src", src), vertex("mid", SINK_OK), vertex("sink", SINK_OK)], PLAN, Environment()
    )
    assert d.origins == ()
    assert d.vertices[0].temporary_bp and not d.vertices[0].backpressured


def test_without_plan_the_busy_unbackpressured_vertex_is_origin_with_less_confidence() -> None:
    sink = [sub(i, busy=0.98, inp=1.0, fl=1.0, ex=1.0) for i in range(4)]
    with_plan = diagnose_job(
        "j", [vertex("src", SRC_BP), vertex("mid", MID_BP), vertex("sink", sink)], PLAN, Environment()
    )
    without = diagnose_job(
        "j", [vertex("src", SRC_BP), vertex("mid", MID_BP), vertex("sink", sink)], None, Environment()
    )
    assert without.origins[0].vertex_key == "sink" and not without.has_plan
    assert without.origins[0].confidence < with_plan.origins[0].confidence
    assert any("no job plan" in n for n in without.notes)


def test_busy_nan_source_gets_busy_from_idle_and_backpressure() -> None:
    # idle + busy + back-pressured ~ 1000 ms/s (docs ops/monitoring/back_pressure).
    from flinktune.analysis.facts import SeriesStat, pivot_subtasks

    def s(metric: str, mean: float | None) -> SeriesStat:
        return SeriesStat(
            "j", "v", 0, metric, 1, 10 if mean is not None else 0, mean, mean, 0.0, 0.0, None, 0, 1
        )

    (f,) = pivot_subtasks(
        [
            s("busyTimeMsPerSecond", None),
            s("idleTimeMsPerSecond", 300.0),
            s("backPressuredTimeMsPerSecond", 600.0),
        ]
    )
    assert f.busy_ratio is not None and abs(f.busy_ratio - 0.1) < 1e-9


def test_best_named_copy_wins() -> None:
    from flinktune.analysis.facts import SeriesStat, pivot_subtasks

    legacy = SeriesStat("j", "v", 0, "outPoolUsage", 2, 10, 0.1, 0.1, 0, 0, None, 0, 1)
    current = SeriesStat("j", "v", 0, "outPoolUsage", 0, 10, 0.9, 0.9, 0, 0, None, 0, 1)
    (f,) = pivot_subtasks([legacy, current])
    assert f.out_pool == 0.9
