"""Loading untrusted YAML and JSON documents (profiles, scenarios, project configs, rule files,
plans) so that every failure is one FlinktuneError with file and line, never a traceback."""

from __future__ import annotations

from typing import Any

from flinktune.errors import ConfigError, FlinktuneError

# PyYAML's constructors raise these on bad tagged scalars (!!int x, bare !!int, !!timestamp
# 2020-99-99, over-long integers); its composer and json's decoder recurse once per nesting level.
_CONSTRUCTOR_ERRORS = (ValueError, IndexError, TypeError, OverflowError, RecursionError)


def _problem(error: BaseException) -> str:
    if isinstance(error, RecursionError):
        return "nests too deeply"
    return str(error).split(";")[0] or "bad value"


def load_yaml(text: str, *, file: str, prefix: str = "not valid YAML",
              error: type[FlinktuneError] = ConfigError, fast: bool = False) -> Any:
    """``yaml.safe_load`` (libyaml's CSafeLoader when ``fast`` and present) with every failure as
    ``error(f"{prefix}: {problem}", file=file, line=...)``."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader) if fast else yaml.SafeLoader
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as failure:
        mark = getattr(failure, "problem_mark", None)
        problem = getattr(failure, "problem", None) or str(failure).splitlines()[0]
        raise error(f"{prefix}: {problem}", file=file,
                    line=mark.line + 1 if mark is not None else None) from None
    except _CONSTRUCTOR_ERRORS as failure:
        raise error(f"{prefix}: {_problem(failure)}", file=file) from None


def load_json(text: str, *, file: str, prefix: str = "not JSON",
              error: type[FlinktuneError] = ConfigError) -> Any:
    """``json.loads`` with every failure as ``error(f"{prefix}: {problem}", file=file, line=...)``."""
    import json

    try:
        return json.loads(text)
    except json.JSONDecodeError as failure:
        raise error(f"{prefix}: {failure.msg}", file=file, line=failure.lineno) from None
    except _CONSTRUCTOR_ERRORS as failure:  # over-long integers, absurd nesting
        raise error(f"{prefix}: {_problem(failure)}", file=file) from None
