"""Local CSV and JSON-lines dumps read as parquet: converted once by pyarrow, kept in a cache.

Spark parses text in the JVM one row at a time: at 1e7 rows a CSV dump took 72.6 s and a
JSON-lines dump 67.7 s, against 9-10 s for the same rows as parquet (benchmarks/results/analyze.md).
pyarrow's C++ readers parse the same text in a few seconds. So when a dump's text files are local
and Spark runs locally, each file is converted once, while the JVM starts, to a parquet file in the
cache folder, and the analysis reads that through the parquet path (time range from the footers,
metric names from the dictionaries). Remote files and cluster masters keep Spark's own readers:
executors may not see this machine's cache.

Same rows and values as Spark's readers (readers/csv.py, readers/jsonlines.py), or no conversion:

- the columns are those Spark's reader gets (csv_columns, json_fields): CSV columns are
  text, JSON types come from the first record;
- a CSV column of times, values or subtask indexes is stored as numbers when every value of the
  input set parses as one in pyarrow. pyarrow accepts fewer forms than Spark's casts (no blanks,
  no ``1.5d``), so a column holding any other form stays text and Spark casts it as before. Times
  only when every value is epoch milliseconds (>= 1e11 and below 2^53, where Spark's cast through
  a double is exact; smaller values are seconds to Spark);
- Spark splits text at line ends and never joins lines (a quoted line break splits a CSV row, a
  pretty-printed JSON record is several bad ones), where pyarrow would join them: each piece's
  rows are counted against its lines, and any difference leaves the input to Spark;
- whatever pyarrow refuses (a row with a missing or extra field, a JSON type that changes between
  records, bad UTF-8, a truncated gzip stream) leaves the input to Spark, whose PERMISSIVE readers
  and one-line errors stay as they were. The refusal is remembered for that file version.

The cache: ``text-dumps/`` in the cache folder (class_cache.cache_dir), one parquet file per text
file, named by a hash of its real path, size and modification time, the reading options and
pyarrow's major version, so a changed file is converted again. Written to a temporary name and
renamed; removed when interrupted (a killed process's leftovers at the next conversion). After each
conversion, files unused for UNUSED_S go, then the least recently used beyond MAX_BYTES.
``FLINKTUNE_TEXT_CACHE=0`` turns it off.

Over 500 lines: the pyarrow conversion must match Spark's CSV and JSON readers row for row; the
rules for that stay together.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import os
import re
import shutil
import threading
import time
import zlib
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from flinktune.analysis import load
from flinktune.analysis.readers import csv as csv_reader
from flinktune.analysis.readers import is_remote
from flinktune.analysis.readers import jsonlines as json_reader
from flinktune.errors import MetricsError
from flinktune.spark.class_cache import alive, cache_dir

if TYPE_CHECKING:
    import pyarrow as pa

SWITCH_ENV: Final[str] = "FLINKTUNE_TEXT_CACHE"
FOLDER: Final[str] = "text-dumps"
# Part of every file's key: bump it when the conversion changes what it writes.
FORMAT_VERSION: Final[int] = 1
# Text per parse call. pyarrow splits a piece into 1 MB blocks parsed on all cores; a piece is
# also one row group of the output (~300,000 CSV rows), and at most two are in memory at once.
PIECE_BYTES: Final[int] = 32 << 20
# A line longer than this (no line end in it) is not a metrics dump; Spark may have it.
MAX_LINE_BYTES: Final[int] = 256 << 20
UNUSED_S: Final[float] = 7 * 24 * 3600
MAX_BYTES: Final[int] = 4 << 30
# Spark's cast of a text time multiplies values below 1e11 by 1000 (seconds) and goes through a
# double, exact below 2^53: only times in between are stored as numbers.
MS_MIN: Final[int] = 100_000_000_000
MS_LIMIT: Final[int] = 1 << 53
# The parquet written is about 1/18 of a CSV dump and 1/32 of JSON lines (the benchmark's dumps);
# the driver's JIT mode depends on the bytes Spark scans (session.QUICK_JIT_MAX_INPUT_BYTES).
SHRINK: Final[Mapping[str, int]] = {"csv": 16, "json": 32}


class _Refused(Exception):
    """pyarrow's reading of this file would differ from Spark's: Spark reads the text."""


class _Retype(Exception):
    """A CSV column holds a value that is no number of its kind: that column stays text."""

    def __init__(self, column: str) -> None:
        super().__init__(column)
        self.column = column


class _Cancelled(Exception):
    """The run was interrupted (analyze() sets the event)."""


@dataclass(frozen=True)
class _Spec:
    """How Spark reads an input set's text; the same for each of its files."""

    fmt: str  # csv | json
    columns: tuple[tuple[str, str], ...]  # (name, Spark type) as Spark's reader gets them
    sep: str = ","
    # CSV columns tried as numbers, with their kind: ts | value | subtask.
    numeric: tuple[tuple[str, str], ...] = ()


