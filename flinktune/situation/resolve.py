"""The Situation: one resolved view of a config document, its Flink version, the environment, the
job graph and measurements, built once and read by every command (see ``flinktune.situation``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from flinktune.config.types import ConfigDocument, ConfigEntry, ConfigFormat, ConfigValue
from flinktune.errors import ConfigError, FlinktuneError
from flinktune.record import Record, replace, store
from flinktune.situation.deployment import DeploymentSpec, deployment_spec
from flinktune.situation.environment import DEFAULT_BANDWIDTH_BYTES_PER_S, DEFAULT_RTT_S, Environment
from flinktune.situation.legacy import legacy_heap_entries
from flinktune.situation.sourced import Sourced
from flinktune.situation.version import resolve_version
from flinktune.versions import OLDER_THAN_SUPPORTED, SUPPORTED, FlinkVersion

# All-to-all exchanges assumed when neither a plan, nor a flag, profile or project setting says how
# many the job has (docs/recommend.md, "The job graph"): real jobs commonly have a source -> keyBy ->
# window -> keyBy -> sink shape or longer; issue 13 measured three in a row on a real job that a
# one-exchange guess broke. Three is the pessimistic bound recommend sizes for; lint reports a
# shortfall at this bound as a warning and at one exchange (any job with a keyBy) as an error.
DEFAULT_EXCHANGES = 3

KEY_PARALLELISM = "parallelism.default"
KEY_SLOTS = "taskmanager.numberOfTaskSlots"
KEY_RUNTIME_MODE = "execution.runtime-mode"
KEY_TM_PROCESS = "taskmanager.memory.process.size"
KEY_JM_PROCESS = "jobmanager.memory.process.size"

_ACTIVE_TARGETS = ("kubernetes", "yarn")
# The values that size the job itself (Situation.unreadable_job_values).
_JOB_KEYS = ((KEY_PARALLELISM, "parallelism"), (KEY_SLOTS, "slots"))
_SPEC_FIELD = {KEY_PARALLELISM: "spec.job.parallelism", KEY_TM_PROCESS: "spec.taskManager.resource.memory",
               KEY_JM_PROCESS: "spec.jobManager.resource.memory"}


def _entry(key: str, value: ConfigValue, file: str, line: int | None) -> ConfigEntry:
    return ConfigEntry(key, value, "" if value is None else str(value), file, line or 0)


def spec_entries(spec: DeploymentSpec, path: str) -> tuple[ConfigEntry, ...]:
    """The options the operator sets from ``spec`` (FlinkConfigBuilder), each at the spec field's line."""
    out = []
    if spec.taskmanager_memory_bytes is not None:
        out.append(_entry(KEY_TM_PROCESS, f"{spec.taskmanager_memory_bytes}b", path,
                          spec.taskmanager_memory_line))
    if spec.jobmanager_memory_bytes is not None:
        out.append(_entry(KEY_JM_PROCESS, f"{spec.jobmanager_memory_bytes}b", path,
                          spec.jobmanager_memory_line))
    if spec.parallelism is not None:
        out.append(_entry(KEY_PARALLELISM, str(spec.parallelism), path, spec.parallelism_line))
    return tuple(out)


def deployment_kind(document: ConfigDocument, spec: DeploymentSpec) -> Sourced[str]:
    """standalone | kubernetes | yarn: decides where the legacy heap keys go (situation.legacy)."""
    if spec.kind in ("FlinkDeployment", "FlinkSessionJob"):
        if spec.mode == "standalone":
            return Sourced("standalone", "spec", document.path, detail="spec.mode: standalone")
        return Sourced("kubernetes", "spec", document.path, detail=spec.kind)
    target = document.get("execution.target")
    if target is not None and isinstance(target.value, str):
        for kind in _ACTIVE_TARGETS:
            if target.value.strip().lower().startswith(kind):
                return Sourced(kind, "config", target.file, target.line, "execution.target")
    for entry in document.entries:
        for kind in _ACTIVE_TARGETS:
            if entry.key.startswith(kind + "."):
                return Sourced(kind, "inferred", entry.file, entry.line, entry.key)
    return Sourced("standalone", "default")


def completeness_of(document: ConfigDocument, spec: DeploymentSpec) -> Sourced[str]:
    """complete | overlay: whether the document is the whole configuration Flink starts with, or a
    part merged into another (then a missing memory size is not a refusal). Default: complete."""
    if spec.kind == "FlinkSessionJob":
        return Sourced("overlay", "inferred", document.path,
                       detail="a FlinkSessionJob's configuration is merged into its session cluster's")
    return Sourced("complete", "default")


