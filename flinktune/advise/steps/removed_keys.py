"""Network keys the target version no longer reads: delete them and say what replaced them."""

from __future__ import annotations

from flinktune.advise.plan import Plan
from flinktune.change import Applicability
from flinktune.model import buffers as mb

NAME = "removed-keys"

# Network-stack keys this advisor owns.
OWNED_PREFIXES = ("taskmanager.network.", "taskmanager.memory.segment-size", "taskmanager.memory.network.",
                  "execution.buffer-timeout", "taskmanager.net.")


def propose(plan: Plan) -> None:
    for key in list(plan.values):
        if not key.startswith(OWNED_PREFIXES):
            continue
        status = plan.catalog.lookup(key, plan.version)
        if status.kind != "removed":
            continue
        fixed = mb.FIXED_IN_2X.get(key)
        if fixed is not None:
            what = (f"Flink {plan.version} hard-codes it to {fixed}, so the line only misleads; the levers "
                    "that remain are network memory, segment size, buffer timeout and buffer debloating")
        else:
            what = f"Flink {plan.version} ignores it, so the line only misleads"
        plan.delete(key, f"removed in Flink {status.removed_in or '2.0'}: {what}",
                    applicability=Applicability.SAFE)
