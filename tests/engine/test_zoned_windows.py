"""Windows and clock functions on another zone's clock ('10:00-11:00 Europe/Moscow',
hour('UTC')), against pandas' own tz conversion of hand-made bars (p34d #3, #2/#8).

The bars are ET wall clock. Moscow was UTC+4 all year in 2012 and UTC+3 in 2020, so its
10:00 was 02:00 ET then and 03:00 ET now; London's 08:00 is 04:00 ET in the weeks the US
has changed its clocks and Europe not yet (2024-03-11 to 2024-03-29), 03:00 ET otherwise.
"""

from __future__ import annotations

from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd
import pytest

from barb import execute, render_summary
from barb.result import Result
from barb.settings import EngineSettings
from tests.asking import ask, warnings_with
from tests.small_bars import bars_from_closes, write_minutes

# Weekdays on both sides of the US change (2024-03-10), in the EU/US gap week, after both
# changed, and in Moscow's UTC+4 years (2012) and its UTC+3 ones (2020).
DAYS = [
    *pd.bdate_range("2012-06-04", "2012-06-06"),
    *pd.bdate_range("2020-06-01", "2020-06-03"),
    *pd.bdate_range("2024-03-04", "2024-03-15"),
    *pd.bdate_range("2024-04-01", "2024-04-02"),
]


@pytest.fixture(scope="module")
def bars() -> pd.DataFrame:
    """Every minute from 18:00 the evening before to 17:00 on each day, a random walk."""
    rng = np.random.default_rng(34)
    stamps = [
        pd.date_range(day - pd.Timedelta(hours=6), day + pd.Timedelta(hours=17), freq="1min")[:-1]
        for day in DAYS
    ]
    ts = stamps[0].append(stamps[1:])
    close = 18000 + np.cumsum(rng.choice([-0.25, 0.0, 0.25], size=len(ts)))
    up = rng.choice([0.0, 0.25, 0.5], size=len(ts))
    down = rng.choice([0.0, 0.25, 0.5], size=len(ts))
    return bars_from_closes(ts, close, rng.integers(1, 500, len(ts)), up=up, down=down)


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory, bars: pd.DataFrame) -> EngineSettings:
    data_dir: Path = tmp_path_factory.mktemp("zoned_windows")
    settings = EngineSettings(data_dir=data_dir)
    write_minutes(bars, "NQ", settings, "hand-made bars across clock changes")
    return settings


def _on_clock(bars: pd.DataFrame, zone: str) -> pd.DatetimeIndex:
    """Each bar's open on ``zone``'s clock, by pandas and the tz database."""
    local = pd.DatetimeIndex(bars["timestamp"]).tz_localize("America/New_York")
    return local.tz_convert(zone)


def _trading_date(bars: pd.DataFrame) -> pd.Series:
    stamps = bars["timestamp"]
    return (stamps + pd.Timedelta(hours=6)).dt.normalize()  # 18:00 belongs to the next day


def _window_days(bars: pd.DataFrame, zone: str, start: int, end: int) -> pd.DataFrame:
    """OHLC per trading date of the bars opening at hours [start, end) on ``zone``'s clock."""
    clock = _on_clock(bars, zone)
    inside = bars[(clock.hour >= start) & (clock.hour < end)]
    return inside.groupby(_trading_date(inside)).agg(
        open=("open", "first"),
        high=("high", "max"),
        low=("low", "min"),
        close=("close", "last"),
        bars=("open", "size"),
    )


def test_a_moscow_window_follows_moscow_s_own_history(settings, bars) -> None:
    """10:00-11:00 MSK is 02:00-03:00 ET in June 2012 (UTC+4) and 03:00-04:00 ET in June
    2020 (UTC+3): the hand-made hour the model got from the 'Moscow is UTC+3' text was an
    hour late in 2012 (NQ's 2012 mean range 7.903 for 5.06)."""
    result = ask(
        {
            "session": "10:00-11:00 Europe/Moscow",
            "from": "daily",
            "period": "2012-01-01:2020-12-31",
            "select": ["date()", "open", "high", "low", "close"],
        },
        settings,
    )
    got = result.table.set_index(pd.to_datetime(result.table["date"]))
    expected = _window_days(bars, "Europe/Moscow", 10, 11)
    expected = expected[expected.index.year < 2024]
    assert list(got.index) == list(expected.index) and len(got) == 6
    for column in ("open", "high", "low", "close"):
        assert np.allclose(got[column], expected[column]), column
    first = {
        day.year: bars["timestamp"][bars["timestamp"].dt.normalize() == day] for day in got.index
    }
    moscow = _on_clock(bars, "Europe/Moscow")
    at_ten = bars["timestamp"][(moscow.hour == 10) & (moscow.minute == 0)].dt.hour
    assert sorted(set(at_ten[at_ten.index.isin(first[2012].index)])) == [2]
    assert sorted(set(at_ten[at_ten.index.isin(first[2020].index)])) == [3]
    assert not warnings_with(result, "clock: of")  # inside the trading hours every date
    assert "Scanned 6 daily 10:00-11:00 Europe/Moscow bars" in _summary(result)


