"""Driver for test_network_bound.py: a network-bound job on two hosts joined by a 20 Mbit/s link.

Run inside the first of two network namespaces that test_network_bound.py made and joined with a
veth pair whose both ends are shaped by a ``tbf`` qdisc (real-flink-notes.md: netem is missing, tbf
works): the JobManager and TaskManager A run here, TaskManager B in the other namespace
(``ip netns exec``). Every byte between the TaskManagers crosses the shaped link, one direction per
end, as between two hosts with their own NICs.

The closed loop (issue 13): run the job (p=4, 2 x 2 slots, 1 KiB records, three exchanges, the
source offering more than the link carries), record it with ``flinktune collect``, analyse it with
and without ``--bandwidth``, let ``flinktune recommend --metrics --bandwidth --write`` edit the
config the TaskManagers read, rerun on the edited config and measure again. Prints one JSON summary
on stdout; every process it starts is stopped by PID (also on SIGTERM).

Usage: ip netns exec A python network_bound_run.py WORKDIR --self ADDR_A --peer-ns B --peer ADDR_B
       --bandwidth 20Mbit/s
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import conftest
from conftest import FlinkCluster, _stop, build_job_jar, find_flink_home, yaml_lines
from rates import counter_rate

REPO = Path(__file__).resolve().parents[2]
PARALLELISM = 4
SLOTS = 2
JOB = {"rate": 10000, "payload_bytes": 1024, "exchanges": 3}
COLLECT_S = 24


def _sigterm(signum: int, frame: object) -> None:
    raise SystemExit(143)


def cli(*args: str, timeout_s: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "flinktune", *args], capture_output=True, text=True,
                          timeout=timeout_s, cwd=REPO)


class TwoHostCluster(FlinkCluster):
    """FlinkCluster with the JobManager and TaskManager A on ``self_addr`` and TaskManager B on
    ``peer_addr`` in the namespace ``peer_ns``; both TaskManagers read the same user config file plus
    their own host lines (as a per-host dynamic property would give them)."""

    def __init__(self, home: Path, work: Path, self_addr: str, peer_ns: str, peer_addr: str) -> None:
        super().__init__(home, work)
        self.self_addr, self.peer_ns, self.peer_addr = self_addr, peer_ns, peer_addr
        self.url = f"http://{self_addr}:{self.rest_port}"
        self.base_config.update({
            # All of this namespace's interfaces (its loopback and its end of the veth): the
            # JobManager's BlobServer is reached at localhost by the jar-run handler.
            "jobmanager.rpc.address": self_addr, "jobmanager.bind-host": "0.0.0.0",
            "rest.address": self_addr, "rest.bind-address": self_addr,
            "taskmanager.numberOfTaskSlots": SLOTS,
        })  # fmt: skip
        for key in ("taskmanager.host", "taskmanager.bind-host"):
            self.base_config.pop(key, None)

    def use_config(self, config_file: Path) -> None:
        self.cancel_all_jobs()
        for proc in self.taskmanagers:
            _stop(proc)
        self._wait(lambda: not self.get("/taskmanagers")["taskmanagers"], 60, "old TaskManagers to leave", [])
        text = config_file.read_text(encoding="utf-8")
        if not text.endswith("\n"):
            text += "\n"
        tag = f"{int(time.monotonic() * 1000) % 100000}"
        hosts = ((self.self_addr, ()), (self.peer_addr, ("ip", "netns", "exec", self.peer_ns)))
        self.taskmanagers = [
            self._start("taskmanager.sh", f"tm-{tag}-{i}",
                        text + yaml_lines({"taskmanager.host": addr, "taskmanager.bind-host": addr}),
                        prefix=prefix)
            for i, (addr, prefix) in enumerate(hosts)
        ]
        self._wait(lambda: self._free_slots() == 2 * SLOTS, 180, "2 TaskManagers", self.taskmanagers)


def run_once(cluster: TwoHostCluster, jar_id: str, config: Path, name: str, dump: Path | None) -> dict:
    cluster.use_config(config)
    job_id = cluster.submit(jar_id, PARALLELISM, name=name, **JOB)
    try:
        cluster.wait_running(job_id)
        time.sleep(8)      # past the start: pools fill, back pressure settles
        if dump is not None:
            result = cli("collect", "--url", cluster.url, "--job", job_id, "--interval", "2s",
                         "--duration", f"{COLLECT_S}s", "-o", str(dump))
            if result.returncode != 0:
                raise RuntimeError(f"collect failed ({result.returncode}): {result.stderr[-2000:]}")
        rate = counter_rate(cluster, job_id, window_s=16)
        remote = counter_rate(cluster, job_id, vertex="KeyedAgg", metric="numBytesInRemote", window_s=8)
        state = cluster.job_state(job_id)
    finally:
        cluster.cancel(job_id)
    return {"job_id": job_id, "state": state, "records_per_s": rate, "keyed_agg_remote_bytes_per_s": remote}


def analyze(dump: Path, *extra: str) -> dict:
    result = cli("analyze", str(dump), "--format", "json", "--no-progress", *extra)
    if result.returncode not in (0, 1):
        raise RuntimeError(f"analyze failed ({result.returncode}): {result.stderr[-2000:]}")
    report = json.loads(result.stdout)
    return {"origins": [{"vertex": o["vertex"], "cause": o.get("cause")}
                        for j in report.get("jobs", []) for o in j.get("origins", [])],
            "codes": sorted({f["code"] for f in report.get("findings", [])})}


def main() -> int:
    signal.signal(signal.SIGTERM, _sigterm)
    parser = argparse.ArgumentParser()
    parser.add_argument("work", type=Path)
    parser.add_argument("--self", dest="self_addr", required=True)
    parser.add_argument("--peer-ns", required=True)
    parser.add_argument("--peer", required=True)
    parser.add_argument("--bandwidth", required=True)
    args = parser.parse_args()
    home, why = find_flink_home()
    if home is None:
        print(json.dumps({"skip": why}))
        return 0
    work: Path = args.work
    cluster = TwoHostCluster(home, work / "cluster", args.self_addr, args.peer_ns, args.peer)
    summary: dict = {}
    try:
        cluster.start_jobmanager()
        jar_id = cluster.upload_jar(build_job_jar(home, work / "job-build"))
        folder = work / "loop"
        folder.mkdir(parents=True, exist_ok=True)
        config = folder / "config.yaml"
        user = {k: v for k, v in cluster.base_config.items()
                if not k.startswith(("jobmanager.", "rest.")) or k == "jobmanager.rpc.address"}
        user["jobmanager.rpc.port"] = cluster.base_config["jobmanager.rpc.port"]
        config.write_text(yaml_lines(user), encoding="utf-8")
        summary["config_before"] = config.read_text(encoding="utf-8")
        summary["before"] = run_once(cluster, jar_id, config, "network-bound-before", folder / "dump")
        summary["analyze_without_bandwidth"] = analyze(folder / "dump")
        summary["analyze_with_bandwidth"] = analyze(folder / "dump", "--bandwidth", args.bandwidth)
        rec = cli("recommend", str(config), "--flink-version", "1.20", "--metrics", str(folder / "dump"),
                  "--bandwidth", args.bandwidth, "--format", "json", "--write")
        if rec.returncode != 0:
            raise RuntimeError(f"recommend failed ({rec.returncode}): {rec.stderr[-2000:]}")
        summary["recommendation"] = json.loads(rec.stdout)["recommendations"][0]
        summary["config_after"] = config.read_text(encoding="utf-8")
        summary["after"] = run_once(cluster, jar_id, config, "network-bound-after", None)
    finally:
        cluster.stop()
    summary["pids"] = sorted({p.pid for p in conftest._STARTED})
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
