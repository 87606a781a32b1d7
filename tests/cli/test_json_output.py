"""Every command's JSON: strict RFC 8259 (no NaN/Infinity), one envelope, valid against the JSON
Schema shipped for that command (issue 15, defect 5 and the shared conventions).

Before: `simulate --format json` wrote bare NaN (strict parsers fail), the commands had no
common envelope, and `model --sweep` turned a quantity's number into a list under the same name.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SCEN = REPO / "sample_configs" / "scenarios"
CONF = REPO / "sample_configs"
ENVELOPE = ["tool", "version", "schema_version", "command", "inputs"]


def _no_constants(name: str) -> Any:
    raise AssertionError(f"not strict JSON: bare {name}")


def strict_loads(text: str) -> dict[str, Any]:
    return json.loads(text, parse_constant=_no_constants)


def _schema(command: str) -> dict[str, Any]:
    text = (
        resources.files("flinktune.data").joinpath("schemas").joinpath(f"{command}.schema.json").read_text()
    )
    return json.loads(text)


def _run(*args: str, cwd: Path) -> str:
    env = dict(os.environ, NO_COLOR="1")
    done = subprocess.run(
        [sys.executable, "-m", "flinktune", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return done.stdout


def check(command: str, text: str, inputs: list[str]) -> dict[str, Any]:
    jsonschema = pytest.importorskip("jsonschema")
    doc = strict_loads(text)
    assert list(doc)[:5] == ENVELOPE, list(doc)[:6]
    assert doc["tool"] == "flinktune" and doc["command"] == command
    assert isinstance(doc["schema_version"], int)
    assert doc["inputs"] == inputs
    jsonschema.validate(doc, _schema(command))
    return doc


CASES: list[tuple[str, list[str], list[str]]] = [
    ("lint", ["lint", str(CONF), "--format", "json"], [str(CONF)]),
    (
        "lint",
        ["lint", str(CONF / "legacy-1.x.flink-conf.yaml"), "-f", "json"],
        [str(CONF / "legacy-1.x.flink-conf.yaml")],
    ),
    ("rules", ["rules", "list", "--format", "json"], []),
    ("model", ["model", "--parallelism", "200", "--rtt", "2ms", "--format", "json"], []),
    (
        "model",
        ["model", "--parallelism", "200", "--rtt", "2ms", "--sweep", "rtt=1ms..10ms:4", "--format", "json"],
        [],
    ),
    (
        "model",
        ["model", "--config", str(CONF / "flink-2.x.config.yaml"), "--format", "json"],
        [str(CONF / "flink-2.x.config.yaml")],
    ),
    (
        "recommend",
        ["recommend", str(CONF / "low-latency-streaming.flink-conf.yaml"), "-f", "json"],
        [str(CONF / "low-latency-streaming.flink-conf.yaml")],
    ),
    (
        "recommend",
        ["recommend", str(CONF / "flinkdeployment.yaml"), "-f", "json"],
        [str(CONF / "flinkdeployment.yaml")],
    ),
]
CASES += [
    ("simulate", ["simulate", str(path), "--format", "json"], [str(path)])
    for path in sorted(SCEN.glob("*.yaml"))
]
CASES.append(
    (
        "simulate",
        ["simulate", str(SCEN / "healthy.yaml"), "--sweep", "buffers-per-channel=1,2", "--format", "json"],
        [str(SCEN / "healthy.yaml")],
    )
)


@pytest.mark.parametrize(
    ("command", "argv", "inputs"), CASES, ids=lambda x: x if isinstance(x, str) else None
)
def test_json_is_strict_enveloped_and_valid(
    tmp_path: Path, command: str, argv: list[str], inputs: list[str]
) -> None:
    check(command, _run(*argv, cwd=tmp_path), inputs)


def test_model_sweep_keeps_one_type_per_field(tmp_path: Path) -> None:
    single = strict_loads(
        _run("model", "--parallelism", "8", "--rtt", "2ms", "--format", "json", cwd=tmp_path)
    )
    swept = strict_loads(
        _run("model", "--parallelism", "8", "--sweep", "rtt=1ms..10ms:3", "--format", "json", cwd=tmp_path)
    )
    for name, quantity in single["quantities"].items():
        assert not isinstance(quantity["value"], list), name
        assert isinstance(swept["quantities"][name]["values"], list), name
        assert "value" not in swept["quantities"][name]


def test_every_json_command_ships_a_schema() -> None:
    from flinktune.report.emit import commands, formats

    json_commands = [command for command in commands() if "json" in formats(command)]
    assert {"lint", "rules", "model", "simulate", "analyze", "recommend", "collect"} <= set(json_commands)
    for command in json_commands:
        schema = _schema(command)
        assert schema["properties"]["command"] == {"const": command}
        assert schema["required"][:5] == ENVELOPE


@pytest.mark.spark
@pytest.mark.slow
def test_analyze_json(tmp_path: Path) -> None:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java is not installed: Spark cannot start")
    dump = str(REPO / "sample_data" / "slow-sink")
    doc = check("analyze", _run("analyze", dump, "--format", "json", "--quiet", cwd=tmp_path), [dump])
    assert doc["jobs"][0]["status"] == "back-pressured"
