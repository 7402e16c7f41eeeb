"""What a chart of rows over time draws and headlines (p33a Q25, Q10, Q20).

- A ratio of two prices the query made ("ratio": "close / es_close") is drawn and headlined,
  not the other market's plain close: the chart headlined "es_close last: 6,814.25", drew
  es_close as bars from zero and left the ratio out; alone, the ratio was bars from zero, and
  its swing from 3.58 to 3.23 and back to 3.63 looked flat. It is a line on an axis fitted
  to it, as prices are.
- An equity curve is headlined by where it ends, not by its last day's pnl.
- A chart of a day's candles is headlined by its high, low and close, not by the last
  bar's volume.

Two hand-made markets ("NQ", "ES": RTH minutes of each weekday of 2024's first quarter,
random walks apart) in a data directory of this module's own; expected values from pandas
over those minutes, never through Barb.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from asking import as_read
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from small_bars import bars_from_closes, write_minutes

from barb import execute
from barb.charts import chart_headline, draw_chart
from barb.result import Result
from barb.settings import EngineSettings

FIRST, LAST = dt.date(2024, 1, 2), dt.date(2024, 3, 28)
PRICES = {"NQ": (17000.0, 1), "ES": (4800.0, 2)}  # a start and a seed
WEEKS = "2024-01-08:2024-03-22"


def _minutes(start: float, seed: int) -> pd.DataFrame:
    """Every RTH minute (09:30-16:59) of each weekday, prices on a quarter-point tick."""
    rng = np.random.default_rng(seed)
    days = pd.bdate_range(FIRST, LAST)
    stamps = [pd.date_range(d + pd.Timedelta(minutes=570), periods=450, freq="1min") for d in days]
    ts = stamps[0].append(stamps[1:])
    close = np.round(start * np.exp(np.cumsum(rng.normal(0, 0.0006, len(ts)))) * 4) / 4
    return bars_from_closes(ts, close, rng.integers(1, 400, len(ts)))


@pytest.fixture(scope="module")
def markets() -> dict[str, pd.DataFrame]:
    return {symbol: _minutes(*PRICES[symbol]) for symbol in PRICES}


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory, markets) -> EngineSettings:
    settings = EngineSettings(data_dir=Path(tmp_path_factory.mktemp("two_markets")))
    for symbol, minutes in markets.items():
        write_minutes(minutes, symbol, settings, "hand-made RTH bars")
    return settings


def _daily(minutes: pd.DataFrame) -> pd.DataFrame:
    day = minutes["timestamp"].dt.normalize()
    return minutes.groupby(day).agg(
        open=("open", "first"), high=("high", "max"), low=("low", "min"), close=("close", "last")
    )


def _weekly_closes(minutes: pd.DataFrame) -> pd.Series:
    """Each whole week's last close in ``WEEKS``, by its Monday."""
    daily = _daily(minutes)
    monday = daily.index - pd.to_timedelta(daily.index.weekday, unit="D")
    closes = daily["close"].groupby(monday).last()
    return closes[(closes.index >= "2024-01-08") & (closes.index <= "2024-03-18")]


def _run(query: dict, settings: EngineSettings) -> Result:
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


def _figure(result: Result) -> Figure:
    fig = draw_chart(result)
    assert fig is not None
    fig.canvas.draw()
    return fig


def _points(value: float) -> str:
    return f"{value:,.2f}".replace("-", "\u2212")


RATIO = {
    "session": "RTH",
    "from": "weekly",
    "period": WEEKS,
    "join": {"instrument": "ES"},
    "map": {"ratio": "close / es_close"},
}


def _ratio(markets) -> pd.Series:
    return _weekly_closes(markets["NQ"]) / _weekly_closes(markets["ES"])


def _drawn_as_a_fitted_line(ax, expected: pd.Series) -> None:
    """A line through ``expected`` in order, no bars, and an axis that does not reach 0."""
    lines = [ln for ln in ax.get_lines() if len(ln.get_ydata()) == len(expected)]
    assert len(lines) == 1
    np.testing.assert_allclose(np.asarray(lines[0].get_ydata(), dtype=float), expected)
    assert not [c for c in ax.collections if isinstance(c, PolyCollection)]
    low, high = ax.get_ylim()
    assert 0 < low <= expected.min() and expected.max() <= high
    assert high - low < expected.max()  # fitted to the ratio's swing, not from zero


def test_the_ratio_selected_beside_es_close_is_drawn_and_headlined(settings, markets) -> None:
    ratio = _ratio(markets)
    assert ratio.max() / ratio.min() > 1.01  # the case: a ratio that moves
    result = _run({**RATIO, "select": ["close", "es_close", "ratio"]}, settings)
    fig = _figure(result)
    price, lower = fig.axes
    np.testing.assert_allclose(
        np.asarray(price.get_lines()[0].get_ydata(), dtype=float), _weekly_closes(markets["NQ"])
    )
    _drawn_as_a_fitted_line(lower, ratio)
    assert "es_close" in lower.get_xlabel()  # not drawn, and said so
    last = ratio.index[-1]
    assert (
        chart_headline(result) == f"ratio last: {as_read(ratio.iloc[-1])} (week of {last:%Y-%m-%d})"
    )


@pytest.mark.parametrize("select", [["ratio"], ["ratio", "close"]])
def test_a_ratio_of_two_prices_is_a_line_off_zero(settings, markets, select) -> None:
    fig = _figure(_run({**RATIO, "select": select}, settings))
    _drawn_as_a_fitted_line(fig.axes[-1], _ratio(markets))


