"""Shared fixtures for the event tests: the real instruments from instruments/*.yaml."""

from __future__ import annotations

import pytest

from barb.instruments import Instrument, load_instrument


@pytest.fixture(scope="session")
def es() -> Instrument:
    return load_instrument("ES")


@pytest.fixture(scope="session")
def nq() -> Instrument:
    return load_instrument("NQ")


@pytest.fixture(scope="session")
def cl() -> Instrument:
    return load_instrument("CL")
