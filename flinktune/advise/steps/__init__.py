"""The planner's steps, one module per recommendation, in the order they run.

Each module has ``NAME`` and ``propose(plan)``: it reads the situation and the values after the steps
before it (``plan.current``) and proposes changes through ``plan.set_option`` / ``delete`` /
``rename``, each citing its evidence, or says what it would check (``plan.withhold``) and why not
(``plan.notes``). ``flinktune.advise.loop`` owns applying, rolling back and the effects. Adding a
recommendation is one module here plus its tests, and one line in ``ORDER``.

The order matters: values Flink refuses or that are absurd are reset first (nothing else can be
computed on them); the parallelism comes next, so that every later step sizes the rescaled job; the
segment size precedes the counts sized in segments; network memory comes last, sized for the buffer
settings actually recommended.
"""

from __future__ import annotations

from flinktune.advise.steps import (
    absurd_values,
    batch_shuffle,
    buffer_timeout,
    credits,
    debloat,
    legacy_buffers,
    legacy_memory,
    legacy_timeout_keys,
    network_memory,
    overdraft,
    parallelism,
    removed_keys,
    segment_for_records,
    unaligned,
)

ORDER = (
    removed_keys,
    absurd_values,
    legacy_memory,
    parallelism,
    segment_for_records,
    credits,
    batch_shuffle,
    legacy_timeout_keys,
    buffer_timeout,
    debloat,
    unaligned,
    overdraft,
    network_memory,
    legacy_buffers,
)

__all__ = ["ORDER"]
