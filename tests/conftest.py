"""Suite-wide rules: no real model requests, and the full sample data built once per machine."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

# Real servers the tests start themselves (tests/servers/).
from servers.postgres import PostgresServer, running_postgres

from barb.settings import EngineSettings

_MAPPED_DIR = pytest.StashKey[str]()
# A real Redis server for the tests that need one (``redis_server``, ``redis_url``).
pytest_plugins = ["servers.redis"]


def pytest_configure(config: pytest.Config) -> None:
    # Real LLM adapters refuse any non-loopback URL; live tests opt in explicitly.
    os.environ["BARB_OFFLINE"] = "1"
    # The mapped Arrow copies of the data files go to a directory of this session, not beside
    # the shared sample in data/ (tests never write there); worker processes inherit it.
    if "BARB_MAPPED_DIR" not in os.environ:
        mapped = tempfile.mkdtemp(prefix="barb-mapped-")
        os.environ["BARB_MAPPED_DIR"] = mapped
        config.stash[_MAPPED_DIR] = mapped


def pytest_unconfigure(config: pytest.Config) -> None:
    mapped = config.stash.get(_MAPPED_DIR, None)
    if mapped is not None:
        shutil.rmtree(mapped, ignore_errors=True)
        os.environ.pop("BARB_MAPPED_DIR", None)


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
