"""Pre-1.10 heap keys (``taskmanager.heap.size`` / ``.mb``): Flink 1.x still accepts and maps them
(ConfigState.legacy_heap has the mapping), so they are renamed to the key they map to, both
spellings consistently; they are removed in 2.0 (removed-keys deletes them there)."""

from __future__ import annotations

from flinktune.advise.plan import Plan
from flinktune.advise.state import LEGACY_HEAP_KEYS, legacy_heap
from flinktune.change import Applicability
from flinktune.releases import LEGACY_OPTIONS_REMOVED

NAME = "legacy-memory"


def propose(plan: Plan) -> None:
    present = [k for k in LEGACY_HEAP_KEYS if k in plan.values]
    if LEGACY_OPTIONS_REMOVED.applies(plan.version) or not present:
        return
    mapped = legacy_heap({**plan.values, **plan.overlay}, plan.version, plan.job.deployment)
    target = mapped[1] if mapped is not None else "the new memory size"
    why_map = (f"deprecated since 1.10 and removed in 2.0; Flink {plan.version} still accepts it and maps it "
               f"to {target} for a {plan.job.deployment} deployment (flinktune.situation.legacy)")
    metrics = ("network_available_bytes", "task_heap_bytes")
    if mapped is None:
        for key in present:
            plan.delete(key, "ignored: a newer memory size is set, which Flink uses instead (the legacy "
                        "key is only mapped when no size is set); " + why_map.split(";")[0],
                        applicability=Applicability.SAFE)
        return
    used, key, size = mapped
    plan.rename(used, key, why_map + ("" if used.endswith(".size") else " (the .mb key is in MiB)"),
                metrics, value=size, applicability=Applicability.SAFE)
    for key in present:
        if key != used:
            plan.delete(key, f"ignored: {used} is read first; " + why_map.split(";")[0],
                        applicability=Applicability.SAFE)
