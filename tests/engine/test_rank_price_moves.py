"""A rank in points within one stretch of rows over which the price moved a lot says so, with
the rank in percent: the reference's own "ATR(14) now against the last year" put NQ's ATR at
the 67th percentile of a year in which the close ran from 16,234 to 25,851; in percent of
the price it ranked 1.9, the opposite call (p35d #22). Hand-made bars, one an RTH hour, over
130 days whose close rises from 10,000 to 18,000 and whose range is 1-2% of it (the last
day 1.1%, the 101st 4%); the ranks by pandas over the raw bars."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import talib
from asking import RTH_DAILY, ask
from small_bars import write_minutes

from barb.settings import EngineSettings

DAYS = pd.bdate_range("2024-01-02", periods=130)
SPIKE = 100  # the day whose range is 4% of the price, the most in points and in percent


def _minutes() -> pd.DataFrame:
    """Nine bars a day (09:30 … 16:30, 16:59) at the day's price, its high and low on two."""
    rng = np.random.default_rng(3)
    n = len(DAYS)
    price = np.round(10000 * 1.8 ** (np.arange(n) / (n - 1)) * 4) / 4
    share = rng.uniform(0.01, 0.02, n)
    share[-1], share[SPIKE] = 0.011, 0.04
    offsets = pd.to_timedelta([570 + 60 * h for h in range(8)] + [1019], unit="min")
    stamps = [day + offset for day in DAYS for offset in offsets]
    close = np.repeat(price, len(offsets))
    high, low = close * 1.001, close * 0.999
    day_high = np.arange(n) * len(offsets) + 2
    high[day_high] = price * (1 + share / 2)
    low[day_high + 3] = price * (1 - share / 2)
    return pd.DataFrame(
        {
            "timestamp": pd.DatetimeIndex(stamps).values.astype("datetime64[ns]"),
            "open": close,
            "high": high,
            "low": low,
            "close": close,
            "volume": np.full(len(close), 100, dtype=np.int64),
        }
    )


@pytest.fixture(scope="module")
def rising(tmp_path_factory: pytest.TempPathFactory) -> EngineSettings:
    settings = EngineSettings(data_dir=tmp_path_factory.mktemp("rising"))
    write_minutes(_minutes(), "NQ", settings, "a price rising 1.8x, hand-made")
    return settings


@pytest.fixture(scope="module")
def days() -> pd.DataFrame:
    """The days by pandas over the raw bars: open, close, range, range in percent."""
    minutes = _minutes()
    day = pd.DatetimeIndex(minutes["timestamp"]).normalize()
    daily = minutes.groupby(day).agg(
        open=("open", "first"), high=("high", "max"), low=("low", "min"), close=("close", "last")
    )
    daily["range"] = daily["high"] - daily["low"]
    daily["pct"] = daily["range"] / daily["open"] * 100
    return daily


def _rank(values: pd.Series) -> float:
    """The last value's percentile rank among them: the share at or below it."""
    return float((values <= values.iloc[-1]).mean() * 100)


def _moved(days: pd.DataFrame) -> str:
    low, high = days["close"].idxmin(), days["close"].idxmax()
    first, then = sorted([low, high])
    ratio = days["close"].max() / days["close"].min()
    return (
        f"ran from {days['close'][first]:,.0f} on {first.date()} to "
        f"{days['close'][then]:,.0f} on {then.date()} ({ratio:.1f}x)"
    )


def _said(result) -> list[str]:
    return [w for w in result.metadata.warnings if "in points among rows" in w]


LAST = {"sort": "timestamp desc", "limit": 1}


