"""Golden and coherence tests of ``recommend`` on every sample config (with its profile).

Coherence (issue 6): the recommended config passes ``flinktune lint`` with no error, running
recommend on its own output proposes nothing more, no change names a key the target version lacks,
and the recommended network memory covers what Flink requests at the stated parallelism (checked
here with the model directly: model.memory + model.buffers, not through the advisor).

Regenerate the golden reports with ``FLINKTUNE_UPDATE_GOLDEN=1 pytest tests/advise``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from advisehelpers import GOLDEN, PROFILES, REPO, SAMPLE_PROFILES, SAMPLES
from typer.testing import CliRunner

from flinktune.advise import Environment
from flinktune.advise.engine import Recommendation, recommend_text
from flinktune.cli.app import app
from flinktune.config.catalog import load_catalog
from flinktune.config.effective import EffectiveConfig
from flinktune.config.reader import read_config_text
from flinktune.findings import Severity
from flinktune.lint import LintOptions, lint_paths
from flinktune.lint.suppress import parse_directives
from flinktune.model import buffers as mb
from flinktune.model.memory import derive_taskmanager_memory, taskmanager_memory_options
from flinktune.situation import detect_version
from flinktune.situation.deployment import deployment_spec
from flinktune.situation.environment import load_profile
from flinktune.units import format_memory

CATALOG = load_catalog()


def _env(sample: str) -> Environment:
    profile = SAMPLE_PROFILES[sample]
    env = Environment()
    return env.with_values(load_profile(PROFILES / profile), "profile") if profile else env


def _recommend(text: str, path: str, env: Environment) -> list[Recommendation]:
    directive = parse_directives(text).flink_version

    def version_of(document):  # type: ignore[no-untyped-def]
        return detect_version(document, flag=env.flink_version, directive=directive)[0]

    return recommend_text(text, path, env, version_of=version_of, catalog=CATALOG)


@pytest.fixture(scope="module")
def results() -> dict[str, tuple[str, list[Recommendation]]]:
    out = {}
    for sample in SAMPLE_PROFILES:
        text = (SAMPLES / sample).read_text(encoding="utf-8")
        out[sample] = (text, _recommend(text, f"sample_configs/{sample}", _env(sample)))
    return out


def test_every_sample_is_covered() -> None:
    shipped = {p.name for p in SAMPLES.glob("*.yaml")}
    assert shipped == set(SAMPLE_PROFILES)


@pytest.mark.parametrize("sample", sorted(SAMPLE_PROFILES))
def test_golden_report(sample: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's text report (table, reasons, model numbers, diff) matches the stored one."""
    monkeypatch.chdir(REPO)
    args = ["recommend", f"sample_configs/{sample}"]
    if SAMPLE_PROFILES[sample]:
        args += ["--profile", f"sample_configs/profiles/{SAMPLE_PROFILES[sample]}"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    golden = GOLDEN / (sample + ".txt")
    if os.environ.get("FLINKTUNE_UPDATE_GOLDEN"):
        golden.write_text(result.stdout, encoding="utf-8")
    assert result.stdout == golden.read_text(encoding="utf-8")


def _lint_errors(text: str, name: str, rec: Recommendation, tmp_path: Path) -> list[str]:
    target = tmp_path / name
    target.write_text(text, encoding="utf-8")
    env = (("parallelism", rec.job.parallelism), ("slots", rec.job.slots))
    result = lint_paths([str(target)], LintOptions(flink_version=rec.version, env=env))
    assert not result.problems, result.problems
    return [f"{f.code} {f.message}" for f in result.findings if f.severity is Severity.ERROR]


@pytest.mark.parametrize("sample", sorted(SAMPLE_PROFILES))
def test_recommended_config_passes_lint(sample: str, results, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text, recs = results[sample]
    after = _lint_errors(recs[-1].new_text, sample, recs[-1], tmp_path)
    # No error at all on what recommend owns (TaskManager memory, network stack); anything else
    # (the JobManager's memory, FTC051) was already in the input and is not recommend's to change.
    before = {e.split()[0] for e in _lint_errors(text, sample, recs[-1], tmp_path)}
    assert [e for e in after if e.split()[0] not in before or e.split()[0] in ("FTC030", "FTC050")] == []


def test_lint_errors_in_originals_are_fixed(results, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The large batch job fails lint's network check before and passes after (the test can fail)."""
    text, recs = results["large-batch.flink-conf.yaml"]
    before = _lint_errors(text, "large-batch.flink-conf.yaml", recs[-1], tmp_path)
    assert any(e.startswith("FTC030") for e in before)


@pytest.mark.parametrize("sample", sorted(SAMPLE_PROFILES))
def test_idempotent(sample: str, results) -> None:  # type: ignore[no-untyped-def]
    _text, recs = results[sample]
    again = _recommend(recs[-1].new_text, f"sample_configs/{sample}", _env(sample))
    assert [c.key for r in again for c in r.changes] == []
    assert again[-1].new_text == recs[-1].new_text


@pytest.mark.parametrize("sample", sorted(SAMPLE_PROFILES))
def test_never_names_a_key_the_version_lacks(sample: str, results) -> None:  # type: ignore[no-untyped-def]
    _text, recs = results[sample]
    for rec in recs:
        for change in rec.changes:
            if change.action == "manual":
                assert change.key.startswith("spec.")
                continue
            if change.action in ("set", "rename"):
                key = change.new_key if change.action == "rename" else change.key
                status = CATALOG.lookup(key, rec.version)
                # An option, or (execution.buffer-timeout before 1.18) a deprecated alias the version reads.
                assert status.kind in ("option", "deprecated-alias"), (key, status.kind)
                assert status.removed_in is None or status.removed_in > rec.version, (key, status.removed_in)
        # And every key the recommended file sets is one the version reads.
        for document in read_config_text(rec.new_text, rec.path):
            for entry in document.entries:
                if entry.key.startswith(("taskmanager.network.", "taskmanager.memory.", "execution.buffer")):
                    assert CATALOG.lookup(entry.key, rec.version).kind != "removed", entry.key


def _model_fit(text: str, path: str, rec: Recommendation) -> mb.NetworkFit:
    """Independently of the advisor: Flink's network memory and the worst-case demand at the job's
    parallelism (model.memory, model.buffers)."""
    document = read_config_text(text, path)[0]
    eff = EffectiveConfig(document, rec.version, CATALOG)
    source = {k: v for k, v in document.values().items()
              if CATALOG.lookup(k, rec.version).kind in ("option", "deprecated-alias")}
    spec = deployment_spec(text, document)
    if spec.taskmanager_memory_bytes:
        source["taskmanager.memory.process.size"] = format_memory(spec.taskmanager_memory_bytes)
    # Pre-1.10 heap keys, as Flink's start-up maps them (standalone: total Flink memory).
    from flinktune.situation.legacy import legacy_heap_entries

    mapped, _notes = legacy_heap_entries(document, rec.version, "standalone", lambda key: key in source)
    source.update({e.key: e.value for e in mapped})
    memory = derive_taskmanager_memory(taskmanager_memory_options(source), rec.version)

    def given(key: str) -> int | None:
        known = CATALOG.lookup(key, rec.version).kind == "option"
        return eff.integer(key) if known and eff.is_set(key) else None

    tunable = rec.version.major < 2
    settings = mb.buffer_settings(
        rec.version, buffers_per_channel=given(mb.KEY_BPC) if tunable else None,
        floating_per_gate=given(mb.KEY_FPG) if tunable else None,
        sort_shuffle_min_parallelism=given(mb.KEY_SORT_MIN_PAR) if tunable else None,
        sort_shuffle_min_buffers=given(mb.KEY_SORT_MIN_BUF))
    if rec.job.workload == "batch":
        # A blocking batch job holds one stage's buffers at a time (model.batch, issue 19): the bound
        # is its busiest stage, and Flink's numbers those of the first stage that does not fit.
        from flinktune.model.batch import stage_bound

        job = rec.job
        bound = stage_bound(job.parallelism, job.slots, job.taskmanagers, settings,
                            inputs=1 if job.exchanges <= 1 else 2)
        return bound.fit(memory.network_buffers, memory.segment_bytes)
    kind = mb.PartitionType.PIPELINED_BOUNDED
    demand = mb.worst_case_taskmanager_buffers(rec.job.parallelism, rec.job.slots, settings,
                                               exchanges=rec.job.exchanges, partition_type=kind)
    return mb.fits(demand, memory.network_buffers, memory.segment_bytes)


@pytest.mark.parametrize("sample", sorted(SAMPLE_PROFILES))
def test_recommended_network_memory_covers_flinks_request(sample: str, results) -> None:  # type: ignore[no-untyped-def]
    _text, recs = results[sample]
    rec = recs[-1]
    fit = _model_fit(rec.new_text, rec.path, rec)
    assert fit.fits, fit.message
    assert fit.total_buffers >= fit.required


def test_original_shortfalls_are_reported_with_flinks_numbers(results) -> None:  # type: ignore[no-untyped-def]
    short = {}
    for sample, (text, recs) in results.items():
        rec = recs[0]
        if rec.original_memory_error:
            continue
        fit = _model_fit(text, rec.path, rec)
        if not fit.fits:
            short[sample] = fit
            assert rec.original_fit is not None and not rec.original_fit.fits
            assert rec.original_fit.required == fit.required
            # Flink's own sentence, with the numbers it would print for this TaskManager.
            assert rec.original_fit.message is not None
            assert rec.original_fit.message.startswith("Insufficient number of network buffers: required ")
            printed = f"currently set to {fit.total_buffers} of {fit.segment_bytes} bytes"
            assert printed in rec.original_fit.message
    assert set(short) == {"large-batch.flink-conf.yaml", "flinkdeployment.yaml"}


def test_shortfall_is_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(app, ["recommend", "sample_configs/flinkdeployment.yaml", "--profile",
                                      "sample_configs/profiles/flinkdeployment.yaml"])
    assert "Flink would fail the job with: Insufficient number of network buffers" in result.stdout
    assert "currently set to 4096 of 32768 bytes each" in result.stdout
