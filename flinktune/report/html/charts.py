"""Numbers -> geometry for the inline SVG charts: downsampling, scales, ticks, colour ramps and a
tiny PNG writer for heat maps. No markup here: the templates draw what these functions return."""

from __future__ import annotations

import base64
import itertools
import math
import struct
import zlib
from collections.abc import Sequence

import numpy as np

Group = tuple[int, int]  # [start, end) indexes of the original rows or columns in one cell


def groups(n: int, most: int) -> list[Group]:
    """Split ``n`` items into at most ``most`` contiguous, nearly equal groups."""
    if n <= most:
        return [(i, i + 1) for i in range(n)]
    edges = np.linspace(0, n, most + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in itertools.pairwise(edges) if b > a]


def pool(
    matrix: np.ndarray, row_groups: Sequence[Group], col_groups: Sequence[Group], how: str
) -> np.ndarray:
    """Reduce a rows x cols matrix (NaN = no sample) to the groups by ``max`` (a hot cell must stay
    visible) or ``mean``. All-NaN groups stay NaN."""
    if matrix.size == 0:
        return np.full((len(row_groups), len(col_groups)), np.nan)
    row_starts = [g[0] for g in row_groups]
    col_starts = [g[0] for g in col_groups]
    if how == "max":
        # fmax skips NaN and gives NaN only where every value is NaN.
        with np.errstate(invalid="ignore"):
            return np.fmax.reduceat(np.fmax.reduceat(matrix, row_starts, axis=0), col_starts, axis=1)
    valid = ~np.isnan(matrix)
    sums = np.add.reduceat(
        np.add.reduceat(np.where(valid, matrix, 0.0), row_starts, axis=0), col_starts, axis=1
    )
    counts = np.add.reduceat(
        np.add.reduceat(valid.astype(np.float64), row_starts, axis=0), col_starts, axis=1
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.where(counts > 0, counts, 1), np.nan)


def column_stat(matrix: np.ndarray, how: str) -> np.ndarray:
    """Per column over the rows (subtasks): mean or max, NaN where no row has a sample."""
    if matrix.size == 0:
        return np.full(matrix.shape[1] if matrix.ndim == 2 else 0, np.nan)
    valid = ~np.isnan(matrix)
    any_valid = valid.any(axis=0)
    if how == "max":
        vals = np.nan_to_num(matrix, nan=-np.inf).max(axis=0)
    else:
        vals = np.nan_to_num(matrix, nan=0.0).sum(axis=0) / np.maximum(valid.sum(axis=0), 1)
    return np.where(any_valid, vals, np.nan)


def nice_ticks(hi: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least ``hi``."""
    if not hi > 0 or math.isinf(hi):
        return [0.0, 1.0]
    raw = hi / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    n = math.ceil(hi / step - 1e-9)
    return [i * step for i in range(n + 1)]


def log_ticks(lo: float, hi: float) -> list[float]:
    """Powers of ten (and 2, 5 between them when the range is short) from lo to hi."""
    out = []
    e = math.floor(math.log10(lo))
    while 10**e <= hi * 1.0001:
        for m in (1, 2, 5) if math.log10(hi / lo) < 3 else (1,):
            v = m * 10**e
            if lo * 0.9999 <= v <= hi * 1.0001:
                out.append(float(v))
        e += 1
    return out


def hex_to_rgb(colour: str) -> tuple[int, int, int]:
    c = colour.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def ramp(values: np.ndarray, low: str, high: str, missing: str = "#ffffff") -> np.ndarray:
    """values (0..1, NaN) -> uint8 RGB, linear between two colours."""
    lo = np.array(hex_to_rgb(low), dtype=float)
    hi = np.array(hex_to_rgb(high), dtype=float)
    v = np.clip(np.nan_to_num(values, nan=0.0), 0.0, 1.0)[..., None]
    rgb = lo + (hi - lo) * v
    rgb[np.isnan(values)] = hex_to_rgb(missing)
    return rgb.round().astype(np.uint8)


def png(rgb: np.ndarray) -> bytes:
    """A truecolour PNG of an H x W x 3 uint8 array (filter 0 on every row)."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw, 6))
        + chunk(b"IEND", b"")
    )


def data_uri(png_bytes: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png_bytes).decode("ascii")


def quantised(values: np.ndarray) -> str:
    """Values 0..1 as base64 bytes 0..200 (half-percent steps), 255 = no sample: the heat map's hover
    reads them, so the exact cell value travels without a JSON array per cell."""
    q = np.where(np.isnan(values), 255, np.clip(np.round(np.nan_to_num(values) * 200), 0, 200))
    return base64.b64encode(q.astype(np.uint8).tobytes()).decode("ascii")


