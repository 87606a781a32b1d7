"""A finding that hangs on a version nobody stated says so (issue 29: no finding depends on something
lint did not read without saying so): a version inferred from the keys, or flinktune's default (1.20)
when nothing names one. A stated version (a comment, --flink-version) adds nothing.

Flink facts (the catalog, flinktune/data/flink_options.json, from each release's option classes):
``state.backend`` is deprecated from 1.17 for ``state.backend.type`` (StateBackendOptions @1.17);
``state.checkpoints.dir`` from 1.20 for ``execution.checkpointing.dir`` (CheckpointingOptions @1.20);
``queryable-state.proxy.ports`` from 1.18 with no successor (QueryableStateOptions, @Deprecated with
the whole of queryable state in 1.18). A flat flink-conf.yaml is read by 1.13-1.20 (never 2.x: FLINK-33677).
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
    conf.write_text("state.backend: rocksdb\ntaskmanager.numberOfTaskSlots: 2\n")
    message = _messages(conf)["FTC003"]
    assert "judged at Flink 1.20, the default: nothing names the file's version" in message
    assert NOTE in message


def test_a_deprecation_true_for_few_of_the_releases_the_file_fits_is_held_back_and_named(
        tmp_path: Path) -> None:
    """At the default version, a flink-conf.yaml may be for any of 1.13-1.20. 1.20's rename of
    state.checkpoints.dir holds for one of those eight releases (and drops the setting on the seven
    others): not a finding, but one line naming it. 1.18's queryable-state deprecation holds for three
    of eight: held too. 1.17's state.backend rename, right for four of eight, stays a finding."""
    from flinktune.report.json_report import render_json
    from flinktune.report.text import render_text

    conf = tmp_path / "flink-conf.yaml"
    conf.write_text("state.checkpoints.dir: s3://bucket/cp\nqueryable-state.proxy.ports: 9069\n"
                    "state.backend: rocksdb\n")
    result = lint_paths([str(conf)], LintOptions())
    assert {(f.code, f.location.key) for f in result.findings if f.code in ("FTC003", "FTC006")} == {
        ("FTC003", "state.backend")}
    [version] = result.versions
    assert [(line, key, new, str(since)) for line, key, new, since in version.held] == [
        (1, "state.checkpoints.dir", "execution.checkpointing.dir", "1.20"),
        (2, "queryable-state.proxy.ports", None, "1.18")]
    text = render_text(result)
    assert ("not reported: 1 key deprecated in Flink 1.20 (state.checkpoints.dir (line 1) -> "
            "execution.checkpointing.dir): it holds only from Flink 1.20 on") in text
    assert "1 key deprecated in Flink 1.18 (queryable-state.proxy.ports (line 2))" in text
    assert '"held_deprecations"' in render_json(result)
    from flinktune.report.github import render_github

    github = render_github(result)
    assert "flinktune: " + str(conf) + ": not reported: 1 key deprecated in Flink 1.20" in github
    assert "::" not in "".join(line for line in github.splitlines() if "not reported" in line)
    # A run that does not select the deprecation rules names nothing held back either.
    quiet = lint_paths([str(conf)], LintOptions(ignore=("FTC003", "FTC006")))
    assert not quiet.versions[0].held and "not reported" not in render_text(quiet)
    # Stated, they are findings again.
    for stated in (LintOptions(flink_version=parse_version("1.20")),):
        found = lint_paths([str(conf)], stated)
        assert {f.location.key for f in found.findings if f.code in ("FTC003", "FTC006")} == {
            "state.checkpoints.dir", "queryable-state.proxy.ports", "state.backend"}
        assert not found.versions[0].held
    # Content that fits only newer releases: 1.20's rename is right for most of them and is reported.
    newer = tmp_path / "newer.yaml"
    newer.write_text("state.checkpoints.dir: s3://bucket/cp\nexecution.checkpointing.savepoint-dir: s3://b/sp\n")
    assert "FTC003" in _messages(newer)


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


