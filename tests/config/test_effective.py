"""Effective values: key, then its fallback/deprecated keys in Flink's order, then the default.

Resolution order: Flink's ``Configuration.getRawValueFromOption`` (1.13 .. 2.x) tries the option key,
then each fallback key in declaration order; "new key wins if both set" ([FACTS] §1.1,
Configuration.java @M:1.20). Defaults: [FACTS] §1.6.
"""

from __future__ import annotations

import pytest

from flinktune.config.effective import EffectiveConfig
from flinktune.config.types import ConfigDocument, ConfigEntry, ConfigFormat
from flinktune.errors import ValueSyntaxError
from flinktune.units import Duration
from flinktune.versions import FlinkVersion

V = FlinkVersion
FILE = "conf/flink-conf.yaml"


def document(*pairs: tuple[str, object], fmt: ConfigFormat = ConfigFormat.FLAT) -> ConfigDocument:
    entries = tuple(
        ConfigEntry(key=key, value=value, raw=str(value), file=FILE, line=line)  # type: ignore[arg-type]
        for line, (key, value) in enumerate(pairs, start=1)
    )
    return ConfigDocument(path=FILE, format=fmt, entries=entries)


def test_defaults_without_a_document():
    config = EffectiveConfig(None, V(1, 16))
    # TMO @M:1.16: network.max 1g; @M:1.17: Long.MAX_VALUE bytes ([FACTS] §1.6).
    assert config.memory_bytes("taskmanager.memory.network.max") == 1024**3
    assert EffectiveConfig(None, V(1, 17)).memory_bytes("taskmanager.memory.network.max") == 2**63 - 1
    assert config.floating("taskmanager.memory.network.fraction") == pytest.approx(0.1)
    assert config.integer("taskmanager.network.memory.buffers-per-channel") == 2
    assert config.duration("execution.buffer-timeout.interval") == Duration(100 * 10**6)
    assert config.boolean("execution.buffer-timeout.enabled") is True
    assert config.string("taskmanager.network.compression.codec") == "LZ4"
    assert not config.is_set("taskmanager.memory.network.max")
    assert config.entry("taskmanager.memory.network.max") is None
    # No default: process.size must be configured ([FACTS] §1.3).
    assert config.memory_bytes("taskmanager.memory.process.size") is None


def test_deprecated_key_alone_provides_the_value():
    doc = document(("taskmanager.network.memory.fraction", "0.2"))
    config = EffectiveConfig(doc, V(1, 20))
    assert config.floating("taskmanager.memory.network.fraction") == pytest.approx(0.2)
    assert config.is_set("taskmanager.memory.network.fraction")
    entry = config.entry("taskmanager.memory.network.fraction")
    assert entry is not None and (entry.key, entry.file, entry.line) == (
        "taskmanager.network.memory.fraction", FILE, 1)


@pytest.mark.parametrize("new_first", [True, False])
def test_new_key_wins_over_deprecated_key_whatever_the_order(new_first):
    pairs = [("taskmanager.memory.network.max", "2g"), ("taskmanager.network.memory.max", "4g")]
    doc = document(*(pairs if new_first else pairs[::-1]))
    config = EffectiveConfig(doc, V(1, 20))
    assert config.memory_bytes("taskmanager.memory.network.max") == 2 * 1024**3
    assert config.entry("taskmanager.memory.network.max").key == "taskmanager.memory.network.max"
    # Asking by the alias resolves to the same option.
    assert config.memory_bytes("taskmanager.network.memory.max") == 2 * 1024**3


def test_last_entry_of_a_key_wins():
    doc = document(("parallelism.default", "4"), ("parallelism.default", "8"))
    config = EffectiveConfig(doc, V(1, 20))
    assert config.integer("parallelism.default") == 8
    assert config.entry("parallelism.default").line == 2


