"""Flink's value syntax: one table of cases per parser.

Sources (flink-facts.md §1.1):
- MemorySize: flink-core-api/src/main/java/org/apache/flink/configuration/MemorySize.java @M:2.0p
  (same parser in flink-core for 1.13 .. 1.20): ``parseBytes`` trims (String.trim), reads the
  leading digits with Long.parseLong, lower-cases the rest (Locale.US) and matches it against
  MemoryUnit labels b/bytes, k/kb/kibibytes, m/mb/mebibytes, g/gb/gibibytes, t/tb/tebibytes;
  overflow of value*multiplier is an error.
- Duration: flink-core/src/main/java/org/apache/flink/util/TimeUtils.java @M:1.13 .. M:2.0p
  (``parseDuration``): same digits-then-unit shape, no unit = milliseconds, labels from the
  TimeUnit enum (singular d/h/min/m/s/ms/µs/ns; plural day(s)/hour(s)/minute(s)/sec(s)/second(s)/
  milli(s)/millisecond(s)/micro(s)/microsecond(s)/nano(s)/nanosecond(s)).
- Boolean: ConfigurationUtils.convertToBoolean @M:1.20 (equalsIgnoreCase "true"/"false").
"""

from __future__ import annotations

import pytest

from flinktune.errors import ValueSyntaxError
from flinktune.units import (
    format_duration,
    format_memory,
    parse_bool,
    parse_duration,
    parse_memory_size,
)

KIB, MIB, GIB, TIB = 1024, 1024**2, 1024**3, 1024**4
LONG_MAX = 2**63 - 1

MEMORY_OK = [
    ("0", 0),
    ("4096", 4096),                    # no unit = bytes
    ("32kb", 32 * KIB),
    ("32k", 32 * KIB),
    ("32 kb", 32 * KIB),               # space between number and unit
    ("64 mb", 64 * MIB),
    ("64m", 64 * MIB),
    ("64MB", 64 * MIB),                # unit is case-insensitive
    ("1g", GIB),
    ("1 gibibytes", GIB),
    ("1728m", 1728 * MIB),
    ("2t", 2 * TIB),
    ("1 tebibytes", TIB),
    ("100 b", 100),
    ("100 bytes", 100),
    ("  128 mb  ", 128 * MIB),         # String.trim()
    ("64\tmb", 64 * MIB),              # unit part trimmed too
    ("9223372036854775807", LONG_MAX),
    ("8388607tb", 8388607 * TIB),      # largest whole tb below 2^63
]

MEMORY_BAD = [
    "",                 # "argument is an empty- or whitespace-only string"
    "   ",
    "mb",               # "text does not start with a number"
    "-1mb",             # a sign is not a digit
    "+1mb",
    "1.5g",             # integers only: ".5g" is not a unit
    "1 kib",            # not a MemoryUnit label
    "10 megabytes",
    "9223372036854775808",   # Long.parseLong overflow
    "8388608tb",        # value * multiplier overflows a long
    "64 mb\u00a0",      # U+00A0 is not removed by String.trim, so the unit is unknown
]

DURATION_OK_MS = [
    ("100", 100),                      # no unit = milliseconds
    ("0", 0),
    ("100 ms", 100),
    ("100ms", 100),
    ("100 MS", 100),
    ("5 s", 5_000),
    ("5s", 5_000),
    ("5 sec", 5_000),
    ("5 secs", 5_000),
    ("5 second", 5_000),
    ("5 seconds", 5_000),
    ("1 min", 60_000),
    ("1 m", 60_000),                   # "m" is minutes for durations (bytes*2^20 for memory)
    ("2 minutes", 120_000),
    ("1 h", 3_600_000),
    ("3 hours", 10_800_000),
    ("1 d", 86_400_000),
    ("2 days", 172_800_000),
    ("10 milli", 10),
    ("10 millis", 10),
    ("10 milliseconds", 10),
]

DURATION_OK_NS = [
    ("7 µs", 7_000),
    ("7 micro", 7_000),
    ("7 microseconds", 7_000),
    ("9 ns", 9),
    ("9 nanos", 9),
    ("9 nanosecond", 9),
]

DURATION_BAD = [
    "",
    "-1",               # TimeUtils: "text does not start with a number" (negative rejected)
    "-1 ms",
    "1.5 s",
    "5 mins",           # "min" has no plural form in TimeUtils.TimeUnit
    "5 us",             # only "µs" is a microsecond label
    "1 week",
    "ms",
    "9223372036854775808 ms",
]

BOOL_CASES = [
    ("true", True), ("TRUE", True), ("True", True), ("false", False), ("FaLsE", False),
]
BOOL_BAD = ["yes", "no", "1", "0", "on", "off", ""]


@pytest.mark.parametrize(("text", "expected"), MEMORY_OK)
def test_memory_size_parses_like_flink(text: str, expected: int) -> None:
    assert parse_memory_size(text).bytes == expected


@pytest.mark.parametrize("text", MEMORY_BAD)
def test_memory_size_rejects_what_flink_rejects(text: str) -> None:
    with pytest.raises(ValueSyntaxError):
        parse_memory_size(text)


def test_memory_size_from_yaml_int() -> None:
    # config.yaml gives an int; Flink converts it with MemorySize.parse(o.toString()) = bytes.
    assert parse_memory_size(1024).bytes == 1024
    with pytest.raises(ValueSyntaxError):
        parse_memory_size(True)


@pytest.mark.parametrize(("num_bytes", "text"), [
    (32 * KIB, "32kb"), (64 * MIB, "64mb"), (GIB, "1gb"), (1728 * MIB, "1728mb"), (1000, "1000b"),
    (3 * TIB, "3tb"),
])
def test_format_memory_round_trips(num_bytes: int, text: str) -> None:
    assert format_memory(num_bytes) == text
    assert parse_memory_size(text).bytes == num_bytes


@pytest.mark.parametrize(("text", "ms"), DURATION_OK_MS)
def test_duration_parses_like_flink(text: str, ms: int) -> None:
    assert parse_duration(text).nanos == ms * 1_000_000


@pytest.mark.parametrize(("text", "nanos"), DURATION_OK_NS)
def test_duration_sub_millisecond_units(text: str, nanos: int) -> None:
    assert parse_duration(text).nanos == nanos


@pytest.mark.parametrize("text", DURATION_BAD)
def test_duration_rejects_what_flink_rejects(text: str) -> None:
    with pytest.raises(ValueSyntaxError):
        parse_duration(text)


@pytest.mark.parametrize("nanos", [0, 1, 1_500, 100_000_000, 5_000_000_000, 60 * 10**9, 90 * 10**9,
                                   3_600 * 10**9, 86_400 * 10**9])
def test_format_duration_is_parseable_by_flink_and_exact(nanos: int) -> None:
    text = format_duration(nanos)
    assert text.isascii()
    assert parse_duration(text).nanos == nanos


@pytest.mark.parametrize(("text", "expected"), BOOL_CASES)
def test_bool(text: str, expected: bool) -> None:
    assert parse_bool(text) is expected


@pytest.mark.parametrize("text", BOOL_BAD)
def test_bool_rejects_yaml11_words(text: str) -> None:
    with pytest.raises(ValueSyntaxError):
        parse_bool(text)
