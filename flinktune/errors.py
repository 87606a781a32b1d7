"""The project's one exception family.

Engines raise these; only the CLI turns them into a one-line message and exit code 2.
"""

from __future__ import annotations


class FlinktuneError(Exception):
    """Base of every error flinktune raises on purpose.

    ``file`` and ``line`` point at the offending input where there is one, so the CLI can
    print ``file:line: message`` on one line.
    """

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None) -> None:
        # One line, always: a multi-line message would break CI log parsers.
        self.message = " ".join(str(message).split())
        self.file = file
        self.line = line
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = ""
        if self.file is not None:
            where = f"{self.file}:{self.line}: " if self.line is not None else f"{self.file}: "
        return f"{where}{self.message}"


class ValueSyntaxError(FlinktuneError):
    """A Flink value (MemorySize, Duration, boolean, ...) that Flink itself would not parse."""


class ConfigError(FlinktuneError):
    """A configuration file that cannot be read at all (unreadable, binary, invalid YAML)."""


class CatalogError(FlinktuneError):
    """The option catalog is missing or inconsistent."""


class RuleError(FlinktuneError):
    """A rule file (or a set of them) is invalid; carries every problem found."""

    def __init__(
        self, message: str, *, file: str | None = None, line: int | None = None,
        problems: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message, file=file, line=line)
        self.problems = problems


class ConditionError(FlinktuneError):
    """A rule condition that does not parse or cannot be evaluated."""


class ModelInputError(FlinktuneError):
    """An input to the analytic model outside its domain (negative, zero, NaN, ...)."""


class ScenarioError(FlinktuneError):
    """A simulator scenario file that is invalid."""


class MetricsError(FlinktuneError):
    """A metrics dump or job plan that cannot be analysed."""


class CollectError(FlinktuneError):
    """Talking to a live Flink REST API failed (wrong URL, unknown or finished job, ...)."""


class WriteError(FlinktuneError):
    """Writing a user's file was refused or failed; the original is left intact."""


class UsageError(FlinktuneError):
    """Bad command-line usage that typer itself cannot catch (conflicting flags, bad ranges)."""
