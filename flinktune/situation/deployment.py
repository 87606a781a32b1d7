"""What a FlinkDeployment says outside ``spec.flinkConfiguration``, and where the operator folds it.

The Flink Kubernetes operator builds the configuration it deploys in ``FlinkConfigBuilder``
(flink-kubernetes-operator, ``config/FlinkConfigBuilder.java``): ``spec.flinkConfiguration`` first,
then ``applyJobManagerSpec`` / ``applyTaskManagerSpec`` set ``jobmanager.memory.process.size`` /
``taskmanager.memory.process.size`` from ``spec.{jobManager,taskManager}.resource.memory``
(``setResource``: these win over the same keys in ``flinkConfiguration``), and
``applyJobOrSessionSpec`` sets ``parallelism.default`` from ``spec.job.parallelism`` when it is above 0.
``spec.taskManager.replicas`` sets the TaskManager count only in standalone mode; in native mode the
JobManager's resource manager starts ceil(parallelism / slots) TaskManagers itself.
Edits to ``spec`` are reported as manual changes: the config writer edits ``flinkConfiguration``.
"""

from __future__ import annotations

import re

from flinktune.config.types import ConfigDocument, ConfigFormat
from flinktune.errors import ConfigError, FlinktuneError
from flinktune.record import Record, set_field
from flinktune.units import parse_int, parse_memory_size

_QUANTITY = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(Ki|Mi|Gi|Ti|k|K|M|G|T)?\s*$")
_QUANTITY_SCALE = {None: 1, "Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "Ti": 1024**4,
                   "k": 1000, "K": 1000, "M": 1000**2, "G": 1000**3, "T": 1000**4}


class DeploymentSpec(Record):
    """The operator-mapped fields of one FlinkDeployment (None where the spec does not set them).

    A ``Record`` (a frozen value without a dataclass's import-time cost: lint imports this)."""

    __slots__ = _fields = ("taskmanager_memory_bytes", "taskmanager_memory_text",
                           "taskmanager_memory_line", "parallelism", "parallelism_line",
                           "jobmanager_memory_bytes", "jobmanager_memory_text",
                           "jobmanager_memory_line", "taskmanager_replicas",
                           "taskmanager_replicas_line", "kind", "mode", "has_job", "upgrade_mode",
                           "upgrade_mode_line")
    taskmanager_memory_bytes: int | None
    taskmanager_memory_text: str | None
    taskmanager_memory_line: int | None
    parallelism: int | None
    parallelism_line: int | None
    jobmanager_memory_bytes: int | None
    jobmanager_memory_text: str | None
    jobmanager_memory_line: int | None
    taskmanager_replicas: int | None
    taskmanager_replicas_line: int | None
    kind: str | None  # FlinkDeployment | FlinkSessionJob | ConfigMap
    mode: str | None  # spec.mode: native (default) | standalone
    has_job: bool  # spec.job present (application mode)
    upgrade_mode: str | None  # spec.job.upgradeMode: stateless | savepoint | last-state
    upgrade_mode_line: int | None

    def __init__(self, taskmanager_memory_bytes: int | None = None,
                 taskmanager_memory_text: str | None = None,
                 taskmanager_memory_line: int | None = None,
                 parallelism: int | None = None,
                 parallelism_line: int | None = None,
                 jobmanager_memory_bytes: int | None = None,
                 jobmanager_memory_text: str | None = None,
                 jobmanager_memory_line: int | None = None,
                 taskmanager_replicas: int | None = None,
                 taskmanager_replicas_line: int | None = None,
                 kind: str | None = None,
                 mode: str | None = None,
                 has_job: bool = False,
                 upgrade_mode: str | None = None,
                 upgrade_mode_line: int | None = None) -> None:
        set_field(self, "taskmanager_memory_bytes", taskmanager_memory_bytes)
        set_field(self, "taskmanager_memory_text", taskmanager_memory_text)
        set_field(self, "taskmanager_memory_line", taskmanager_memory_line)
        set_field(self, "parallelism", parallelism)
        set_field(self, "parallelism_line", parallelism_line)
        set_field(self, "jobmanager_memory_bytes", jobmanager_memory_bytes)
        set_field(self, "jobmanager_memory_text", jobmanager_memory_text)
        set_field(self, "jobmanager_memory_line", jobmanager_memory_line)
        set_field(self, "taskmanager_replicas", taskmanager_replicas)
        set_field(self, "taskmanager_replicas_line", taskmanager_replicas_line)
        set_field(self, "kind", kind)
        set_field(self, "mode", mode)
        set_field(self, "has_job", has_job)
        set_field(self, "upgrade_mode", upgrade_mode)
        set_field(self, "upgrade_mode_line", upgrade_mode_line)


