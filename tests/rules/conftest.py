"""Rule tests keep the validated-rules cache in a temporary folder, never in the user's home (one per
module: a session-wide setting leaked into later tests, whose CLI then printed a cache note)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="module")
def _rules_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    mp = pytest.MonkeyPatch()
    mp.setenv("FLINKTUNE_CACHE_DIR", str(tmp_path_factory.mktemp("rules-cache")))
    yield
    mp.undo()
