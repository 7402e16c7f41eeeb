"""cumsum() and streak() under a where run over every bar, before where keeps rows: "the
equity of the RSI(2) < 10 trades" written as cumsum(pts) read the market's +19,009 points,
the trades' own is −4,317. The result says so, and the form it points to gives the trades'
numbers: checked with TA-Lib and pandas over the RTH closes from DuckDB."""

from __future__ import annotations

import pandas as pd
import pytest
import talib
from duckdb_answers import rth_closes

from barb import execute

pytestmark = pytest.mark.slow

SIGNAL = {"rsi2": "rsi(close, 2)", "pts": "next(close) - close"}
# "pts == pts" keeps the days that have a next close (an empty value equals nothing).


def _trades(con) -> pd.Series:
    """Each RSI(2) < 10 day's next-day points, in time order."""
    closes = rth_closes(con, "nq")
    rsi = pd.Series(talib.RSI(closes.to_numpy(dtype="float64"), 2), index=closes.index)
    pts = closes.shift(-1) - closes
    return pts[(rsi < 10) & pts.notna()]


def _run(query: dict, settings):
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


def test_an_equity_under_a_where_says_it_is_the_market_s(sample_settings, con) -> None:
    trades = _trades(con)
    equity = trades.cumsum()
    natural = {
        "session": "RTH",
        "from": "daily",
        "map": SIGNAL | {"eq": "cumsum(pts)", "dd": "eq - cummax(eq)"},
        "where": "rsi2 < 10 and pts == pts",
        "select": ["min(dd) as max_dd", "last(eq) as total"],
    }
    result = _run(natural, sample_settings)
    assert result.summary.values["total"] != pytest.approx(equity.iloc[-1])
    said = [w for w in result.metadata.warnings if w.startswith("cumsum(pts) ran over every bar")]
    assert said and '"select": ["date()", "pts"]' in said[0]
    # The form it points to: the trades' own equity and drawdown.
    pointed = {
        "session": "RTH",
        "from": "daily",
        "map": SIGNAL,
        "where": "rsi2 < 10 and pts == pts",
        "select": ["date()", "pts"],
        "then": {
            "map": {"run": "cumsum(pts)", "dd": "run - cummax(run)"},
            "select": ["min(dd) as max_dd", "last(run) as total"],
        },
    }
    followed = _run(pointed, sample_settings)
    assert followed.summary.values["total"] == pytest.approx(equity.iloc[-1])
    assert followed.summary.values["max_dd"] == pytest.approx((equity - equity.cummax()).min())
    assert not [w for w in followed.metadata.warnings if "ran over every bar" in w]


def test_a_losing_streak_of_trades_is_counted_over_the_trades(sample_settings, con) -> None:
    losing = _trades(con) < 0
    longest = int(losing.groupby((~losing).cumsum()).sum().max())
    query = {
        "session": "RTH",
        "from": "daily",
        "map": SIGNAL,
        "where": "rsi2 < 10 and pts == pts",
        "select": ["date()", "pts"],
        "then": {"map": {"run": "streak(pts < 0)"}, "select": "max(run)"},
    }
    assert _run(query, sample_settings).summary.value == longest
    natural = {**query, "map": SIGNAL | {"run": "streak(pts < 0)"}, "select": "max(run)"}
    del natural["then"]
    result = _run(natural, sample_settings)
    assert any(w.startswith("streak(pts < 0) ran over every bar") for w in result.metadata.warnings)


def test_a_running_value_of_every_bar_read_on_some_days_is_not_warned(sample_settings) -> None:
    """cummax(close) read on RSI days is the drawdown from the high so far: meant."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"rsi2": "rsi(close, 2)", "dd": "close / cummax(close) - 1"},
        "where": "rsi2 < 10",
        "select": "mean(dd)",
    }
    result = _run(query, sample_settings)
    assert not [w for w in result.metadata.warnings if "ran over every bar" in w]


RUN = {"run": "streak(close > prev(close))"}


def _up_runs(con) -> pd.Series:
    """Each RTH day's count of closes in a row above the one before, by date."""
    closes = rth_closes(con, "nq")
    up = closes > closes.shift(1)
    return up.groupby((~up).cumsum()).cumsum().astype(int)


