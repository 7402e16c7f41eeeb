"""Fixtures of the data layer's tests: a private data directory and short generated ranges."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from barb.data import mapped
from barb.data.sample import generate_sample
from barb.instruments import Instrument, load_instrument
from barb.settings import EngineSettings

# Short ranges keep the suite fast; the multi-year one covers three ES anchors.
SUMMER = (dt.date(2024, 6, 1), dt.date(2024, 7, 15))
YEARS = (dt.date(2018, 6, 1), dt.date(2021, 6, 30))


@pytest.fixture
def settings(tmp_path: Path) -> EngineSettings:
    return EngineSettings(data_dir=tmp_path / "data")


@pytest.fixture(autouse=True)
def _forget_loaded_files() -> Iterator[None]:
    yield
    mapped.clear_cache()


@pytest.fixture(scope="session")
def summer() -> tuple[dt.date, dt.date]:
    """The range of ``nq_summer``: early close, Juneteenth, Independence Day."""
    return SUMMER


@pytest.fixture(scope="session")
def years() -> tuple[dt.date, dt.date]:
    """The range of ``es_years``."""
    return YEARS


@pytest.fixture(scope="session")
def nq() -> Instrument:
    return load_instrument("NQ")


@pytest.fixture(scope="session")
def nq_summer(nq: Instrument) -> pd.DataFrame:
    return generate_sample(nq, *SUMMER)


@pytest.fixture(scope="session")
def es_years() -> pd.DataFrame:
    return generate_sample(load_instrument("ES"), *YEARS)
