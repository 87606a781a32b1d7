"""``--sweep KEY=V1,V2,...``: rerun a scenario with one setting varied."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from flinktune.errors import ScenarioError, UsageError
from flinktune.sim.scenario import PYTHON_VALUES, Scenario

# sweep key -> (scenario section, field); keys use the Flink option's last words
SWEEP_KEYS: dict[str, tuple[str, str]] = {
    "buffer-timeout": ("network", "buffer_timeout"),
    "buffers-per-channel": ("network", "buffers_per_channel"),
    "floating-buffers-per-gate": ("network", "floating_buffers_per_gate"),
    "segment-size": ("network", "segment_size"),
    "max-buffers-per-channel": ("network", "max_buffers_per_channel"),
    "credit-based": ("network", "credit_based"),
    "rtt": ("cluster", "rtt"),
    "bandwidth": ("cluster", "bandwidth"),
}


@dataclass(frozen=True)
class Sweep:
    key: str
    values: tuple[str, ...]


def parse_sweep(text: str) -> Sweep:
    key, sep, rest = text.partition("=")
    key = key.strip()
    if not sep or key not in SWEEP_KEYS:
        raise UsageError(f"--sweep wants KEY=V1,V2,... with KEY one of {', '.join(SWEEP_KEYS)}; got '{text}'")
    values = tuple(v.strip() for v in rest.split(",") if v.strip())
    if not values or len(values) > 50:
        raise UsageError(f"--sweep {key}: give between 1 and 50 comma-separated values")
    return Sweep(key, values)


def variant(scenario: Scenario, key: str, raw: str) -> Scenario:
    section, name = SWEEP_KEYS[key]
    data = scenario.model_dump()
    value: object = raw
    if name in ("buffers_per_channel", "floating_buffers_per_gate", "max_buffers_per_channel"):
        try:
            value = int(raw)
        except ValueError:
            raise UsageError(f"--sweep {key}: '{raw}' is not an integer") from None
    data[section][name] = value
    try:
        return Scenario.model_validate(data, context=PYTHON_VALUES)
    except ValidationError as error:
        message = str(error.errors()[0].get("msg", "invalid")).removeprefix("Value error, ")
        raise ScenarioError(f"--sweep {key}={raw}: {message}") from None
