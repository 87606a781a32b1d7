"""Walk every command's --help: it works, shared flags mean the same everywhere, and help shows
defaults as defaults and examples as examples (issue 15, defect 6 and the conventions).

Before: `recommend --help` said "--latency-target ... (20ms)" and "--record-size ... (200b)",
which read as defaults but were examples (the real default is none / unknown).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from flinktune.cli.app import app

# A bare "(20ms)" / "(200b)" / "(10Gbit/s)" at the end of a help text: a value with no word saying
# whether it is the default or an example.
_BARE_VALUE = re.compile(r"\((\d[\d.,]*\s*[A-Za-z/%]+)\)")
SHARED = {"-f": "--format", "-o": "--output", "-q": "--quiet", "-v": "--verbose"}


def _commands() -> Iterator[tuple[list[str], Any]]:
    root = typer.main.get_command(app)

    def walk(command: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
        subs = getattr(command, "commands", None)
        if subs:
            yield path, command
            for name, sub in subs.items():
                yield from walk(sub, [*path, name])
        else:
            yield path, command

    yield from walk(root, [])


COMMANDS = list(_commands())


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) or "flinktune" for p, _ in COMMANDS])
def test_help_works_and_is_honest(path: list[str], command: Any) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output
    for param in getattr(command, "params", []):
        text = getattr(param, "help", None) or ""
        for match in _BARE_VALUE.finditer(text):
            before = text[: match.start()].lower()
            assert "e.g." in before[-40:] or "default" in before[-40:], (
                f"{' '.join(path)} {param.opts}: '{match.group(0)}' reads as a default; "
                "say 'e.g.' or 'default'"
            )


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) or "flinktune" for p, _ in COMMANDS])
def test_shared_flags_mean_the_same(path: list[str], command: Any) -> None:
    options = [p for p in getattr(command, "params", []) if getattr(p, "param_type_name", "") == "option"]
    by_flag = {flag: p for p in options for flag in p.opts}
    for short, long in SHARED.items():
        if short in by_flag:
            assert long in by_flag[short].opts, f"{' '.join(path)}: {short} is not {long}"
    if "--format" in by_flag:
        assert "-f" in by_flag["--format"].opts, f"{' '.join(path)}: --format without -f"


def test_rules_explain_takes_a_code_or_a_name() -> None:
    by_code = CliRunner().invoke(app, ["rules", "explain", "FTC015"])
    assert by_code.exit_code == 0, by_code.output
    name = by_code.output.split()[1] if by_code.output.split()[0] == "FTC015" else None
    from flinktune.rules import load_rules

    rule = load_rules().get("FTC015")
    assert rule is not None
    by_name = CliRunner().invoke(app, ["rules", "explain", rule.name])
    assert by_name.exit_code == 0, by_name.output
    assert by_name.output == by_code.output
    del name
    unknown = CliRunner().invoke(app, ["rules", "explain", "no-such-rule"])
    assert unknown.exit_code == 2


def test_lint_names_the_catalog_it_judged_by(tmp_path: Any) -> None:
    import subprocess
    import sys

    conf = tmp_path / "flink-conf.yaml"
    conf.write_text("taskmanager.numberOfTaskSlots: 2\n")
    run = [sys.executable, "-m", "flinktune", "lint", str(conf), "--flink-version"]
    newer = subprocess.run(
        [*run, "9.9"], capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path
    )
    from flinktune.versions import newest_known

    assert f"judged by Flink {newest_known()}" in newer.stderr, newer.stderr
    # Older than the oldest catalog (1.13): refused, one line, exit 2 (docs/lint.md).
    older = subprocess.run(
        [*run, "1.12"], capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path
    )
    assert older.returncode == 2 and "older than the oldest supported version 1.13" in older.stderr


# --- the shared flags (issue 15, "One command line") ---------------------------------------------

# Every leaf command, with the shared flags it must have. Every command: -q/--quiet, -v/--verbose,
# --no-color; a command with a report: -f/--format and -o/--output; a command that reads a Flink
# version: --flink-version; one that reads an environment: --profile. A new command must be added
# here (test_the_table_names_every_command), so it cannot ship without them.
EVERY = ("--quiet", "--verbose", "--no-color")
REPORT = ("--format", "--output")
SHARED_FLAGS: dict[str, tuple[str, ...]] = {
    "lint": (*EVERY, *REPORT, "--flink-version"),
    "model": (*EVERY, *REPORT, "--flink-version", "--profile"),
    "simulate": (*EVERY, *REPORT),                  # a scenario states no Flink version, takes no profile
    "analyze": (*EVERY, *REPORT, "--flink-version"),
    "recommend": (*EVERY, *REPORT, "--flink-version", "--profile"),   # -o: the recommended config
    "collect": (*EVERY, *REPORT),                   # -o: the dump's folder; its report: one line or JSON
    "compare": (*EVERY, *REPORT, "--flink-version"),
    "rules list": (*EVERY, *REPORT),
}
# They print a rule or a pass/fail count: no report to format or redirect.
WITHOUT_SHARED_FLAGS = {"rules explain", "rules check"}
SHORT = {"--format": "-f", "--output": "-o", "--quiet": "-q", "--verbose": "-v"}
BOOLEAN = {"--quiet", "--verbose", "--no-color"}
LEAVES = {" ".join(path): command for path, command in COMMANDS if not getattr(command, "commands", None)}


def test_the_table_names_every_command() -> None:
    assert set(LEAVES) == set(SHARED_FLAGS) | WITHOUT_SHARED_FLAGS


@pytest.mark.parametrize("name", sorted(SHARED_FLAGS))
def test_every_command_has_its_shared_flags(name: str) -> None:
    options = [p for p in LEAVES[name].params if getattr(p, "param_type_name", "") == "option"]
    by_flag = {flag: p for p in options for flag in p.opts}
    for flag in SHARED_FLAGS[name]:
        assert flag in by_flag, f"{name} lacks {flag}"
        param = by_flag[flag]
        if flag in SHORT:
            assert SHORT[flag] in param.opts, f"{name}: {flag} without {SHORT[flag]}"
        assert bool(param.is_flag) == (flag in BOOLEAN), f"{name} {flag}: flag or value as elsewhere"
        text = (param.help or "").lower()
        # Same meaning everywhere: the help says it in the same words.
        if flag == "--quiet":
            assert "errors only" in text, (name, param.help)
        if flag == "--no-color":
            assert text.startswith("no ansi colours"), (name, param.help)
        if flag == "--output" and name not in ("recommend", "collect"):
            assert "write the report to file" in text, (name, param.help)
    if "--output" in SHARED_FLAGS[name]:
        meaning = (by_flag["--output"].help or "").lower()
        if name == "recommend":
            assert "recommended config" in meaning     # its documented, different meaning
        if name == "collect":
            assert "folder" in meaning


def test_help_defaults_are_the_real_defaults() -> None:
    """recommend --exchanges said "(default 1)"; without a plan it is the pessimistic 3."""
    from flinktune.model.sweep import PARAM_BY_NAME
    from flinktune.situation import DEFAULT_EXCHANGES

    def help_of(command: str, flag: str) -> str:
        return next(p.help for p in LEAVES[command].params if flag in getattr(p, "opts", ()))

    for command in ("recommend", "lint"):
        text = help_of(command, "--exchanges")
        assert f"pessimistic {DEFAULT_EXCHANGES}" in text and "default 1" not in text, (command, text)
    model_text = help_of("model", "--exchanges")
    assert f"default {PARAM_BY_NAME['exchanges'].default:g}" in model_text   # on its own
    assert f"pessimistic {DEFAULT_EXCHANGES}" in model_text                   # with --config
    assert "keys imply" in help_of("recommend", "--flink-version")          # inferred, as lint
    assert "project config" in help_of("lint", "--fail-on")


# --- what the flags do ---------------------------------------------------------------------------

ESC = "\x1b"
REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "sample_configs"
# A short scenario (a few tenths of a second to simulate) for the simulate flags.
SCENARIO = """\
name: tiny
duration: 3s
warmup: 1s
sample_interval: 1s
cluster: {task_managers: 1, slots_per_tm: 2, bandwidth: 10Gbit/s, rtt: 1ms}
network: {segment_size: 32kb, buffers_per_channel: 2, floating_buffers_per_gate: 8, buffer_timeout: 100ms}
job:
  name: sim-tiny
  vertices:
    - {name: "Source: Gen", parallelism: 2, capacity: 200000, rate: 2000, record_size: {fixed: 200b}}
    - {name: "Sink: Writer", parallelism: 2, capacity: 300000, input: {ship_strategy: HASH}}
