"""The wheel must carry every package and the rules/ folder (as flinktune.bundled_rules)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _declared() -> set[str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return set(data["tool"]["setuptools"]["packages"])


def test_every_source_package_is_declared() -> None:
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "flinktune").rglob("__init__.py")
    }
    on_disk.add("flinktune.data")
    assert on_disk <= _declared(), sorted(on_disk - _declared())


def test_every_rule_folder_is_declared() -> None:
    rule_dirs = {"flinktune.bundled_rules"} | {
        "flinktune.bundled_rules." + ".".join(d.relative_to(ROOT / "rules").parts)
        for d in (ROOT / "rules").rglob("*") if d.is_dir() and any(d.glob("*.yaml"))
    }
    assert rule_dirs <= _declared(), sorted(rule_dirs - _declared())
