"""The values ``recommend`` returns: a proposed change with its model effects, the whole recommendation.

A ``ProposedChange`` is the one config change (``flinktune.change.Change``: key, action, value,
new_key, line, why, evidence, applicability, proposed_by = the step) with what only the advisor
knows about it: the value as written, Flink's default, the model quantities it moves and their
effects. The writer takes it as it takes any ``Change``.
"""

from __future__ import annotations

from dataclasses import dataclass

from flinktune.advise.measured import Measured
from flinktune.advise.state import Job
from flinktune.change import Applicability, Change
from flinktune.config.types import ConfigFormat
from flinktune.model import buffers as mb
from flinktune.model.memory import MISSING_SIZE
from flinktune.model.operator_memory import OperatorComparison
from flinktune.record import store
from flinktune.situation.environment import Environment
from flinktune.versions import FlinkVersion


@dataclass(frozen=True)
class Effect:
    name: str
    label: str
    unit: str
    before: float | None
    after: float | None


class ProposedChange(Change):
    """A change ``recommend`` proposes (``value``: the recommended value; None for delete)."""

    __slots__ = ("current", "default", "effects", "metrics")
    _fields = (*Change._fields, "current", "default", "effects", "metrics")
    current: str | None                  # as written (None: not set)
    default: str | None                  # what Flink uses when the key is not set
    effects: tuple[Effect, ...]
    metrics: tuple[str, ...]             # model quantities whose effect is shown

    def __init__(self, action: str, key: str, value: str | None = None, new_key: str | None = None,
                 applicability: Applicability = Applicability.UNSAFE, file: str | None = None,
                 line: int | None = None, why: str = "", evidence: tuple[str, ...] = (),
                 proposed_by: str = "", target: str = "config", current: str | None = None,
                 default: str | None = None, effects: tuple[Effect, ...] = (),
                 metrics: tuple[str, ...] = ()) -> None:
        store(self, (action, key, value, new_key, applicability, file, line, why, evidence, proposed_by,
                     target, current, default, effects, metrics))
        self.__post_init__()       # Change's checks


@dataclass(frozen=True)
class Recommendation:
    path: str
    format: ConfigFormat
    name: str | None
    version: FlinkVersion
    job: Job
    environment: Environment
    changes: tuple[ProposedChange, ...]
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
    # The file is evidently the whole configuration Flink starts with (flinktune.situation.shows_complete):
    # only then is a missing memory size Flink's refusal, not the image's sizes filling in.
    complete: bool = True

    @property
    def original_fails_for_sure(self) -> bool | None:
        """Does the original fail whatever the job's graph beyond what is known? None: no verdict."""
        if self.original_fit is None:
            return None
        if self.original_fit.fits:
            return False
        return self.original_minimum_fit is None or not self.original_minimum_fit.fits

    @property
    def size_maybe_elsewhere(self) -> bool:
        """No memory size in the file, which may be merged into a configuration that has one."""
        return (not self.complete and self.original_memory_error is not None
                and self.original_memory_error.startswith(MISSING_SIZE))

    @property
    def manual(self) -> tuple[ProposedChange, ...]:
        return tuple(c for c in self.changes if c.applicability is Applicability.MANUAL)
