"""``flinktune lint``: config files + rules -> findings, with the CI features around it."""

from __future__ import annotations

from flinktune.lint.model import FileVersion, InputProblem, LintOptions, LintResult, RuleInfo
from flinktune.lint.runner import lint_paths, load_ruleset

__all__ = [
    "FileVersion",
    "InputProblem",
    "LintOptions",
    "LintResult",
    "RuleInfo",
    "lint_paths",
    "load_ruleset",
]
