"""The project config: ``.flinktune.yaml`` or ``[tool.flinktune]`` in ``pyproject.toml``.

Found by walking from the working folder up to the file-system root; the first folder that has
either wins (``.flinktune.yaml`` before ``pyproject.toml`` in the same folder). Paths in it
(``rules``, ``baseline``) are relative to the folder the config file sits in.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from flinktune.config.record import Record, set_field
from flinktune.errors import ConfigError
from flinktune.findings import Severity

PROJECT_FILES = (".flinktune.yaml", ".flinktune.yml")
_CODE_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")


class ProjectConfig(Record):
    """Settings from .flinktune.yaml or [tool.flinktune]; empty when there is none."""

    __slots__ = _fields = ("path", "select", "ignore", "severity", "rules", "fail_on", "flink_version",
                           "baseline")
    path: Path | None
    select: tuple[str, ...]
    ignore: tuple[str, ...]
    severity: tuple[tuple[str, Severity], ...]
    rules: tuple[Path, ...]
    fail_on: Severity | None
    flink_version: str | None
    baseline: Path | None

    def __init__(self, path: Path | None = None, select: tuple[str, ...] = (), ignore: tuple[str, ...] = (),
                 severity: tuple[tuple[str, Severity], ...] = (), rules: tuple[Path, ...] = (),
                 fail_on: Severity | None = None, flink_version: str | None = None,
                 baseline: Path | None = None) -> None:
        set_field(self, "path", path)
        set_field(self, "select", select)
        set_field(self, "ignore", ignore)
        set_field(self, "severity", severity)
        set_field(self, "rules", rules)
        set_field(self, "fail_on", fail_on)
        set_field(self, "flink_version", flink_version)
        set_field(self, "baseline", baseline)


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


def _line_of(text: str, field: str) -> int | None:
    pattern = re.compile(rf"^\s*['\"]?{re.escape(field)}['\"]?\s*[:=]", re.MULTILINE)
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else None


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
        from flinktune.config.safe_load import load_yaml

        table = load_yaml(text, file=str(path), prefix="invalid YAML in project config")
        if table is None:
            table = {}
    if not isinstance(table, dict):
        raise ConfigError("project config must be a mapping of settings", file=str(path))
    return table, text


def _validate(table: dict[str, Any], path: Path, text: str) -> Any:
    # pydantic only when a project config exists: keeps the plain lint path light.
    from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

    class _Schema(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

        select: list[str] = Field(default_factory=list)
        ignore: list[str] = Field(default_factory=list)
        severity: dict[str, Severity] = Field(default_factory=dict)
        rules: list[str] = Field(default_factory=list)
        fail_on: Severity | None = Field(default=None, alias="fail-on")
        flink_version: str | None = Field(default=None, alias="flink-version")
        baseline: str | None = None

        @field_validator("select", "ignore")
        @classmethod
        def _prefixes(cls, value: list[str]) -> list[str]:
            for prefix in value:
                if not _CODE_PREFIX.match(prefix):
                    raise ValueError(f"'{prefix}' is not a rule code or code prefix like FTN or FTN001")
            return [p.upper() for p in value]

        @field_validator("severity")
        @classmethod
        def _codes(cls, value: dict[str, Severity]) -> dict[str, Severity]:
            for code in value:
                if not _CODE_PREFIX.match(code):
                    raise ValueError(f"'{code}' is not a rule code or code prefix")
            return {k.upper(): v for k, v in value.items()}

        @field_validator("flink_version", mode="before")
        @classmethod
        def _version_text(cls, value: Any) -> Any:
            # `flink-version: 1.20` is a float in YAML; keep what the user wrote.
            return str(value) if isinstance(value, int | float) else value

    try:
        return _Schema.model_validate(table)
    except ValidationError as error:
        first = error.errors()[0]
        loc = ".".join(str(part) for part in first["loc"]) or "(top level)"
        top = str(first["loc"][0]) if first["loc"] else ""
        if first["type"] == "extra_forbidden":
            allowed = "select, ignore, severity, rules, fail-on, flink-version, baseline"
            message = f"unknown setting '{loc}' in project config (allowed: {allowed})"
        else:
            message = f"invalid project config setting '{loc}': {first['msg']}"
        more = len(error.errors()) - 1
        if more:
            message += f" (and {more} more problem{'s' if more > 1 else ''})"
        raise ConfigError(message, file=str(path), line=_line_of(text, top) if top else None) from None


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
    )


def discover(start: Path | None = None, explicit: Path | None = None) -> ProjectConfig:
    """Load ``explicit`` (``--config``) or the nearest project config; an empty one if none."""
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError("project config file not found", file=str(explicit))
        return load_project_config(explicit)
    found = find_project_config(start)
    return load_project_config(found) if found is not None else ProjectConfig()
