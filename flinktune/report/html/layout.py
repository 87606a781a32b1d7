"""A layered (Sugiyama-style) layout of a job graph, left to right along the data flow.

Flink's web UI draws the job graph with dagre: layers by longest path from the sources, crossings
reduced by ordering each layer, edges between neighbouring layers. Job graphs have a few dozen
vertices at most, so the same three steps in their simplest form do: longest-path layering, a
few barycenter sweeps, and evenly spaced rows. No dependency, deterministic output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

SWEEPS = 4


@dataclass(frozen=True)
class Placed:
    key: str
    layer: int
    row: int
    x: float  # top-left corner
    y: float


@dataclass(frozen=True)
class Layout:
    nodes: dict[str, Placed]
    width: float
    height: float


def layers(keys: Sequence[str], edges: Sequence[tuple[str, str]]) -> dict[str, int]:
    """Longest path from a source; a cycle (never in a Flink job graph) is cut where found."""
    ups: dict[str, list[str]] = {k: [] for k in keys}
    for a, b in edges:
        if a in ups and b in ups and a != b:
            ups[b].append(a)
    out: dict[str, int] = {}
    visiting: set[str] = set()

    def depth(k: str) -> int:
        if k in out:
            return out[k]
        visiting.add(k)
        d = 0
        for u in ups[k]:
            if u not in visiting:
                d = max(d, depth(u) + 1)
        visiting.discard(k)
        out[k] = d
        return d

    for k in keys:
        depth(k)
    return out


def layout(
    keys: Sequence[str],
    edges: Sequence[tuple[str, str]],
    node_w: float,
    node_h: float,
    gap_x: float,
    gap_y: float,
) -> Layout:
    """Positions for ``keys`` (in the given order, e.g. topological) joined by ``edges``."""
    layer_of = layers(keys, edges)
    n_layers = max(layer_of.values(), default=-1) + 1
    rows: list[list[str]] = [[] for _ in range(n_layers)]
    for k in keys:
        rows[layer_of[k]].append(k)
    ups: dict[str, list[str]] = {k: [] for k in keys}
    downs: dict[str, list[str]] = {k: [] for k in keys}
    for a, b in edges:
        if a in ups and b in ups:
            downs[a].append(b)
            ups[b].append(a)

    def reorder(layer: list[str], neighbours: dict[str, list[str]], pos: dict[str, int]) -> list[str]:
        def centre(k: str) -> float:
            ns = [pos[n] for n in neighbours[k] if n in pos]
            return sum(ns) / len(ns) if ns else float(layer.index(k))

        return sorted(layer, key=lambda k: (centre(k), layer.index(k)))

    for sweep in range(SWEEPS):
        pos = {k: i for row in rows for i, k in enumerate(row)}
        if sweep % 2 == 0:
            for i in range(1, n_layers):
                rows[i] = reorder(rows[i], ups, pos)
                pos.update({k: j for j, k in enumerate(rows[i])})
        else:
            for i in range(n_layers - 2, -1, -1):
                rows[i] = reorder(rows[i], downs, pos)
                pos.update({k: j for j, k in enumerate(rows[i])})
    tallest = max((len(r) for r in rows), default=0)
    height = tallest * node_h + max(0, tallest - 1) * gap_y
    width = n_layers * node_w + max(0, n_layers - 1) * gap_x
    nodes: dict[str, Placed] = {}
    for li, row in enumerate(rows):
        used = len(row) * node_h + max(0, len(row) - 1) * gap_y
        top = (height - used) / 2
        for ri, k in enumerate(row):
            nodes[k] = Placed(k, li, ri, li * (node_w + gap_x), top + ri * (node_h + gap_y))
    return Layout(nodes, width, height)
