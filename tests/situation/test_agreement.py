"""Agreement, by property: lint, `model --config` and the shared verdict judge the same situation
the same way, with the same numbers, across versions 1.13..2.x, every way of sizing memory (process,
flink, fine-grained, legacy heap.size / heap.mb, the operator's spec, none), parallelism and slots,
and the three file formats. Following lint's network fix never produces a new error.

Runs FLINKTUNE_PROPERTY_EXAMPLES examples (default 2,000, derandomized; about 30 s); set it for a
one-off large run: ``FLINKTUNE_PROPERTY_EXAMPLES=50000 pytest tests/situation/test_agreement.py
--timeout 0`` (50,000 + 5,000 recommend examples passed, about 23 minutes on a loaded 2-core
machine). Recommend's verdict on the original config is checked here too; "recommend's output lints
clean and is a fixed point" is helper H's, through the hook ``judge`` below: it returns what lint
and the verdict say about one situation.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flinktune.change import Change
from flinktune.config.reader import read_config_text
from flinktune.config.writer import apply_changes
from flinktune.model.network_fit import network_verdict, taskmanager_memory
from flinktune.model.what_if import what_if
from flinktune.report.model import render_model_json
from flinktune.rules import evaluate_document, load_rules
from flinktune.situation import Environment, parse_parameters, resolve_situation
from flinktune.versions import parse_version

EXAMPLES = int(os.environ.get("FLINKTUNE_PROPERTY_EXAMPLES", "2000"))
RULES = load_rules()
VERSIONS = ("1.13", "1.14", "1.15", "1.16", "1.17", "1.18", "1.19", "1.20", "2.0", "2.1", "2.2", "2.3")
MEMORY_ERRORS = {"FTC011", "FTC012", "FTC013", "FTC050"}
NETWORK = {"FTC030", "FTC034"}
_TMP = Path(tempfile.mkdtemp(prefix="flinktune-agreement-"))


@pytest.fixture(scope="module", autouse=True)
def _remove_tmp() -> Iterator[None]:
    # Hypothesis examples share one folder (function fixtures are not reset between examples).
    yield
    shutil.rmtree(_TMP, ignore_errors=True)


def render(fmt: str, values: dict[str, str], version: str, spec_memory: str | None,
           spec_parallelism: int | None) -> tuple[str, str]:
    if fmt == "flat":
        return "flink-conf.yaml", "".join(f"{k}: {v}\n" for k, v in values.items())
    if fmt == "yaml":
        return "config.yaml", "".join(f'{k}: "{v}"\n' for k, v in values.items())
    major, minor = version.split(".")
    lines = ["apiVersion: flink.apache.org/v1beta1", "kind: FlinkDeployment", "metadata:", "  name: job",
             "spec:", f"  flinkVersion: v{major}_{minor}"]
    lines += ["  flinkConfiguration:", *(f'    {k}: "{v}"' for k, v in values.items())] if values else \
        ["  flinkConfiguration: {}"]
    lines += ["  taskManager:", "    resource:", "      cpu: 1"]
    if spec_memory is not None:
        lines.append(f'      memory: "{spec_memory}"')
    if spec_parallelism is not None:
        lines += ["  job:", "    jarURI: local:///opt/flink/job.jar", f"    parallelism: {spec_parallelism}"]
    return "flinkdeployment.yaml", "\n".join(lines) + "\n"


@st.composite
def situations(draw: st.DrawFn) -> dict[str, object]:
    version = draw(st.sampled_from(VERSIONS))
    fmt = draw(st.sampled_from(("flat", "deployment") + (("yaml",) if version >= "1.19" else ())))
    values: dict[str, str] = {"jobmanager.memory.process.size": "1600m"}
    mb = draw(st.sampled_from((512, 1024, 1728, 2048, 4096, 8192)))
    sizing = draw(st.sampled_from(("process", "flink", "fine", "heap.size", "heap.mb", "none", "spec")))
    spec_memory = None
    if sizing == "process":
        values["taskmanager.memory.process.size"] = f"{mb}m"
    elif sizing == "flink":
        values["taskmanager.memory.flink.size"] = f"{mb}m"
    elif sizing == "fine":
        values["taskmanager.memory.task.heap.size"] = f"{mb // 2}m"
        values["taskmanager.memory.managed.size"] = f"{mb // 4}m"
    elif sizing == "heap.size":
        values["taskmanager.heap.size"] = f"{mb}m"
    elif sizing == "heap.mb":
        values["taskmanager.heap.mb"] = str(mb)
    elif sizing == "spec" and fmt == "deployment":
        spec_memory = f"{mb}m"
    if draw(st.booleans()):
        values["taskmanager.memory.network.min"] = f"{draw(st.sampled_from((16, 64, 128, 256)))}m"
    if draw(st.booleans()):
        values["taskmanager.memory.network.max"] = f"{draw(st.sampled_from((64, 256, 1024, 4096)))}m"
    if draw(st.booleans()):
        values["taskmanager.memory.network.fraction"] = draw(st.sampled_from(("0.05", "0.1", "0.2")))
    if version < "2.0" and draw(st.booleans()):
        values["taskmanager.network.memory.buffers-per-channel"] = str(draw(st.integers(1, 8)))
    slots = draw(st.integers(1, 32))
    values["taskmanager.numberOfTaskSlots"] = str(slots)
    parallelism = draw(st.integers(1, 600))
    spec_parallelism = None
    if fmt == "deployment" and draw(st.booleans()):
        spec_parallelism = parallelism
    else:
        values["parallelism.default"] = str(parallelism)
    exchanges = draw(st.one_of(st.none(), st.integers(1, 4)))
    name, text = render(fmt, values, version, spec_memory, spec_parallelism)
    return {"version": version, "name": name, "text": text, "exchanges": exchanges}


def judge(text: str, name: str, version: str, exchanges: int | None) -> dict[str, object]:
    """What lint and the shared verdict say about one file (the hook for recommend's agreement test)."""
    document = read_config_text(text, name)[0]
    flags = {"flink-version": version, "exchanges": None if exchanges is None else str(exchanges)}
    env = Environment().with_values(parse_parameters(flags), "flag")
    situation = resolve_situation(document, text=text, environment=env)
    findings = evaluate_document(RULES, document, situation.flink_version, situation=situation,
                                 env={"exchanges": exchanges} if exchanges else None)
    return {"document": document, "situation": situation, "verdict": network_verdict(situation),
            "memory": taskmanager_memory(situation), "findings": findings,
            "codes": {f.code for f in findings if f.severity.value == "error"} | {
                f.code for f in findings if f.code in NETWORK}}


@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(case=situations())
def test_lint_model_and_verdict_agree(case: dict[str, object]) -> None:
    text, name, version = str(case["text"]), str(case["name"]), str(case["version"])
    exchanges = case["exchanges"]
    seen = judge(text, name, version, exchanges)  # type: ignore[arg-type]
    verdict, memory, codes = seen["verdict"], seen["memory"], seen["codes"]
    # Memory: Flink refuses exactly when lint reports a memory error.
    refusal = memory.error  # type: ignore[attr-defined]
    if refusal is not None and not refusal.startswith("Either required"):
        assert codes & MEMORY_ERRORS, (text, refusal)
    elif refusal is not None:
        pass   # no size at all: an error only for a file that is the complete config (FTC050's business)
    elif memory.memory is not None:  # type: ignore[attr-defined]
        assert not codes & MEMORY_ERRORS, (text, codes)
    # Network: FTC030 exactly when it fails for sure, FTC034 exactly at the pessimistic bound only.
    assert ("FTC030" in codes) == bool(verdict.fails_for_sure), text  # type: ignore[attr-defined]
    assert ("FTC034" in codes) == (verdict.fits is False and not verdict.fails_for_sure), text  # type: ignore[attr-defined]
    # model --config: same version, same buffers needed and available, same verdict.
    if verdict.fit is not None and memory.memory is not None:  # type: ignore[attr-defined]
        path = _TMP / name
        path.write_text(text, encoding="utf-8")
        flags = {"exchanges": None if exchanges is None else str(exchanges)}
        model = json.loads(render_model_json(what_if(flags, flink_version=version, config=path)))
        quantities = model["quantities"]
        assert model["flink_version"] == str(parse_version(version))
        assert quantities["network_buffers_available"]["value"] == verdict.available  # type: ignore[attr-defined]
        assert quantities["buffers_required_per_taskmanager"]["value"] == verdict.demand.required  # type: ignore[attr-defined]
        assert quantities["fits"]["value"] == verdict.fits  # type: ignore[attr-defined]
    # Following the network fix produces no new error.
    fixes = [f.fix for f in seen["findings"] if f.code in NETWORK and f.fix is not None]  # type: ignore[attr-defined]
    if fixes and not {fixes[0].key, fixes[0].value} & {"", "None", "null", None}:
        fix = fixes[0]
        fixed = apply_changes(text, seen["document"], [Change("set", fix.key, fix.value)])  # type: ignore[arg-type]
        after = judge(fixed, name, version, exchanges)  # type: ignore[arg-type]
        new = after["codes"] - codes - NETWORK  # type: ignore[operator]
        assert not new, (text, fix, new)


@settings(max_examples=max(50, EXAMPLES // 10), derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(case=situations())
def test_recommend_says_it_does_not_fit_exactly_when_lint_does(case: dict[str, object]) -> None:
    """recommend's verdict on the original config (Recommendation.original_fit) against the shared one."""
    from flinktune.advise.engine import recommend

    text, name, version = str(case["text"]), str(case["name"]), str(case["version"])
    seen = judge(text, name, version, case["exchanges"])  # type: ignore[arg-type]
    verdict, situation = seen["verdict"], seen["situation"]
    rec = recommend(seen["document"], text, situation.flink_version, situation.environment,  # type: ignore[attr-defined]
                    situation=situation)
    if verdict.fit is None:  # type: ignore[attr-defined]
        return
    assert rec.original_fit is not None, (text, rec.original_memory_error)
    assert rec.original_fit.fits == verdict.fits, text  # type: ignore[attr-defined]
    assert rec.original_fit.required == verdict.demand.required  # type: ignore[attr-defined]
    assert rec.original_fit.total_buffers == verdict.available  # type: ignore[attr-defined]
