"""Target-version inference from a file's content (flinktune.situation.version.infer_versions).

Flink facts used (checked in Flink's source):
- GlobalConfiguration: up to 1.18 only flink-conf.yaml is read, 1.19-1.20 either, 2.0+ only
  config.yaml (FLINK-33577, 2.0 release notes / FLINK-33677) -> a flat flink-conf.yaml is never 2.x.
- StateBackendLoader: 'jobmanager' / 'filesystem' are @Deprecated names in 1.13-1.20; the 2.x loader
  knows only hashmap, rocksdb, forst.
- Option catalog (flinktune/data, built from each release's *Options classes): env.java.home is an
  option only in 2.x (1.x read it in config.sh), jobmanager.heap.size / taskmanager.heap.mb are
  deprecated before 1.13, state.backend is deprecated from 1.17 (StateBackendOptions, successor
  state.backend.type).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from flinktune.config.reader import read_config_text
from flinktune.situation.version import infer_versions, resolve_version
from flinktune.versions import DEFAULT_VERSION, FlinkVersion


def _doc(text: str, name: str = "flink-conf.yaml"):
    return read_config_text(textwrap.dedent(text), name)[0]


def test_flat_file_is_never_inferred_as_flink_2_even_with_a_2x_only_key() -> None:
    # env.java.home is catalogued only for 2.x; a flat flink-conf.yaml is not read by 2.x at all.
    doc = _doc("""\
        env.java.home: /opt/java
        taskmanager.network.numberOfBuffers: 300
        """)
    inference = infer_versions(doc)
    assert inference.versions and max(inference.versions).major == 1
    assert resolve_version(doc).value.major == 1


def test_legacy_keys_put_a_file_before_later_deprecations() -> None:
    # jobmanager.heap.size: deprecated before 1.13; state.backend: deprecated from 1.17, and the
    # file lacks its successor state.backend.type -> written before 1.17.
    doc = _doc("""\
        jobmanager.heap.size: 1024m
        state.backend: rocksdb
        """)
    found = resolve_version(doc)
    assert (found.value, found.source) == (FlinkVersion(1, 16), "inferred")
    assert "state.backend" in found.detail and "jobmanager.heap.size" in found.detail


def test_a_later_deprecation_alone_keeps_the_default() -> None:
    # Without pre-1.13 keys a 1.17-era deprecated key is as likely a 1.20 file that kept it.
    doc = _doc("state.backend: rocksdb\nstate.checkpoints.dir: s3://b/c\n")
    assert resolve_version(doc).value == DEFAULT_VERSION


def test_a_successor_key_in_the_file_lifts_the_deprecation_evidence() -> None:
    doc = _doc("jobmanager.heap.size: 1024m\nstate.backend: rocksdb\nstate.backend.type: rocksdb\n")
    assert resolve_version(doc).value >= FlinkVersion(1, 17)


def test_legacy_state_backend_name_excludes_flink_2() -> None:
    doc = _doc("state.backend.type: filesystem\n", "config.yaml")
    assert max(infer_versions(doc).versions) < FlinkVersion(2, 0)
    assert max(infer_versions(_doc("state.backend.type: hashmap\n", "config.yaml")).versions).major == 2


_PROBE = """
import json, sys
from pathlib import Path
from flinktune.config.reader import read_config_file
from flinktune.situation.version import resolve_version
out = []
for p in sys.argv[1:]:
    for doc in read_config_file(p):
        found = resolve_version(doc)
        out.append([str(found.value), found.source, found.detail])
print(json.dumps(out))
"""


def test_inference_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    files = {
        "a-flink-conf.yaml": "env.java.home: /j\ntaskmanager.network.numberOfBuffers: 300mb\n"
                             "jobmanager.heap.size: 1g\nstate.backend: filesystem\nakka.ask.timeout: 10s\n",
        "b-config.yaml": "env:\n  java:\n    home: /j\nstate.backend.type: hashmap\n",
        "c-flink-conf.yaml": "cluster.evenly-spread-out-slots: true\ntable.exec.topn.cache-size: 10\n"
                             "high-availability.type: zookeeper\n",
    }
    paths = []
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        paths.append(str(tmp_path / name))
    seen = set()
    for seed in ("0", "1", "2", "3", "42"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        run = subprocess.run([sys.executable, "-c", _PROBE, *paths], capture_output=True, text=True,
                             env=env, timeout=120, check=True)
        seen.add(run.stdout)
    assert len(seen) == 1, seen
    results = json.loads(seen.pop())
    assert not results[0][0].startswith("2.")        # flat file


def test_a_comment_naming_the_version_is_read_when_the_content_fits_it() -> None:
    from flinktune.situation import resolve_situation

    text = ("# S3/MinIO (Flink 1.17 unified config)\nstate.backend: rocksdb\n"
            "state.checkpoints.dir: s3://bucket/cp\n")
    document = read_config_text(text, "flink-conf.yaml")[0]
    found = resolve_situation(document, text=text).version
    assert (str(found.value), found.source, found.line) == ("1.17", "inferred", 1)
    # Two versions named: no choice; a version the content rules out (a flat file is never read by
    # 2.x): ignored; the flinktune directive is not a mention.
    for other in ("# tested on Flink 1.17 and Flink 1.18\n", "# ported to flink-2.0 later\n",
                  "# flinktune: disable=FTC003 reason=\"Flink 1.17 cluster\"\n"):
        found = resolve_situation(read_config_text(other + text[39:], "flink-conf.yaml")[0],
                                  text=other + text[39:]).version
        assert found.source != "inferred" or "comment" not in found.detail, (other, found)
