"""Configurations that are not a file Flink reads: a compose or container ``FLINK_PROPERTIES`` and a
Helm values ``flinkConfiguration``.

Their flat or YAML form says nothing about the Flink version: the official image's entrypoint merges
``FLINK_PROPERTIES`` into whichever file its Flink reads (flink-conf.yaml up to 1.18 by appending;
1.19+ line by line through ``config-parser-utils.sh``, which 2.x uses for config.yaml: apache/flink-docker
``docker-entrypoint.sh``, ../shared/reference/deployment-facts.md item 2), and a chart or platform writes
its values out the same way. And the config writer edits only Flink's own files, so ``--fix`` must
leave their fixes to the user rather than fail on them (it used to end with "the configuration to
edit was not found in the text", exit 2).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from flinktune.cli.app import app
from flinktune.config.types import FLINK_PROPERTIES, HELM_VALUES, ConfigDocument, ConfigFormat
from flinktune.lint.model import LintOptions
from flinktune.lint.runner import lint_paths
from flinktune.situation.version import readable_versions, resolve_version
from flinktune.versions import SUPPORTED, parse_version

VALUES = """flinkConfiguration:
  state.backend: rocksdb
  state.checkpoints.dir: s3://bucket/checkpoints
  taskmanager.numberOfTaskSlots: "2"
"""

COMPOSE = """services:
  jobmanager:
    image: flink:1.20.0
    command: jobmanager
    environment:
      - |
        FLINK_PROPERTIES=
        jobmanager.rpc.address: jobmanager
        state.backend: hashmap
  taskmanager:
    image: flink:1.20.0
    command: taskmanager
    environment:
      - |
        FLINK_PROPERTIES=
        jobmanager.rpc.address: jobmanager
        state.backend: hashmap
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)     # no project config of the repository
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


def _lint(*args: str):
    return CliRunner().invoke(app, ["lint", *args])


def test_helm_values_name_no_version_so_the_default_is_said_and_renames_wait(tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(VALUES, encoding="utf-8")
    result = lint_paths([str(values)], LintOptions())
    [version] = result.versions
    # Not "config.yaml is read by Flink 1.19+": a chart writes these values for whatever Flink it runs.
    assert (version.source, str(version.version)) == ("default", "1.20")
    renames = [f for f in result.findings if f.code == "FTC003"]
    # state.checkpoints.dir's rename (1.20) is right for 5 of the 12 releases a chart may run (1.13-2.3):
    # held back and named (test_version_notes.py).
    assert {f.location.key for f in renames} == {"state.backend"}
    assert [key for _line, key, _new, _since in version.held] == ["state.checkpoints.dir"]
    for finding in renames:
        assert str(finding.severity) == "info" and "nothing names the file's version" in finding.message
        assert str(finding.fix.applicability) == "manual"

    outcome = _lint("--fix", str(values))
    assert outcome.exit_code == 0, outcome.output
    assert values.read_text(encoding="utf-8") == VALUES
    assert not list(tmp_path.glob("values.yaml.*"))


def test_a_stated_version_judges_helm_values_but_fix_leaves_them_to_the_user(tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(VALUES, encoding="utf-8")
    outcome = _lint("--fix", "--flink-version", "1.20", str(values))
    # The findings stand as warnings (exit 1); nothing is written and nothing fails to be written (not 2).
    assert outcome.exit_code == 1, outcome.output
    assert "warning FTC003" in outcome.output and "fixable with --fix" not in outcome.output
    assert "not fixed" not in outcome.output
    assert values.read_text(encoding="utf-8") == VALUES


def test_fix_leaves_flink_properties_to_the_user(tmp_path: Path) -> None:
    compose = tmp_path / "docker-compose.yml"
    compose.write_text(COMPOSE, encoding="utf-8")
    outcome = _lint("--fix", str(tmp_path))
    assert outcome.exit_code == 1, outcome.output
    assert outcome.output.count("warning FTC003") == 2
    assert "fixable with --fix" not in outcome.output and "not fixed" not in outcome.output
    assert compose.read_text(encoding="utf-8") == COMPOSE


@pytest.mark.parametrize("origin", [FLINK_PROPERTIES, HELM_VALUES])
@pytest.mark.parametrize("fmt", [ConfigFormat.FLAT, ConfigFormat.YAML])
def test_an_overlay_is_readable_by_every_version(origin: str, fmt: ConfigFormat) -> None:
    overlay = ConfigDocument(path="x", format=fmt, entries=(), origin=origin)
    assert readable_versions(overlay) == SUPPORTED
    assert resolve_version(overlay).source == "default"
    # The same form as a file of its own: flink-conf.yaml is not read by 2.x, config.yaml only by 1.19+
    # (GlobalConfiguration, FLINK-33577 / FLINK-33677).
    file = ConfigDocument(path="x", format=fmt, entries=())
    readable = readable_versions(file)
    if fmt is ConfigFormat.FLAT:
        assert parse_version("2.0") not in readable and parse_version("1.18") in readable
    else:
        assert parse_version("1.18") not in readable and parse_version("2.0") in readable
