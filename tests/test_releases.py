"""The one table of Flink releases (flinktune/versions.py RELEASES) and what changed in each that
flinktune models (flinktune/releases.py), issue 25: a new release is one entry plus its catalog, and
no module decides by a version literal of its own.

Sources: each Change names its own (tags of ../shared/reference/flink-facts.md, §0); the catalog's
release list is what tools/catalog/generate.py read from the PyPI apache-flink-libraries sdists.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from flinktune import releases
from flinktune.versions import PATCH_RELEASES, RELEASES, SUPPORTED, FlinkVersion

PACKAGE = Path(__file__).resolve().parents[1] / "flinktune"


def test_every_release_has_its_option_catalog() -> None:
    catalog = json.loads((PACKAGE / "data" / "flink_options.json").read_text(encoding="utf-8"))
    assert list(RELEASES) == catalog["versions"]
    # the catalog was generated from the newest patch of each line: the table flinktune suggests from
    assert catalog["releases"] == dict(PATCH_RELEASES)
    assert all(patch.startswith(line + ".") for line, patch in PATCH_RELEASES)
    assert [str(v) for v in SUPPORTED] == list(RELEASES) and list(SUPPORTED) == sorted(SUPPORTED)


def test_every_change_is_a_known_release_with_a_source() -> None:
    assert len(releases.CHANGES) >= 15
    for change in releases.CHANGES:
        assert change.since in SUPPORTED, change
        assert change.what and change.source, change


@pytest.mark.parametrize("change", releases.CHANGES, ids=lambda c: c.what[:40])
def test_a_change_holds_from_its_release_on(change: releases.Change) -> None:
    before = [v for v in SUPPORTED if v < change.since]
    after = [v for v in SUPPORTED if v >= change.since]
    assert not any(change.applies(v) for v in before) and all(change.applies(v) for v in after)


def test_facts_by_release() -> None:
    # flink-facts.md §1.2 / §1.6: overdraft 1.16 (FLINK-26762), network.max unbounded 1.17 (FLINK-30472),
    # execution.buffer-timeout.enabled 1.18, config.yaml 1.19 (FLINK-33577), buffers fixed in 2.0.
    v = FlinkVersion
    assert not releases.OVERDRAFT_BUFFERS.applies(v(1, 15)) and releases.OVERDRAFT_BUFFERS.applies(v(1, 16))
    assert releases.NETWORK_MAX_UNBOUNDED.since == v(1, 17)
    assert releases.BUFFER_TIMEOUT_SWITCH.since == v(1, 18)
    assert releases.CONFIG_YAML.since == v(1, 19) and releases.ONLY_CONFIG_YAML.since == v(2, 0)
    assert releases.BUFFERS_FIXED.since == v(2, 0) and releases.SORT_SHUFFLE_DEFAULT.since == v(1, 15)


def _literal_versions(tree: ast.AST) -> list[int]:
    """Lines that build a version from literals or compare a version's major/minor with a number."""
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "FlinkVersion"
                and node.args and all(isinstance(a, ast.Constant) and isinstance(a.value, int)
                                      for a in node.args)):
            found.append(node.lineno)
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if (any(isinstance(s, ast.Attribute) and s.attr in ("major", "minor") for s in sides)
                    and any(isinstance(s, ast.Constant) and isinstance(s.value, int) for s in sides)):
                found.append(node.lineno)
    return found


def test_no_module_decides_by_a_version_literal_of_its_own() -> None:
    allowed = {PACKAGE / "versions.py", PACKAGE / "releases.py"}
    offenders = [f"{path.relative_to(PACKAGE.parent)}:{line}"
                 for path in sorted(PACKAGE.rglob("*.py")) if path not in allowed
                 for line in _literal_versions(ast.parse(path.read_text(encoding="utf-8")))]
    assert offenders == [], "ask flinktune.releases instead:\n" + "\n".join(offenders)
