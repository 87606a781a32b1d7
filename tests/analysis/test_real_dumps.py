"""The two real Flink 1.20.5 dumps (REST polls every 2 s for ~60 s, 2 TaskManagers, parallelism 4).

ground_truth.json in each folder says what was built in: healthy = no back pressure; slow-sink = the
sink is the bottleneck and every upstream vertex is back-pressured. Real-data quirks that must not
produce findings (real-flink-notes.md): outPoolUsage rests at 0.25 on a healthy sender, inPoolUsage
counts remote channels only, legacy ``buffers.*`` copies sit beside ``Shuffle.Netty.*`` ones.
"""

from __future__ import annotations

import json

import pytest

from flinktune.analysis import AnalysisOptions, analyze

from .conftest import real_dump  # type: ignore[import-not-found]

pytestmark = pytest.mark.spark


def _run(spark, path, **kw):  # type: ignore[no-untyped-def]
    return analyze(AnalysisOptions(inputs=(str(path),), **kw), session=spark)


def test_healthy_real_dump_reports_nothing(spark) -> None:  # type: ignore[no-untyped-def]
    result = _run(spark, real_dump("healthy"))
    (job,) = result.jobs
    assert job.has_plan and job.origins == ()
    assert result.findings == ()
    # The resting output pool usage of a healthy sender (~0.25) is seen, and is not "high".
    src = job.vertices[0]
    assert src.name == "Source: Gen" and src.out_pool_mean == pytest.approx(0.25, abs=0.01)
    assert all(v.level == "OK" and not v.backpressured for v in job.vertices)


def test_slow_sink_real_dump_sink_is_origin_and_all_upstream_backpressured(spark) -> None:  # type: ignore[no-untyped-def]
    folder = real_dump("slow-sink")
    truth = json.loads((folder / "ground_truth.json").read_text())
    result = _run(spark, folder)
    (job,) = result.jobs
    (origin,) = job.origins
    assert origin.name == truth["bottleneck_vertex"]
    assert origin.cause == "all_busy"  # bottleneck_subtasks: "all"
    assert sorted(origin.upstream_backpressured) == sorted(truth["backpressured_vertices"])
    assert origin.upstream_not_backpressured == ()
    assert {v.name for v in job.vertices if v.backpressured} == set(truth["backpressured_vertices"])
    assert [v.name for v in job.vertices] == [
        "Source: Gen",
        "Parse",
        "KeyedAgg",
        "SinkWork -> Discard: Writer",
    ]
    sink = job.vertex(origin.vertex_key)
    assert sink is not None and sink.busy_max is not None and sink.busy_max > 0.9
    assert sink.in_pool_mean is not None and sink.in_pool_mean > 0.9
    codes = sorted((f.code, f.location.key) for f in result.findings)
    assert codes == [("FTA001", truth["bottleneck_vertex"]), ("FTA002", truth["bottleneck_vertex"])]
    fta001 = next(f for f in result.findings if f.code == "FTA001")
    assert fta001.confidence is not None and fta001.confidence >= 0.8
    assert dict(fta001.evidence)["window"].endswith("s)")


def test_record_size_and_buffer_fill_from_counters(spark) -> None:  # type: ignore[no-untyped-def]
    job = _run(spark, real_dump("slow-sink")).jobs[0]
    parse = next(v for v in job.vertices if v.name == "Parse")
    # numBytesOut / numRecordsOut: the generator's records serialise to ~130 bytes.
    assert parse.avg_record_bytes == pytest.approx(130, rel=0.05)
    # numBytesInRemote / numBuffersInRemote below the 32 KiB segment size, above zero.
    assert parse.remote_buffer_bytes is not None and 1000 < parse.remote_buffer_bytes <= 32768


@pytest.mark.parametrize("name", ["healthy", "slow-sink"])
def test_prometheus_scrape_gives_the_same_findings(spark, name: str) -> None:  # type: ignore[no-untyped-def]
    folder = real_dump(name)
    canonical = _run(spark, folder)
    scrape = _run(spark, folder / "prometheus_sample.txt.gz")
    (job,) = scrape.jobs
    assert job.single_sample and any("single scrape" in n for n in job.notes)
    assert sorted((f.code, f.location.key) for f in scrape.findings) == sorted(
        (f.code, f.location.key) for f in canonical.findings
    )
    assert [(o.name, o.cause) for o in job.origins] == [(o.name, o.cause) for o in canonical.jobs[0].origins]
    # One scrape cannot say whether back pressure is sustained: confidence is lower.
    for a, b in zip(job.origins, canonical.jobs[0].origins, strict=True):
        assert a.confidence < b.confidence


def test_job_and_time_filters(spark) -> None:  # type: ignore[no-untyped-def]
    folder = real_dump("slow-sink")
    with pytest.raises(Exception) as info:
        _run(spark, folder, job="no-such-job")
    # The dump's jobs are listed (issue 15): what the user can pass instead.
    assert "no job 'no-such-job'" in str(info.value) and "validation-slow-sink" in str(info.value)
    by_name = _run(spark, folder, job="validation-slow-sink")
    assert by_name.jobs[0].origins[0].name == "SinkWork -> Discard: Writer"
    first = 1795253089696
    early = _run(spark, folder, since_ms=first, until_ms=first + 20_000, warmup="0%")
    assert early.jobs[0].window_ms is not None
    assert early.jobs[0].window_ms[1] < first + 20_000
    assert early.samples < by_name.samples
