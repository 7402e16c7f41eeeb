"""Suite-wide rules: no real model requests, and the full sample data built once per machine."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from barb.settings import EngineSettings

# Real servers the tests start themselves (servers/postgres.py), importable by name.
sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))
from postgres import PostgresServer, running_postgres


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


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL on 127.0.0.1, started at first use and shared by the session."""
    with running_postgres() as server:
        yield server
