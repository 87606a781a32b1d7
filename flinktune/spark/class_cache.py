"""A class-data-sharing (CDS) archive of the Spark driver's classes, kept in a user cache.

Starting Spark loads and verifies ~17,000 classes; on a 2-core machine that is about half of the
session start and much of the first query's planning (measured, benchmarks/results/analyze.md:
session 4.1 -> 2.0 s, a 1e6-row analysis 11.1 -> 7.3 s in all). Java 17 can map those classes
from an archive instead (JEP 310, AppCDS), so:

1. a run with no archive records the classes it loads (``-XX:DumpLoadedClassList``, no
   measurable cost);
2. after that run, a detached low-priority process builds the archive from the list with
   ``java -Xshare:dump`` (about 40 CPU seconds, once) and renames it into place;
3. later runs start the JVM with ``-XX:SharedArchiveFile``.

The archive is keyed by the Java binary and Spark's jars (folder, names and sizes), so upgrading either
builds a new one; the JVM itself also refuses an archive that does not match its class path and
then runs without it (``-Xshare:auto``). ``FLINKTUNE_CLASS_CACHE=0`` turns it all off;
``FLINKTUNE_CACHE_DIR`` moves it (default ``$XDG_CACHE_HOME/flinktune`` or ``~/.cache/flinktune``).
Nothing here is needed for correctness: any failure leaves Spark to start as usual.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

SWITCH_ENV: Final[str] = "FLINKTUNE_CLASS_CACHE"
DIR_ENV: Final[str] = "FLINKTUNE_CACHE_DIR"
# A lock older than this belongs to a builder that died.
STALE_LOCK_S: Final[float] = 15 * 60
# Archives of other Java/Spark installs unused this long are removed when a new one is built.
UNUSED_ARCHIVE_S: Final[float] = 30 * 24 * 3600
# JVM options that change what an archive may hold; part of the key.
KEYED_OPTIONS: Final[tuple[str, ...]] = ("-XX:+UseSerialGC",)
# Unified-logging warnings (e.g. "archive does not match") go to stderr, never into stdout where
# `--format json` output goes.
LOG_OPTIONS: Final[str] = "-Xlog:disable -Xlog:all=warning:stderr"
# JVM options from the environment reach every JVM; agents and flight recordings among them hook
# class loading, and a JFR recording with a mapped archive crashed this JDK (17.0.15, measured).
# With any of these set, no archive is used or built.
FOREIGN_OPTION_ENVS: Final[tuple[str, ...]] = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS")


@dataclass(frozen=True)
class ClassCache:
    directory: Path
    key: str

    @property
    def archive(self) -> Path:
        return self.directory / f"spark-{self.key}.jsa"

    @property
    def class_list(self) -> Path:
        return self.directory / f"spark-{self.key}.classlist"

    @property
    def lock(self) -> Path:
        return self.directory / f"spark-{self.key}.lock"


def enabled() -> bool:
    if any(os.environ.get(name, "").strip() for name in FOREIGN_OPTION_ENVS):
        return False
    return os.environ.get(SWITCH_ENV, "1").strip().lower() not in ("0", "off", "false", "no")


def cache_dir() -> Path:
    if os.environ.get(DIR_ENV):
        return Path(os.environ[DIR_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "flinktune"


def java_binary() -> str | None:
    """The java Spark's launcher will run: $JAVA_HOME/bin/java, else the first on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and os.path.exists(os.path.join(home, "bin", "java")):
        return os.path.realpath(os.path.join(home, "bin", "java"))
    found = shutil.which("java")
    return os.path.realpath(found) if found else None


def spark_jars_dir() -> Path | None:
    home = os.environ.get("SPARK_HOME")
    if not home:
        try:
            from pyspark.find_spark_home import _find_spark_home

            home = _find_spark_home()
        except Exception:  # pyspark missing or odd layout: no cache, Spark reports its own error
            return None
    jars = Path(home) / "jars"
    return jars if jars.is_dir() else None


