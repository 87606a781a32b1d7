"""The driver JVM's options: C1-only for small local dumps, the full JIT with later compile
thresholds for large or unknown ones, and all of them known to the Java that runs Spark (Spark's
launcher adds -XX:+IgnoreUnrecognizedVMOptions, so an option this Java lacked would be dropped
without a word; here the JVM runs without it and would refuse to start)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from flinktune.spark import session


def test_small_dumps_stop_at_c1_large_and_unknown_get_the_full_jit() -> None:
    small = session.driver_java_options(session.QUICK_JIT_MAX_INPUT_BYTES)
    large = session.driver_java_options(session.QUICK_JIT_MAX_INPUT_BYTES + 1)
    unknown = session.driver_java_options(None)  # a cluster's storage, or sizes not known
    assert "-XX:TieredStopAtLevel=1" in small.split()
    assert "-XX:CompileThresholdScaling" not in small
    for options in (large, unknown):
        assert "-XX:TieredStopAtLevel=1" not in options.split()
        assert "-XX:CompileThresholdScaling=4" in options.split()
    # the serial collector everywhere (it is part of the class-data archive's key)
    assert all("-XX:+UseSerialGC" in o.split() for o in (small, large, unknown))


@pytest.mark.parametrize("input_bytes", [1, None])
def test_the_installed_java_accepts_the_options(input_bytes: int | None) -> None:
    java = shutil.which("java")
    if java is None:
        pytest.skip("Java is not installed")
    options = session.driver_java_options(input_bytes).split()
    shown = subprocess.run(
        [java, *options, "-XX:+PrintFlagsFinal", "-version"], capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    flags = {
        parts[1]: parts[3]
        for line in shown.stdout.splitlines()
        if len(parts := line.split()) >= 4 and parts[2] == "="
    }
    assert flags["UseSerialGC"] == "true"
    if input_bytes is None:
        # CompileThresholdScaling scales the Tier4 values given with it (HotSpot's
        # compilerDefinitions.cpp): C2 waits for 4 x 40,000 invocations
        assert flags["Tier4InvocationThreshold"] == "160000"
        assert flags["Tier3InvocationThreshold"] == "800"
    else:
        assert flags["TieredStopAtLevel"] == "1"
