"""A move in points times a position, a condition or a count of contracts is still points
(p39b Q3): the equity of "buy when RSI(2) < 10, sell above the 5-day SMA", a cumsum of
coalesce(prev(pos), 0) * (close - prev(close)), was titled "equity now: -7,830.50 dollars"
(NQ's points: -156,610 USD a contract), and any if(cond, 1, 0) * (close - open) read as
dollars while 1 * (close - open) read as points. Dollars are points times the instrument's
point value (or a joined one's), or what a name says is usd. Expected values from pandas over
the fixture's minutes, never through Barb."""

from __future__ import annotations

import pytest
from asking import ask
from rth_bars import rth_daily

from barb.charts import chart_headline
from barb.column_units import column_unit

POSITION = {
    "map": {
        "pos": "if(bars_since(close < open) < coalesce(bars_since(close > open), 99999), 1, 0)",
        "pnl": "coalesce(prev(pos), 0) * (close - prev(close))",
    },
    "select": ["date()", "pos", "pnl"],
    "then": {"map": {"equity": "cumsum(pnl)"}, "select": ["last(equity) as total_pts"]},
}
NQ, WITH_ES = frozenset({20.0}), frozenset({20.0, 50.0})


def _unit(pnl: str, name: str = "pnl", point_values=None, **query) -> str | None:
    return column_unit(name, "daily", {"map": {**query, name: pnl}}, point_values)


@pytest.mark.parametrize("point_values", [None, NQ])
def test_a_position_times_a_move_is_points(point_values) -> None:
    """Old: dollars (a "pnl" scaled by a number), whatever the instrument."""
    for column in ("pnl", "equity", "total_pts"):
        assert column_unit(column, "daily", POSITION, point_values) == "points", column
    size = "if(volume > 1000, 2, 1)"  # contracts per row, a number the bars make
    for factor in ("if(close > open, 1, 0)", "(close > open)", "coalesce(prev(size), 0)"):
        pnl = f"{factor} * (close - open)"
        assert _unit(pnl, point_values=point_values, size=size) == "points", factor
        assert _unit(f"(close - open) * {factor}", "x", point_values, size=size) == "points"


def test_dollars_are_points_times_a_point_value() -> None:
    """With the point values known, a number that is one makes dollars (a joined
    instrument's too); another number (2 contracts, 2 ATRs) leaves points, unless the name
    says usd or ticks."""
    assert _unit("(close - open) * 20", "x", NQ) == "dollars"
    assert _unit("(close - open) * pv", "pnl", NQ, pv="20") == "dollars"
    assert _unit("(close - open) * 2 * 20", "pnl", NQ) == "dollars"
    joined = {"join": {"instrument": "ES"}, "map": {"x": "(es_close - es_open) * 50"}}
    assert column_unit("x", "daily", joined, WITH_ES) == "dollars"
    assert _unit("(close - open) * 2", "pnl", NQ) == "points"
    assert _unit("atr(14) * 1.5", "stop", NQ) == "points"
    assert _unit("(close - open) * 40", "pnl_usd", NQ) == "dollars"
    assert _unit("range * 4", "range_ticks", NQ) == "ticks"
    assert _unit("range / 0.25", "t", NQ) is None  # ticks only when a name says so
    # Unknown point values: the name decides, as before.
    assert _unit("(close - open) * 2", "pnl") == "dollars"
    assert _unit("(close - open) * 20", "x") is None


def test_the_equity_chart_of_a_position_is_in_points(engine_settings, minutes) -> None:
    days = rth_daily(minutes)
    up, down = (days["close"] > days["open"]).to_numpy(), (days["close"] < days["open"])
    held, pos = 0, []
    for is_up, is_down in zip(up, down.to_numpy(), strict=True):
        held = 1 if is_down else (0 if is_up else held)  # bought on a down day, out on an up
        pos.append(held)
    pnl = (days["close"].diff() * [0, *pos[:-1]]).fillna(0)
    total = pnl.sum()
    assert 0 < sum(pos) < len(pos) and total != 0  # the data holds trades

    result = ask(POSITION | {"session": "RTH", "from": "daily"}, engine_settings)
    assert result.summary.value == pytest.approx(total)
    head = chart_headline(result, "en")
    assert head is not None
    assert f"{total:,.2f} points".replace("-", "\u2212") in head, head
    assert "dollars" not in head
