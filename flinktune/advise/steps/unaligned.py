"""Unaligned checkpoints (1.11+): the other lever for slow checkpoints under back pressure. Offered as
a note with its cost, not written: barriers overtake in-flight data, so checkpoint time stops
depending on the drain, but the in-flight data is stored in every checkpoint and replayed on recovery
(CheckpointingOptions: ``execution.checkpointing.unaligned.enabled`` from 1.19/1.20,
``execution.checkpointing.unaligned`` before; exactly-once mode only, one concurrent checkpoint)."""

from __future__ import annotations

from flinktune.advise.plan import Plan
from flinktune.advise.predict import barrier_wait_s, exchange_bytes
from flinktune.advise.state import DEBLOAT_DEFAULT_TARGET_S
from flinktune.advise.text import size_text

NAME = "unaligned-checkpoints"
KEYS = ("execution.checkpointing.unaligned.enabled", "execution.checkpointing.unaligned")


def propose(plan: Plan) -> None:
    m = plan.measured
    if plan.job.workload != "streaming" or m is None or m.backpressured_exchanges == 0:
        return
    state = plan.current
    if any(state.exists(k) and state.eff.boolean(k) for k in KEYS):
        return
    chain = m.backpressured_exchanges
    wait = barrier_wait_s(state, chain, m.buffer_fill or 1.0)
    if wait is None or wait <= DEBLOAT_DEFAULT_TARGET_S:
        return
    key = next((k for k in KEYS if plan.exists(k)), KEYS[-1])
    stored = (exchange_bytes(state, m.buffer_fill or 1.0) or 0.0) * chain * plan.job.parallelism
    plan.notes.append(
        f"Checkpoints under back pressure: an aligned barrier is predicted to wait about {wait:.3g} s behind "
        f"in-flight data (after the changes above) over {chain} back-pressured exchange(s). Unaligned "
        f"checkpoints ({key}: true) let barriers overtake it, so checkpoint time stops depending on back "
        f"pressure; the cost: up to {size_text(stored)} of in-flight data stored with every checkpoint and "
        "replayed on recovery, exactly-once mode only. Not written: a choice about checkpoint size and "
        "recovery time.")