def test_todays_rank_over_a_rising_period_gives_its_rank_in_percent(rising, days) -> None:
    points, percent = _rank(days["range"]), _rank(days["pct"])
    assert points - percent >= 20  # the case: 46.15 against 8.46
    query = {"map": {"rk": "rank(range)"}, "select": ["range", "rk"], **LAST}
    result = ask(query, rising, **RTH_DAILY)
    assert result.table["rk"].iloc[0] == pytest.approx(points)
    assert _said(result) == [
        f"rk ranks range in points among rows whose price level {_moved(days)}, so it ranks "
        "sizes at different prices as one. In percent (rank(range / open * 100)) "
        f"{days.index[-1].date()} ranks {percent:.2f}, not {points:.2f}."
    ]
    advised = ask({**query, "map": {"rk": "rank(range / open * 100)"}}, rising, **RTH_DAILY)
    assert advised.table["rk"].iloc[0] == pytest.approx(percent)
    assert _said(advised) == []
    # One row's rank as a single answer: last(rk).
    single = ask(
        {"map": {"rk": "rank(range)"}, "select": ["last(range)", "last(rk) as today"]},
        rising,
        **RTH_DAILY,
    )
    assert _said(single) == [
        f"rank(range) ranks range in points among rows whose price level {_moved(days)}, so "
        "it ranks sizes at different prices as one. In percent (last(rank(range / open * "
        f"100))) today is {percent:.4g}, not {points:.4g}."
    ]


def test_a_rolling_rank_says_the_move_over_its_windows(rising, days) -> None:
    """rolling_rank(range, 100) of the last 3 days: each over its own 100 days, which run
    from the 28th day to the last."""
    points = days["range"].rolling(100).rank(method="max", pct=True) * 100
    percent = days["pct"].rolling(100).rank(method="max", pct=True) * 100
    query = {"map": {"rr": "rolling_rank(range, 100)"}, "select": ["range", "rr"]}
    result = ask({**query, "sort": "timestamp desc", "limit": 3}, rising, **RTH_DAILY)
    assert result.table["rr"].tolist() == pytest.approx(points.iloc[::-1][:3].tolist())
    shown = [
        f"{day.date()} ranks {percent[day]:.2f} ({points[day]:.2f} in points)"
        for day in days.index[::-1][:3]
    ]
    assert _said(result) == [
        f"rr ranks range in points among rows whose price level {_moved(days.iloc[-102:])}, "
        "so it ranks sizes at different prices as one. In percent (rolling_rank(range / open "
        f"* 100, 100)) {'; '.join(shown)}."
    ]


def test_no_word_where_the_price_moved_little_or_the_ranks_agree(rising, days) -> None:
    """The last 10 days (the close 4% apart): nothing to say. The 101st day, the widest in
    points and in percent, ranks 100 in both over the days up to it, a rise of 1.57x."""
    base = {"map": {"rk": "rank(range)"}, "select": ["range", "rk"], **LAST}
    recent = days.iloc[-10:]
    assert recent["close"].max() / recent["close"].min() < 1.25
    last_ten = ask({**base, "period": "last_10_bars"}, rising, **RTH_DAILY)
    assert last_ten.table["rk"].iloc[0] == pytest.approx(_rank(recent["range"]))
    assert _said(last_ten) == []
    upto = days.iloc[: SPIKE + 1]
    assert upto["close"].max() / upto["close"].min() > 1.5
    assert _rank(upto["range"]) == _rank(upto["pct"]) == 100
    period = f"{days.index[0].date()}:{days.index[SPIKE].date()}"
    spike = ask({**base, "period": period}, rising, **RTH_DAILY)
    assert spike.table["rk"].iloc[0] == 100
    assert _said(spike) == []


def test_the_references_atr_example_gives_atr_in_percent_of_the_close(rising, days) -> None:
    """The reference's example itself: ATR(14)'s rank, in percent of the close (as atr()'s
    own line and TA-Lib's NATR take it), by TA-Lib over pandas' days."""
    atr = pd.Series(
        talib.ATR(*(days[c].to_numpy() for c in ("high", "low", "close")), 14), days.index
    ).dropna()
    points, percent = _rank(atr), _rank(atr / days["close"][atr.index] * 100)
    assert points - percent >= 20  # the case
    query = {"map": {"atr14": "atr(14)", "atr_rank": "rank(atr14)"},
             "select": ["atr14", "atr_rank"], **LAST}  # fmt: skip
    result = ask(query, rising, **RTH_DAILY)
    assert result.table["atr_rank"].iloc[0] == pytest.approx(points)
    [said] = _said(result)
    assert said.endswith(
        f"In percent (rank(atr14 / close * 100)) {days.index[-1].date()} ranks {percent:.2f}, "
        f"not {points:.2f}."
    )
