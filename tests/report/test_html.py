"""The HTML report (flinktune.report.html): layout, charts, the timeline, and whole pages built from
a diagnosis made by the analysis' own functions (no Spark here; tests/report/test_html_cli.py runs
the real command on the shipped dumps, tests/browser/ opens the pages in Chromium)."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jinja2", reason="the html extra (jinja2) is not installed")
html5lib = pytest.importorskip("html5lib", reason="html5lib (test extra) is not installed")

from flinktune.analysis import names  # noqa: E402
from flinktune.analysis.diagnose import diagnose_job  # noqa: E402
from flinktune.analysis.facts import SubtaskFacts, rollup_vertex  # noqa: E402
from flinktune.analysis.job import AnalysisResult  # noqa: E402
from flinktune.analysis.plan import Edge, JobPlan, PlanVertex  # noqa: E402
from flinktune.analysis.timeline import JobTimeline, VertexTimeline, build  # noqa: E402
from flinktune.report.html import charts, render_analysis_html, render_recommend_html  # noqa: E402
from flinktune.report.html.analysis_view import HEAT_COLS, HEAT_ROWS  # noqa: E402
from flinktune.report.html.layout import layout  # noqa: E402
from flinktune.situation import Environment  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def parse_strict(page: str) -> object:
    """html5lib in strict mode raises on any parse error (unclosed or misnested tags, bad
    attributes, a missing doctype)."""
    return html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(page)


def local(el: object) -> str:
    return str(el.tag).rsplit("}", 1)[-1]  # type: ignore[attr-defined]


def els(doc: object, tag: str, **attrs: str) -> list:
    """Elements by local name (html5lib puts SVG in its namespace) and exact attribute values."""
    return [
        e
        for e in doc.iter()  # type: ignore[attr-defined]
        if local(e) == tag and all(e.get(k.rstrip("_").replace("_", "-")) == v for k, v in attrs.items())
    ]


def classed(doc: object, tag: str, cls: str) -> list:
    return [e for e in els(doc, tag) if cls in (e.get("class") or "").split()]


def check_page(page: str) -> object:
    doc = parse_strict(page)
    svgs = els(doc, "svg")
    # Every chart is an image to assistive technology, with a text alternative.
    charts_ = [s for s in svgs if s.get("aria-hidden") != "true"]
    assert charts_, "no chart drawn"
    for s in charts_:
        assert s.get("role") == "img", s.attrib
        assert len(s.get("aria-label", "")) > 20, s.attrib
    for img in els(doc, "img"):
        assert img.get("alt"), img.attrib
    # Nothing is fetched: the CSP forbids it, and no element points outside the file.
    assert "default-src 'none'" in page
    for el in doc.iter():
        for attr in ("src", "href"):
            value = el.get(attr) or ""
            if local(el) == "a":
                continue  # links are followed only when clicked
            assert not value or value.startswith(("data:", "#", "url(#")), (el.tag, value[:80])
    assert not re.search(r"<(link|iframe|object|embed)\b", page)
    assert "@import" not in page and "url(http" not in page
    return doc


# ---------------------------------------------------------------------- layout and charts


def test_layout_runs_left_to_right_along_the_edges() -> None:
    keys = ["src", "a", "b", "join", "sink"]
    edges = [("src", "a"), ("src", "b"), ("a", "join"), ("b", "join"), ("join", "sink")]
    lay = layout(keys, edges, 100, 40, 50, 10)
    for a, b in edges:
        assert lay.nodes[a].x < lay.nodes[b].x
    assert lay.nodes["a"].x == lay.nodes["b"].x and lay.nodes["a"].y != lay.nodes["b"].y
    assert lay.nodes["sink"].layer == 3
    # A long edge does not pull its target back: longest path from the source.
    lay2 = layout(["s", "x", "t"], [("s", "x"), ("x", "t"), ("s", "t")], 100, 40, 50, 10)
    assert lay2.nodes["t"].layer == 2


def test_pool_max_keeps_a_hot_subtask_visible() -> None:
    m = np.full((512, 3000), 0.1)
    m[137, :] = 1.0
    m[:, :10] = np.nan  # the first column group (7-8 slots) has no sample
    rows, cols = charts.groups(512, HEAT_ROWS), charts.groups(3000, HEAT_COLS)
    cells = charts.pool(m, rows, cols, "max")
    assert cells.shape == (HEAT_ROWS, HEAT_COLS)
    hot_row = next(i for i, (a, b) in enumerate(rows) if a <= 137 < b)
    assert np.all(cells[hot_row, 1:] == 1.0)
    assert np.nanmax(np.delete(cells, hot_row, axis=0)) == pytest.approx(0.1)
    assert np.isnan(cells[0, 0])  # a cell with no sample stays empty
    means = charts.pool(m, [(0, 512)], cols, "mean")
    assert means[0, -1] == pytest.approx((511 * 0.1 + 1.0) / 512)


def test_png_and_quantised_values_round_trip() -> None:
    pil = pytest.importorskip("PIL.Image", reason="pillow (test extra) is not installed")
    values = np.array([[0.0, 0.5], [1.0, np.nan]])
    data = charts.png(charts.ramp(values, "#000000", "#ffffff", missing="#ff0000"))
    img = pil.open(io.BytesIO(data)).convert("RGB")
    assert img.size == (2, 2)
    assert img.getpixel((0, 0)) == (0, 0, 0) and img.getpixel((0, 1)) == (255, 255, 255)
    assert img.getpixel((1, 1)) == (255, 0, 0) and img.getpixel((1, 0)) == (128, 128, 128)
    q = base64.b64decode(charts.quantised(values))
    assert list(q) == [0, 100, 200, 255]


def test_ffill_bridges_short_gaps_only() -> None:
    m = np.array([[1.0, np.nan, np.nan, 2.0, np.nan, np.nan, np.nan, np.nan]])
    out = charts.ffill(m, 3)
    assert out[0].tolist()[:7] == [1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0]
    assert np.isnan(out[0, 7])


# ---------------------------------------------------------------------- the timeline


def test_timeline_from_slot_columns() -> None:
    bp = names.METRICS.index("backPressuredTimeMsPerSecond") * names.RANK_SPAN
    out_pool = names.METRICS.index("outPoolUsage") * names.RANK_SPAN
    legacy_out_pool = out_pool + 2  # the legacy buffers.outPoolUsage copy: a worse rank, ignored
    rows = [  # job, vertex, subtask, mkey, slot, n, s, t0, t1
        (1, 10, 0, bp, 0, 2, 1800.0, 0, 900),
        (1, 10, 0, bp, 3, 1, 100.0, 3000, 3000),
        (1, 10, 1, bp, 3, 1, 500.0, 3000, 3000),
        (1, 10, 0, out_pool, 1, 1, 0.75, 1000, 1000),
        (1, 10, 0, legacy_out_pool, 1, 1, 0.10, 1000, 1000),
        (1, 10, 0, names.METRICS.index("numRecordsIn") * names.RANK_SPAN, 1, 1, 5.0, 1000, 1000),
    ]
    cols = dict(
        zip(
            ("job_hash", "vertex_hash", "subtask_index", "mkey", "slot", "n", "s", "t0", "t1"),
            map(list, zip(*rows, strict=True)),
            strict=True,
        )
    )
    desc = {
        (1, 10, 0): {"job_key": "job", "vertex_key": "Map"},
        (1, 10, 1): {"job_key": "job", "vertex_key": "Map"},
    }
    tl = build(cols, desc, 0, 1000, 0.5, None, rekey=lambda k: {"Map": "v-map"}.get(k))["job"]
    assert (tl.start_ms, tl.slot_ms, tl.slots, tl.warmup_end_ms) == (0, 1000, 4, 1500)
    vt = tl.vertices["v-map"]
    assert vt.subtasks == (0, 1)
    bp_grid = vt.values["backpressured"]
    assert bp_grid[0, 0] == pytest.approx(0.9) and bp_grid[0, 3] == pytest.approx(0.1)
    assert bp_grid[1, 3] == pytest.approx(0.5) and np.isnan(bp_grid[1, 0])
    assert vt.values["out_pool"][0, 1] == pytest.approx(0.75)
    assert set(vt.values) == {"backpressured", "out_pool"}


# ---------------------------------------------------------------------- whole pages


def _subtask(
    vertex: str, i: int, busy: float, bp: float, out_pool: float, in_pool: float | None
) -> SubtaskFacts:
    return SubtaskFacts(
        job_key="job",
        vertex_key=vertex,
        subtask_index=i,
        tm_id=f"tm-{i % 4}",
        samples=50,
        bp_ratio=bp,
        bp_max=bp,
        bp_share_above_ok=1.0 if bp > 0.1 else 0.0,
        bp_share_high=1.0 if bp > 0.5 else 0.0,
        bp_source="backPressuredTimeMsPerSecond",
        busy_ratio=busy,
        idle_ratio=max(0.0, 1 - busy - bp),
        out_pool=out_pool,
        out_pool_max=out_pool,
        out_pool_share_high=1.0 if out_pool > 0.9 else 0.0,
        in_pool=in_pool,
        in_pool_share_high=0.0,
        floating=in_pool,
        exclusive=in_pool,
        records_in_per_s=100.0,
        records_out_per_s=100.0,
        bytes_out_per_s=1e4,
        bytes_in_remote_per_s=1e4 if in_pool is not None else None,
        buffers_in_remote_per_s=1.0 if in_pool is not None else None,
        has_remote_input=in_pool is not None,
    )


def synthetic_result(p: int, slots: int) -> AnalysisResult:
    """Source -> Map -> Sink with the sink busy (the origin), upstream back-pressured; and per-subtask
    time series of p subtasks over ``slots`` time slots, subtask 7 (or the last) of the sink the hottest."""
    spec = {  # vertex: (busy, bp, out pool, in pool)
        "v-src": (0.05, 0.9, 1.0, None),
        "v-map": (0.1, 0.85, 0.95, 0.9),
        "v-sink": (0.97, 0.0, 0.0, 1.0),
    }
    names_ = {"v-src": "Source: Gen", "v-map": "Map", "v-sink": "Sink: Writer"}
    vertices = [
        rollup_vertex("job", k, names_[k], [_subtask(k, i, *spec[k]) for i in range(p)], k) for k in spec
    ]
    plan = JobPlan(
        "jid-1",
        "synthetic",
        tuple(PlanVertex(k, names_[k], p) for k in spec),
        (Edge("v-src", "v-map", "HASH", "pipelined_bounded"), Edge("v-map", "v-sink", "REBALANCE", "")),
    )
    job = diagnose_job("job", vertices, plan, Environment(), "jid-1", "synthetic", {}, (0, slots * 1000))
    rng = np.random.default_rng(1)
    timelines = {}
    vts = {}
    for k, (busy, bp, out_pool, in_pool) in spec.items():
        values = {
            "busy": np.clip(min(busy, 0.9) + rng.normal(0, 0.02, (p, slots)), 0, 1),
            "backpressured": np.clip(bp + rng.normal(0, 0.02, (p, slots)), 0, 1),
            "out_pool": np.full((p, slots), out_pool),
        }
        values["idle"] = np.clip(1 - values["busy"] - values["backpressured"], 0, 1)
        if in_pool is not None:
            values["in_pool"] = np.full((p, slots), in_pool)
        vts[k] = VertexTimeline(tuple(range(p)), values)
    vts["v-sink"].values["busy"][min(7, p - 1), :] = 1.0
    timelines["job"] = JobTimeline(0, 1000, slots, slots * 100, vts)
    return AnalysisResult(
        (job,), "plan.json", ("dump/",), samples=p * slots * 3, timelines=timelines, plan=plan
    )


def test_analysis_page_is_valid_self_contained_html() -> None:
    result = synthetic_result(4, 40)
    assert result.jobs[0].origins and result.jobs[0].origins[0].name == "Sink: Writer"
    page = render_analysis_html(result, "0.1.0")
    doc = check_page(page)
    # The answer first: where, cause, confidence, what to do.
    answer = els(doc, "section", class_="answer bad")[0]
    text = "".join(answer.itertext())
    assert "Back pressure starts at Sink: Writer" in text and "Confidence" in text and "Scale Sink" in text
    # The graph: three vertices left to right, edges labelled with the ship strategy, origin marked.
    nodes = classed(doc, "g", "node")
    assert [n.get("data-vertex") for n in nodes] == ["Source: Gen", "Map", "Sink: Writer"]
    xs = [float(els(n, "rect")[0].get("x")) for n in nodes]
    assert xs == sorted(xs) and len(set(xs)) == 3
    classes = {n.get("data-vertex"): n.get("class").split() for n in nodes}
    assert "origin" in classes["Sink: Writer"] and "busy" in classes["Sink: Writer"]
    assert "HIGH" in classes["Source: Gen"] and "origin" not in classes["Source: Gen"]
    labels = [t.text for g in els(doc, "g", class_="edge") for t in els(g, "text")]
    assert labels == ["HASH", "REBALANCE"]
    # Per vertex: the stacked time chart, the pool chart and two heat maps, with warm-up shading.
    assert len(els(doc, "svg", class_="stack")) == 3
    assert len(els(doc, "svg", class_="pools")) == 3
    heat = els(doc, "svg", class_="heat")
    assert len(heat) == 6
    assert all(els(h, "image")[0].get("href").startswith("data:image/png;base64,") for h in heat)
    assert els(doc, "rect", class_="warm")
    sink_busy = next(
        h for h in heat if h.get("data-vertex") == "Sink: Writer" and h.get("data-label") == "busy"
    )
    assert "Highest: subtask 3 at 100%" in sink_busy.get("aria-label")
    # Hover texts carry exact values.
    assert any("busy" in (g.get("data-tip") or "") and "%" in g.get("data-tip") for g in els(doc, "g"))


def test_large_job_is_downsampled() -> None:
    result = synthetic_result(512, 3000)
    page = render_analysis_html(result, "0.1.0")
    doc = check_page(page)
    # Only what a screen can show: at most HEAT_ROWS x HEAT_COLS cells per heat map and 200 columns
    # per stacked chart, so the page stays small whatever the job.
    for h in els(doc, "svg", class_="heat"):
        assert int(h.get("data-rows")) <= HEAT_ROWS and int(h.get("data-cols")) <= HEAT_COLS
    assert len(page) < 3_000_000
    sink_busy = next(
        h
        for h in els(doc, "svg", class_="heat")
        if h.get("data-vertex") == "Sink: Writer" and h.get("data-label") == "busy"
    )
    rows = sink_busy.get("data-row-labels").split("|")
    hot = next(
        i for i, r in enumerate(rows) if "–" in r and int(r.split("–")[0]) <= 7 <= int(r.split("–")[1])
    )
    cols = int(sink_busy.get("data-cols"))
    q = base64.b64decode(sink_busy.get("data-values"))
    assert all(q[hot * cols + c] == 200 for c in range(cols))  # the hot subtask's row is at 100 %
    assert max(q[(hot + 1) * cols : (hot + 2) * cols]) < 200


def test_healthy_job_says_so() -> None:
    result = synthetic_result(4, 40)
    vertices = [
        rollup_vertex("job", k, n, [_subtask(k, i, 0.2, 0.0, 0.3, 0.1) for i in range(4)], k)
        for k, n in (("v-src", "Source: Gen"), ("v-map", "Map"), ("v-sink", "Sink: Writer"))
    ]
    job = diagnose_job("job", vertices, result.plan, Environment(), "jid-1", "synthetic", {}, (0, 40000))
    healthy = AnalysisResult((job,), None, ("dump/",), 10, plan=result.plan)
    page = render_analysis_html(healthy)
    doc = check_page(page)
    assert "No sustained back pressure" in "".join(els(doc, "section", class_="answer ok")[0].itertext())
    assert not classed(doc, "g", "origin")
    assert "No time series for this vertex" in page


@pytest.mark.parametrize(
    "config",
    sorted(p.name for p in (REPO / "sample_configs").iterdir() if p.suffix in (".yaml", ".yml")),
)
def test_recommend_page_for_each_sample_config(config: str) -> None:
    from flinktune.advise.engine import recommend_text
    from flinktune.situation import Environment as Env
    from flinktune.situation import detect_version, read_profile

    path = REPO / "sample_configs" / config
    stem = config.split(".")[0]
    profile = REPO / "sample_configs" / "profiles" / f"{stem}.yaml"
    env = Env()
    if profile.is_file():
        env = read_profile(profile).apply(env)
    text = path.read_text(encoding="utf-8")
    recs = recommend_text(
        text,
        str(path),
        env,
        version_of=lambda d: detect_version(d, flag=env.flink_version, directive=None)[0],
    )
    page = render_recommend_html(recs, path=str(path), original_text=text, new_text=recs[-1].new_text)
    doc = check_page(page)
    n_changes = sum(len(r.changes) for r in recs)
    changes = els(doc, "article")
    assert len(changes) == n_changes
    if n_changes:
        assert els(doc, "pre", class_="diff")
        # Every change shows its reason and the model's before/after numbers.
        for a in changes:
            assert els(a, "p", class_="why")
    if recs[0].job.workload == "streaming":
        assert els(doc, "svg", class_="curve"), "no model curve drawn"


# ---------------------------------------------------------------------- the real commands


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("dump", ["slow-sink", "healthy"])
def test_analyze_command_writes_a_valid_page_from_the_real_dumps(dump: str, tmp_path: Path) -> None:
    import shutil
    import subprocess
    import sys

    if shutil.which("java") is None:
        pytest.skip("Java is not installed: the analysis (Spark) cannot run")
    out = tmp_path / "report.html"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "flinktune",
            "analyze",
            f"sample_data/{dump}",
            "--format",
            "html",
            "--no-progress",
            "-o",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode in (0, 1), done.stderr
    page = out.read_text(encoding="utf-8")
    doc = check_page(page)
    nodes = classed(doc, "g", "node")
    assert len(nodes) == 4  # Source, Parse, KeyedAgg, the sink chain (plan.json)
    origins = [n.get("data-vertex") for n in nodes if "origin" in n.get("class").split()]
    if dump == "slow-sink":
        assert origins == ["SinkWork -> Discard: Writer"]
        assert [n.get("data-level") for n in nodes[:3]] == ["HIGH", "HIGH", "HIGH"]
        assert els(doc, "a", href="#rule-fta002")
    else:
        assert origins == []
    # Time series of every vertex and subtask came through from the analysis.
    assert len(els(doc, "svg", class_="stack")) == 4 and len(els(doc, "svg", class_="heat")) == 8


_BOTH_PATHS = """
import json, sys
import numpy as np
from flinktune.analysis import AnalysisOptions, job
from flinktune.spark.session import build_session

