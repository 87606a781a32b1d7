"""Shared fixtures for the analysis tests: one local Spark session for the whole run.

Starting Spark costs seconds, so every Spark test in this folder shares this session-scoped
fixture (quinn/chispa style); tests build their inputs inline or from the real dumps.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from testkit import shared_dir

REPO = Path(__file__).resolve().parents[2]
REAL = shared_dir() / "data" / "real-flink-1.20"
SAMPLE_DATA = REPO / "sample_data"


def real_dump(name: str) -> Path:
    """The real Flink 1.20 dumps: from the shared data folder, else the copies in sample_data/."""
    for base in (REAL, SAMPLE_DATA):
        if (base / name / "metrics.parquet").is_file():
            return base / name
    pytest.skip(f"real dump {name} not available")


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    if shutil.which("java") is None:
        pytest.skip("Java is not installed")
    from flinktune.spark.session import build_session

    session = build_session("local[2]", {"spark.sql.shuffle.partitions": "2"})
    yield session
    session.stop()


@pytest.fixture(scope="session", autouse=True)
def _text_cache_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Text dumps converted to parquet (analysis/text_cache.py) go to a folder of this test run,
    not to the user's cache."""
    from flinktune.analysis import text_cache

    folder = tmp_path_factory.mktemp("text-dumps")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(text_cache, "folder", lambda: folder)
        yield


def rounded(doc: object) -> object:
    """Sums in another order differ in the last bit; the report's figures do not."""
    if isinstance(doc, float):
        return float(f"{doc:.9g}")
    if isinstance(doc, list):
        return [rounded(x) for x in doc]
    if isinstance(doc, dict):
        return {k: rounded(v) for k, v in doc.items()}
    return doc
