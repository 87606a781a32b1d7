"""``flinktune model``'s report (a ``flinktune.model.what_if.ModelResult``) as text (a rich table, no
colour; a sweep adds a plain-text bar chart) or JSON (one type per field), and the value formatting
the model's other reports share (``format_quantity``)."""

from __future__ import annotations

from typing import Any

from flinktune.model.what_if import ModelResult

_DEFAULT_COLUMNS = ("channel_throughput", "credit_ceiling", "nic_fair_share", "fill_ratio",
                    "added_latency_mean", "buffers_required_per_taskmanager", "fits")


def render_model_text(result: ModelResult, verbose: bool = False, color: bool = False) -> str:
    """The text report; ``verbose`` adds where every input came from, ``color`` bold table headers."""
    text = _render_text(result.version, result.values, result.sources, list(result.notes), result.quantities,
                        result.swept, result.chart, result.show, list(result.origins) if verbose else None,
                        color)
    if result.parallelism is None:
        return text
    return text + "".join(line + "\n" for line in parallelism_lines(result.parallelism))


def render_model_json(result: ModelResult) -> str:
    text = _render_json(result.version, result.values, result.sources, list(result.notes), result.quantities,
                        result.swept)
    if result.parallelism is None:
        return text
    import json

    doc = json.loads(text)
    doc["parallelism"] = result.parallelism.as_dict()
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def parallelism_lines(scaling: Any) -> list[str]:
    """The parallelism what-if (model.scaling.WhatIf) in a few lines."""
    s = scaling.scaling
    keyed = f", keyed over {scaling.max_parallelism} key groups" if scaling.keyed else ""
    out = [f"parallelism what-if: {scaling.target_in_per_s:,.0f} records/s at "
           f"{scaling.capacity_per_subtask:,.4g} per busy second and subtask, at most "
           f"{scaling.utilization:.0%} busy{keyed}:"]
    if scaling.parallelism is not None:
        keep = "cannot keep up" if (scaling.busiest or 0) > 1 else "keeps up"
        out.append(f"  at parallelism {scaling.parallelism}: subtasks busy {scaling.busy:.0%} on average, "
                   f"the busiest {scaling.busiest:.0%} ({keep})")
    at_needed = (f"; at {s.needed} subtasks about {s.predicted_busy:.0%} busy"
                 if s.needed and s.predicted_busy is not None and s.verdict != "capped" else "")
    out.append(f"  {s.verdict}: {s.reason}{at_needed}")
    return out


def format_quantity(value: Any, unit: str) -> str:
    """A model quantity as the reports show it: units.readable, plus the model's own kinds of value
    (yes/no, text, an infinite buffer timeout is "off", a factor is "1.5x")."""
    import math

    import numpy as np

    from flinktune.units import readable

    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    v = float(value)
    if math.isinf(v) and v > 0 and unit == "s":
        return "off"
    if unit == "x" and math.isfinite(v):
        return f"{v:.3g}x"
    return readable(v, unit)


def scalar(value: Any) -> Any:
    import numpy as np

    array = np.asarray(value)
    return array.item() if array.ndim == 0 else value


