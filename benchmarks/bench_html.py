"""Size and render time of the HTML report (``flinktune analyze --format html``) at p = 32 / 128 / 512.

For each parallelism: a simulated dump (``flinktune simulate`` of a source -> keyBy -> aggregate ->
rebalance -> sink job, kept in --cache), analysed once (Spark, with the time series), then

- ``render_s``: Python time of ``render_analysis_html`` (best of 3);
- ``size``: the page's bytes, and the share of it that is heat-map PNGs;
- ``chromium_ms``: headless Chromium, offline, from navigation start to two frames after load
  (best of 3, a fresh page each time).

A synthetic case with p = 512 and 3,000 time slots (the analysis itself uses 40 slots) shows the
downsampling at work; its baseline, side by side, is the same page with downsampling switched off
(every subtask and slot drawn). Writes benchmarks/results/html.md.

    .venv/bin/python benchmarks/bench_html.py [--cache DIR] [--docs-screenshots]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "browser"))

SCENARIO = """name: bench-p{p}
description: source -> keyBy -> aggregate -> rebalance -> slow sink, at parallelism {p}
duration: 4s
warmup: 1s
sample_interval: 1s
cluster: {{task_managers: {tms}, slots_per_tm: {slots}, bandwidth: 10Gbit/s, rtt: 1ms}}
network: {{segment_size: 32kb, buffers_per_channel: 2, floating_buffers_per_gate: 8, buffer_timeout: 100ms}}
job:
  name: bench-p{p}
  vertices:
    - name: "Source: Gen"
      parallelism: {p}
      capacity: 2000
      record_size: {{lognormal_mean: 200b, lognormal_sigma: 0.4}}
    - name: KeyedAgg
      parallelism: {p}
      capacity: 4000
      input: {{ship_strategy: HASH}}
    - name: "Sink: Writer"
      parallelism: {p}
      capacity: 600
      input: {{ship_strategy: REBALANCE}}
