"""Format detection, bad input, and every real config in the shared corpus."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest
from testkit import shared_dir

from flinktune.config.reader import detect_format, read_config_file, read_config_text
from flinktune.config.types import ConfigFormat
from flinktune.errors import ConfigError

CORPUS = shared_dir() / "corpus" / "flink-configs"
CORPUS_FILES = sorted(p for p in CORPUS.glob("*.y*ml")) if CORPUS.is_dir() else []

NESTED = "taskmanager:\n  numberOfTaskSlots: 2\n"
FLAT = "taskmanager.numberOfTaskSlots: 2\n"
MANIFEST = ("apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nspec:\n"
            "  flinkConfiguration:\n    a: '1'\n")


@pytest.mark.parametrize(("name", "head", "expected"), [
    ("conf/flink-conf.yaml", NESTED, ConfigFormat.FLAT),         # Flink reads this name flat, always
    ("conf/config.yaml", FLAT, ConfigFormat.YAML),
    ("deploy.yaml", MANIFEST, ConfigFormat.DEPLOYMENT),
    ("config.yaml", MANIFEST, ConfigFormat.YAML),                # the exact name wins
    ("009__x__flink_config.yaml", FLAT, ConfigFormat.YAML),
    ("001__x__conf_flink-conf.yaml", NESTED, ConfigFormat.FLAT),
    ("stratosphere-conf.yaml", FLAT, ConfigFormat.FLAT),
    ("settings.yaml", NESTED, ConfigFormat.YAML),                # sniffed: nested mapping
    ("settings.yaml", "a:\n- 1\n", ConfigFormat.YAML),           # sniffed: list under a key
    ("settings.yaml", "# a:\n#  b: 1\nk: v\n", ConfigFormat.FLAT),
    # A flow mapping is YAML: the flat format would keep "{...}" as text, which no option reads.
    ("settings.yaml", "taskmanager: {numberOfTaskSlots: 2}\n", ConfigFormat.YAML),
    ("settings.yaml", "a: {b: 1}  # c\n", ConfigFormat.YAML),
    ("settings.yaml", "a: {\n  b: 1}\n", ConfigFormat.YAML),
    ("settings.yaml", "env.java.opts: -Dx={y}\na.b: 1 # {c}\n", ConfigFormat.FLAT),
    ("settings.yaml", "a: \"{x}\"\n", ConfigFormat.FLAT),
])
def test_detect_format(name: str, head: str, expected: ConfigFormat) -> None:
    assert detect_format(name, head) is expected


def test_read_config_text_format_override_accepts_strings() -> None:
    (doc,) = read_config_text("a: 'x'\n", "anything", "config.yaml")
    assert doc.format is ConfigFormat.YAML and doc.values() == {"a": "x"}
    (doc,) = read_config_text("a: 'x'\n", "anything", ConfigFormat.FLAT)
    assert doc.values() == {"a": "'x'"}
    with pytest.raises(ConfigError, match="unknown config format"):
        read_config_text("a: b\n", "f", "toml")


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("name", ["flink-conf.yaml", "config.yaml", "deploy.yaml"])
def test_missing_file_and_directory(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        read_config_file(tmp_path / name)
    (tmp_path / "dir.yaml").mkdir()
    with pytest.raises(ConfigError, match="directory"):
        read_config_file(tmp_path / "dir.yaml")


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read a file without read permission")
def test_unreadable_file(tmp_path: Path) -> None:
    path = write(tmp_path, "flink-conf.yaml", b"a: 1\n")
    path.chmod(0)
    with pytest.raises(ConfigError, match="cannot be read"):
        read_config_file(path)


@pytest.mark.parametrize("name", ["flink-conf.yaml", "config.yaml"])
def test_open_failure_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    import builtins

    path = write(tmp_path, name, b"a: 1\n")
    real_open = builtins.open

    def deny(file, *args, **kwargs):
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", deny)
    with pytest.raises(ConfigError, match="Permission denied"):
        read_config_file(path)


def test_fifo_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "flink-conf.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="not a regular file"):
        read_config_file(fifo)      # must not block waiting for a writer


@pytest.mark.parametrize("name", ["flink-conf.yaml", "config.yaml", "m.yaml"])
def test_binary_files(tmp_path: Path, name: str) -> None:
    path = write(tmp_path, name, b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)))
    with pytest.raises(ConfigError) as err:
        read_config_file(path)
    assert err.value.file == str(path)


@pytest.mark.parametrize("name", ["flink-conf.yaml", "config.yaml"])
def test_non_utf8_says_line_and_byte(tmp_path: Path, name: str) -> None:
    path = write(tmp_path, name, "a: 1\nb: 'caf\u00e9'\n".encode("latin-1"))
    with pytest.raises(ConfigError) as err:
        read_config_file(path)
    assert err.value.line == 2 and "0xe9" in err.value.message


@pytest.mark.parametrize(("name", "fmt"), [("flink-conf.yaml", ConfigFormat.FLAT),
                                           ("config.yaml", ConfigFormat.YAML)])
def test_utf8_bom_and_utf16_bom_are_read(tmp_path: Path, name: str, fmt: ConfigFormat) -> None:
    text = "taskmanager.numberOfTaskSlots: 4\r\nk: v\u00e9\r\n"
    for data in (codecs.BOM_UTF8 + text.encode("utf-8"), codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
                 codecs.BOM_UTF16_BE + text.encode("utf-16-be")):
        (doc,) = read_config_file(write(tmp_path, name, data))
        assert doc.format is fmt
        assert str(doc.get("taskmanager.numberOfTaskSlots").value) == "4"
        assert doc.get("k").value == "v\u00e9" and doc.get("k").line == 2


def test_utf16_without_bom_is_a_clear_error(tmp_path: Path) -> None:
    path = write(tmp_path, "flink-conf.yaml", "a: 1\n".encode("utf-16-le"))
    with pytest.raises(ConfigError, match="byte-order mark"):
        read_config_file(path)


def test_invalid_yaml_names_line(tmp_path: Path) -> None:
    path = write(tmp_path, "config.yaml", b"a: 1\nb:\n  - x\n  y: 2\n")
    with pytest.raises(ConfigError) as err:
        read_config_file(path)
    assert err.value.line == 4 and str(path) in err.value.one_line()


def test_huge_yaml_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    with open(path, "wb") as fh:
        fh.write(b"a: 1\n")
        fh.write(b"# filler\n" * (1024 * 1024))
    with pytest.raises(ConfigError, match="too large"):
        read_config_file(path)


def test_odd_keys_do_not_crash(tmp_path: Path) -> None:
    text = "\u00e9l\u00e8ve.key: 1\nkey with spaces: 2\n\u2028odd: 3\n\U0001f600: 4\n"
    (doc,) = read_config_file(write(tmp_path, "flink-conf.yaml", text.encode("utf-8")))
    assert len(doc.entries) == 4
    (doc,) = read_config_file(write(tmp_path, "config.yaml", b'"a.b": 1\n"key with spaces": 2\n? [x]\n: y\n'))
    assert doc.values() == {"a.b": 1, "key with spaces": 2}
    assert [i.kind for i in doc.issues] == ["non-string-key"]


def test_manifest_without_flink_config_gives_no_documents(tmp_path: Path) -> None:
    path = write(tmp_path, "svc.yaml", b"apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n")
    assert read_config_file(path) == []


# --- the shared corpus: real configs from public repositories ---------------------------------

@pytest.mark.skipif(not CORPUS_FILES, reason="shared corpus ../shared/corpus/flink-configs not present")
@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name[:40])
def test_every_corpus_file_reads(path: Path) -> None:
    try:
        docs = read_config_file(path)
    except ConfigError as exc:
        assert "\n" not in exc.one_line()
        return
    assert docs, "every corpus file holds a Flink configuration"
    for doc in docs:
        for entry in doc.entries:
            assert entry.file == str(path) and entry.line >= 1 and entry.key
        for issue in doc.issues:
            assert issue.line >= 1 and issue.message


def _corpus(prefix: str) -> Path:
    matches = [p for p in CORPUS_FILES if p.name.startswith(prefix)]
    if not matches:
        pytest.skip(f"corpus file {prefix} not present")
    return matches[0]


def _source_line(path: Path, line: int) -> str:
    return path.read_text(encoding="utf-8").splitlines()[line - 1]


@pytest.mark.parametrize(("prefix", "fmt", "key", "value", "line"), [
    ("028__", ConfigFormat.FLAT, "taskmanager.network.numberOfBuffers", "2048", 49),
    ("003__", ConfigFormat.FLAT, "taskmanager.numberOfTaskSlots", "1", 101),
    ("016__", ConfigFormat.FLAT, "taskmanager.numberOfTaskSlots", "10", 312),   # duplicate, last wins
    ("032__", ConfigFormat.YAML, "execution.buffer-timeout", "5 ms", 14),
    ("032__", ConfigFormat.YAML, "taskmanager.numberOfTaskSlots", 4, 3),
    ("023__", ConfigFormat.DEPLOYMENT, "taskmanager.numberOfTaskSlots", "4", 31),
])
def test_known_corpus_values(prefix: str, fmt: ConfigFormat, key: str, value: object, line: int) -> None:
    path = _corpus(prefix)
    (doc,) = read_config_file(path)
    assert doc.format is fmt
    entry = doc.get(key)
    assert entry is not None and entry.value == value and entry.line == line
    assert key.rsplit(".", 1)[-1] in _source_line(path, line)


def test_corpus_duplicates_and_nesting_reported() -> None:
    (doc,) = read_config_file(_corpus("016__"))
    dup = [i for i in doc.issues if i.kind == "duplicate-key" and i.key == "taskmanager.numberOfTaskSlots"]
    assert dup and dup[0].line == 312 and "line 90" in dup[0].message
    (doc,) = read_config_file(_corpus("008__"))     # nested YAML written into a flink-conf.yaml
    assert {i.kind for i in doc.issues} >= {"malformed-line", "nested-in-flat"}


def test_corpus_manifests() -> None:
    (doc,) = read_config_file(_corpus("017__"))
    assert doc.format is ConfigFormat.DEPLOYMENT and doc.version_hint == "v1_20"
    assert doc.name == "stage-pyflink-job"
    (cm,) = read_config_file(_corpus("019__"))       # ConfigMap among Namespace/Deployments
    assert cm.format is ConfigFormat.CONFIGMAP and cm.embedded is ConfigFormat.FLAT
    entry = cm.get("taskmanager.numberOfTaskSlots")
    assert entry is not None and entry.value == "4"
    assert "taskmanager.numberOfTaskSlots: 4" in _source_line(_corpus("019__"), entry.line)
