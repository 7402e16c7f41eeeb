"""A few days of minute bars in a temporary data directory, for worker processes to load fast.

Workers are spawned: they read ``BARB_DATA_DIR`` from the environment when they start, so the
fixture sets it before a pool is created.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from small_bars import write_small_data


@pytest.fixture(scope="session")
def small_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_small_data(tmp_path_factory.mktemp("pool_data"))


@pytest.fixture
def small_data(small_data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BARB_DATA_DIR", str(small_data_dir))
    return small_data_dir
