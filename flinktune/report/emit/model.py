"""``flinktune model``'s reports (a ``ModelResult``): text (``-v``: where every input came from), json,
markdown (a table to paste into a ticket or a design note: inputs, notes, every quantity with its
formula; a sweep as one row per point; the parallelism what-if as a section)."""

from __future__ import annotations

from typing import Any

from flinktune.report.emit import How

RESULT = "flinktune.model.what_if.ModelResult"
SCHEMA_VERSION = 2


def text(result: Any, how: How) -> str:
    from flinktune.report.model import render_model_text

    return render_model_text(result, verbose=how.verbose, color=how.color)


def json(result: Any, how: How) -> str:
    from flinktune.report.model import render_model_json

    return render_model_json(result)


def markdown(result: Any, how: How) -> str:
    import numpy as np

    from flinktune.model.sweep import PARAM_BY_NAME
    from flinktune.report.model import format_quantity as fmt
    from flinktune.report.model import scalar, sweep_columns

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = [f"# flinktune model (Flink {result.version})", ""]
    inputs = [f"`{name}={fmt(scalar(v), PARAM_BY_NAME[name].unit)}`" for name, v in result.values.items()
              if np.ndim(v) == 0]
    if inputs:
        lines += [f"Inputs: {', '.join(inputs)}", ""]
    if how.verbose and result.origins:
        lines += ["Sources:", "", *(f"- {cell(origin)}" for origin in result.origins), ""]
    if result.notes:
        lines += [*(f"> **Note:** {cell(note)}" for note in result.notes), ""]
    if result.swept is None:
        lines += ["| section | quantity | value | formula |", "|---|---|---:|---|"]
        lines += [f"| {q.section} | {q.name} | {fmt(scalar(q.value), q.unit)} | {cell(q.formula)} |"
                  for q in result.quantities.values()]
        return "\n".join(lines + _parallelism(result)) + "\n"
    name, points = result.swept
    columns = sweep_columns(result)
    units = {c: result.quantities[c].unit for c in columns}
    lines.append("| " + " | ".join([name, *(f"{c} [{units[c]}]" if units[c] else c for c in columns)]) + " |")
    lines.append("|" + "---:|" * (len(columns) + 1))
    values = {c: np.broadcast_to(np.asarray(result.quantities[c].value), (len(points),)) for c in columns}
    for i, point in enumerate(points):
        row = [fmt(point, PARAM_BY_NAME[name].unit), *(fmt(values[c][i], units[c]) for c in columns)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines + _parallelism(result)) + "\n"


def _parallelism(result: Any) -> list[str]:
    """The parallelism what-if (--capacity) as a section: the text report's lines, as a list."""
    from flinktune.report.model import parallelism_lines

    if result.parallelism is None:
        return []
    first, *rest = parallelism_lines(result.parallelism)
    return ["", "## Parallelism what-if", "", first[0].upper() + first[1:], "",
            *(f"- {line.strip()}" for line in rest)]


FORMATS = {"text": text, "json": json, "markdown": markdown}
