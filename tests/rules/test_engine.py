"""The engine over documents and items: scopes, locations, fixes, versions, functions."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from testkit import shared_dir

from flinktune.change import Applicability, Change
from flinktune.config.reader import read_config_text
from flinktune.config.types import ConfigDocument, ConfigEntry, ConfigFormat
from flinktune.errors import ConditionError
from flinktune.findings import Location, Severity
from flinktune.rules import evaluate_document, evaluate_items, load_rules
from flinktune.rules.functions import FUNCTIONS, RuleContext
from flinktune.rules.lang import evaluate, parse
from flinktune.versions import FlinkVersion, parse_version

V113, V116, V117, V120, V20 = (FlinkVersion(1, 13), FlinkVersion(1, 16), FlinkVersion(1, 17),
                               FlinkVersion(1, 20), FlinkVersion(2, 0))
RULES = load_rules()



def what(change: Change | None) -> tuple[str, str, str | None, str | None] | None:
    """A change's action, key, value and new key (what the rule's fix template produced)."""
    return None if change is None else (change.action, change.key, change.value, change.new_key)

def flat(text: str, file: str = "flink-conf.yaml") -> ConfigDocument:
    return read_config_text(textwrap.dedent(text), file)[0]


def codes(findings: list) -> list[str]:  # type: ignore[type-arg]
    return [f.code for f in findings]


def fn(text: str, document: ConfigDocument | None = None, version: FlinkVersion = V120,
       env: dict | None = None) -> object:  # type: ignore[type-arg]
    return evaluate(parse(text), {}, FUNCTIONS, RuleContext(version, document, env))


def test_key_scope_findings_point_at_the_line_with_a_safe_fix() -> None:
    doc = flat("""\
        taskmanager.numberOfTaskSlots: 4
        taskmanager.network.memory.min: 128mb
        """)
    found = [f for f in evaluate_document(RULES, doc, V120) if f.code == "FTC003"]
    assert len(found) == 1
    finding = found[0]
    assert finding.location == Location("flink-conf.yaml", 2, "taskmanager.network.memory.min")
    assert what(finding.fix) == ("rename", "taskmanager.network.memory.min", None,
                                 "taskmanager.memory.network.min")
    # The one change carries its applicability (the rule's) and where and who: --fix applies it.
    assert finding.fix is not None and finding.fix.applicability is Applicability.SAFE
    assert (finding.fix.file, finding.fix.line, finding.fix.proposed_by) == ("flink-conf.yaml", 2, "FTC003")
    assert finding.fix.why == finding.why
    assert finding.severity is Severity.WARNING
    assert finding.why and finding.references


def test_removed_buffer_keys_on_flink_2_are_deleted_safely() -> None:
    # Flink 2.0 removed buffers-per-channel (flink-facts 1.2, NettyShuffleEnvironmentConfiguration @2.0).
    doc = read_config_text("taskmanager.network.memory.buffers-per-channel: 4\n", "config.yaml")[0]
    found = [f for f in evaluate_document(RULES, doc, V20) if f.code == "FTC004"]
    assert [what(f.fix) for f in found] == [("delete", "taskmanager.network.memory.buffers-per-channel",
                                              None, None)]
    assert found[0].fix is not None and found[0].fix.applicability is Applicability.SAFE
    assert "removed in Flink 2.0" in found[0].message
    # ... and on 1.20 the same key is only deprecated (no replacement).
    assert "FTC004" not in codes(evaluate_document(RULES, doc, V120))
    assert "FTC006" in codes(evaluate_document(RULES, doc, V120))


def test_versions_field_skips_rules() -> None:
    # floating-buffers-per-gate >= 1 is checked from 1.17 (NettyShuffleEnvironmentConfiguration @1.17).
    doc = flat("taskmanager.network.memory.floating-buffers-per-gate: 0\n")
    assert "FTC014" in codes(evaluate_document(RULES, doc, V117))
    assert "FTC014" not in codes(evaluate_document(RULES, doc, V116))


def test_config_scope_uses_at_for_the_line() -> None:
    doc = flat("""\
        taskmanager.numberOfTaskSlots: 2
        taskmanager.memory.network.max: 256mb
        taskmanager.memory.network.min: 512mb
        """)
    found = [f for f in evaluate_document(RULES, doc, V120) if f.code == "FTC011"]
    assert len(found) == 1
    assert found[0].location == Location("flink-conf.yaml", 3, "taskmanager.memory.network.min")
    assert what(found[0].fix) == ("set", "taskmanager.memory.network.max", "512mb", None)
    # A set changes what Flink runs with: shown, never applied by lint --fix.
    assert found[0].fix is not None and found[0].fix.applicability is Applicability.UNSAFE


def test_deprecated_alias_is_resolved_for_config_lookups() -> None:
    # taskmanager.network.memory.max is a deprecated key of taskmanager.memory.network.max (TMO @1.20).
    doc = flat("taskmanager.network.memory.max: 256mb\ntaskmanager.memory.network.min: 512mb\n")
    assert fn('config("taskmanager.memory.network.max")', doc) == 256 * 1024**2
    assert fn('set_key("taskmanager.memory.network.max")', doc) == "taskmanager.network.memory.max"
    found = [f for f in evaluate_document(RULES, doc, V120) if f.code == "FTC011"]
    assert found and "(512mb)" in found[0].message


def test_config_defaults_depend_on_the_version() -> None:
    # network.max: 1g until 1.16, Long.MAX_VALUE bytes from 1.17 (FLINK-30472; flink-facts 1.6).
    empty = flat("")
    assert fn('config("taskmanager.memory.network.max")', empty, V116) == 1024**3
    assert fn('config("taskmanager.memory.network.max")', empty, V117) == 2**63 - 1
    assert fn('config("execution.buffer-timeout")', empty, V113) == 100
    assert fn('config("no.such.key")', empty) is None
    assert fn('config("taskmanager.network.memory.buffers-per-channel")', empty, V20) is None


def test_catalog_functions() -> None:
    assert fn('status("taskmanager.network.memory.buffers-per-channel")', version=V20) == "removed"
    assert fn('removed_in("taskmanager.network.memory.buffers-per-channel")') == "2.0"
    assert fn('replacement("taskmanager.network.memory.fraction")') == "taskmanager.memory.network.fraction"
    assert fn('known("taskmanager.memory.network.size")') is False
    assert fn('ever_known("taskmanager.network.memory.buffers-per-channel")', version=V20) is True
    assert fn('option_type("taskmanager.memory.segment-size")') == "memory"
    assert fn('value_error("taskmanager.memory.process.size", "1.5g")') is not None
    assert fn('valid_value("taskmanager.memory.process.size", "1536m")') is True
    assert fn('edit_distance("taskmanager.numberOfTaskSlot", "taskmanager.numberOfTaskSlots")') == 1
    assert fn('edit_distance("netwrok", "network")') == 1


def test_model_functions_match_flink_figures() -> None:
    # 1728m process size => 4096 buffers of 32 KiB (flink-facts 2.5 worked values, TEFMU/PMU @1.20).
    doc = flat("taskmanager.memory.process.size: 1728m\n")
    assert fn("tm_memory('network') // tm_memory('segment')", doc) == 4096
    assert fn('tm_memory("network")', doc) == 134217730
    assert fn("memory_error('taskmanager')", doc) is None
    # One all-to-all exchange at p per slot: gate 2p+1, partition p+1 (InputGateSpecUtils, NettyShuffleUtils).
    assert fn("buffers_required(200, 4)", doc) == 4 * ((2 * 200 + 1) + (200 + 1))
    assert fn("buffers_required(null, 4)", doc) is None
    refused = flat("taskmanager.memory.process.size: 1728m\ntaskmanager.memory.task.heap.size: 2g\n"
                   "taskmanager.memory.managed.size: 1g\n")
    tm_error = fn("memory_error('taskmanager')", refused)
    assert "is less than the sum of the derived Total Flink Memory" in str(tm_error)
    jm_refused = flat("jobmanager.memory.process.size: 1g\njobmanager.memory.heap.size: 2g\n")
    assert "is less than the sum of the derived Total Flink Memory" in str(fn("memory_error('jobmanager')",
                                                                            jm_refused))
    assert fn("memory_error('jobmanager')", flat("jobmanager.memory.process.size: 1600m\n")) is None
    with pytest.raises(ConditionError, match="taskmanager or jobmanager"):
        fn("memory_error('historyserver')", doc)
    assert fn("tm_memory('network') // tm_memory('segment')", flat("parallelism.default: 4\n")) is None


def test_network_too_small_uses_env_parallelism_and_slots() -> None:
    doc = flat("taskmanager.memory.process.size: 1728m\n")
    assert "FTC030" not in codes(evaluate_document(RULES, doc, V120))
    found = [f for f in evaluate_document(RULES, doc, V120, env={"parallelism": 200, "slots": 8})
             if f.code == "FTC030"]
    assert len(found) == 1
    assert "parallelism 200" in found[0].message and "8 of its 8 slot(s)" in found[0].message
    assert "4096 buffers" in found[0].message
    # The fix (model.network_fit.network_fix_changes) is sized for the pessimistic 3 exchanges with 25%
    # headroom; a network.min that large would leave 1728m no task heap (a new refusal), so the total
    # grows with it, keeping the task heap: two changes, said in the message, no single-key fix.
    assert found[0].fix is None
    assert "sized for the 3-exchange bound" in found[0].message
    assert "set taskmanager.memory.network.min: " in found[0].message
    assert " and taskmanager.memory.process.size: " in found[0].message
    assert dict(found[0].evidence)["required"] == str(8 * 602)


def test_issue_scope() -> None:
    doc = flat("parallelism.default: 1\nparallelism.default: 2\nbroken-line\n")
    found = evaluate_document(RULES, doc, V120)
    dup = [f for f in found if f.code == "FTC021"]
    assert len(dup) == 1 and dup[0].location.line == 2 and dup[0].location.key == "parallelism.default"
    assert [f.location.line for f in found if f.code == "FTC022"] == [3]


def test_flink_conf_on_flink_2() -> None:
    doc = flat("parallelism.default: 1\n")
    assert "FTC020" in codes(evaluate_document(RULES, doc, V20))
    assert "FTC020" not in codes(evaluate_document(RULES, doc, V120))
    yaml_doc = read_config_text("parallelism:\n  default: 1\n", "config.yaml")[0]
    assert "FTC020" not in codes(evaluate_document(RULES, yaml_doc, V20))


def test_findings_are_sorted_and_engine_is_pure() -> None:
    doc = flat("b.unknown.key: 1\ntaskmanager.numberOfTaskSlot: 2\n")
    first = evaluate_document(RULES, doc, V120)
    assert first == evaluate_document(RULES, doc, V120)
    assert [f.location.line for f in first] == sorted(f.location.line or 0 for f in first)


def _item_rule(tmp_path: Path, scope: str = "vertex") -> Path:
    (tmp_path / "r.yaml").write_text(textwrap.dedent(f"""\
        code: FTX100
        name: busy-vertex
        severity: info
        scope: {scope}
        versions: ">=1.17"
        let:
          busy: item.busy_ratio
        condition: busy > 0.9 and item["task-name"] != null
        at: "{{item.task-name}}"
        message: "{{item.task-name}} is busy {{busy:percent}} of the time"
        why: A busy vertex is a bottleneck.
        references: [https://nightlies.apache.org/flink/flink-docs-release-1.20/docs/ops/monitoring/back_pressure/]
        examples:
          pass:
            - items: [{{busy_ratio: 0.2, task-name: a}}]
          fail:
            - items: [{{busy_ratio: 0.95, task-name: a}}]
              message: "a is busy 95%"
        """), encoding="utf-8")
    return tmp_path


def test_evaluate_items(tmp_path: Path) -> None:
    ruleset = load_rules(extra_dirs=[_item_rule(tmp_path)], bundled=False)
    items = [{"busy_ratio": 0.95, "task-name": "Window"}, {"busy_ratio": 0.1, "task-name": "Sink"},
             {"busy_ratio": None, "task-name": "Source"}]
    found = evaluate_items(ruleset, "vertex", items, V120, None, "dump.parquet")
    assert [f.message for f in found] == ["Window is busy 95% of the time"]
    assert found[0].location == Location("dump.parquet", None, "Window")
    assert evaluate_items(ruleset, "vertex", items, V116, None, "dump.parquet") == []
    assert evaluate_items(ruleset, "subtask", items, V120, None, "dump.parquet") == []
    with pytest.raises(ConditionError):
        evaluate_items(ruleset, "config", items, V120, None, "dump.parquet")


def test_runtime_errors_name_the_rule(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text(textwrap.dedent("""\
        code: FTX200
        name: bad-rule
        severity: info
        scope: key
        condition: value + 1 > 2
        message: m
        why: w
        references: [x]
        examples:
          pass: [{config: {}}]
          fail: [{config: {a: "1"}}]
        """), encoding="utf-8")
    ruleset = load_rules(extra_dirs=[tmp_path], bundled=False)
    with pytest.raises(ConditionError, match=r"rule FTX200 .* failed on flink-conf.yaml:1"):
        evaluate_document(ruleset, flat("a: 1\n"), V120)


def test_entries_typed_by_config_yaml() -> None:
    # config.yaml gives YAML-typed values: an int for a MemorySize means bytes, a float is refused.
    doc = ConfigDocument("config.yaml", ConfigFormat.YAML, (
        ConfigEntry("taskmanager.memory.segment-size", 1.5, "1.5", "config.yaml", 1),
        ConfigEntry("taskmanager.memory.network.min", 67108864, "67108864", "config.yaml", 2),
    ))
    found = evaluate_document(RULES, doc, V120)
    assert [f.location.line for f in found if f.code == "FTC010"] == [1]
    assert fn('config("taskmanager.memory.network.min")', doc) == 64 * 1024**2


def test_sort_shuffle_min_parallelism_on_flink_2_cannot_take_effect() -> None:
    # Flink 2.0 removed the option and hard-codes 1 (NettyShuffleEnvironmentConfiguration @2.0).
    doc = read_config_text("taskmanager.network.sort-shuffle.min-parallelism: 100\n", "config.yaml")[0]
    found = [f for f in evaluate_document(RULES, doc, V20) if f.code == "FTC004"]
    assert len(found) == 1
    assert "always uses 1, so this setting cannot take effect" in found[0].message


def _corpus_findings(rules, versions: tuple[str, ...]) -> list[tuple[str, str, int | None, str]]:  # type: ignore[no-untyped-def]
    """Every finding of ``rules`` over the dev corpus at ``versions`` (skips the test without it)."""
    from flinktune.config.reader import read_config_file

    corpus = shared_dir() / "corpus" / "flink-configs"
    files = sorted(corpus.glob("*.yaml")) if corpus.is_dir() else []
    if not files:
        pytest.skip("the dev corpus (../shared/corpus/flink-configs) is not beside the repository")
    out = []
    for path in files:
        try:
            documents = read_config_file(str(path))
        except Exception:
            continue
        for document in documents:
            for version in versions:
                out += [(f.code, f.message, f.location.line, version)
                        for f in evaluate_document(rules, document, parse_version(version))]
    return out


def test_skipping_rules_by_their_first_key_test_changes_no_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine skips a key-scope rule for a key where its first test (``status(key) == ...``,
    ``deprecated(key)``, ``canonical(key) in [...]``, ...) is false: the same findings as running every
    rule on every key, over the dev corpus at several versions."""
    import flinktune.rules.entry_plan as entry_plan

    rules = load_rules()
    tested = [r.code for r in rules.rules
              if r.scope == "key" and entry_plan.key_test(r.condition) is not None]
    assert {"FTC001", "FTC003", "FTC006", "FTC010"} <= set(tested)
    versions = ("1.13", "1.17", "1.20", "2.1")
    skipping = _corpus_findings(rules, versions)
    monkeypatch.setattr(entry_plan, "key_test", lambda _condition: None)
    monkeypatch.setattr(entry_plan, "KEY_PLANS", {})      # worked out again, without key tests
    assert _corpus_findings(rules, versions) == skipping and skipping


def test_a_first_test_of_the_raw_text_gives_the_evaluator_s_value() -> None:
    """``"$" in raw or "_" in raw`` and the like run as plain Python before a rule's run (issue 26):
    the same value as the evaluator's for every raw text, a null one included."""
    from flinktune.rules.entry_plan import raw_test as _raw_test

    forms = ['"$" in raw', '"$" not in raw', '("$" in raw or "_" in raw)', 'not ("{{" in raw)',
             '(":" in raw and not ("//" in raw)) or "_" not in raw']
    texts = ["", "a", "$", "${A}", "a_b", "x://y", "k: v", "{{ x }}", "_", None]
    for form in forms:
        tree = parse(form).root
        compiled = _raw_test(tree)
        assert compiled is not None, form
        for text in texts:
            expected = evaluate(parse(form), {"raw": text}, FUNCTIONS, None)
            assert compiled(text) is expected, (form, text)
    # Anything else (another name, a function, a non-string literal) is not compiled.
    for form in ['"$" in key', 'starts_with(raw, "$")', '1 in raw', 'raw == "x"']:
        assert _raw_test(parse(form).root) is None, form


def test_skipping_rules_by_their_first_raw_test_changes_no_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    """FTC106 and FTC121 start with a test of the raw text: skipping the entries where it is false
    gives the same findings as running them, over the dev corpus at several versions."""
    import flinktune.rules.entry_plan as entry_plan

    rules = load_rules()
    tested = {r.code for r in rules.rules
              if r.scope == "key" and entry_plan.raw_plan(r.condition) is not None}
    assert {"FTC106", "FTC121"} <= tested
    versions = ("1.13", "1.20", "2.1")
    skipping = _corpus_findings(rules, versions)
    assert {"FTC106", "FTC121"} & {code for code, *_ in skipping}
    monkeypatch.setattr(entry_plan, "first_raw_test", lambda _condition: None)
    monkeypatch.setattr(entry_plan, "RAW_PLANS", {})      # worked out again, without raw tests
    assert _corpus_findings(rules, versions) == skipping


def test_general_text_and_list_functions() -> None:
    assert fn('prefixes("a.b.c")') == ("a", "a.b")
    assert fn('join(["a", null, "b"], ", ")') == "a, b"
    # a value that swallowed the next line: the Flink key glued to the end of a word is found too
    assert fn('keys_in("truejobmanager.rpc.address: jm")') == ("jobmanager.rpc.address",)
    assert fn('keys_in("http://minio:9000")') == ()
    assert fn('trim("  \'x\' ")') == "'x'"
    assert fn('trim(trim(" \'x\' "), "\'")') == "x"
    assert fn("trim(null)") is None


def test_fact_tables_and_jvm_options() -> None:
    # FTC072 reads JVM options by name and looks them up in a fact table (flinktune/rules/facts.py).
    assert fn('jvm_options("-XX:+PrintGCDateStamps -Xincgc --illegal-access=permit -Xmx1g -Dx=1")') == (
        "PrintGCDateStamps", "Xincgc", "illegal-access", "Xmx1g")
    assert fn('jvm_options("-XX:MaxPermSize=256m \\"-XX:+UseParNewGC")') == ("MaxPermSize",)
    assert fn('fact("removed_jvm_flags", "UseConcMarkSweepGC")') == {"jdk": 14,
                                                                   "instead": "G1 (the default) or ZGC"}
    assert fn('fact("removed_jvm_flags", "UseG1GC")') is None
    assert fn('fact("reporter_factories", "org.apache.flink.metrics.jmx.JMXReporter")') == (
        "org.apache.flink.metrics.jmx.JMXReporterFactory")
    with pytest.raises(ConditionError, match="unknown fact table"):
        fn('fact("no_such_table", "x")')
    with pytest.raises(ConditionError, match="needs a table name"):
        fn('fact(1, "x")')
    from flinktune.rules.facts import FACTS

    assert all(table in FUNCTIONS["fact"].doc for table in FACTS)     # the functions reference names each


def test_a_document_level_first_test_skips_a_key_rule_for_the_whole_document(tmp_path: Path) -> None:
    # FTC118's first test (yaml_form: the document is a config.yaml) reads no entry: on a flink-conf.yaml
    # it is false once, and the rule runs for no entry; the findings stay the same as without the shortcut.
    from flinktune.rules.entry_plan import whole_document_test as _whole_document_test

    rule = RULES.get("FTC118")
    assert rule is not None and _whole_document_test(rule) is not None
    other = RULES.get("FTC001")
    assert other is not None and _whole_document_test(other) is None     # status(key) reads the entry
    [yaml_doc] = read_config_text("a:\n  b: 1\na.b.c: 2\n", "config.yaml")
    flat_doc = flat("a.b: 1\na.b.c: 2\n")
    assert "FTC118" in codes(evaluate_document(RULES, yaml_doc, V120))
    assert "FTC118" not in codes(evaluate_document(RULES, flat_doc, V120))
