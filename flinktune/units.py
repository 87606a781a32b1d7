"""Flink's value syntax, in one place.

Ported from Flink's own parsers (facts and behaviour, not code):
- MemorySize: ``flink-core/.../configuration/MemorySize.java`` (1.13 .. 2.x): ``<digits>[ ]<unit>``,
  units case-insensitive and all powers of 1024, no unit = bytes, integers only.
- Duration: ``flink-core/.../util/TimeUtils.java`` (1.13 .. 2.x): ``<digits>[ ]<unit>``, no unit =
  milliseconds, negative values rejected.
- Boolean / enum / list: ``ConfigurationUtils`` (1.20): case-insensitive ``true``/``false``,
  case-insensitive enum constant names, ``;``-separated lists in the legacy file.
"""

from __future__ import annotations

import re

from flinktune.errors import ValueSyntaxError

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1

_KIB = 1024
# MemorySize.MemoryUnit labels, in Flink's order.
_MEMORY_UNITS: dict[str, int] = {
    "b": 1, "bytes": 1,
    "k": _KIB, "kb": _KIB, "kibibytes": _KIB,
    "m": _KIB**2, "mb": _KIB**2, "mebibytes": _KIB**2,
    "g": _KIB**3, "gb": _KIB**3, "gibibytes": _KIB**3,
    "t": _KIB**4, "tb": _KIB**4, "tebibytes": _KIB**4,
}

# The short unit names (one per unit), as the rule language and flinktune's own output spell them.
MEMORY_UNIT_BYTES: dict[str, int] = {"b": 1, "kb": _KIB, "mb": _KIB**2, "gb": _KIB**3, "tb": _KIB**4}
_NS = {"d": 86_400 * 10**9, "h": 3_600 * 10**9, "min": 60 * 10**9, "s": 10**9, "ms": 10**6,
       "us": 10**3, "ns": 1}
DURATION_UNIT_NANOS: dict[str, int] = dict(_NS)
# TimeUtils.TimeUnit labels: singular() forms as given, plural() forms also with an "s".
_DURATION_UNITS: dict[str, int] = {
    "d": _NS["d"], "day": _NS["d"], "days": _NS["d"],
    "h": _NS["h"], "hour": _NS["h"], "hours": _NS["h"],
    "min": _NS["min"], "m": _NS["min"], "minute": _NS["min"], "minutes": _NS["min"],
    "s": _NS["s"], "sec": _NS["s"], "secs": _NS["s"], "second": _NS["s"], "seconds": _NS["s"],
    "ms": _NS["ms"], "milli": _NS["ms"], "millis": _NS["ms"], "millisecond": _NS["ms"],
    "milliseconds": _NS["ms"],
    "µs": _NS["us"], "micro": _NS["us"], "micros": _NS["us"], "microsecond": _NS["us"],
    "microseconds": _NS["us"],
    "ns": _NS["ns"], "nano": _NS["ns"], "nanos": _NS["ns"], "nanosecond": _NS["ns"],
    "nanoseconds": _NS["ns"],
}

_NUMBER_UNIT = re.compile(r"^([0-9]+)(.*)$", re.DOTALL)
# Java's String.trim() strips every character <= U+0020 and nothing else (not U+00A0, not U+3000).
_JAVA_WHITESPACE = "".join(chr(c) for c in range(33))


def _java_trim(text: str) -> str:
    return text.strip(_JAVA_WHITESPACE)
# Bounds input handed to the regexes so a hostile 100 MB value cannot cost more than a scan.
_MAX_VALUE_CHARS = 4096