"""


def _invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, list(args), env=env)


@pytest.mark.parametrize("argv", [
    ["model", "--parallelism", "200", "--rtt", "2ms"],
    ["model", "--sweep", "rtt=1ms..4ms:3", "-f", "json"],
    ["model", "--config", str(CONF / "flink-2.x.config.yaml"), "-v"],
])
def test_model_output_file_holds_what_stdout_gets(tmp_path: Path, argv: list[str]) -> None:
    shown = _invoke(*argv)
    assert shown.exit_code == 0, shown.output
    target = tmp_path / "model.txt"
    written = _invoke(*argv, "-o", str(target))
    assert written.exit_code == 0, written.output
    assert written.stdout == "" and written.stderr == ""
    assert target.read_text(encoding="utf-8") == shown.stdout


def test_model_verbose_says_where_inputs_came_from(tmp_path: Path) -> None:
    argv = ["model", "--config", str(CONF / "low-latency-streaming.flink-conf.yaml"), "--rtt", "2ms"]
    plain = _invoke(*argv)
    verbose = _invoke(*argv, "-v", "-q", "--no-color")
    assert plain.exit_code == verbose.exit_code == 0, verbose.output
    assert "sources:" not in plain.stdout
    assert "sources:" in verbose.stdout and "  rtt: flag" in verbose.stdout
    assert "(parallelism.default)" in verbose.stdout and "defaults (docs/model.md):" in verbose.stdout
    assert verbose.stderr == ""


@pytest.fixture()
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    return path


def test_simulate_progress_on_stderr_and_none_with_quiet(scenario: Path, tmp_path: Path) -> None:
    shown = _invoke("simulate", str(scenario), "--no-charts", "--export", str(tmp_path / "dump"))
    assert shown.exit_code == 0, shown.output
    lines = shown.stderr.splitlines()
    # Not a terminal: plain stage lines (after the scenario was read and validated: bad input is
    # one line), then the export note.
    assert lines[0] == "flinktune simulate: simulating tiny (3s)"
    assert lines[-1].startswith("wrote ")
    assert shown.stdout.startswith("scenario tiny:")
    quiet = _invoke("simulate", str(scenario), "--no-charts", "-q", "--export", str(tmp_path / "dump2"))
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stderr == ""
    assert (tmp_path / "dump2" / "metrics.parquet").is_file()
    # The report is the same with and without -q (the wall time in its first line aside).
    assert quiet.stdout.splitlines()[2:] == shown.stdout.splitlines()[2:]


def test_simulate_output_file_and_verbose_sweep(scenario: Path, tmp_path: Path) -> None:
    argv = ["simulate", str(scenario), "--sweep", "buffers-per-channel=1,2", "-f", "json"]
    shown = _invoke(*argv, "-q")
    target = tmp_path / "sweep.json"
    written = _invoke(*argv, "-o", str(target), "-v")
    assert shown.exit_code == written.exit_code == 0, written.output
    assert written.stdout == ""
    import json

    def runs(text: str) -> list[dict[str, Any]]:
        # Wall times differ between runs; the simulated results are the same (same seed).
        return [{k: v for k, v in run.items() if k not in ("wall_s", "events_per_s")}
                for run in json.loads(text)["runs"]]

    assert runs(target.read_text(encoding="utf-8")) == runs(shown.stdout)
    stages = [line for line in written.stderr.splitlines() if "simulating" in line]
    assert stages == ["flinktune simulate: simulating buffers-per-channel=1 (1/2)",
                      "flinktune simulate: simulating buffers-per-channel=2 (2/2)"]
    details = [line for line in written.stderr.splitlines() if " events in " in line]
    labels = [line.split(":")[1].strip() for line in details]
    assert labels == ["buffers-per-channel=1", "buffers-per-channel=2"]


def _on_terminal(argv: list[str], stream: str, env_extra: dict[str, str] | None = None) -> tuple[int, str]:
    """Run flinktune with ``stream`` (stdout or stderr) on a pseudo-terminal: what a user sees."""
    import os
    import pty
    import subprocess
    import sys

    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "GITHUB_ACTIONS")}
    env.update({"TERM": "xterm-256color", "COLUMNS": "120"}, **(env_extra or {}))
    other = subprocess.DEVNULL
    proc = subprocess.Popen([sys.executable, "-m", "flinktune", *argv], env=env, cwd=REPO,
                            stdout=slave if stream == "stdout" else other,
                            stderr=slave if stream == "stderr" else other)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:              # EIO: the child closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return proc.wait(timeout=120), b"".join(chunks).decode("utf-8", "replace")


def test_lint_no_color_and_NO_COLOR_on_a_terminal() -> None:
    conf = str(CONF / "legacy-1.x.flink-conf.yaml")
    code, coloured = _on_terminal(["lint", conf], "stdout")
    assert code in (0, 1) and ESC in coloured        # the check is meaningful: a terminal gets colour
    for argv, env in ((["lint", conf, "--no-color"], None), (["lint", conf], {"NO_COLOR": "1"})):
        code, plain = _on_terminal(argv, "stdout", env)
        assert code in (0, 1) and ESC not in plain and "checked" in plain, argv


def test_simulate_no_color_gives_plain_progress_on_a_terminal(scenario: Path) -> None:
    code, live = _on_terminal(["simulate", str(scenario), "--no-charts"], "stderr")
    assert code == 0 and ESC in live                  # the live status line
    code, plain = _on_terminal(["simulate", str(scenario), "--no-charts", "--no-color"], "stderr")
    assert code == 0 and ESC not in plain
    assert "flinktune simulate: simulating tiny (3s)" in plain


@pytest.mark.parametrize("argv", [
    ["model", "--config", str(CONF / "flink-2.x.config.yaml")],
    ["rules", "list"],
    ["recommend", str(CONF / "legacy-1.x.flink-conf.yaml")],
])
def test_text_reports_are_coloured_on_a_terminal_and_plain_with_no_color(argv: list[str]) -> None:
    # Before issue 25 these reports were never coloured and --no-color did nothing in them.
    code, coloured = _on_terminal(argv, "stdout")
    assert code == 0 and ESC in coloured
    for flags, env in ((["--no-color"], None), ([], {"NO_COLOR": "1"})):
        code, plain = _on_terminal([*argv, *flags], "stdout", env)
        assert code == 0 and ESC not in plain, (argv, flags)
    piped = _invoke(*argv)
    assert piped.exit_code == 0 and ESC not in piped.stdout          # not a terminal: never coloured


@pytest.mark.parametrize(("argv", "notes"), [
    (["lint", str(CONF / "legacy-1.x.flink-conf.yaml"), "--flink-version", "9.9"], True),   # newer than known
    (["rules", "list"], False),
    (["model", "--config", str(CONF / "flink-2.x.config.yaml")], False),
    (["recommend", str(CONF / "legacy-1.x.flink-conf.yaml"), "-o", "{tmp}/out.yaml"], True),  # "wrote ..."
    (["simulate", "{scenario}", "--no-charts", "--export", "{tmp}/dump"], True),             # stages, "wrote"
])
def test_quiet_leaves_stderr_empty(argv: list[str], notes: bool, scenario: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    argv = [a.format(tmp=tmp_path, scenario=scenario) for a in argv]

    def run(*extra: str) -> subprocess.CompletedProcess[bytes]:
        done = subprocess.run([sys.executable, "-m", "flinktune", *argv, *extra], capture_output=True,
                              cwd=tmp_path, timeout=300, check=False)
        assert done.returncode in (0, 1) and done.stdout, done.stderr
        return done

    assert bool(run().stderr) == notes          # what -q has to drop (model and rules list: nothing)
    assert run("-q").stderr == b""


def test_lint_quiet_drops_notes_on_both_routes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import subprocess
    import sys

    from flinktune.cli import lint_run
    from flinktune.cli.lint_run import LintArgs, parse_lint_args

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    conf = tmp_path / "flink-conf.yaml"
    conf.write_text("taskmanager.numberOfTaskSlots: 2\n", encoding="utf-8")
    argv = ["lint", str(conf), "--flink-version", "9.9", "--write-baseline", str(tmp_path / "base.json")]
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    for quiet in ([], ["-q"], ["--quiet"]):
        fast = subprocess.run([sys.executable, "-m", "flinktune", *argv, *quiet], capture_output=True,
                              text=True, cwd=tmp_path, env=env, timeout=120)
        typed = _invoke(*argv, *quiet)
        assert (fast.returncode, fast.stdout, fast.stderr) == (typed.exit_code, typed.stdout, typed.stderr)
        if quiet:
            assert fast.stderr == ""
        else:
            assert "is newer than the newest option catalog" in fast.stderr
            assert "to the baseline" in fast.stderr
    # The fast parser reads -q as typer does.
    captured: list[LintArgs] = []
    monkeypatch.setattr(lint_run, "run_lint", lambda args, **_: captured.append(args) or 0)
    for flag in ("-q", "--quiet"):
        assert _invoke("lint", flag, "a.yaml").exit_code == 0
        assert parse_lint_args([flag, "a.yaml"]) == captured[-1] == LintArgs(files=("a.yaml",), quiet=True)
    assert parse_lint_args(["--quiet=yes", "a.yaml"]) is None


def test_lint_errors_survive_quiet(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    result = _invoke("lint", str(missing), "-q")
    assert result.exit_code == 2 and "flinktune: error:" in result.stderr


def test_recommend_quiet_and_verbose(tmp_path: Path) -> None:
    conf = tmp_path / "flink-conf.yaml"
    conf.write_text((CONF / "legacy-1.x.flink-conf.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "recommended.yaml"
    noted = _invoke("recommend", str(conf), "-o", str(out))
    assert noted.exit_code == 0, noted.output
    assert "flinktune: wrote the recommended config to" in noted.stderr
    assert "recommendations for Flink" not in noted.stderr
    recommended = out.read_text(encoding="utf-8")
    quiet = _invoke("recommend", str(conf), "-o", str(out), "-q", "-v")
    assert quiet.exit_code == 0 and quiet.stderr == ""
    assert quiet.stdout == noted.stdout and out.read_text(encoding="utf-8") == recommended
    verbose = _invoke("recommend", str(conf), "-v", "--flink-version", "1.18", "-f", "json")
    assert verbose.exit_code == 0, verbose.output
    assert verbose.stderr == f"flinktune: {conf}: recommendations for Flink 1.18 (flag --flink-version)\n"


def test_rules_list_output_file_and_verbose(tmp_path: Path) -> None:
    shown = _invoke("rules", "list")
    target = tmp_path / "rules.txt"
    written = _invoke("rules", "list", "-o", str(target), "-q", "--no-color")
    assert shown.exit_code == written.exit_code == 0
    assert written.stdout == "" and target.read_text(encoding="utf-8") == shown.stdout
    verbose = _invoke("rules", "list", "-v")
    assert verbose.exit_code == 0
    plain_lines = shown.stdout.splitlines()
    extra = [line for line in verbose.stdout.splitlines() if line not in plain_lines]
    assert extra and all(line.startswith(" " * 8) for line in extra)
    assert "        from: rules/config/" in verbose.stdout and "        why: " in verbose.stdout
    # Each rule's why and file follow its own lines, before the next rule.
    lines = verbose.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("FTC030 "))
    block = lines[first + 1:next(i for i in range(first + 1, len(lines)) if not lines[i].startswith(" "))]
    assert any("FTC030" in line for line in block if line.lstrip().startswith("from:"))


def _fake_collect(polls: int) -> Any:
    """collect() as the CLI calls it, with ``polls`` polls reported and a dump 'written'."""
    from flinktune.collect.collector import CollectResult, PollReport, StartInfo

    def collect(options: Any, on_start: Any = None, on_poll: Any = None) -> CollectResult:
        if on_start:
            on_start(StartInfo("a" * 32, "job", "1.20", 2, 4, polls))
        for index in range(1, polls + 1):
            if on_poll:
                on_poll(PollReport(index, index * 1000, 10, 10 * index, 4, 0, 0.01))
        metrics = options.out_dir / "metrics.parquet"
        return CollectResult("a" * 32, "job", "1.20", polls, 10 * polls, metrics,
                             options.out_dir / "plan.json", options.out_dir / "job.json", "duration")

    return collect


@pytest.mark.parametrize(("flags", "poll_lines"),
                         [([], 1), (["-v"], 5), (["-v", "--no-color"], 5), (["-q"], 0)])
def test_collect_progress_verbose_and_quiet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            flags: list[str], poll_lines: int) -> None:
    import flinktune.collect

    monkeypatch.setattr(flinktune.collect, "collect", _fake_collect(5))
    result = _invoke("collect", "--interval", "5s", "--duration", "25s", "-o", str(tmp_path / "d"), *flags)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("collected 5 polls")
    polls = [line for line in result.stderr.splitlines() if line.startswith("flinktune collect: poll")]
    assert len(polls) == poll_lines, result.stderr
    if "-q" in flags:
        assert result.stderr == ""
    if "-v" in flags:
        assert polls[0] == "flinktune collect: poll 1: 10 rows (10 in all), 4 subtasks answered in 0.01 s"
    assert ESC not in result.stderr