def test_a_change_is_still_bars_from_zero(settings, markets) -> None:
    """A weekly return in percent is a change around zero: bars, as before."""
    query = {**RATIO, "map": {"ret": "(close / prev(close) - 1) * 100"}, "select": ["ret"]}
    fig = _figure(_run(query, settings))
    (ax,) = fig.axes
    closes = _weekly_closes(markets["NQ"])
    daily = _daily(markets["NQ"])
    before = daily["close"][daily.index < "2024-01-08"].iloc[-1]
    expected = (closes / closes.shift().fillna(before) - 1) * 100
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    heights = [p.vertices[2, 1] - p.vertices[0, 1] for p in bars.get_paths()]
    np.testing.assert_allclose(heights, expected)


def test_an_equity_curve_is_headlined_by_where_it_ends(settings, markets) -> None:
    daily = _daily(markets["NQ"])
    days = daily[(daily.index >= "2024-01-02") & (daily.index <= "2024-03-28")]
    pnl = days["close"] - days["open"]
    equity = pnl.cumsum()
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024-01-02:2024-03-28",
        "map": {"pnl": "close - open", "equity": "cumsum(pnl)"},
        "select": ["pnl", "equity"],
    }
    headline = chart_headline(_run(query, settings))
    last = f"{equity.index[-1]:%Y-%m-%d}"
    assert headline == f"equity last: {_points(equity.iloc[-1])} points ({last})"


def test_a_days_candles_are_headlined_by_its_high_low_and_close(settings, markets) -> None:
    """ "Show me 2024-02-14 in 5-minute bars": the day, not its last bar's volume."""
    minutes = markets["NQ"]
    day = minutes[minutes["timestamp"].dt.normalize() == "2024-02-14"]
    query = {
        "session": "RTH",
        "from": "5m",
        "period": "2024-02-14",
        "select": ["open", "high", "low", "close", "volume"],
    }
    result = _run(query, settings)
    high, low, close = day["high"].max(), day["low"].min(), day["close"].iloc[-1]
    assert chart_headline(result) == (
        f"high = {_points(high)} · low = {_points(low)} · close = {_points(close)} (2024-02-14)"
    )
    price, _ = _figure(result).axes  # the candles, and the volume under them
    (bodies,) = [c for c in price.collections if isinstance(c, PolyCollection)]
    assert len(bodies.get_paths()) == len(day) // 5


def test_days_of_candles_are_headlined_by_their_span(settings, markets) -> None:
    """Over several days the scope under the headline says which: the values alone."""
    daily = _daily(markets["NQ"])
    days = daily[(daily.index >= "2024-03-04") & (daily.index <= "2024-03-15")]
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024-03-04:2024-03-15",
        "select": ["open", "high", "low", "close", "volume"],
    }
    high, low, close = days["high"].max(), days["low"].min(), days["close"].iloc[-1]
    assert chart_headline(_run(query, settings)) == (
        f"high = {_points(high)} · low = {_points(low)} · close = {_points(close)}"
    )


def test_a_computed_column_under_candles_keeps_its_headline(settings, markets) -> None:
    """The rule is the plain candles': a move the query made is still the answer, its
    largest and smallest bar (the day's last bar's move headed it as if it were the day's)."""
    minutes = markets["NQ"]
    day = minutes[minutes["timestamp"].dt.normalize() == "2024-02-14"].copy()
    bars = day.groupby(day["timestamp"].dt.floor("5min")).agg(
        open=("open", "first"), close=("close", "last")
    )
    moves = bars["close"] - bars["open"]
    high, low = moves.idxmax(), moves.idxmin()
    assert (moves == moves.max()).sum() == 1 and (moves == moves.min()).sum() == 1
    query = {
        "session": "RTH",
        "from": "5m",
        "period": "2024-02-14",
        "map": {"move": "close - open"},
        "select": ["open", "high", "low", "close", "move"],
    }
    headline = chart_headline(_run(query, settings))
    assert headline == (
        f"move: highest {high:%Y-%m-%d %H:%M} {_points(moves.max())} points, "
        f"lowest {low:%Y-%m-%d %H:%M} {_points(moves.min())} points"
    )


def test_a_value_on_every_row_gives_way_to_the_column_it_is_compared_with(
    settings, markets
) -> None:
    """ "Since when was a week's range no bigger than this one's": then.map's cur =
    last(range) is one value on every row; drawn, it was three equal bars under the headline
    "cur last" (p33d M2). The weeks' own ranges are drawn, from pandas' weekly bars."""
    query = {
        "session": "RTH",
        "from": "weekly",
        "period": WEEKS,
        "select": ["range"],
        "then": {"map": {"cur": "last(range)"}, "where": "range <= cur", "sort": "week desc",
                 "limit": 3},
    }  # fmt: skip
    daily = _daily(markets["NQ"])
    monday = daily.index - pd.to_timedelta(daily.index.weekday, unit="D")
    weeks = daily.groupby(monday).agg(high=("high", "max"), low=("low", "min"))
    weeks = weeks[(weeks.index >= "2024-01-08") & (weeks.index <= "2024-03-18")]
    ranges = weeks["high"] - weeks["low"]
    listed = ranges[ranges <= ranges.iloc[-1]].iloc[-3:]  # the 3 latest, drawn in time order
    assert listed.nunique() > 1  # the premise: the weeks differ where cur does not

    result = _run(query, settings)
    fig = _figure(result)
    (ax,) = fig.axes
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    heights = [p.vertices[2, 1] - p.vertices[0, 1] for p in bars.get_paths()]
    np.testing.assert_allclose(heights, listed.to_numpy())
    assert chart_headline(result, "en").startswith(f"range last: {_points(listed.iloc[-1])}")
