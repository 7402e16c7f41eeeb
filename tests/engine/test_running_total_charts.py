"""A running total is drawn as a line through its rows, as a sum's running total is (p32e
Q26): the Mondays' equity built in a then stage was drawn as 850 red and green stems, and a
first stage's equity over 42 days as bars. Expected values from pandas over the bars built
here from the minute file, never through Barb."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from rth_bars import rth_daily

from barb import execute
from barb.charts import draw_chart


def _figure(query: dict, settings) -> Figure:
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    fig = draw_chart(result)
    assert fig is not None
    fig.canvas.draw()
    return fig


def _drawn_as_a_line(fig: Figure, expected: pd.Series) -> None:
    """One axes holding a line through ``expected``'s values, in order, and no stems or
    bars."""
    (ax,) = fig.axes
    (line,) = [line for line in ax.get_lines() if len(line.get_ydata()) == len(expected)]
    np.testing.assert_allclose(line.get_ydata(), expected.to_numpy())
    assert not [c for c in ax.collections if isinstance(c, LineCollection | PolyCollection)]


@pytest.mark.parametrize(
    "then",
    [{"map": {"equity": "cumsum(pnl)"}}, {"map": {"equity_usd": "cumsum(pnl) * 20"}}],
)
def test_an_equity_curve_over_picked_rows_in_a_then_stage_is_a_line(
    engine_settings, minutes, then: dict
) -> None:
    daily = rth_daily(minutes)
    mondays = daily[daily.index.dayofweek == 0]
    equity = (mondays["close"] - mondays["open"]).cumsum()
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"pnl": "close - open"},
        "where": "dayname() == 'Mon'",
        "select": ["date()", "pnl"],
        "then": then,
    }
    scale = 20 if "equity_usd" in then["map"] else 1
    _drawn_as_a_line(_figure(query, engine_settings), equity * scale)


def test_a_first_stages_equity_over_a_few_days_is_a_line_not_bars(engine_settings, minutes) -> None:
    daily = rth_daily(minutes)
    days = daily[(daily.index >= "2024-02-01") & (daily.index <= "2024-03-28")]
    assert len(days) <= 60  # the case: so few consecutive values were drawn as bars
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024-02-01:2024-03-28",
        "map": {"pnl": "close - open", "equity": "cumsum(pnl)"},
        "select": ["date()", "equity"],
    }
    _drawn_as_a_line(_figure(query, engine_settings), (days["close"] - days["open"]).cumsum())
