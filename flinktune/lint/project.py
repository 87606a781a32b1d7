"""The project config: ``.flinktune.yaml`` or ``[tool.flinktune]`` in ``pyproject.toml``.

Found by walking from the working folder up to the file-system root; the first folder that has
either wins (``.flinktune.yaml`` before ``pyproject.toml`` in the same folder). Paths in it
(``rules``, ``baseline``) are relative to the folder the config file sits in.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from flinktune.errors import ConfigError
from flinktune.findings import Severity
from flinktune.record import Record, set_field

PROJECT_FILES = (".flinktune.yaml", ".flinktune.yml")
_CODE_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")


class ProjectConfig(Record):
    """Settings from .flinktune.yaml or [tool.flinktune]; empty when there is none."""

    __slots__ = _fields = ("path", "select", "ignore", "severity", "rules", "fail_on", "flink_version",
                           "baseline", "completeness")
    path: Path | None
    select: tuple[str, ...]
    ignore: tuple[str, ...]
    severity: tuple[tuple[str, Severity], ...]
    rules: tuple[Path, ...]
    fail_on: Severity | None
    flink_version: str | None
    baseline: Path | None
    completeness: str | None          # complete | overlay: whether linted files are all Flink reads

    def __init__(self, path: Path | None = None, select: tuple[str, ...] = (), ignore: tuple[str, ...] = (),
                 severity: tuple[tuple[str, Severity], ...] = (), rules: tuple[Path, ...] = (),
                 fail_on: Severity | None = None, flink_version: str | None = None,
                 baseline: Path | None = None, completeness: str | None = None) -> None:
        set_field(self, "path", path)
        set_field(self, "select", select)
        set_field(self, "ignore", ignore)
        set_field(self, "severity", severity)
        set_field(self, "rules", rules)
        set_field(self, "fail_on", fail_on)
        set_field(self, "flink_version", flink_version)
        set_field(self, "baseline", baseline)
        set_field(self, "completeness", completeness)


def find_project_config(start: Path | None = None) -> Path | None:
    """The nearest ``.flinktune.yaml`` or ``pyproject.toml`` with ``[tool.flinktune]``."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        for name in PROJECT_FILES:
            candidate = folder / name
            if candidate.is_file():
                return candidate
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                text = pyproject.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if re.search(r"^\s*\[\s*tool\s*\.\s*flinktune\s*\]", text, re.MULTILINE):
                return pyproject
    return None


_TOOL_TABLE = re.compile(r"^\s*\[\s*tool\s*\.\s*flinktune\s*[\].]", re.MULTILINE)


def _line_of(text: str, field: str) -> int | None:
    from flinktune.situation.lines import line_of_key

    # In pyproject.toml, from [tool.flinktune] on: other tools' tables have their own `select =`.
    table = _TOOL_TABLE.search(text)
    start = table.start() if table else 0
    found = line_of_key(text[start:], field)
    return None if found is None else found + text.count("\n", 0, start)


def _raw_table(path: Path) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read project config: {error}", file=str(path)) from None
    if path.name == "pyproject.toml":
        import tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"invalid TOML: {error}", file=str(path)) from None
        except RecursionError:
            raise ConfigError("invalid TOML: nests too deeply", file=str(path)) from None
        tool = data.get("tool", {})
        # `tool = 1` is valid TOML; only a table can hold our settings.
        table = tool.get("flinktune", {}) if isinstance(tool, dict) else tool
    else:
        table = _yaml_table(text, path)
        if table is None:
            table = {}
    if not isinstance(table, dict):
        raise ConfigError("project config must be a mapping of settings", file=str(path))
    return table, text


PARSED_CACHE_FILE = "parsed-project-configs.jsonl"