spark = build_session("local[2]", {"spark.sql.shuffle.partitions": "2"})
out = {}
try:
    paths = (("keyed", job.LOCAL_SLOTS_MAX_ROWS, job.LOCAL_FINISH_MAX_ROWS),
             ("local", 0, job.LOCAL_FINISH_MAX_ROWS), ("spark", 0, 0))
    for name, keyed, finish in paths:
        job.LOCAL_SLOTS_MAX_ROWS, job.LOCAL_FINISH_MAX_ROWS = keyed, finish
        res = job.run_analysis(spark, AnalysisOptions(inputs=(sys.argv[1],), timeline=True))
        out[name] = {
            jk: {"slots": tl.slots, "warm": tl.warmup_end_ms, "vertices": {
                vk: {m: np.nan_to_num(a, nan=-1).round(9).tolist() for m, a in vt.values.items()}
                for vk, vt in tl.vertices.items()}}
            for jk, tl in res.timelines.items()}
finally:
    spark.stop()
print(json.dumps(out))
"""


@pytest.mark.spark
@pytest.mark.slow
def test_timeline_is_the_same_on_both_finishes() -> None:
    """The slot table is built in numpy from the keyed rows for a small dump, summarised in numpy
    when small and in Spark when not (job.py); the timeline rides along each way and must not
    depend on which."""
    import json
    import shutil
    import subprocess
    import sys

    if shutil.which("java") is None:
        pytest.skip("Java is not installed: the analysis (Spark) cannot run")
    done = subprocess.run(
        [sys.executable, "-c", _BOTH_PATHS, "sample_data/slow-sink"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    both = json.loads(done.stdout.strip().splitlines()[-1])
    assert both["local"] and both["keyed"] == both["local"] == both["spark"]
    tl = next(iter(both["local"].values()))
    assert tl["slots"] == 40 and len(tl["vertices"]) == 4


def test_recommend_command_html_and_missing_extra() -> None:
    import subprocess
    import sys

    cmd = [
        sys.executable,
        "-m",
        "flinktune",
        "recommend",
        "sample_configs/cross-az-throughput.flink-conf.yaml",
        "--profile",
        "sample_configs/profiles/cross-az-throughput.yaml",
        "--format",
        "html",
    ]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    check_page(done.stdout)
    assert "taskmanager.network.memory.buffers-per-channel" in done.stdout
    # Without the html extra: one line naming the extra, exit 2 (checked before any work).
    blocked = (
        "import sys; sys.modules['jinja2'] = None; from flinktune.cli.app import main; "
        "sys.argv[0] = 'flinktune'; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", blocked, *cmd[3:]], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 2
    assert "flinktune[html]" in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
