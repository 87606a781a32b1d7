"""compare end to end on small hand-made dump pairs, through the analysis on Spark: known deltas, pure
noise, a rescaled graph, missing checkpoint data, a dump against itself, two different jobs."""

from __future__ import annotations

from pathlib import Path

import pytest

from flinktune.compare import figures as fg
from flinktune.compare.run import CompareOptions, compare
from flinktune.errors import MetricsError

from . import dumps  # type: ignore[attr-defined]

pytestmark = pytest.mark.spark
JOB = "0f" * 16


@pytest.fixture(scope="module")
def spark():  # type: ignore[no-untyped-def]
    import shutil

    if shutil.which("java") is None:
        pytest.skip("Java is not installed")
    from flinktune.spark.session import build_session

    session = build_session("local[2]", {"spark.sql.shuffle.partitions": "2"})
    yield session
    session.stop()


def _compare(spark, before: Path, after: Path, **options):  # type: ignore[no-untyped-def]
    return compare(CompareOptions(before=(str(before),), after=(str(after),), **options), session=spark)


def _figure(comparison, vertex: str | None, name: str):  # type: ignore[no-untyped-def]
    changes = (
        comparison.job if vertex is None else next(v for v in comparison.vertices if v.name == vertex).changes
    )
    return next(c for c in changes if c.figure.name == name)


def test_known_deltas(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    before = dumps.write(
        dumps.Run(JOB, "job", dumps.chain(2000.0, 0.4), checkpoints_s=[4.0] * 12), tmp_path / "before", 1
    )
    # The sink got slower: half the throughput, its subtasks busy, everything upstream back-pressured;
    # and checkpoints got shorter.
    after = dumps.write(
        dumps.Run("1e" * 16, "job", dumps.chain(1000.0, 0.95, upstream_bp=0.9), checkpoints_s=[1.5] * 12),
        tmp_path / "after",
        2,
    )
    comparison = _compare(spark, before, after)
    throughput = _figure(comparison, None, "throughput")
    assert throughput.verdict == fg.WORSE and throughput.relative == pytest.approx(-0.5, abs=0.05)
    assert _figure(comparison, None, "backpressured").verdict == fg.WORSE
    assert _figure(comparison, None, "checkpoint_duration").verdict == fg.BETTER
    assert _figure(comparison, "Sink: Out", "busy").verdict == fg.HIGHER
    assert _figure(comparison, "Map", "backpressured").verdict == fg.WORSE
    assert comparison.verdict == "mixed"
    assert "back pressure appeared" in comparison.origin and "Sink: Out" in comparison.origin
    assert comparison.series["job:throughput"].before.size > 20  # both runs' windows, for the charts


@pytest.mark.parametrize("seed", [3, 5])
def test_pure_noise_is_no_measurable_change(spark, tmp_path, seed: int) -> None:  # type: ignore[no-untyped-def]
    run = dumps.Run(JOB, "job", dumps.chain(1500.0, 0.5), noise=0.1, checkpoints_s=[2.0] * 12)
    comparison = _compare(
        spark, dumps.write(run, tmp_path / "b", seed), dumps.write(run, tmp_path / "a", seed + 100)
    )
    assert not comparison.changed, comparison.headline
    assert comparison.verdict == fg.SAME and comparison.judged > 10


def test_a_dump_compared_with_itself(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    dump = dumps.write(
        dumps.Run(JOB, "job", dumps.chain(), checkpoints_s=[1.0, 1.2, 0.9, 1.1, 1.0]), tmp_path / "d", 7
    )
    comparison = _compare(spark, dump, dump)
    assert {c.verdict for c in comparison.all_changes()} <= {fg.SAME, fg.NOT_MEASURED}
    assert all(
        c.delta == pytest.approx(0.0, abs=1e-9) for c in comparison.all_changes() if c.delta is not None
    )
    assert comparison.headline.startswith("NO MEASURABLE CHANGE")


def test_a_rescaled_graph_is_matched_and_said(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    before = dumps.write(dumps.Run(JOB, "job", dumps.chain()), tmp_path / "b", 11)
    after = dumps.write(dumps.Run(JOB, "job", dumps.chain(parallelism={"Map": 4})), tmp_path / "a", 12)
    comparison = _compare(spark, before, after)
    mapped = next(v for v in comparison.vertices if v.name == "Map")
    assert mapped.matched_by == "id" and mapped.parallelism == (2, 4)
    assert any("rescaled from parallelism 2 to 4" in n for n in comparison.graph_notes)
    assert _figure(comparison, "Map", "throughput").verdict == fg.SAME


def test_missing_checkpoint_data(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    before = dumps.write(dumps.Run(JOB, "job", dumps.chain(), checkpoints_s=[1.0] * 10), tmp_path / "b", 13)
    after = dumps.write(dumps.Run(JOB, "job", dumps.chain()), tmp_path / "a", 14)
    comparison = _compare(spark, before, after)
    duration = _figure(comparison, None, "checkpoint_duration")
    assert duration.verdict == fg.NOT_MEASURED and duration.before == pytest.approx(1.0, rel=0.2)
    assert any("no checkpoint statistics for AFTER" in n for n in comparison.notes)


def test_two_different_jobs(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    before = dumps.write(dumps.Run(JOB, "job", dumps.chain()), tmp_path / "b", 15)
    other = [
        dumps.Vertex("d4" * 16, "Source: Kafka", 2, 10.0),
        dumps.Vertex("e5" * 16, "Window", 2, 10.0),
        dumps.Vertex("f6" * 16, "Sink: Out", 2, 10.0),
    ]
    after = dumps.write(dumps.Run("2d" * 16, "other", other), tmp_path / "a", 16)
    with pytest.raises(MetricsError) as info:
        _compare(spark, before, after)
    assert "different jobs" in info.value.one_line()
