"""The shape of a rule file, validated by pydantic with unknown fields rejected.

Only the loader imports this module, and only for rule files it has not validated before
(see ``loader``'s cache): the lint path stays free of pydantic's import cost.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from flinktune.errors import UsageError
from flinktune.rules.spec import VersionRange
from flinktune.versions import parse_version

CODE_PATTERN = r"^FT[A-Z][0-9]{3}$"
NAME_PATTERN = r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$"
LET_NAME = re.compile(r"^[a-z][a-z0-9_]*$")

Scope = Literal["config", "key", "issue", "vertex", "subtask", "process"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FixModel(_Frozen):
    """The config change as data (a ``flinktune.change.Change``); ``key``, ``value`` and ``new_key``
    are templates."""

    action: Literal["set", "delete", "rename"]
    key: str = Field(min_length=1)
    value: str | None = None
    new_key: str | None = None
    # safe: lint --fix applies it; unsafe (the default): shown, written by no fixer; manual: by hand.
    applicability: Literal["safe", "unsafe", "manual"] | None = None
    safe: bool = False               # the older spelling of ``applicability: safe``

    @model_validator(mode="after")
    def _shape(self) -> FixModel:
        if self.action == "set" and self.value is None:
            raise ValueError("a 'set' fix needs a value")
        if self.action == "rename" and not self.new_key:
            raise ValueError("a 'rename' fix needs new_key")
        if self.action != "set" and self.value is not None:
            raise ValueError(f"a '{self.action}' fix takes no value")
        if self.action != "rename" and self.new_key is not None:
            raise ValueError(f"a '{self.action}' fix takes no new_key")
        if self.safe and self.applicability not in (None, "safe"):
            raise ValueError(f"'safe: true' contradicts 'applicability: {self.applicability}'")
        if (self.safe or self.applicability == "safe") and self.action == "set":
            # --fix applies only changes that cannot alter what Flink runs with.
            raise ValueError("only rename and delete fixes may be safe")
        return self


class ExampleModel(_Frozen):
    """One input a rule must (fail) or must not (pass) report on."""

    version: str = "1.20"
    config: dict[str, Any] | str | None = None
    format: Literal["flink-conf.yaml", "config.yaml", "FlinkDeployment", "ConfigMap"] | None = None
    file: str | None = None
    env: dict[str, Any] = Field(default_factory=dict)
    items: list[dict[str, Any]] | None = None
    message: str | None = None       # fail examples: text the message must contain
    count: int | None = Field(default=None, ge=1)   # fail examples: exact number of findings
    note: str | None = None
    # Deployment files beside the config (file name -> text): docker-compose.yml, manifests, Dockerfile.
    # The example is then linted as a folder, so rules that read the deployment are tested end to end.
    deployment: dict[str, str] | None = None
    # Analysis rules: a small job graph and its vertices' metric values (what the web UI showed); the
    # items are diagnosed from them (flinktune/analysis/example_metrics.py), not written by hand.
    metrics: dict[str, Any] | None = None

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: object) -> object:
        # YAML reads 1.20 as the float 1.2; insist on text so the version is unambiguous.
        if isinstance(value, float):
            raise ValueError(f"write the version as text in quotes (\"{value}\" is ambiguous in YAML)")
        return value

    @field_validator("version")
    @classmethod
    def _version_known(cls, value: str) -> str:
        try:
            parse_version(value)
        except UsageError as error:
            raise ValueError(error.message) from None
        return value


class ExamplesModel(_Frozen):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    pass_: list[ExampleModel] = Field(alias="pass", min_length=1)
    fail: list[ExampleModel] = Field(min_length=1)


class RuleFile(_Frozen):
    """A rule file as written."""

    code: str = Field(pattern=CODE_PATTERN)
    name: str = Field(pattern=NAME_PATTERN, max_length=80)
    severity: Literal["error", "warning", "info"]
    scope: Scope
    versions: str = "*"
    condition: str = Field(min_length=1, max_length=4000)
    let: dict[str, str] = Field(default_factory=dict)
    message: str = Field(min_length=1, max_length=2000)
    why: str = Field(min_length=1, max_length=4000)
    at: str | None = None             # template: the key a config-scope finding points at
    fix: FixModel | None = None
    references: list[str] = Field(min_length=1)
    examples: ExamplesModel
    # An expression giving the other places the finding rests on: a list of mappings with file, line and
    # note (a compose service, a volume mount, an image tag). Shown with the finding in every report.
    related: str | None = Field(default=None, max_length=4000)
    # The finding rests on the deployment (containers, volumes, images): when lint saw no deployment
    # files beside the config, it is reported as info that says what lint could not see.
    needs_deployment: bool = False

    @field_validator("versions")
    @classmethod
    def _versions(cls, value: str) -> str:
        VersionRange.parse(value)
        return value

    @field_validator("let")
    @classmethod
    def _let_names(cls, value: dict[str, str]) -> dict[str, str]:
        if len(value) > 32:
            raise ValueError("at most 32 let-names")
        for name in value:
            if not LET_NAME.match(name):
                raise ValueError(f"let-name '{name}' must be lower-case letters, digits and '_'")
        return value
