"""The rules engine stays light: evaluating every bundled rule (model functions included) on a
config loads neither numpy nor pyspark, and, with the validated-rules cache warm, not pydantic."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import sys
from flinktune.config.reader import read_config_text
from flinktune.rules import evaluate_document, load_rules
from flinktune.versions import FlinkVersion
text = ("taskmanager.memory.process.size: 1728m\\ntaskmanager.numberOfTaskSlots: 16\\n"
        "parallelism.default: 400\\ntaskmanager.memory.netwrok.fraction: 0.2\\n")
doc = read_config_text(text, "flink-conf.yaml")[0]
codes = sorted({f.code for f in evaluate_document(load_rules(), doc, FlinkVersion(1, 20))})
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "pyspark", "pandas", "pyarrow"))
print(",".join(codes), "|", ",".join(heavy))
"""


def test_no_numpy_or_pyspark(tmp_path: Path) -> None:
    env = {**os.environ, "FLINKTUNE_CACHE_DIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    codes, heavy = (part.strip() for part in result.stdout.split("|"))
    # The probe really ran the model-backed rules: too few buffers, little heap per slot, a typo.
    assert {"FTC001", "FTC030", "FTC052"} <= set(codes.split(","))
    assert heavy == ""


CHECK_PROBE = """
import sys
from flinktune.cli.rules_cmd import _metrics_items
from flinktune.rules import load_rules
from flinktune.rules.examples import run_examples
ruleset = load_rules()
config = [r for r in ruleset if r.scope != "vertex"]
failed = [x.label() for r in config for x in run_examples(r, _metrics_items) if not x.ok]
light = not any(m.split(".")[0] == "numpy" for m in sys.modules)
analysis = [r for r in ruleset if r.scope == "vertex"]
failed += [x.label() for r in analysis for x in run_examples(r, _metrics_items) if not x.ok]
print(",".join(failed), "|", light, "numpy" in sys.modules)
"""


def test_only_the_analysis_rules_examples_load_numpy(tmp_path: Path) -> None:
    """`rules check` runs the config rules' examples without numpy; the analysis rules' metrics examples
    run the analysis (numpy) only when they run."""
    env = {**os.environ, "FLINKTUNE_CACHE_DIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", CHECK_PROBE], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    failed, loaded = (part.strip() for part in result.stdout.split("|"))
    assert failed == ""
    assert loaded == "True True"
