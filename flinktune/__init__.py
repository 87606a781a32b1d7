"""flinktune: a tuning advisor for Apache Flink's network stack."""

__version__ = "0.1.0"
