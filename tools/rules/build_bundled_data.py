"""Write flinktune/data/bundled_rules.json: the validated data of the bundled rules, and
flinktune/data/bundled_rules_trees.json: their expressions, parsed (a lint then builds them from tuples).

With it, a machine that has never run flinktune (a CI container) lints without importing pydantic:
the loader uses an entry only when the rule file's bytes and the validation code (schema.py,
spec.py, versions.py) are those the data was built from, and validates as usual otherwise.
tests/rules/test_bundled_data.py fails when the file is out of date.

Usage (from the repository root):  python tools/rules/build_bundled_data.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from flinktune.rules.loader import SHIPPED_FILE, TREES_FILE, build_shipped_data, build_shipped_trees  # noqa: E402


def main() -> None:
    data = build_shipped_data()
    # One rule per line keeps diffs readable when a rule changes.
    lines = ["{", f'"schema": {json.dumps(data["schema"])},', '"files": {']
    entries = list(data["files"].items())
    for index, (source, entry) in enumerate(entries):
        comma = "," if index + 1 < len(entries) else ""
        lines.append(f"{json.dumps(source)}: {json.dumps(entry, separators=(',', ':'))}{comma}")
    lines += ["}", "}"]
    SHIPPED_FILE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {SHIPPED_FILE} ({len(entries)} rules)")
    trees = build_shipped_trees()
    TREES_FILE.write_text(json.dumps(trees, separators=(',', ':')) + "\n", encoding="utf-8")
    print(f"wrote {TREES_FILE} ({len(trees['trees'])} expressions)")


if __name__ == "__main__":
    main()
