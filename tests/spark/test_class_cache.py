"""The class-data archive of Spark's driver classes: keyed by Java and Spark's jars, off by a
switch, never in the way; and, once, for real: a run records, the builder writes an archive the
JVM accepts (``-Xshare:on`` refuses to start with one that does not match), and the next run
gives the same report."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flinktune.spark import class_cache

REPO = Path(__file__).resolve().parents[2]


def _fake_jars(tmp: Path) -> tuple[str, Path]:
    java = tmp / "java"
    java.write_bytes(b"\x7fELF")
    jars = tmp / "jars"
    jars.mkdir()
    (jars / "spark-core.jar").write_bytes(b"a" * 10)
    (jars / "README").write_text("not a jar")
    return str(java), jars


def test_key_follows_java_jars_and_options(tmp_path) -> None:  # type: ignore[no-untyped-def]
    java, jars = _fake_jars(tmp_path)
    k1 = class_cache.cache_key(java, jars)
    assert class_cache.cache_key(java, jars) == k1
    (jars / "README").write_text("still not a jar, still the same key")
    assert class_cache.cache_key(java, jars) == k1
    (jars / "spark-core.jar").write_bytes(b"a" * 11)  # an upgraded jar
    k2 = class_cache.cache_key(java, jars)
    assert k2 != k1
    assert class_cache.cache_key(java, jars, ("-XX:+UseG1GC",)) != k2
    # The same jars in another virtualenv: another archive (it records absolute paths).
    other = tmp_path / "venv2" / "jars"
    other.mkdir(parents=True)
    (other / "spark-core.jar").write_bytes(b"a" * 11)
    assert class_cache.cache_key(java, other) != k2


def test_options_for_each_state(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    cache = class_cache.ClassCache(tmp_path / "c", "k")
    opts, recording = class_cache.jvm_options(cache)
    assert recording and "-XX:DumpLoadedClassList=" in opts and (tmp_path / "c").is_dir()
    cache.lock.write_text("")
    assert class_cache.jvm_options(cache) == (class_cache.LOG_OPTIONS, False)  # a build under way
    cache.lock.unlink()
    cache.archive.write_bytes(b"archive")
    opts, recording = class_cache.jvm_options(cache)
    assert not recording and f"-XX:SharedArchiveFile={cache.archive}" in opts and "-Xshare:auto" in opts
    assert class_cache.jvm_options(None) == (class_cache.LOG_OPTIONS, False)


def test_switch_and_unsafe_paths(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for name in class_cache.FOREIGN_OPTION_ENVS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(class_cache.SWITCH_ENV, "0")
    assert class_cache.locate() is None
    monkeypatch.setenv(class_cache.SWITCH_ENV, "1")
    assert class_cache.enabled()
    # An agent or flight recording in the environment reaches Spark's JVM too: no archive then.
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-XX:StartFlightRecording")
    assert not class_cache.enabled() and class_cache.locate() is None
    monkeypatch.delenv("JAVA_TOOL_OPTIONS")
    monkeypatch.setenv(class_cache.DIR_ENV, str(tmp_path / "with blank"))
    assert class_cache.locate() is None  # Spark splits JVM options at blanks


def test_stale_lock_does_not_block(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cache = class_cache.ClassCache(tmp_path, "k")
    cache.lock.write_text("")
    old = time.time() - class_cache.STALE_LOCK_S - 5
    os.utime(cache.lock, (old, old))
    _, recording = class_cache.jvm_options(cache)
    assert recording


def test_orphan_recordings_are_dropped(tmp_path) -> None:  # type: ignore[no-untyped-def]
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan = tmp_path / f"spark-k.classlist.{dead.pid}.part"
    mine = tmp_path / f"spark-k.classlist.{os.getpid()}.part"
    orphan.write_text("x")
    mine.write_text("x")
    class_cache._drop_orphan_recordings(tmp_path)
    assert not orphan.exists() and mine.exists()


def test_prune_keeps_archives_in_use(tmp_path) -> None:  # type: ignore[no-untyped-def]
    now = time.time()
    for key, age_days in (("mine", 90), ("other-venv", 3), ("gone", 40)):
        archive = tmp_path / f"spark-{key}.jsa"
        archive.write_bytes(b"x")
        (tmp_path / f"spark-{key}.args").write_text("java\ncp\n")
        os.utime(archive, (now - age_days * 86400, now - age_days * 86400))
    class_cache.prune(tmp_path, keep="mine", now=now)
    assert sorted(p.name for p in tmp_path.glob("*.jsa")) == ["spark-mine.jsa", "spark-other-venv.jsa"]
    assert not (tmp_path / "spark-gone.args").exists()
    # Using an archive marks it as used.
    old = now - 90 * 86400
    os.utime(tmp_path / "spark-mine.jsa", (old, old))
    class_cache.jvm_options(class_cache.ClassCache(tmp_path, "mine"))
    assert (tmp_path / "spark-mine.jsa").stat().st_mtime > now - 60


def test_dump_arguments_keep_modules_not_files() -> None:
    args = [
        "-Xmx1g",
        "-XX:+UseSerialGC",
        "--add-modules=jdk.incubator.vector",
        "-XX:DumpLoadedClassList=/x",
        "-XX:SharedArchiveFile=/y",
        "-Xlog:disable",
        "--add-opens=java.base/java.lang=ALL-UNNAMED",
        # JIT thresholds and tiers do not shape class loading
        "-XX:TieredStopAtLevel=1",
        "-XX:CompileThresholdScaling=4",
        "-XX:Tier4InvocationThreshold=40000",
        "-Djava.io.tmpdir=/tmp/flinktune-spark-x",  # removed with the run
    ]
    assert class_cache.dump_arguments(args) == [
        "-XX:+UseSerialGC",
        "--add-modules=jdk.incubator.vector",
        "--add-opens=java.base/java.lang=ALL-UNNAMED",
    ]


@pytest.mark.spark
@pytest.mark.slow
def test_recorded_run_builds_an_archive_the_jvm_accepts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    if shutil.which("java") is None:
        pytest.skip("Java is not installed")
    dump = REPO / "sample_data" / "slow-sink"
    env = {**os.environ, class_cache.DIR_ENV: str(tmp_path), class_cache.SWITCH_ENV: "1", "NO_COLOR": "1"}
    cmd = [sys.executable, "-m", "flinktune", "analyze", str(dump), "--format", "json", "--no-progress"]
    # A run that fails (an unreadable dump) starts no build and says nothing about one.
    bad = tmp_path.parent / f"{tmp_path.name}-bad.parquet"
    bad.write_bytes(b"not parquet")
    failed = subprocess.run([*cmd[:4], str(bad), "--no-progress"], capture_output=True, text=True, env=env,
                            timeout=600)
    assert failed.returncode == 2 and len(failed.stderr.strip().splitlines()) == 1, failed.stderr
    assert "Xshare" not in failed.stderr and not list(tmp_path.glob("*.lock"))
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert first.returncode in (0, 1), first.stderr
    # The first successful run says, once, what it left running and where (issue 15).
    notes = [line for line in first.stderr.splitlines() if "Xshare:dump" in line]
    assert len(notes) == 1 and str(tmp_path) in notes[0] and class_cache.SWITCH_ENV in notes[0], first.stderr
    deadline = time.monotonic() + 420
    while time.monotonic() < deadline and not (
        list(tmp_path.glob("*.jsa")) and not list(tmp_path.glob("*.lock"))
    ):
        time.sleep(2)
    archives = list(tmp_path.glob("spark-*.jsa"))
    assert len(archives) == 1, sorted(p.name for p in tmp_path.iterdir())
    assert not list(tmp_path.glob("*.part")) and not list(tmp_path.glob("*.lock"))
    # The JVM maps it with the class path and options Spark's driver ran with (kept beside it);
    # -Xshare:on refuses to start on any mismatch instead of quietly running without it.
    java, classpath, *args = archives[0].with_suffix(".args").read_text().splitlines()
    check = subprocess.run(
        [java, "-Xshare:on", f"-XX:SharedArchiveFile={archives[0]}", "-cp", classpath, *args, "-version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode == 0, check.stderr + check.stdout
    second = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert second.returncode == first.returncode and second.stdout == first.stdout
    assert "Xshare" not in second.stderr
