"""flinktune.model.memory against Flink's own start-up memory sizing, on generated configs, 1.20 and 2.x.

Flink's bin/taskmanager.sh and bin/jobmanager.sh size the JVMs with ``BashJavaUtils
GET_TM_RESOURCE_PARAMS`` / ``GET_JM_RESOURCE_PARAMS --configDir DIR`` (bin/config.sh, 1.20.5 and
2.3.0). memory_oracle/MemoryOracle.java calls that same code (``BashJavaUtils.runCommand``) for every
generated configuration folder in ONE JVM per version, and prints either the JVM flags and every
memory component as ``-D key=<bytes>b``, or the exception chain Flink refuses with. For each
configuration the model must give the same bytes for every component (TaskManager and JobManager)
or refuse with exactly Flink's text. The model is reached the way every command reaches it: the file
is resolved into a situation (flinktune.situation: version, legacy keys mapped for a standalone
deployment) and judged by flinktune.model.network_fit.taskmanager_memory / jobmanager_memory.

The configurations come from memory_configs.generate (seeded): every way of sizing memory,
including the legacy ``taskmanager.heap.size`` / ``jobmanager.heap.size`` keys (standalone mapping,
1.x only: 2.x removed MemoryBackwardsCompatibilityUtils) and configurations with no size at all.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from flinktune.config.reader import read_config_text
from flinktune.model.network_fit import jobmanager_memory, taskmanager_memory
from flinktune.situation import resolve_situation
from flinktune.situation.environment import Environment
from flinktune.versions import FlinkVersion

from .conftest import _java_missing, find_flink_home, flink_dist_version
from .memory_configs import KINDS, generate

pytestmark = pytest.mark.flink

COUNT = 240  # per version; the issue asks for >= 200
SEED = 20261125
ORACLE_SOURCE = Path(__file__).resolve().parent / "memory_oracle" / "MemoryOracle.java"

# BashJavaUtils dynamic parameter -> model field.
TM_COMPONENTS = {
    "taskmanager.memory.framework.heap.size": "framework_heap_bytes",
    "taskmanager.memory.framework.off-heap.size": "framework_off_heap_bytes",
    "taskmanager.memory.task.heap.size": "task_heap_bytes",
    "taskmanager.memory.task.off-heap.size": "task_off_heap_bytes",
    "taskmanager.memory.network.min": "network_bytes",
    "taskmanager.memory.network.max": "network_bytes",
    "taskmanager.memory.managed.size": "managed_bytes",
    "taskmanager.memory.jvm-metaspace.size": "jvm_metaspace_bytes",
    "taskmanager.memory.jvm-overhead.min": "jvm_overhead_bytes",
    "taskmanager.memory.jvm-overhead.max": "jvm_overhead_bytes",
}
JM_COMPONENTS = {
    "jobmanager.memory.heap.size": "heap_bytes",
    "jobmanager.memory.off-heap.size": "off_heap_bytes",
    "jobmanager.memory.jvm-metaspace.size": "jvm_metaspace_bytes",
    "jobmanager.memory.jvm-overhead.min": "jvm_overhead_bytes",
    "jobmanager.memory.jvm-overhead.max": "jvm_overhead_bytes",
}
# BashJavaUtils wraps the reason (ProcessMemoryUtils / JobManagerProcessUtils); the model gives the reason.
WRAPPERS = ("TaskManager memory configuration failed: ", "JobManager memory configuration failed: ")

VERSIONS = {"1.20": ("1.20", ".flink-venv"), "2.x": ("2.", ".flink2-venv")}


def _refusal(chain: str) -> str:
    """Flink's reason: the messages of the exception chain without BashJavaUtils' wrapper, each once.

    Flink nests some reasons (the network-range check wraps "Derived Network Memory size ... is not in
    configured Network Memory range" in a general sentence); the model gives both sentences in order.
    """
    messages: list[str] = []
    for item in chain.split(" || "):
        message = item.split(": ", 1)[1] if ": " in item else item
        for prefix in WRAPPERS:
            message = message.removeprefix(prefix)
        if not messages or messages[-1] != message:
            messages.append(message)
    # flinktune's errors are one line with single spaces (FlinktuneError); Flink's own text has a
    # doubled space in one message ("JVM Metaspace size  ("). Words and numbers must match exactly.
    return " ".join(" ".join(messages).split())


def _parse_ok(lines: str) -> dict[str, int]:
    jvm, dynamic = lines.split("\t")
    sizes = {k: int(v.removesuffix("b")) for k, v in re.findall(r"-D ([\w.\-]+)=(\d+b)\b", dynamic)}
    flags = dict(re.findall(r"-(Xmx|XX:MaxDirectMemorySize=|XX:MaxMetaspaceSize=)(\d+)", jvm))
    sizes.update({f"jvm:{k.rstrip('=')}": int(v) for k, v in flags.items()})
    return sizes


def _run_oracle(home: Path, work: Path, configs: list[tuple[str, dict[str, str]]]) -> dict[str, dict]:
    classes = work / "oracle-classes"
    dist = next((home / "lib").glob("flink-dist-*.jar"))
    subprocess.run(["javac", "-nowarn", "-cp", str(dist), "-d", str(classes), str(ORACLE_SOURCE)],
                   check=True, capture_output=True)  # fmt: skip
    dirs = []
    for n, (_kind, config) in enumerate(configs):
        folder = work / f"c{n:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.yaml").write_text(config_text(config))
        dirs.append(str(folder))
    cp = f"{classes}:{home / 'bin' / 'bash-java-utils.jar'}:{dist}"
    proc = subprocess.run(["java", "-cp", cp, "flinktune.e2e.MemoryOracle", *dirs],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    answers: dict[str, dict] = {d: {} for d in dirs}
    for line in proc.stdout.splitlines():
        if not line.startswith("RESULT "):
            continue
        _, which, folder, status, rest = line.split(" ", 4)
        answers[folder][which] = ("ok", _parse_ok(rest)) if status == "OK" else ("err", _refusal(rest))
    assert all(len(a) == 2 for a in answers.values()), "the oracle did not answer every configuration"
    return {Path(d).name: a for d, a in answers.items()}


@pytest.fixture(scope="module", params=list(VERSIONS))
def oracle(request, tmp_path_factory) -> tuple[FlinkVersion, str, list, dict]:
    series, venv = VERSIONS[request.param]
    home, why = find_flink_home(series, venv)
    why = why or _java_missing()
    if home is None or why:
        pytest.skip(f"BashJavaUtils comparison for Flink {request.param} skipped: {why}")
    dist_version = flink_dist_version(home)
    major, minor = (int(x) for x in dist_version.split(".")[:2])
    configs = generate(SEED, COUNT)
    answers = _run_oracle(home, tmp_path_factory.mktemp(f"oracle-{request.param}"), configs)
    return FlinkVersion(major, minor), dist_version, configs, answers


def config_text(config: dict[str, str]) -> str:
    # json.dumps quotes every value: Flink's YAML reader then sees the text a user wrote.
    return "".join(f"{k}: {json.dumps(v)}\n" for k, v in config.items())


def _situation(config: dict[str, str], version: FlinkVersion):
    """What every command reads: the file as ``version`` reads it (legacy keys mapped for a standalone
    deployment, as bin/config.sh's BashJavaUtils call does), via flinktune.situation."""
    text = config_text(config)
    (document,) = read_config_text(text, "config.yaml")
    return resolve_situation(document, text=text, environment=Environment(flink_version=version))


def _model_tm(situation) -> tuple[str, object]:
    verdict = taskmanager_memory(situation)
    if verdict.memory is None:
        return "err", verdict.error
    memory = verdict.memory
    sizes = {key: getattr(memory, field) for key, field in TM_COMPONENTS.items()}
    sizes["jvm:Xmx"] = memory.jvm_heap_bytes
    sizes["jvm:XX:MaxDirectMemorySize"] = memory.jvm_direct_bytes
    sizes["jvm:XX:MaxMetaspaceSize"] = memory.jvm_metaspace_bytes
    return "ok", sizes


def _model_jm(situation) -> tuple[str, object]:
    memory, error, _sized = jobmanager_memory(situation)
    if memory is None:
        return "err", error
    sizes = {key: getattr(memory, field) for key, field in JM_COMPONENTS.items()}
    sizes["jvm:Xmx"] = memory.heap_bytes
    sizes["jvm:XX:MaxMetaspaceSize"] = memory.jvm_metaspace_bytes
    return "ok", sizes


def _comparable(flink: tuple[str, object]) -> tuple[str, object]:
    status, value = flink
    if status == "ok":
        keys = {*TM_COMPONENTS, *JM_COMPONENTS, "jvm:Xmx", "jvm:XX:MaxDirectMemorySize",
                "jvm:XX:MaxMetaspaceSize"}
        return status, {k: v for k, v in value.items() if k in keys}  # type: ignore[union-attr]
    return status, value


def test_model_sizes_memory_exactly_as_flink_does(oracle) -> None:
    version, dist_version, configs, answers = oracle
    differences = []
    outcomes: Counter[str] = Counter()
    for n, (kind, config) in enumerate(configs):
        answer = answers[f"c{n:03d}"]
        situation = _situation(config, version)
        assert situation.flink_version == version
        for which, model in (("tm", _model_tm(situation)), ("jm", _model_jm(situation))):
            flink = _comparable(answer[which])
            outcomes[f"{which} {flink[0]}"] += 1
            if model != flink:
                differences.append(f"c{n:03d} {kind} {which}: {config}\n  Flink {dist_version}: {flink}\n"
                                   f"  model: {model}")
    print(f"\nBashJavaUtils {dist_version}: {len(configs)} configs, {dict(outcomes)}, "
          f"{len(differences)} differences")
    shown = "\n".join(differences[:15])
    assert not differences, f"{len(differences)} of {2 * len(configs)} differ:\n{shown}"


def test_the_generated_configs_cover_every_way_of_sizing(oracle) -> None:
    """Each kind of config appears, and Flink both accepts and refuses some of them (the test can fail)."""
    version, _, configs, answers = oracle
    assert len(configs) >= 200
    assert {kind for kind, _ in configs} == set(KINDS)
    statuses = {(kind, which, answers[f"c{n:03d}"][which][0]) for n, (kind, _) in enumerate(configs)
                for which in ("tm", "jm")}  # fmt: skip
    assert ("nothing", "tm", "err") in statuses
    assert ("invalid", "tm", "err") in statuses
    assert ("process", "tm", "ok") in statuses and ("fine-grained", "tm", "ok") in statuses
    # Legacy heap keys: the 1.x start-up maps them to total Flink memory; 2.x no longer reads them.
    legacy_alone = ("legacy-heap", "tm", "ok" if version < FlinkVersion(2, 0) else "err")
    assert legacy_alone in statuses
