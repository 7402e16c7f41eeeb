"""Fixtures for the Barb Script tests; the frames themselves are built in script_frames.py."""

from __future__ import annotations

import pandas as pd
import pytest
from script_frames import make_context, make_daily, make_intraday

from barb.script.context import EvalContext


@pytest.fixture
def daily() -> pd.DataFrame:
    return make_daily()


@pytest.fixture
def ctx(daily: pd.DataFrame) -> EvalContext:
    return make_context(daily)


@pytest.fixture
def intraday_ctx() -> EvalContext:
    return make_context(make_intraday(), timeframe="1h")