def _not_warned(result) -> None:
    assert not [w for w in result.metadata.warnings if "ran over every bar" in w]


@pytest.mark.parametrize("where", ["run == 14", "run >= 5"])
def test_a_where_on_the_streak_s_own_value_is_not_warned(sample_settings, con, where) -> None:
    """The days on which the up run stood at 14, or at 5 and more: the run over every bar is
    what the where asks for (p28b F2: the warning cast doubt on a right answer)."""
    runs = _up_runs(con)
    kept = runs[runs == 14] if where == "run == 14" else runs[runs >= 5]
    query = {"session": "RTH", "from": "daily", "map": RUN, "where": where}
    result = _run(query | {"select": ["date()", "run"]}, sample_settings)
    assert list(pd.to_datetime(result.table["date"])) == list(pd.to_datetime(kept.index))
    assert list(result.table["run"]) == list(kept)
    _not_warned(result)


def test_a_where_on_a_name_made_from_the_streak_is_not_warned(sample_settings, con) -> None:
    """The average length of an up run, read on each run's last day (run_end, made from run)."""
    runs = _up_runs(con)
    ends = runs[(runs > 0) & (runs.shift(-1) == 0)]
    query = {
        "session": "RTH",
        "from": "daily",
        "map": RUN | {"run_end": "run > 0 and next(run) == 0"},
        "where": "run_end",
        "select": ["count() as runs", "mean(run) as avg"],
    }
    result = _run(query, sample_settings)
    assert result.summary.values["runs"] == len(ends)
    assert result.summary.values["avg"] == pytest.approx(ends.mean())
    _not_warned(result)


def test_a_streak_kept_by_a_where_on_something_else_is_still_warned(sample_settings) -> None:
    """A where on the run and an equity it does not read: the equity is still the market's."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": RUN | {"eq": "cumsum(close - open)"},
        "where": "run >= 3",
        "select": ["max(run) as longest", "last(eq) as total"],
    }
    said = [w for w in _run(query, sample_settings).metadata.warnings if "every bar" in w]
    assert len(said) == 1 and said[0].startswith("cumsum(close - open) ran over every bar")


def test_a_rank_under_a_where_says_whose_place_it_is(sample_settings, con) -> None:
    """ "Today's percentile among up days" as rank(ret) under where ret > 0 is its place
    among every day of the period (p33d M3: 22.09 where among the kept days it is 20.65).
    Said; the then form it points to ranks among the kept rows, as pandas does."""
    closes = rth_closes(con, "nq")
    ret = (closes / closes.shift(1) - 1).loc["2024"]
    up = ret[ret > 0]
    among_up = float((up <= up.iloc[-1]).mean() * 100)
    among_all = float((ret <= up.iloc[-1]).mean() * 100)
    assert round(among_up, 2) != round(among_all, 2)  # the premise: the two places differ
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024",
        "map": {"ret": "close / prev(close) - 1", "rk": "rank(ret)"},
        "where": "ret > 0",
        "sort": "timestamp desc",
        "limit": 1,
        "select": ["ret", "rk"],
    }
    result = _run(query, sample_settings)
    assert float(result.table["rk"].iloc[0]) == pytest.approx(among_all)
    (said,) = [w for w in result.metadata.warnings if w.startswith("rank(ret) ranks every bar")]
    assert '"select": ["date()", "ret"]' in said

    told = {
        "session": "RTH",
        "from": "daily",
        "period": "2024",
        "map": {"ret": "close / prev(close) - 1"},
        "where": "ret > 0",
        "select": ["date()", "ret"],
        "then": {"map": {"rk": "rank(ret)"}, "sort": "date desc", "limit": 1},
    }
    assert float(_run(told, sample_settings).table["rk"].iloc[0]) == pytest.approx(among_up)
    # A where on the rank itself keeps rows by their place among all: what it asks.
    own = {**query, "where": "rk >= 90"}
    assert not [w for w in _run(own, sample_settings).metadata.warnings if "ranks every" in w]