def _split_number_unit(text: str, what: str) -> tuple[int, str]:
    if len(text) > _MAX_VALUE_CHARS:
        raise ValueSyntaxError(f"{what} value is {len(text)} characters long")
    trimmed = _java_trim(text)
    if not trimmed:
        raise ValueSyntaxError(f"{what} value is empty")
    match = _NUMBER_UNIT.match(trimmed)
    if match is None:
        raise ValueSyntaxError(f"{what} value '{trimmed}' does not start with a number")
    digits, unit = match.group(1), _java_trim(match.group(2)).lower()
    number = int(digits)
    if number > LONG_MAX:
        raise ValueSyntaxError(f"{what} value '{trimmed}' cannot be represented as a 64-bit number")
    return number, unit


class _Quantity:
    """One whole number with a unit (a frozen, ordered value, as a frozen ``order=True`` dataclass of
    one field would be; a plain slotted class, cheaper to define at every lint's start)."""

    __slots__ = ()
    _field = ""

    def _number(self) -> int:
        return getattr(self, self._field)  # type: ignore[no-any-return]

    def __setattr__(self, name: str, value: object) -> None:
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot assign to field '{name}'")

    def __delattr__(self, name: str) -> None:
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot delete field '{name}'")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._number() == other._number()  # type: ignore[attr-defined,no-any-return]

    def __hash__(self) -> int:
        return hash((self._number(),))

    def __lt__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._number() < other._number()  # type: ignore[attr-defined,no-any-return]

    def __le__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._number() <= other._number()  # type: ignore[attr-defined,no-any-return]

    def __gt__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._number() > other._number()  # type: ignore[attr-defined,no-any-return]

    def __ge__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._number() >= other._number()  # type: ignore[attr-defined,no-any-return]

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}({self._field}={self._number()!r})"

    def __reduce__(self) -> tuple[object, tuple[int]]:
        return (type(self), (self._number(),))


class MemorySize(_Quantity):
    """A byte count as Flink's MemorySize holds it."""

    __slots__ = ("bytes",)
    _field = "bytes"
    bytes: int

    def __init__(self, bytes: int) -> None:
        object.__setattr__(self, "bytes", bytes)

    @property
    def mebibytes(self) -> float:
        return self.bytes / _KIB**2

    def __str__(self) -> str:
        return format_memory(self.bytes)


def parse_memory_size(text: str | int) -> MemorySize:
    """Parse ``32kb``, ``64 mb``, ``1g``, ``4096`` the way Flink's ``MemorySize.parse`` does."""
    if isinstance(text, bool):
        raise ValueSyntaxError(f"memory size value '{text}' is a boolean")
    if isinstance(text, int):
        if text < 0:
            raise ValueSyntaxError(f"memory size value '{text}' is negative")
        return MemorySize(text)
    number, unit = _split_number_unit(str(text), "memory size")
    if unit == "":
        multiplier = 1
    elif unit in _MEMORY_UNITS:
        multiplier = _MEMORY_UNITS[unit]
    else:
        raise ValueSyntaxError(
            f"memory size value '{str(text).strip()}' has unknown unit '{unit}'"
            " (use b, kb, mb, gb or tb; fractions such as 1.5g are not allowed)"
        )
    total = number * multiplier
    if total > LONG_MAX:
        raise ValueSyntaxError(f"memory size value '{str(text).strip()}' overflows a 64-bit byte count")
    return MemorySize(total)


def format_memory(num_bytes: int) -> str:
    """The shortest exact Flink spelling: ``32kb``, ``64mb``, ``1gb``, else plain bytes."""
    for label, size in (("tb", _KIB**4), ("gb", _KIB**3), ("mb", _KIB**2), ("kb", _KIB)):
        if num_bytes >= size and num_bytes % size == 0:
            return f"{num_bytes // size}{label}"
    return f"{num_bytes}b"


class Duration(_Quantity):
    """A duration as Flink's ``java.time.Duration`` holds it, in nanoseconds."""

    __slots__ = ("nanos",)
    _field = "nanos"
    nanos: int

    def __init__(self, nanos: int) -> None:
        object.__setattr__(self, "nanos", nanos)

    @property
    def ms(self) -> float:
        return self.nanos / 1e6

    @property
    def seconds(self) -> float:
        return self.nanos / 1e9

    def __str__(self) -> str:
        return format_duration(self.nanos)


