"""The planner's working copy: the file's values after the changes proposed so far, and the facts
(job, evidence, measurements) every step reads. Steps call ``set_option`` / ``delete`` / ``rename``;
``flinktune.advise.loop`` owns applying, rolling back and the effects.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flinktune.advise.change import ProposedChange
from flinktune.advise.limits import Margins
from flinktune.advise.measured import Measured
from flinktune.advise.state import KEY_PROCESS, ConfigState, Job
from flinktune.advise.text import raw
from flinktune.change import Applicability
from flinktune.config.catalog import Catalog
from flinktune.config.types import ConfigDocument, ConfigValue
from flinktune.model.link import link_saturated
from flinktune.record import replace
from flinktune.situation.deployment import DeploymentSpec
from flinktune.situation.environment import Environment
from flinktune.versions import FlinkVersion

SPEC_MEMORY = "spec.taskManager.resource.memory"


@dataclass(frozen=True)
class Evidence:
    """Facts that may move a setting away from Flink's default, each as a short citation, or None.

    A stated fact comes from a flag or a profile; a measured one from the dump (``--metrics``). The
    advisor's own defaults (1 ms round trip, 10 Gbit/s) are assumptions, never evidence."""

    rate: str | None = None              # records/s per producer subtask
    record: str | None = None            # record size
    rtt: str | None = None
    bandwidth: str | None = None
    latency_target: str | None = None
    skew: str | None = None

    @staticmethod
    def of(env: Environment, measured: Measured | None, job: Job) -> Evidence:
        def stated(name: str, text: str) -> str | None:
            where = env.source(name)
            return f"{text} [{'--' + name if where == 'flag' else where}]" if where in ("flag",
                                                                                      "profile") else None

        def measured_or_stated(name: str, value: float | None, text: str) -> str | None:
            where = env.source(name)
            if where in ("flag", "profile"):
                return stated(name, text)
            if value is not None and where in ("metrics", "derived"):
                return f"{text} [measured, --metrics]"
            return None

        rate = measured_or_stated("rate", job.rate_per_subtask,
                                  f"rate {job.rate_per_subtask:,.0f} records/s per subtask"
                                  if job.rate_per_subtask else "")
        record = measured_or_stated("record-size", job.record_bytes,
                                    f"record size {job.record_bytes:.0f} B" if job.record_bytes else "")
        skew = measured_or_stated("skew", job.skew, f"skew {job.skew:.3g}x" if job.skew else "")
        return Evidence(
            rate=rate if job.rate_per_subtask else None,
            record=record if job.record_bytes else None,
            rtt=stated("rtt", f"rtt {job.rtt_s * 1000:g} ms"),
            bandwidth=stated("bandwidth", f"bandwidth {job.bandwidth_bytes_per_s / 1e6:.4g} MB/s"),
            latency_target=(stated("latency-target", f"latency target {job.latency_target_s * 1000:g} ms")
                            if job.latency_target_s is not None else None),
            skew=skew if job.skew else None,
        )

    @property
    def throughput(self) -> tuple[str, ...] | None:
        """What sizing credits for a rate needs: the rate, the record size and the round trip."""
        if self.rate and self.record and self.rtt:
            return (self.rate, self.record, self.rtt)
        return None


