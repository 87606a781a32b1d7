"""FTC020 (flink-conf.yaml on Flink 2.x) is about the file Flink 2.x ignores: flink-conf.yaml. A flat file
under another name (`recommend -o recommended.yaml`, a template) becomes conf/config.yaml, where flat
dotted keys are valid standard YAML: no error. Found by tests/e2e_flink/test_batch_2x.py, where
recommend's own output failed lint on Flink 2.3."""

from __future__ import annotations

from pathlib import Path

import pytest

from flinktune.lint.model import LintOptions
from flinktune.lint.runner import lint_paths
from flinktune.versions import parse_version

TEXT = "taskmanager.numberOfTaskSlots: 4\ntaskmanager.memory.process.size: 1728m\n"


@pytest.mark.parametrize(("name", "flagged"), [("flink-conf.yaml", True), ("prod-flink-conf.yaml", True),
                                               ("recommended.yaml", False), ("tm.yaml", False)])
def test_ftc020_only_for_a_flink_conf_file(tmp_path: Path, name: str, flagged: bool) -> None:
    (tmp_path / name).write_text(TEXT, encoding="utf-8")
    result = lint_paths([str(tmp_path / name)], LintOptions(flink_version=parse_version("2.0")))
    assert ("FTC020" in {f.code for f in result.findings}) is flagged
