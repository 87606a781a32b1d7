"""recommend on a file without any TaskManager memory size says what lint says (FTC050).

Flink refuses a TaskManager without a size ("Either required fine-grained memory ...":
TaskExecutorProcessUtils). A short file that shows nothing of a whole configuration may as well be
merged into the image's flink-conf.yaml (FLINK_PROPERTIES, a mounted overlay), which has a size, so
lint reports the refusal only for a file that shows it is complete; recommend stated it flatly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flinktune.cli.app import app

SHORT = "taskmanager.numberOfTaskSlots: 4\nparallelism.default: 2\nstate.backend.type: rocksdb\n"
# query.server.port is one of the keys the image's entrypoint writes into the live file: a copy of it.
WHOLE = SHORT + "blob.server.port: 6124\nquery.server.port: 6125\n"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _recommend(path: Path, *extra: str):
    return CliRunner().invoke(app, ["recommend", str(path), "--no-color", *extra])


def test_a_short_file_may_be_an_overlay(tmp_path: Path) -> None:
    conf = tmp_path / "flink-conf.yaml"
    conf.write_text(SHORT, encoding="utf-8")
    result = _recommend(conf)
    assert result.exit_code == 0, result.output
    assert "no TaskManager memory size is set in this file. If it is the whole configuration" in result.output
    assert "Flink refuses this TaskManager memory setup" not in result.output
    assert "No changes proposed: without a memory size, the network memory is not sized" in result.output
    data = json.loads(_recommend(conf, "--format", "json").output)
    [rec] = data.get("recommendations", [data])
    assert rec["network"]["original_size_maybe_elsewhere"] is True


def test_a_file_that_shows_it_is_whole_is_refused_as_before(tmp_path: Path) -> None:
    conf = tmp_path / "flink-conf.yaml"
    conf.write_text(WHOLE, encoding="utf-8")
    result = _recommend(conf)
    assert "original: Flink refuses this TaskManager memory setup: Either required" in result.output
    assert "If it is the whole configuration" not in result.output
    # The same verdict as lint's (FTC050 reports the refusal for this file, not for the short one).
    lint = CliRunner().invoke(app, ["lint", str(conf)])
    assert "FTC050" in lint.output
    conf.write_text(SHORT, encoding="utf-8")
    assert "FTC050" not in CliRunner().invoke(app, ["lint", str(conf)]).output
