"""``taskmanager.network.numberOfBuffers`` next to fraction/min/max: Flink ignores it and logs
'Ignoring old (but still present) network buffer configuration' (NettyShuffleEnvironmentConfiguration)."""

from __future__ import annotations

from flinktune.advise.plan import Plan
from flinktune.advise.state import KEY_LEGACY_BUFFERS, KEY_NET_FRACTION, KEY_NET_MAX, KEY_NET_MIN
from flinktune.change import Applicability
from flinktune.releases import LEGACY_OPTIONS_REMOVED

NAME = "legacy-buffers"


def propose(plan: Plan) -> None:
    if KEY_LEGACY_BUFFERS not in plan.values or LEGACY_OPTIONS_REMOVED.applies(plan.version):
        return
    if any(plan.current.is_set(k) for k in (KEY_NET_MIN, KEY_NET_MAX, KEY_NET_FRACTION)):
        plan.delete(KEY_LEGACY_BUFFERS, "ignored: network memory fraction/min/max are set, so Flink logs "
                    "'Ignoring old (but still present) network buffer configuration'; the key is deprecated "
                    "and "
                    "gone in 2.0", applicability=Applicability.SAFE)
