"""Java number semantics the memory derivation depends on, reproduced exactly.

Flink reads every ``*.fraction`` option as a Java ``float`` and widens it to ``double``
(``Configuration.getFloat`` -> ``RangeFraction(double)``), so ``0.1`` becomes
0.10000000149011612. ``MemorySize.multiply(double)`` multiplies through ``BigDecimal.valueOf``
(the decimal text of the double) and truncates with ``longValue()``. ``toHumanReadableString``
formats with ``%.3f`` (half-up) and the highest unit strictly below the byte count. Sources:
``flink-core/.../configuration/MemorySize.java``, ``flink-runtime/.../util/config/memory/
ProcessMemoryUtils.java`` (1.13 .. 2.x, unchanged in these respects).

No numpy here: this module is on the lint path.
"""

from __future__ import annotations

import math
import struct
from decimal import ROUND_HALF_UP, Decimal

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1

_UNITS = ((1, "bytes"), (1024, "kb"), (1024**2, "mb"), (1024**3, "gb"), (1024**4, "tb"))


class JavaArithmeticError(ArithmeticError):
    """What Java would throw (ArithmeticException / IllegalArgumentException) in MemorySize math."""


def java_float(value: float) -> float:
    """``(double) (float) value``: round to IEEE single precision, then widen back."""
    if math.isnan(value) or math.isinf(value):
        return value
    if abs(value) > 3.4028234663852886e38:
        return math.copysign(math.inf, value)
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


def java_double_str(value: float) -> str:
    """``Double.toString(value)`` for finite values (shortest digits, Java's layout)."""
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e7:
        text = repr(value)
        if "e" in text or "E" in text:  # repr never does this in range, but be safe
            text = format(Decimal(text), "f")
        return text if "." in text else text + ".0"
    shortest = repr(value)
    if "e" in shortest:
        mantissa, _, exponent = shortest.partition("e")
    else:  # e.g. 12345678.0 -> 1.2345678E7
        digits = Decimal(shortest).normalize()
        sign, coefficient, exp = digits.as_tuple()
        text_digits = "".join(str(d) for d in coefficient)
        mantissa = ("-" if sign else "") + text_digits[0] + "." + (text_digits[1:] or "0")
        exponent = str(len(text_digits) - 1 + int(exp))
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}E{int(exponent)}"


def multiply(num_bytes: int, multiplier: float) -> int:
    """``MemorySize.multiply``: exact decimal product of the double's text, truncated to long."""
    if multiplier < 0 or math.isnan(multiplier):
        raise JavaArithmeticError("multiplier must be >= 0")
    product = Decimal(num_bytes) * Decimal(java_double_str(multiplier))
    if product > LONG_MAX:
        raise JavaArithmeticError("long overflow")
    return int(product)  # int() of a Decimal truncates toward zero, as longValue() does


def add(a: int, b: int) -> int:
    """``MemorySize.add`` (``Math.addExact``)."""
    total = a + b
    if total > LONG_MAX:
        raise JavaArithmeticError("long overflow")
    return total


def human_readable(num_bytes: int) -> str:
    """``MemorySize.toHumanReadableString``: ``1.688gb (1811939328 bytes)`` or ``512 bytes``."""
    unit_size, unit_label = _UNITS[0]
    for size, label in _UNITS:
        if num_bytes > size:
            unit_size, unit_label = size, label
    if unit_size == 1:
        return f"{num_bytes} bytes"
    approximate = Decimal(java_double_str(1.0 * num_bytes / unit_size))
    rounded = approximate.quantize(Decimal("0.001"), rounding=ROUND_HALF_UP)
    return f"{rounded}{unit_label} ({num_bytes} bytes)"


def option_to_string(key: str, default: str, fallback_keys: tuple[str, ...] = ()) -> str:
    """``ConfigOption.toString()``, which Flink embeds in some error texts."""
    fallbacks = ", ".join(f"{{key={k}, isDeprecated=true}}" for k in fallback_keys)
    return f"Key: '{key}' , default: {default} (fallback keys: [{fallbacks}])"
