"""``flinktune compare BEFORE AFTER``: did the change help? Two runs of one job, figure by figure,
each difference judged against the noise of both runs (docs/compare.md).

Entry points: ``run.compare(options)`` (the Spark path, both sides in one session) and
``judge.compare_runs``. Nothing is imported here: ``recommend --write`` reads ``expected.sidecar``
without the statistics and numpy behind the comparison.
"""
