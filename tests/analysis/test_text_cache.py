"""Local CSV and JSON-lines dumps read through pyarrow and a parquet cache (analysis/text_cache.py)
give what Spark's own text readers give, or are left to them: the same report on the shipped dumps,
the same canonical rows on awkward files, reuse and invalidation of the cache, and no conversion
(Spark's reader and its errors) for files pyarrow would read differently."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from flinktune.analysis import AnalysisOptions, analyze, load, text_cache
from flinktune.analysis.job import prepare_inputs
from flinktune.analysis.render import render_json, render_markdown
from flinktune.errors import MetricsError

from .conftest import real_dump, rounded  # type: ignore[import-not-found]

T0 = 1_790_000_000_000
HEADER = "ts,job_id,task_name,subtask_index,metric,value\n"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "text-dumps"
    monkeypatch.setattr(text_cache, "folder", lambda: folder)
    monkeypatch.setenv(text_cache.SWITCH_ENV, "1")
    return folder


def _rows(n: int = 4) -> str:
    return "".join(f"{T0 + i * 1000},j,Sink,{i % 2},busyTimeMsPerSecond,{100 + i}\n" for i in range(n))


def _jsonl(records: list[dict[str, object]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def _record(i: int, **extra: object) -> dict[str, object]:
    return {"ts": T0 + i, "task_name": "Sink", "subtask_index": 0, "metric": "busyTimeMsPerSecond",
            "value": 1.5 + i} | extra


def _input(path: Path) -> load.InputSet:
    (inp,) = load.resolve_inputs([str(path)])
    return inp


# --- the same report as Spark's text readers on the shipped dumps -----------------------------


def _write_text(table: pa.Table, folder: Path, fmt: str) -> Path:
    folder.mkdir()
    if fmt == "csv":
        pacsv.write_csv(table, folder / "metrics.csv")
    elif fmt == "csv.gz":
        with gzip.open(folder / "metrics.csv.gz", "wb") as fh:
            pacsv.write_csv(table, fh)
    else:
        with open(folder / "metrics.jsonl", "w") as fh:
            for row in table.to_pylist():
                fh.write(json.dumps(row) + "\n")
    return folder


def _report(spark, folder: Path) -> tuple[str, object]:  # type: ignore[no-untyped-def]
    result = analyze(AnalysisOptions(inputs=(str(folder),)), session=spark)
    return render_markdown(result), rounded(json.loads(render_json(result)))


@pytest.mark.spark
@pytest.mark.parametrize(
    ("name", "fmt"),
    [("slow-sink", "csv"), ("slow-sink", "jsonl"), ("slow-sink", "csv.gz"),
     ("healthy", "csv"), ("healthy", "jsonl")],
)
def test_converted_dump_gives_the_report_of_spark_text_reader(  # type: ignore[no-untyped-def]
    spark, cache, tmp_path, monkeypatch, name: str, fmt: str
) -> None:
    source = real_dump(name)
    folder = _write_text(pq.read_table(source / "metrics.parquet"), tmp_path / "dump", fmt)
    shutil.copy(source / "plan.json", folder / "plan.json")
    monkeypatch.setenv(text_cache.SWITCH_ENV, "0")
    spark_text = _report(spark, folder)
    assert not cache.exists()
    monkeypatch.setenv(text_cache.SWITCH_ENV, "1")
    converted = _report(spark, folder)
    assert len(list(cache.glob("*.parquet"))) == 1 and not list(cache.glob("*.spark"))
    assert converted == spark_text
    # The second run reads the cached file.
    before = {p: p.stat().st_ino for p in cache.iterdir()}
    assert _report(spark, folder) == spark_text
    assert {p: p.stat().st_ino for p in cache.iterdir()} == before


# --- the same canonical rows on awkward files, or no conversion -------------------------------

BUSY = "busyTimeMsPerSecond"


def _csv(*lines: str) -> str:
    return HEADER + "".join(line + "\n" for line in lines)


def _values(*values: str) -> str:
    return _csv(*(f"{T0 + i},j,Sink,0,{BUSY},{v}" for i, v in enumerate(values)))


CASES: dict[str, tuple[str | bytes, bool]] = {
    # name: (content, converted)
    "plain.csv": (HEADER + _rows(), True),
    "quoted.csv": (_csv(f'{T0},"j,1","Sink ""A""",0,{BUSY},5', f'{T0},j,"",1,"{BUSY}",6'), True),
    "quote-inside.csv": (_csv(f'{T0},j, "Si"nk,0,{BUSY},5', f'{T0},j,a""b,1,{BUSY},6'), True),
    "crlf.csv": ((HEADER + _rows()).replace("\n", "\r\n"), True),
    "blank-lines.csv": (HEADER + "\n" + _rows(2) + "\n\n" + _rows(2), True),
    "no-final-newline.csv": ((HEADER + _rows()).rstrip("\n"), True),
    "tabs.tsv": ((HEADER + _rows()).replace(",", "\t"), True),
    # Numbers pyarrow does not read as Spark does stay text: seconds, ISO times, ' 5', '1.5d', '+2'.
    "seconds.csv": (_csv(f"{T0 // 1000},j,Sink,0,{BUSY},5", f"{T0 // 1000 + 1}.5,j,Sink,0,{BUSY},6"), True),
    "iso-time.csv": (_csv(f"2026-09-21T10:00:00Z,j,Sink,0,{BUSY},5"), True),
    "value-forms.csv": (_values(" 5", "1.5d", "NaN", "inf", "-3", "1e3", ".5", "+7"), True),
    "number-forms.csv": (_values("5", "1e3", ".5", "5.", "NaN", "inf", "-3", "007"), True),
    "subtask-forms.csv": (_csv(*(f"{T0},j,Sink,{sub},{BUSY},5" for sub in ("0.0", " 1", "+2"))), True),
    "lines.jsonl": (_jsonl([_record(i) for i in range(4)]), True),
    "mixed.jsonl": (_jsonl([_record(0), _record(1, value=2, extra=[1])]) + "\n  \n"
                    + _jsonl([{"value": None, "ts": T0 + 2, "task_name": "Sink", "metric": "x"}]), True),
    "nan.jsonl": (_jsonl([_record(0)]) + '{"ts": 1790000000001, "task_name": "Sink", "value": NaN}\n', True),
    # Left to Spark: pyarrow would read these otherwise, or not at all.
    "text-after-quote.csv": (_csv(f'{T0},j,"Si"nk,0,{BUSY},5'), False),
    "quoted-newline.csv": (_csv(f'{T0},j,"Si\nnk",0,{BUSY},5') + _rows(2), False),
    "short-row.csv": (HEADER + _rows(2) + f"{T0},j,Sink\n", False),
    "long-row.csv": (HEADER + _rows(2) + f"{T0},j,Sink,0,{BUSY},5,extra\n", False),
    "blank-only-line.csv": (HEADER + _rows(2) + "   \n" + _rows(2), False),
    "bare-cr.csv": ((HEADER + _rows()).replace("\n", "\r"), False),
    "bad-utf8.csv": ((HEADER + _rows(2)).encode() + f"{T0},j,S\xffnk,0,{BUSY},5\n".encode("latin-1"), False),
    "two-per-line.jsonl": (_jsonl([_record(0)]) + json.dumps(_record(1)) + _jsonl([_record(2)]), False),
    "pretty.jsonl": (_jsonl([_record(0)]) + json.dumps(_record(1), indent=1) + "\n", False),
    "type-change.jsonl": (_jsonl([_record(0), _record(1, task_name=7)]), False),
    "value-as-text.jsonl": (_jsonl([_record(0), _record(1, value="NaN")]), False),
    "float-time.jsonl": (_jsonl([_record(0), _record(1, ts=T0 + 1.5)]), False),
}


