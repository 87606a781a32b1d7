"""Lint reads the deployment around the configuration: a compose file named on the command line is a
deployment, never a Flink config; a finding that rests on the deployment is a warning when lint saw the
deployment files and info (saying what it could not see) when it did not; "no memory size" is judged on
what the process really runs with (a FLINK_PROPERTIES overlay is merged into the image's configuration,
which sets process sizes; a mounted file replaces it)."""

from __future__ import annotations

from pathlib import Path

from flinktune.findings import Severity
from flinktune.lint.model import LintOptions
from flinktune.lint.runner import lint_paths

COMPOSE = """\
services:
  jobmanager:
    image: flink:1.20.1
    command: jobmanager
    environment:
      - |
        FLINK_PROPERTIES=
        jobmanager.rpc.address: jobmanager
        execution.checkpointing.dir: file:///checkpoints
  taskmanager:
    image: flink:1.20.1
    command: taskmanager
    environment:
      - |
        FLINK_PROPERTIES=
        jobmanager.rpc.address: jobmanager
        execution.checkpointing.dir: file:///checkpoints
"""


def _codes(result, code: str | None = None) -> list[tuple[str, str, int | None, Severity]]:
    return [(f.code, Path(f.location.file).name, f.location.line, f.severity) for f in result.findings
            if code is None or f.code == code]


def test_compose_named_explicitly_is_a_deployment(tmp_path: Path) -> None:
    compose = tmp_path / "docker-compose.yml"
    compose.write_text(COMPOSE)
    result = lint_paths([str(compose)], LintOptions())
    # the compose file's own keys (services, image, command...) are not judged as Flink options
    assert not [f for f in result.findings if f.code in ("FTC001", "FTC002")]
    # its FLINK_PROPERTIES are: both containers write checkpoints to their own disk
    found = _codes(result, "FTC062")
    assert ("FTC062", "docker-compose.yml", 9, Severity.WARNING) in found
    assert str(compose) in result.files and not result.problems


def test_unseen_deployment_makes_a_warning_info(tmp_path: Path) -> None:
    config = tmp_path / "flink-conf.yaml"
    config.write_text("execution.checkpointing.dir: file:///checkpoints\n"
                      "jobmanager.rpc.address: jobmanager\n")
    [finding] = [f for f in lint_paths([str(config)], LintOptions()).findings if f.code == "FTC062"]
    assert finding.severity is Severity.INFO and "lint saw no docker-compose file" in finding.message
    # the same file beside the compose file that mounts it into both containers without a volume there
    (tmp_path / "docker-compose.yml").write_text(
        "services:\n"
        "  jobmanager:\n    image: flink:1.20.1\n    command: jobmanager\n"
        "    volumes: ['./flink-conf.yaml:/opt/flink/conf/flink-conf.yaml']\n"
        "  taskmanager:\n    image: flink:1.20.1\n    command: taskmanager\n"
        "    volumes: ['./flink-conf.yaml:/opt/flink/conf/flink-conf.yaml']\n")
    [finding] = [f for f in lint_paths([str(config)], LintOptions()).findings if f.code == "FTC062"]
    assert finding.severity is Severity.WARNING and "no volume is mounted there" in finding.message
    assert {r.line for r in finding.related} >= {2, 6}      # both services are cited


def test_no_memory_size_judged_on_what_runs(tmp_path: Path) -> None:
    # an overlay: the image's configuration sets taskmanager.memory.process.size, nothing is missing
    (tmp_path / "docker-compose.yml").write_text(
        "services:\n  taskmanager:\n    image: flink:1.20.1\n    command: taskmanager\n"
        "    environment:\n      FLINK_PROPERTIES: \"taskmanager.numberOfTaskSlots: 2\"\n")
    assert _codes(lint_paths([str(tmp_path)], LintOptions()), "FTC050") == []
    # a complete file mounted over the image's: no size at all, the TaskManager refuses to start
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "flink-conf.yaml").write_text("taskmanager.numberOfTaskSlots: 2\n")
    (tmp_path / "docker-compose.yml").write_text(
        "services:\n  taskmanager:\n    image: flink:1.20.1\n    command: taskmanager\n"
        "    volumes: ['./conf:/opt/flink/conf']\n")
    found = _codes(lint_paths([str(tmp_path)], LintOptions()), "FTC050")
    assert found == [("FTC050", "flink-conf.yaml", None, Severity.ERROR)]


def test_process_findings_honour_suppressions(tmp_path: Path) -> None:
    compose = tmp_path / "docker-compose.yml"
    compose.write_text("services:\n  jobmanager:\n    image: flink:latest  # flinktune: disable=FTC112\n"
                       "    command: jobmanager\n")
    assert _codes(lint_paths([str(compose)], LintOptions()), "FTC112") == []
    compose.write_text("services:\n  jobmanager:\n    image: flink:latest\n    command: jobmanager\n")
    assert _codes(lint_paths([str(compose)], LintOptions()), "FTC112") == [
        ("FTC112", "docker-compose.yml", 3, Severity.WARNING)]


def test_a_moving_tag_is_told_the_newest_patch_releases_flinktune_knows(tmp_path: Path) -> None:
    # The suggested tags come from the one table of releases, so a new patch there moves them too.
    from flinktune.versions import PATCH_RELEASES

    def newest(major: int) -> str:
        return max((patch for line, patch in PATCH_RELEASES if line.startswith(f"{major}.")),
                   key=lambda patch: tuple(int(part) for part in patch.split(".")))

    compose = tmp_path / "docker-compose.yml"
    compose.write_text("services:\n  jobmanager:\n    image: flink:latest\n    command: jobmanager\n")
    [finding] = [f for f in lint_paths([str(compose)], LintOptions()).findings if f.code == "FTC112"]
    assert finding.message.endswith(f"pin a release, e.g. flink:{newest(1)}-java17 or flink:{newest(2)}")


def test_deployment_rules_are_among_the_rules_a_lint_reports(tmp_path: Path) -> None:
    # SARIF lists result.rules as tool.driver.rules, and --select accepts the codes it holds.
    compose = tmp_path / "docker-compose.yml"
    compose.write_text("services:\n  jobmanager:\n    image: flink:latest\n    command: jobmanager\n")
    result = lint_paths([str(compose)], LintOptions())
    assert "FTC112" in {f.code for f in result.findings} and "FTC112" in {info.code for info in result.rules}
