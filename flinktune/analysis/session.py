"""Starting Spark: tuned defaults for a small machine, overridable with ``--conf``.

The settings come from measurements on a 2-core box (docs/analysis.md, spark-notes.md): 4 shuffle
partitions instead of 200, no UI, and a raised ``objectHashAggregate`` fallback threshold (its
default of 128 makes Spark sort almost all input when a task holds thousands of groups).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Final

from flinktune.analysis import class_cache
from flinktune.errors import MetricsError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER: Final[str] = "local[*]"

# Driver JVM options, measured whole-process on a 2-core box (benchmarks/results/analyze.md).
# The serial collector: fewer GC threads fighting the two task threads for the cores (1e6 rows:
# ~1 CPU-s less; 5e7 rows: analysis 47 -> 39 CPU-s).
JVM_OPTIONS: Final[str] = "-XX:+UseSerialGC"
# C1-only JIT: a short job spends most of its time warming up (class loading, code generation,
# C2 compiling code that runs once). Stopping at C1 roughly halves the JVM's CPU on small dumps
# (1e6 rows: session 8 -> 4.5 CPU-s, analysis 18 -> 9.5 CPU-s) but slows long scans
# (5e7 rows: 39 -> 58 CPU-s), so it is used only below this many input bytes.
QUICK_JIT_OPTIONS: Final[str] = "-XX:TieredStopAtLevel=1"
QUICK_JIT_MAX_INPUT_BYTES: Final[int] = 64 * 1024 * 1024

TUNED_CONF: Final[dict[str, str]] = {
    "spark.sql.shuffle.partitions": "4",
    # At most 64 MB per task: Spark also caps a split at the input size / cores, so both cores
    # still share a 50 MB file, while a 257 MB one gets 5 tasks instead of 16 (each task pays for
    # a footer read and Java serialization of its closure and results: 5e7 rows ~1.5 s faster).
    "spark.sql.files.maxPartitionBytes": "64m",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.objectHashAggregate.sortBased.fallbackThreshold": "1000000",
    "spark.sql.adaptive.enabled": "true",
    "spark.driver.memory": "1g",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
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
) -> SparkSession:
    """A Spark session with the tuned defaults; ``conf`` overrides any of them. ``input_bytes``
    (the local dump's size, when known) picks the driver JVM's JIT mode; JVM options only take
    effect when this call starts the JVM."""
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
    cache_options, _ = class_cache.jvm_options(class_cache.locate())
    settings["spark.driver.extraJavaOptions"] = f"{driver_java_options(input_bytes)} {cache_options}"
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    quiet = os.environ.get("FLINKTUNE_SPARK_VERBOSE", "") in ("", "0")
    try:
        with _stderr_silenced(quiet):
            spark = builder.getOrCreate()
    except Exception as error:  # py4j/JVM start-up failures carry multi-line Java text
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise MetricsError(
            f"cannot start Spark (master {master}): {first} "
            "(set FLINKTUNE_SPARK_VERBOSE=1 to see Spark's own log)"
        ) from None
    spark.sparkContext.setLogLevel(settings.get("spark.log.level", "OFF"))
    return spark


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
    return JVM_OPTIONS


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