def cache_key(java: str, jars: Path, options: tuple[str, ...] = KEYED_OPTIONS) -> str:
    """Hash of the Java binary (path, size, mtime), the jars' folder, names and sizes, and the
    options. The folder counts: an archive records absolute jar paths, so two virtualenvs with the
    same pyspark need one archive each."""
    h = hashlib.sha256()
    st = os.stat(java)
    h.update(f"{java}\0{st.st_size}\0{st.st_mtime_ns}\0{jars.resolve()}\0".encode())
    for entry in sorted(os.scandir(jars), key=lambda e: e.name):
        if entry.name.endswith(".jar"):
            h.update(f"{entry.name}\0{entry.stat().st_size}\0".encode())
    h.update("\0".join(options).encode())
    return h.hexdigest()[:20]


def locate() -> ClassCache | None:
    """The cache for this Java and Spark, or None when off or undeterminable. Paths with blanks
    or quotes are refused: Spark splits its JVM option string at blanks."""
    if not enabled():
        return None
    java = java_binary()
    jars = spark_jars_dir()
    if java is None or jars is None:
        return None
    directory = cache_dir()
    if any(ch in str(directory) for ch in " \t\n'\"\\"):
        return None
    try:
        return ClassCache(directory, cache_key(java, jars))
    except OSError:
        return None


def _lock_held(cache: ClassCache) -> bool:
    try:
        return time.time() - cache.lock.stat().st_mtime < STALE_LOCK_S
    except OSError:
        return False


def jvm_options(cache: ClassCache | None) -> tuple[str, bool]:
    """(options for the driver JVM, whether this run records its class list)."""
    if cache is None:
        return LOG_OPTIONS, False
    if cache.archive.is_file():
        with contextlib.suppress(OSError):
            os.utime(cache.archive)  # last use, for the pruning in build()
        return f"-XX:SharedArchiveFile={cache.archive} -Xshare:auto {LOG_OPTIONS}", False
    if _lock_held(cache) or cache.class_list.exists():
        return LOG_OPTIONS, False  # a build is under way
    try:
        cache.directory.mkdir(parents=True, exist_ok=True)
        _drop_orphan_recordings(cache.directory)
    except OSError:
        return LOG_OPTIONS, False
    if not os.access(cache.directory, os.W_OK):
        return LOG_OPTIONS, False
    return f"-XX:DumpLoadedClassList={_recording(cache)} {LOG_OPTIONS}", True


def _drop_orphan_recordings(directory: Path) -> None:
    """Class lists recorded by processes that are gone and started no build (a session that was
    never followed by after_run, e.g. a test suite's shared session)."""
    for part in directory.glob("spark-*.classlist.*.part"):
        try:
            pid = int(part.name.rsplit(".", 2)[-2])
        except ValueError:
            continue
        if not alive(pid) and not _lock_held(ClassCache(directory, part.name[6:].split(".")[0])):
            part.unlink(missing_ok=True)


def alive(pid: int) -> bool:
    """Whether a process with this id exists (one owned by another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _recording(cache: ClassCache) -> Path:
    return cache.directory / f"spark-{cache.key}.classlist.{os.getpid()}.part"


def drop_recording(cache: ClassCache | None) -> None:
    """Remove this process's class list (an interrupted run: the list is incomplete)."""
    if cache is not None:
        _recording(cache).unlink(missing_ok=True)


def first_build_pending(cache: ClassCache | None) -> bool:
    """Whether a run now would record a class list and then start the archive build (no archive,
    no build under way): the one-time background work the CLI tells the user about."""
    if cache is None or cache.archive.is_file():
        return False
    return not (_lock_held(cache) or cache.class_list.exists())


