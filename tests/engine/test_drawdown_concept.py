"""The drawdown concept's episode query (peak, depth, trough, recovery, calendar and trading
days under water, falls of a given size), which no concept described and a model had to
invent (p47a Q2/Q3/Q9/Q19), against pandas' episodes over the hand-made bars' RTH days: an
episode begins at each close at a new high (close >= its running high), recovers on the
next episode's first day, and is under water on the days between."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from rth_bars import rth_daily

from barb import execute
from barb.instruments import load_instrument
from barb.reference import describe_concept
from barb.session_concepts import session_concepts
from barb.session_times import SessionTimes


def _episodes(close: pd.Series) -> pd.DataFrame:
    """Each episode's peak, its close, depth in percent, trough, last day under water,
    trading days under water, recovery date and calendar days to it (NaT/NaN: not yet)."""
    episode = (close >= close.cummax()).cumsum()
    rows = []
    for _, closes in close.groupby(episode):
        depth = closes / closes.iloc[0] - 1
        rows.append(
            {
                "peak": closes.index[0],
                "peak_close": closes.iloc[0],
                "max_dd": depth.min() * 100,
                "trough": depth.idxmin(),
                "days_under": len(closes) - 1,
            }
        )
    table = pd.DataFrame(rows)
    table["recovered"] = table["peak"].shift(-1)
    table["calendar_days"] = (table["recovered"] - table["peak"]).dt.days
    return table


@pytest.mark.parametrize("fall", [0, 0.5])
def test_the_episode_query_gives_pandas_episodes(engine_settings, minutes, fall: float) -> None:
    """Every column of the falls of at least ``fall`` percent, the still-running last one's
    recovery empty; the concept says what the columns are."""
    concept = session_concepts()["drawdown"]
    query = concept.text_for(SessionTimes(load_instrument("NQ"))).query
    assert query["then"]["where"] == "max_dd <= -10"
    query = {**query, "then": {**query["then"], "where": f"max_dd <= -{fall}"}}
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    want = _episodes(rth_daily(minutes)["close"])
    want = want[want["max_dd"] <= -fall].reset_index(drop=True)
    got = result.table
    assert len(got) == len(want) >= 2
    for column in ("peak", "trough", "recovered"):
        assert pd.to_datetime(got[column]).tolist() == want[column].tolist(), column
    for column in ("peak_close", "max_dd", "calendar_days", "days_under"):
        np.testing.assert_allclose(got[column].astype(float), want[column].astype(float))
    text = describe_concept("просадка")
    assert text.startswith("Drawdown") and "days_between(peak, next(peak))" in text
    assert describe_concept("equity drawdown").startswith("Backtest statistics")
