"""Every accepted naming scheme and table shape gives the same findings as the canonical form.

The real slow-sink dump (REST ids, e.g. ``Shuffle.Netty.Output.Buffers.outPoolUsage``, legacy
``buffers.*`` copies and operator-scoped ``Parse.numRecordsIn``) is rewritten into each shape:
canonical short names (parquet, CSV, JSON lines), full Flink metric identifiers
(``<host>.taskmanager.<tm_id>.<job>.<task>.<subtask>.<group>.<metric>``, flink-facts.md §4.1),
Prometheus names with labels inline and as columns (flink-facts.md §4.3: ``flink_`` + logical scope +
metric, label values char-filtered), and a wide table with one column per metric.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from flinktune.analysis import AnalysisOptions, analyze

from .conftest import real_dump  # type: ignore[import-not-found]

pytestmark = pytest.mark.spark

GROUPS = ("Shuffle.Netty.Input.Buffers.", "Shuffle.Netty.Output.Buffers.", "Shuffle.Netty.Input.")


def _short(rest_id: str) -> str | None:
    for g in GROUPS:
        if rest_id.startswith(g):
            return rest_id[len(g) :]
    return None if "." in rest_id else rest_id


def _rows() -> list[dict[str, object]]:
    table = pq.read_table(real_dump("slow-sink") / "metrics.parquet")
    return [r for r in table.to_pylist() if r["scope"] == "subtask"]


def _prom_filter(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9:_]", "_", text)


def _folder(tmp: Path, name: str) -> Path:
    out = tmp / name
    out.mkdir()
    shutil.copy(real_dump("slow-sink") / "plan.json", out / "plan.json")
    return out


def _canonical(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    out = []
    for r in rows:
        short = _short(str(r["metric"]))
        if short is None:
            continue  # legacy buffers.* copies and operator-scoped metrics
        out.append(
            {
                "ts": r["ts"],
                "job_id": r["job_id"],
                "job_name": r["job_name"],
                "vertex_id": r["vertex_id"],
                "task_name": r["task_name"],
                "subtask_index": r["subtask_index"],
                "tm_id": r["tm_id"],
                "metric": short,
                "value": r["value"],
            }
        )
    return out


def make_shapes(tmp: Path) -> dict[str, Path]:
    rows = _rows()
    canon = _canonical(rows)
    shapes: dict[str, Path] = {}
    table = pa.Table.from_pylist(canon)
    d = _folder(tmp, "canonical-parquet")
    pq.write_table(table, d / "metrics.parquet")
    shapes["canonical-parquet"] = d
    d = _folder(tmp, "canonical-csv")
    pacsv.write_csv(table, d / "metrics.csv")
    shapes["canonical-csv"] = d
    d = _folder(tmp, "canonical-jsonl")
    with open(d / "metrics.jsonl", "w") as fh:
        for r in canon:
            fh.write(json.dumps(r) + "\n")
    shapes["canonical-jsonl"] = d
    # Full identifiers only: everything else is parsed out of the name.
    d = _folder(tmp, "full-identifiers")
    full = [
        {
            "ts": r["ts"],
            "value": r["value"],
            "metric": f"localhost.taskmanager.{r['tm_id']}.{r['job_name']}.{r['task_name']}."
            f"{r['subtask_index']}.{r['metric']}",
        }
        for r in rows
    ]
    pacsv.write_csv(pa.Table.from_pylist(full), d / "metrics.csv")
    shapes["full-identifiers"] = d
    # Prometheus names, labels inline (as a remote-read export writes them).
    d = _folder(tmp, "prometheus-inline")
    with open(d / "metrics.jsonl", "w") as fh:
        for r in rows:
            rest = str(r["metric"])
            if "." in rest and not rest.startswith(("Shuffle.", "buffers.")):
                continue
            name = "flink_taskmanager_job_task_" + rest.replace(".", "_")
            labels = (
                f'job_id="{r["job_id"]}",task_id="{r["vertex_id"]}",task_name="{_prom_filter(str(r["task_name"]))}",'
                f'subtask_index="{r["subtask_index"]}",tm_id="{_prom_filter(str(r["tm_id"]))}",'
                f'job_name="{_prom_filter(str(r["job_name"]))}"'
            )
            fh.write(
                json.dumps(
                    {
                        "timestamp": int(r["ts"]) / 1000.0,
                        "metric": name + "{" + labels + "}",
                        "value": r["value"],
                    }
                )
                + "\n"
            )
    shapes["prometheus-inline"] = d
    # Prometheus names, labels as columns, seconds as float.
    d = _folder(tmp, "prometheus-columns")
    cols = [
        {
            "__name__": "flink_taskmanager_job_task_" + str(r["metric"]).replace(".", "_"),
            "timestamp": int(r["ts"]) / 1000.0,
            "job_id": r["job_id"],
            "task_id": r["vertex_id"],
            "task_name": _prom_filter(str(r["task_name"])),
            "subtask_index": str(r["subtask_index"]),
            "tm_id": _prom_filter(str(r["tm_id"])),
            "value": r["value"],
        }
        for r in rows
    ]
    pq.write_table(pa.Table.from_pylist(cols), d / "metrics.parquet")
    shapes["prometheus-columns"] = d
    # Wide: one row per (ts, subtask), one column per metric.
    d = _folder(tmp, "wide")
    wide: dict[tuple[object, ...], dict[str, object]] = {}
    names: set[str] = set()
    for r in canon:
        key = (r["ts"], r["job_id"], r["vertex_id"], r["task_name"], r["subtask_index"], r["tm_id"])
        wide.setdefault(key, {})[str(r["metric"])] = r["value"]
        names.add(str(r["metric"]))
    wide_rows = []
    for key, vals in wide.items():
        row = dict(
            zip(("ts", "job_id", "vertex_id", "task_name", "subtask_index", "tm_id"), key, strict=True)
        )
        row.update({n: vals.get(n) for n in sorted(names)})
        wide_rows.append(row)
    pq.write_table(pa.Table.from_pylist(wide_rows), d / "metrics.parquet")
    shapes["wide"] = d
    return shapes


def _summary(result):  # type: ignore[no-untyped-def]
    (job,) = result.jobs
    return (
        sorted((f.code, f.location.key) for f in result.findings),
        [(o.name, o.cause, o.channels) for o in job.origins],
        sorted(v.name for v in job.vertices if v.backpressured),
    )


@pytest.fixture(scope="module")
def shapes(tmp_path_factory) -> dict[str, Path]:  # type: ignore[no-untyped-def]
    return make_shapes(tmp_path_factory.mktemp("shapes"))


@pytest.fixture(scope="module")
def reference(spark):  # type: ignore[no-untyped-def]
    return _summary(analyze(AnalysisOptions(inputs=(str(real_dump("slow-sink")),)), session=spark))


def test_reference_is_the_ground_truth(reference) -> None:  # type: ignore[no-untyped-def]
    findings, origins, bp = reference
    assert origins == [("SinkWork -> Discard: Writer", "all_busy", "all")]
    assert bp == ["KeyedAgg", "Parse", "Source: Gen"]
    assert ("FTA001", "SinkWork -> Discard: Writer") in findings


@pytest.mark.parametrize(
    "shape",
    [
        "canonical-parquet",
        "canonical-csv",
        "canonical-jsonl",
        "full-identifiers",
        "prometheus-inline",
        "prometheus-columns",
        "wide",
    ],
)
def test_shape_gives_same_findings(spark, shapes, reference, shape: str) -> None:  # type: ignore[no-untyped-def]
    result = analyze(AnalysisOptions(inputs=(str(shapes[shape]),)), session=spark)
    assert _summary(result) == reference
    assert result.jobs[0].has_plan


def test_glob_of_files(spark, shapes, reference, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A glob over two halves of the canonical dump, the plan given explicitly.
    table = pq.read_table(shapes["canonical-parquet"] / "metrics.parquet")
    half = table.num_rows // 2
    pq.write_table(table.slice(0, half), tmp_path / "part-0.parquet")
    pq.write_table(table.slice(half), tmp_path / "part-1.parquet")
    result = analyze(
        AnalysisOptions(
            inputs=(str(tmp_path / "part-*.parquet"),),
            plan_path=str(shapes["canonical-parquet"] / "plan.json"),
        ),
        session=spark,
    )
    assert _summary(result) == reference


def test_partitioned_folder(spark, shapes, reference, tmp_path) -> None:  # type: ignore[no-untyped-def]
    table = pq.read_table(shapes["canonical-parquet"] / "metrics.parquet")
    pq.write_to_dataset(table, tmp_path / "ds", partition_cols=["metric"])
    shutil.copy(shapes["canonical-parquet"] / "plan.json", tmp_path / "ds" / "plan.json")
    result = analyze(AnalysisOptions(inputs=(str(tmp_path / "ds"),)), session=spark)
    assert _summary(result) == reference
