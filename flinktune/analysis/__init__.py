"""Offline analysis of Flink metric dumps on Spark: where back pressure starts, and why.

The only package that imports pyspark (lazily, inside functions). Entry points:
``analyze(options, master=..., conf=...)`` and ``run_analysis(session, options)``.
"""

from __future__ import annotations

from flinktune.analysis.diagnose import JobDiagnosis, Origin
from flinktune.analysis.job import AnalysisOptions, AnalysisResult, analyze, run_analysis

__all__ = [
    "AnalysisOptions",
    "AnalysisResult",
    "JobDiagnosis",
    "Origin",
    "analyze",
    "run_analysis",
]
