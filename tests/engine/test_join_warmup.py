"""A join that leaves out a bar just before the period: the history prev() and rolling
windows read is counted in joined rows, so the period's first rows read as far back as over
all history, and the bar left out is said though it lies outside the period.

Two hand-made markets (p32a Q19-Q24): "NQ" trades a Good Friday session CL lacks, "CL" a
Monday NQ is shut, and on two days CL trades on after NQ's 13:00 close. Expected values come
from pandas over the raw minutes: each market's bars built by hand, joined on both, then
computed over all of it and cut to the period.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from asking import ask
from small_bars import bars_from_closes, write_minutes

from barb.period_rows import UNMATCHED_NAMED
from barb.settings import EngineSettings

GOOD_FRIDAY = dt.date(2024, 3, 29)  # NQ trades, CL does not
NQ_SHUT = dt.date(2024, 4, 15)  # CL trades, NQ does not
EARLY_CLOSE = dt.date(2024, 4, 10)  # NQ stops at 13:00, CL runs to 17:00
HOLIDAY = dt.date(2024, 2, 19)  # Presidents Day: NQ stops at 13:00, CL at 14:30
# The hour each market's session ends at on the days it stops early.
CLOSES = {("NQ", EARLY_CLOSE): 13, ("NQ", HOLIDAY): 13, ("CL", HOLIDAY): 14.5}


def _minutes(symbol: str, seed: int, price: float) -> pd.DataFrame:
    """Every minute of each weekday's ETH session (18:00 the evening before to 17:00),
    but the days and hours ``symbol`` does not trade."""
    rng = np.random.default_rng(seed)
    stamps = []
    for day in pd.bdate_range("2024-02-01", "2024-04-30"):
        if day.date() == (GOOD_FRIDAY if symbol == "CL" else NQ_SHUT):
            continue
        end = day + pd.Timedelta(hours=CLOSES.get((symbol, day.date()), 17))
        stamps.append(
            pd.date_range(day - pd.Timedelta(hours=6), end, freq="1min", inclusive="left")
        )
    ts = stamps[0].append(stamps[1:])
    close = price * np.exp(np.cumsum(rng.normal(0, 0.001, len(ts))))
    return bars_from_closes(ts, close, rng.integers(1, 500, len(ts)), up=0.0, down=0.0)


@pytest.fixture(scope="module")
def markets(tmp_path_factory: pytest.TempPathFactory) -> tuple[EngineSettings, dict]:
    data_dir: Path = tmp_path_factory.mktemp("two_markets")
    settings = EngineSettings(data_dir=data_dir)
    raw = {"NQ": _minutes("NQ", 3, 17000.0), "CL": _minutes("CL", 5, 80.0)}
    for symbol, minutes in raw.items():
        write_minutes(minutes, symbol, settings, "hand-made bars of two markets")
    return settings, raw


def _bars(minutes: pd.DataFrame, hourly: bool) -> pd.Series:
    """Each bar's close: per trading date (the date of the timestamp six hours later), or
    per clock hour."""
    ts = pd.DatetimeIndex(minutes["timestamp"])
    key = ts.floor("h") if hourly else (ts + pd.Timedelta(hours=6)).normalize()
    return minutes.groupby(key)["close"].last()


def _joined(raw: dict, ours: str, theirs: str, hourly: bool = False) -> pd.DataFrame:
    """Both markets' closes on the bars both have, over all history."""
    both = pd.concat([_bars(raw[ours], hourly), _bars(raw[theirs], hourly)], axis=1, join="inner")
    both.columns = ["a", "b"]
    return both


DAILY_MAP = {
    "a_ret": "close / prev(close) - 1",
    "b_ret": "{p}_close / prev({p}_close) - 1",
    "rc20": "rolling_correlation(a_ret, b_ret, 20)",
}


