from __future__ import annotations

from flinktune.lint.model import LintResult
from flinktune.report.github import escape_data, escape_property, render_github


def test_github_annotations(sample_result: LintResult) -> None:
    lines = render_github(sample_result).splitlines()
    assert lines[0] == ("::warning file=conf/flink-conf.yaml,line=3,title=FTC001 deprecated-key::"
                        "taskmanager.network.memory.min is deprecated; use taskmanager.memory.network.min")
    assert lines[1].startswith(
        "::error file=k8s/deploy ment.yaml,line=12,title=FTN002 network-min-above-max::")
    # info is a notice; no line when the finding has none; newline and % escaped in the message
    assert lines[2] == ("::notice file=conf/flink-conf.yaml,title=FTX003 note::"
                        'odd "value" with <xml> & commas, colons: and 100%25%0Asecond line')
    assert lines[3] == ("::error file=bad.yaml,line=7,title=flinktune%3A unreadable input::"
                        "not linted: invalid YAML: mapping values are not allowed here")
    assert lines[-1].startswith("flinktune: 3 files checked: 1 errors, 1 warnings, 1 info, 1 not linted")


def test_escaping() -> None:
    assert escape_data("a%b\r\nc") == "a%25b%0D%0Ac"
    assert escape_property("x:y,z") == "x%3Ay%2Cz"
