"""What a FlinkDeployment says outside ``spec.flinkConfiguration``.

The Flink Kubernetes operator maps ``spec.taskManager.resource.memory`` onto
``taskmanager.memory.process.size`` and ``spec.job.parallelism`` onto the job's parallelism
(FlinkConfigBuilder in flink-kubernetes-operator), so both matter for network memory although
neither is a Flink option. This module only reads them; edits to ``spec`` are reported as manual
changes because the config writer edits ``spec.flinkConfiguration`` only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from yaml.nodes import MappingNode, ScalarNode

from flinktune.config.k8s import find_targets
from flinktune.config.types import ConfigDocument, ConfigFormat
from flinktune.config.yaml_config import compose_documents, mapping_get, node_line
from flinktune.errors import ConfigError, FlinktuneError
from flinktune.units import parse_int, parse_memory_size

_QUANTITY = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(Ki|Mi|Gi|Ti|k|K|M|G|T)?\s*$")
_QUANTITY_SCALE = {None: 1, "Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "Ti": 1024**4,
                   "k": 1000, "K": 1000, "M": 1000**2, "G": 1000**3, "T": 1000**4}


@dataclass(frozen=True)
class DeploymentSpec:
    taskmanager_memory_bytes: int | None = None
    taskmanager_memory_text: str | None = None
    taskmanager_memory_line: int | None = None
    parallelism: int | None = None
    parallelism_line: int | None = None


def parse_resource_memory(text: str, file: str, line: int | None) -> int:
    """Flink's MemorySize syntax first (``4096m`` = 4096 MiB, as the operator reads it), then a
    Kubernetes quantity (``4Gi``, ``4G``)."""
    try:
        return parse_memory_size(text).bytes
    except FlinktuneError:
        pass
    match = _QUANTITY.match(text)
    if match is None:
        raise ConfigError(f"spec.taskManager.resource.memory '{text}' is not a memory size", file=file,
                          line=line)
    return int(float(match.group(1)) * _QUANTITY_SCALE[match.group(2)])


def _child(node: object, *path: str) -> tuple[object, object] | None:
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


def deployment_spec(text: str, document: ConfigDocument) -> DeploymentSpec:
    """The operator-mapped values of the FlinkDeployment ``document`` was read from (``text``)."""
    if document.format is not ConfigFormat.DEPLOYMENT:
        return DeploymentSpec()
    targets = [t for t in find_targets(compose_documents(text, file=document.path))
               if t.kind != "ConfigMap" and t.name == document.name]
    if not targets or targets[0].spec_pair is None:
        return DeploymentSpec()
    spec = targets[0].spec_pair[1]
    memory_text = memory = memory_line = None
    pair = _child(spec, "taskManager", "resource", "memory")
    if pair is not None and isinstance(pair[1], ScalarNode) and pair[1].value.strip():
        memory_line = node_line(pair[1])
        memory_text = pair[1].value.strip()
        memory = parse_resource_memory(memory_text, document.path, memory_line)
    parallelism = parallelism_line = None
    pair = _child(spec, "job", "parallelism")
    if pair is not None and isinstance(pair[1], ScalarNode) and pair[1].value.strip():
        parallelism_line = node_line(pair[1])
        try:
            parallelism = parse_int(pair[1].value.strip())
        except FlinktuneError as error:
            raise ConfigError(f"spec.job.parallelism: {error.message}", file=document.path,
                              line=parallelism_line) from None
    return DeploymentSpec(memory, memory_text, memory_line, parallelism, parallelism_line)
