"""Byte-preserving edits in all formats, and the atomic file write."""

from __future__ import annotations

import codecs
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from testkit import changed_lines, shared_dir

from flinktune.change import Change
from flinktune.config.reader import read_config_file, read_config_text
from flinktune.config.types import ConfigDocument, ConfigFormat
from flinktune.config.writer import apply_changes, edit_file, write_file_atomic
from flinktune.errors import FlinktuneError, WriteError

CORPUS = shared_dir() / "corpus" / "flink-configs"


def edit(text: str, name: str, *edits: Change, index: int = 0) -> tuple[str, ConfigDocument]:
    doc = read_config_text(text, name)[index]
    out = apply_changes(text, doc, list(edits))
    return out, read_config_text(out, name)[index]


# --- flink-conf.yaml ----------------------------------------------------------------------------

FLAT = (
    "# Flink config\r\n"
    "jobmanager.rpc.address: localhost   \r\n"
    "taskmanager.numberOfTaskSlots: 1  # one slot\r\n"
    "\r\n"
    "taskmanager.network.memory.buffers-per-channel: 2\r\n"
    "taskmanager.numberOfTaskSlots: 2 # later one wins\r\n"
    "taskmanager.network.memory.max: 1gb"
)


def test_flat_set_replaces_value_in_place_keeping_comment_and_crlf() -> None:
    out, doc = edit(FLAT, "flink-conf.yaml", Change("set", "taskmanager.numberOfTaskSlots", "8"))
    assert doc.get("taskmanager.numberOfTaskSlots").value == "8"
    removed, added = changed_lines(FLAT, out)
    assert removed == ["taskmanager.numberOfTaskSlots: 2 # later one wins\r\n"]
    assert added == ["taskmanager.numberOfTaskSlots: 8 # later one wins\r\n"]


def test_flat_set_new_key_appends_with_file_line_ending() -> None:
    out, doc = edit(FLAT, "flink-conf.yaml", Change("set", "taskmanager.memory.segment-size", "64kb"))
    assert out == FLAT + "\r\ntaskmanager.memory.segment-size: 64kb\r\n"
    assert doc.get("taskmanager.memory.segment-size").value == "64kb"


def test_flat_delete_removes_every_occurrence() -> None:
    out, doc = edit(FLAT, "flink-conf.yaml", Change("delete", "taskmanager.numberOfTaskSlots"))
    assert doc.get("taskmanager.numberOfTaskSlots") is None
    removed, added = changed_lines(FLAT, out)
    assert len(removed) == 2 and added == []


def test_flat_rename_in_place_and_rename_onto_existing_key() -> None:
    out, doc = edit(FLAT, "flink-conf.yaml",
                    Change("rename", "taskmanager.network.memory.max",
                         new_key="taskmanager.memory.network.max"))
    assert out.endswith("taskmanager.memory.network.max: 1gb")
    assert doc.get("taskmanager.memory.network.max").value == "1gb"
    assert doc.get("taskmanager.network.memory.max") is None
    text = "old.key: 1\nnew.key: 2\n"
    out, doc = edit(text, "flink-conf.yaml", Change("rename", "old.key", new_key="new.key"))
    assert out == "new.key: 2\n"


@pytest.mark.parametrize("value", ["a # b", "line\nbreak", " padded", ""])
def test_flat_refuses_values_the_format_cannot_hold(value: str) -> None:
    doc = read_config_text("a: 1\n", "flink-conf.yaml")[0]
    with pytest.raises(WriteError):
        apply_changes("a: 1\n", doc, [Change("set", "a", value)])


def test_bom_is_kept() -> None:
    text = "\ufeffa: 1\n"
    doc = read_config_text(text, "flink-conf.yaml")[0]
    assert apply_changes(text, doc, [Change("set", "a", "2")]) == "\ufeffa: 2\n"


# --- config.yaml --------------------------------------------------------------------------------

YAML = """\
# Flink 2.x config
taskmanager:
  numberOfTaskSlots: 4        # slots
  memory:
    process:
      size: '1728m'
jobmanager:
  rpc:
    address: flink   # host
execution.buffer-timeout: 100 ms
pipeline.jars: [a.jar, b.jar]
env.java.opts.all: |
  -XX:+UseG1GC
  -Dx=y
rest.port: 8081
"""