# Keys the Docker image's entrypoint writes into the live flink-conf.yaml (set_config_option).
_ENTRYPOINT_KEYS = ("blob.server.port", "query.server.port")
_MANY_KEYS = 15


def shows_complete(document: ConfigDocument | None, completeness: Sourced[str] | None) -> bool:
    """The document is evidently the whole configuration Flink starts with: a project setting or
    other stated source says so, or the file shows it - a ConfigMap mounted as the conf folder,
    keys the Docker entrypoint writes into the live file (blob.server.port, query.server.port, a
    repeated jobmanager.rpc.address), or a full file of many keys. A short file that shows none of
    these may as well be merged into the image's defaults, so a missing size is not asserted."""
    if completeness is not None and completeness.source != "default":
        return completeness.value == "complete"
    if document is None or (completeness is not None and completeness.value != "complete"):
        return False
    if document.format is ConfigFormat.CONFIGMAP:
        return True
    keys = [entry.key for entry in document.entries]
    if any(key in _ENTRYPOINT_KEYS for key in keys) or keys.count("jobmanager.rpc.address") > 1:
        return True
    return len(set(keys)) >= _MANY_KEYS


class Situation(Record):
    """Everything a command knows about one configuration document and the job that runs on it.

    Build it with ``resolve_situation``. Read the config through ``effective`` (the document as its
    Flink version reads it, with the operator's spec fields and the legacy heap keys folded in) and
    the job through ``parallelism`` / ``slots`` / ``taskmanagers`` / ``exchanges`` / ``workload`` /
    ``rtt_s`` / ``bandwidth_bytes_per_s``, each a ``Sourced`` value.
    """

    _fields = ("document", "version", "environment", "spec", "deployment", "completeness", "plan",
               "plan_source", "pending_operators", "placement", "project_exchanges", "measured",
               "catalog", "deployed")
    _compared = ("document", "version", "environment", "spec", "deployment", "completeness", "plan",
                 "plan_source", "pending_operators", "placement", "project_exchanges", "measured")
    document: ConfigDocument
    version: Sourced[FlinkVersion]
    environment: Environment
    spec: DeploymentSpec
    deployment: Sourced[str]
    completeness: Sourced[str]
    plan: Mapping[str, Any] | None  # Flink's /jobs/:jobid/plan JSON
    plan_source: str | None  # its file (or "beside the dump")
    pending_operators: int  # operators the plan was completed with (situation.plan)
    placement: Mapping[tuple[str, int], Any] | None  # (vertex id, subtask) -> TaskManager
    project_exchanges: int | None  # job-graph hint from the project config
    measured: Any  # flinktune.advise.measured.Measured (plain values)
    catalog: Any
    # Where the document is deployed (flinktune.deployment.link.Placement): the processes that read it,
    # their images and volumes; None when no deployment files were read.
    deployed: Any

    def __init__(self, document: ConfigDocument, version: Sourced[FlinkVersion],
                 environment: Environment | None = None, spec: DeploymentSpec | None = None,
                 deployment: Sourced[str] | None = None, completeness: Sourced[str] | None = None,
                 plan: Mapping[str, Any] | None = None, plan_source: str | None = None,
                 pending_operators: int = 0, placement: Mapping[tuple[str, int], Any] | None = None,
                 project_exchanges: int | None = None, measured: Any = None, catalog: Any = None,
                 deployed: Any = None) -> None:
        if environment is None:
            environment = Environment()
        if spec is None:
            spec = DeploymentSpec()
        if deployment is None:
            deployment = Sourced("standalone", "default")
        if completeness is None:
            completeness = Sourced("complete", "default")
        store(self, (document, version, environment, spec, deployment, completeness, plan, plan_source,
                     pending_operators, placement, project_exchanges, measured, catalog, deployed))

    # ------------------------------------------------------------------ the configuration

    @property
    def flink_version(self) -> FlinkVersion:
        return self.version.value

    @cached_property
    def _catalog(self) -> Any:
        if self.catalog is not None:
            return self.catalog
        from flinktune.config.catalog import load_catalog

        return load_catalog()

    @cached_property
    def _fold(self) -> tuple[tuple[ConfigEntry, ...], tuple[str, ...]]:
        """(entries Flink adds to the document, what they mean in words): the operator's spec fields,
        then the legacy heap keys (mapped only where the new option is not set, spec included)."""
        from flinktune.config.effective import EffectiveConfig

        path = self.document.path
        spec = spec_entries(self.spec, path)
        with_spec = replace(self.document, entries=self.base_entries + self.document.entries + spec)
        eff = EffectiveConfig(with_spec, self.flink_version, self._catalog)
        legacy, legacy_notes = legacy_heap_entries(self.document, self.flink_version, self.deployment.value,
                                                   eff.is_set)
        notes = [f"{e.key} = {e.raw} from the FlinkDeployment spec (line {e.line}), as the operator sets it"
                 for e in spec]
        return spec + legacy, (*notes, *legacy_notes)

    @cached_property
    def base_entries(self) -> tuple[ConfigEntry, ...]:
        """What an overlay (FLINK_PROPERTIES) is merged into: the configuration file the process mounts,
        else the official image's default configuration; the document's own entries win over these."""
        deployed = self.deployed
        if deployed is None or not getattr(deployed, "base", ()):
            return ()
        return tuple(ConfigEntry(setting.key, setting.value, setting.value, setting.where.file,
                                 setting.where.line or 0) for setting in deployed.base)

    @property
    def folded(self) -> tuple[ConfigEntry, ...]:
        """Entries Flink adds to the document: the operator's spec fields, then the legacy heap keys."""
        return self._fold[0]

    @property
    def notes(self) -> tuple[str, ...]:
        """What the resolution did that a user should know (legacy keys mapped, spec fields folded)."""
        return self._fold[1]

    @cached_property
    def effective_document(self) -> ConfigDocument:
        """The document plus the folded entries (last wins, as in Flink)."""
        if not self.folded and not self.base_entries:
            return self.document
        return replace(self.document, entries=self.base_entries + self.document.entries + self.folded)

    @cached_property
    def effective(self) -> Any:
        """``flinktune.config.effective.EffectiveConfig`` of the effective document."""
        from flinktune.config.effective import EffectiveConfig

        return EffectiveConfig(self.effective_document, self.flink_version, self._catalog)

    def entry(self, key: str) -> ConfigEntry | None:
        """The entry Flink reads for ``key`` (its file:line), folded entries included."""
        return self.effective.entry(key)

    def sets_memory_size(self, role: str = "taskmanager") -> bool:
        """The effective configuration sets a total size or the fine-grained pair for ``role``."""
        eff = self.effective
        if role == "taskmanager":
            fine_grained = (eff.is_set("taskmanager.memory.task.heap.size")
                            and eff.is_set("taskmanager.memory.managed.size"))
            process, flink = "taskmanager.memory.process.size", "taskmanager.memory.flink.size"
            return eff.is_set(process) or eff.is_set(flink) or fine_grained
        return (eff.is_set("jobmanager.memory.process.size") or eff.is_set("jobmanager.memory.flink.size")
                or eff.is_set("jobmanager.memory.heap.size"))

    @property
    def complete(self) -> bool:
        return self.completeness.value == "complete"

    def with_document(self, document: ConfigDocument) -> Situation:
        """The same situation for another candidate document (recommend's working copies)."""
        return replace(self, document=document)

    # ------------------------------------------------------------------ the job

    def _env(self, name: str) -> Sourced[Any] | None:
        value = self.environment.value(name)
        if value is None:
            return None
        source = self.environment.source(name) or "flag"
        location = self.environment.location(name)
        file, line = None, None
        if location and ":" in location and not location.startswith("--"):
            file, _, number = location.rpartition(":")
            line = int(number) if number.isdigit() else None
        return Sourced(value, source, file, line, f"--{name}" if source == "flag" else name)

    def _config_int(self, key: str) -> Sourced[int] | None:
        eff = self.effective
        try:
            value = eff.integer(key) if eff.status(key).kind in ("option", "fallback-alias",
                                                                  "deprecated-alias") else None
        except FlinktuneError:   # an unparseable value: the invalid-value rule reports it
            return None
        if value is None:
            return None
        entry = eff.entry(key)
        if entry is None:
            return Sourced(value, "default", detail=key)
        if entry in self.folded:
            return Sourced(value, "spec", entry.file, entry.line, _SPEC_FIELD.get(key, key))
        return Sourced(value, "config", entry.file, entry.line, key)

    @property
    def plan_note(self) -> str | None:
        """What the plan was completed with, when Flink had not built the whole job graph yet."""
        if not self.pending_operators:
            return None
        return (f"the plan completed with {self.pending_operators} operator(s) Flink 2.x had not yet turned "
                "into tasks (it builds a batch job's graph as the job runs), from /jobs/:jobid's stream "
                "graph: chained where FORWARD at one parallelism, exchanges as the plan's")

    @cached_property
    def graph_parallelism(self) -> int | None:
        if not self.plan:
            return None
        inner = self.plan.get("plan", self.plan)
        nodes = inner.get("nodes") if isinstance(inner, Mapping) else None
        values = [n.get("parallelism") for n in nodes or [] if isinstance(n, Mapping)]
        ints = [v for v in values if isinstance(v, int) and not isinstance(v, bool) and v > 0]
        return max(ints) if ints else None

    @cached_property
    def parallelism(self) -> Sourced[int]:
        """flag > metrics > profile > plan > spec.job.parallelism > parallelism.default > 1."""
        env = self._env("parallelism")
        if env is not None and env.source == "flag":
            return env
        measured = getattr(self.measured, "parallelism", None)
        if isinstance(measured, int) and measured > 0:
            return Sourced(measured, "metrics")
        if env is not None:
            return env
        if self.graph_parallelism is not None:
            return Sourced(self.graph_parallelism, "plan", self.plan_source)
        found = self._config_int(KEY_PARALLELISM)
        if found is not None and found.value >= 1:
            return found
        return Sourced(1, "default", detail=KEY_PARALLELISM)

    @cached_property
    def slots(self) -> Sourced[int]:
        """flag / profile > taskmanager.numberOfTaskSlots (default 1)."""
        env = self._env("slots")
        if env is not None:
            return env
        found = self._config_int(KEY_SLOTS)
        if found is not None and found.value >= 1:
            return found
        return Sourced(1, "default", detail=KEY_SLOTS)

    def unreadable_job_values(self, settled: tuple[str, ...] = ()) -> list[str]:
        """The job's parallelism or slots would come from a value in the file that does not parse
        (``parallelism.default`` / ``taskmanager.numberOfTaskSlots``): a template placeholder
        (``${cpu_thread}``, filled in at deploy time) is returned as an assumption of 1, in words;
        anything else raises the value's own ConfigError (Flink refuses it; nothing can be judged).
        A value given elsewhere (flag, profile, plan, metrics; or named in ``settled``, e.g. a swept
        parameter) settles it. One definition for recommend and ``model --config``."""
        eff = self.effective
        assumed = []
        for key, name in _JOB_KEYS:
            if name in settled or getattr(self, name).source != "default" or not eff.is_set(key):
                continue
            try:
                eff.integer(key)
            except FlinktuneError as error:
                raw = str(eff.string(key) or "")
                if "${" in raw or "{{" in raw:
                    assumed.append(f"{name} 1: {key} is the placeholder {raw!r}, filled in at deploy time "
                                   f"(give --{name})")
                    continue
                raise ConfigError(f"{error.message} (give --{name} to judge the file regardless)",
                                  file=error.file, line=error.line) from None
        return assumed

    @cached_property
    def taskmanagers(self) -> Sourced[int]:
        """flag / profile > spec.taskManager.replicas (standalone mode) > ceil(parallelism / slots)."""
        env = self._env("taskmanagers")
        if env is not None:
            return env
        if self.spec.taskmanager_replicas is not None and self.spec.mode == "standalone":
            return Sourced(self.spec.taskmanager_replicas, "spec", self.document.path,
                           self.spec.taskmanager_replicas_line, "spec.taskManager.replicas")
        return Sourced(math.ceil(self.parallelism.value / self.slots.value), "derived",
                       detail="ceil(parallelism / slots)")

    @cached_property
    def exchanges(self) -> Sourced[int]:
        """All-to-all exchanges when there is no plan: flag / profile > project > DEFAULT_EXCHANGES."""
        env = self._env("exchanges")
        if env is not None:
            return env
        if self.project_exchanges is not None:
            return Sourced(self.project_exchanges, "project", detail="exchanges")
        return Sourced(DEFAULT_EXCHANGES, "default", detail="pessimistic bound (docs/recommend.md)")

    @property
    def graph_known(self) -> bool:
        """The plan gives the job graph (otherwise the exchanges bound stands in for it)."""
        return self.plan is not None

    @cached_property
    def workload(self) -> Sourced[str]:
        env = self._env("workload")
        if env is not None:
            return env
        eff = self.effective
        try:
            mode = (eff.string(KEY_RUNTIME_MODE) or "").upper() if eff.is_set(KEY_RUNTIME_MODE) else ""
        except FlinktuneError:
            mode = ""
        if mode == "BATCH":
            entry = eff.entry(KEY_RUNTIME_MODE)
            return Sourced("batch", "config", entry.file if entry else None, entry.line if entry else None,
                           KEY_RUNTIME_MODE)
        if self.plan is not None:
            inner = self.plan.get("plan", self.plan)
            if isinstance(inner, Mapping) and str(inner.get("type", "")).upper() == "BATCH":
                return Sourced("batch", "plan", self.plan_source)
        return Sourced("streaming", "default")

    @cached_property
    def rtt_s(self) -> Sourced[float]:
        return self._env("rtt") or Sourced(DEFAULT_RTT_S, "default", detail="a healthy LAN (Flink docs)")

    @cached_property
    def bandwidth_bytes_per_s(self) -> Sourced[float]:
        return self._env("bandwidth") or Sourced(DEFAULT_BANDWIDTH_BYTES_PER_S, "default", detail="10 Gbit/s")

    def sources(self) -> dict[str, str]:
        """Parameter -> where its value came from, for reports."""
        return {name: getattr(self, attr).describe() for name, attr in (
            ("flink-version", "version"), ("parallelism", "parallelism"), ("slots", "slots"),
            ("taskmanagers", "taskmanagers"), ("exchanges", "exchanges"), ("workload", "workload"),
            ("rtt", "rtt_s"), ("bandwidth", "bandwidth_bytes_per_s"), ("deployment", "deployment"),
            ("completeness", "completeness"))}


