"""Write the canonical long-format dump as collection goes, so an interruption loses one poll at most.

Each poll becomes one complete parquet file under ``<out>/metrics.parts/`` (written to a temporary
name, then renamed), so even a process killed with SIGKILL leaves a folder every parquet reader
(and ``flinktune analyze``) reads. When collection ends, normally or by Ctrl-C / SIGTERM, the parts
are merged into ``<out>/metrics.parquet`` (atomically) and the folder is removed.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flinktune.errors import WriteError

METRICS_FILE = "metrics.parquet"
PARTS_DIR = "metrics.parts"
PLAN_FILE = "plan.json"
JOB_FILE = "job.json"

# DESIGN.md "Metrics dump": canonical columns, in order.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("ts", "int64"),
    ("job_id", "string"),
    ("job_name", "string"),
    ("vertex_id", "string"),
    ("task_name", "string"),
    ("subtask_index", "int32"),
    ("tm_id", "string"),
    ("host", "string"),
    ("metric", "string"),
    ("value", "float64"),
)
_MERGED_ROW_GROUP_ROWS = 262_144


def arrow_schema() -> Any:
    import pyarrow as pa

    types = {"int64": pa.int64(), "int32": pa.int32(), "string": pa.string(), "float64": pa.float64()}
    return pa.schema([(name, types[kind]) for name, kind in COLUMNS])


@dataclass
class Row:
    ts: int
    job_id: str
    job_name: str
    vertex_id: str
    task_name: str
    subtask_index: int
    tm_id: str | None
    host: str | None
    metric: str
    value: float


def _publish(tmp: Path | str, final: Path) -> None:
    """Rename into place with the mode a plain open() would give (mkstemp makes files 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    os.replace(tmp, final)


def write_json_atomic(path: Path, document: Any, *, backup: bool = True) -> None:
    """Write JSON through a temporary file and a rename, keeping a ``.bak`` of what was there
    (``backup=False``: a file rewritten as it grows, whose earlier state is not worth keeping)."""
    text = json.dumps(document, indent=1, sort_keys=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        if backup and path.exists():
            shutil.copy2(path, path.with_name(path.name + ".bak"))
        _publish(tmp, path)
    except OSError as error:
        Path(tmp).unlink(missing_ok=True)
        raise WriteError(f"cannot write {path}: {error.strerror or error}") from None


@dataclass
class DumpWriter:
    """Appends one parquet part per poll; `finish()` merges them into ``metrics.parquet``."""

    out_dir: Path
    parts: list[Path] = field(default_factory=list)
    rows_written: int = 0

    @property
    def parts_dir(self) -> Path:
        return self.out_dir / PARTS_DIR

    @property
    def metrics_path(self) -> Path:
        return self.out_dir / METRICS_FILE

    def start(self, *, overwrite: bool) -> None:
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise WriteError(f"cannot create {self.out_dir}: {error.strerror or error}") from None
        leftovers = [p for p in (self.metrics_path, self.parts_dir) if p.exists()]
        if leftovers and not overwrite:
            raise WriteError(
                f"{leftovers[0]} already exists: choose another -o folder or pass --overwrite "
                "(the old dump is kept as .bak)"
            )
        if self.parts_dir.exists():
            shutil.rmtree(self.parts_dir)
        self.parts_dir.mkdir()

    def append(self, rows: list[Row]) -> None:
        if not rows:
            return
        self.append_columns({name: [getattr(r, name) for r in rows] for name, _ in COLUMNS})

    def append_columns(self, columns: dict[str, list[Any]]) -> None:
        """One part from column lists (the canonical columns, equal lengths); nothing for no rows."""
        rows = len(columns["ts"])
        if not rows:
            return
        import pyarrow as pa

        table = pa.Table.from_pydict({name: columns[name] for name, _ in COLUMNS}, schema=arrow_schema())
        self.append_table(table)

    def append_table(self, table: Any) -> None:
        """One part from a pyarrow table with the canonical columns; nothing for no rows."""
        rows = table.num_rows
        if not rows:
            return
        import pyarrow.parquet as pq

        table = table.cast(arrow_schema())
        final = self.parts_dir / f"part-{len(self.parts):06d}.parquet"
        tmp = final.with_name("." + final.name + ".tmp")
        try:
            pq.write_table(table, tmp)
            os.replace(tmp, final)
        except OSError as error:
            tmp.unlink(missing_ok=True)
            raise WriteError(f"cannot write {final}: {error.strerror or error}") from None
        self.parts.append(final)
        self.rows_written += rows

    def finish(self) -> Path | None:
        """Merge the parts into ``metrics.parquet`` (atomic, old file kept as .bak); None if no rows."""
        if not self.parts:
            if self.parts_dir.exists():
                shutil.rmtree(self.parts_dir, ignore_errors=True)
            return None
        import pyarrow.parquet as pq

        fd, tmp_name = tempfile.mkstemp(prefix=".metrics.", suffix=".parquet.tmp", dir=self.out_dir)
        os.close(fd)
        tmp = Path(tmp_name)
        try:
            with pq.ParquetWriter(tmp, arrow_schema()) as writer:
                pending = []
                pending_rows = 0
                for part in self.parts:
                    table = pq.read_table(part, schema=arrow_schema())
                    pending.append(table)
                    pending_rows += table.num_rows
                    if pending_rows >= _MERGED_ROW_GROUP_ROWS:
                        writer.write_table(_concat(pending), row_group_size=_MERGED_ROW_GROUP_ROWS)
                        pending, pending_rows = [], 0
                if pending:
                    writer.write_table(_concat(pending), row_group_size=_MERGED_ROW_GROUP_ROWS)
            if self.metrics_path.exists():
                os.replace(self.metrics_path, self.metrics_path.with_name(METRICS_FILE + ".bak"))
            _publish(tmp, self.metrics_path)
        except OSError as error:
            tmp.unlink(missing_ok=True)
            raise WriteError(
                f"cannot write {self.metrics_path}: {error.strerror or error}; "
                f"the polls are kept in {self.parts_dir}"
            ) from None
        shutil.rmtree(self.parts_dir, ignore_errors=True)
        return self.metrics_path


def _concat(tables: list[Any]) -> Any:
    import pyarrow as pa

    return pa.concat_tables(tables)
