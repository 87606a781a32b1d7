"""Starting Spark: tuned defaults for a small machine, overridable with ``--conf``.

The settings come from measurements on a 2-core box (docs/analysis.md, spark-notes.md): 4 shuffle
partitions instead of 200, no UI, and a raised ``objectHashAggregate`` fallback threshold (its
default of 128 makes Spark sort almost all input when a task holds thousands of groups).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from flinktune.errors import MetricsError
from flinktune.spark import class_cache

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER: Final[str] = "local[*]"

# Driver JVM options, measured whole-process on a 2-core box (benchmarks/results/analyze.md).
# The serial collector: fewer GC threads fighting the two task threads for the cores (1e6 rows:
# ~1 CPU-s less; 5e7 rows: analysis 47 -> 39 CPU-s). No perf-data file (/tmp/hsperfdata_*): a JVM
# ended at once (end_at_exit) would leave it behind.
JVM_OPTIONS: Final[str] = "-XX:+UseSerialGC -XX:-UsePerfData"
# C1-only JIT: a short job spends most of its time warming up (class loading, code generation,
# C2 compiling code that runs once). Stopping at C1 roughly halves the JVM's CPU on small dumps
# (1e6 rows: session 8 -> 4.5 CPU-s, analysis 18 -> 9.5 CPU-s) but slows long scans
# (5e7 rows: 39 -> 58 CPU-s), so it is used only below this many input bytes.
QUICK_JIT_OPTIONS: Final[str] = "-XX:TieredStopAtLevel=1"
QUICK_JIT_MAX_INPUT_BYTES: Final[int] = 64 * 1024 * 1024
# The full JIT, with later compiles: every threshold x4 (CompileThresholdScaling), C2's raised
# further (the Tier4 values, scaled by it too). With the defaults a 5e7-row run compiled ~1,300
# methods with C2 and ~11,000 with C1, ~9 s of compiler threads (-XX:+CITime) on a 2-core machine:
# mostly the driver's start-up and planning code, which runs once per run. Later thresholds leave
# C2 to the scan's loops (measured at 5e7 rows, whole runs: JVM CPU 16.3-17.2 -> 13.3-13.8 s on
# the base and long shapes, ~1 s less per run; wide, 50 jobs and 8 files 0.3-1 s less; C1-only
# stays faster up to 1e7 rows).
FULL_JIT_OPTIONS: Final[str] = (
    "-XX:CompileThresholdScaling=4 -XX:Tier4InvocationThreshold=40000 "
    "-XX:Tier4MinInvocationThreshold=20000 -XX:Tier4CompileThreshold=50000"
)

TUNED_CONF: Final[dict[str, str]] = {
    "spark.sql.shuffle.partitions": "4",
    # At most 64 MB per task: Spark also caps a split at the input size / cores, so both cores
    # still share a 50 MB file, while a 257 MB one gets 5 tasks instead of 16 (each task pays for
    # a footer read and Java serialization of its closure and results: 5e7 rows ~1.5 s faster).
    "spark.sql.files.maxPartitionBytes": "64m",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.objectHashAggregate.sortBased.fallbackThreshold": "1000000",
    # One hash map per aggregation, without the small row-based first-level map Spark puts in
    # front of it (min_by/max_by keep the vectorised one out): measured, the slot aggregation of
    # 5e7 rows took ~12% less JVM CPU (whole run ~0.5 s of 10.5 s), and no shape measured (120
    # to 51,200 series, 1e6 to 5e7 rows) was measurably slower.
    "spark.sql.codegen.aggregate.map.twolevel.enabled": "false",
    "spark.sql.adaptive.enabled": "true",
    "spark.driver.memory": "1g",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    # Small dumps come back as their keyed rows (job.LOCAL_SLOTS_MAX_ROWS): 10 batches instead of
    # 100 for 1e6 rows (measured whole-process: p = 512 4.2-4.5 -> 4.0-4.1 s, 2,000 series ~0.15 s).
    "spark.sql.execution.arrow.maxRecordsPerBatch": "100000",
    # Fail instead of guessing when a column's type is wrong (we pass explicit schemas).
    "spark.sql.ansi.enabled": "false",
    # Failures reach the user as one line through MetricsError; Spark's own log would print
    # task stack traces to stderr.
    "spark.log.level": "OFF",
}


def java_available() -> bool:
    home = os.environ.get("JAVA_HOME")
    if home and os.path.exists(os.path.join(home, "bin", "java")):
        return True
    return shutil.which("java") is not None


def build_session(
    master: str = DEFAULT_MASTER,
    conf: Mapping[str, str] | None = None,
    app_name: str = "flinktune-analyze",
    input_bytes: int | None = None,
    spark_log: bool = False,
) -> SparkSession:
    """A Spark session with the tuned defaults; ``conf`` overrides any of them. ``input_bytes``
    (the local dump's size, when known) picks the driver JVM's JIT mode; JVM options only take
    effect when this call starts the JVM. ``spark_log`` (``-v``, or FLINKTUNE_SPARK_VERBOSE=1 as
    docs/analysis.md says): Spark's own log on stderr."""
    if not java_available():
        raise MetricsError(
            "Java not found: Spark needs a Java runtime (17 or newer); install one or set JAVA_HOME"
        )
    # Python workers (if Spark ever starts any) must run this interpreter, not whatever
    # `python3` is on PATH.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(app_name)
    settings = dict(TUNED_CONF)
    cache_options, recording = class_cache.jvm_options(class_cache.locate())
    settings["spark.driver.extraJavaOptions"] = f"{driver_java_options(input_bytes)} {cache_options}"
    settings.update(conf or {})
    fast_end = fast_end_allowed(master, settings, recording)
    for key, value in settings.items():
        builder = builder.config(key, value)
    quiet = not spark_log and os.environ.get("FLINKTUNE_SPARK_VERBOSE", "") in ("", "0")
    try:
        with (_stderr_silenced(quiet), _tracked_gateway(_local_base(settings), fast_end),
              _signal_handlers_kept()):
            spark = builder.getOrCreate()
    except Exception as error:  # py4j/JVM start-up failures carry multi-line Java text
        stop_started_processes()
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise MetricsError(
            f"cannot start Spark (master {master}): {first} "
            "(set FLINKTUNE_SPARK_VERBOSE=1 to see Spark's own log)"
        ) from None
    except BaseException:  # Ctrl-C / SIGTERM while the JVM starts
        stop_started_processes()
        raise
    spark.sparkContext.setLogLevel(settings.get("spark.log.level", "OFF"))
    return spark


# The py4j gateway JVMs this process started (spark-submit execs the JVM in the same process, so
# the Popen is the JVM). Each runs in a session of its own: a terminal's Ctrl-C does not reach it,
# and its whole process group (the launcher, the JVM, any worker it forks) can be ended at once.
_started: list[subprocess.Popen[bytes]] = []
# How long a JVM gets after SIGTERM to run its shutdown hooks (they delete its spark-* temp
# folders) before SIGKILL.
STOP_GRACE_S: Final[float] = 10.0


# Each gateway JVM's own folder for its spark-* scratch folders (SPARK_LOCAL_DIRS), removed once
# the JVM has ended. The JVM's shutdown hooks delete what they know of, but a JVM ended while it
# starts can create a folder after they ran (seen: spark-*/userFiles-* left by a Ctrl-C at ~1.8 s,
# about 1 run in 50).
_local_dirs: dict[int, str] = {}


def _local_base(settings: Mapping[str, str]) -> str:
    """Where the driver's scratch folders would go: SPARK_LOCAL_DIRS, else spark.local.dir (their
    first entry), else the temp folder."""
    configured = os.environ.get("SPARK_LOCAL_DIRS") or settings.get("spark.local.dir") or ""
    first = configured.split(",")[0].strip()
    return first if first and os.path.isdir(first) else tempfile.gettempdir()


class _GatewayPopen(subprocess.Popen):  # type: ignore[type-arg]
    def __init__(self, *args: Any, local_base: str | None = None, fast_end: bool = False,
                 **kwargs: Any) -> None:
        kwargs["start_new_session"] = True
        # The JVM's stdout goes where stderr goes now (/dev/null unless Spark's log was asked for):
        # nothing it prints can get into `--format json` output, and a reader of our stdout sees
        # its end when we exit, not when the JVM has shut down.
        kwargs.setdefault("stdout", 2)
        private = None
        env = kwargs.get("env")
        if local_base is not None and isinstance(env, dict):
            # Only the driver JVM's environment: executors elsewhere keep their own local dirs.
            private = tempfile.mkdtemp(prefix="flinktune-spark-", dir=local_base)
            env["SPARK_LOCAL_DIRS"] = private
            # Java's temp folder too (Spark's spark-* and artifacts-* folders, the lz4 native
            # library): everything the JVM leaves is in the one folder removed after it.
            quoted = private.replace("\\", "\\\\").replace('"', '\\"')
            submit_opts = f'{env.get("SPARK_SUBMIT_OPTS", "")} -Djava.io.tmpdir="{quoted}"'
            env["SPARK_SUBMIT_OPTS"] = submit_opts.strip()
        self.fast_end = fast_end
        try:
            super().__init__(*args, **kwargs)
        except BaseException:
            # A signal after the fork, while Popen waits for the exec to succeed, raises here with
            # the child running (SIGTERM 0.6 s into `analyze`: a JVM and its folder left behind).
            # Such a child is recorded like any other, so stop_started_processes ends it.
            if getattr(self, "pid", None) is not None and self.returncode is None:
                self._record(private)
            elif private is not None:
                shutil.rmtree(private, ignore_errors=True)
            raise
        self._record(private)

    def _record(self, private: str | None) -> None:
        _started.append(self)
        if private is not None:
            _local_dirs[self.pid] = private
            # A run that ends normally: the JVM ends with this process; remove what it leaves.
            atexit.register(shutil.rmtree, private, True)


@contextlib.contextmanager
def _tracked_gateway(local_base: str | None = None, fast_end: bool = False) -> Iterator[None]:
    """pyspark starts the gateway inside ``getOrCreate`` and hands its Popen back only when the
    JVM is up; a signal in between would lose it (the JVM then outlives us, re-parented to PID 1).
    So the Popen pyspark calls records each process as it starts."""
    try:
        from pyspark import java_gateway
    except ImportError:
        yield
        return
    original = getattr(java_gateway, "Popen", None)
    if original is None:
        yield
        return
    java_gateway.Popen = functools.partial(  # type: ignore[attr-defined]
        _GatewayPopen, local_base=local_base, fast_end=fast_end
    )
    try:
        yield
    finally:
        java_gateway.Popen = original  # type: ignore[attr-defined]


@contextlib.contextmanager
def _signal_handlers_kept() -> Iterator[None]:
    """pyspark replaces the SIGINT handler with one that cancels Spark jobs and raises
    KeyboardInterrupt; the cancelled job then fails with a SparkException that reads like a bad
    dump. Keep the caller's handlers instead: they stop the JVM."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {num: signal.getsignal(num) for num in (signal.SIGINT, signal.SIGTERM)}
    # Not even for the rest of start-up: a Ctrl-C there would run pyspark's handler, whose py4j
    # call (cancelAllJobs) waits behind the main thread's own py4j call and never returns.
    patched = []
    for name in ("pyspark.core.context", "pyspark.context"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "signal", None) is signal:
            module.signal = _SIGINT_KEPT  # type: ignore[attr-defined]
            patched.append(module)
    try:
        yield
    finally:
        for module in patched:
            module.signal = signal  # type: ignore[attr-defined]
        for num, handler in saved.items():
            if handler is not None:
                signal.signal(num, handler)


class _SigintKeptModule:
    """The ``signal`` module as pyspark's context module sees it during start-up: every call passes
    through, except installing a SIGINT handler, which keeps the current one."""

    def __getattr__(self, name: str) -> Any:
        return getattr(signal, name)

    @staticmethod
    def signal(signum: int, handler: Any) -> Any:
        if signum == signal.SIGINT:
            return signal.getsignal(signum)
        return signal.signal(signum, handler)


_SIGINT_KEPT = _SigintKeptModule()


def stop_started_processes() -> None:
    """End the gateway JVMs this process started, with everything in their process groups:
    SIGTERM (the JVM's shutdown hooks remove its spark-* temp folders), SIGKILL after
    STOP_GRACE_S. Also drops this process's half-recorded class list. Never raises."""
    while _started:
        _end_and_remove(_started.pop())
    with contextlib.suppress(Exception):
        class_cache.drop_recording(class_cache.locate())
    with contextlib.suppress(Exception):
        from pyspark import SparkContext

        # The JVM is gone: later code in this process must start a new one, not talk to a corpse.
        SparkContext._active_spark_context = None  # type: ignore[attr-defined]
        SparkContext._gateway = None  # type: ignore[attr-defined]
        SparkContext._jvm = None  # type: ignore[attr-defined]
        from pyspark.sql import SparkSession

        SparkSession._instantiatedSession = None  # type: ignore[attr-defined]
        SparkSession._activeSession = None  # type: ignore[attr-defined]


def fast_end_allowed(master: str, settings: Mapping[str, str], recording: bool) -> bool:
    """Whether the driver JVM may be ended at once (SIGKILL) when the command is done, instead of
    shutting down on its own after this process exits (~0.35 s of its shutdown hooks, measured,
    while it still holds our output pipes). Only when nothing would be lost: a local master (no
    application to unregister, no executor JVMs), no event log to complete, and no class list
    being recorded for the class-data archive (its builder reads the list once the JVM has
    exited)."""
    event_log = str(settings.get("spark.eventLog.enabled", "false")).strip().lower() == "true"
    # local-cluster[...] runs executor JVMs of their own, with temp folders of their own
    local = master == "local" or master.startswith("local[")
    return local and not event_log and not recording


def end_at_exit() -> None:
    """The command is done: end the JVMs that may be ended at once (fast_end_allowed) with SIGKILL,
    and remove their folders (java.io.tmpdir and Spark's local dirs are inside them). Others
    shut down on their own when this process exits, as pyspark arranges. Never raises."""
    for proc in [p for p in _started if getattr(p, "fast_end", False)]:
        _started.remove(proc)
        _end_and_remove(proc, ((signal.SIGKILL, 5.0),))


_GRACEFUL: Final[tuple[tuple[signal.Signals, float], ...]] = (
    (signal.SIGTERM, STOP_GRACE_S),
    (signal.SIGKILL, 5.0),
)


def _end_and_remove(
    proc: subprocess.Popen[bytes], signals: tuple[tuple[signal.Signals, float], ...] = _GRACEFUL
) -> None:
    """End ``proc``'s process group, then remove its private folder (Spark's local dirs and
    Java's temp folder)."""
    _end_group(proc, signals)
    private = _local_dirs.pop(proc.pid, None)
    if private is not None:
        shutil.rmtree(private, ignore_errors=True)


def _end_group(
    proc: subprocess.Popen[bytes], signals: tuple[tuple[signal.Signals, float], ...] = _GRACEFUL
) -> None:
    for sig, wait_s in signals:
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            break  # the group is empty
        except OSError:
            break
        deadline = time.monotonic() + wait_s
        with contextlib.suppress(Exception):
            proc.wait(timeout=wait_s)  # the leader (the JVM), reaped as soon as it has exited
        while time.monotonic() < deadline and _group_alive(proc.pid):
            time.sleep(0.02)
        if not _group_alive(proc.pid):
            break
    with contextlib.suppress(Exception):
        proc.wait(timeout=1)
    with contextlib.suppress(Exception):
        if proc.stdin is not None:
            proc.stdin.close()


def _group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs. Zombies do not count: a child the JVM had not
    reaped when it was killed waits for init to reap it (measured: up to 1.7 s), holding nothing."""
    try:
        os.killpg(pgid, 0)
    except OSError:
        return False
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True  # no /proc: count every member
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # after the command name: state, parent, process group
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] != b"Z":
            return True
    return False


def after_run(spark: SparkSession) -> None:
    """When this session's JVM recorded its class list (no class-data archive yet), start the
    detached build of the archive for the next runs (class_cache.py). Never raises."""
    try:
        jvm = spark._jvm  # type: ignore[attr-defined]
        args = [
            str(a) for a in jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
        ]
        if not any(a.startswith("-XX:DumpLoadedClassList=") for a in args):
            return
        cache = class_cache.locate()
        if cache is None:
            return
        java = os.path.join(str(jvm.System.getProperty("java.home")), "bin", "java")
        classpath = str(jvm.System.getProperty("java.class.path"))
        pid = int(jvm.java.lang.ProcessHandle.current().pid())
        if not class_cache.start_build(cache, pid, classpath, args, java):
            for part in cache.directory.glob(f"spark-{cache.key}.classlist.{os.getpid()}.part"):
                part.unlink(missing_ok=True)
    except Exception:  # the cache is an optimisation; a failure here must not fail the analysis
        return


def driver_java_options(input_bytes: int | None) -> str:
    if input_bytes is not None and input_bytes <= QUICK_JIT_MAX_INPUT_BYTES:
        return f"{JVM_OPTIONS} {QUICK_JIT_OPTIONS}"
    return f"{JVM_OPTIONS} {FULL_JIT_OPTIONS}"


@contextlib.contextmanager
def _stderr_silenced(quiet: bool) -> Iterator[None]:
    """The JVM writes start-up chatter (log4j defaults, hostname warnings) to the stderr it
    inherits; hand it /dev/null instead so the user sees flinktune's output only. Failures still
    reach the user: they come back through py4j as exceptions."""
    if not quiet:
        yield
        return
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
