"""Records larger than a buffer (streaming): pipelined writers block on a record that spans buffers
when back-pressured; blocking shuffles spill whole buffers and do not care. Evidence: the record size
(measured or --record-size)."""

from __future__ import annotations

from flinktune.advise.limits import MAX_SEGMENT
from flinktune.advise.plan import Plan
from flinktune.advise.state import KEY_SEGMENT
from flinktune.advise.text import mem_value, next_pow2

NAME = "segment-for-records"


def propose(plan: Plan) -> None:
    job = plan.job
    seg = plan.current.segment_bytes
    if job.workload != "streaming" or job.record_bytes is None or job.record_bytes <= seg:
        return
    if plan.evidence.record is None:
        return
    new_seg = min(MAX_SEGMENT, next_pow2(job.record_bytes))
    if new_seg <= seg:
        return
    plan.set_option(KEY_SEGMENT, mem_value(new_seg),
                    f"records of {job.record_bytes:.0f} B are larger than a {mem_value(seg)} buffer: each "
                    "spans "
                    "several buffers (and needs overdraft buffers when back-pressured)",
                    ("channel_ceiling_bytes_per_s", "added_latency_s", "gate_inflight_bytes",
                     "network_needed_bytes"), (plan.evidence.record,))
