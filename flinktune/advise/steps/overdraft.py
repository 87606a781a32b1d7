"""Overdraft buffers (1.16+, FLINK-26762) for records that span several buffers. Evidence: the
record size (measured or --record-size)."""

from __future__ import annotations

import math

from flinktune.advise.plan import Plan
from flinktune.advise.text import mem_value
from flinktune.model import buffers as mb
from flinktune.releases import BUFFERS_FIXED, OVERDRAFT_BUFFERS

NAME = "overdraft"


def propose(plan: Plan) -> None:
    job = plan.job
    if job.workload != "streaming" or job.record_bytes is None or plan.evidence.record is None:
        return
    seg = plan.current.segment_bytes
    need = math.ceil(job.record_bytes / seg)
    if BUFFERS_FIXED.applies(plan.version):
        if need > mb.FIXED_IN_2X[mb.KEY_OVERDRAFT]:
            plan.notes.append(f"Records of {job.record_bytes:.0f} B need {need} buffers each; Flink "
                              f"{plan.version} allows a fixed {mb.FIXED_IN_2X[mb.KEY_OVERDRAFT]} overdraft "
                              "buffers: a back-pressured task blocks mid-record. Larger segments help.")
        return
    if not OVERDRAFT_BUFFERS.applies(plan.version):
        return
    current = plan.current.settings.max_overdraft_per_gate
    if need > current:
        plan.set_option(mb.KEY_OVERDRAFT, str(need),
                        f"a record of {job.record_bytes:.0f} B fills {need} buffers of {mem_value(seg)}; "
                        "overdraft buffers let a back-pressured task finish writing it instead of blocking "
                        "the "
                        "mailbox", ("network_needed_bytes",), (plan.evidence.record,))