@pytest.mark.parametrize(
    ("ours", "theirs", "period", "left_out", "after", "before"),
    [
        # The Monday after Good Friday: NQ's Good Friday has no CL bar.
        ("NQ", "CL", "2024-04-01", "2024-03-29", "2024-04-01", "2024-03-28"),
        # A week later: the 20-day window still reads across it.
        ("NQ", "CL", "2024-04-05", "2024-03-29", "2024-04-01", "2024-03-28"),
        # The day after a Monday only CL traded (New Year's Monday 2023 in the sample).
        ("CL", "NQ", "2024-04-16", "2024-04-15", "2024-04-16", "2024-04-12"),
    ],
)
def test_a_daily_period_after_a_bar_the_join_left_out_reads_the_joined_history(
    markets, ours, theirs, period, left_out, after, before
) -> None:
    """prev() and a 20-day correlation on the period's first day equal the joined
    computation over all history, where they read n/a when the bar before was left out."""
    settings, raw = markets
    prefix = theirs.lower()
    query = {
        "session": "ETH",
        "from": "daily",
        "period": period,
        "join": {"instrument": theirs},
        "map": {name: expr.format(p=prefix) for name, expr in DAILY_MAP.items()},
        "select": ["a_ret", "b_ret", "rc20"],
    }
    result = ask(query, settings, ours)

    both = _joined(raw, ours, theirs)
    returns = both.pct_change()
    expected = returns.assign(rc20=returns["a"].rolling(20).corr(returns["b"])).loc[period]
    assert len(result.table) == 1
    row = result.table.iloc[0]
    assert row["a_ret"] == pytest.approx(expected["a"], rel=1e-9)
    assert row["b_ret"] == pytest.approx(expected["b"], rel=1e-9)
    assert row["rc20"] == pytest.approx(expected["rc20"], rel=1e-9)
    assert (
        f"1 {ours} bar without a matching {theirs} bar left out: {left_out} (outside the "
        f"period, among the bars its rows read). {ours}'s own prev() on {after} reads its "
        f"bar of {before}, not the {left_out} left out."
    ) in result.metadata.warnings


def test_a_period_the_join_does_not_reach_across_says_nothing(markets) -> None:
    """prev() on 2024-04-08 reads 2024-04-05: Good Friday is no bar it reads."""
    settings, _ = markets
    result = ask(
        {
            "session": "ETH",
            "from": "daily",
            "period": "2024-04-08",
            "join": {"instrument": "CL"},
            "map": {"a_ret": "close / prev(close) - 1"},
            "select": "a_ret",
        },
        settings,
        "NQ",
    )
    assert not [w for w in result.metadata.warnings if "without a matching" in w]


@pytest.mark.parametrize(
    ("ours", "theirs", "period", "left_out"),
    [
        # CL's 13:00-16:00 bars of the day NQ closed early: the next day's first bar reads
        # CL's 12:00 bar, the last both had.
        ("CL", "NQ", "2024-04-11", ["2024-04-10 13:00", "2024-04-10 14:00", "2024-04-10 15:00"]),
        # NQ's whole Good Friday session: the Monday's first hour reads Thursday's last.
        ("NQ", "CL", "2024-04-01", ["2024-03-28 18:00", "2024-03-28 19:00", "2024-03-28 20:00"]),
    ],
)
def test_an_intraday_period_after_bars_the_join_left_out(
    markets, ours, theirs, period, left_out
) -> None:
    """Hourly bars: prev() of the period's first bar is the joined frame's previous row, as
    over all history, and the bars it steps over are said though the period is one day."""
    settings, raw = markets
    prefix = theirs.lower()
    result = ask(
        {
            "session": "ETH",
            "from": "1h",
            "period": period,
            "join": {"instrument": theirs},
            "map": {
                "a_ret": "close / prev(close) - 1",
                "b_ret": f"{prefix}_close / prev({prefix}_close) - 1",
            },
            "select": ["timestamp", "a_ret", "b_ret"],
        },
        settings,
        ours,
    )
    both = _joined(raw, ours, theirs, hourly=True)
    returns = both.pct_change()
    dates = (returns.index + pd.Timedelta(hours=6)).normalize()
    expected = returns[dates == pd.Timestamp(period)]
    assert len(result.table) == len(expected)
    np.testing.assert_allclose(result.table["a_ret"], expected["a"], rtol=1e-9)
    np.testing.assert_allclose(result.table["b_ret"], expected["b"], rtol=1e-9)

    first = expected.index[0]
    read = both.index[both.index.get_loc(first) - 1]
    gap = [f"{t:%Y-%m-%d %H:%M}" for t in _gap(raw[ours], read, first)]
    assert gap[: len(left_out)] == list(left_out)
    named = ", ".join(gap[:UNMATCHED_NAMED])
    more = f" and {len(gap) - UNMATCHED_NAMED} more" if len(gap) > UNMATCHED_NAMED else ""
    said = [w for w in result.metadata.warnings if "without a matching" in w]
    assert said == [
        f"{len(gap)} {ours} bars without a matching {theirs} bar left out: {named}{more} "
        f"(outside the period, among the bars its rows read). {ours}'s own prev() on "
        f"{first:%Y-%m-%d %H:%M} reads its bar of {read:%Y-%m-%d %H:%M}, not the {left_out[0]} "
        "left out."
    ]


