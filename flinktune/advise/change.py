"""The values ``recommend`` returns: a change to one key, its model effects, the whole recommendation."""

from __future__ import annotations

from dataclasses import dataclass, field

from flinktune.advise.measured import Measured
from flinktune.advise.state import Job
from flinktune.config.types import ConfigFormat
from flinktune.config.writer import Edit
from flinktune.model import buffers as mb
from flinktune.model.operator_memory import OperatorComparison
from flinktune.situation.environment import Environment
from flinktune.versions import FlinkVersion


@dataclass(frozen=True)
class Effect:
    name: str
    label: str
    unit: str
    before: float | None
    after: float | None


@dataclass(frozen=True)
class Change:
    key: str
    action: str                      # set | delete | rename | manual (outside what the writer edits)
    current: str | None              # as written (None: not set)
    default: str | None              # what Flink uses when the key is not set
    recommended: str | None          # None for delete
    why: str
    new_key: str | None = None
    line: int | None = None
    effects: tuple[Effect, ...] = ()
    metrics: tuple[str, ...] = field(default=(), repr=False)
    # The measured or stated facts that justify moving the key (empty for renames/deletes of keys
    # the version no longer reads, where the catalog is the evidence).
    evidence: tuple[str, ...] = ()
    step: str = ""                   # the planner step that proposed it (flinktune.advise.steps)

    @property
    def shown_key(self) -> str:
        return self.new_key if self.action == "rename" and self.new_key else self.key

    def edit(self) -> Edit | None:
        if self.action == "set":
            return Edit("set", self.key, self.recommended)
        if self.action == "delete":
            return Edit("delete", self.key)
        if self.action == "rename":
            return Edit("rename", self.key, self.recommended, self.new_key)
        return None


@dataclass(frozen=True)
class Recommendation:
    path: str
    format: ConfigFormat
    name: str | None
    version: FlinkVersion
    job: Job
    environment: Environment
    changes: tuple[Change, ...]
    notes: tuple[str, ...]
    measured: Measured | None
    before: dict[str, float | None]
    after: dict[str, float | None]
    demand_assumption: str
    original_fit: mb.NetworkFit | None
    original_memory_error: str | None
    final_fit: mb.NetworkFit | None
    final_memory_error: str | None
    original_text: str
    new_text: str
    assumptions: tuple[str, ...] = ()
    # What the advisor would check with more input, and how to provide it ("give --rate and --rtt").
    withheld: tuple[str, ...] = ()
    # Predicted checkpoint-barrier wait over the chain of back-pressured exchanges (seconds), before
    # and after, when the dump or the flags give a rate (docs/recommend.md states its accuracy).
    barrier_wait_s: tuple[float | None, float | None] = (None, None)
    # The Kubernetes operator's own network-memory figure when the FlinkDeployment turns its memory
    # tuning on, for comparison only.
    operator_network: OperatorComparison | None = None
    # Without a plan, when the pessimistic default bound does not fit: the fit at one all-to-all
    # exchange (any job with a keyBy). If that fits, the job fails only if it has more exchanges.
    original_minimum_fit: mb.NetworkFit | None = None

    @property
    def original_fails_for_sure(self) -> bool | None:
        """Does the original fail whatever the job's graph beyond what is known? None: no verdict."""
        if self.original_fit is None:
            return None
        if self.original_fit.fits:
            return False
        return self.original_minimum_fit is None or not self.original_minimum_fit.fits

    @property
    def edits(self) -> list[Edit]:
        return [e for e in (c.edit() for c in self.changes) if e is not None]

    @property
    def manual(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.action == "manual")
