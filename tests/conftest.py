"""Suite-wide rules: no real model requests, and the full sample data built once per machine."""

from __future__ import annotations

import os

import pytest

from barb.settings import EngineSettings

# A real Redis server for the tests that need one (``redis_server``, ``redis_url``).
pytest_plugins = ["servers.redis"]


def pytest_configure(config: pytest.Config) -> None:
    # Real LLM adapters refuse any non-loopback URL; live tests opt in explicitly.
    os.environ["BARB_OFFLINE"] = "1"


@pytest.fixture(scope="session")
def sample_settings() -> EngineSettings:
    """The default data directory with the NQ and ES samples (generated if missing, ~3 s each)."""
    from barb.data.sample import write_samples

    settings = EngineSettings()
    write_samples(["NQ", "ES"], settings)  # leaves existing files alone
    return settings