def test_a_rename_older_releases_cannot_read_is_info_and_not_applied_at_an_unstated_version(
        tmp_path: Path) -> None:
    """state.backend.type exists only from 1.17 (StateBackendOptions @1.17; before, the catalog has only
    state.backend): renaming on a 1.16 cluster would drop the setting, since Flink ignores keys it does
    not know. Unstated version: info, manual, not written by --fix."""
    from flinktune.change import Applicability
    from flinktune.findings import Severity

    conf = tmp_path / "flink-conf.yaml"
    text = "state.backend: rocksdb\ntaskmanager.numberOfTaskSlots: 2\n"
    conf.write_text(text)
    finding = next(f for f in lint_paths([str(conf)], LintOptions()).findings if f.code == "FTC003")
    assert finding.severity is Severity.INFO
    assert finding.fix is not None and finding.fix.applicability is Applicability.MANUAL
    assert "Flink 1.16 and earlier, which also read this key, do not read 'state.backend.type'" \
        in finding.message
    lint_paths([str(conf)], LintOptions(fix=True))
    assert conf.read_text() == text
    # Stated: the usual warning and a safe rename that --fix applies.
    stated = lint_paths([str(conf)], LintOptions(flink_version=parse_version("1.20")))
    finding = next(f for f in stated.findings if f.code == "FTC003")
    assert finding.severity is Severity.WARNING and finding.fix.applicability is Applicability.SAFE  # type: ignore[union-attr]
    lint_paths([str(conf)], LintOptions(fix=True, flink_version=parse_version("1.20")))
    assert "state.backend.type: rocksdb" in conf.read_text()


def test_a_release_older_than_the_catalogs_says_so_and_leaves_renames_to_the_user(tmp_path: Path) -> None:
    # flink:1.9.1 is judged as 1.13, the oldest catalog. A rename to a key of 1.13 may be one 1.9 does
    # not read (taskmanager.memory.process.size came with 1.10), so it is not applied by --fix, and the
    # finding names the image. deployment-facts.md item 7: older images ignore the newer memory keys.
    (tmp_path / "docker-compose.yml").write_text(
        "services:\n"
        "  jobmanager:\n    image: flink:1.9.1\n    command: jobmanager\n"
        "    volumes:\n      - ./conf:/opt/flink/conf\n"
        "  taskmanager:\n    image: flink:1.9.1\n    command: taskmanager\n"
        "    volumes:\n      - ./conf:/opt/flink/conf\n")
    (tmp_path / "conf").mkdir()
    conf = tmp_path / "conf" / "flink-conf.yaml"
    conf.write_text("jobmanager.rpc.address: jobmanager\njobmanager.web.checkpoints.history: 10\n")
    result = lint_paths([str(tmp_path)], LintOptions())
    [finding] = [f for f in result.findings if f.code == "FTC003"]
    assert "image flink:1.9.1, older than 1.13 and judged as 1.13" in finding.message
    assert "may not read the keys named here" in finding.message
    assert str(finding.fix.applicability) == "manual"
    # The same file with the image at 1.13: the usual safe rename, no note.
    compose = tmp_path / "docker-compose.yml"
    compose.write_text(compose.read_text().replace("1.9.1", "1.13.6"))
    [finding] = [f for f in lint_paths([str(tmp_path)], LintOptions()).findings if f.code == "FTC003"]
    assert "older than" not in finding.message and str(finding.fix.applicability) == "safe"


def test_an_inferred_range_holds_back_what_holds_for_few_of_its_releases(tmp_path: Path) -> None:
    """An Akka key deprecated before 1.13 shows an old file, and state.backend without state.backend.type
    one written before 1.17: a flink-conf.yaml of 1.13-1.16 (inferred). A reporter configured by '.class'
    is deprecated from 1.16 (the reporter factory replaced it): one release of those four, held back;
    the line says what the version was inferred from."""
    from flinktune.report.text import render_text

    conf = tmp_path / "flink-conf.yaml"
    conf.write_text("akka.watch.heartbeat.interval: 10 s\nstate.backend: rocksdb\n"
                    "metrics.reporter.prom.class: org.apache.flink.metrics.prometheus.PrometheusReporter\n")
    result = lint_paths([str(conf)], LintOptions())
    [version] = result.versions
    assert version.source == "inferred" and str(version.version) == "1.16", version
    assert [key for _line, key, _new, _since in version.held] == ["metrics.reporter.prom.class"]
    assert not [f for f in result.findings if f.location.key == "metrics.reporter.prom.class"
                and f.code in ("FTC003", "FTC006")]
    assert "checked against Flink 1.16, inferred: Flink 1.13-1.16" in render_text(result)
    # A comment naming the version is the file's word: nothing held.
    named = tmp_path / "named.yaml"
    named.write_text("# settings for Flink 1.16\n" + conf.read_text())
    assert not lint_paths([str(named)], LintOptions()).versions[0].held
