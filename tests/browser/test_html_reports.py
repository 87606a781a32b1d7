"""The HTML reports in a real headless Chromium, offline (marker ``browser``).

The reports are made by the real commands (``flinktune analyze ... --format html``, ``flinktune
recommend ... --format html``) from the shipped real Flink 1.20 dumps (sample_data/slow-sink,
sample_data/healthy), a simulated p = 256 dump (data/sim-p256, ``flinktune simulate --export``)
and a sample config. Each page is opened from a file with the network emulated offline, names
unresolvable and a dead proxy; the page's own CSP forbids any fetch as well. Render times are
measured and printed at the end of the module, not asserted (they depend on the machine).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("jinja2", reason="the html extra (jinja2) is not installed")
pytest.importorskip("websocket", reason="websocket-client (test extra) is not installed")
pytest.importorskip("PIL", reason="pillow (test extra) is not installed")

from chromium import RENDER_TIMES, Browser, find_chromium, png_stats

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
FLINKTUNE = [sys.executable, "-m", "flinktune"]
ORIGIN_RED = "rgb(208, 2, 27)"  # --origin in style.css
HIGH_FILL = "rgb(43, 43, 43)"  # --high: back-pressured black, as the web UI draws it

# name -> (command after `flinktune`, has an origin of back pressure, has the analysis section)
REPORTS = {
    "analyze-slow-sink": (["analyze", "sample_data/slow-sink"], True, True),
    "analyze-healthy": (["analyze", "sample_data/healthy"], False, True),
    "analyze-sim-p256": (["analyze", str(HERE / "data" / "sim-p256")], True, True),
    "recommend-slow-sink": (
        ["recommend", "sample_data/slow-sink/flink-config.yaml", "--metrics", "sample_data/slow-sink"],
        True,
        True,
    ),
    "recommend-cross-az": (
        [
            "recommend",
            "sample_configs/cross-az-throughput.flink-conf.yaml",
            "--profile",
            "sample_configs/profiles/cross-az-throughput.yaml",
        ],
        False,
        False,
    ),
}


@pytest.fixture(scope="module")
def chromium_binary() -> str:
    binary = find_chromium()
    if binary is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium; .ci/run does it)")
    return binary


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory, chromium_binary: str) -> dict[str, Path]:
    if shutil.which("java") is None:
        pytest.skip("Java is not installed: the analysis (Spark) cannot run")
    out = tmp_path_factory.mktemp("html-reports")
    paths = {}
    for name, (args, _origin, _analysis) in REPORTS.items():
        path = out / f"{name}.html"
        if args[0] == "analyze":
            cmd = [*FLINKTUNE, *args, "--format", "html", "--no-progress", "-o", str(path)]
            done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
            assert done.returncode in (0, 1), done.stderr  # 1: findings at warning
        else:
            cmd = [*FLINKTUNE, *args, "--format", "html"]
            done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr
            path.write_text(done.stdout, encoding="utf-8")
        paths[name] = path
    return paths


@pytest.fixture(scope="module")
def browser(chromium_binary: str) -> Iterator[Browser]:
    with Browser(chromium_binary) as b:  # stopped by its PID on exit, also on failure
        yield b


@pytest.fixture(scope="module")
def opened(browser: Browser, reports: dict[str, Path]) -> dict[str, dict]:
    """Open every report once: the console, the requests and a screenshot of each."""
    out = {}
    for name, path in reports.items():
        ms = browser.open(path)
        info = {
            "ms": ms,
            "errors": browser.console_errors(),
            "requests": browser.requests(),
            "screenshot": browser.screenshot(),
        }
        RENDER_TIMES[name] = (ms, path.stat().st_size)
        out[name] = info
    return out


@pytest.mark.parametrize("name", list(REPORTS))
def test_opens_offline_without_console_errors_or_requests(name: str, opened: dict[str, dict]) -> None:
    info = opened[name]
    assert info["errors"] == [], info["errors"]
    # The file itself and its own data: URIs (heat maps), nothing else.
    leaving = [u for u in info["requests"] if not u.startswith(("file://", "data:"))]
    assert leaving == [], leaving
    assert info["requests"] and info["requests"][0].startswith("file://")
    assert info["ms"] > 0


@pytest.mark.parametrize("name", list(REPORTS))
def test_screenshot_is_not_blank(name: str, opened: dict[str, dict]) -> None:
    width, height, colours, top_share = png_stats(opened[name]["screenshot"])
    assert (width, height) == (1280, 900)
    assert colours > 50, colours  # text, charts and colours, not one flat page
    assert top_share < 0.97, top_share


@pytest.mark.parametrize("name", [n for n, (_, _, analysis) in REPORTS.items() if analysis])
def test_graph_styles_and_hover(name: str, browser: Browser, reports: dict[str, Path]) -> None:
    has_origin = REPORTS[name][1]
    browser.open(reports[name])
    styles = browser.evaluate(
        "Array.from(document.querySelectorAll('g.node')).map(g => { const r = g.querySelector('rect.box');"
        " const cs = getComputedStyle(r); return [g.dataset.vertex, g.dataset.level,"
        " g.classList.contains('origin'), cs.fill, cs.stroke, cs.strokeWidth]; })"
    )
    assert styles, "no vertex drawn"
    origins = [s for s in styles if s[2]]
    if has_origin:
        assert len(origins) == 1
        _, _, _, _fill, stroke, width = origins[0]
        assert stroke == ORIGIN_RED and width == "4px"
        # Upstream of the origin: back-pressured vertices drawn HIGH (black).
        assert any(s[1] == "HIGH" and s[3] == HIGH_FILL for s in styles)
        target = "g.node.origin"
    else:
        assert origins == []
        target = "g.node"
    browser.hover(target)
    tip = browser.evaluate(
        "[document.getElementById('tip').hidden, document.getElementById('tip').textContent]"
    )
    assert tip[0] is False and "%" in tip[1] and "parallelism" in tip[1]
    # A heat map cell shows its subtask and exact value.
    browser.hover("svg.heat")
    tip = browser.evaluate(
        "[document.getElementById('tip').hidden, document.getElementById('tip').textContent]"
    )
    assert tip[0] is False and "subtask" in tip[1] and "%" in tip[1], tip


def test_recommend_curve_hover(browser: Browser, reports: dict[str, Path]) -> None:
    browser.open(reports["recommend-cross-az"])
    browser.hover("svg.curve g.mark")
    tip = browser.evaluate(
        "[document.getElementById('tip').hidden, document.getElementById('tip').textContent]"
    )
    assert tip[0] is False and "MB/s" in tip[1], tip
    assert browser.evaluate("document.querySelectorAll('svg.curve').length") >= 3


@pytest.mark.parametrize("name", list(REPORTS))
def test_every_report_is_valid_html_with_text_alternatives(name: str, reports: dict[str, Path]) -> None:
    html5lib = pytest.importorskip("html5lib", reason="html5lib (test extra) is not installed")
    page = reports[name].read_text(encoding="utf-8")
    doc = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(page)  # raises on errors
    svgs = [e for e in doc.iter() if str(e.tag).endswith("svg") and e.get("aria-hidden") != "true"]
    assert svgs
    for s in svgs:
        assert s.get("role") == "img" and len(s.get("aria-label", "")) > 20, s.attrib