def test_the_london_open_hour_moves_to_04_00_et_in_the_gap_week(settings, bars) -> None:
    """session_open('08:00-09:00 London') and friends, on daily ETH rows: the first hour of
    London each date, 04:00 ET in 2024-03-11..15 and 03:00 ET around it."""
    window = "'08:00-09:00 London'"
    result = ask(
        {
            "session": "ETH",
            "from": "daily",
            "period": "2024",
            "map": {f"l_{p}": f"session_{p}({window})" for p in ("open", "high", "low", "close")},
            "select": ["date()", "l_open", "l_high", "l_low", "l_close"],
        },
        settings,
    )
    got = result.table.set_index(pd.to_datetime(result.table["date"]))
    expected = _window_days(bars, "Europe/London", 8, 9).loc[got.index]
    for part in ("open", "high", "low", "close"):
        assert np.allclose(got[f"l_{part}"], expected[part]), part
    london = _on_clock(bars, "Europe/London")
    inside = bars[london.hour == 8]
    et_hour = inside.groupby(_trading_date(inside))["timestamp"].first().dt.hour.loc[got.index]
    gap = pd.bdate_range("2024-03-11", "2024-03-15")
    assert set(et_hour[et_hour.index.isin(gap)]) == {4}  # not the 03:00 ET a fixed clock reads
    assert set(et_hour[~et_hour.index.isin(gap)]) == {3}


def test_hour_minute_and_time_read_another_clock_across_the_us_change(settings, bars) -> None:
    """hour('UTC') is 14 for the 09:00 ET bar before 2024-03-10 and 13 after; time('MSK')
    and minute('Asia/Kolkata') (UTC+5:30) likewise from the tz database."""
    result = ask(
        {
            "session": "ETH",
            "from": "1h",
            "period": "2024-03-07:2024-03-12",
            "map": {"u": "hour('UTC')", "m": "time('MSK')", "k": "minute('Asia/Kolkata')"},
            "select": ["timestamp", "u", "m", "k"],
            "limit": 1000,
        },
        settings,
    )
    got = result.table
    stamps = pd.DataFrame({"timestamp": pd.to_datetime(got["timestamp"])})
    utc, msk = _on_clock(stamps, "UTC"), _on_clock(stamps, "Europe/Moscow")
    india = _on_clock(stamps, "Asia/Kolkata")
    assert got["u"].tolist() == list(utc.hour)
    assert got["m"].astype(str).tolist() == list(msk.strftime("%H:%M"))
    assert got["k"].tolist() == list(india.minute)
    nine = got[stamps["timestamp"].dt.hour.to_numpy() == 9]
    assert set(nine["u"]) == {13, 14}


def test_an_unknown_zone_is_an_error_naming_the_short_names(settings) -> None:
    window = execute({"session": "10:00-11:00 Moskow", "from": "daily"}, "NQ", settings=settings)
    assert not window.ok and window.error.error_type == "InvalidSession"
    assert "'Moskow'" in window.error.message
    assert (
        "MSK (Europe/Moscow)" in window.error.hint and "London (Europe/London)" in window.error.hint
    )
    clock = execute(
        {"session": "ETH", "from": "1h", "map": {"h": "hour('Mars')"}, "select": "mean(h)"},
        "NQ",
        settings=settings,
    )
    assert not clock.ok and clock.error.error_type == "ArgumentError"
    assert "MSK (Europe/Moscow)" in clock.error.hint


