"""Input validation shared by the vectorised model modules (imports numpy; not on the lint path)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from flinktune.errors import ModelInputError

FloatArray = NDArray[np.float64]


def as_array(name: str, value: ArrayLike, *, allow_zero: bool = False, allow_inf: bool = False,
             integer: bool = False) -> FloatArray:
    """``value`` as a float64 array, or ModelInputError naming the first bad element.

    Negative values, NaN and (unless ``allow_zero``) zero are rejected; infinity only with
    ``allow_inf``; ``integer`` demands whole numbers.
    """
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelInputError(f"{name} must be a number or an array of numbers, got {value!r}") from None
    bad = np.isnan(array)
    what = "NaN"
    if not bad.any():
        bad = array < 0
        what = "negative"
    if not bad.any() and not allow_zero:
        bad = array == 0
        what = "zero"
    if not bad.any() and not allow_inf:
        bad = np.isinf(array)
        what = "infinite"
    if not bad.any() and integer:
        bad = np.isfinite(array) & (array != np.floor(array))
        what = "not a whole number"
    if bad.any():
        first = _first(bad, array)
        raise ModelInputError(f"{name} must be {'non-negative' if allow_zero else 'positive'} and finite; "
                              f"got {first} ({what})")
    return array


def _first(bad: NDArray[np.bool_], array: FloatArray) -> str:
    if array.ndim == 0:
        return repr(float(array))
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    return f"{float(array[index])!r} at index {index[0] if len(index) == 1 else index}"


def scalar_or_array(result: FloatArray) -> Any:
    """A 0-d result as a Python float, arrays unchanged (so scalar calls stay scalar)."""
    if result.ndim == 0:
        return float(result)
    return result