def parse_duration(text: str | int) -> Duration:
    """Parse ``100 ms``, ``1 min``, ``5s``, ``100`` (ms) the way Flink's ``TimeUtils.parseDuration`` does."""
    if isinstance(text, bool):
        raise ValueSyntaxError(f"duration value '{text}' is a boolean")
    if isinstance(text, int):
        if text < 0:
            raise ValueSyntaxError(f"duration value '{text}' is negative (Flink rejects negative durations)")
        return Duration(text * _NS["ms"])
    number, unit = _split_number_unit(str(text), "duration")
    if unit == "":
        multiplier = _NS["ms"]
    elif unit in _DURATION_UNITS:
        multiplier = _DURATION_UNITS[unit]
    else:
        raise ValueSyntaxError(
            f"duration value '{str(text).strip()}' has unknown unit '{unit}'"
            " (use ms, s, min, h, d, µs or ns)"
        )
    if number * multiplier // 10**9 > LONG_MAX:
        # java.time.Duration holds a long of seconds; Duration.of overflows past it.
        raise ValueSyntaxError(f"duration value '{str(text).strip()}' overflows java.time.Duration")
    return Duration(number * multiplier)


def format_duration(nanos: int) -> str:
    """The shortest exact Flink spelling: ``100 ms``, ``5 s``, ``1 min``.

    Microseconds are written in ``ns``: Flink's only microsecond label is ``µs`` (no ``us``),
    and an ASCII spelling is safer in user files.
    """
    for label, size in (("d", _NS["d"]), ("h", _NS["h"]), ("min", _NS["min"]), ("s", _NS["s"]),
                        ("ms", _NS["ms"])):
        if nanos >= size and nanos % size == 0:
            return f"{nanos // size} {label}"
    if nanos == 0:
        return "0 ms"
    return f"{nanos} ns"


def parse_bool(text: str | bool) -> bool:
    """Flink's ``ConfigurationUtils.convertToBoolean``: only true/false, any case."""
    if isinstance(text, bool):
        return text
    lowered = str(text).strip().lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    raise ValueSyntaxError(f"boolean value '{str(text).strip()}' is neither true nor false")


def parse_int(text: str | int, *, bits: int = 32) -> int:
    """Java ``Integer.parseInt`` / ``Long.parseLong`` semantics (optional sign, digits only)."""
    if isinstance(text, bool):
        raise ValueSyntaxError(f"integer value '{text}' is a boolean")
    if isinstance(text, int):
        value = text
    else:
        stripped = str(text).strip()
        if len(stripped) > 64 or not re.fullmatch(r"[+-]?[0-9]+", stripped):
            raise ValueSyntaxError(f"integer value '{stripped[:64]}' is not a whole number")
        value = int(stripped)
    limit = 2 ** (bits - 1)
    if not -limit <= value < limit:
        raise ValueSyntaxError(f"integer value '{value}' does not fit in {bits} bits")
    return value


def parse_float(text: str | int | float) -> float:
    """Java ``Float.parseFloat`` / ``Double.parseDouble`` for the forms configs use."""
    if isinstance(text, bool):
        raise ValueSyntaxError(f"number value '{text}' is a boolean")
    if isinstance(text, int | float):
        try:
            return float(text)
        except OverflowError:  # a YAML integer with hundreds of digits
            raise ValueSyntaxError(f"number value '{str(text)[:64]}' is too large") from None
    stripped = str(text).strip()
    if len(stripped) > 64 or not re.fullmatch(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?",
                                              stripped):
        raise ValueSyntaxError(f"number value '{stripped[:64]}' is not a number")
    return float(stripped.rstrip("fFdD"))