@pytest.mark.parametrize("window", ["21:00-22:00 UTC", "21:30-22:30 UTC"])
def test_a_window_in_the_daily_break_on_some_dates_is_said(settings, bars, window) -> None:
    """21:00-22:00 UTC is 16:00-17:00 ET in winter and 17:00-18:00, NQ's break, from
    2024-03-11: those dates have no bar. 21:30-22:30 UTC reaches into the break on every
    date (16:30-17:00 then 18:00-18:30 of the next date): only part of the window. Counted
    here from the bars pandas puts in the window, date by date."""
    result = ask(
        {
            "session": window,
            "from": "daily",
            "period": "2024-03-04:2024-03-15",
            "select": "count()",
        },
        settings,
    )
    utc = _on_clock(bars, "UTC")
    minutes = utc.hour * 60 + utc.minute
    lo = int(window[:2]) * 60 + int(window[3:5])
    inside = bars[(minutes >= lo) & (minutes < lo + 60)]
    per_date = inside.groupby(_trading_date(inside)).size()
    dates = pd.bdate_range("2024-03-04", "2024-03-15")
    per_date = per_date.reindex(dates, fill_value=0)
    none, part = per_date[per_date == 0], per_date[(per_date > 0) & (per_date < 60)]
    said = warnings_with(result, f"The window {window}, read on NQ's ET clock: of 10 trading")
    assert len(said) == 1
    if len(none):
        assert f"on {len(none)} ({none.index[0].date()} first) it was 17:00-18:00 ET" in said[0]
        assert "so they have no bar" in said[0]
        assert result.summary.value == 10 - len(none)
    if len(part):
        assert f"on {len(part)} ({part.index[0].date()} first)" in said[0]
        assert "only part of the window" in said[0]


@pytest.mark.parametrize(
    ("period", "summer"), [("2024-03-04:2024-03-15", False), ("2024-03-04:2024-04-02", True)]
)
def test_gmt_is_utc_and_the_uk_summer_clock_is_named(settings, bars, period, summer) -> None:
    """A trader's "London open, 08:00-09:00 GMT" runs on UTC all year; from 2024-03-31 the
    UK clock is BST, an hour ahead, so on those dates the window is 09:00-10:00 in London.
    The dates are counted here with zoneinfo, date by date."""
    result = ask(
        {"session": "08:00-09:00 GMT", "from": "daily", "period": period, "select": "count()"},
        settings,
    )
    days = [d for d in DAYS if period[:10] <= str(d.date()) <= period[11:]]
    utc = _on_clock(bars, "UTC")
    dates = _trading_date(bars[utc.hour == 8])
    assert result.summary.value == dates[dates.isin(days)].nunique()  # UTC's 08:00, each date
    london = ZoneInfo("Europe/London")
    bst = [
        d
        for d in days
        if (d + pd.Timedelta(hours=12)).to_pydatetime().replace(tzinfo=london).utcoffset()
        != pd.Timedelta(0)
    ]
    said = warnings_with(result, "'08:00-09:00 GMT' reads GMT as UTC all year")
    if not summer:
        assert not bst and said == []
        return
    assert len(bst) == 2  # 2024-04-01 and 2024-04-02
    assert said == [
        f"'08:00-09:00 GMT' reads GMT as UTC all year; the UK's clock (BST) is an hour ahead "
        f"of it on {len(bst)} of the {len(days)} dates, so there the window is 09:00-10:00 "
        "London time. For the UK's clock: '08:00-09:00 London'."
    ]


@pytest.mark.parametrize(
    ("period", "summer"), [("2024-03-04:2024-03-15", False), ("2024-03-04:2024-04-02", True)]
)
def test_gmt_clock_function_names_the_uk_summer_clock(settings, bars, period, summer) -> None:
    """ "Volume by London hour" written hour('GMT') reads UTC's hour all year: on the BST
    dates London's 08:00 bar is hour 7 there. The hours are checked against pandas' UTC
    conversion, and the dates in BST are counted with zoneinfo."""
    query = {
        "session": "ETH",
        "from": "1h",
        "period": period,
        "map": {"h": "hour('GMT')"},
        "group_by": "h",
        "select": "count()",
    }
    result = ask(query, settings)
    days = [d for d in DAYS if period[:10] <= str(d.date()) <= period[11:]]
    london = ZoneInfo("Europe/London")
    bst = [
        d
        for d in days
        if (d + pd.Timedelta(hours=12)).to_pydatetime().replace(tzinfo=london).utcoffset()
        != pd.Timedelta(0)
    ]
    hourly = bars[_trading_date(bars).isin(days).to_numpy()]
    hourly = hourly.set_index("timestamp").resample("1h").agg({"close": "last"}).dropna()
    utc_hours = pd.DatetimeIndex(hourly.index).tz_localize("America/New_York").tz_convert("UTC")
    assert result.table is not None
    assert sorted(result.table["h"].astype(int)) == sorted(set(utc_hours.hour))
    said = warnings_with(result, "hour('GMT') reads GMT as UTC all year")
    if not summer:
        assert said == []
        return
    assert said == [
        f"hour('GMT') reads GMT as UTC all year; the UK's clock (BST) is an hour ahead of it "
        f"on {len(bst)} of the {len(days)} dates, so there it reads an hour less than London's "
        "clock. For the UK's clock: hour('London')."
    ]
    london_hours = ask({**query, "map": {"h": "hour('London')"}}, settings)
    assert warnings_with(london_hours, "reads GMT as UTC") == []