def test_yaml_set_in_place_keeps_quote_style_and_comments() -> None:
    out, doc = edit(YAML, "config.yaml", Change("set", "taskmanager.memory.process.size", "4g"),
                    Change("set", "taskmanager.numberOfTaskSlots", "8"))
    assert doc.get("taskmanager.memory.process.size").value == "4g"
    assert doc.get("taskmanager.numberOfTaskSlots").value == 8
    removed, added = changed_lines(YAML, out)
    assert removed == ["  numberOfTaskSlots: 4        # slots\n", "      size: '1728m'\n"]
    assert added == ["  numberOfTaskSlots: 8        # slots\n", "      size: '4g'\n"]


@pytest.mark.parametrize(("value", "rendered"), [
    ("64mb", "64mb"), ("true", "true"), ("10", "10"), ("yes", "yes"),
    ("null", '"null"'), ("", '""'), ("a: b", '"a: b"'), ("#x", '"#x"'), ("0x10", '"0x10"'),
    ("[1]", '"[1]"'), ("-XX:+UseG1GC -Da=b", "-XX:+UseG1GC -Da=b"), ("tab\there", '"tab\\there"'),
])
def test_yaml_values_are_quoted_only_when_needed(value: str, rendered: str) -> None:
    out, doc = edit("a: 1\n", "config.yaml", Change("set", "a", value))
    assert out == f"a: {rendered}\n"
    got = doc.get("a").value
    assert str(got).lower() == value.lower() if not isinstance(got, str) else got == value


def test_yaml_new_key_goes_into_deepest_nested_block() -> None:
    out, doc = edit(YAML, "config.yaml", Change("set", "taskmanager.memory.network.max", "1gb"),
                    Change("set", "state.backend.type", "rocksdb"))
    assert "  memory:\n    process:\n      size: '1728m'\n    network.max: 1gb\n" in out
    assert out.endswith("rest.port: 8081\nstate.backend.type: rocksdb\n")
    assert doc.get("taskmanager.memory.network.max").value == "1gb"


def test_yaml_delete_removes_lines_and_emptied_parents() -> None:
    out, doc = edit(YAML, "config.yaml", Change("delete", "jobmanager.rpc.address"),
                    Change("delete", "env.java.opts.all"), Change("delete", "pipeline.jars"))
    removed, added = changed_lines(YAML, out)
    assert added == []
    assert removed == ["jobmanager:\n", "  rpc:\n", "    address: flink   # host\n",
                       "pipeline.jars: [a.jar, b.jar]\n", "env.java.opts.all: |\n", "  -XX:+UseG1GC\n",
                       "  -Dx=y\n"]
    assert set(doc.values()) == {"taskmanager.numberOfTaskSlots", "taskmanager.memory.process.size",
                                 "execution.buffer-timeout", "rest.port"}


def test_yaml_rename_in_place_and_across_blocks() -> None:
    out, doc = edit(YAML, "config.yaml",
                    Change("rename", "execution.buffer-timeout", new_key="execution.buffer-timeout.interval"))
    assert "execution.buffer-timeout.interval: 100 ms\n" in out
    out, doc = edit("taskmanager:\n  network:\n    memory.max: 1gb\n  slots: 1\n", "config.yaml",
                    Change("rename", "taskmanager.network.memory.max",
                         new_key="taskmanager.memory.network.max"))
    assert doc.get("taskmanager.memory.network.max").value == "1gb"
    assert doc.get("taskmanager.network.memory.max") is None
    assert out == "taskmanager:\n  slots: 1\n  memory.network.max: 1gb\n"


def test_yaml_replaces_list_and_block_scalar_values() -> None:
    out, doc = edit(YAML, "config.yaml", Change("set", "pipeline.jars", "c.jar;d.jar"),
                    Change("set", "env.java.opts.all", "-XX:+UseZGC"))
    assert "pipeline.jars: c.jar;d.jar\n" in out
    assert "env.java.opts.all: -XX:+UseZGC\nrest.port: 8081\n" in out
    assert doc.get("env.java.opts.all").value == "-XX:+UseZGC"


