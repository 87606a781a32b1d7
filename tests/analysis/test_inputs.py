"""Finding the metrics files of a dump (no Spark): files, folders, globs, side files left out."""

from __future__ import annotations

import pytest

from flinktune.analysis.job import parse_warmup
from flinktune.analysis.load import resolve_inputs
from flinktune.errors import MetricsError, UsageError

from .conftest import real_dump  # type: ignore[import-not-found]


def test_dump_folder_reads_the_parquet_only() -> None:
    (inp,) = resolve_inputs([str(real_dump("slow-sink"))])
    # plan.json, ground_truth.json, job-vertices.json, flink-config.yaml and the scrape stay out.
    assert inp.fmt == "parquet" and inp.paths == (str(real_dump("slow-sink")),)


def test_scrape_file_is_prometheus() -> None:
    (inp,) = resolve_inputs([str(real_dump("healthy") / "prometheus_sample.txt.gz")])
    assert inp.fmt == "prometheus"


def test_glob_and_mixed_formats(tmp_path) -> None:  # type: ignore[no-untyped-def]
    for name in ("a.csv", "b.csv", "c.jsonl", "plan.json", "notes.md"):
        (tmp_path / name).write_text("x\n")
    found = {i.fmt: len(i.paths) for i in resolve_inputs([str(tmp_path / "*")])}
    assert found == {"csv": 2, "json": 1}


@pytest.mark.parametrize(
    ("name", "message"),
    [("nope.parquet", "no such file"), ("*.nothing", "no file matches"), ("x.xlsx", "unknown dump format")],
)
def test_unusable_inputs(tmp_path, name: str, message: str) -> None:  # type: ignore[no-untyped-def]
    if name == "x.xlsx":
        (tmp_path / name).write_text("x")
    with pytest.raises(MetricsError) as info:
        resolve_inputs([str(tmp_path / name)])
    assert message in info.value.one_line()


def test_empty_folder(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(MetricsError, match="holds no metrics file"):
        resolve_inputs([str(tmp_path)])


def test_warmup_forms() -> None:
    assert parse_warmup("10%") == (0.10, None)
    assert parse_warmup("30s") == (0.0, 30_000)
    assert parse_warmup("0%") == (0.0, None)
    assert parse_warmup("0") == (0.0, 0)
    for bad in ("100%", "soon", "-5s"):
        with pytest.raises(UsageError):
            parse_warmup(bad)
    # A bare number: Flink's durations would read it as milliseconds, which nobody means here.
    for bare in ("20", "7.5"):
        with pytest.raises(UsageError, match=f"'{bare}' has no unit; write {bare}s or {bare}%"):
            parse_warmup(bare)
