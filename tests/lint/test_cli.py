"""``flinktune lint`` end to end through typer's CliRunner.

Most tests use the stand-in rules in ``rules_fixture/`` and ``--select FTZ,FTL`` so that what
they check (exit codes, suppressions, baselines, formats) does not hang on the bundled rules.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flinktune.cli.app import app

FIXTURE_RULES = str(Path(__file__).resolve().parent / "rules_fixture")
ONLY_FTZ = ["--no-bundled-rules", "--rules", FIXTURE_RULES, "--select", "FTZ"]
ISOLATE = ["--no-bundled-rules", "--rules", FIXTURE_RULES, "--select", "FTZ,FTL", "--format", "text"]


@pytest.fixture(autouse=True)
def _no_project_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Run in an empty folder so the repository's own pyproject.toml is never picked up.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner(env=env).invoke(app, ["lint", *args])


# --- exit codes -----------------------------------------------------------------------------

def test_clean_file_exits_0(tmp_path: Path) -> None:
    conf = _write(tmp_path / "flink-conf.yaml", "new.key: 1\n")
    result = run(*ISOLATE, str(conf))
    assert result.exit_code == 0, result.output
    assert result.stdout == "1 file checked: 0 errors, 0 warnings, 0 info.\n"


def test_fail_on_thresholds(tmp_path: Path) -> None:
    conf = _write(tmp_path / "flink-conf.yaml", "old.key: 1\nrisky.key: 2\n")   # a warning and an info
    assert run(*ISOLATE, str(conf)).exit_code == 1                               # default: warning
    assert run(*ISOLATE, "--fail-on", "error", str(conf)).exit_code == 0
    only_info = _write(tmp_path / "b" / "flink-conf.yaml", "risky.key: 2\n")
    assert run(*ISOLATE, str(only_info)).exit_code == 0
    assert run(*ISOLATE, "--fail-on", "info", str(only_info)).exit_code == 1
    bad = run(*ISOLATE, "--fail-on", "fatal", str(conf))
    assert bad.exit_code == 2 and "--fail-on must be error, warning or info" in bad.stderr


def test_bad_usage_exits_2(tmp_path: Path) -> None:
    conf = _write(tmp_path / "flink-conf.yaml", "new.key: 1\n")
    result = run(*ISOLATE, "--flink-version", "banana", str(conf))
    assert result.exit_code == 2 and "Flink version 'banana'" in result.stderr
    assert run().exit_code == 2                                                  # no FILE
    unknown = run(*ISOLATE, "--format", "xml", str(conf))
    assert unknown.exit_code == 2 and "--format must be auto, text, json, sarif, github or junit, not 'xml'" \
        in unknown.stderr


# --- bad input: one line each, exit 2, the rest still linted -----------------------------------

def test_bad_inputs_are_one_line_each_and_others_still_linted(tmp_path: Path) -> None:
    good = _write(tmp_path / "good" / "flink-conf.yaml", "old.key: 1\n")
    binary = tmp_path / "bin" / "flink-conf.yaml"
    binary.parent.mkdir()
    binary.write_bytes(b"\x7fELF\x02\x01\x00\x00\x00binary\x00junk\n")
    invalid_yaml = _write(tmp_path / "yaml" / "config.yaml", "rest:\n  port: 1\ntaskmanager: slots: 2\n")
    latin1 = tmp_path / "enc" / "flink-conf.yaml"
    latin1.parent.mkdir()
    latin1.write_bytes(b"# caf\xe9\nnew.key: 1\n")
    huge = tmp_path / "huge" / "flink-conf.yaml"
    huge.parent.mkdir()
    huge.write_bytes(b"a.b: c\n" * (9 * 1024 * 1024 // 7))
    odd = _write(tmp_path / "odd" / "flink-conf.yaml", "t\u00e4sk.\u202eslots\u200b: 1\n\u2603: \U0001f600\n")
    missing = tmp_path / "missing.yaml"
    args = [str(p) for p in (good, binary, invalid_yaml, latin1, huge, odd, missing)]
    result = run(*ISOLATE, *args)
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    errors = result.stderr.splitlines()
    bad = {str(binary), str(invalid_yaml), str(latin1), str(huge), str(missing)}
    assert len(errors) == len(bad), result.stderr
    for line in errors:
        assert line.startswith("flinktune: error: ")
        assert any(line.startswith(f"flinktune: error: {name}") for name in bad), line
    # Where a line can be named, it is.
    assert any(line.startswith(f"flinktune: error: {invalid_yaml}:3") for line in errors), errors
    assert any(line.startswith(f"flinktune: error: {binary}:1") for line in errors), errors
    assert any(line.startswith(f"flinktune: error: {latin1}:1") for line in errors), errors
    # The good file (and the one with odd but valid characters) were still linted and reported.
    assert f"{good}:1: warning FTZ901" in result.stdout
    assert "2 files checked" in result.stdout and "5 inputs not linted" in result.stdout


def test_bad_input_in_json_is_reported_too(tmp_path: Path) -> None:
    good = _write(tmp_path / "flink-conf.yaml", "old.key: 1\n")
    broken = _write(tmp_path / "x" / "config.yaml", "a: [\n")
    result = run(*ONLY_FTZ, "--format", "json", str(good), str(broken))
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert [f["code"] for f in doc["findings"]] == ["FTZ901"]
    assert [p["file"] for p in doc["problems"]] == [str(broken)]


# --- suppressions ----------------------------------------------------------------------------

def test_inline_suppression_and_unused_suppression(tmp_path: Path) -> None:
    conf = _write(tmp_path / "flink-conf.yaml",
                  'gone.key: 1 # flinktune: disable=FTZ902 reason="still read by our old cluster"\n'
                  "new.key: 2 # flinktune: disable=FTZ901\n")
    result = run(*ISOLATE, str(conf))
    assert "FTZ902" not in result.stdout.replace("disable=FTZ902", "")
    assert (f"{conf}:2: warning FTL001 [unused-suppression] suppression of FTZ901 matches no finding"
            in result.stdout)
    assert "(1 suppressed inline)" in result.stdout
    assert result.exit_code == 1


def test_file_wide_suppression_in_yaml(tmp_path: Path) -> None:
    conf = _write(tmp_path / "config.yaml",
                  "# flinktune: disable-file=FTZ901\nold:\n  key: 1\n")
    result = run(*ISOLATE, str(conf))
    assert result.exit_code == 0, result.stdout
    assert "(1 suppressed inline)" in result.stdout


# --- project config ---------------------------------------------------------------------------

def test_project_config_select_severity_fail_on(tmp_path: Path) -> None:
    _write(tmp_path / ".flinktune.yaml",
           f"rules: [{FIXTURE_RULES}]\nselect: [FTZ]\nignore: [FTZ903]\nseverity:\n  FTZ901: info\n"
           "fail-on: warning\n")
    conf = _write(tmp_path / "conf" / "flink-conf.yaml", "old.key: 1\nrisky.key: 2\n")
    result = run("--no-bundled-rules", "--format", "json", str(conf))
    doc = json.loads(result.stdout)
    assert [(f["code"], f["severity"]) for f in doc["findings"]] == [("FTZ901", "info")]
    assert result.exit_code == 0
    # the command line adds to the project config
    assert run("--no-bundled-rules", "--format", "json", "--fail-on", "info", str(conf)).exit_code == 1


def test_pyproject_project_config(tmp_path: Path) -> None:
    _write(tmp_path / "pyproject.toml",
           f'[tool.flinktune]\nrules = ["{FIXTURE_RULES}"]\nselect = ["FTZ90"]\n"fail-on" = "error"\n')
    conf = _write(tmp_path / "flink-conf.yaml", "old.key: 1\n")
    result = run("--no-bundled-rules", "--format", "text", str(conf))
    assert "FTZ901" in result.stdout and result.exit_code == 0


def test_invalid_project_config_is_one_line(tmp_path: Path) -> None:
    _write(tmp_path / ".flinktune.yaml", "select: [FTZ]\nfail_on: error\n")
    conf = _write(tmp_path / "flink-conf.yaml", "new.key: 1\n")
    result = run(str(conf))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"flinktune: error: {tmp_path / '.flinktune.yaml'}:2: unknown setting 'fail_on' in project config "
        "(allowed: select, ignore, severity, rules, fail-on, flink-version, baseline, completeness)"]


def test_explicit_config_option(tmp_path: Path) -> None:
    cfg = _write(tmp_path / "ci" / "lint.yaml", f"rules: [{FIXTURE_RULES}]\nselect: [FTZ902]\n")
    conf = _write(tmp_path / "flink-conf.yaml", "old.key: 1\ngone.key: 1\n")
    result = run("--no-bundled-rules", "--config", str(cfg), "--format", "json", str(conf))
    assert [f["code"] for f in json.loads(result.stdout)["findings"]] == ["FTZ902"]


# --- baseline --------------------------------------------------------------------------------

def test_baseline_only_new_findings_fail(tmp_path: Path) -> None:
    conf = _write(tmp_path / "flink-conf.yaml", "old.key: 1\ngone.key: 1\n")
    baseline = tmp_path / "flinktune-baseline.json"
    written = run(*ISOLATE, "--write-baseline", str(baseline), str(conf))
    assert written.exit_code == 0 and "wrote 2 findings" in written.stderr
    assert len(json.loads(baseline.read_text(encoding="utf-8"))["findings"]) == 2
    # Unchanged: nothing new.
    same = run(*ISOLATE, "--baseline", str(baseline), str(conf))
    assert same.exit_code == 0 and "(2 in the baseline)" in same.stdout
    # Lines added above move every finding: still nothing new.
    conf.write_text("a.b: 1\nc.d: 2\nold.key: 1\ngone.key: 1\n", encoding="utf-8")
    moved = run(*ISOLATE, "--baseline", str(baseline), str(conf))
    assert moved.exit_code == 0, moved.stdout
    # A new problem fails, and only it is reported.
    conf.write_text("a.b: 1\nold.key: 1\ngone.key: 1\nrisky.key: 1\nold.key: 2\n", encoding="utf-8")
    new = run(*ISOLATE, "--baseline", str(baseline), "--format", "json", str(conf))
    doc = json.loads(new.stdout)
    assert [(f["code"], f["line"]) for f in doc["findings"]] == [("FTZ903", 4), ("FTZ901", 5)]
    assert doc["summary"]["baselined"] == 2 and new.exit_code == 1


def test_missing_baseline_is_exit_2(tmp_path: Path) -> None:
    conf = _write(tmp_path / "flink-conf.yaml", "old.key: 1\n")
    result = run(*ISOLATE, "--baseline", str(tmp_path / "none.json"), str(conf))
    assert result.exit_code == 2 and "baseline file not found" in result.stderr


# --- formats ---------------------------------------------------------------------------------

def test_auto_format_under_github_actions(tmp_path: Path) -> None:
    conf = _write(tmp_path / "flink-conf.yaml", "gone.key: 1\n")
    result = run(*ONLY_FTZ, str(conf), env={"GITHUB_ACTIONS": "true"})
    assert result.stdout.splitlines()[0] == (
        f"::error file={conf},line=1,title=FTZ902 test-gone-key::gone.key was removed; Flink ignores it")
    plain = run(*ONLY_FTZ, str(conf), env={"GITHUB_ACTIONS": "false"})
    assert plain.stdout.startswith(f"{conf}:1: error FTZ902")


def test_sarif_from_the_cli_validates(tmp_path: Path) -> None:
    import jsonschema

    schema = json.loads((Path(__file__).resolve().parents[1] / "data" / "sarif-schema-2.1.0.json")
                        .read_text(encoding="utf-8"))
    conf = _write(tmp_path / "flink-conf.yaml", "old.key: 1\ngone.key: 1\n")
    result = run(*ONLY_FTZ, "--format", "sarif", "flink-conf.yaml",
                 str(tmp_path / "nope.yaml"))
    doc = json.loads(result.stdout)
    jsonschema.Draft4Validator(schema).validate(doc)
    assert [r["ruleId"] for r in doc["runs"][0]["results"]] == ["FTZ901", "FTZ902"]
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "flink-conf.yaml"
    assert result.exit_code == 2 and conf.exists()


def test_junit_and_output_file(tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    conf = _write(tmp_path / "flink-conf.yaml", "gone.key: 1\n")
    out = tmp_path / "report.xml"
    result = run(*ONLY_FTZ, "--format", "junit", "-o", str(out), str(conf))
    assert result.exit_code == 1 and result.stdout == ""
    root = ET.fromstring(out.read_text(encoding="utf-8"))
    assert root.get("failures") == "1"


def test_output_file_is_replaced_atomically_with_a_backup(tmp_path: Path) -> None:
    conf = _write(tmp_path / "flink-conf.yaml", "gone.key: 1\n")
    out = tmp_path / "report.txt"
    out.write_text("previous report\n", encoding="utf-8")
    result = run(*ONLY_FTZ, "-o", str(out), str(conf))
    assert result.exit_code == 1 and "FTZ" in out.read_text(encoding="utf-8")
    assert (tmp_path / "report.txt.bak").read_text(encoding="utf-8") == "previous report\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".report.txt.")]
    # A folder where the report should go: one line, exit 2, nothing written.
    result = run(*ONLY_FTZ, "-o", str(tmp_path), str(conf))
    assert result.exit_code == 2 and "not a regular file" in result.stderr and result.stderr.count("\n") == 1


# --- versions --------------------------------------------------------------------------------

DEPLOYMENT = """\
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: demo
spec:
  flinkVersion: v1_17
  flinkConfiguration:
    taskmanager.numberOfTaskSlots: "2"