def test_yaml_empty_file_and_null_value() -> None:
    out, doc = edit("# only a comment", "config.yaml", Change("set", "a.b", "1"))
    assert out == "# only a comment\na.b: 1\n"
    out, doc = edit("a:\nb: 2\n", "config.yaml", Change("set", "a", "x"))
    assert out == "a: x\nb: 2\n" and doc.get("a").value == "x"


def test_yaml_flow_mapping_and_alias_are_refused_not_corrupted() -> None:
    doc = read_config_text("a: {b: 1, c: 2}\n", "config.yaml")[0]
    with pytest.raises(WriteError, match="flow mapping"):
        apply_changes("a: {b: 1, c: 2}\n", doc, [Change("delete", "a.b")])
    assert apply_changes("a: {b: 1, c: 2}\n", doc, [Change("set", "a.b", "x, y")]) == 'a: {b: "x, y", c: 2}\n'
    text = "base: &b {k: 1}\nother: *b\n"
    doc = read_config_text(text, "config.yaml")[0]
    with pytest.raises(WriteError, match="alias"):
        apply_changes(text, doc, [Change("set", "other.k", "2")])


def test_stale_document_is_refused() -> None:
    doc = read_config_text("a: 1\n", "config.yaml")[0]
    with pytest.raises(WriteError, match="changed"):
        apply_changes("a: 2\n", doc, [Change("set", "a", "3")])


# --- FlinkDeployment ----------------------------------------------------------------------------

DEPLOYMENTS = """\
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: first
spec:
  flinkVersion: v1_18
  flinkConfiguration:
    taskmanager.numberOfTaskSlots: "2"
    # keep me
    state.backend.type: rocksdb
  job:
    parallelism: 2
---
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: second
spec:
  flinkVersion: v1_20
  image: flink:1.20
  jobManager:
    resource:
      memory: 2048m
"""


def test_deployment_values_stay_strings() -> None:
    out, doc = edit(DEPLOYMENTS, "d.yaml", Change("set", "taskmanager.numberOfTaskSlots", "4"),
                    Change("set", "taskmanager.network.memory.buffers-per-channel", "4"),
                    Change("set", "taskmanager.network.memory.debloat.enabled", "true"),
                    Change("set", "pipeline.object-reuse", "on"),
                    Change("set", "taskmanager.memory.network.max", "1gb"))
    assert doc.values() == {"taskmanager.numberOfTaskSlots": "4", "state.backend.type": "rocksdb",
                            "taskmanager.network.memory.buffers-per-channel": "4",
                            "taskmanager.network.memory.debloat.enabled": "true",
                            "pipeline.object-reuse": "on", "taskmanager.memory.network.max": "1gb"}
    assert ('    state.backend.type: rocksdb\n'
            '    taskmanager.network.memory.buffers-per-channel: "4"\n'
            '    taskmanager.network.memory.debloat.enabled: "true"\n'
            '    pipeline.object-reuse: "on"\n'
            '    taskmanager.memory.network.max: 1gb\n  job:\n') in out
    assert '    taskmanager.numberOfTaskSlots: "4"\n    # keep me\n' in out


def test_deployment_without_flink_configuration_gets_one() -> None:
    out, doc = edit(DEPLOYMENTS, "d.yaml", Change("set", "taskmanager.numberOfTaskSlots", "4"), index=1)
    assert doc.name == "second" and doc.values() == {"taskmanager.numberOfTaskSlots": "4"}
    assert out.endswith('      memory: 2048m\n  flinkConfiguration:\n'
                        '    taskmanager.numberOfTaskSlots: "4"\n')
    assert read_config_text(out, "d.yaml")[0].values() == read_config_text(DEPLOYMENTS, "d.yaml")[0].values()


def test_deployment_deleting_every_key_drops_flink_configuration() -> None:
    out, doc = edit(DEPLOYMENTS, "d.yaml", Change("delete", "taskmanager.numberOfTaskSlots"),
                    Change("delete", "state.backend.type"))
    assert "flinkConfiguration" not in out.split("---")[0] and doc.entries == ()
    assert "  flinkVersion: v1_18\n  job:\n" in out