def parse_enum(text: str, allowed: tuple[str, ...]) -> str:
    """Case-insensitive match of a constant name, as ``convertToEnum`` does; returns the constant."""
    wanted = str(text).strip()
    for constant in allowed:
        if constant.lower() == wanted.lower():
            return constant
    raise ValueSyntaxError(f"value '{wanted}' is not one of {', '.join(allowed)}")


def parse_list(value: str | list[object]) -> list[str]:
    """Legacy ``a;b;c`` lists (config.yaml may give a YAML list instead)."""
    if isinstance(value, list):
        return [str(item) for item in value]
    return [item.strip() for item in str(value).split(";") if item.strip()]


# Decimal times for the CLI and simulator scenarios (not Flink options, whose durations are whole
# numbers): 0.5ms, 1e-3s, 20us.
_DECIMAL_TIME = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(ns|us|µs|ms|s|sec|min|h)?\s*$")
SECONDS_PER_TIME_UNIT: dict[str, float] = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0,
                                           "sec": 1.0, "min": 60.0, "h": 3600.0}


def split_decimal_time(text: str) -> tuple[float, str | None] | None:
    """``0.5ms`` -> (0.5, "ms"), ``2`` -> (2.0, None); None when ``text`` is not a number with an
    optional unit of SECONDS_PER_TIME_UNIT. Callers bound the length of ``text``."""
    match = _DECIMAL_TIME.match(text)
    if match is None:
        return None
    return float(match.group(1)), match.group(2)


# Bandwidths (CLI, profiles, scenarios; not Flink options), decimal prefixes. The unit says bits (bit,
# bits, bps after any prefix; b after an upper-case one: 10Gb) or bytes (B, Bps). Ambiguous, refused: a
# prefix alone (10G: bits for a NIC, bytes before) and b after a lower-case prefix or none (10gb: Flink's
# MemorySize reads gb as gibibytes, network people as gigabits).
_BANDWIDTH = re.compile(r"^\s*([+-]?[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z/]*)\s*$")
_BANDWIDTH_UNIT = re.compile(r"([kKmMgGtT]?)(bits|bit|bps|b|Bps|B|)(/s)?")
_BANDWIDTH_PREFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_BINARY_WORD = {"": "bytes", "k": "kibibytes", "m": "mebibytes", "g": "gibibytes", "t": "tebibytes"}


def _positive_bandwidth(number: object, text: str) -> float:
    try:
        value = float(number)  # type: ignore[arg-type]
    except OverflowError:  # an integer of hundreds of digits
        raise ValueSyntaxError(f"'{text[:64]}' is too large") from None
    if not 0 < value < float("inf"):  # also NaN
        raise ValueSyntaxError(f"'{text[:64]}' must be a positive, finite number")
    return value


def _bandwidth_text(text: str) -> float:
    """Bytes per second from a bandwidth with its unit; messages start with the quoted text."""
    # Short texts only: the number pattern backtracks quadratically on thousands of digits.
    if len(text) > 64:
        raise ValueSyntaxError(f"'{text[:64]}...' is too long to be a bandwidth")
    shown = text.strip()
    match = _BANDWIDTH.match(text)
    unit = _BANDWIDTH_UNIT.fullmatch(match.group(2)) if match is not None else None
    if match is None or unit is None or (unit.group(2) in ("bps", "Bps") and unit.group(3)):
        raise ValueSyntaxError(f"'{shown}' is not a bandwidth like 10Gbit/s, 1.25GB/s or 100Mbps")
    number_text, (prefix, marker, per_s) = match.group(1), unit.groups()
    number = _positive_bandwidth(number_text, shown)
    if not prefix and not marker and not per_s:
        raise ValueSyntaxError(f"'{shown}' has no unit; write {number_text}Gbit/s or {number_text}MB/s")
    if not marker or (marker == "b" and not prefix.isupper()):
        big = prefix if prefix in ("", "k") else prefix.upper()  # the bits reading, also in bytes
        reason = f" (Flink's sizes read {prefix}b as {_BINARY_WORD[prefix]})" if marker == "b" else ""
        raise ValueSyntaxError(f"'{shown}' is ambiguous{reason}: write {number_text}{big}bit/s (bits) "
                               f"or {number / 8:g}{big}B/s (bytes)")
    per_byte = 1.0 if marker in ("B", "Bps") else 1 / 8
    return _positive_bandwidth(number * _BANDWIDTH_PREFIX[prefix.lower()] * per_byte, shown)


