"""``Record``: an immutable value class that costs nothing to define.

A frozen dataclass generates its methods with ``exec()`` when its module is imported: about a
third of a millisecond per class, and ``flinktune lint`` runs as a fresh process per CI job whose
imports define dozens of them. The hot records of the lint path subclass ``Record`` instead: slots,
an explicit ``__init__`` that stores through ``set_field``, and the behaviour of a frozen
dataclass (assignment raises FrozenInstanceError; equality, hash and repr by ``_fields``, or by
``_compared`` when some fields are not compared (a dataclass's ``field(compare=False)``); copy and
pickle through ``__init__``, so ``_fields`` must follow its argument order). ``dataclasses`` itself
is imported only on the rare paths that need it: with ``inspect`` it costs ~9 ms per process.
"""

from __future__ import annotations

from typing import Any

set_field = object.__setattr__


class Record:
    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _compared: tuple[str, ...] | None = None    # None: every field

    def __setattr__(self, name: str, value: object) -> None:
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot assign to field '{name}'")

    def __delattr__(self, name: str) -> None:
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot delete field '{name}'")

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in (self._compared or self._fields))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({inner})"

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (type(self), tuple(getattr(self, name) for name in self._fields))


def store(record: Record, values: tuple[object, ...]) -> None:
    """Set every field of ``record`` from ``values``, in ``_fields`` order (for ``__init__``)."""
    for name, value in zip(record._fields, values, strict=True):
        set_field(record, name, value)


def replace(value: Any, /, **changes: Any) -> Any:
    """``dataclasses.replace`` for a Record (whose ``__init__`` takes its fields by name) or a dataclass:
    a copy with ``changes``."""
    if not isinstance(value, Record):
        import dataclasses

        return dataclasses.replace(value, **changes)
    unknown = changes.keys() - set(value._fields)
    if unknown:
        raise TypeError(f"{type(value).__qualname__} has no field(s) {', '.join(sorted(unknown))}")
    return type(value)(**{name: changes[name] if name in changes else getattr(value, name)
                          for name in value._fields})
