"""Imports flow one way: core <- engines <- report <- cli (docs/architecture.md).

Also: the lint path never imports numpy or pyspark; only flinktune.analysis and flinktune.spark import
pyspark.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "flinktune"

# Layer of each top-level part of the package. A module may import its own part or any part of a
# strictly lower layer; within a layer, parts may import only those listed in ALLOWED_SIDEWAYS.
LAYERS: dict[str, int] = {
    "__init__": 0, "__main__": 7, "errors": 0, "units": 0, "findings": 0, "versions": 0, "globbing": 0,
    "releases": 0,    # what changed in which Flink release (the one table)
    "change": 0,      # the one config change (lint fixes, recommend, the writer)
    "record": 0,      # the one frozen-value idiom (Record, replace): imports nothing of flinktune
    "config": 0,
    "deployment": 0,  # docker-compose / Kubernetes / Helm / Dockerfile readers: values and parsers
    "situation": 1,   # the one resolved situation: core only below it, every engine above it
    "model": 2,
    "rules": 3, "sim": 3,
    "spark": 3,       # the Spark session, its JVM and class-data archive (core only below it)
    "analysis": 4,
    "advise": 5, "collect": 5, "lint": 5, "compare": 5,
    "report": 6,
    "cli": 7,
}
ALLOWED_SIDEWAYS: set[tuple[str, str]] = {
    # core values and parsers share a layer and build on each other
    ("config", "errors"), ("config", "units"), ("config", "findings"), ("config", "versions"),
    ("units", "errors"), ("versions", "errors"), ("releases", "versions"), ("findings", "errors"),
    ("change", "errors"), ("findings", "change"), ("config", "change"),
    ("config", "record"), ("findings", "record"), ("change", "record"), ("deployment", "record"),
    ("deployment", "config"), ("deployment", "errors"), ("deployment", "units"), ("deployment", "versions"),
    ("__main__", "cli"),
}


def _part(module_path: Path) -> str:
    rel = module_path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py")


def _imported_parts(tree: ast.AST) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("flinktune."):
                    found.append((alias.name.split(".")[1], node.lineno))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "flinktune":
                found.extend((alias.name, node.lineno) for alias in node.names)
            elif node.module.startswith("flinktune."):
                found.append((node.module.split(".")[1], node.lineno))
    return found


def test_every_part_has_a_layer() -> None:
    parts = {_part(p) for p in PACKAGE.rglob("*.py")}
    assert parts <= set(LAYERS), f"unlayered parts: {sorted(parts - set(LAYERS))}"


def test_imports_flow_one_way() -> None:
    violations = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own = _part(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for target, line in _imported_parts(tree):
            if target == own or target not in LAYERS:
                continue
            if LAYERS[target] < LAYERS[own] or (own, target) in ALLOWED_SIDEWAYS:
                continue
            violations.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports flinktune.{target}")
    assert violations == [], "\n".join(violations)


def test_only_analysis_imports_pyspark() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if _part(path) in ("analysis", "spark"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == "pyspark" or n.startswith("pyspark.") for n in names):
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert offenders == []


def test_lint_path_imports_neither_numpy_nor_pyspark(tmp_path: Path) -> None:
    conf = tmp_path / "flink-conf.yaml"
    conf.write_text("taskmanager.numberOfTaskSlots: 4\n", encoding="utf-8")
    probe = (
        "import sys\n"
        "from flinktune.cli.app import app\n"
        "try:\n"
        f"    app(['lint', {str(conf)!r}], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = sorted(m for m in sys.modules\n"
        "               if m.split('.')[0] in ('numpy', 'pyspark', 'pandas', 'pyarrow'))\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    heavy_lines = [line for line in result.stdout.splitlines() if line.startswith("HEAVY=")]
    assert heavy_lines == ["HEAVY="], result.stdout


def test_a_long_module_says_why() -> None:
    """Modules stay small and named for what they own; one over 500 lines says why in its docstring
    (issue 25)."""
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        docstring = ast.get_docstring(ast.parse(text)) or ""
        if len(text.splitlines()) > 500 and "Over 500 lines" not in docstring:
            long.append(str(path.relative_to(PACKAGE.parent)))
    assert long == [], long