def resolve_situation(document: ConfigDocument, *, text: str | None = None,
                      environment: Environment | None = None, directive: str | None = None,
                      project_version: FlinkVersion | None = None, project_exchanges: int | None = None,
                      plan: Mapping[str, Any] | None = None, plan_source: str | None = None,
                      placement: Mapping[tuple[str, int], Any] | None = None, measured: Any = None,
                      completeness: Sourced[str] | None = None, catalog: Any = None,
                      deployed: Any = None) -> Situation:
    """Resolve the situation of ``document``. ``text`` is the file's text (read again from
    ``document.path`` for a manifest when not given); ``directive`` the file's
    ``# flinktune: flink-version=`` value; ``environment`` what flags and profile said."""
    env = environment or Environment()
    if deployed is not None:
        document, completeness = _with_deployed(document, deployed, completeness)
    mentioned: tuple[tuple[FlinkVersion, int], ...] = ()
    if text is not None:
        from flinktune.situation.version import mentioned_versions, version_directive

        if directive is None:
            found = version_directive(text)
            directive = found[0] if found else None
        mentioned = mentioned_versions(text)
    flag_version = env.flink_version
    version = resolve_version(document, flag=flag_version, flag_source=env.source("flink-version") or "flag",
                              directive=directive, project=project_version, catalog=catalog,
                              mentioned=mentioned)
    pending = 0
    if plan is not None:
        from flinktune.situation.plan import with_pending_operators

        plan, pending = with_pending_operators(plan)
    spec = DeploymentSpec()
    if document.format in (ConfigFormat.DEPLOYMENT, ConfigFormat.CONFIGMAP):
        if text is None and Path(document.path).is_file():
            from flinktune.config.textio import read_text_file

            text = read_text_file(Path(document.path)).text
        if text:
            spec = deployment_spec(text, document)
    return Situation(
        document=document, version=version, environment=env, spec=spec,
        deployment=deployment_kind(document, spec),
        completeness=completeness or completeness_of(document, spec),
        plan=plan, plan_source=plan_source, pending_operators=pending, placement=placement,
        project_exchanges=project_exchanges, measured=measured, catalog=catalog, deployed=deployed,
    )


