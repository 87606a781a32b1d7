"""Fact tables rules read with ``fact(table, key)``: plain data about Flink and the JDK, each table with
its source. A rule that needs another such table adds it here, not a function."""

from __future__ import annotations

from collections.abc import Mapping

from flinktune.versions import newest_patches

# Reporter classes whose factory Flink names (the @InstantiateViaFactory annotations of the
# reporters in flink-metrics-*).
_REPORTER_FACTORIES = {
    "org.apache.flink.metrics.prometheus.PrometheusReporter":
        "org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
    "org.apache.flink.metrics.prometheus.PrometheusPushGatewayReporter":
        "org.apache.flink.metrics.prometheus.PrometheusPushGatewayReporterFactory",
    "org.apache.flink.metrics.jmx.JMXReporter": "org.apache.flink.metrics.jmx.JMXReporterFactory",
    "org.apache.flink.metrics.slf4j.Slf4jReporter": "org.apache.flink.metrics.slf4j.Slf4jReporterFactory",
    "org.apache.flink.metrics.graphite.GraphiteReporter":
        "org.apache.flink.metrics.graphite.GraphiteReporterFactory",
    "org.apache.flink.metrics.influxdb.InfluxdbReporter":
        "org.apache.flink.metrics.influxdb.InfluxdbReporterFactory",
    "org.apache.flink.metrics.datadog.DatadogHttpReporter":
        "org.apache.flink.metrics.datadog.DatadogHttpReporterFactory",
    "org.apache.flink.metrics.statsd.StatsDReporter": "org.apache.flink.metrics.statsd.StatsDReporterFactory",
}

# JVM options a JDK no longer has (by the name jvm_options() gives), with the JDK that dropped them
# and what to use there.
# Sources: JEP 158/271 (unified GC logging, JDK 9: the Print*/GC log rotation flags are gone),
# JEP 214 (JDK 9: -Xincgc), JDK-8173421 (JDK 10: ParNew), JEP 363 (JDK 14: CMS, "support was
# removed"), JEP 122 (JDK 8: PermGen), JEP 403 (JDK 17: --illegal-access).
_REMOVED_JVM_FLAGS: dict[str, tuple[int, str]] = {
    "PrintGCDateStamps": (9, "-Xlog:gc*:time"),
    "PrintGCTimeStamps": (9, "-Xlog:gc*:uptime"),
    "PrintGCApplicationStoppedTime": (9, "-Xlog:safepoint"),
    "PrintGCApplicationConcurrentTime": (9, "-Xlog:safepoint"),
    "PrintHeapAtGC": (9, "-Xlog:gc+heap=debug"),
    "PrintTenuringDistribution": (9, "-Xlog:gc+age=trace"),
    "PrintAdaptiveSizePolicy": (9, "-Xlog:gc+ergo*=trace"),
    "PrintGCCause": (9, "-Xlog:gc"),
    "UseGCLogFileRotation": (9, "-Xlog:gc*:file=<f>::filecount=N,filesize=M"),
    "NumberOfGCLogFiles": (9, "-Xlog:...::filecount=N"),
    "GCLogFileSize": (9, "-Xlog:...::filesize=M"),
    "Xincgc": (9, "G1 (the default)"),
    "UseParNewGC": (10, "G1 (the default)"),
    "UseConcMarkSweepGC": (14, "G1 (the default) or ZGC"),
    "CMSInitiatingOccupancyFraction": (14, "G1 options"),
    "UseCMSInitiatingOccupancyOnly": (14, "G1 options"),
    "CMSClassUnloadingEnabled": (14, "nothing (G1 unloads classes)"),
    "CMSParallelRemarkEnabled": (14, "nothing"),
    "PermSize": (8, "-XX:MetaspaceSize"),
    "MaxPermSize": (8, "-XX:MaxMetaspaceSize (Flink sets it from jvm-metaspace.size)"),
    "illegal-access": (17, "--add-opens for the packages that need it"),
}

FACTS: Mapping[str, Mapping[str, object]] = {
    # release line ("1.20") or major version ("1") -> its newest patch release flinktune knows ("1.20.5"):
    # flinktune.versions.PATCH_RELEASES, the table the option catalog was generated from
    "newest_release": newest_patches(),
    # reporter class -> its factory class
    "reporter_factories": _REPORTER_FACTORIES,
    # JVM option -> {jdk: the JDK that removed it, instead: what to use there}
    "removed_jvm_flags": {name: {"jdk": jdk, "instead": instead}
                          for name, (jdk, instead) in _REMOVED_JVM_FLAGS.items()},
}
