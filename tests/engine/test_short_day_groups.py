"""Intraday bars grouped by trading date over days that include a holiday session or a half
day: each such group holds a part day, and "the 16:00 exit" read by last(close) is the
12:59 or 13:14 bar there (p38b Q15: 20 of 517 trades, the longest losing streak 17 with
them, 24 without, with no word). On CASH the half day's stock-market close (13:00) is said
apart from CASH's own last bar, the futures' 13:14 (p38b Q19). A then stage's answer is
told only when it moves without them beyond the noise of the full days' own values, with the
values without them (p39a: 12 of the sentence's 13 firings moved nothing), and the where it
offers leaves out exactly the days it counted.

Hand-made minute bars around July 4, 2024: July 3 closes at 13:15 (a half day), July 4 at
13:00 (the stock market shut, the futures trading a short session); every other weekday
runs 18:00 the evening before to 17:00. Expected values from pandas over the same bars: a
day is short where its last CASH minute is before 15:59, read from the bars."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from asking import ask, warnings_with
from small_bars import bars_from_closes, write_minutes

from barb.sessions import minutes_of_day, trading_dates
from barb.settings import EngineSettings
from barb.summary_text import value_text

CLOSES = {dt.date(2024, 7, 3): "13:15", dt.date(2024, 7, 4): "13:00"}
FIRST, LAST = "2024-06-24", "2024-07-12"
CASH_OPEN, CASH_CLOSE = 570, 960  # 09:30-16:00
SAID = "are short sessions"
ONE_MINUTE = {"session": "CASH", "from": "1m"}


def _minutes(seed: int = 9) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    stamps = []
    for day in pd.bdate_range(FIRST, LAST):
        end = pd.Timedelta(CLOSES.get(day.date(), "17:00") + ":00")
        stamps.append(
            pd.date_range(day - pd.Timedelta(hours=6), day + end, freq="1min", inclusive="left")
        )
    ts = stamps[0].append(stamps[1:])
    n = len(ts)
    steps = rng.choice([-1.0, 0.0, 1.0], n) * rng.integers(1, 9, n) * 0.25
    close = np.round((20000 + np.cumsum(steps)) * 4) / 4
    return bars_from_closes(ts, close, rng.integers(1, 300, n))


@pytest.fixture(scope="module")
def bars() -> pd.DataFrame:
    frame = _minutes()
    frame["trading_date"] = trading_dates(frame["timestamp"], 18 * 60)
    frame["minute"] = minutes_of_day(frame["timestamp"])
    return frame


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory, bars: pd.DataFrame) -> EngineSettings:
    data_dir: Path = tmp_path_factory.mktemp("short_day_groups")
    settings = EngineSettings(data_dir=data_dir)
    write_minutes(bars, "NQ", settings, "hand-made bars around July 4, 2024")
    return settings


@pytest.fixture(scope="module")
def cash_days(bars: pd.DataFrame) -> pd.DataFrame:
    """Each trading date's CASH minutes: first open, last close, the last bar's minute and
    the close of the 12:59 bar (the stock market's 13:00 close)."""
    cash = bars[(bars["minute"] >= CASH_OPEN) & (bars["minute"] < CASH_CLOSE)]
    days = cash.groupby("trading_date").agg(
        open=("open", "first"), close=("close", "last"), last=("minute", "max")
    )
    days["at_13"] = cash[cash["minute"] == 779].set_index("trading_date")["close"]
    days["short"] = days["last"] < CASH_CLOSE - 1
    return days


def clock(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


def _said(cash_days: pd.DataFrame, rows: pd.Index, whose: str, names: str) -> str:
    """The warning's first sentence, from the bars: the short days among ``rows``."""
    short = cash_days.loc[rows][cash_days.loc[rows, "short"]]
    assert len(short) == 2
    half, holiday = (f"{day:%Y-%m-%d}" for day in short.index)
    lasts = " or ".join(sorted(clock(int(m)) for m in short["last"]))
    return (
        f"2 {whose} are short sessions: the futures closed at 13:15 on 1 early close ({half}) "
        f"and 13:00 on 1 holiday ({holiday}), where the other days' bars run to 16:00, so their "
        f"{names} a part day's (last() reads the {lasts} bar there, not the 15:59 one)."
    )


def test_day_groups_over_a_half_day_and_a_holiday_say_so(settings, cash_days) -> None:
    """p38b Q15's smallest case: each day's last bar listed said nothing on a day whose last
    bar is 13:14."""
    result = ask({"group_by": "date()", "select": "last(time()) as last_t"}, settings, **ONE_MINUTE)
    listed = result.table.set_index("date")["last_t"]
    assert list(listed) == [clock(int(m)) for m in cash_days["last"]]
    assert warnings_with(result, SAID) == [
        _said(cash_days, cash_days.index, f"of the {len(cash_days)} days grouped", "last_t is")
        + " On the half day the stock market closed at 13:00 but CASH runs on to the futures' "
        '13:15 close (last bar 13:14): "where": "not early_close() or time() < \'13:00\'" '
        'ends them at 13:00. "where": "not early_close()" leaves them out.'
    ]
    # The where it offers leaves out the two short days and no other.
    left = ask(
        {"where": "not early_close()", "group_by": "date()", "select": "last(time()) as t"},
        settings,
        **ONE_MINUTE,
    )
    assert list(left.table["date"]) == list(cash_days.index[~cash_days["short"]])


def _band(values: pd.Series) -> float:
    """2 standard errors of the mean of ``values`` (pandas' sample standard deviation)."""
    return 2 * values.std(ddof=1) / np.sqrt(len(values))


def test_a_then_stage_whose_answer_the_short_days_do_not_move_is_not_told(
    settings, cash_days
) -> None:
    """The backtest's shape: exits by last(close) per date(), and a then stage keeping some
    of the days (here the moves no larger than the larger short day's, so both short days
    are among some of the full ones). Its mean move without them lies within 2 standard
    errors of the full days' (pandas), so nothing is said, nor the cash close's half day
    (it had been said whatever the answer: p39a heard it 13 times and it mattered once)."""
    moves = (cash_days["close"] - cash_days["open"]).abs()
    ceiling = moves[cash_days["short"]].max()
    kept = moves.index[moves <= ceiling]
    assert 2 < len(kept) < len(moves)
    full = moves[kept][~cash_days.loc[kept, "short"]]
    assert abs(moves[kept].mean() - full.mean()) <= _band(full)
    query = {
        "group_by": "date()",
        "select": ["first(open) as entry", "last(close) as exit"],
        "then": {
            "map": {"move": "abs(exit - entry)"},
            "where": f"move <= {ceiling}",
            "select": ["count() as days", "mean(move) as avg"],
        },
    }
    result = ask(query, settings, **ONE_MINUTE)
    assert result.summary.values["days"] == len(kept)
    assert result.summary.values["avg"] == pytest.approx(moves[kept].mean())
    assert warnings_with(result, SAID) == warnings_with(result, "half day") == []


def test_a_mean_the_part_days_move_is_said_with_its_value_without_them(
    settings, bars, cash_days
) -> None:
    """p39a Q43's shape: the mean day volume of CASH minute bars. The two short days trade
    210 and 225 of 390 minutes; the full days' mean volume lies more than 2 of their standard
    errors from the answer, so it is said with the mean without them; the median, within
    its band, is not."""
    cash = bars[(bars["minute"] >= CASH_OPEN) & (bars["minute"] < CASH_CLOSE)]
    volume = cash.groupby("trading_date")["volume"].sum()
    full = volume[~cash_days["short"]]
    assert abs(volume.mean() - full.mean()) > _band(full)
    result = ask(
        {
            "group_by": "date()",
            "select": "sum(volume) as vol",
            "then": {"select": ["mean(vol) as avg_vol", "count() as days"]},
        },
        settings,
        **ONE_MINUTE,
    )
    assert result.summary.values == {"avg_vol": pytest.approx(volume.mean()), "days": 15}
    said = warnings_with(result, SAID)
    assert len(said) == 1
    assert said[0].startswith(f"2 of the then stage's {len(volume)} days are short sessions")
    without = value_text(full.mean())  # rounded as the answer's numbers are
    assert f"so their vol is a part day's; without them avg_vol is {without}. " in said[0]
    assert said[0].endswith('The first stage\'s "where": "not early_close()" leaves them out.')


def test_a_mean_the_part_days_make_a_share_of_is_said_within_the_noise(settings, cash_days) -> None:
    """The stop_and_target concept's shape (p48j q21): an expectancy that the two short days
    move by a quarter of itself or more (pandas: 6.17 with them, 8.60 without) is said with
    its value without them, though within 2 standard errors of the full days' (±13), as a
    total read from the last row of a cumsum was (q03)."""
    pnl = cash_days["close"] - cash_days["open"]
    full = pnl[~cash_days["short"]]
    assert abs(pnl.mean() - full.mean()) <= _band(full)  # within the noise
    assert abs(pnl.mean() - full.mean()) >= 0.25 * abs(pnl.mean())
    query = {
        "group_by": "date()",
        "select": ["first(open) as entry", "last(close) as exit"],
        "then": {
            "map": {"pnl": "exit - entry"},
            "select": ["count() as trades", "mean(pnl) as expectancy"],
        },
    }
    result = ask(query, settings, **ONE_MINUTE)
    assert result.summary.values["expectancy"] == pytest.approx(pnl.mean())
    said = warnings_with(result, SAID)
    assert len(said) == 1
    assert f"; without them expectancy is {value_text(full.mean())}. " in said[0]


def test_daily_short_sessions_a_then_stage_aggregates_are_said(settings, cash_days) -> None:
    """backtest_basics over daily rows (p48j q22): the same rows as a table name their half
    day and holiday session; aggregated by a then stage they were said nowhere, though
    without them the total and expectancy move (pandas over the bars)."""
    pnl = cash_days["close"] - cash_days["open"]
    full = pnl[~cash_days["short"]]
    query = {
        "session": "CASH",
        "from": "daily",
        "map": {"pnl": "close - open"},
        "select": ["date()", "pnl"],
        "then": {"select": ["count(pnl) as trades", "sum(pnl) as total", "mean(pnl) as exp"]},
    }
    result = ask(query, settings)
    assert result.summary.values == {
        "trades": len(pnl),
        "total": pytest.approx(pnl.sum()),
        "exp": pytest.approx(pnl.mean()),
    }
    half, holiday = (f"{day:%Y-%m-%d}" for day in cash_days.index[cash_days["short"]])
    assert warnings_with(result, "short session") == [
        f"2 of the then stage's {len(pnl)} rows are short sessions: {half} (early close, "
        f"closed 13:15), {holiday} (holiday, closed 13:00); their pnl is a part day's; "
        f"without them total is {value_text(full.sum())} and exp is "
        f'{value_text(full.mean())}. The first stage\'s "where": "not holiday() and not '
        'early_close()" leaves them out.'
    ]
    # What the where it offers gives: the values said.
    query["where"] = "not holiday() and not early_close()"
    left = ask(query, settings).summary.values
    assert left["total"] == pytest.approx(full.sum()) and left["trades"] == len(full)


def _day_volumes(bars: pd.DataFrame, cash_days: pd.DataFrame) -> pd.DataFrame:
    """Each trading date's CASH volume, weekday and whether it is short, from the bars."""
    cash = bars[(bars["minute"] >= CASH_OPEN) & (bars["minute"] < CASH_CLOSE)]
    days = cash.groupby("trading_date")["volume"].sum().to_frame("vol")
    days["day"] = days.index.strftime("%a")
    days["short"] = cash_days["short"]
    return days


def test_each_group_of_a_then_stage_is_read_alone(settings, bars, cash_days) -> None:
    """Mean day volume by weekday: the short days are a Wednesday and a Thursday, and a
    group is said where its own full days' band leaves its mean out (pandas over the same
    bars), in the table's order."""
    days = _day_volumes(bars, cash_days)
    moved = {}
    for name, group in days.groupby("day"):
        full = group.loc[~group["short"], "vol"]
        if abs(group["vol"].mean() - full.mean()) > _band(full):
            moved[name] = f"{name}: avg_vol is {value_text(full.mean())}"
    assert set(moved) <= {"Wed", "Thu"} and moved, "only the short days' weekdays move"
    result = ask(
        {
            "group_by": ["date()", "dayname()"],
            "select": "sum(volume) as vol",
            "then": {"group_by": "dayname", "select": "mean(vol) as avg_vol"},
        },
        settings,
        **ONE_MINUTE,
    )
    listed = [moved[day] for day in result.table["dayname"] if day in moved]
    said = warnings_with(result, SAID)
    assert len(said) == 1
    assert f"; without them {' and '.join(listed)}. " in said[0]


def test_an_order_statistic_is_said_when_it_changes(settings, bars, cash_days) -> None:
    """A value one row gives (the lowest day volume) has no noise band: the lowest day is a
    short one, and without them it is the lowest full day's; the highest, a full day's, is
    not moved and not named, nor the count of up closes, within its band. The exit read by
    last() brings the cash close's half day along, as the then stage's first stage says it."""
    days = _day_volumes(bars, cash_days)
    assert days["short"][days["vol"].idxmin()] and not days["short"][days["vol"].idxmax()]
    result = ask(
        {
            "group_by": "date()",
            "select": ["sum(volume) as vol", "first(open) as entry", "last(close) as exit"],
            "then": {
                "select": [
                    "min(vol) as low_vol",
                    "max(vol) as high_vol",
                    "count(exit > entry) as ups",
                ]
            },
        },
        settings,
        **ONE_MINUTE,
    )
    full = days.loc[~days["short"], "vol"]
    assert warnings_with(result, SAID) == [
        _said(
            cash_days, cash_days.index, f"of the then stage's {len(days)} days", "vol and exit are"
        )[:-1]
        + f"; without them low_vol is {full.min()}."
        + " On the half day the stock market closed at 13:00 but CASH runs on to the futures' "
        '13:15 close (last bar 13:14): the first stage\'s "where": "not early_close() or '
        'time() < \'13:00\'" ends them at 13:00. The first stage\'s "where": "not '
        'early_close()" leaves them out.'
    ]


def test_a_window_that_the_half_day_fills_offers_the_form_for_the_holiday_alone(
    settings, bars
) -> None:
    """p39a Q29: over 09:30-13:15 the half day (13:15) is whole and only the holiday session
    (13:00) is cut, so not early_close(), which drops the half day too, is not offered; the
    form given keeps every day whose bars reach 13:15, as the bars say."""
    window = bars[(bars["minute"] >= CASH_OPEN) & (bars["minute"] < 795)]
    last = window.groupby("trading_date")["minute"].max()
    assert list(last[last < 794].index) == [pd.Timestamp("2024-07-04")]
    query = {"session": "09:30-13:15", "from": "1m", "group_by": "date()"}
    result = ask({**query, "select": "sum(volume) as v"}, settings)
    said = warnings_with(result, "is a short session")
    assert len(said) == 1
    assert said[0].startswith(f"1 of the {len(last)} days grouped is a short session")
    form = "session_volume('13:00-13:15') > 0"
    assert said[0].endswith(f'"where": "{form}" leaves them out.')
    left = ask({**query, "where": form, "select": "count() as n"}, settings)
    assert list(left.table["date"]) == list(last.index[last == 794])


def test_the_form_for_the_stock_market_close_ends_the_half_day_at_1300(settings, cash_days) -> None:
    """What the warning offers reads the 12:59 bar's close on the half day (the 13:00 cash
    close) and the 15:59 bar's on full days, and is told nothing more."""
    result = ask(
        {
            "where": "not early_close() or time() < '13:00'",
            "group_by": "date()",
            "select": ["last(close) as exit", "last(time()) as last_t"],
        },
        settings,
        **ONE_MINUTE,
    )
    table = result.table.set_index("date")
    half = pd.Timestamp("2024-07-03")
    assert table.loc[half, "last_t"] == "12:59"
    assert table.loc[half, "exit"] == cash_days.loc[half, "at_13"]
    full = cash_days.index[~cash_days["short"]]
    assert list(table.loc[full, "exit"]) == list(cash_days.loc[full, "close"])
    assert warnings_with(result, "half day") == warnings_with(result, SAID) == []


@pytest.mark.parametrize(
    "query",
    [
        # The opening range alone: a 13:00 close takes nothing from it.
        {"where": "time() < '09:45'", "group_by": "date()", "select": "last(close) as c"},
        {"session": "09:30-09:45", "group_by": "date()", "select": "max(high) - min(low) as r"},
        # Only each day's first bar is read.
        {"group_by": "date()", "select": "first(open) as o"},
        # A then stage that reads none of the columns a part day fills.
        {
            "group_by": "date()",
            "select": ["first(open) as o", "last(close) as c"],
            "then": {"select": "mean(o) as mean_open"},
        },
        # Groups of an hour, not of a day.
        {"group_by": ["date()", "hour()"], "select": "last(close) as c"},
    ],
)
def test_what_an_early_close_takes_nothing_from_is_not_told(settings, query) -> None:
    result = ask(query, settings, **ONE_MINUTE)
    assert warnings_with(result, SAID) == warnings_with(result, "half day") == []


def test_keys_whose_groups_are_whole_days_are_day_groups(settings, cash_days) -> None:
    """date() beside dayname() on 5-minute bars: still one group a day, decided from the
    bars, with the 12:55 and 13:10 bars as the last ones."""
    result = ask(
        {
            "from": "5m",
            "group_by": ["date()", "dayname()"],
            "select": "last(close) - first(open) as move",
        },
        settings,
        session="CASH",
    )
    said = warnings_with(result, SAID)
    assert len(said) == 1
    assert said[0].startswith(f"2 of the {len(cash_days)} days grouped are short sessions")
    assert "(last() reads the 12:55 or 13:10 bar there, not the 15:55 one)" in said[0]


def test_a_query_that_picks_the_half_days_is_told_only_of_the_cash_close(settings) -> None:
    """p38b Q19: "the ORB on half days, out at the cash close": CASH's close there is the
    futures' 13:15, the stock market's 13:00."""
    result = ask(
        {
            "where": "early_close() and not holiday()",
            "group_by": "date()",
            "select": ["last(close) as exit", "last(time()) as last_t"],
        },
        settings,
        **ONE_MINUTE,
    )
    assert list(result.table["last_t"]) == ["13:14"]
    assert warnings_with(result, SAID) == []
    assert warnings_with(result, "half day") == [
        "On the half day the stock market closed at 13:00 but CASH runs on to the futures' "
        '13:15 close (last bar 13:14): "where": "… and (not early_close() or time() < '
        "'13:00')\" ends them at 13:00."
    ]


def test_no_last_bar_read_no_cash_close_said(settings, cash_days) -> None:
    """The day's high on CASH: a part day's on the two short days, but no close is read,
    so the stock market's 13:00 is not said."""
    result = ask({"group_by": "date()", "select": "max(high) as h"}, settings, **ONE_MINUTE)
    said = warnings_with(result, SAID)
    assert len(said) == 1
    assert said[0].startswith(f"2 of the {len(cash_days)} days grouped are short sessions")
    assert said[0].endswith(
        'so their h is a part day\'s. "where": "not early_close()" leaves them out.'
    )
    assert warnings_with(result, "half day") == []


def test_rth_day_groups_say_the_short_days_without_the_cash_close(settings, bars) -> None:
    """RTH runs to 17:00; its short days are the same two, and it is no stock-market session."""
    rth = bars[(bars["minute"] >= CASH_OPEN) & (bars["minute"] < 1020)]
    last = rth.groupby("trading_date")["minute"].max()
    short = last[last < 1019]
    assert len(short) == 2
    result = ask(
        {"session": "RTH", "from": "1m", "group_by": "date()", "select": "sum(volume) as v"},
        settings,
    )
    said = warnings_with(result, SAID)
    assert len(said) == 1
    assert said[0].startswith(f"2 of the {len(last)} days grouped are short sessions")
    assert "where the other days' bars run to 17:00" in said[0]
    assert "half day" not in said[0]


def test_a_cut_last_bar_said_already_is_not_said_twice(settings) -> None:
    """Hourly RTH bars: last(range) reads the 12:30 bar an early close cut, which
    ``short_bar_picks`` names with its days."""
    result = ask(
        {"session": "RTH", "from": "1h", "group_by": "date()", "select": "last(range) as lr"},
        settings,
    )
    assert warnings_with(result, "a bar an early close or holiday cut short on 2")
    assert warnings_with(result, SAID) == []


# The last 30 minutes of each day, counted back from its own last bar: a short day's are
# 12:45-13:15 (or 12:30-13:00), as whole a window as a full day's 15:30-16:00.
LAST_30 = {"map": {"t": "hour() * 60 + minute()"}, "where": "place(t, 'day') <= 30"}


def test_the_last_bars_of_each_day_are_no_part_day_on_a_short_one(settings, bars) -> None:
    """ "Volume in the last 30 minutes of the session", each day listed: every day's group,
    short or not, holds the 30 minutes before its own close (pandas), so "their vol is a
    part day's" said nothing true and is not said; that the short days' 30 minutes are
    another time of day (12:45-13:15 holding the stock market's 13:00 close, 12:30-13:00)
    than the others' 15:30-16:00 is."""
    cash = bars[(bars["minute"] >= CASH_OPEN) & (bars["minute"] < CASH_CLOSE)]
    tail = cash.groupby("trading_date").tail(30)
    spans = tail.groupby("trading_date")["minute"].agg(["min", "max", "size"])
    assert (spans["size"] == 30).all() and (spans["max"] - spans["min"] == 29).all()
    short = spans.index[spans["max"] < CASH_CLOSE - 1]
    assert [clock(int(m)) for m in spans.loc[short, "max"]] == ["13:14", "12:59"]
    result = ask(
        {**LAST_30, "group_by": "date()", "select": "sum(volume) as vol"}, settings, **ONE_MINUTE
    )
    listed = result.table.set_index("date")["vol"]
    assert listed.to_dict() == tail.groupby("trading_date")["volume"].sum().to_dict()
    assert warnings_with(result, "a part day's") == []
    said = warnings_with(result, SAID)
    assert len(said) == 1
    windows = {
        f"{clock(int(lo))}-{clock(int(hi) + 1)}" for lo, hi in spans.loc[short].values[:, :2]
    }
    assert windows == {"12:45-13:15", "12:30-13:00"}
    assert (
        "so their vol reads 12:45-13:15 or 12:30-13:00, not the other days' 15:30-16:00 "
        "(on the half days it holds the stock market's 13:00 close)." in said[0]
    )


def test_a_clock_window_the_short_days_end_inside_is_still_told(settings, bars) -> None:
    """From 12:45 on the clock: the half day holds 30 minutes of it and the holiday 15,
    against a full day's 195, and the warning stays."""
    cash = bars[(bars["minute"] >= 765) & (bars["minute"] < CASH_CLOSE)]
    held = cash.groupby("trading_date").size()
    assert sorted(set(held)) == [15, 30, 195]
    result = ask(
        {"where": "time() >= '12:45'", "group_by": "date()", "select": "sum(volume) as vol"},
        settings,
        **ONE_MINUTE,
    )
    said = warnings_with(result, SAID)
    assert len(said) == 1
    assert said[0].startswith(f"2 of the {len(held)} days grouped are short sessions")
    assert "so their vol is a part day's" in said[0]


def test_the_last_30_minutes_of_es_rth_say_the_short_days_hold_another_half_hour(
    sample_settings,
) -> None:
    """ "Average volume in the last 30 minutes of RTH" on ES 2020-2025, counted back from
    each day's last bar: on its 52 short sessions those are 12:30-13:00 and 12:45-13:15
    (around the stock market's early close), not 16:30-17:00, the thin end of the post-cash
    hour, and they lift the mean by 18% (pandas over the sample's raw bars). Nothing was
    said; now the windows are named with the mean without them."""
    raw = pd.read_parquet(sample_settings.data_dir / "ES.parquet")
    raw = raw[(raw["trading_date"] >= "2020-01-01") & (raw["trading_date"] <= "2025-12-31")]
    rth = raw[(raw["minute"] >= 570) & (raw["minute"] < 1020)]
    tail = rth.groupby("trading_date").tail(30)
    volume = tail.groupby("trading_date")["volume"].sum()
    ends = tail.groupby("trading_date")["minute"].max()
    short = ends < 1019
    assert sorted(ends[short].map(lambda m: clock(int(m) + 1)).unique()) == ["13:00", "13:15"]
    assert int(short.sum()) == 52 and volume.mean() > 1.15 * volume[~short].mean()
    result = ask(
        {
            **LAST_30,
            "period": "2020:2025",
            "group_by": "date()",
            "select": "sum(volume) as v",
            "then": {"select": "mean(v)"},
        },
        sample_settings,
        "ES",
        session="RTH",
        **{"from": "1m"},
    )
    assert result.summary.value == pytest.approx(volume.mean())
    said = warnings_with(result, SAID)
    assert len(said) == 1
    assert said[0].startswith("52 of the then stage's 1,548 days are short sessions")
    assert "so their v reads 12:30-13:00 or 12:45-13:15, not the other days' 16:30-17:00" in said[0]
    assert f"without them mean_v is {value_text(volume[~short].mean())}." in said[0]
    assert said[0].endswith('"where": "… and not early_close()" leaves them out.')


def test_a_pick_with_no_usual_time_of_day_is_not_said_to_move(settings, bars) -> None:
    """Each day's busiest minute (place(volume, 'day') == 1) has no clock window the full
    days share, so the short days' picks are at no other time than theirs: nothing said."""
    cash = bars[(bars["minute"] >= CASH_OPEN) & (bars["minute"] < CASH_CLOSE)]
    top = cash.loc[cash.groupby("trading_date")["volume"].idxmax()]
    assert top["minute"].nunique() > 5  # the busiest minutes are spread over the day
    result = ask(
        {
            "where": "place(volume, 'day') == 1",
            "group_by": "date()",
            "select": "sum(volume) as vol",
        },
        settings,
        **ONE_MINUTE,
    )
    assert result.table["vol"].tolist() == top["volume"].tolist()
    assert warnings_with(result, SAID) == []