def _older_than_supported(text: str) -> bool:
    parts = text.split(".")
    try:
        return (int(parts[0]), int(parts[1])) < (SUPPORTED[0].major, SUPPORTED[0].minor)
    except (ValueError, IndexError):
        return False


def _with_deployed(document: ConfigDocument, placement: Any, completeness: Sourced[str] | None
                    ) -> tuple[ConfigDocument, Sourced[str] | None]:
    """The document with the Flink version and JDK of the image its processes run (when it states none
    itself), and its completeness as the deployment shows it (unless the project states it)."""
    if document.version_hint is None and placement.version:
        version, source = placement.version, placement.version_source or "the deployment's image"
        if _older_than_supported(version):
            # flinktune knows 1.13 and later: an older image is judged as the oldest version it knows
            version, source = str(SUPPORTED[0]), f"{source}, {OLDER_THAN_SUPPORTED}"
        document = replace(document, version_hint=version, version_hint_source=source)
    if document.jdk_hint is None and placement.jdk is not None:
        document = replace(document, jdk_hint=placement.jdk)
    if completeness is None and placement.completeness:
        where = placement.completeness_where
        completeness = Sourced(placement.completeness, "deployment", where.file if where else None,
                               where.line if where else None, placement.completeness_detail)
    return document, completeness