"""


def test_version_detection_order(tmp_path: Path) -> None:
    deployment = _write(tmp_path / "k8s" / "deploy.yaml", DEPLOYMENT)
    nested = _write(tmp_path / "c" / "config.yaml", "taskmanager:\n  numberOfTaskSlots: 2\n")
    flat = _write(tmp_path / "f" / "flink-conf.yaml", "taskmanager.numberOfTaskSlots: 2\n")
    commented = _write(tmp_path / "g" / "flink-conf.yaml", "# flinktune: flink-version=1.15\na.b: 1\n")

    def versions(*extra: str) -> dict[str, tuple[str, str]]:
        result = run(*ISOLATE[:5], "--format", "json", *extra,
                     str(deployment), str(nested), str(flat), str(commented))
        return {v["file"]: (v["flink_version"], v["source"]) for v in json.loads(result.stdout)["versions"]}

    assert versions() == {str(deployment): ("1.17", "file"), str(nested): ("1.20", "config.yaml"),
                          str(flat): ("1.20", "default"), str(commented): ("1.15", "comment")}
    _write(tmp_path / ".flinktune.yaml", "flink-version: '1.16'\n")
    assert versions()[str(flat)] == ("1.16", "project")
    assert versions()[str(deployment)] == ("1.17", "file")
    assert set(versions("--flink-version", "2.0").values()) == {("2.0", "flag")}


def test_folder_argument(tmp_path: Path) -> None:
    _write(tmp_path / "repo" / "conf" / "flink-conf.yaml", "gone.key: 1\n")
    _write(tmp_path / "repo" / "k8s" / "deploy.yaml", DEPLOYMENT)
    _write(tmp_path / "repo" / "app" / "settings.yaml", "gone.key: 1\n")
    result = run(*ISOLATE, "--format", "json", str(tmp_path / "repo"))
    doc = json.loads(result.stdout)
    assert sorted(Path(f).relative_to(tmp_path / "repo").as_posix() for f in doc["files"]) == [
        "conf/flink-conf.yaml", "k8s/deploy.yaml"]


# --- --fix -----------------------------------------------------------------------------------

def test_fix_applies_only_safe_fixes_and_keeps_a_backup(tmp_path: Path) -> None:
    original = ("# my cluster\n"
                "old.key: 1   # keep this comment\n"
                "risky.key: 2\n"
                "gone.key: 3\n"
                "new.other: 4\n")
    conf = _write(tmp_path / "flink-conf.yaml", original)
    result = run(*ISOLATE, "--fix", str(conf))
    assert conf.read_text(encoding="utf-8") == ("# my cluster\n"
                                                "new.key: 1   # keep this comment\n"
                                                "risky.key: 2\n"
                                                "new.other: 4\n")
    assert (tmp_path / "flink-conf.yaml.bak").read_text(encoding="utf-8") == original
    lines = result.stdout.splitlines()
    assert f"{conf}:2: fixed FTZ901: renamed old.key to new.key" in lines
    assert f"{conf}:4: fixed FTZ902: deleted gone.key" in lines
    # What is left is reported with the new line numbers; the unsafe fix is only suggested.
    assert f"{conf}:3: info FTZ903 [test-risky-key] risky.key is set to 2" in lines
    assert result.exit_code == 0, result.stdout          # only an info left; fail-on warning
    assert f"flinktune: note: {conf}: fixed for Flink 1.20, which was assumed" in result.stderr


def test_fix_in_a_manifest_and_rename_onto_an_existing_key(tmp_path: Path) -> None:
    manifest = _write(tmp_path / "deploy.yaml", DEPLOYMENT.replace(
        '    taskmanager.numberOfTaskSlots: "2"\n',
        '    taskmanager.numberOfTaskSlots: "2"\n    old.key: "1"\n    new.key: "2"\n    gone.key: "x"\n'))
    result = run(*ISOLATE, "--fix", str(manifest))
    text = manifest.read_text(encoding="utf-8")
    assert "old.key" not in text and "gone.key" not in text and 'new.key: "2"' in text
    assert 'taskmanager.numberOfTaskSlots: "2"' in text and "flinkVersion: v1_17" in text
    assert f"{manifest}:9: fixed FTZ901: deleted old.key" in result.stdout
    assert result.exit_code == 0


def test_a_fix_the_writer_cannot_make_is_left_to_the_user_and_the_others_are_written(tmp_path: Path) -> None:
    # old.key sits in a flow mapping {...}, which the writer does not edit. It used to stop every fix
    # of the file with "not fixed: ... edit it by hand" and exit 2, though the file had been judged;
    # then lint called it "fixable with --fix" and --fix left it with a note. Now the finding says so.
    original = "old: {key: 1}\ngone.key: 3\nnew.other: 4\n"
    conf = _write(tmp_path / "config.yaml", original)
    told = run(*ISOLATE, "--flink-version", "1.20", str(conf))
    (old_line,) = [line for line in told.stdout.splitlines() if "FTZ901" in line]
    assert old_line.endswith("(--fix cannot write this: 'old.key' is inside a flow mapping {...})")
    assert "    fix: rename old.key to new.key\n" in told.stdout          # no "(fixable with --fix)"
    assert "    fix: delete gone.key (fixable with --fix)" in told.stdout
    result = run(*ISOLATE, "--fix", "--flink-version", "1.20", str(conf))
    assert conf.read_text(encoding="utf-8") == "old: {key: 1}\nnew.other: 4\n"
    assert (tmp_path / "config.yaml.bak").read_text(encoding="utf-8") == original
    assert f"{conf}:2: fixed FTZ902: deleted gone.key" in result.stdout
    assert "error" not in result.stderr
    # The finding stays (a warning: exit 1), not "could not be judged" (2).
    assert "FTZ901" in result.stdout and result.exit_code == 1, result.stdout + result.stderr


def test_a_key_behind_a_yaml_alias_is_not_called_fixable(tmp_path: Path) -> None:
    conf = _write(tmp_path / "config.yaml", "base: &b\n  key: 1\nold: *b\n")
    result = run(*ISOLATE, "--flink-version", "1.20", str(conf))
    (old_line,) = [line for line in result.stdout.splitlines() if "FTZ901" in line]
    assert old_line.endswith("(--fix cannot write this: 'old.key' is defined through a YAML alias)")
    assert "fixable" not in result.stdout


def test_a_key_of_a_flat_file_or_a_block_mapping_stays_fixable(tmp_path: Path) -> None:
    for name, text in (("flink-conf.yaml", "old.key: {1}\n"), ("config.yaml", "old:\n  key: 1\nx: {a: 1}\n")):
        conf = _write(tmp_path / name, text)
        result = run(*ISOLATE, "--flink-version", "1.20", str(conf))
        assert "    fix: rename old.key to new.key (fixable with --fix)" in result.stdout, result.stdout
        assert "cannot write" not in result.stdout
        conf.unlink()


def test_fix_names_the_inferred_version_it_fixed_for(tmp_path: Path) -> None:
    # A pre-1.13 key shows an old file, and state.checkpoints.dir without its 1.20 successor puts it
    # before 1.20: inferred 1.19. Renaming the old key removes that evidence (the file is judged at the
    # default afterwards), so the note names the version of the fix, and says it was inferred.
    conf = _write(tmp_path / "flink-conf.yaml",
                  "taskmanager.network.memory.min: 64mb\nstate.checkpoints.dir: s3://b/c\n")
    result = run("--fix", str(conf))
    assert "taskmanager.memory.network.min: 64mb" in conf.read_text(encoding="utf-8")
    assert (f"flinktune: note: {conf}: fixed for Flink 1.19, inferred from its content; pass --flink-version"
            in result.stderr), result.stderr


def test_suppressed_findings_are_not_fixed(tmp_path: Path) -> None:
    text = "gone.key: 3 # flinktune: disable=FTZ902\n"
    conf = _write(tmp_path / "flink-conf.yaml", text)
    result = run(*ISOLATE, "--fix", str(conf))
    assert conf.read_text(encoding="utf-8") == text and not (tmp_path / "flink-conf.yaml.bak").exists()
    assert result.exit_code == 0


def test_fix_refuses_a_symlink_elsewhere_without_follow(tmp_path: Path) -> None:
    import os

    real = _write(tmp_path / "real" / "flink-conf.yaml", "gone.key: 1\n")
    link_dir = tmp_path / "links"
    link_dir.mkdir()
    link = link_dir / "flink-conf.yaml"
    os.symlink(real, link)
    refused = run(*ISOLATE, "--fix", str(link))
    assert refused.exit_code == 2 and "use --follow-symlinks" in refused.stderr
    assert real.read_text(encoding="utf-8") == "gone.key: 1\n" and link.is_symlink()
    followed = run(*ISOLATE, "--fix", "--follow-symlinks", str(link))
    assert followed.exit_code == 0 and real.read_text(encoding="utf-8") == "" and link.is_symlink()


def test_parallelism_and_slots_override_the_file(tmp_path: Path) -> None:
    conf = _write(tmp_path / "flink-conf.yaml", "parallelism.default: 4\ntaskmanager.numberOfTaskSlots: 2\n")
    assert "FTZ904" not in run(*ISOLATE, str(conf)).stdout
    result = run(*ISOLATE, "--parallelism", "300", "--slots", "8", "--taskmanagers", "3", str(conf))
    assert (f"{conf}: warning FTZ904 [test-env-parallelism] parallelism 300 with 8 slots on 3 TaskManager(s)"
            in result.stdout)
    assert run(*ISOLATE, "--parallelism", "0", str(conf)).exit_code == 2


def test_fix_in_a_multi_document_manifest(tmp_path: Path) -> None:
    second = DEPLOYMENT.replace("name: demo", "name: other").replace(
        '    taskmanager.numberOfTaskSlots: "2"\n', '    gone.key: "1"\n    old.key: "2"\n')
    first = DEPLOYMENT.replace('    taskmanager.numberOfTaskSlots: "2"\n',
                               '    old.key: "1"\n    taskmanager.numberOfTaskSlots: "2"\n')
    manifest = _write(tmp_path / "deploy.yaml", first + "---\n" + second)
    result = run(*ISOLATE, "--fix", "--format", "json", str(manifest))
    text = manifest.read_text(encoding="utf-8")
    assert text.count("new.key:") == 2 and "old.key" not in text and "gone.key" not in text
    assert text.count("name: demo") == 1 and text.count("name: other") == 1
    doc = json.loads(result.stdout)
    assert sorted(f["description"] for f in doc["fixes"]) == [
        "deleted gone.key", "renamed old.key to new.key", "renamed old.key to new.key"]
    assert doc["findings"] == [] and result.exit_code == 0


def test_invalid_rule_folder_lists_every_problem(tmp_path: Path) -> None:
    rules = tmp_path / "my-rules"
    _write(rules / "bad.yaml", "code: FTZ1\nname: Bad Name\n")
    conf = _write(tmp_path / "flink-conf.yaml", "a.b: 1\n")
    result = run("--no-bundled-rules", "--rules", str(rules), str(conf))
    assert result.exit_code == 2 and "Traceback" not in result.output
    lines = result.stderr.splitlines()
    pattern = "String should match pattern '^FT[A-Z][0-9]{3}$'"
    assert f"flinktune: error: {rules / 'bad.yaml'}: code: {pattern}" in lines
    assert any("severity: Field required" in line for line in lines)
    # then how many, without repeating the first
    assert lines[-1] == f"flinktune: error: {len(lines) - 1} problems in rule files"


def test_a_missing_rule_folder_is_said_once(tmp_path: Path) -> None:
    conf = _write(tmp_path / "flink-conf.yaml", "new.key: 1\n")
    result = run("--rules", str(tmp_path / "nonexistent"), str(conf))
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"flinktune: error: {tmp_path / 'nonexistent'}: rule folder does not exist"]


# --- a selector that matches no rule ------------------------------------------------------------

NO_RULE = "matches no lint rule (codes look like {}; `flinktune rules list` lists them)"


@pytest.mark.parametrize(("args", "line"), [
    (["--select", "FTX999"], "--select FTX999 " + NO_RULE.format("FTC001")),
    (["--select", "FTC003", "--ignore", "ftc0,deprecated-key"],
     "--ignore deprecated-key " + NO_RULE.format("FTC001")),
    # what the run knows: without the bundled rules, FTC003 is no rule of it
    ([*ONLY_FTZ, "--select", "FTC003"], "--select FTC003 " + NO_RULE.format("FTL001")),
])
def test_a_selector_that_matches_no_rule_is_a_usage_error(tmp_path: Path, args: list[str], line: str) -> None:
    conf = _write(tmp_path / "flink-conf.yaml", "taskmanager.tmp.dirs: /tmp\n")
    result = run(*args, str(conf))
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"flinktune: error: {line}\n")


@pytest.mark.parametrize("args", [
    ["--select", "FTC"], ["--select", "ftc0"], ["--select", "FTC003", "--ignore", "FTC004"],
    ["--select", "FTC112,FTL"],                      # a deployment (process) rule, the built-in FTL001
    [*ONLY_FTZ, "--ignore", "FTZ903"],
])
def test_selectors_that_match_a_rule_still_work(tmp_path: Path, args: list[str]) -> None:
    conf = _write(tmp_path / "flink-conf.yaml", "taskmanager.tmp.dirs: /tmp\n")
    result = run(*args, str(conf))
    assert result.exit_code in (0, 1) and result.stderr == "", result.stderr


@pytest.mark.parametrize(("name", "text", "line", "said"), [
    (".flinktune.yaml", "fail-on: error\nselect: [FTC, FTX999]\n", 2, "select FTX999"),
    (".flinktune.yaml", "ignore: [FTC9]\n", 1, "ignore FTC9"),
    (".flinktune.yaml", "severity:\n  FTC003: error\n  FTQ: info\n", 3, "severity FTQ"),
    # another tool's `select =` above [tool.flinktune] is not the line
    ("pyproject.toml", '[tool.ruff]\nselect = ["E"]\n\n[tool.flinktune]\nselect = ["FTX"]\n', 5,
     "select FTX"),
])
def test_a_project_config_code_that_matches_no_rule_is_one_line(tmp_path: Path, name: str, text: str,
                                                                 line: int, said: str) -> None:
    _write(tmp_path / name, text)
    conf = _write(tmp_path / "conf" / "flink-conf.yaml", "taskmanager.tmp.dirs: /tmp\n")
    result = run(str(conf))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"flinktune: error: {tmp_path / name}:{line}: {said} {NO_RULE.format('FTC001')}\n"


# --- a deprecated key whose replacement is set too -------------------------------------------------

def test_deprecated_key_beside_its_replacement_is_fixed_by_deleting_it_and_says_so(tmp_path: Path) -> None:
    text = "taskmanager.tmp.dirs: /tmp/a\nio.tmp.dirs: /tmp/b\n"
    conf = _write(tmp_path / "flink-conf.yaml", text)
    args = ["--select", "FTC003", "--flink-version", "1.20"]
    shown = run(*args, "--format", "text", str(conf))
    assert ("    fix: delete taskmanager.tmp.dirs (io.tmp.dirs is already set and wins) (fixable with --fix)"
            in shown.stdout.splitlines()), shown.stdout
    fix = json.loads(run(*args, "--format", "json", str(conf)).stdout)["findings"][0]["fix"]
    assert fix == {"action": "delete", "key": "taskmanager.tmp.dirs", "value": None, "new_key": "io.tmp.dirs",
                   "applicability": "safe"}
    sarif = json.loads(run(*args, "--format", "sarif", str(conf)).stdout)
    assert sarif["runs"][0]["results"][0]["properties"]["fix"]["action"] == "delete"
    fixed = run(*args, "--format", "text", "--fix", str(conf))
    assert f"{conf}:1: fixed FTC003: deleted taskmanager.tmp.dirs" in fixed.stdout.splitlines()
    assert conf.read_text(encoding="utf-8") == "io.tmp.dirs: /tmp/b\n" and fixed.exit_code == 0
    # alone, the deprecated key is renamed, as before
    _write(conf, "taskmanager.tmp.dirs: /tmp/a\n")
    assert "    fix: rename taskmanager.tmp.dirs to io.tmp.dirs (fixable with --fix)" in run(
        *args, "--format", "text", str(conf)).stdout.splitlines()