def enabled() -> bool:
    return os.environ.get(SWITCH_ENV, "1").strip().lower() not in ("0", "off", "false", "no")


def folder() -> Path:
    return cache_dir() / FOLDER


def applies(inp: load.InputSet) -> bool:
    """Text files on local disk, named by plain paths."""
    return inp.fmt in ("csv", "json") and all(
        not is_remote(p) and not p.startswith("file:") and os.path.isfile(p) for p in inp.paths
    )


def estimated_scan_bytes(inp: load.InputSet) -> int | None:
    """About the bytes Spark will scan for a text input read as parquet (None when unknown)."""
    try:
        total = 0
        for p in inp.paths:
            size = os.path.getsize(p)
            total += size // 2 if p.lower().endswith(".gz") else size // SHRINK[inp.fmt]
        return total
    except (OSError, KeyError):
        return None


def convert_input(inp: load.InputSet, cancel: threading.Event | None = None) -> tuple[str, ...] | None:
    """Parquet files standing in for the input set's text files (converted now or on an earlier
    run), or None when Spark must read the text itself. Raises nothing but an interruption."""
    if not (enabled() and applies(inp)):
        return None
    try:
        spec = _spec(inp)
    except MetricsError:
        return None  # Spark's reader raises the same error
    directory = folder()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    # CSV columns stored as text in one file are text in all of them: Spark reads the files as one
    # parquet input, which needs one schema.
    text: frozenset[str] = frozenset()
    for _ in range(len(spec.numeric) + 1):
        out: list[str] = []
        found: set[str] = set()
        for path in inp.paths:
            got = _converted(path, spec, text, directory, cancel)
            if got is None:
                return None
            out.append(got[0])
            found |= got[1]
        if found <= text:
            return tuple(out)
        text = text | found
    return None


def _spec(inp: load.InputSet) -> _Spec:
    if inp.fmt == "csv":
        cols, sep = csv_reader.csv_columns(inp.paths)
        numeric = []
        for kind, canonical in (("ts", "ts"), ("value", "value"), ("subtask", "subtask_index")):
            name = load.find_column(cols, canonical)
            if name is not None:
                numeric.append((name, kind))
        return _Spec("csv", tuple((c, "string") for c in cols), sep, tuple(numeric))
    return _Spec("json", tuple(json_reader.json_fields(inp.paths)))


def _key(path: str, st: os.stat_result, spec: _Spec, text: frozenset[str]) -> str:
    import pyarrow as pa

    h = hashlib.sha256()
    parts = (FORMAT_VERSION, pa.__version__.split(".")[0], path, st.st_size, st.st_mtime_ns, repr(spec),
             sorted(text))
    h.update(repr(parts).encode())
    return h.hexdigest()[:32]