@pytest.mark.parametrize("conf", ["{}", "", "~"])
def test_deployment_empty_flink_configuration(conf: str) -> None:
    value = f" {conf}" if conf else ""
    text = ("apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nspec:\n"
            f"  flinkConfiguration:{value}\n  image: x\n")
    out, doc = edit(text, "d.yaml", Change("set", "parallelism.default", "2"))
    assert doc.values() == {"parallelism.default": "2"}
    assert '  flinkConfiguration:\n    parallelism.default: "2"\n  image: x\n' in out


# --- ConfigMap ----------------------------------------------------------------------------------

CONFIGMAP = (
    "apiVersion: v1\r\n"
    "kind: ConfigMap\r\n"
    "metadata:\r\n"
    "  name: flink-config\r\n"
    "data:\r\n"
    "  flink-conf.yaml: |+\r\n"
    "    jobmanager.rpc.address: flink-jobmanager\r\n"
    "    taskmanager.numberOfTaskSlots: 2   \r\n"
    "    # comment\r\n"
    "    \r\n"
    "    blob.server.port: 6124\r\n"
    "\r\n"
    "  config.yaml: |\r\n"
    "    taskmanager:\r\n"
    "      numberOfTaskSlots: 2\r\n"
    "  log4j-console.properties: |+\r\n"
    "    rootLogger.level = INFO\r\n"
)


def test_configmap_flat_edit_keeps_block_indentation_and_crlf() -> None:
    out, doc = edit(CONFIGMAP, "cm.yaml", Change("set", "taskmanager.numberOfTaskSlots", "4"),
                    Change("set", "taskmanager.memory.process.size", "2g"),
                    Change("delete", "blob.server.port"))
    assert doc.embedded is ConfigFormat.FLAT
    assert doc.values() == {"jobmanager.rpc.address": "flink-jobmanager",
                            "taskmanager.numberOfTaskSlots": "4",
                            "taskmanager.memory.process.size": "2g"}
    removed, added = changed_lines(CONFIGMAP, out)
    assert removed == ["    taskmanager.numberOfTaskSlots: 2   \r\n", "    blob.server.port: 6124\r\n"]
    assert added == ["    taskmanager.numberOfTaskSlots: 4   \r\n",
                     "    taskmanager.memory.process.size: 2g\r\n"]
    assert doc.get("taskmanager.memory.process.size").line == 12   # after the kept (|+) blank line
    assert out.splitlines()[11] == "    taskmanager.memory.process.size: 2g"


def test_configmap_embedded_config_yaml() -> None:
    out, doc = edit(CONFIGMAP, "cm.yaml", Change("set", "taskmanager.numberOfTaskSlots", "8"),
                    Change("set", "taskmanager.memory.network.max", "512mb"), index=1)
    assert doc.embedded is ConfigFormat.YAML
    assert ("  config.yaml: |\r\n    taskmanager:\r\n      numberOfTaskSlots: 8\r\n"
            "      memory.network.max: 512mb\r\n  log4j") in out
    assert read_config_text(out, "cm.yaml")[0].values() == read_config_text(CONFIGMAP, "cm.yaml")[0].values()


def test_several_documents_of_one_file_edited_in_turn() -> None:
    docs = read_config_text(CONFIGMAP, "cm.yaml")
    text = apply_changes(CONFIGMAP, docs[0], [Change("set", "new.first", "1")])   # moves lines of docs[1]
    text = apply_changes(text, docs[1], [Change("set", "new.second", "2")])
    after = read_config_text(text, "cm.yaml")
    assert after[0].get("new.first").value == "1" and after[1].get("new.second").value == 2


# --- the round-trip property on every corpus file -----------------------------------------------

