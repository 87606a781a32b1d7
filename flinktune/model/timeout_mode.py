"""What the buffer-timeout settings mean, per Flink version (numpy-free, for rules and the CLI).

- Up to 1.17: ``execution.buffer-timeout`` (Duration, default 100 ms). ``0`` flushes after every
  record. ``-1`` (flush only when full) exists only through ``env.setBufferTimeout(-1)``: a config file
  cannot say it, because Flink rejects negative durations (TimeUtils). ExecutionOptions @1.13..1.17.
- From 1.18 (FLINK-32023): ``execution.buffer-timeout.enabled`` (default true; false = flush only when
  the buffer is full) and ``execution.buffer-timeout.interval`` (default 100 ms, the old key is its
  deprecated alias); an interval of 0 still flushes after every record. ExecutionOptions @1.18..2.0.
- BATCH runtime mode, every version: no buffer timeout, whatever the file says. StreamGraphGenerator's
  BATCH branch calls ``setDefaultBufferTimeout(-1)`` up to 1.17 (read at release-1.16.0) and sets
  ``execution.buffer-timeout.enabled`` to false from 1.18 (read at release-1.20).
"""

from __future__ import annotations

from dataclasses import dataclass

from flinktune.errors import ModelInputError
from flinktune.releases import BUFFER_TIMEOUT_SWITCH
from flinktune.versions import FlinkVersion

DEFAULT_TIMEOUT_S = 0.1


@dataclass(frozen=True)
class BufferTimeoutMode:
    kind: str                 # interval | every-record | when-full
    interval_s: float | None  # the flusher period for "interval"
    explanation: str

    @property
    def effective_timeout_s(self) -> float:
        """As the model's timeout input: 0 = every record, inf = only when full."""
        if self.kind == "every-record":
            return 0.0
        if self.kind == "when-full":
            return float("inf")
        assert self.interval_s is not None
        return self.interval_s


def buffer_timeout_mode(version: FlinkVersion, *, interval_s: float | None = None,
                        enabled: bool | None = None, batch_runtime: bool = False) -> BufferTimeoutMode:
    """The flushing behaviour for the options a configuration sets (None = not set)."""
    if interval_s is not None and (interval_s != interval_s or interval_s < 0):
        raise ModelInputError(f"buffer timeout must be a non-negative duration, got {interval_s} s "
                              "(Flink rejects negative durations in configuration files)")
    if batch_runtime:
        # StreamGraphGenerator.configureStreamGraph, BATCH branch: setDefaultBufferTimeout(-1) up to 1.17,
        # configuration.set(BUFFER_TIMEOUT_ENABLED, false) from 1.18; the file's timeout is not used.
        how = ("execution.buffer-timeout.enabled=false" if BUFFER_TIMEOUT_SWITCH.applies(version)
               else "the default buffer timeout to -1")
        return BufferTimeoutMode("when-full", None, "BATCH: no buffer timeout (flushes when a buffer is full "
                                 f"or the input ends); Flink {version} sets {how} for a BATCH job, whatever "
                                 "the file says")
    if not BUFFER_TIMEOUT_SWITCH.applies(version):
        if enabled is not None:
            raise ModelInputError(f"execution.buffer-timeout.enabled does not exist in Flink {version} "
                                  "(added in 1.18); flushing only when full needs env.setBufferTimeout(-1) "
                                  "in code")
        key = "execution.buffer-timeout"
    else:
        key = "execution.buffer-timeout.interval"
        if enabled is False:
            return BufferTimeoutMode("when-full", None, "execution.buffer-timeout.enabled=false: buffers "
                                     "leave only when full (or on an event such as a checkpoint barrier)")
    interval = DEFAULT_TIMEOUT_S if interval_s is None else interval_s
    if interval == 0:
        return BufferTimeoutMode("every-record", 0.0, f"{key}=0: the writer flushes after every record")
    return BufferTimeoutMode("interval", interval, f"{key}={interval * 1000:g} ms: the output flusher sends "
                             "partly filled buffers at this period; full buffers leave at once")
