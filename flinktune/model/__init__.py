"""The analytic model of Flink's network stack: pure functions over frozen values.

This package marker imports nothing on purpose: the lint path imports ``flinktune.model.memory``
and ``flinktune.model.buffers``, which must stay free of numpy. Only the vectorised modules
(``credit``, ``timeout``, ``inflight``, ``sweep``) import numpy, and only for themselves.
"""
