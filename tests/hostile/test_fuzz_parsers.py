"""Seeded fuzzing of every parser of untrusted text (the small set; benchmarks/fuzz_all.py runs
100,000+ cases per parser).

Property: a result or a FlinktuneError with a one-line message, never another exception. Each
target gets three kinds of input from hypothesis (derandomized, so a run is repeatable): mutations
of real inputs (the config corpus, bundled rules, sample scenarios, real job plans), token soup
made of the syntax every parser cares about, and arbitrary unicode text.
"""

from __future__ import annotations

import random
from pathlib import Path

import hostile_inputs as H
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flinktune.errors import FlinktuneError

_SEEDS: dict[str, list[str]] = {}


def _seeds(name: str) -> list[str]:
    if name not in _SEEDS:
        _SEEDS[name] = H.TARGETS[name].seeds()
    return _SEEDS[name]


def inputs(name: str) -> st.SearchStrategy[str]:
    mutated = st.integers(min_value=0, max_value=2**32 - 1).map(
        lambda seed: H.generate(random.Random(seed), _seeds(name)))
    soup = st.lists(st.sampled_from(H.TOKENS), max_size=40).map("".join)
    anything = st.text(max_size=300)
    return st.one_of(mutated, mutated, soup, anything)


# Few examples per parser: the normal suite stays fast; benchmarks/fuzz_all.py does the volume.
FAST = settings(max_examples=60, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _property(name: str, text: str) -> None:
    # Anything but a clean FlinktuneError propagates and fails the test with its traceback.
    H.call(H.TARGETS[name].run, text)


@pytest.mark.parametrize("name", sorted(H.TARGETS))
def test_every_seed_input_is_accepted_or_cleanly_refused(name: str) -> None:
    outcomes = [H.call(H.TARGETS[name].run, seed) for seed in _seeds(name)]
    assert outcomes, f"no seed inputs for {name}"
    if name not in ("baseline", "project_yaml", "project_toml", "template", "values"):
        # Real inputs are real: most of them must parse (catches a parser that refuses everything).
        assert outcomes.count("ok") >= len(outcomes) // 2, (name, outcomes)


@pytest.mark.parametrize("name", sorted(H.TARGETS))
def test_fuzzed_input_yields_a_result_or_one_line_error(name: str) -> None:
    @FAST
    @given(inputs(name))
    def run(text: str) -> None:
        _property(name, text)

    run()


# Cases the fuzzer found (benchmarks/results/fuzz.md) or that target a known weak spot;
# each was a crash (another exception) before its fix.
REGRESSIONS = [
    ("template", "{x:int}"),                                   # float('inf') -> OverflowError
    ("template", "{y:memory}"),                                # NaN -> ValueError
    ("template", "{x:duration} {y:percent} {x:flink_memory}"),
    ("scenario", "a: !!int for-1\n"),                          # PyYAML constructor ValueError
    ("scenario", "name: x\nduration: !!timestamp 2020-99-99\n"),
    ("scenario", "a: " + "[" * 3000 + "]" * 3000 + "\n"),      # RecursionError in PyYAML's composer
    ("scenario", "a: " + "{b: " * 1200 + "1" + "}" * 1200),
    ("scenario", "a: !!int\n"),                              # bare tag: IndexError in PyYAML
    # capacity .inf passed validation, then the simulator died on int(inf): OverflowError.
    ("scenario", (Path(H.REPO) / "sample_configs/scenarios/healthy.yaml").read_text(encoding="utf-8")
     .replace("capacity: 200000", "capacity: .inf")),
    ("rule_file", "code: !!int for-1\n"),
    ("rule_file", "!!int"),
    ("rule_file", "code: !!timestamp 2020-13-01\n"),
    ("project_yaml", "select: !!int x\n"),
    ("project_yaml", "a: " + "{b: " * 3000 + "1" + "}" * 3000),
    ("project_toml", "tool = 1\n"),                            # AttributeError: int has no .get
    ("project_toml", "a = " + "[" * 3000 + "]" * 3000),       # RecursionError in tomllib
    ("plan", '{"nodes": [{"id": 1, "parallelism": 1e999}]}'),  # int(inf) -> OverflowError
    ("plan", '{"nodes": [{"id": 1, "parallelism": Infinity}]}'),
    ("plan", '{"nodes": [{"id": 1, "parallelism": ' + "9" * 5000 + "}]}"),  # int digit limit ValueError
    ("plan", "[" * 100_000 + "]" * 100_000),                   # RecursionError in json
    ("baseline", "9" * 5000),
    ("baseline", "[" * 100_000 + "]" * 100_000),
    ("yaml", "a: " + "[" * 1500 + "]" * 1500 + "\n"),
    ("k8s", "apiVersion: v1\nkind: ConfigMap\ndata:\n  config.yaml: |\n    a: !!int x\n"),
    ("condition", "2 ** 64 ** 64"),
    ("condition", "'x' * 10000000"),
    ("condition", "[1] + [1]" + " + [1]" * 60),
    ("memory", "9" * 5000 + "b"),
    ("duration", "9" * 5000 + " d"),
    ("values", "9" * 5000),
    ("profile", "rtt: " + "1" * 400 + "\n"),                   # float(huge int) -> OverflowError
    ("profile", "memory: 2g\nrecord-size: " + "1" * 400 + "\n"),
    ("profile", "bandwidth: " + "1" * 3900 + "x\n"),           # quadratic regex backtracking (5 s)
    ("profile", "bandwidth: .inf\n"),
]


@pytest.mark.parametrize(("name", "text"), REGRESSIONS,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(REGRESSIONS)])
def test_regressions_found_by_fuzzing(name: str, text: str) -> None:
    outcome = H.call(H.TARGETS[name].run, text)
    assert outcome in ("ok", "error")


def test_an_infinite_capacity_is_refused_before_the_simulator_runs() -> None:
    from flinktune.errors import ScenarioError
    from flinktune.sim.scenario import scenario_from_text

    text = (Path(H.REPO) / "sample_configs/scenarios/healthy.yaml").read_text(encoding="utf-8")
    for bad in ("capacity: .inf", "capacity: .nan"):
        with pytest.raises(ScenarioError, match="finite"):
            scenario_from_text(text.replace("capacity: 200000", bad), "s.yaml")


@pytest.mark.parametrize("name", ["scenario", "rule_file", "project_yaml", "plan", "baseline"])
def test_bad_input_errors_are_flinktune_errors_naming_the_problem(name: str) -> None:
    bad = {"scenario": "a: !!int nope\n", "rule_file": "code: !!int nope\n",
           "project_yaml": "x: !!int nope\n",
           "plan": '{"nodes": [{"id": 1, "parallelism": 1e999}]}', "baseline": "9" * 5000}[name]
    target = H.TARGETS[name].run
    if name == "rule_file":
        from flinktune.rules.loader import RuleText, compile_rule

        rule, problems = compile_rule(RuleText("user/r.yaml", bad.encode()))
        assert rule is None and problems and "invalid YAML" in problems[0]
        return
    with pytest.raises(FlinktuneError) as info:
        target(bad)
    H.check_error(info.value)
