"""Fixtures for the recommend tests; makes ``advisehelpers`` importable (importlib import mode)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """One local Spark session for the dump tests in this folder (starting one costs seconds)."""
    if shutil.which("java") is None:
        pytest.skip("Java is not installed")
    from flinktune.spark.session import build_session

    session = build_session("local[2]", {"spark.sql.shuffle.partitions": "2"})
    yield session
    session.stop()
