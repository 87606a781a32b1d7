"""``--master spark://...`` runs the same job on a real standalone cluster: a master and a worker
started on 127.0.0.1 from pyspark's own launcher (bin/spark-class, what sbin/start-master.sh and
start-worker.sh call), with results equal to local mode."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from .conftest import real_dump  # type: ignore[import-not-found]

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(cmd: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with open(log, "wb") as fh:
        return subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _analyze(args: list[str], env: dict[str, str]) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-m", "flinktune", "analyze", *args, "--format", "json", "--no-progress"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def _essentials(doc: dict[str, object]) -> object:
    (job,) = doc["jobs"]  # type: ignore[index]
    return (
        [(o["vertex"], o["cause"], o["channels"]) for o in job["origins"]],
        [(v["name"], v["level"], v["backpressured"], round(v["busy_max"] or 0, 6)) for v in job["vertices"]],
        sorted((f["code"], f["vertex"]) for f in doc["findings"]),
    )  # type: ignore[index,union-attr]


def test_standalone_cluster_equals_local(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import pyspark

    spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
    if not spark_class.exists():
        pytest.skip("pyspark ships no bin/spark-class")
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_HOME": str(spark_class.parents[1]),
        "PYSPARK_PYTHON": sys.executable,
    }
    port, ui, wui = _free_port(), _free_port(), _free_port()
    master = _start(
        [
            str(spark_class),
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(ui),
        ],
        tmp_path / "master.log",
        env,
    )
    worker = None
    try:
        url = f"spark://127.0.0.1:{port}"
        worker = _start(
            [
                str(spark_class),
                "org.apache.spark.deploy.worker.Worker",
                url,
                "--host",
                "127.0.0.1",
                "--cores",
                "2",
                "--memory",
                "1g",
                "--webui-port",
                str(wui),
            ],
            tmp_path / "worker.log",
            env,
        )
        deadline = time.time() + 180
        alive = 0
        while time.time() < deadline and alive < 1:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as resp:
                    alive = int(json.load(resp).get("aliveworkers", 0))
            except OSError:
                pass
            time.sleep(1)
        assert alive >= 1, (tmp_path / "worker.log").read_text()[-2000:]
        dump = str(real_dump("slow-sink"))
        on_cluster = _analyze(
            [
                dump,
                "--master",
                url,
                "--conf",
                "spark.driver.host=127.0.0.1",
                "--conf",
                "spark.executor.memory=512m",
            ],
            env,
        )
        local = _analyze([dump], env)
        assert _essentials(on_cluster) == _essentials(local)
        assert on_cluster["jobs"][0]["origins"][0]["vertex"] == "SinkWork -> Discard: Writer"  # type: ignore[index]
    finally:
        if worker is not None:
            _stop(worker)
        _stop(master)