def start_build(cache: ClassCache, jvm_pid: int, classpath: str, jvm_args: list[str], java: str) -> bool:
    """After a recording run: hand the class list to a detached, low-priority builder that waits
    for the driver JVM to exit (the list is complete then), builds the archive and renames it into
    place. Returns whether a builder was started."""
    try:
        fd = os.open(cache.lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        if _lock_held(cache):
            return False
        cache.lock.unlink(missing_ok=True)
        try:
            fd = os.open(cache.lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except OSError:
            return False
    except OSError:
        return False
    os.close(fd)
    args_file = cache.directory / f"spark-{cache.key}.args"
    try:
        args_file.write_text("\n".join([java, classpath, *dump_arguments(jvm_args)]) + "\n")
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "flinktune.spark.class_cache",
                str(cache.directory),
                cache.key,
                str(jvm_pid),
                str(os.getpid()),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        cache.lock.unlink(missing_ok=True)
        return False
    return True


def dump_arguments(jvm_args: list[str]) -> list[str]:
    """The driver's JVM arguments that shape class loading (modules, opens, GC), without the
    ones that name files or heap sizes."""
    drop = (
        "-Xmx",
        "-Xms",
        "-XX:DumpLoadedClassList",
        "-XX:SharedArchiveFile",
        "-Xshare",
        "-Xlog",
        "-XX:TieredStopAtLevel",
        "-XX:CompileThresholdScaling",
        "-XX:Tier4",
        "-Dspark.",
        "-Djava.io.tmpdir",
        "-agentlib",
        "-javaagent",
    )
    return [a for a in jvm_args if not a.startswith(drop)]


def build(cache: ClassCache, class_list: Path, java: str, classpath: str, args: list[str]) -> bool:
    """``java -Xshare:dump`` into a temporary file, then an atomic rename. Archives of other keys
    left unused for a month are removed after a success."""
    tmp = cache.directory / f"spark-{cache.key}.jsa.{os.getpid()}.tmp"
    cmd = [
        java,
        "-Xshare:dump",
        f"-XX:SharedClassListFile={class_list}",
        f"-XX:SharedArchiveFile={tmp}",
        "-cp",
        classpath,
        *args,
        "-Xlog:disable",
    ]
    try:
        done = subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=600,
            check=False,
        )
        if done.returncode != 0 or not tmp.is_file():
            return False
        os.replace(tmp, cache.archive)
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        tmp.unlink(missing_ok=True)
    prune(cache.directory, keep=cache.key)
    return True


def prune(directory: Path, keep: str, now: float | None = None) -> None:
    """Remove archives (and their .args) of other keys unused for UNUSED_ARCHIVE_S: other
    virtualenvs keep theirs while they are in use."""
    now = time.time() if now is None else now
    for old in directory.glob("spark-*.jsa"):
        key = old.name[len("spark-") : -len(".jsa")]
        try:
            unused = now - old.stat().st_mtime > UNUSED_ARCHIVE_S
        except OSError:
            continue
        if key != keep and unused:
            old.unlink(missing_ok=True)
            (directory / f"spark-{key}.args").unlink(missing_ok=True)


def _wait_for_exit(pid: int, timeout_s: float) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end and alive(pid):
        time.sleep(0.5)


class _Ended(Exception):
    """The builder was asked to stop (SIGTERM, SIGHUP, SIGINT)."""


def _raise_ended(_signum: int, _frame: object) -> None:
    raise _Ended()


def _builder_main(directory: str, key: str, jvm_pid: str, parent_pid: str) -> int:
    cache = ClassCache(Path(directory), key)
    # Ended from outside (logout, shutdown, kill): unwind through the finally blocks so no
    # half-written archive, class list or lock is left (subprocess.run kills `java -Xshare:dump`).
    built = False
    try:
        # SIGTERM last: a caught SIGTERM tells an observer (the tests) that all three are handled.
        # Inside the try: a signal from here on unwinds through the cleanup below.
        for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
            signal.signal(signum, _raise_ended)
        with contextlib.suppress(OSError):
            os.nice(19)
        _wait_for_exit(int(parent_pid), 600)
        _wait_for_exit(int(jvm_pid), 120)
        lines = (cache.directory / f"spark-{key}.args").read_text().splitlines()
        java, classpath, args = lines[0], lines[1], lines[2:]
        part = cache.directory / f"spark-{key}.classlist.{parent_pid}.part"
        if not part.is_file():
            return 1
        os.replace(part, cache.class_list)
        built = build(cache, cache.class_list, java, classpath, args)
    except (OSError, ValueError, IndexError, _Ended):
        built = False
    finally:
        cache.class_list.unlink(missing_ok=True)
        # The .args file stays beside a built archive: it names the class path the archive is for.
        if not built:
            (cache.directory / f"spark-{key}.args").unlink(missing_ok=True)
        cache.lock.unlink(missing_ok=True)
    return 0 if built else 1


if __name__ == "__main__":  # the detached builder started by start_build()
    raise SystemExit(_builder_main(*sys.argv[1:5]))
