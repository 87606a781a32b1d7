"""The pre-1.10 heap keys, mapped the way Flink maps them at start-up (1.10 .. 1.20; removed in 2.0).

``MemoryBackwardsCompatibilityUtils.getConfWithLegacyHeapSizeMappedToNewConfigOption``
(flink-runtime ``util/config/memory``): when the new option is not set, the legacy heap value is
written into it: ``FLINK_TM_HEAP`` / ``FLINK_JM_HEAP`` (environment, unknown here), else
``taskmanager.heap.size`` / ``jobmanager.heap.size`` (a MemorySize), else ``.heap.mb`` (an integer
of MiB; a negative one fails with "Configured total process memory size (<n>MB) must not be less
than 0."). Which new option receives it depends on how the process is started:
- standalone (``config.sh`` -> ``BashJavaUtils``): TaskManager -> ``taskmanager.memory.flink.size``
  (``getConfigurationForStandaloneTaskManagers`` / ``getTmResourceParams``), JobManager ->
  ``jobmanager.memory.heap.size`` (``getJmResourceParams``);
- active Kubernetes / YARN (``getClusterSpecification``, ``ActiveResourceManagerFactory``,
  ``YarnClusterDescriptor``): both -> ``*.memory.process.size``.
"""

from __future__ import annotations

from flinktune.config.types import ConfigDocument, ConfigEntry
from flinktune.releases import LEGACY_OPTIONS_REMOVED
from flinktune.versions import FlinkVersion

# role -> (size key, mb key, target when standalone, target when containerized)
LEGACY_HEAP: dict[str, tuple[str, str, str, str]] = {
    "taskmanager": ("taskmanager.heap.size", "taskmanager.heap.mb", "taskmanager.memory.flink.size",
                    "taskmanager.memory.process.size"),
    "jobmanager": ("jobmanager.heap.size", "jobmanager.heap.mb", "jobmanager.memory.heap.size",
                   "jobmanager.memory.process.size"),
}


def legacy_heap_target(role: str, deployment: str) -> str:
    _size, _mb, standalone, containerized = LEGACY_HEAP[role]
    return standalone if deployment == "standalone" else containerized


def legacy_heap_entries(document: ConfigDocument, version: FlinkVersion, deployment: str,
                        is_set: object) -> tuple[tuple[ConfigEntry, ...], tuple[str, ...]]:
    """Entries Flink would add for the legacy heap keys of ``document`` and what it would log.

    ``is_set(key)`` says whether the configuration (with the operator's fields folded in) already
    sets the new option, in which case Flink ignores the legacy key.
    """
    if LEGACY_OPTIONS_REMOVED.applies(version):
        return (), ()
    entries: list[ConfigEntry] = []
    notes: list[str] = []
    for role in LEGACY_HEAP:
        size_key, mb_key, _s, _c = LEGACY_HEAP[role]
        target = legacy_heap_target(role, deployment)
        legacy = document.get(size_key) or document.get(mb_key)
        if legacy is None or is_set(target):  # type: ignore[operator]
            continue
        if legacy.key == mb_key:
            raw = str(legacy.value).strip() if legacy.value is not None else ""
            value: object = f"{raw}m" if raw.lstrip("+").isdigit() else raw
        else:
            value = legacy.value
        entries.append(ConfigEntry(target, value, legacy.raw, legacy.file, legacy.line))  # type: ignore[arg-type]
        notes.append(f"{legacy.key} ({legacy.raw}) is read as {target}, as Flink {version} maps it for a "
                     f"{deployment} deployment")
    return tuple(entries), tuple(notes)
