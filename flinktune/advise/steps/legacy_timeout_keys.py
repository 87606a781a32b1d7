"""Buffer-timeout keys the version does not read yet: ``execution.buffer-timeout.interval`` /
``.enabled`` came with 1.18 (FLINK-32023, ExecutionOptions); the catalog also lists them for late
1.16 / 1.17 patch releases (a backport), so only versions without them lose them."""

from __future__ import annotations

from flinktune.advise.plan import Plan
from flinktune.advise.state import KEY_TIMEOUT_ENABLED, KEY_TIMEOUT_INTERVAL, KEY_TIMEOUT_OLD
from flinktune.change import Applicability
from flinktune.releases import BUFFER_TIMEOUT_SWITCH

NAME = "timeout-keys"


def propose(plan: Plan) -> None:
    if BUFFER_TIMEOUT_SWITCH.applies(plan.version) or plan.exists(KEY_TIMEOUT_INTERVAL):
        return
    if KEY_TIMEOUT_ENABLED in plan.values:
        plan.delete(KEY_TIMEOUT_ENABLED, f"added in 1.18: Flink {plan.version} ignores it (only "
                    "env.setBufferTimeout(-1) in code flushes only when full)",
                    applicability=Applicability.SAFE)
    if KEY_TIMEOUT_INTERVAL in plan.values and KEY_TIMEOUT_OLD not in plan.values:
        plan.rename(KEY_TIMEOUT_INTERVAL, KEY_TIMEOUT_OLD,
                    f"added in 1.18: Flink {plan.version} reads execution.buffer-timeout",
                    ("added_latency_s",))