CORPUS_FILES = sorted(CORPUS.glob("*.y*ml")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not CORPUS_FILES, reason="shared corpus not present")
@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name[:40])
def test_corpus_round_trip(path: Path) -> None:
    text = path.read_bytes().decode("utf-8")
    for index, doc in enumerate(read_config_text(text, str(path))):
        if not doc.entries:
            continue
        first, last = doc.entries[0], doc.entries[-1]
        edits = [Change("set", last.key, "12345"), Change("set", "flinktune.test.added", "64mb")]
        if first.key != last.key:
            edits.append(Change("delete", first.key))
        try:
            out = apply_changes(text, doc, edits)
        except WriteError as exc:   # refusing is allowed (flow style, aliases), corrupting is not
            assert "by hand" in exc.message
            continue
        after = read_config_text(out, str(path))[index]
        assert str(after.get(last.key).value) == "12345"
        assert after.get("flinktune.test.added").value == "64mb"
        expected = {k: v for k, v in doc.values().items() if k not in {first.key, last.key}}
        edited = {first.key, last.key, "flinktune.test.added"}
        got = {k: v for k, v in after.values().items() if k not in edited}
        assert got == expected
        removed, added = changed_lines(text, out)
        # Only the edited entries' lines change (a deleted key may take its emptied parents along).
        assert len(added) <= 3 and len(removed) <= 2 + sum(1 for e in doc.entries if e.key == first.key) + 4


# --- property: random flat and nested configs ---------------------------------------------------

_key = st.from_regex(r"[a-z][a-z0-9-]{0,6}(\.[a-z][a-z0-9-]{0,6}){0,2}", fullmatch=True)
_flat_value = st.text(st.characters(blacklist_characters="#\r\n\x85\u2028\u2029", min_codepoint=32),
                      min_size=1, max_size=12).map(str.strip).filter(bool)
_yaml_value = st.text(st.characters(min_codepoint=32, blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_key, _flat_value, min_size=1, max_size=6), _key, _flat_value, st.booleans())
def test_property_flat_round_trip(config: dict, new_key: str, value: str, crlf: bool) -> None:
    eol = "\r\n" if crlf else "\n"
    text = "# header" + eol + "".join(f"{k}: {v}  # c{eol}" for k, v in config.items())
    doc = read_config_text(text, "flink-conf.yaml")[0]
    out = apply_changes(text, doc, [Change("set", new_key, value)])
    after = read_config_text(out, "flink-conf.yaml")[0]
    assert after.get(new_key).value == value
    assert {k: v for k, v in after.values().items() if k != new_key} == \
        {k: v for k, v in doc.values().items() if k != new_key}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_key, st.integers(0, 10**6), min_size=1, max_size=6), _key, _yaml_value,
       st.sampled_from(["set", "delete"]))
def test_property_yaml_round_trip(config: dict, key: str, value: str, action: str) -> None:
    # Nest every dotted key one level ("a.b.c: 1" -> "a:\n  b.c: 1"), so edits hit nested blocks.
    lines = []
    for k, v in config.items():
        head, _, rest = k.partition(".")
        lines.append(f"{head}:\n  {rest}: {v}\n" if rest else f"{k}: {v}\n")
    text = "".join(lines)
    try:
        doc = read_config_text(text, "config.yaml")[0]
    except FlinktuneError:
        return          # generated duplicate top-level keys with clashing shapes: not a valid config
    if any(i.kind == "duplicate-key" for i in doc.issues):
        return
    targets = [key] if action == "set" else [next(iter(doc.values()))]
    edits = [Change("set", key, value)] if action == "set" else [Change("delete", targets[0])]
    out = apply_changes(text, doc, edits)
    after = read_config_text(out, "config.yaml")[0]
    if action == "set":
        got = after.get(key).value
        assert got == value or str(got).lower() == value.lower()
    else:
        assert after.get(targets[0]) is None
    assert {k: v for k, v in after.values().items() if k not in targets} == \
        {k: v for k, v in doc.values().items() if k not in targets}


# --- write_file_atomic ---------------------------------------------------------------------------

