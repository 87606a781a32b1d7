"""`flinktune compare` as a user runs it: the verdict line first, every format, the exit codes, and
one line for what cannot be compared."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

import pytest

from . import dumps  # type: ignore[attr-defined]

pytestmark = pytest.mark.spark
JOB = "0f" * 16


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flinktune", "compare", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, NO_COLOR="1"),
        check=False,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("compare-cli")
    (folder / "empty").mkdir()  # a folder with no metrics in it
    return {
        "before": dumps.write(
            dumps.Run(JOB, "job", dumps.chain(2000.0), checkpoints_s=[4.0] * 12), folder / "before", 1
        ),
        "worse": dumps.write(
            dumps.Run(JOB, "job", dumps.chain(1000.0, 0.95, upstream_bp=0.9), checkpoints_s=[4.0] * 12),
            folder / "worse",
            2,
        ),
        "other": dumps.write(
            dumps.Run(
                "2d" * 16,
                "other",
                [
                    dumps.Vertex("d4" * 16, "Source: Kafka", 2, 10.0),
                    dumps.Vertex("e5" * 16, "Window", 2, 10.0),
                ],
            ),
            folder / "other",
            3,
        ),
        "short": dumps.write(dumps.Run(JOB, "job", dumps.chain(2000.0), seconds=6), folder / "short", 4),
        "empty": folder / "empty",
        "folder": folder,
    }


def test_json_is_valid_and_a_regression_fails_the_canary(runs) -> None:  # type: ignore[no-untyped-def]
    jsonschema = pytest.importorskip("jsonschema")
    done = _cli(str(runs["before"]), str(runs["worse"]), "-f", "json", cwd=runs["folder"])
    assert done.returncode == 1, done.stderr  # --fail-on worse is the default
    doc = json.loads(done.stdout)
    schema = json.loads(
        resources.files("flinktune.data").joinpath("schemas").joinpath("compare.schema.json").read_text()
    )
    jsonschema.validate(doc, schema)
    assert doc["command"] == "compare" and doc["inputs"] == [str(runs["before"]), str(runs["worse"])]
    assert doc["verdict"] == "worse" and doc["headline"].startswith("WORSE: throughput worse")
    throughput = next(f for f in doc["job"] if f["name"] == "throughput")
    assert throughput["verdict"] == "worse" and throughput["low"] < throughput["change"] < throughput["high"]
    never = _cli(
        str(runs["before"]), str(runs["worse"]), "--fail-on", "never", "-f", "markdown", cwd=runs["folder"]
    )
    assert never.returncode == 0 and never.stdout.startswith("## flinktune compare: worse"), never.stderr


def test_a_run_against_itself_and_every_format(runs, tmp_path) -> None:  # type: ignore[no-untyped-def]
    done = _cli(str(runs["before"]), str(runs["before"]), "--fail-on", "change", cwd=runs["folder"])
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("NO MEASURABLE CHANGE: throughput no measurable change"), first
    page = tmp_path / "compare.html"
    html = _cli(
        str(runs["before"]),
        str(runs["worse"]),
        "-f",
        "html",
        "-o",
        str(page),
        "--fail-on",
        "never",
        cwd=runs["folder"],
    )
    assert html.returncode == 0 and html.stdout == "", html.stderr
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "<svg" in text and "before" in text and "after" in text


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("{before}", "{other}"), "different jobs"),
        (("{before}", "{before}", "--confidence", "120%"), "--confidence"),
        (("{before}", "{before}", "--fail-on", "sometimes"), "--fail-on"),
        (("{before}", "{before}", "--expected", "{before}/metrics.parquet"), "--expected"),
        (("{before}", "nope/"), "nope"),
        (("nope/", "{before}"), "nope"),
        (("{before}", "{empty}"), "no metrics"),
    ],
)
def test_what_cannot_be_compared_is_one_line(runs, args, needle) -> None:  # type: ignore[no-untyped-def]
    # -q: nothing on stderr but the error (without it, progress lines come first, as for analyze).
    done = _cli(*(a.format(**{k: str(v) for k, v in runs.items()}) for a in args), "-q", cwd=runs["folder"])
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and needle in lines[0], done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_runs_too_short_to_judge_are_not_a_pass(runs) -> None:  # type: ignore[no-untyped-def]
    """Three windows a side: not one figure can be judged. The report is written, but the exit code
    is 2 whatever --fail-on says (a canary must not pass on it)."""
    done = _cli(str(runs["short"]), str(runs["short"]), "--fail-on", "never", "-q", cwd=runs["folder"])
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and "not one figure could be judged" in lines[0], done
    assert done.stdout.startswith("CANNOT TELL"), done.stdout


def _prometheus_replay():  # type: ignore[no-untyped-def]
    """tests/collect/test_prometheus.py's Prometheus (recorded query_range answers of a real Flink
    1.20 run, served over HTTP), loaded by path: the tests folders are not packages."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "collect" / "test_prometheus.py"
    spec = importlib.util.spec_from_file_location("flinktune_tests_collect_prometheus", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


_PROMETHEUS = _prometheus_replay()
replay = _PROMETHEUS.replay  # the fixture


def test_two_time_ranges_from_prometheus(replay, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """--prometheus: both sides pulled (the same recorded range twice: nothing changed), plans from
    --url, the pulled dumps removed afterwards."""
    meta = _PROMETHEUS._meta(_PROMETHEUS.SKEW)
    span = f"{meta['start']:.3f}..{meta['end']:.3f}"
    done = _cli(
        "--prometheus", replay.url, span, span, "--step", meta["step"], "--url", replay.url,
        "--fail-on", "change", "-f", "json", "-q", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["verdict"] == "no measurable change", doc["headline"]
    assert {v["name"] for v in doc["vertices"]} >= {"Source: Gen", "KeyedAgg"}, doc["vertices"]
    asked = {path for path, _form in replay.requests}
    assert "/api/v1/query_range" in asked
    assert not list(Path(tempfile.gettempdir()).glob("flinktune-compare-*/before"))
    bad = _cli("--prometheus", replay.url, span, "yesterday", "-q", cwd=tmp_path)
    lines = [line for line in bad.stderr.splitlines() if line.strip()]
    assert bad.returncode == 2 and len(lines) == 1 and "AFTER" in lines[0], bad.stderr