def test_buffer_timeout_alias_follows_the_version():
    doc = document(("execution.buffer-timeout", "10 ms"))
    # 1.15: execution.buffer-timeout is the option itself.
    assert EffectiveConfig(doc, V(1, 15)).duration("execution.buffer-timeout") == Duration(10 * 10**6)
    assert EffectiveConfig(doc, V(1, 15)).duration("execution.buffer-timeout.interval") is None
    # 1.18+: deprecated key of execution.buffer-timeout.interval (ExecutionOptions @M:1.18).
    config = EffectiveConfig(doc, V(1, 18))
    assert config.duration("execution.buffer-timeout.interval") == Duration(10 * 10**6)
    assert config.entry("execution.buffer-timeout.interval").key == "execution.buffer-timeout"


def test_removed_key_is_not_read_by_2_0():
    doc = document(("taskmanager.network.memory.buffers-per-channel", "4"))
    assert EffectiveConfig(doc, V(1, 20)).integer("taskmanager.network.memory.buffers-per-channel") == 4
    removed = EffectiveConfig(doc, V(2, 0))
    assert removed.integer("taskmanager.network.memory.buffers-per-channel") is None
    assert not removed.is_set("taskmanager.network.memory.buffers-per-channel")
    assert removed.status("taskmanager.network.memory.buffers-per-channel").kind == "removed"


def test_bad_value_raises_with_file_and_line():
    doc = document(("parallelism.default", "2"), ("taskmanager.memory.network.max", "1.5g"))
    config = EffectiveConfig(doc, V(1, 20))
    with pytest.raises(ValueSyntaxError) as caught:
        config.memory_bytes("taskmanager.memory.network.max")
    assert caught.value.file == FILE and caught.value.line == 2
    assert "taskmanager.memory.network.max" in caught.value.one_line()


def test_bad_boolean_and_overflowing_integer():
    doc = document(("execution.buffer-timeout.enabled", "yes"), ("parallelism.default", "3000000000"))
    config = EffectiveConfig(doc, V(1, 20))
    with pytest.raises(ValueSyntaxError) as caught:
        config.boolean("execution.buffer-timeout.enabled")
    assert caught.value.line == 1
    with pytest.raises(ValueSyntaxError):
        config.integer("parallelism.default")   # Integer option: Integer.parseInt overflows


def test_long_options_take_64_bit_values():
    key = "taskmanager.network.hybrid-shuffle.num-retained-in-memory-regions-max"  # Long ([FACTS] §1.2)
    config = EffectiveConfig(document((key, "3000000000")), V(1, 18))
    assert config.status(key).spec.type == "Long"
    assert config.integer(key) == 3_000_000_000


def test_yaml_typed_values():
    doc = document(("taskmanager.memory.network.min", 134217728), ("execution.buffer-timeout.interval", 5),
                   ("execution.buffer-timeout.enabled", False), ("taskmanager.memory.network.fraction", 0.15),
                   fmt=ConfigFormat.YAML)
    config = EffectiveConfig(doc, V(2, 0))
    assert config.memory_bytes("taskmanager.memory.network.min") == 128 * 1024**2   # plain number = bytes
    assert config.duration("execution.buffer-timeout.interval") == Duration(5 * 10**6)  # plain = ms
    assert config.boolean("execution.buffer-timeout.enabled") is False
    assert config.floating("taskmanager.memory.network.fraction") == pytest.approx(0.15)


def test_map_option_from_prefixed_keys():
    doc = document(("kubernetes.jobmanager.annotations.team", "data"),
                   ("kubernetes.jobmanager.annotations.tier", "gold"))
    config = EffectiveConfig(doc, V(1, 20))
    resolved = config.resolve("kubernetes.jobmanager.annotations")
    assert resolved.value == {"team": "data", "tier": "gold"}
    assert resolved.entry.line == 1


def test_enum_and_family_keys():
    doc = document(("taskmanager.network.compression.codec", "zstd"), ("metrics.reporter.prom.port", "9249"))
    config = EffectiveConfig(doc, V(1, 20))
    assert config.enum("taskmanager.network.compression.codec") == "ZSTD"
    # Outside the exact catalog the file's value is still available, without a default.
    assert config.integer("metrics.reporter.prom.port") == 9249
    assert config.string("metrics.reporter.prom.unknown-param") is None
