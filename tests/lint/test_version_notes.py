"""A finding that hangs on a version nobody stated says so (issue 29: no finding depends on something
lint did not read without saying so): a version inferred from the keys, or flinktune's default (1.20)
when nothing names one. A stated version (a comment, --flink-version) adds nothing.

Flink fact: ``state.checkpoints.dir`` is deprecated from 1.20 for ``execution.checkpointing.dir``
(CheckpointingOptions @1.20; the catalog, flinktune/data/flink_options.json).
"""

from __future__ import annotations

from pathlib import Path

from flinktune.lint import LintOptions, lint_paths
from flinktune.versions import parse_version

NOTE = "state it with `# flinktune: flink-version=` or --flink-version"


def _messages(path: Path, options: LintOptions | None = None) -> dict[str, str]:
    result = lint_paths([str(path)], options or LintOptions())
    return {f.code: f.message for f in result.findings}


def test_a_deprecation_at_the_default_version_says_it_was_assumed(tmp_path: Path) -> None:
    conf = tmp_path / "flink-conf.yaml"
    conf.write_text("state.checkpoints.dir: s3://bucket/cp\ntaskmanager.numberOfTaskSlots: 2\n")
    message = _messages(conf)["FTC003"]
    assert "judged at Flink 1.20, the default: nothing names the file's version" in message
    assert NOTE in message


def test_a_stated_version_adds_no_note(tmp_path: Path) -> None:
    conf = tmp_path / "flink-conf.yaml"
    conf.write_text("# flinktune: flink-version=1.20\nstate.checkpoints.dir: s3://bucket/cp\n")
    assert NOTE not in _messages(conf)["FTC003"]
    plain = tmp_path / "plain.yaml"
    plain.write_text("state.checkpoints.dir: s3://bucket/cp\n", encoding="utf-8")
    assert NOTE not in _messages(plain, LintOptions(flink_version=parse_version("1.20")))["FTC003"]


def test_a_finding_that_holds_in_every_version_adds_no_note(tmp_path: Path) -> None:
    # An unknown key is unknown to every version: the default version does not decide it.
    conf = tmp_path / "flink-conf.yaml"
    conf.write_text("taskmanager.numberOfTaskSlotz: 2\n", encoding="utf-8")
    messages = _messages(conf)
    assert messages and all(NOTE not in m for m in messages.values()), messages