def _summary(result: Result) -> str:
    return render_summary(result)


def _ends(first: pd.Series) -> str:
    """The lowest and the highest of the dates' values, each with its first date and its
    time of day: "'2020-06-01' 990 (16:30) to '2012-06-04' 1050 (17:30)"."""

    def said(date: pd.Timestamp) -> str:
        at = int(first[date]) % 1440
        return f"'{date.date()}' {first[date]} ({at // 60:02d}:{at % 60:02d})"

    return f"{said(first.idxmin())} to {said(first.idxmax())}"


def _rth_on_clock(bars: pd.DataFrame, zone: str) -> pd.DataFrame:
    """NQ's RTH bars (09:30-17:00 ET) with their trading date and their minute of the day
    on ``zone``'s clock, by pandas and the tz database."""
    stamps = bars["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    rth = bars[(minute >= 570) & (minute < 1020)]
    clock = _on_clock(rth, zone)
    return pd.DataFrame(
        {"date": _trading_date(rth), "at": clock.hour * 60 + clock.minute}, index=rth.index
    )


def _crossing(rth: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Per date: whether its RTH crosses midnight on the clock (its last bar reads earlier
    than its first), and its hours there ('17:30-01:00')."""
    days = rth.groupby("date")["at"].agg(["first", "last"])
    hours = [
        f"{a // 60:02d}:{a % 60:02d}-{(b + 1) // 60 % 24:02d}:{(b + 1) % 60:02d}"
        for a, b in days.to_numpy()
    ]
    return days["last"] < days["first"], pd.Series(hours, index=days.index)


def test_a_moscow_clock_that_wraps_inside_rth_is_said_when_its_minimum_is_taken(
    settings, bars
) -> None:
    """p38a #11: "at what Moscow time does NQ first …" as min(hour('MSK') * 60 +
    minute('MSK')) per date. RTH is 17:30-01:00 MSK on the US winter dates and in 2012
    (Moscow on UTC+4), 16:30-00:00 otherwise: on the first its bars after midnight read
    0-59, so the day's minimum is 0. The minimum is checked against pandas' conversion, and
    the warning's dates and hours are counted from it."""
    query = {
        "session": "RTH",
        "from": "1m",
        "map": {"tm": "hour('MSK') * 60 + minute('MSK')"},
        "group_by": "date()",
        "select": "min(tm) as first_tm",
    }
    result = ask(query, settings)
    rth = _rth_on_clock(bars, "Europe/Moscow")
    wrong = rth.groupby("date")["at"].min()
    right = rth["at"].where(rth["at"] >= 720, rth["at"] + 1440).groupby(rth["date"]).min()
    assert result.table["first_tm"].tolist() == wrong.tolist()
    wraps, hours = _crossing(rth)
    assert 0 < wraps.sum() < len(wraps)  # both kinds of date
    assert set(hours[wraps]) == {"17:30-01:00"} and set(hours[~wraps]) == {"16:30-00:00"}
    assert warnings_with(result, "falls back to 0 at midnight") == [
        f"hour('MSK') falls back to 0 at midnight inside RTH: on that clock RTH is 17:30-01:00 "
        f"MSK on {wraps.sum()} of the period's {len(wraps)} trading dates "
        f"({wraps[wraps].index[0].date()} first) and 16:30-00:00 on the other {(~wraps).sum()}, "
        "so min(tm) "
        "reads the session's 00:00-01:00 MSK bars as the day's earliest. To count across "
        f"midnight: if(tm < 720, tm + 1440, tm) in place of tm; counted so, first_tm runs "
        f"from {_ends(right)}, not from {_ends(wrong)}."
    ]
    # The form the warning gives counts the 00:xx bars after 23:59: the minimum is the open.
    query["map"]["tm2"] = "if(tm < 720, tm + 1440, tm)"
    query["select"] = "min(tm2) as first_tm"
    counted = ask(query, settings)
    assert counted.table["first_tm"].tolist() == right.tolist()
    assert warnings_with(counted, "falls back to 0 at midnight") == []


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ({"where": "hour('MSK') >= 20", "select": "count()"}, "hour('MSK') >= 20"),
        (
            {"select": "arg_min(time(), hour('MSK') * 60 + minute('MSK')) as t"},
            "arg_min(time(), hour('MSK') * 60 + minute('MSK'))",
        ),
        (
            {"select": ["time() as t", "time('MSK') as m"], "sort": "m asc", "limit": 3},
            '"sort": "m asc"',
        ),
        ({"where": "hour('MSK') >= 18 and hour('MSK') < 20", "select": "count()"}, None),
        ({"where": "hour('MSK') >= 23 or hour('MSK') < 1", "select": "count()"}, None),
        ({"where": "hour('MSK') == 0", "select": "count()"}, None),
    ],
)
def test_comparisons_picks_and_sorts_on_the_wrapping_clock(settings, asked, said) -> None:
    """A time of day past the open (20:00 MSK leaves the 00:xx bars out), a pick by the
    clock and a sort by it are said; a window written on that clock, across its midnight
    too, and an equality read what they say."""
    query = {"session": "RTH", "from": "1m", "period": "2024-03-04:2024-03-15", **asked}
    got = warnings_with(ask(query, settings), "falls back to 0 at midnight")
    if said is None:
        assert got == []
        return
    assert len(got) == 1 and f", so {said} reads the session's 00:00-01:00 MSK bars" in got[0]