def parse_bandwidth_bytes_per_s(text: str | float) -> float:
    """Parse a link bandwidth; decimal prefixes (network convention): ``10Gbit/s`` = 1.25e9 B/s.
    A Python number is bytes per second already (scenarios built in Python, tests)."""
    try:
        if isinstance(text, int | float) and not isinstance(text, bool):
            return _positive_bandwidth(text, str(text))
        return _bandwidth_text(str(text))
    except ValueSyntaxError as error:
        raise ValueSyntaxError(f"bandwidth {error.message}") from None


# ---------------------------------------------------------------------------------------------
# The one unit rule for what users type outside Flink's own options (flags, profiles, the
# `collect --interval`): a duration or a bandwidth must carry its unit, because a bare number meant
# milliseconds in one place and seconds or bytes per second in another. Zero needs no unit. Sizes
# follow Flink's MemorySize: a bare number is bytes. (docs/model.md, "Units".)

def _bare_number_text(value: object) -> str | None:
    """The text of ``value`` when it is a plain number (a YAML number or digits only), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    text = str(value).strip()
    if len(text) <= 64 and re.fullmatch(r"[+-]?([0-9]*\.?[0-9]+)([eE][+-]?[0-9]+)?", text):
        return text
    return None


def parse_duration_s(value: str | int | float, *, what: str,
                     special: dict[str, float] | None = None, positive: bool = False) -> float:
    """Seconds from ``2ms``, ``0.5ms``, ``1.5s``, ``20us``; a bare number other than 0 is refused:
    ``--rtt: '5' has no unit; write 5ms or 5s``. ``special`` maps words (``off``) to values. Negative
    is refused, with ``positive`` (an rtt) zero too, a bare ``0`` as well, before the unit's message."""
    if isinstance(value, bool) or value is None:
        raise ValueSyntaxError(f"{what}: {value!r} is not a duration")
    text = str(value).strip()
    if special and text.lower() in special:
        return special[text.lower()]
    bare = _bare_number_text(value)
    if bare is not None:
        try:
            number = float(bare)
        except OverflowError:
            raise ValueSyntaxError(f"{what}: '{bare[:64]}' is too large") from None
        _check_sign(number, bare, what, positive)
        if number == 0:
            return 0.0
        raise ValueSyntaxError(f"{what}: '{bare}' has no unit; write {bare}ms or {bare}s")
    negative = text.startswith("-")
    parsed = split_decimal_time(text[1:200] if negative else text[:200])
    if parsed is None or parsed[1] is None:
        raise ValueSyntaxError(f"{what}: '{text[:64]}' is not a duration like 2ms, 0.5ms or 1s")
    number, unit = parsed
    seconds = -number * SECONDS_PER_TIME_UNIT[unit] if negative else number * SECONDS_PER_TIME_UNIT[unit]
    if seconds != seconds or abs(seconds) == float("inf"):
        raise ValueSyntaxError(f"{what}: '{text[:64]}' is not a finite duration")
    _check_sign(seconds, text[:64], what, positive)
    return seconds


def _check_sign(number: float, text: str, what: str, positive: bool) -> None:
    if number <= 0 and positive:
        raise ValueSyntaxError(f"{what}: must be above zero, got '{text}'")
    if number < 0:
        raise ValueSyntaxError(f"{what}: must not be negative, got '{text}'")


