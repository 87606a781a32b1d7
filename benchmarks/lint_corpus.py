"""Summarise `flinktune lint` over the dev corpus: findings per rule, and precision and recall on the labels,
overall, per class of issue 29 and per rule, before and after.

Lints every file of ../shared/corpus/flink-configs (each named explicitly, as a user would) with the
working tree and compares the counts with benchmarks/results/lint-corpus-before.json (the same run on the
tree before issue 14's rules). Scores the hand labels of tests/data/lint-labels (config files and the
deployments of ../shared/corpus/deployments, as tests/lint/test_recall.py computes them) both as the
command line lints and with each file or deployment at the version it was written for; "before" for the
labels is the same scoring of the findings the tree before issue 29 gives
(benchmarks/results/lint-corpus-before-29.json, written by this script with --rows-out on that tree).

Run:  .venv/bin/python benchmarks/lint_corpus.py [--corpus DIR]
      PYTHONPATH=<tree before issue 29> .venv/bin/python benchmarks/lint_corpus.py --rows-out FILE
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
BEFORE_29 = RESULTS / "lint-corpus-before-29.json"
RUNS = (("command_line", "as the command line lints (version from the files, else inferred, else 1.20)"),
        ("own_version", "each file and deployment at the version it was written for"))


def _default_corpus() -> Path:
    sys.path.insert(0, str(ROOT / "tests"))
    from testkit import shared_dir  # ../shared beside the checkout (or the main one of a worktree)

    candidate = shared_dir() / "corpus" / "flink-configs"
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


def _rows(scoring, strict: bool = True) -> dict[str, list[list[object]]]:  # type: ignore[no-untyped-def]
    out = {}
    for name, _title in RUNS:
        _labels, rows = scoring.lint_all(own_version=name == "own_version", strict=strict)
        out[name] = [list(row) for row in rows]
    return out


def _figures(s) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return {"precision": round(s.precision, 4), "recall": round(s.recall, 4),
            "matched_findings": s.matched_findings, "findings": s.findings,
            "matched_labels": s.matched_labels, "labels": s.labels}


def _score_all(scoring, labels, rows) -> dict[str, object]:  # type: ignore[no-untyped-def]
    rows = [tuple(row) for row in rows]
    return {"overall": _figures(scoring.score(labels, rows)),
            "classes": {name: _figures(s) for name, s in scoring.score_by_class(labels, rows).items()},
            "rules": {code: {"matched": hit, "findings": total}
                      for code, (hit, total) in scoring.matched_by_rule(labels, rows).items()}}


def _pct(figures: dict[str, object] | None, what: str) -> str:
    if not figures:
        return "-"
    count = figures["findings"] if what == "precision" else figures["labels"]
    return f"{figures[what]:.1%}" if count else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--rows-out", type=Path, default=None,
                        help="only write the findings of the labelled files and deployments (JSON) and stop")
    args = parser.parse_args()
    corpus = args.corpus or _default_corpus()
    scoring = _scoring()
    if args.rows_out is not None:
        args.rows_out.write_text(json.dumps(_rows(scoring, strict=False)) + "\n", encoding="utf-8")
        return

    from flinktune.lint.model import LintOptions
    from flinktune.lint.runner import lint_paths

    files = sorted(str(p) for p in corpus.iterdir() if p.is_file() and not p.name.endswith(".tsv"))
    result = lint_paths(files, LintOptions())
    by_rule = Counter(f"{f.code} {f.name}" for f in result.findings)
    by_severity = Counter(str(f.severity) for f in result.findings)
    before = json.loads(BEFORE.read_text(encoding="utf-8"))
    before_rows = json.loads(BEFORE_29.read_text(encoding="utf-8")) if BEFORE_29.is_file() else {}

    _files, deployments, labels = scoring.all_labels()
    after_rows = _rows(scoring)
    scored = {name: {"after": _score_all(scoring, labels, after_rows[name]),
                     "before": (_score_all(scoring, labels, before_rows[name]) if name in before_rows
                                else None)}
              for name, _title in RUNS}

    after = {"files": len(result.files), "findings": len(result.findings), "problems": len(result.problems),
             "by_severity": dict(sorted(by_severity.items())), "by_rule": dict(sorted(by_rule.items())),
             "labelled": {name: scored[name]["after"]["overall"] for name, _t in RUNS}}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "lint-corpus.json").write_text(
        json.dumps({"before": before, "after": after, "scored": scored}, indent=2) + "\n", encoding="utf-8")

    n_labels = sum(len(labs) for labs in labels.values())
    rules = sorted(set(before["by_rule"]) | set(by_rule))
    lines = [
        "# `flinktune lint` over the dev corpus",
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
    lines += ["", f"## Hand labels ({len(labels) - len(deployments)} config files and {len(deployments)} "
              f"deployments, {n_labels} labels, `tests/data/lint-labels/labels.yaml`)", "",
              "\"Before\" here is the tree before issue 29 (`lint-corpus-before-29.json`: its findings, "
              "scored against the same labels); deployments are linted as `flinktune lint <folder>`.", "",
              "| run | precision before | recall before | precision after | recall after |",
              "|---|---:|---:|---:|---:|"]
    for name, title in RUNS:
        b, a = scored[name]["before"], scored[name]["after"]
        old = b["overall"] if b else None
        lines.append(f"| {title} | {_pct(old, 'precision')} | {_pct(old, 'recall')} "
                     f"| {_pct(a['overall'], 'precision')} | {_pct(a['overall'], 'recall')} |")
    gating = [tuple(r) for r in after_rows["command_line"] if r[4] in ("warning", "error")]
    gate = scoring.score(labels, gating)
    lines += ["", "Of the findings a CI gate fails on at the default `--fail-on warning` (warnings and "
              "errors), "
              f"as the command line lints: precision {gate.precision:.1%} ({gate.matched_findings}/"
              f"{gate.findings}); the others are info, such as a deprecation that holds only from a "
              "release the file does not name."]
    for name, title in RUNS:
        b, a = scored[name]["before"], scored[name]["after"]
        lines += ["", f"### Per class, {title}", "",
                  "| class | labels | precision before | recall before | precision after | recall after |",
                  "|---|---:|---:|---:|---:|---:|"]
        for cls, fig in a["classes"].items():
            old = b["classes"].get(cls) if b else None
            lines.append(f"| {cls} | {fig['labels']} | {_pct(old, 'precision')} | {_pct(old, 'recall')} "
                         f"| {_pct(fig, 'precision')} | {_pct(fig, 'recall')} |")
        lines += ["", f"### Per rule, {title} (findings on labelled files that match a label)", "",
                  "| rule | category | before | after |", "|---|---|---:|---:|"]
        codes = sorted(set(a["rules"]) | set(b["rules"] if b else ()))
        for code in codes:
            new, old = a["rules"].get(code), (b["rules"].get(code) if b else None)
            shown_old = f"{old['matched']}/{old['findings']}" if old else "-"
            shown_new = f"{new['matched']}/{new['findings']}" if new else "-"
            lines.append(f"| {code} | {scoring.category_of(code)} | {shown_old} | {shown_new} |")
    files_labels = scoring.load_files()
    dated = sum(1 for entry in files_labels.values() if entry.version_why)
    lines += ["", "## The versions the labels judge at", "",
              f"{dated} of the {len(files_labels)} labelled config files carry a `version_why`: the release "
              "the file's own repository runs it with (its Dockerfile `FROM`, compose `image:`, pom), which "
              "the corpus does not hold. Of the files whose content cannot tell 1.17 from 1.20, most run "
              "an older release than 1.20: at the default version lint holds back the deprecations that "
              "hold for fewer than half of the releases a file fits and names them in one line "
              "(docs/lint.md), which the command-line run above counts as neither finding nor miss of a "
              "finding."]
    cli = scoring.score(labels, [tuple(r) for r in after_rows["command_line"]])
    lines += ["", "Findings that match no label (command-line run):", ""]
    lines += [f"- `{f[:3]}{'/' + f.split('/', 1)[1] if '/' in f else ''}` {code} `{key}`:{line}"
              for f, code, key, line, _msg in cli.wrong] or ["- none"]
    lines += ["", "Labels no finding matches (command-line run):", ""]
    missed = [f"- `{lab.file[:3]}` `{lab.key}` [{lab.category}]: {lab.why}" for lab in cli.missed]
    lines += missed or ["- none"]
    (RESULTS / "lint-corpus.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines[:len(rules) + 30]))


if __name__ == "__main__":
    main()