def test_a_clock_on_which_rth_lies_within_one_day_says_nothing(settings, bars) -> None:
    """RTH is 14:30-22:00 UTC in the US winter and 13:30-21:00 in the summer: minimum and
    sort are the session's order there, and nothing is said."""
    rth = _rth_on_clock(bars, "UTC")
    wraps, hours = _crossing(rth)
    assert not wraps.any() and set(hours) == {"14:30-22:00", "13:30-21:00"}
    query = {
        "session": "RTH",
        "from": "1m",
        "map": {"tm": "hour('UTC') * 60 + minute('UTC')"},
        "group_by": "date()",
        "select": "min(tm) as first_tm",
        "sort": "first_tm asc",
    }
    result = ask(query, settings)
    assert sorted(result.table["first_tm"]) == sorted(rth.groupby("date")["at"].min())
    assert warnings_with(result, "falls back to 0 at midnight") == []


def test_times_on_another_clock_are_not_judged_by_the_exchange_s_evening(settings, bars) -> None:
    """ETH opens at 18:00 ET, 01:00 in a Moscow summer: its trading day runs 01:00-00:00
    MSK, in text order, so "high before low" written with time('MSK') is read as written
    and the text-order warning, which judges by the exchange's 18:00 open, says nothing
    (it had said 'reads N rows against the session's order'). The share is checked against
    the same comparison of pandas' Moscow times of each day's high and low."""
    days = pd.bdate_range("2020-06-01", "2020-06-03")
    result = ask(
        {
            "session": "ETH",
            "from": "1m",
            "period": "2020-06-01:2020-06-03",
            "group_by": "date()",
            "select": ["arg_max(time('MSK'), high) as t_hi", "arg_min(time('MSK'), low) as t_lo"],
            "then": {"map": {"hf": "t_hi < t_lo"}, "select": "mean(hf)"},
        },
        settings,
    )
    moscow = _on_clock(bars, "Europe/Moscow").strftime("%H:%M")
    frame = bars.assign(msk=moscow, date=_trading_date(bars).to_numpy())
    frame = frame[frame["date"].isin(days)]
    highs = frame.loc[frame.groupby("date")["high"].idxmax(), "msk"].to_numpy()
    lows = frame.loc[frame.groupby("date")["low"].idxmin(), "msk"].to_numpy()
    assert result.summary.value == pytest.approx(np.mean(highs < lows))
    assert warnings_with(result, "compares times of day as text") == []