@dataclass
class Plan:
    document: ConfigDocument
    version: FlinkVersion
    catalog: Catalog
    job: Job
    spec: DeploymentSpec
    measured: Measured | None
    evidence: Evidence
    margins: Margins
    overlay: dict[str, ConfigValue]
    values: dict[str, ConfigValue] = field(default_factory=dict)
    changes: list[ProposedChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    withheld: list[str] = field(default_factory=list)
    step: str = ""
    graph_stated: bool = False       # --exchanges (flag/profile): the stated bound without a plan
    parallelism_source: str = "config"
    # Where each job fact came from (parallelism, slots, taskmanagers, ...: flag, profile, metrics, ...).
    job_sources: dict[str, str] = field(default_factory=dict)
    # The job as rescaled by steps/parallelism.py: its graph sizes the network buffers and slots. Every
    # other step judges the job as measured (``job``): the dump's rates describe that one.
    rescaled: Job | None = None

    def __post_init__(self) -> None:
        if not self.values:
            self.values = dict(self.document.values())
        self.original = self.state()

    # ------------------------------------------------------------------ reading

    def state(self, values: dict[str, ConfigValue] | None = None,
              overlay: dict[str, ConfigValue] | None = None, job: Job | None = None) -> ConfigState:
        return ConfigState(dict(self.values if values is None else values), self.version, self.catalog,
                           self.job if job is None else job, self.document.path, self.document.format,
                           dict(self.overlay if overlay is None else overlay), self.document)

    @property
    def current(self) -> ConfigState:
        return self.state()

    @property
    def sized_job(self) -> Job:
        """The job the buffers and slots are sized for: rescaled when a step rescaled it."""
        return self.rescaled if self.rescaled is not None else self.job

    @property
    def sized(self) -> ConfigState:
        """The current values judged for the job as it will run (``sized_job``)."""
        return self.state(job=self.sized_job)

    def current_with_exchanges(self, exchanges: int) -> ConfigState:
        """The current values judged for another number of all-to-all exchanges (no plan)."""
        job = replace(self.job, exchanges=exchanges)
        return ConfigState(dict(self.values), self.version, self.catalog, job, self.document.path,
                           self.document.format, dict(self.overlay), self.document)

    def exists(self, key: str) -> bool:
        return self.catalog.lookup(key, self.version).kind == "option"

    def readable(self, key: str) -> bool:
        """The version reads the key: an option, or a deprecated alias it still honours."""
        return self.catalog.lookup(key, self.version).kind in ("option", "deprecated-alias")

    def line(self, key: str) -> int | None:
        entry = self.document.get(key)
        return entry.line if entry is not None and entry.line > 0 else None

    def file_fact(self, key: str) -> tuple[str, ...]:
        """The evidence of a change that the file itself justifies: the line as written."""
        entry = self.document.get(key)
        if entry is None:
            return ()
        where = f" [line {entry.line}]" if entry.line > 0 else ""
        return (f"the file sets {key}: {entry.raw.strip()}{where}",)

    def default(self, key: str) -> str | None:
        spec = self.catalog.spec(key, self.version)
        # An empty default (a Map or List option) reads "(not set)", not "(default )".
        return None if spec is None or spec.default in (None, "") else str(spec.default)

    def aliases_set(self, canonical: str) -> list[str]:
        found = []
        for key in self.values:
            if key == canonical:
                continue
            status = self.catalog.lookup(key, self.version)
            if canonical in (status.replacement, status.canonical_key):
                found.append(key)
        return found

    @property
    def link_saturated(self) -> bool:
        """Measured remote bytes of the busiest TaskManager near the bandwidth given (--bandwidth)."""
        m = self.measured
        return bool(m is not None and self.evidence.bandwidth
                    and link_saturated(m.remote_in_bytes_per_s, self.job.bandwidth_bytes_per_s))

    def changed(self, key: str) -> bool:
        return any(c.shown_key == key or c.key == key for c in self.changes)

    # ------------------------------------------------------------------ proposing

    def add(self, change: ProposedChange) -> None:
        # Every change names its evidence: what was measured or stated, else the file's own line.
        change = replace(change, file=change.file or self.document.path,
                         proposed_by=change.proposed_by or self.step,
                         evidence=change.evidence or self.file_fact(change.key))
        apply_change(self.values, self.overlay, change)
        self.changes.append(change)

    def set_option(self, key: str, value: str, why: str, metrics: tuple[str, ...],
                   evidence: tuple[str, ...] = ()) -> None:
        """Set ``key`` (a current option of the version); an old alias in the file is renamed."""
        if not self.exists(key):
            self.notes.append(f"(internal) {key} does not exist in Flink {self.version}; not proposed")
            return
        aliases = self.aliases_set(key)
        if key not in self.values and aliases:
            alias = aliases[-1]
            self.add(ProposedChange("rename", alias, value, new_key=key,
                                    why=why + f" ({alias} is the deprecated name of {key})",
                                    line=self.line(alias), evidence=evidence,
                                    current=raw(self.values.get(alias)), default=self.default(key),
                                    metrics=metrics))
            return
        self.add(ProposedChange("set", key, value, why=why, line=self.line(key), evidence=evidence,
                                current=raw(self.values.get(key)), default=self.default(key),
                                metrics=metrics))

    def delete(self, key: str, why: str, metrics: tuple[str, ...] = (), evidence: tuple[str, ...] = (),
               applicability: Applicability = Applicability.UNSAFE) -> None:
        """Delete ``key``: ``safe`` when the version ignores it (nothing Flink runs with changes)."""
        if key not in self.values:
            return
        self.add(ProposedChange("delete", key, why=why, line=self.line(key), evidence=evidence,
                                applicability=applicability, current=raw(self.values.get(key)),
                                metrics=metrics))

    def rename(self, key: str, new_key: str, why: str, metrics: tuple[str, ...] = (),
               value: str | None = None, applicability: Applicability = Applicability.UNSAFE) -> None:
        """Rename ``key`` (keeping its value unless ``value``): ``safe`` when Flink reads the new key
        as it read the old one."""
        if key not in self.values:
            return
        current = raw(self.values.get(key))
        self.add(ProposedChange("rename", key, value if value is not None else current, new_key=new_key,
                                why=why, line=self.line(key), applicability=applicability, current=current,
                                metrics=metrics))

    def withhold(self, what: str) -> None:
        """A change the advisor would consider with more input: what it would check, how to give it."""
        if what not in self.withheld:
            self.withheld.append(what)


def apply_change(values: dict[str, ConfigValue], overlay: dict[str, ConfigValue],
                 change: ProposedChange) -> None:
    """Apply ``change`` to a working copy (``values``: the file's keys; ``overlay``: operator fields)."""
    if change.target == "spec":
        if change.key == SPEC_MEMORY and change.action == "set":
            overlay[KEY_PROCESS] = change.value
    elif change.action == "set":
        values[change.key] = change.value
    elif change.action == "delete":
        values.pop(change.key, None)
    elif change.action == "rename":
        assert change.new_key is not None
        old = values.pop(change.key, None)
        values[change.new_key] = change.value if change.value is not None else old
