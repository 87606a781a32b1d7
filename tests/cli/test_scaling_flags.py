"""The parallelism flags (issue 27): a mistake in --target-rate or --target-utilization is one clear line
and exit 2, checked before Spark starts, and recommend --write leaves the file as it was.

(An unknown source name needs the dump's job graph: tests/cli/test_analyze_verdicts.py.)
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flinktune.cli.app import app

REPO = Path(__file__).resolve().parents[2]
DUMP = REPO / "sample_data" / "slow-sink"
CONFIG = REPO / "sample_configs" / "legacy-1.x.flink-conf.yaml"

BAD = [
    (["--target-rate", "Source: Gen=fast"], "--target-rate Source: Gen=fast: expected SOURCE=RECORDS_PER_S"),
    (["--target-rate", "Source: Gen=-5"], "--target-rate Source: Gen=-5: expected"),
    (["--target-rate", "Source: Gen=0"], "--target-rate Source: Gen=0: expected"),
    (["--target-rate", "=4000"], "--target-rate =4000: expected"),
    (["--target-rate", "inf"], "--target-rate inf: expected"),
    (["--target-utilization", "150%"], "--target-utilization: '150%' is not above 0% and at most 100%"),
    (["--target-utilization", "0%"], "--target-utilization: '0%' is not above 0%"),
    (["--target-utilization", "0.7"], "--target-utilization: '0.7' is not a percentage; write e.g. 70%"),
    (["--target-utilization", "nan%"], "--target-utilization: 'nan%' is not a percentage"),
]


def _one_error_line(result: object) -> str:
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    assert result.stdout == ""  # type: ignore[attr-defined]
    lines = [line for line in result.stderr.splitlines() if line.strip()]  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("flinktune: error: "), result.stderr  # type: ignore[attr-defined]
    return lines[0]


@pytest.mark.parametrize(("flags", "message"), BAD, ids=[" ".join(f) for f, _ in BAD])
def test_analyze_refuses_a_bad_flag_in_one_line(flags: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["analyze", str(DUMP), "--no-progress", *flags])
    assert message in _one_error_line(result)


@pytest.mark.parametrize(("flags", "message"), BAD, ids=[" ".join(f) for f, _ in BAD])
def test_recommend_refuses_a_bad_flag_and_leaves_the_file(tmp_path: Path, flags: list[str],
                                                         message: str) -> None:
    config = tmp_path / "flink-conf.yaml"
    shutil.copy(CONFIG, config)
    before = config.read_bytes()
    result = CliRunner().invoke(app, ["recommend", str(config), "--metrics", str(DUMP), "--write", *flags])
    assert message in _one_error_line(result)
    assert config.read_bytes() == before and not config.with_name(config.name + ".bak").exists()


@pytest.mark.parametrize(("flags", "message"), [
    (["--target-utilization", "150%"], "--target-utilization: '150%' is not above 0% and at most 100%"),
    (["--target-utilization", "70"], "--target-utilization: '70' is not a percentage; write e.g. 70%"),
    (["--target-rate", "lots"], "--target-rate lots: expected a number"),
])
def test_the_model_what_if_refuses_the_same_way(flags: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["model", "--capacity", "900", "--target-rate", "4000", *flags])
    assert message in _one_error_line(result)


def test_recommend_headroom_is_a_percentage() -> None:
    result = CliRunner().invoke(app, ["recommend", str(CONFIG), "--headroom", "25"])
    assert "--headroom: '25' is not a percentage; write e.g. 25%" in _one_error_line(result)