def _converted(
    path: str, spec: _Spec, text: frozenset[str], directory: Path, cancel: threading.Event | None
) -> tuple[str, set[str]] | None:
    """(parquet file, its CSV columns stored as text) for one text file, or None."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return None
    key = _key(real, st, spec, text)
    target = directory / f"{key}.parquet"
    refused = directory / f"{key}.spark"
    if refused.exists():
        _touch(refused)
        return None
    if target.is_file():
        try:
            schema = pq.read_schema(target)
        except Exception:  # damaged (disk trouble): convert again
            target.unlink(missing_ok=True)
        else:
            _touch(target)
            return str(target), _text_columns(schema, spec)
    try:
        if shutil.disk_usage(directory).free < st.st_size // 4 + (256 << 20):
            return None
    except OSError:
        return None
    tmp = directory / f"{key}.parquet.{os.getpid()}.tmp"
    retyped = set(text)
    try:
        for _ in range(len(spec.numeric) + 1):
            try:
                _write(real, spec, frozenset(retyped), tmp, cancel)
                break
            except _Retype as again:
                retyped.add(again.column)
        else:
            return None
        now = os.stat(real)
        if (now.st_size, now.st_mtime_ns) != (st.st_size, st.st_mtime_ns):
            return None  # changed while read: Spark reads what is there now
        os.replace(tmp, target)
    except _Cancelled:
        return None
    except (_Refused, gzip.BadGzipFile, zlib.error, EOFError, UnicodeDecodeError):
        _remember_refusal(refused)
        return None
    except OSError:  # disk full, permissions (pyarrow's ArrowIOError too): no conversion this time
        return None
    except pa.ArrowException:  # a parse error: the file's content decides it
        _remember_refusal(refused)
        return None
    except Exception:  # the cache is an optimisation: Spark's reader still reads the file
        return None
    finally:
        tmp.unlink(missing_ok=True)
    prune(directory, keep={target})
    return str(target), {name for name, _ in spec.numeric if name in retyped}


def _remember_refusal(marker: Path) -> None:
    """For this version of the file, Spark reads the text (no second attempt on every run)."""
    with contextlib.suppress(OSError):
        marker.touch()


def _text_columns(schema: pa.Schema, spec: _Spec) -> set[str]:
    import pyarrow as pa

    return {name for name, _ in spec.numeric if pa.types.is_string(schema.field(name).type)}


def _touch(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.utime(path)  # last use, for prune()


def _arrow_types(spec: _Spec, text: frozenset[str]) -> pa.Schema:
    import pyarrow as pa

    base = {"string": pa.string(), "bigint": pa.int64(), "double": pa.float64()}
    as_number = {"ts": pa.int64(), "value": pa.float64(), "subtask": pa.int32()}
    numeric = dict(spec.numeric)
    return pa.schema(
        [
            (name, as_number[numeric[name]] if name in numeric and name not in text else base[typ])
            for name, typ in spec.columns
        ]
    )


def _write(path: str, spec: _Spec, text: frozenset[str], tmp: Path, cancel: threading.Event | None) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _arrow_types(spec, text)
    numbers = {name: kind for name, kind in spec.numeric if name not in text}
    # Statistics of the number columns only: the time range and the subtask bound come from them
    # (readers/parquet.py check_parquet, prescan.py); text statistics cost a comparison per value.
    stats = [f.name for f in schema if not pa.types.is_string(f.type)]
    with (
        pq.ParquetWriter(tmp, schema, compression="snappy", write_statistics=stats) as writer,
        ThreadPoolExecutor(max_workers=1) as io,
    ):
        # The write of one piece overlaps the parse of the next (both release the GIL).
        pending: Future[None] | None = None
        for index, piece in enumerate(_pieces(path)):
            if cancel is not None and cancel.is_set():
                raise _Cancelled()
            if spec.fmt == "csv" and index == 0:
                piece = _without_header(piece)
            if piece.size == 0:
                continue
            if spec.fmt == "csv":
                _check_quotes(piece, spec.sep)
            table = _parse(piece, spec, schema)
            _check_lines(piece, table.num_rows)
            table = _typed(table, numbers, schema)
            if pending is not None:
                pending.result()
            pending = io.submit(writer.write_table, table)
        if pending is not None:
            pending.result()


def _pieces(path: str) -> Iterator[pa.Buffer]:
    """The file's bytes in pieces of about PIECE_BYTES that end at a line end (the last piece at
    the end of the file)."""
    import pyarrow as pa

    if path.lower().endswith(".gz"):
        yield from _gzip_pieces(path)
        return
    with pa.OSFile(path) as fh:
        size = fh.size()
        pos = 0
        while pos < size:
            want = min(PIECE_BYTES, size - pos)
            while True:
                fh.seek(pos)
                buf = fh.read_buffer(want)
                if pos + buf.size >= size:
                    break
                cut = _last_line_end(buf)
                if cut > 0:
                    buf = buf.slice(0, cut)
                    break
                if want >= MAX_LINE_BYTES:
                    raise _Refused("line too long")
                want = min(2 * want, size - pos)
            if buf.size == 0:
                return
            yield buf
            pos += buf.size


def _gzip_pieces(path: str) -> Iterator[pa.Buffer]:
    import pyarrow as pa

    with gzip.open(path, "rb") as fh:
        tail = b""
        while True:
            block = fh.read(PIECE_BYTES)
            if not block:
                if tail:
                    yield pa.py_buffer(tail)
                return
            data = tail + block
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                if len(data) > MAX_LINE_BYTES:
                    raise _Refused("line too long")
                tail = data
                continue
            yield pa.py_buffer(memoryview(data)[:cut])
            tail = data[cut:]


def _last_line_end(buf: pa.Buffer) -> int:
    """Offset just after the last b'\\n' in the buffer, 0 when there is none."""
    import numpy as np

    data = np.frombuffer(buf, dtype=np.uint8)
    hi = len(data)
    while hi > 0:
        lo = max(0, hi - (1 << 20))
        hits = np.flatnonzero(data[lo:hi] == 10)
        if hits.size:
            return lo + int(hits[-1]) + 1
        hi = lo
    return 0


def _without_header(piece: pa.Buffer) -> pa.Buffer:
    """The first piece of a CSV file without its first line: Spark's reader drops each file's first
    line as the header. A file starting with a blank line, or whose lines end in a bare carriage
    return, is left to Spark (its header is then found differently)."""
    head = piece.slice(0, min(piece.size, 1 << 20)).to_pybytes()
    end = head.find(b"\n")
    if end < 0 and piece.size > len(head):
        raise _Refused("header line too long")
    line = head if end < 0 else head[:end]  # no line end: the file is its header
    if not line.strip() or b"\r" in line.rstrip(b"\r"):
        raise _Refused("header not on the first line")
    return piece.slice(piece.size if end < 0 else end + 1)


def _parse(piece: pa.Buffer, spec: _Spec, schema: pa.Schema) -> pa.Table:
    import pyarrow as pa

    names = [name for name, _ in spec.columns]
    if spec.fmt == "csv":
        import pyarrow.csv as pacsv

        # Spark's CSV options (readers/csv.py): '"' quotes, a doubled '"' inside quotes is one,
        # no backslash escape; empty fields, quoted or not, are null; lines are never joined.
        return pacsv.read_csv(
            pa.BufferReader(piece),
            read_options=pacsv.ReadOptions(column_names=names, use_threads=True),
            parse_options=pacsv.ParseOptions(
                delimiter=spec.sep,
                quote_char='"',
                double_quote=True,
                escape_char=False,
                newlines_in_values=False,
                ignore_empty_lines=True,
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={name: pa.string() for name in names},
                null_values=[""],
                strings_can_be_null=True,
                quoted_strings_can_be_null=True,
            ),
        )
    import pyarrow.json as pajson

    table = pajson.read_json(
        pa.BufferReader(piece),
        read_options=pajson.ReadOptions(use_threads=True),
        parse_options=pajson.ParseOptions(
            explicit_schema=schema, unexpected_field_behavior="ignore", newlines_in_values=False
        ),
    )
    return table.select(names)


def _check_lines(piece: pa.Buffer, rows: int) -> None:
    """Spark makes one record of each line that is not blank; refuse when pyarrow did otherwise."""
    import numpy as np

    data = np.frombuffer(piece, dtype=np.uint8)
    lines = int(np.count_nonzero(data == 10)) + (1 if len(data) and data[-1] != 10 else 0)
    if rows == lines:
        return
    # Blank lines (no record on either side) or bare carriage returns (a line end to both).
    seen = sum(1 for line in piece.to_pybytes().splitlines() if line.strip())
    if rows != seen:
        raise _Refused("lines joined or split")


def _check_quotes(piece: pa.Buffer, sep: str) -> None:
    """Quoted fields as CSV writers make them (RFC 4180) read the same in both readers; text after
    a field's closing quote does not (``"a"b``: Spark keeps it all, pyarrow drops the quotes)."""
    import numpy as np

    data = np.frombuffer(piece, dtype=np.uint8)
    quotes = np.flatnonzero(data == ord('"'))
    if quotes.size == 0:
        return
    # Only a quote followed by text, and not opening a field, can close a field too early: look
    # at the lines holding one (a doubled quote inside a field, or a quote inside an unquoted
    # field, is such a quote too; the exact pattern tells them apart).
    after = data[np.minimum(quotes + 1, len(data) - 1)]
    before = data[np.maximum(quotes - 1, 0)]
    ends = [ord(sep), ord('"'), ord("\r"), ord("\n")]
    followed = (quotes + 1 < len(data)) & ~np.isin(after, ends)
    opening = (quotes == 0) | np.isin(before, [ord(sep), ord("\r"), ord("\n")])
    suspects = quotes[followed & ~opening]
    if suspects.size == 0:
        return
    text = piece.to_pybytes()
    pattern = _after_quote(sep)
    for pos in np.unique(suspects)[:1000].tolist():
        start = text.rfind(b"\n", 0, pos) + 1
        end = text.find(b"\n", pos)
        if pattern.search(text, start, len(text) if end < 0 else end):
            raise _Refused("text after a closing quote")
    if suspects.size > 1000 and pattern.search(text):
        raise _Refused("text after a closing quote")