def _canonical_rows(spark, inp: load.InputSet, converted) -> object:  # type: ignore[no-untyped-def]
    try:
        df = load.load_canonical(spark, [inp], load.Filters(), converted=converted)
        return sorted((tuple(sorted(r.asDict().items())) for r in df.collect()), key=repr)
    except MetricsError as error:
        return error.one_line()


@pytest.mark.spark
@pytest.mark.parametrize("name", list(CASES))
def test_converted_rows_are_spark_rows_or_spark_reads(spark, cache, tmp_path, name: str) -> None:  # type: ignore[no-untyped-def]
    content, expect_converted = CASES[name]
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    inp = _input(path)
    stand_in = text_cache.convert_input(inp)
    assert (stand_in is not None) == expect_converted
    spark_rows = _canonical_rows(spark, inp, None)
    if stand_in is None:
        # Remembered for this version of the file (unless the header already failed, where
        # Spark's reader raises the same error).
        assert list(cache.glob("*.spark")) or isinstance(spark_rows, str) or name == "bare-cr.csv"
        return
    assert _canonical_rows(spark, inp, {inp: stand_in}) == spark_rows


@pytest.mark.spark
def test_several_csv_files_share_one_schema(spark, cache, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Spark names the columns of every file by the first file's header, by position; a file of
    # seconds makes the time column text in all of them (one parquet schema).
    (tmp_path / "a.csv").write_text(HEADER + _rows())
    (tmp_path / "b.csv").write_text(_csv(f"{T0 // 1000 + 9},j,Sink,0,{BUSY},7").replace("ts,", "time,"))
    (inp,) = load.resolve_inputs([str(tmp_path / "*.csv")])
    stand_in = text_cache.convert_input(inp)
    assert stand_in is not None and len(stand_in) == 2
    schemas = [pq.read_schema(p) for p in stand_in]
    assert schemas[0] == schemas[1] and schemas[0].field("ts").type == pa.string()
    assert _canonical_rows(spark, inp, {inp: stand_in}) == _canonical_rows(spark, inp, None)


# --- corrupt and partial files -------------------------------------------------------------------


@pytest.mark.spark
def test_truncated_files_are_left_to_spark(spark, cache, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    table = pq.read_table(real_dump("slow-sink") / "metrics.parquet")
    text = _write_text(table, tmp_path / "csv", "csv") / "metrics.csv"
    shutil.copy(real_dump("slow-sink") / "plan.json", text.parent)
    data = text.read_bytes()
    text.write_bytes(data[: len(data) - 40])  # a writer stopped mid-row
    assert text_cache.convert_input(_input(text.parent)) is None
    assert len(list(cache.glob("*.spark"))) == 1
    monkeypatch.setenv(text_cache.SWITCH_ENV, "0")
    without = _report(spark, text.parent)
    monkeypatch.setenv(text_cache.SWITCH_ENV, "1")
    assert _report(spark, text.parent) == without
    # A truncated gzip stream: the same one-line error either way.
    gz = tmp_path / "cut.csv.gz"
    whole = gzip.compress(data)
    gz.write_bytes(whole[: len(whole) // 2])
    errors = []
    for switch in ("0", "1"):
        monkeypatch.setenv(text_cache.SWITCH_ENV, switch)
        with pytest.raises(MetricsError) as info:
            analyze(AnalysisOptions(inputs=(str(gz),)), session=spark)
        errors.append(info.value.one_line())
    assert errors[0] == errors[1] and "\n" not in errors[0]


# --- the cache ----------------------------------------------------------------------------------


def test_cache_is_reused_and_follows_changes(cache, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "m.csv"
    path.write_text(HEADER + _rows(4))
    (first,) = text_cache.convert_input(_input(path)) or ()
    stamp = os.stat(first).st_ino, os.stat(first).st_size
    again = text_cache.convert_input(_input(path))
    assert again == (first,) and (os.stat(first).st_ino, os.stat(first).st_size) == stamp
    # More rows (a new size and time): a new file with them.
    path.write_text(HEADER + _rows(9))
    (changed,) = text_cache.convert_input(_input(path)) or ()
    assert changed != first and pq.read_metadata(changed).num_rows == 9
    # Only the time changed: converted again too (the key holds the modification time).
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 5_000_000_000))
    (touched,) = text_cache.convert_input(_input(path)) or ()
    assert touched not in (first, changed)
    assert not list(cache.glob("*.tmp"))


def test_prune_removes_unused_and_over_budget_files(cache, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    cache.mkdir(parents=True)
    now = time.time()
    files = {}
    for name, age_days in (("old", 30), ("a", 3), ("b", 2), ("c", 1)):
        f = cache / f"{name}.parquet"
        f.write_bytes(b"x" * 100)
        os.utime(f, (now - age_days * 86400, now - age_days * 86400))
        files[name] = f
    marker = cache / "gone.spark"
    marker.touch()
    os.utime(marker, (now - 30 * 86400, now - 30 * 86400))
    dead = cache / "k.parquet.999999999.tmp"
    dead.write_bytes(b"x")
    mine = cache / f"k.parquet.{os.getpid()}.tmp"
    mine.write_bytes(b"x")
    monkeypatch.setattr(text_cache, "MAX_BYTES", 250)
    text_cache.prune(cache, keep={files["a"]}, now=now)
    # Unused for a month: gone; over the budget: the least recently used first, never the one kept.
    assert sorted(p.name for p in cache.iterdir()) == ["a.parquet", "c.parquet", mine.name]


def test_interruption_leaves_no_temporary_file(cache, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "m.csv"
    path.write_text(HEADER + _rows(2000))
    monkeypatch.setattr(text_cache, "PIECE_BYTES", 4096)
    cancel = threading.Event()
    cancel.set()
    assert text_cache.convert_input(_input(path), cancel) is None
    assert not any(cache.iterdir())
    calls = []
    real_parse = text_cache._parse

    def parse_then_interrupt(*args):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_parse(*args)

    monkeypatch.setattr(text_cache, "_parse", parse_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        text_cache.convert_input(_input(path))
    assert not any(cache.iterdir())


def test_small_pieces_give_the_same_file(cache, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Pieces end at line ends, wherever the piece size falls; a line longer than a piece is whole.
    path = tmp_path / "m.csv"
    long_name = "L" * 5000
    path.write_text(HEADER + _rows(300) + f"{T0},j,{long_name},0,busyTimeMsPerSecond,1\n" + _rows(300))
    (whole,) = text_cache.convert_input(_input(path)) or ()
    expected = pq.read_table(whole)
    shutil.rmtree(cache)
    monkeypatch.setattr(text_cache, "PIECE_BYTES", 1000)
    (pieces,) = text_cache.convert_input(_input(path)) or ()
    got = pq.read_table(pieces)
    assert got.equals(expected) and got.num_rows == 601
    assert pq.read_metadata(pieces).num_row_groups > 10


def test_remote_inputs_and_clusters_keep_spark_readers(cache, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "m.csv"
    path.write_text(HEADER + _rows())
    inputs = load.resolve_inputs([str(path)])
    assert prepare_inputs(inputs, local=False).converted == {}
    assert prepare_inputs(inputs, local=True).converted.keys() == set(inputs)
    assert not text_cache.applies(load.InputSet("csv", ("s3a://bucket/m.csv",)))


def test_switch_off(cache, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "m.csv"
    path.write_text(HEADER + _rows())
    monkeypatch.setenv(text_cache.SWITCH_ENV, "0")
    assert text_cache.convert_input(_input(path)) is None and not cache.exists()