def test_write_keeps_backup_and_mode(tmp_path: Path) -> None:
    path = tmp_path / "flink-conf.yaml"
    path.write_bytes(b"old\n")
    path.chmod(0o640)
    backup = write_file_atomic(path, b"new\n")
    assert path.read_bytes() == b"new\n" and backup is not None and backup.read_bytes() == b"old\n"
    assert backup == tmp_path / "flink-conf.yaml.bak"
    assert (path.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flink-conf.yaml", "flink-conf.yaml.bak"]
    assert write_file_atomic(tmp_path / "fresh.yaml", b"x") is None


def test_symlink_into_other_directory_is_refused(tmp_path: Path) -> None:
    real_dir, link_dir = tmp_path / "real", tmp_path / "links"
    real_dir.mkdir()
    link_dir.mkdir()
    target = real_dir / "config.yaml"
    target.write_bytes(b"a: 1\n")
    link = link_dir / "config.yaml"
    link.symlink_to(target)
    with pytest.raises(WriteError, match="symlink"):
        write_file_atomic(link, b"a: 2\n")
    assert target.read_bytes() == b"a: 1\n"
    write_file_atomic(link, b"a: 2\n", follow_symlinks=True)
    assert link.is_symlink() and target.read_bytes() == b"a: 2\n"
    same = real_dir / "alias.yaml"
    same.symlink_to("config.yaml")
    write_file_atomic(same, b"a: 3\n")
    assert same.is_symlink() and target.read_bytes() == b"a: 3\n"


def test_directory_target_is_refused(tmp_path: Path) -> None:
    with pytest.raises(WriteError):
        write_file_atomic(tmp_path, b"x")


_CRASH_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from flinktune.config import writer
    path, where = sys.argv[1], sys.argv[2]
    real_fsync = os.fsync
    calls = []
    def dying_fsync(fd):
        calls.append(fd)
        # fsync #1 is the backup's temp file, #2 the new file's temp file (before os.replace).
        if (where == "backup" and len(calls) == 1) or (where == "replace" and len(calls) == 2):
            os.kill(os.getpid(), signal.SIGKILL)
        real_fsync(fd)
    writer.os.fsync = dying_fsync
    writer.write_file_atomic(path, b"NEW CONTENT\\n" * 1000)
""")


@pytest.mark.parametrize("where", ["backup", "replace"])
def test_killed_mid_write_leaves_original_intact(tmp_path: Path, where: str) -> None:
    path = tmp_path / "flink-conf.yaml"
    original = b"taskmanager.numberOfTaskSlots: 4\n" * 100
    path.write_bytes(original)
    proc = subprocess.run([sys.executable, "-c", _CRASH_SCRIPT, str(path), where], timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert path.read_bytes() == original


def test_killed_at_a_random_point_of_a_large_write(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    original = b"a: 1\n" * 1000
    new = b"b: 2\n" * (6 * 1024 * 1024)     # 30 MB: long enough to be killed while writing
    path.write_bytes(original)
    script = ("import sys; from flinktune.config.writer import write_file_atomic; "
              "print('go', flush=True); write_file_atomic(sys.argv[1], b'b: 2\\n' * (6 * 1024 * 1024))")
    proc = subprocess.Popen([sys.executable, "-c", script, str(path)], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"go\n"
    time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert path.read_bytes() in (original, new)     # never a mix or a truncated file


def test_edit_file_keeps_encoding_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "flink-conf.yaml"
    text = "a: 1\r\n# é\r\nb: 2\r\n"
    path.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    (doc,) = read_config_file(path)
    backup = edit_file(path, doc, [Change("set", "b", "3")])
    assert backup is not None
    assert path.read_bytes() == codecs.BOM_UTF16_LE + "a: 1\r\n# é\r\nb: 3\r\n".encode("utf-16-le")
    (doc,) = read_config_file(path)
    assert edit_file(path, doc, [Change("set", "b", "3")]) is None     # nothing to change: untouched


def test_rename_of_a_list_value_in_place_or_refused() -> None:
    out, doc = edit("pipeline:\n  jars: [a.jar, b.jar]\n", "config.yaml",
                    Change("rename", "pipeline.jars", new_key="pipeline.classpaths"))
    assert out == "pipeline:\n  classpaths: [a.jar, b.jar]\n"
    assert doc.get("pipeline.classpaths").value == ["a.jar", "b.jar"]
    text = "pipeline:\n  jars: [a.jar]\nother: 1\n"
    doc = read_config_text(text, "config.yaml")[0]
    with pytest.raises(WriteError, match="by hand"):
        apply_changes(text, doc, [Change("rename", "pipeline.jars", new_key="x.jars")])
