"""What ``recommend`` predicted, next to what the AFTER run measured (``compare --expected``).

The recommendation's JSON (``recommend --format json``, or the ``FILE.recommendation.json`` that
``recommend --write`` leaves beside the config FILE) carries the predicted checkpoint-barrier wait
over the whole back-pressured path, before and after the changes, and each change's model effects
(in-flight bytes per gate, added latency, credit ceiling, memory). A metrics dump measures the
checkpoint duration, so the barrier wait is checked against it with the rule docs/recommend.md
("Predictions") states: with debloating within a factor of 3 of the real checkpoint, with full
default buffers a lower bound. Effects a dump does not measure are listed as such.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:   # recommend --write reads sidecar() without numpy behind the values
    from flinktune.compare.value import FigureChange, Prediction
from flinktune.errors import UsageError

# docs/recommend.md, "Predictions": with debloating the predicted barrier wait is within this
# factor of the measured checkpoint (measured 1.0x on real Flink; the docs allow 3x).
PREDICTION_FACTOR = 3.0
SIDECAR_SUFFIX = ".recommendation.json"


def sidecar(config: Path) -> Path:
    """Where ``recommend --write`` leaves the recommendation it applied to ``config``."""
    return config.with_name(config.name + SIDECAR_SUFFIX)
DEBLOAT_KEY = "taskmanager.network.memory.buffer-debloat.enabled"

# Model effects (advise/state.METRICS) that a metrics dump does not measure, and why.
_UNMEASURED: dict[str, str] = {
    "gate_inflight_bytes": "the dump has no in-flight bytes per gate",
    "drain_time_s": "a single gate's drain; the checkpoint measures the whole path (barrier wait above)",
    "added_latency_s": "the dump has no latency measurement",
    "channel_ceiling_bytes_per_s": "a model bound, not a runtime figure",
    "channel_throughput_bytes_per_s": "the dump has no per-channel throughput",
    "network_needed_bytes": "a configuration figure (Flink checks it at start-up)",
    "network_target_bytes": "a configuration figure",
    "network_available_bytes": "a configuration figure",
    "task_heap_bytes": "a configuration figure",
}


def read_expected(path: str | Path) -> dict[str, Any]:
    """The first recommendation of a ``recommend --format json`` document (with or without the
    envelope). ``path`` may also be the config file ``recommend --write`` wrote: the sidecar beside
    it is read."""
    from flinktune.config.safe_load import load_json

    p = Path(path)
    if p.suffix.lower() != ".json":
        if not sidecar(p).is_file():
            raise UsageError(f"--expected {p}: no recommendation beside it ({sidecar(p).name}: "
                             "`flinktune recommend --write` leaves it); give recommend's JSON instead")
        p = sidecar(p)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(
            f"--expected: cannot read {p}: {getattr(error, 'strerror', None) or error}"
        ) from None
    doc = load_json(
        text, file=str(p), prefix="--expected is not a recommendation (not JSON)", error=UsageError
    )
    recs = doc.get("recommendations") if isinstance(doc, Mapping) else None
    if not isinstance(recs, list) or not recs or not isinstance(recs[0], Mapping):
        raise UsageError(
            '--expected is not a recommendation: no "recommendations" list '
            "(give the output of `flinktune recommend --format json`)",
            file=str(p),
        )
    return dict(recs[0])


def _number(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def _debloat_after(rec: Mapping[str, Any]) -> bool:
    for change in rec.get("changes") or []:
        if isinstance(change, Mapping) and (change.get("new_key") or change.get("key")) == DEBLOAT_KEY:
            return str(change.get("recommended", "")).lower() == "true"
    return False


def predictions(rec: Mapping[str, Any], job: tuple[FigureChange, ...]) -> tuple[Prediction, ...]:
    """Each predicted effect of ``rec`` next to the measured job figures."""
    from flinktune.compare.value import Prediction

    out: list[Prediction] = []
    checkpoint = next((c for c in job if c.figure.name == "checkpoint_duration"), None)
    wait = rec.get("barrier_wait_s") if isinstance(rec.get("barrier_wait_s"), Mapping) else {}
    before, after = _number(wait.get("before")), _number(wait.get("after"))
    if before is not None or after is not None:
        measured_b = checkpoint.before if checkpoint else None
        measured_a = checkpoint.after if checkpoint else None
        debloat = _debloat_after(rec)
        rule = (
            f"with debloating within {PREDICTION_FACTOR:g}x of the measured checkpoint"
            if debloat
            else "with full default buffers a lower bound of the measured checkpoint"
        ) + " (docs/recommend.md)"
        predicted = after if after is not None else before
        if measured_a is None or predicted is None:
            verdict = "not measured (no checkpoint statistics in AFTER)"
        elif debloat:
            ratio = max(predicted, measured_a) / max(min(predicted, measured_a), 1e-9)
            verdict = (
                f"within {PREDICTION_FACTOR:g}x ({ratio:.2g}x)"
                if ratio <= PREDICTION_FACTOR
                else f"off by {ratio:.2g}x (more than {PREDICTION_FACTOR:g}x)"
            )
        else:
            verdict = "lower bound holds" if predicted <= measured_a else "above the measured checkpoint"
        out.append(
            Prediction(
                "barrier_wait_s",
                "checkpoint barrier wait (whole path) vs checkpoint duration",
                "s",
                before,
                after,
                measured_b,
                measured_a,
                verdict,
                rule,
            )
        )
    seen = set()
    for change in rec.get("changes") or []:
        if not isinstance(change, Mapping):
            continue
        for effect in change.get("effects") or []:
            if not isinstance(effect, Mapping) or effect.get("name") in seen:
                continue
            name = str(effect.get("name"))
            seen.add(name)
            out.append(
                Prediction(
                    name,
                    str(effect.get("label", name)),
                    str(effect.get("unit", "")),
                    _number(effect.get("before")),
                    _number(effect.get("after")),
                    None,
                    None,
                    "not measured",
                    _UNMEASURED.get(name, "the dump does not measure it"),
                )
            )
    return tuple(out)
