"""Golden tests of ``recommend --metrics`` on the simulator's dumps (closing the loop).

The simulator exports a dump (metrics.parquet + plan.json) for a scenario whose cause is known
(ground_truth in the scenario file); the analysis measures it on Spark and the advisor must act on
that verdict: more credits for the long-RTT link, and "buffer tuning will not fix it" for the slow sink.
Regenerate with ``FLINKTUNE_UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from advisehelpers import GOLDEN, SAMPLES

from flinktune.advise import Environment, parse_parameters
from flinktune.advise.engine import recommend_text
from flinktune.advise.measured import measure
from flinktune.report.recommend import render_recommendation_text
from flinktune.versions import parse_version

SCENARIOS = {"few-credits-long-rtt": {"rtt": "50ms", "bandwidth": "10Gbit/s"},
             "slow-sink": {"rtt": "1ms", "bandwidth": "10Gbit/s"}}
CONFIG = SAMPLES / "simulated-cluster.flink-conf.yaml"


@pytest.fixture(scope="module")
def dumps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for name in SCENARIOS:
        folder = tmp_path_factory.mktemp(name)
        scenario = SAMPLES / "scenarios" / f"{name}.yaml"
        proc = subprocess.run([sys.executable, "-m", "flinktune", "simulate", str(scenario),
                               "--export", str(folder), "--no-charts", "--format", "json"],
                              capture_output=True, timeout=600)
        assert proc.returncode == 0, proc.stderr.decode()
        out[name] = folder
    return out


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_recommend_on_simulator_dump(scenario: str, dumps: dict[str, Path], spark: object) -> None:
    env = Environment().with_values(parse_parameters(SCENARIOS[scenario]), "flag")
    version = parse_version("1.20")
    text = CONFIG.read_text(encoding="utf-8")
    dump = dumps[scenario]
    plan = json.loads((dump / "plan.json").read_text(encoding="utf-8"))
    measured = measure([str(dump)], plan_path=str(dump / "plan.json"), version=version,
                       segment_bytes=32768, env=env, session=spark)
    recs = recommend_text(text, "sample_configs/simulated-cluster.flink-conf.yaml", env,
                          version_of=lambda _doc: version, measured_for=lambda _d, _v: measured, plan=plan)
    rec = recs[0]
    keys = {c.new_key or c.key for c in rec.changes}
    if scenario == "few-credits-long-rtt":
        assert measured.cause in ("too_few_credits", "network_or_credits")
        assert "taskmanager.network.memory.buffers-per-channel" in keys
        ceiling = next(e for c in rec.changes for e in c.effects if e.name == "channel_ceiling_bytes_per_s")
        assert ceiling.after > ceiling.before
    else:
        assert measured.not_network and measured.origin == "Sink: Writer"
        assert not any("buffers-per-channel" in k or "floating" in k or "segment" in k for k in keys)
        assert any("Buffer tuning will not fix it" in n for n in rec.notes)
    # The report renders (and names the origin); the golden holds what must not drift: the verdict and
    # the set of changes. Measured rates move with the simulator's details, so values are not pinned.
    report = render_recommendation_text(rec)
    assert "Sink: Writer" in report
    summary = {
        "origin": measured.origin, "cause_is_network": not measured.not_network,
        "changes": [[c.action, c.key, c.new_key] for c in rec.changes],
        "notes": [n.split(":")[0] for n in rec.notes],
    }
    golden = GOLDEN / f"sim-{scenario}.json"
    if os.environ.get("FLINKTUNE_UPDATE_GOLDEN"):
        golden.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    assert summary == json.loads(golden.read_text(encoding="utf-8"))