def ffill(matrix: np.ndarray, limit: int) -> np.ndarray:
    """Carry each row's last sample forward over at most ``limit`` empty slots: slots finer than
    the sampling interval are empty in between samples (as the text report's strip does)."""
    out = matrix.copy()
    for _ in range(limit):
        gap = np.isnan(out[:, 1:]) & ~np.isnan(out[:, :-1])
        if not gap.any():
            break
        shifted = out[:, :-1]
        out[:, 1:] = np.where(gap, shifted, out[:, 1:])
    return out


def line_chart(
    *,
    xs: np.ndarray,
    lines: Sequence[dict],
    points: Sequence[dict] = (),
    hlines: Sequence[dict] = (),
    log_x: bool = False,
    x_fmt=str,
    y_fmt=str,
    width: float = 430.0,
    height: float = 200.0,
    y_max: float | None = None,
    log_y: bool = False,
) -> dict:
    """Geometry of a line chart. ``lines``: {label, ys, colour, dash}; ``points``: {label, x, y,
    colour}; ``hlines``: {label, y, colour}. Returns paths, markers, ticks in pixels (y down)."""
    xs = np.asarray(xs, dtype=float)
    ys_all = [v for ln in lines for v in np.asarray(ln["ys"], dtype=float) if np.isfinite(v)]
    ys_all += [p["y"] for p in points if p["y"] is not None and np.isfinite(p["y"])]
    ys_all += [h["y"] for h in hlines if h["y"] is not None and np.isfinite(h["y"])]
    top = y_max if y_max is not None else (max(ys_all) * 1.08 if ys_all else 1.0)
    positive = [y for y in ys_all if y > 0]
    if log_y and positive:
        bottom = 10 ** math.floor(math.log10(min(positive)))
        top = 10 ** math.ceil(math.log10(top))
        yt = log_ticks(bottom, top)
    else:
        log_y = False
        bottom = 0.0
        yt = nice_ticks(top, 4)
        top = yt[-1]
    lo, hi = float(xs.min()), float(xs.max())

    def sx(x: float) -> float:
        if log_x:
            return width * (math.log10(x) - math.log10(lo)) / max(math.log10(hi) - math.log10(lo), 1e-9)
        return width * (x - lo) / max(hi - lo, 1e-12)

    def sy(y: float) -> float:
        if log_y:
            share = (math.log10(max(y, bottom)) - math.log10(bottom)) / (math.log10(top) - math.log10(bottom))
            return height * (1 - min(max(share, 0.0), 1.02))
        return height * (1 - min(max(y / top, 0.0), 1.02))

    paths = []
    for ln in lines:
        pts = [
            f"{sx(x):.1f},{sy(y):.1f}"
            for x, y in zip(xs, np.asarray(ln["ys"], dtype=float), strict=True)
            if np.isfinite(y)
        ]
        paths.append(
            {
                "points": " ".join(pts),
                "colour": ln["colour"],
                "dash": ln.get("dash", ""),
                "label": ln["label"],
            }
        )
    marks = [
        {
            "x": sx(p["x"]),
            "y": sy(p["y"]),
            "colour": p["colour"],
            "label": p["label"],
            "tip": p.get("tip", p["label"]),
        }
        for p in points
        if p["y"] is not None and np.isfinite(p["y"]) and lo <= p["x"] <= hi
    ]
    rules = [
        {"y": sy(h["y"]), "colour": h["colour"], "label": h["label"], "tip": h.get("tip", h["label"])}
        for h in hlines
        if h["y"] is not None and np.isfinite(h["y"]) and h["y"] <= top
    ]
    xt = log_ticks(lo, hi) if log_x else [t for t in nice_ticks(hi, 5) if lo <= t <= hi * 1.0001]
    # Hover columns: the value of each line at evenly spaced x positions.
    cols = []
    n = min(len(xs), 60)
    idx = np.unique(np.linspace(0, len(xs) - 1, n).round().astype(int))
    for k, i in enumerate(idx):
        left = 0.0 if k == 0 else (sx(xs[idx[k - 1]]) + sx(xs[i])) / 2
        right = width if k == len(idx) - 1 else (sx(xs[i]) + sx(xs[idx[k + 1]])) / 2
        vals = "; ".join(
            f"{ln['label']}: {y_fmt(float(np.asarray(ln['ys'])[i]))}"
            for ln in lines
            if np.isfinite(np.asarray(ln["ys"], dtype=float)[i])
        )
        cols.append({"x": left, "w": max(right - left, 0.5), "tip": f"{x_fmt(float(xs[i]))} → {vals}"})
    return {
        "w": width,
        "h": height,
        "paths": paths,
        "marks": marks,
        "rules": rules,
        "cols": cols,
        "xticks": [{"x": sx(t), "label": x_fmt(t)} for t in xt],
        "yticks": [{"y": sy(t), "label": y_fmt(t)} for t in yt],
    }