@functools.cache
def _after_quote(sep: str) -> re.Pattern[bytes]:
    d = re.escape(sep.encode())
    # A field that starts with a quote (at a line start or after the separator), runs to a closing
    # quote (a doubled quote is one inside), and goes on with something else than a field or
    # line end. A quote inside an unquoted field is text to both. (Possessive: a doubled quote is
    # never taken apart to find a shorter field.)
    return re.compile(rb'(?:^|' + d + rb')"(?:[^"\r\n]|"")*+"(?=[^' + d + rb'\r\n])', re.MULTILINE)


def _typed(table: pa.Table, numbers: Mapping[str, str], schema: pa.Schema) -> pa.Table:
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = []
    for field in schema:
        column = table.column(field.name)
        if field.name in numbers:
            try:
                column = pc.cast(column, field.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                raise _Retype(field.name) from None
            if numbers[field.name] == "ts":
                lo, hi = pc.min_max(column).values()
                if lo.is_valid and (lo.as_py() < MS_MIN or hi.as_py() >= MS_LIMIT):
                    raise _Retype(field.name)
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema)


def prune(directory: Path, keep: set[Path], now: float | None = None) -> None:
    """Remove converted files unused for UNUSED_S, then the least recently used beyond MAX_BYTES,
    and temporary files of processes that are gone. Never raises."""
    now = time.time() if now is None else now
    kept: list[tuple[float, int, Path]] = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return
    for entry in entries:
        try:
            st = entry.stat()
        except OSError:
            continue
        name = entry.name
        if name.endswith(".tmp"):
            pid = name.rsplit(".", 2)[-2]
            if not pid.isdigit() or not alive(int(pid)):
                entry.unlink(missing_ok=True)
        elif name.endswith((".parquet", ".spark")):
            if entry not in keep and now - st.st_mtime > UNUSED_S:
                entry.unlink(missing_ok=True)
            else:
                kept.append((st.st_mtime, st.st_size, entry))
    total = sum(size for _, size, _ in kept)
    for _, size, entry in sorted(kept):
        if total <= MAX_BYTES:
            break
        if entry in keep:
            continue
        entry.unlink(missing_ok=True)
        total -= size


def convert_inputs(
    inputs: Sequence[load.InputSet], cancel: threading.Event | None = None
) -> dict[load.InputSet, tuple[str, ...]]:
    """convert_input for every input set that has a stand-in."""
    out: dict[load.InputSet, tuple[str, ...]] = {}
    for inp in inputs:
        paths = convert_input(inp, cancel)
        if paths is not None:
            out[inp] = paths
    return out
