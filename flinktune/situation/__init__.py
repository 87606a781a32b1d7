"""The situation: ONE resolved view of what a command is judging, built once, read by every command.

Layer: above the core (errors, units, versions, findings, config/), below every engine (model,
rules, sim, analysis, advise, lint, collect). Imports only core modules; no numpy / pydantic /
pyspark (lint's path imports it). Measured facts are plain values the caller puts in.

Build it::

    from flinktune.situation import Environment, read_profile, parse_parameters, resolve_situation

    env = Environment()
    env = read_profile("profile.yaml").apply(env)               # profile values, with file:line
    env = env.with_values(parse_parameters({"rtt": "2ms"}), "flag")   # flags win
    situation = resolve_situation(document, text=text, environment=env,
                                  directive=directives.flink_version,   # '# flinktune: flink-version='
                                  project_version=None, project_exchanges=None,
                                  plan=plan_json, plan_source="plan.json", placement=placement,
                                  measured=measured)                    # advise.measured.Measured or None

Read it (each ``Sourced`` value has ``.value``, ``.source`` - flag | profile | project | comment |
config | spec | metrics | plan | inferred | derived | default -, ``.file``, ``.line``, ``.detail``,
``.describe()`` and ``.stated``)::

    situation.version            Sourced[FlinkVersion]: flag > '# flinktune: flink-version=' (comment) >
                                 spec.flinkVersion (file) > project > inferred from the keys
                                 (catalog since/removed; config.yaml => 1.19+) > default 1.20
    situation.effective          EffectiveConfig of the document as that version reads it, with
                                 the operator's spec fields (spec.taskManager/jobManager.resource.memory
                                 -> *.memory.process.size, spec.job.parallelism -> parallelism.default)
                                 and the legacy heap keys (taskmanager/jobmanager.heap.size / .mb ->
                                 flink.size / jm heap.size standalone, process.size on Kubernetes/YARN;
                                 1.x only) folded in, each at its file:line
    situation.document           the document as written (key rules read this)
    situation.folded, .notes     the folded entries and what they mean in words
    situation.deployment         Sourced[str] standalone | kubernetes | yarn
    situation.completeness       Sourced[str] complete | overlay (``.complete``): a missing memory size
                                 is Flink's refusal only for a complete file. Pass ``completeness=`` to
                                 resolve_situation to override (project setting); default: complete,
                                 FlinkSessionJob: overlay
    situation.spec               DeploymentSpec (the FlinkDeployment's operator-mapped fields)
    situation.parallelism        flag > metrics > profile > plan > spec.job.parallelism
                                 > parallelism.default > 1
    situation.slots              flag / profile > taskmanager.numberOfTaskSlots > 1
    situation.taskmanagers       flag / profile > spec.taskManager.replicas (standalone) > ceil(p / slots)
    situation.exchanges          flag / profile > project > DEFAULT_EXCHANGES (3, pessimistic) - used only
                                 when there is no plan (situation.graph_known)
    situation.plan, .placement   the plan JSON and (vertex id, subtask) -> TaskManager, when known
    situation.workload, .rtt_s, .bandwidth_bytes_per_s   (defaults: streaming, 1 ms, 10 Gbit/s)
    situation.environment        the Environment itself (rate, record size, latency target, skew, ...)
    situation.measured           what a dump measured (or None)
    situation.with_document(doc) the same situation for a candidate document (recommend's steps)

The network-buffer and memory verdicts are model-level: ``flinktune.model.network_fit``
(``network_verdict(situation)``, ``taskmanager_memory(situation)``, ``jobmanager_memory(situation)``,
``buffer_settings``, ``buffer_demand`` and ``network_fix`` - one config change towards fitting that
creates no other error) is THE function lint's FTC030/FTC034/FTC050/FTC051, recommend and
``model --config`` use. ``situation.plan.read_json_object`` reads a plan / job.json for every command
(``lint --plan``, ``recommend --plan``).

Units (flinktune.units, the one rule): ``parse_duration_s(v, what="--rtt")`` refuses a bare number
other than 0 with one line (``--rtt: '5' has no unit; write 5ms or 5s``), and with ``positive`` (an
rtt) zero too; ``parse_bandwidth(v, what=...)`` refuses a bare number, zero and a unit that does not
say bits or bytes (``10G``, ``10gb``); ``parse_size_bytes`` follows MemorySize (bare = bytes).
``line_of_key(text, key)`` is the one "which line sets this key" helper for profiles and project files.
"""

from __future__ import annotations

from flinktune.situation.deployment import DeploymentSpec, deployment_spec, parse_resource_memory
from flinktune.situation.environment import (
    DEFAULT_BANDWIDTH_BYTES_PER_S,
    DEFAULT_RTT_S,
    PARAMETERS,
    WHAT_IF_PARAMETERS,
    WORKLOADS,
    Environment,
    Profile,
    load_profile,
    parse_parameter,
    parse_parameters,
    read_profile,
)
from flinktune.situation.lines import line_of_key
from flinktune.situation.resolve import DEFAULT_EXCHANGES, Situation, resolve_situation
from flinktune.situation.sourced import Sourced
from flinktune.situation.version import detect_version, resolve_version

__all__ = [
    "DEFAULT_BANDWIDTH_BYTES_PER_S", "DEFAULT_EXCHANGES", "DEFAULT_RTT_S", "PARAMETERS", "WHAT_IF_PARAMETERS",
    "WORKLOADS", "DeploymentSpec", "Environment", "Profile", "Situation", "Sourced", "deployment_spec",
    "detect_version", "line_of_key", "load_profile", "parse_parameter", "parse_parameters",
    "parse_resource_memory", "read_profile", "resolve_situation", "resolve_version",
]