def _gap(minutes: pd.DataFrame, after: pd.Timestamp, before: pd.Timestamp) -> pd.Index:
    """The hours of ``minutes`` strictly between two joined rows: the bars left out."""
    hours = pd.DatetimeIndex(minutes["timestamp"]).floor("h").unique()
    return hours[(hours > after) & (hours < before)]


def test_a_window_names_the_market_that_lacked_bars(markets) -> None:
    """p32a Q20: CL's 10:30-11:30 joined with NQ lost the Monday NQ was shut. CL had its
    bars: the join left the day out, and says so; no 'no bars in 10:30-11:30' of CL's."""
    settings, _ = markets
    query = {
        "session": "10:30-11:30",
        "from": "daily",
        "period": "2024-04",
        "join": {"instrument": "NQ"},
        "map": {"cl_m": "close / open - 1", "nq_m": "nq_close / nq_open - 1"},
        "select": ["correlation(cl_m, nq_m)", "count()"],
    }
    warnings = ask(query, settings, "CL").metadata.warnings
    assert not [w for w in warnings if "no bars in" in w or "no CL bars in" in w]
    assert "1 CL bar without a matching NQ bar left out: 2024-04-15." in warnings[0]
    # A day the asking market itself has no bars in the window is still said, as its own.
    query |= {
        "session": "13:30-14:30",
        "join": {"instrument": "CL"},
        "map": {"nq_m": "close / open - 1", "cl_m": "cl_close / cl_open - 1"},
        "select": ["correlation(nq_m, cl_m)", "count()"],
    }
    warnings = ask(query, settings, "NQ").metadata.warnings
    assert [w for w in warnings if "no bars in" in w] == []
    assert any(w.startswith("1 trading day has no NQ bars in 13:30-14:30 (") for w in warnings)
    assert any("e.g. 2024-04-10)" in w for w in warnings)


def test_a_short_session_names_the_joined_market_s_other_hours(markets) -> None:
    """p32a Q19: over 09:30-16:00 on a holiday NQ stopped at 13:00 and CL ran to 14:30, so
    the listed cl_m is no part of nq_m's hours: said beside NQ's part day."""
    settings, raw = markets
    result = ask(
        {
            "session": "09:30-16:00",
            "from": "daily",
            "period": "2024-02-16:2024-02-20",
            "join": {"instrument": "CL"},
            "map": {"nq_m": "close / open - 1", "cl_m": "cl_close / cl_open - 1"},
            "select": ["nq_m", "cl_m"],
        },
        settings,
        "NQ",
    )
    cl = raw["CL"]
    day = cl[(cl["timestamp"] >= "2024-02-19 09:30") & (cl["timestamp"] < "2024-02-19 16:00")]
    end = day["timestamp"].iloc[-1] + pd.Timedelta(minutes=1)
    assert f"{end:%H:%M}" == "14:30"
    assert (
        "1 of the 3 rows listed is a short session: 2024-02-19 (holiday, closed 13:00); their "
        "nq_m is a part day's. CL's 09:30-16:00 ran to 14:30 on it, so cl_m covers other hours "
        "there."
    ) in " ".join(result.metadata.warnings)