def parse_bandwidth(value: str | int | float, *, what: str) -> float:
    """Bytes per second from ``10Gbit/s``, ``1.25GB/s``, ``100Mbps``; one line for a bare number
    (``--bandwidth: '10' has no unit; write 10Gbit/s or 10MB/s``), ``10G`` or ``10gb`` (``... is
    ambiguous: write 10Gbit/s (bits) or 1.25GB/s (bytes)``) and zero or less, a bare 0 too."""
    prefix = f"{what}: " if what else ""  # no prefix when the caller names the place itself
    if isinstance(value, bool) or value is None:
        raise ValueSyntaxError(f"{prefix}{value!r} is not a bandwidth")
    bare = _bare_number_text(value)
    try:
        if bare is not None:
            _positive_bandwidth(bare, bare)
            raise ValueSyntaxError(f"'{bare}' has no unit; write {bare}Gbit/s or {bare}MB/s")
        return _bandwidth_text(str(value))
    except ValueSyntaxError as error:
        raise ValueSyntaxError(f"{prefix}{error.message}") from None


def parse_size_bytes(value: str | int | float, *, what: str) -> int:
    """Bytes as Flink's MemorySize reads them (``32kb``, ``1g``; a bare number is bytes)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, float):
        raise ValueSyntaxError(f"{what}: '{value}' is not a whole number of bytes (write e.g. 512b or 2kb)")
    try:
        return parse_memory_size(value if isinstance(value, int) else str(value)).bytes
    except ValueSyntaxError as error:
        raise ValueSyntaxError(f"{what}: {error.message}") from None


# --- how flinktune's reports show a quantity (not Flink's syntax: format_memory / format_duration) ---

_BINARY = (("GiB", _KIB**3), ("MiB", _KIB**2), ("KiB", _KIB))
_DECIMAL_RATE = (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3))
_TIME = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6))
# Units whose whole values are counts (parallelism, TaskManagers, channels: unit ""; buffers; records;
# a records/s rate): shown exactly, not rounded to ``digits`` (9,999, not 1e+04); exact up to 2**53.
COUNT_UNITS = ("", "buffers", "records", "records/s")
_EXACT_FLOAT_INTEGERS = 2.0**53


def readable(value: float | None, unit: str, digits: int = 3) -> str:
    """A quantity for a person, in every report alike: ``digits`` significant digits, the largest unit
    that keeps it at least 1 (bytes in KiB/MiB/GiB, rates in kB/s/MB/s/GB/s, times in µs/ms/s; zero
    seconds are ``0 ms``), whole counts (COUNT_UNITS) exactly with thousands separators (``9,999``),
    ``n/a`` and ``unbounded``."""
    if value is None or value != value:
        return "n/a"
    v = float(value)
    if v in (float("inf"), float("-inf")):
        return "unbounded" if v > 0 else "-unbounded"
    if unit == "B":
        return next((f"{v / size:.{digits}g} {name}" for name, size in _BINARY if abs(v) >= size),
                    f"{v:.0f} B")
    if unit == "B/s":
        return next((f"{v / size:.{digits}g} {name}" for name, size in _DECIMAL_RATE if abs(v) >= size),
                    f"{v:.{digits}g} B/s")
    if unit == "s":
        if v == 0:
            return "0 ms"
        return next((f"{v / size:.{digits}g} {name}" for name, size in _TIME if abs(v) >= size),
                    f"{v * 1e9:.{digits}g} ns")
    if unit == "%":
        return f"{v:.{digits}g} %"
    if unit in COUNT_UNITS and v.is_integer() and abs(v) < _EXACT_FLOAT_INTEGERS:
        # A whole number of buffers or records is shown bare (``29,999``), as it always was.
        return f"{v:,.0f}" if unit in ("buffers", "records") else f"{v:,.0f} {unit}".rstrip()
    return f"{v:.{digits}g} {unit}".rstrip()