def _render_text(version: Any, values: dict[str, Any], sources: dict[str, str], notes: list[str],
                 quantities: dict[str, Any], swept: tuple[str, Any] | None, chart: str,
                 show: str | None, origins: list[str] | None = None, color: bool = False) -> str:
    import io

    import numpy as np
    from rich.console import Console
    from rich.table import Table

    from flinktune.model.sweep import PARAM_BY_NAME

    buffer = io.StringIO()
    console = Console(file=buffer, width=120, color_system="standard" if color else None,
                      force_terminal=color, highlight=False)
    console.print(f"flinktune model  (Flink {version})")
    # "; " between inputs: a count has thousands separators (parallelism=9,999).
    inputs = "; ".join(f"{name}={format_quantity(scalar(v), PARAM_BY_NAME[name].unit)}"
                       for name, v in values.items()
                       if np.ndim(v) == 0)
    if inputs:
        console.print(f"inputs: {inputs}")
    if origins:
        console.print("sources:")
        for origin in origins:
            console.print(f"  {origin}")
    for note in notes:
        console.print(f"note: {note}")
    if swept is None:
        table = Table(show_header=True, header_style="bold")
        table.add_column("section")
        table.add_column("quantity")
        table.add_column("value", justify="right")
        table.add_column("formula")
        for q in quantities.values():
            table.add_row(q.section, q.name, format_quantity(scalar(q.value), q.unit), q.formula)
        console.print(table)
        return buffer.getvalue()
    name, points = swept
    columns = _columns(quantities, show, chart)
    param_unit = PARAM_BY_NAME[name].unit
    table = Table(show_header=True, header_style="bold")
    table.add_column(name, justify="right", overflow="fold")
    for column in columns:
        unit = quantities[column].unit
        table.add_column(f"{column}" + (f" [{unit}]" if unit else ""), justify="right", overflow="fold")
    size = len(points)
    broadcast = {c: np.broadcast_to(np.asarray(quantities[c].value), (size,)) for c in {*columns, chart}}
    limit = 200
    for i in range(min(size, limit)):
        cells = (format_quantity(broadcast[c][i], quantities[c].unit) for c in columns)
        table.add_row(format_quantity(points[i], param_unit), *cells)
    console.print(table)
    if size > limit:
        console.print(f"... {size - limit} more rows (use --format json for all)")
    console.print(f"\n{chart} ({quantities[chart].formula}) against {name}:")
    console.print(_bar_chart([format_quantity(points[i], param_unit) for i in range(min(size, limit))],
                             broadcast[chart][:limit], quantities[chart].unit))
    return buffer.getvalue()


def sweep_columns(result: ModelResult) -> list[str]:
    """The quantities a sweep shows as columns (``--show``, else a default set), checked."""
    return _columns(result.quantities, result.show, result.chart)


def _columns(quantities: dict[str, Any], show: str | None, chart: str) -> list[str]:
    from flinktune.errors import UsageError

    columns = [c.strip() for c in show.split(",")] if show else list(_DEFAULT_COLUMNS)
    unknown = [c for c in [*columns, chart] if c not in quantities]
    if unknown:
        raise UsageError(f"unknown quantity {', '.join(unknown)} (one of {', '.join(quantities)})")
    return columns


def _bar_chart(labels: list[str], values: Any, unit: str, width: int = 50) -> str:
    """Plain-text horizontal bars (no colour), one line per point, scaled to the largest finite value."""
    import numpy as np

    numeric = np.asarray(values, dtype=np.float64)
    finite = numeric[np.isfinite(numeric)]
    top = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    label_width = max((len(label) for label in labels), default=0)
    lines = []
    for label, value in zip(labels, numeric, strict=True):
        if not np.isfinite(value):
            bar = "~" * width
        else:
            eighths = round(max(float(value), 0.0) / top * width * 8)
            bar = "█" * (eighths // 8) + ("▏▎▍▌▋▊▉"[eighths % 8 - 1] if eighths % 8 else "")
        lines.append(f"{label.rjust(label_width)} │{bar.ljust(width)} {format_quantity(value, unit)}")
    return "\n".join(lines)


def _render_json(version: Any, values: dict[str, Any], sources: dict[str, str], notes: list[str],
                 quantities: dict[str, Any], swept: tuple[str, Any] | None) -> str:
    import json

    from flinktune.model.sweep import to_jsonable

    payload = {
        "flink_version": str(version),
        "parameters": {name: to_jsonable(v) for name, v in values.items()
                       if swept is None or name != swept[0]},
        "sources": sources,
        "notes": notes,
        "sweep": None if swept is None else {"parameter": swept[0], "values": to_jsonable(swept[1])},
        # One type per field: a single value under "value", a sweep's one value per point under
        # "values" (a list), never a field that is a number in one output and a list in another.
        "quantities": {q.name: {("value" if swept is None else "values"):
                                _one_type(to_jsonable(q.value), swept),
                                "unit": q.unit, "formula": q.formula, "section": q.section}
                       for q in quantities.values()},
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def _one_type(value: Any, swept: tuple[str, Any] | None) -> Any:
    """In a sweep every quantity is a list with one value per point, also one the swept
    parameter does not change (the model gives those as one number)."""
    if swept is None or isinstance(value, list):
        return value
    return [value] * len(to_jsonable_points(swept[1]))


def to_jsonable_points(points: Any) -> list[Any]:
    from flinktune.model.sweep import to_jsonable

    converted = to_jsonable(points)
    return converted if isinstance(converted, list) else [converted]