def parse_resource_memory(text: str, file: str, line: int | None,
                          field: str = "spec.taskManager.resource.memory") -> int:
    """Flink's MemorySize syntax first (``4096m`` = 4096 MiB, as the operator reads it), then a
    Kubernetes quantity (``4Gi``, ``4G``)."""
    try:
        return parse_memory_size(text).bytes
    except FlinktuneError:
        pass
    match = _QUANTITY.match(text)
    if match is None:
        raise ConfigError(f"{field} '{text}' is not a memory size", file=file, line=line)
    return int(float(match.group(1)) * _QUANTITY_SCALE[match.group(2)])


def _child(node: object, *path: str) -> tuple[object, object] | None:
    from yaml.nodes import MappingNode

    from flinktune.config.yaml_config import mapping_get

    pair: tuple[object, object] | None = None
    current = node
    for key in path:
        if not isinstance(current, MappingNode):
            return None
        pair = mapping_get(current, key)
        if pair is None:
            return None
        current = pair[1]
    return pair


def _scalar(spec: object, *path: str) -> tuple[str, int] | None:
    from yaml.nodes import ScalarNode

    from flinktune.config.yaml_config import node_line

    pair = _child(spec, *path)
    if pair is None or not isinstance(pair[1], ScalarNode) or not pair[1].value.strip():
        return None
    return pair[1].value.strip(), node_line(pair[1])


def deployment_spec(text: str, document: ConfigDocument) -> DeploymentSpec:
    """The operator-mapped values of the FlinkDeployment ``document`` was read from (``text``)."""
    if document.format not in (ConfigFormat.DEPLOYMENT, ConfigFormat.CONFIGMAP):
        return DeploymentSpec()
    from flinktune.config.k8s import manifest_targets

    targets = [t for t in manifest_targets(text, document.path) if t.name == document.name
               and t.format == document.format]
    if not targets:
        return DeploymentSpec()
    target = targets[0]
    if target.spec_pair is None:
        return DeploymentSpec(kind=target.kind)
    spec = target.spec_pair[1]
    path = document.path
    found: dict[str, object] = {"kind": target.kind, "has_job": _child(spec, "job") is not None}
    mode = _scalar(spec, "mode")
    found["mode"] = mode[0].lower() if mode else None
    upgrade = _scalar(spec, "job", "upgradeMode")
    if upgrade is not None:
        found["upgrade_mode"], found["upgrade_mode_line"] = upgrade[0].lower(), upgrade[1]
    for prefix, role in (("taskmanager", "taskManager"), ("jobmanager", "jobManager")):
        memory = _scalar(spec, role, "resource", "memory")
        if memory is not None:
            text_value, line = memory
            found[f"{prefix}_memory_text"] = text_value
            found[f"{prefix}_memory_line"] = line
            found[f"{prefix}_memory_bytes"] = parse_resource_memory(text_value, path, line,
                                                                    f"spec.{role}.resource.memory")
    for field, fields in (("parallelism", ("job", "parallelism")),
                          ("taskmanager_replicas", ("taskManager", "replicas"))):
        value = _scalar(spec, *fields)
        if value is None:
            continue
        try:
            number = parse_int(value[0])
        except FlinktuneError as error:
            raise ConfigError(f"spec.{'.'.join(fields)}: {error.message}", file=path, line=value[1]) from None
        if number > 0:   # the operator ignores 0 and below (FlinkConfigBuilder: "> 0")
            found[field] = number
            found[f"{field}_line"] = value[1]
    return DeploymentSpec(**found)  # type: ignore[arg-type]
