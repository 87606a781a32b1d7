"""The pre-commit hook definition is valid and matches the files it should."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

HOOKS = Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml"


def test_flinktune_lint_hook() -> None:
    hooks = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    (hook,) = [h for h in hooks if h["id"] == "flinktune-lint"]
    assert hook["entry"] == "flinktune lint" and hook["language"] == "python"
    # keys pre-commit knows (https://pre-commit.com/#creating-new-hooks); a typo would be ignored silently
    known = {"id", "name", "entry", "language", "files", "exclude", "types", "types_or", "exclude_types",
             "always_run", "fail_fast", "verbose", "pass_filenames", "require_serial", "description",
             "language_version", "minimum_pre_commit_version", "args", "stages"}
    assert set(hook) <= known
    files = re.compile(hook["files"])
    for path in ("flink-conf.yaml", "conf/flink-conf.yaml", "deploy/prod-flink-conf.yml",
                 "flink/conf/config.yaml"):
        assert files.search(path), path
    for path in ("values.yaml", "conf/log4j.properties", "config.yaml.bak", "k8s/service.yaml",
                 "app-config.yaml"):
        assert not files.search(path), path
