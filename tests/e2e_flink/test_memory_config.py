"""H4's TaskManager memory derivation (flinktune.model.memory) against Flink's own, config by config.

Flink's start scripts size a TaskManager with ``BashJavaUtils GET_TM_RESOURCE_PARAMS`` (bin/config.sh,
bin/bash-java-utils.sh @1.20.5): it prints the JVM flags and every memory component as ``-D key=<bytes>b``
dynamic parameters, or exits with an IllegalConfigurationException. We run it from the installed
1.20.5 distribution (about 0.5 s each, no cluster) and require the model to give the same bytes for
every component, and to refuse exactly the configurations Flink refuses.
"""

from __future__ import annotations

import json
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from flinktune.model.memory import MemoryConfigError, taskmanager_memory_from_config
from flinktune.versions import FlinkVersion

pytestmark = pytest.mark.flink

# name -> config; flat keys, as config.yaml accepts them.
CONFIGS: dict[str, dict[str, str]] = {
    "e2e cluster: 1g process, managed 0.1": {
        "taskmanager.memory.process.size": "1g",
        "taskmanager.memory.managed.fraction": "0.1",
    },
    "distribution default 1728m": {"taskmanager.memory.process.size": "1728m"},
    "process 4096m": {"taskmanager.memory.process.size": "4096m"},
    "process 8192m": {"taskmanager.memory.process.size": "8192m"},
    "flink size 1280m": {"taskmanager.memory.flink.size": "1280m"},
    "network pinned to 8m": {
        "taskmanager.memory.process.size": "1g",
        "taskmanager.memory.network.min": "8m",
        "taskmanager.memory.network.max": "8m",
    },
    "network fraction 0.2, capped at 300m": {
        "taskmanager.memory.process.size": "2g",
        "taskmanager.memory.network.fraction": "0.2",
        "taskmanager.memory.network.max": "300m",
    },
    "fine-grained task heap + managed": {
        "taskmanager.memory.task.heap.size": "512m",
        "taskmanager.memory.managed.size": "512m",
    },
    "legacy numberOfBuffers only": {
        "taskmanager.memory.process.size": "1g",
        "taskmanager.network.numberOfBuffers": "1000",
    },
    "64kb segments, fraction 0.15": {
        "taskmanager.memory.process.size": "1g",
        "taskmanager.memory.segment-size": "64kb",
        "taskmanager.memory.network.fraction": "0.15",
    },
    "deprecated network fraction key": {
        "taskmanager.memory.process.size": "2g",
        "taskmanager.network.memory.fraction": "0.2",
    },
    "overhead and metaspace set": {
        "taskmanager.memory.process.size": "3g",
        "taskmanager.memory.jvm-overhead.fraction": "0.2",
        "taskmanager.memory.jvm-metaspace.size": "512m",
    },
    "flink size with task heap: network is the rest": {
        "taskmanager.memory.flink.size": "1g",
        "taskmanager.memory.task.heap.size": "300m",
        "taskmanager.memory.managed.size": "300m",
    },
    # Refused by Flink:
    "error: 1g with network fraction 0.2 leaves no task heap": {
        "taskmanager.memory.process.size": "1g",
        "taskmanager.network.memory.fraction": "0.2",
    },
    "error: network min above total flink": {
        "taskmanager.memory.process.size": "1g",
        "taskmanager.memory.network.min": "2g",
    },
    "error: network min above max": {
        "taskmanager.memory.process.size": "1g",
        "taskmanager.memory.network.min": "100m",
        "taskmanager.memory.network.max": "50m",
    },
    "error: components exceed flink size": {
        "taskmanager.memory.flink.size": "1g",
        "taskmanager.memory.task.heap.size": "700m",
        "taskmanager.memory.managed.size": "400m",
    },
    "error: nothing sized": {"taskmanager.numberOfTaskSlots": "2"},
}

# BashJavaUtils dynamic parameter -> TaskManagerMemory field.
COMPONENTS = {
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


def _flink_says(home: Path, work: Path, config: dict[str, str]) -> tuple[dict[str, int] | None, str]:
    work.mkdir(parents=True, exist_ok=True)
    (work / "config.yaml").write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in config.items()))
    dist = next((home / "lib").glob("flink-dist-*.jar"))
    proc = subprocess.run(
        [
            "java",
            "-cp",
            f"{home / 'bin' / 'bash-java-utils.jar'}:{dist}",
            "org.apache.flink.runtime.util.bash.BashJavaUtils",
            "GET_TM_RESOURCE_PARAMS",
            "--configDir",
            str(work),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "Exception" in ln]
        return None, lines[0] if lines else proc.stdout[-500:] + proc.stderr[-500:]
    results = [
        ln.split(":", 1)[1]
        for ln in proc.stdout.splitlines()
        if ln.startswith("BASH_JAVA_UTILS_EXEC_RESULT:")
    ]
    assert len(results) == 2, proc.stdout
    dynamic = dict(re.findall(r"-D ([\w.\-]+)=(\S+)", results[1]))
    sizes = {k: int(v.removesuffix("b")) for k, v in dynamic.items() if k in COMPONENTS}
    jvm = dict(re.findall(r"-(Xmx|XX:MaxDirectMemorySize=)(\d+)", results[0]))
    sizes["jvm_heap"] = int(jvm["Xmx"])
    sizes["jvm_direct"] = int(jvm["XX:MaxDirectMemorySize="])
    return sizes, ""


@pytest.fixture(scope="module")
def flink_answers(flink_home: Path, e2e_dir: Path) -> dict[str, tuple]:
    base = e2e_dir / "bash-java-utils"
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            name: pool.submit(_flink_says, flink_home, base / f"c{i}", config)
            for i, (name, config) in enumerate(CONFIGS.items())
        }
        return {name: future.result() for name, future in futures.items()}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_model_derives_what_flink_derives(name: str, flink_answers: dict[str, tuple]) -> None:
    flink, error = flink_answers[name]
    config = CONFIGS[name]
    # The "error:" names record what Flink 1.20.5 was seen to do; the check is that the model agrees.
    assert (flink is None) == name.startswith("error:"), error or "Flink accepted it"
    if flink is None:
        with pytest.raises(MemoryConfigError) as refused:
            taskmanager_memory_from_config(config, FlinkVersion(1, 20))
        # Same reason in the same words where the model ports Flink's message.
        flink_reason = error.split("IllegalConfigurationException: ", 1)[-1].removeprefix(
            "TaskManager memory configuration failed: "
        )
        assert (
            flink_reason.split(" (")[0] in str(refused.value) or str(refused.value).split(" (")[0] in error
        ), f"Flink: {flink_reason}\nmodel: {refused.value}"
        return
    model = taskmanager_memory_from_config(config, FlinkVersion(1, 20))
    ours = {key: getattr(model, field) for key, field in COMPONENTS.items()}
    theirs = {key: flink[key] for key in COMPONENTS}
    assert ours == theirs
    assert model.jvm_heap_bytes == flink["jvm_heap"]
    assert model.jvm_direct_bytes == flink["jvm_direct"]
