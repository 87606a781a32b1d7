"""Summarise `flinktune lint` over the dev config corpus: findings per rule, before and after.

Lints every file of ../shared/corpus/flink-configs (each named explicitly, as a user would) with the
working tree, compares the counts with benchmarks/results/lint-corpus-before.json (the same run on the
tree before issue 14's rules), and scores the hand labels of tests/data/lint-labels (precision and
recall, as tests/lint/test_recall.py computes them) both as the command line lints and with each file
at the version it was written for.

Run:  .venv/bin/python benchmarks/lint_corpus.py [--corpus DIR]
Writes benchmarks/results/lint-corpus.md and benchmarks/results/lint-corpus.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
BEFORE = RESULTS / "lint-corpus-before.json"


def _default_corpus() -> Path:
    for candidate in (ROOT.parent / "shared" / "corpus" / "flink-configs",
                      Path("/work/shared/corpus/flink-configs")):
        if candidate.is_dir():
            return candidate
    raise SystemExit("lint_corpus: corpus not found (../shared/corpus/flink-configs); pass --corpus DIR")


def _scoring():  # type: ignore[no-untyped-def]
    """tests/lint/test_recall.py: the one place labels are loaded and scored."""
    spec = importlib.util.spec_from_file_location("lint_recall", ROOT / "tests" / "lint" / "test_recall.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["lint_recall"] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=None)
    args = parser.parse_args()
    corpus = args.corpus or _default_corpus()

    from flinktune.lint.model import LintOptions
    from flinktune.lint.runner import lint_paths

    files = sorted(str(p) for p in corpus.iterdir() if p.is_file() and not p.name.endswith(".tsv"))
    result = lint_paths(files, LintOptions())
    by_rule = Counter(f"{f.code} {f.name}" for f in result.findings)
    by_severity = Counter(str(f.severity) for f in result.findings)
    before = json.loads(BEFORE.read_text(encoding="utf-8"))

    scoring = _scoring()
    labelled = scoring.load_files()
    labels = {name: list(entry.labels) for name, entry in labelled.items()}
    cli = scoring.score(labels, scoring.lint_labelled(labels))
    own = scoring.score(labels, scoring.lint_labelled(labels, {n: e.version for n, e in labelled.items()}))

    def figures(s) -> dict[str, object]:  # type: ignore[no-untyped-def]
        return {"precision": round(s.precision, 4), "recall": round(s.recall, 4),
                "matched_findings": s.matched_findings, "findings": s.findings,
                "matched_labels": s.matched_labels, "labels": s.labels}

    after = {"files": len(result.files), "findings": len(result.findings), "problems": len(result.problems),
             "by_severity": dict(sorted(by_severity.items())), "by_rule": dict(sorted(by_rule.items())),
             "labelled": {"command_line": figures(cli), "own_version": figures(own)}}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "lint-corpus.json").write_text(json.dumps({"before": before, "after": after}, indent=2) + "\n",
                                              encoding="utf-8")

    rules = sorted(set(before["by_rule"]) | set(by_rule))
    lines = [
        "# `flinktune lint` over the dev config corpus",
        "",
        f"Produced by `benchmarks/lint_corpus.py` over {len(files)} files of "
        "`../shared/corpus/flink-configs`,",
        "each named on the command line, default version resolution (file, else inferred, else 1.20).",
        "\"Before\" is the same run on the tree before issue 14 (`lint-corpus-before.json`).",
        "",
        "| rule | before | after |",
        "|---|---:|---:|",
    ]
    lines += [f"| {rule} | {before['by_rule'].get(rule, 0)} | {by_rule.get(rule, 0)} |" for rule in rules]
    lines += [f"| **total** | **{before['findings']}** | **{len(result.findings)}** |", "",
              "| severity | before | after |", "|---|---:|---:|"]
    lines += [f"| {sev} | {before['by_severity'].get(sev, 0)} | {by_severity.get(sev, 0)} |"
              for sev in ("error", "warning", "info")]
    lines += ["", f"## Hand-labelled files ({len(labelled)} files, {cli.labels} labels, "
              "`tests/data/lint-labels/labels.yaml`)", "",
              "| run | precision before | recall before | precision after | recall after |",
              "|---|---:|---:|---:|---:|"]
    for name, title in (("command_line", "as the command line lints (version from file / inferred / 1.20)"),
                        ("own_version", "each file at the version it was written for")):
        b, a = before["labelled"][name], after["labelled"][name]
        lines.append(f"| {title} | {b['precision']:.1%} | {b['recall']:.1%} | {a['precision']:.1%} "
                     f"| {a['recall']:.1%} |")
    lines += ["", "Findings that match no label (command-line run):", ""]
    lines += [f"- `{f[:3]}` {code} `{key}`:{line}" for f, code, key, line, _msg in cli.wrong] or ["- none"]
    lines += ["", "Labels no finding matches:", ""]
    missed = [f"- `{lab.file[:3]}` `{lab.key}` [{lab.category}]: {lab.why}" for lab in cli.missed]
    lines += missed or ["- none"]
    (RESULTS / "lint-corpus.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines[:len(rules) + 12]))


if __name__ == "__main__":
    main()