def _yaml_table(text: str, path: Path) -> Any:
    """The project config's YAML as PyYAML reads it. PyYAML is a slow import for a file of a few lines
    that seldom changes, so the result is kept in a cache by a hash of the text (only when it is plain
    JSON data, which reads back as the same values): later runs with the same file skip PyYAML."""
    from flinktune import __version__
    from flinktune.rules.loader import ValidatedCache, cache_path

    cache = ValidatedCache(cache_path(PARSED_CACHE_FILE), salt=f"flinktune {__version__} project".encode())
    digest = cache.digest(text.encode("utf-8"))
    found = cache.get(digest)
    if isinstance(found, dict) and "table" in found:
        return found["table"]
    from flinktune.config.safe_load import load_yaml

    table = load_yaml(text, file=str(path), prefix="invalid YAML in project config")
    if _plain(table):
        cache.put(digest, {"table": table})
        cache.save()
    return table


def _plain(value: Any) -> bool:
    """JSON data that reads back as itself (no dates, sets, bytes or non-text keys YAML may give)."""
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list):
        return all(_plain(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _plain(item) for key, item in value.items())
    return False


# The settings, in the order problems are reported; every one is optional.
_SETTINGS: tuple[str, ...] = (
    "select", "ignore", "severity", "rules", "fail-on", "flink-version", "baseline", "completeness",
)
_COMPLETENESS: tuple[str, ...] = ("complete", "overlay")


class _Settings(Record):
    """The validated settings of a project config (plain values; see _validate)."""

    __slots__ = _fields = ("select", "ignore", "severity", "rules", "fail_on", "flink_version", "baseline",
                           "completeness")
    select: list[str]
    ignore: list[str]
    severity: dict[str, Severity]
    rules: list[str]
    fail_on: Severity | None
    flink_version: str | None
    baseline: str | None
    completeness: Literal["complete", "overlay"] | None

    def __init__(self, **values: Any) -> None:
        for name in self._fields:
            set_field(self, name, values[name])


def _severity(value: Any) -> Severity:
    try:
        return Severity(value)
    except (ValueError, TypeError):
        raise ValueError("Input should be 'error', 'warning' or 'info'") from None


def _string_list(value: Any) -> list[str]:
    if not isinstance(value, list):
        raise ValueError("Input should be a valid list")
    if not all(isinstance(item, str) for item in value):
        raise ValueError("Input should be a valid string")
    return list(value)


def _code_list(value: Any) -> list[str]:
    codes = _string_list(value)
    for prefix in codes:
        if not _CODE_PREFIX.match(prefix):
            raise ValueError(f"'{prefix}' is not a rule code or code prefix like FTN or FTN001")
    return [p.upper() for p in codes]


def _optional_text(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("Input should be a valid string")
    return value


_VERSION_AS_WRITTEN = re.compile(r"""^\s*["']?flink-version["']?\s*[:=]\s*([0-9][0-9._]*)\s*(?:#.*)?$""",
                                 re.MULTILINE)


def _version_as_written(raw: float | int, text: str) -> str:
    """A number-typed version as the user wrote it: YAML and TOML read ``1.20`` as the float 1.2."""
    found = _VERSION_AS_WRITTEN.search(text)
    return found.group(1) if found else str(raw)


def _validate(table: dict[str, Any], path: Path, text: str) -> _Settings:
    """Check the settings by hand: this runs on every lint in a project that has a config, and
    importing pydantic for eight fields cost more than the rest of a small lint (issue 15)."""
    problems: list[tuple[str, str]] = []  # (location, message)
    values: dict[str, Any] = {
        "select": [], "ignore": [], "severity": {}, "rules": [], "fail_on": None, "flink_version": None,
        "baseline": None, "completeness": None,
    }
    for setting in _SETTINGS:
        if setting not in table:
            continue
        raw = table[setting]
        try:
            if setting in ("select", "ignore"):
                values[setting] = _code_list(raw)
            elif setting == "rules":
                values["rules"] = _string_list(raw)
            elif setting == "severity":
                if not isinstance(raw, dict):
                    raise ValueError("Input should be a valid dictionary")
                severity: dict[str, Severity] = {}
                for code, level in raw.items():
                    if not isinstance(code, str) or not _CODE_PREFIX.match(code):
                        raise ValueError(f"'{code}' is not a rule code or code prefix")
                    try:
                        severity[code.upper()] = _severity(level)
                    except ValueError as error:
                        problems.append((f"severity.{code}", str(error)))
                values["severity"] = severity
            elif setting == "fail-on":
                values["fail_on"] = None if raw is None else _severity(raw)
            elif setting == "flink-version":
                # `flink-version: 1.20` is a float in YAML; keep what the user wrote.
                numeric = isinstance(raw, int | float) and not isinstance(raw, bool)
                version = _version_as_written(raw, text) if numeric else raw
                values["flink_version"] = _optional_text(version)
            elif setting == "baseline":
                values["baseline"] = _optional_text(raw)
            elif setting == "completeness":
                if raw is not None and raw not in _COMPLETENESS:
                    raise ValueError("Input should be 'complete' or 'overlay'")
                values["completeness"] = raw
        except ValueError as error:
            problems.append((setting, str(error)))
    for key in table:
        if key not in _SETTINGS:
            problems.append((str(key), ""))
    if not problems:
        return _Settings(**values)
    loc, detail = problems[0]
    top = loc.split(".", 1)[0]
    if not detail:
        message = f"unknown setting '{loc}' in project config (allowed: {', '.join(_SETTINGS)})"
    else:
        message = f"invalid project config setting '{loc}': {detail}"
    more = len(problems) - 1
    if more:
        message += f" (and {more} more problem{'s' if more > 1 else ''})"
    raise ConfigError(message, file=str(path), line=_line_of(text, top) if top else None)


def load_project_config(path: Path) -> ProjectConfig:
    table, text = _raw_table(path)
    model = _validate(table, path, text)
    base = path.parent
    if model.flink_version is not None:
        from flinktune.errors import FlinktuneError
        from flinktune.versions import parse_version

        try:
            parse_version(model.flink_version)
        except FlinktuneError as error:
            raise ConfigError(f"invalid flink-version: {error.message}", file=str(path),
                              line=_line_of(text, "flink-version")) from None
    return ProjectConfig(
        path=path,
        select=tuple(model.select),
        ignore=tuple(model.ignore),
        severity=tuple(sorted(model.severity.items())),
        rules=tuple(base / r for r in model.rules),
        fail_on=model.fail_on,
        flink_version=model.flink_version,
        baseline=base / model.baseline if model.baseline else None,
        completeness=model.completeness,
    )


def check_codes(config: ProjectConfig, known: frozenset[str]) -> None:
    """Raise ConfigError (naming the file and line) for a ``select``, ``ignore`` or ``severity`` code
    that matches none of ``known``, the codes the lint run can report: a typo there would silently turn
    rules off (select) or leave them on (ignore, severity)."""
    from flinktune.lint.selection import matches_no_rule, no_rule_hint

    if config.path is None:
        return
    for setting, codes in (("select", config.select), ("ignore", config.ignore),
                           ("severity", tuple(code for code, _ in config.severity))):
        unknown = matches_no_rule(codes, known)
        if not unknown:
            continue
        try:
            text = config.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        # A severity override has a line of its own; a select / ignore list is pointed at by its setting.
        line = (_line_of(text, unknown[0]) if setting == "severity" else None) or _line_of(text, setting)
        raise ConfigError(f"{setting} {unknown[0]} matches no lint rule {no_rule_hint(known)}",
                          file=str(config.path), line=line)


def discover(start: Path | None = None, explicit: Path | None = None) -> ProjectConfig:
    """Load ``explicit`` (``--config``) or the nearest project config; an empty one if none."""
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError("project config file not found", file=str(explicit))
        return load_project_config(explicit)
    found = find_project_config(start)
    return load_project_config(found) if found is not None else ProjectConfig()