"""


def dump_for(p: int, cache: Path) -> Path:
    out = cache / f"p{p}"
    if (out / "metrics.parquet").is_file():
        return out
    cache.mkdir(parents=True, exist_ok=True)
    tms = min(64, max(1, p // 4))
    scenario = cache / f"p{p}.yaml"
    scenario.write_text(SCENARIO.format(p=p, tms=tms, slots=max(1, p // tms)), encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "flinktune", "simulate", str(scenario), "--seed", "1", "--export", str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return out


def best_of(n: int, fn) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def png_share(page: str) -> float:
    return sum(len(m) for m in re.findall(r"data:image/png;base64,[A-Za-z0-9+/=]+", page)) / len(page)


def browser_ms(browser, path: Path, n: int = 3) -> float:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(n):
        out.append(browser.open(path))
        assert not browser.console_errors(), browser.console_errors()
    return min(out)


def synthetic(p: int, slots: int):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("html_tests", REPO / "tests" / "report" / "test_html.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.synthetic_result(p, slots)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "flinktune-bench-html")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "html.md")
    ap.add_argument("--docs-screenshots", action="store_true", help="also (re)make docs/img/report-*.png")
    args = ap.parse_args()

    from chromium import Browser, find_chromium

    from flinktune import __version__
    from flinktune.analysis import AnalysisOptions, analyze
    from flinktune.report.html import analysis_view, render_analysis_html

    binary = find_chromium()
    if binary is None:
        sys.exit("Chromium not found (apt-get install chromium)")
    rows = []
    work = Path(tempfile.mkdtemp(prefix="flinktune-bench-html-"))
    with Browser(binary) as browser:
        for p in (32, 128, 512):
            dump = dump_for(p, args.cache)
            t = time.perf_counter()
            result = analyze(AnalysisOptions(inputs=(str(dump),), timeline=True))
            analyse_s = time.perf_counter() - t
            page = render_analysis_html(result, __version__)
            render_s = best_of(3, lambda r=result: render_analysis_html(r, __version__))
            path = work / f"p{p}.html"
            path.write_text(page, encoding="utf-8")
            slots = next(iter(result.timelines.values())).slots if result.timelines else 0
            rows.append(
                (
                    f"p={p}, {slots} slots (simulated dump)",
                    len(page),
                    png_share(page),
                    render_s,
                    browser_ms(browser, path),
                    f"{analyse_s:.1f} s",
                )
            )
        for label, limits in (
            ("downsampled (shipped)", None),
            ("baseline: no downsampling", (10**6, 10**6, 10**6)),
        ):
            saved = (analysis_view.HEAT_ROWS, analysis_view.HEAT_COLS, analysis_view.CHART_COLS)
            if limits:
                analysis_view.HEAT_ROWS, analysis_view.HEAT_COLS, analysis_view.CHART_COLS = limits
            try:
                result = synthetic(512, 3000)
                page = render_analysis_html(result, __version__)
                render_s = best_of(3, lambda r=result: render_analysis_html(r, __version__))
            finally:
                analysis_view.HEAT_ROWS, analysis_view.HEAT_COLS, analysis_view.CHART_COLS = saved
            path = work / f"synthetic-{len(rows)}.html"
            path.write_text(page, encoding="utf-8")
            rows.append(
                (
                    f"p=512, 3000 slots (synthetic), {label}",
                    len(page),
                    png_share(page),
                    render_s,
                    browser_ms(browser, path),
                    "-",
                )
            )
        if args.docs_screenshots:
            make_screenshots(browser, work)

    lines = [
        "# HTML report: size and render time",
        "",
        f"`benchmarks/bench_html.py` on {platform.node() or 'this machine'} ({os.cpu_count()} CPUs, shared), "
        f"Python {platform.python_version()}, Chromium `{binary}`, {time.strftime('%Y-%m-%d')}.",
        "",
        "- size: bytes of the one HTML file (PNG: the share that is heat-map images as data URIs);",
        "- render: Python `render_analysis_html` (best of 3);",
        "- Chromium: headless, offline, navigation start to two frames after the load event (best of 3);",
        "- analysis: `flinktune analyze` on Spark with the time series, for reference (not in the page;",
        "  the first row includes starting Spark).",
        "",
        "| case | size | PNG | render (Python) | Chromium | analysis |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, size, share, render_s, ms, analyse in rows:
        lines.append(
            f"| {name} | {size / 1024:,.0f} KiB | {share:.0%} | {render_s * 1000:,.0f} ms | "
            f"{ms:,.0f} ms | {analyse} |"
        )
    lines += [
        "",
        "The analysis keeps 40 time slots per window (`AnalysisOptions.slots`), so a real report has 40",
        "columns; the page is drawn from whatever the timeline holds. Heat maps keep at most 128 rows x",
        "400 columns (max of the subtasks and slots in a cell, so a hot subtask stays visible) and the",
        "stacked charts at most 200 columns (means); the baseline row draws every subtask and slot.",
        "",
    ]
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


def make_screenshots(browser, work: Path) -> None:  # type: ignore[no-untyped-def]
    """docs/img: the reports made from the shipped dumps and a sample config, cropped to a section."""
    img = REPO / "docs" / "img"
    img.mkdir(parents=True, exist_ok=True)
    fl = [sys.executable, "-m", "flinktune"]
    pages = {
        "analyze-slow-sink": [*fl, "analyze", "sample_data/slow-sink", "--format", "html", "--no-progress"],
        "analyze-healthy": [*fl, "analyze", "sample_data/healthy", "--format", "html", "--no-progress"],
        "recommend-slow-sink": [
            *fl,
            "recommend",
            "sample_data/slow-sink/flink-config.yaml",
            "--metrics",
            "sample_data/slow-sink",
            "--format",
            "html",
        ],
        "recommend-cross-az": [
            *fl,
            "recommend",
            "sample_configs/cross-az-throughput.flink-conf.yaml",
            "--profile",
            "sample_configs/profiles/cross-az-throughput.yaml",
            "--format",
            "html",
        ],
    }
    shots = {  # file -> (page, element to start at, height)
        "report-analyze-top.png": ("analyze-slow-sink", "header", 1000),
        "report-analyze-time.png": ("analyze-slow-sink", "section.vertex:nth-last-child(1 of .vertex)", 760),
        "report-analyze-healthy.png": ("analyze-healthy", "header", 720),
        "report-recommend-changes.png": ("recommend-cross-az", "header", 900),
        "report-recommend-curves.png": ("recommend-cross-az", "div.charts", 1000),
    }
    paths = {}
    for name, cmd in pages.items():
        done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
        path = work / f"{name}.html"
        path.write_text(done.stdout, encoding="utf-8")
        paths[name] = path
    import base64

    for file, (page, selector, height) in shots.items():
        browser.open(paths[page])
        top = browser.evaluate(f"document.querySelector({selector!r}).getBoundingClientRect().top + scrollY")
        data = browser.call(
            "Page.captureScreenshot",
            session=True,
            format="png",
            captureBeyondViewport=True,
            clip={"x": 0, "y": max(0, top - 10), "width": 1280, "height": height, "scale": 1},
        )
        (img / file).write_bytes(base64.b64decode(data["data"]))
        print("wrote", img / file)


if __name__ == "__main__":
    main()
