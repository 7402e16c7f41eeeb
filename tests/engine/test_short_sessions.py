"""Short sessions among daily bars: a US holiday's or an early close's, on which the query's
own window lost bars. "The 5 quietest days of 2024" listed Thanksgiving and the day after,
whose range and volume are a part day's; p5 of 2024's daily RTH volume is pulled down by
them. The overnight hours before a holiday trade in full (of 2024's holiday sessions only
Good Friday's overnight stopped early, at 09:15), and are not called short.

Which days lost bars is counted here from the raw minute bars with pandas (a window's minutes
per trading date against a full day's), holidays from the exchange's published list; never
through Barb.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask
from nyse_holidays import NYSE_HOLIDAYS_2024
from rth_bars import rth_minutes

from barb.data.store import data_path
from barb.result import Result

PRESIDENTS_DAY = "2024-02-19"
# Windows in minutes of the day, [start, end); OVERNIGHT crosses midnight.
RTH = (570, 1020)
OVERNIGHT = (1080, 570)
LEAVE_OUT = '"where": "not holiday() and not early_close()" leaves them out.'


def _short(result: Result) -> list[str]:
    return [w for w in result.metadata.warnings if "short session" in w]


def _clock(last_minute: pd.Series) -> pd.Series:
    """The wall clock the day's last minute bar ended at: '13:00' after the 12:59 bar."""
    end = last_minute.astype(int) + 1
    return end.map(lambda m: f"{m // 60 % 24:02d}:{m % 60:02d}")


@pytest.fixture(scope="module")
def sample_days(sample_settings) -> pd.DataFrame:
    """The sample's trading dates of 2023 and 2024: RTH volume and range, and the minutes
    each of RTH and the overnight hours traded."""
    bars = pd.read_parquet(data_path("NQ", sample_settings))
    bars = bars[bars["trading_date"].dt.year.isin([2023, 2024])]
    minute = bars["minute"]
    rth = bars[(minute >= RTH[0]) & (minute < RTH[1])]
    days = rth.groupby("trading_date").agg(
        volume=("volume", "sum"), high=("high", "max"), low=("low", "min"), rth=("minute", "size")
    )
    overnight = bars[(minute >= OVERNIGHT[0]) | (minute < OVERNIGHT[1])]
    nights = overnight.groupby("trading_date").agg(
        night_volume=("volume", "sum"), night=("minute", "size")
    )
    days = days.join(nights, how="outer")
    days["closed"] = _clock(bars.groupby("trading_date")["minute"].last())
    days["range"] = days["high"] - days["low"]
    days.index = [f"{d:%Y-%m-%d}" for d in days.index]
    return days


@pytest.fixture(scope="module")
def days_2024(sample_days) -> pd.DataFrame:
    return sample_days[sample_days.index >= "2024"]


# --- rankings -------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_ranking_that_lists_short_sessions_names_them(sample_settings, days_2024) -> None:
    result = ask(
        {"period": "2024", "sort": "volume asc", "limit": 10}, sample_settings, **RTH_DAILY
    )
    quietest = days_2024.dropna(subset=["volume"]).sort_values("volume", kind="stable")[:10]
    assert result.table["date"].tolist() == quietest.index.tolist()
    short = quietest[quietest["rth"] < RTH[1] - RTH[0]].index
    kind = {True: "holiday", False: "early close"}
    named = [
        f"{d} ({kind[d in NYSE_HOLIDAYS_2024]}, closed {quietest.loc[d, 'closed']})" for d in short
    ]
    assert len(short) == 6
    assert _short(result) == [
        f"6 of the 10 rows listed are short sessions: {', '.join(named[:3])} and 3 more; "
        f"their range and volume are a part day's. {LEAVE_OUT}"
    ]


@pytest.mark.slow
def test_overnight_rankings_name_only_the_nights_that_stopped_early(
    sample_settings, days_2024
) -> None:
    """Every 2024 overnight session ranked: the holidays' nights traded all 930 minutes and
    are not named; Good Friday's stopped at 09:15."""
    result = ask(
        {"period": "2024", "map": {"night": "volume"}, "sort": "night asc", "limit": 300},
        sample_settings,
        **RTH_DAILY | {"session": "OVERNIGHT"},
    )
    nights = days_2024.sort_values("night_volume", kind="stable")
    assert result.table["date"].tolist() == nights.index.tolist()
    holidays = [d for d in nights.index if d in NYSE_HOLIDAYS_2024]
    stopped = nights[nights["night"] < 24 * 60 - OVERNIGHT[0] + OVERNIGHT[1]].index.tolist()
    assert len(holidays) == 8 and stopped == ["2024-03-29"]
    # The model is shown the first and the last five of them.
    at = nights.index.get_loc("2024-03-29")
    among = "" if at < 5 or at >= len(nights) - 5 else "not "
    assert _short(result) == [
        f"1 of the {len(nights)} rows is a short session ({among}among the 10 shown): "
        f"2024-03-29 (holiday, closed "
        f"{days_2024.loc['2024-03-29', 'closed']}); their range and volume are a part day's. "
        f"{LEAVE_OUT}"
    ]


@pytest.mark.slow
def test_a_weekday_question_on_overnight_says_the_holidays_nights_traded_in_full(
    sample_settings,
    days_2024,
    monkeypatch,
) -> None:
    # The note's words, whatever leaving the holidays out moves.
    monkeypatch.setattr("barb.caveats.calendar.HOLIDAY_SHIFT", 0.0)
    result = ask(
        {"period": "2024", "map": {"wd": "dayname()"}, "group_by": "wd", "select": "mean(range)"},
        sample_settings,
        **RTH_DAILY | {"session": "OVERNIGHT"},
    )
    holidays = days_2024[days_2024.index.isin(NYSE_HOLIDAYS_2024)]
    full = holidays[holidays["night"] == 24 * 60 - OVERNIGHT[0] + OVERNIGHT[1]]
    assert len(holidays) == 8 and holidays.index.difference(full.index).tolist() == ["2024-03-29"]
    assert (
        "8 of the rows are US holiday sessions (the stock market closed, only 2024-03-29 "
        f"traded short hours), e.g. {holidays.index[0]}: "
        '"where": "not holiday()" leaves them out when the question is about the stock '
        "market's days."
    ) in result.metadata.warnings, result.metadata.warnings


def test_a_holiday_whose_hours_traded_in_full_is_no_short_session(engine_settings, minutes) -> None:
    """The engine fixture trades every minute of Presidents' Day: it tops a ranking by volume
    as any other day would, and is not called short."""
    rth = rth_minutes(minutes)
    assert (rth["day"] == PRESIDENTS_DAY).sum() == RTH[1] - RTH[0]
    volume = rth.groupby("day")["volume"].sum().sort_values(kind="stable")
    rank = [f"{d:%Y-%m-%d}" for d in volume.index].index(PRESIDENTS_DAY) + 1
    result = ask({"sort": "volume asc", "limit": rank}, engine_settings, **RTH_DAILY)
    assert PRESIDENTS_DAY in result.table["date"].tolist()
    assert not _short(result), result.metadata.warnings


@pytest.mark.slow
def test_rankings_without_them_or_by_date_say_nothing(sample_settings) -> None:
    left_out = ask(
        {
            "period": "2024",
            "where": "not holiday() and not early_close()",
            "sort": "volume asc",
            "limit": 10,
        },
        sample_settings,
        **RTH_DAILY,
    )
    assert not _short(left_out)
    by_date = ask(
        {"period": "2024-11", "sort": "date desc", "limit": 25}, sample_settings, **RTH_DAILY
    )
    assert "2024-11-28" in by_date.table["date"].tolist() and not _short(by_date)


@pytest.mark.slow
def test_rows_a_where_picked_by_their_kind_are_not_named_again(sample_settings, days_2024) -> None:
    """ES's holiday sessions ranked by range (where holiday()) were told "5 of the 5 rows
    listed are short sessions ... Against full days compare 18:00-13:00" (p47g q03): the
    where had picked them as such. Under "not holiday()" the early closes listed are still
    named, each from pandas' minutes."""
    query = {"period": "2024", "sort": "volume asc", "limit": 5}
    holidays = ask({**query, "where": "holiday()"}, sample_settings, **RTH_DAILY)
    traded = days_2024.dropna(subset=["volume"])
    want = traded[traded.index.isin(NYSE_HOLIDAYS_2024)].sort_values("volume", kind="stable")
    assert holidays.table["date"].tolist() == want.index[:5].tolist()
    assert (want["rth"][:5] < RTH[1] - RTH[0]).all()  # each a short session
    assert not _short(holidays), holidays.metadata.warnings
    both = ask({**query, "where": "holiday() or early_close()"}, sample_settings, **RTH_DAILY)
    assert not _short(both), both.metadata.warnings
    others = ask({**query, "where": "not holiday()"}, sample_settings, **RTH_DAILY)
    rest = traded[~traded.index.isin(NYSE_HOLIDAYS_2024)].sort_values("volume", kind="stable")
    assert others.table["date"].tolist() == rest.index[:5].tolist()
    early = rest[:5][rest["rth"][:5] < RTH[1] - RTH[0]]
    assert len(early) >= 1
    (said,) = _short(others)
    assert said.startswith(f"{len(early)} of the 5 rows listed") and "holiday," not in said


# --- rows listed in time order ----------------------------------------------------------------


@pytest.fixture(scope="module")
def late_2025(sample_settings) -> pd.DataFrame:
    """The sample's RTH days of November and December 2025: range, volume, the minutes
    traded and the wall clock the day's last bar ended at."""
    bars = pd.read_parquet(
        data_path("NQ", sample_settings),
        filters=[("trading_date", ">=", pd.Timestamp("2025-11-01"))],
    )
    bars = bars[bars["trading_date"] < "2026-01-01"]
    rth = bars[(bars["minute"] >= RTH[0]) & (bars["minute"] < RTH[1])]
    days = rth.groupby("trading_date").agg(
        volume=("volume", "sum"), high=("high", "max"), low=("low", "min"), rth=("minute", "size")
    )
    days["range"] = days["high"] - days["low"]
    days["closed"] = _clock(bars.groupby("trading_date")["minute"].last())
    days.index = [f"{d:%Y-%m-%d}" for d in days.index]
    return days


@pytest.mark.parametrize(
    ("query", "said"),
    [
        # p29a M2: Thanksgiving week's ranges, and the 24th alone.
        (
            {"period": "2025-11-24:2025-11-28", "select": ["range", "volume"]},
            "range and volume are",
        ),
        ({"period": "2025-12-24", "select": "range"}, "range is"),
        ({"period": "2025-11:2025-12", "map": {"move": "close - open"}}, "move is"),
        # p47b #19: the day's change to an early close is the whole day's; its range is not.
        (
            {
                "period": "2025-12-15:2025-12-31",
                "map": {"ret": "(close / prev(close) - 1) * 100"},
                "select": ["ret", "range"],
            },
            "range is",
        ),
    ],
)
def test_rows_listed_by_date_name_their_short_sessions(
    sample_settings, late_2025, query, said
) -> None:
    """A half day among a table of days read as a quiet full day (215 on the day after
    Thanksgiving, against 336 for the week's full days), while a statistic over the same
    days said it. The rows listed name each with its close."""
    result = ask(query, sample_settings, **RTH_DAILY)
    listed = late_2025.loc[result.table["date"].astype(str)]
    short = listed[listed["rth"] < RTH[1] - RTH[0]]
    assert len(short) >= 1
    kind = {True: "holiday", False: "early close"}
    named = [
        f"{d} ({kind[d == '2025-11-27']}, closed {short.loc[d, 'closed']})" for d in short.index
    ]
    more = f" and {len(named) - 3} more" if len(named) > 3 else ""
    are = "is a short session" if len(short) == 1 else "are short sessions"
    # Every row short (the 24th alone): leaving them out would leave no row.
    other = LEAVE_OUT
    if len(short) == len(listed):
        other = (
            f'Against full days compare the hours both trade, "session": '
            f'"09:30-{min(short["closed"])}", over every day.'
        )
    assert _short(result) == [
        f"{len(short)} of the {len(listed)} rows listed {are}: {', '.join(named[:3])}{more}; "
        f"their {said} a part day's. {other}"
    ]


@pytest.mark.slow
def test_a_table_too_long_to_show_counts_the_short_sessions_shown(sample_settings) -> None:
    """September to December 2025's days by range: the model is shown the first and the last
    five of 84 rows. The note said "N of the 84 rows listed are short sessions", naming days
    it was not shown; it counts those shown among all of them and names them first."""
    bars = pd.read_parquet(
        data_path("NQ", sample_settings),
        filters=[("trading_date", ">=", pd.Timestamp("2025-09-01"))],
    )
    bars = bars[bars["trading_date"] < "2026-01-01"]
    rth = bars[(bars["minute"] >= RTH[0]) & (bars["minute"] < RTH[1])]
    days = rth.groupby("trading_date").agg(
        high=("high", "max"), low=("low", "min"), rth=("minute", "size")
    )
    days["range"] = days["high"] - days["low"]
    days.index = [f"{d:%Y-%m-%d}" for d in days.index]
    ranked = days.sort_values("range", ascending=False, kind="stable")
    short = ranked["rth"] < RTH[1] - RTH[0]
    shown = np.zeros(len(ranked), dtype=bool)
    shown[:5] = shown[-5:] = True
    assert len(ranked) > 60 and 0 < (short & shown).sum() < short.sum()
    query = {"period": "2025-09:2025-12", "select": "range", "sort": "range desc"}
    result = ask(query, sample_settings, **RTH_DAILY)
    assert result.table["date"].astype(str).tolist() == ranked.index.tolist()
    assert not result.summary.whole
    (said,) = _short(result)
    first = ranked.index[short & shown][0]
    assert said.startswith(
        f"{short.sum()} of the {len(ranked)} rows are short sessions ({(short & shown).sum()} "
        f"of them among the 10 shown): {first} ("
    ), said


@pytest.mark.parametrize(
    "query",
    [
        # Prices alone: no part day's size.
        {"period": "2025-11-24:2025-11-28"},
        {"period": "2025-11-24:2025-11-28", "select": ["close", "prev(close) as before"]},
        # The day's change to an early close is the whole day's (p47b #19).
        {"period": "2025-12-15:2025-12-31", "map": {"ret": "(close / prev(close) - 1) * 100"}},
        # The rows say which they are.
        {"period": "2025-11-24:2025-11-28", "select": ["range", "early_close() as short"]},
        # None of them short.
        {"period": "2025-12-01:2025-12-05", "select": ["range", "volume"]},
    ],
)
def test_rows_listed_by_date_without_a_size_say_nothing(sample_settings, late_2025, query) -> None:
    assert (late_2025.loc["2025-12-01":"2025-12-05", "rth"] == RTH[1] - RTH[0]).all()
    assert _short(ask(query, sample_settings, **RTH_DAILY)) == []


# --- min() and low percentiles --------------------------------------------------------------


@pytest.mark.slow
def test_a_low_percentile_of_volume_says_what_it_is_without_them(
    sample_settings, days_2024
) -> None:
    rth = days_2024.dropna(subset=["volume"])
    short = rth["rth"] < RTH[1] - RTH[0]
    with_them = np.percentile(rth["volume"], 5)
    without = np.percentile(rth["volume"][~short], 5)
    assert (round(with_them), round(without, 1), int(short.sum())) == (163190, 174862.2, 10)
    result = ask(
        {"period": "2024", "select": "percentile(volume, 5)"}, sample_settings, **RTH_DAILY
    )
    assert result.summary.value == pytest.approx(with_them)
    assert [w for w in result.metadata.warnings if "without them" in w] == [
        f"10 of the {len(rth)} days are short sessions (holidays, early closes: a part day "
        "trades less volume, often a smaller range): without them percentile_volume_5 is "
        f"{without:.1f}, not {with_them:.0f}. {LEAVE_OUT}"
    ]
    # Left out as the warning says: the number it named.
    kept = ask(
        {
            "period": "2024",
            "where": "not holiday() and not early_close()",
            "select": "percentile(volume, 5)",
        },
        sample_settings,
        **RTH_DAILY,
    )
    assert kept.summary.value == pytest.approx(without)
    assert not [w for w in kept.metadata.warnings if "without them" in w]


@pytest.mark.slow
def test_min_is_named_only_when_a_short_session_set_it(
    sample_settings, sample_days, days_2024
) -> None:
    """2024's quietest RTH day was a full one, so min(volume) is the same without them; its
    narrowest range is also a full day's. 2023's quietest was Thanksgiving."""
    rth = days_2024.dropna(subset=["volume"])
    quietest = rth["volume"].idxmin()
    assert rth.loc[quietest, "rth"] == RTH[1] - RTH[0]
    result = ask(
        {"period": "2024", "select": ["min(volume)", "max(volume)", "percentile(volume, 95)"]},
        sample_settings,
        **RTH_DAILY,
    )
    assert result.summary.values["min_volume"] == rth["volume"].min()
    assert not [w for w in result.metadata.warnings if "without them" in w]
    days_2023 = sample_days[sample_days.index < "2024"].dropna(subset=["volume"])
    full = days_2023[days_2023["rth"] == RTH[1] - RTH[0]]
    quietest, quietest_full = days_2023["volume"].idxmin(), full["volume"].idxmin()
    assert quietest == "2023-11-23" and quietest_full != quietest  # Thanksgiving
    thanksgiving = ask(
        {"period": "2023", "select": "arg_min(date(), volume) as quietest"},
        sample_settings,
        **RTH_DAILY,
    )
    assert f"{thanksgiving.summary.value:%Y-%m-%d}" == quietest
    assert any(
        f"without them quietest is {quietest_full}, not {quietest}." in w
        for w in thanksgiving.metadata.warnings
    ), thanksgiving.metadata.warnings


# --- a statistic over many short sessions -----------------------------------------------------


@pytest.fixture(scope="module")
def rth_days_all(sample_settings) -> pd.DataFrame:
    """Every RTH day of the sample: open, high, low, the minutes traded and the last bar's
    end (a clock minute), from the raw minute bars."""
    bars = pd.read_parquet(data_path("NQ", sample_settings))
    rth = bars[(bars["minute"] >= RTH[0]) & (bars["minute"] < RTH[1])]
    days = rth.groupby("trading_date").agg(
        open=("open", "first"),
        high=("high", "max"),
        low=("low", "min"),
        rth=("minute", "size"),
        last=("minute", "max"),
    )
    days["r"] = (days["high"] - days["low"]) / days["open"] * 100
    return days


@pytest.mark.slow
def test_the_day_after_thanksgiving_is_said_to_be_all_short_sessions(
    sample_settings, rth_days_all
) -> None:
    """p28e F3: the day after Thanksgiving's mean range, 18 early closes, was read against
    full days with nothing said."""
    dates = pd.DatetimeIndex(rth_days_all.index)
    thursdays = pd.date_range("2008-11-01", "2025-11-30", freq="WOM-4THU")
    fridays = thursdays[thursdays.month == 11] + pd.Timedelta(days=1)
    after = rth_days_all[dates.isin(fridays)]
    assert len(after) == 18 and (after["rth"] < RTH[1] - RTH[0]).all()
    ends = sorted({f"{(m + 1) // 60:02d}:{(m + 1) % 60:02d}" for m in after["last"]})
    query = {
        "map": {"r": "range / open * 100", "after_tg": "post_holiday() and month() == 11"},
        "where": "after_tg",
        "select": "mean(r)",
    }
    result = ask(query, sample_settings, **RTH_DAILY)
    assert result.summary.value == pytest.approx(after["r"].mean())
    assert _short(result) == [
        f"All of the 18 days are short sessions (holidays, early closes: the exchange closed "
        f"at {' or '.join(ends)}), so their range and volume are a part day's: against full "
        f'days compare the hours both trade, "session": "09:30-{ends[0]}", over every day.'
    ]


@pytest.mark.slow
def test_a_mean_over_many_short_sessions_says_it_without_them(
    sample_settings, rth_days_all
) -> None:
    dates = pd.DatetimeIndex(rth_days_all.index)
    late_november = rth_days_all[(dates.month == 11) & (dates.day >= 22)]
    short = late_november["rth"] < RTH[1] - RTH[0]
    assert 0.1 * len(late_november) <= short.sum() < len(late_november)
    query = {
        "map": {"r": "range / open * 100"},
        "where": "month() == 11 and day() >= 22",
        "select": "mean(r)",
    }
    result = ask(query, sample_settings, **RTH_DAILY)
    [said] = _short(result)
    assert said.startswith(f"{short.sum()} of the {len(late_november)} days are short sessions")
    without = late_november.loc[~short, "r"].mean()
    assert f"without them mean_r is {without:.4g}." in said
    assert said.endswith(LEAVE_OUT)


# --- a window read by session_*() that an early close cut ------------------------------------

LUNCH = (720, 810)  # 12:00-13:30
LUNCH_RANGE = {
    "lunch": "session_high('12:00-13:30') - session_low('12:00-13:30')",
    "morning": "session_high('09:30-12:00') - session_low('09:30-12:00')",
}


@pytest.fixture(scope="module")
def lunch_days(sample_settings) -> pd.DataFrame:
    """Every trading date's 12:00-13:30 window from the raw minute bars: its range and the
    minutes it traded."""
    bars = pd.read_parquet(data_path("NQ", sample_settings))
    part = bars[(bars["minute"] >= LUNCH[0]) & (bars["minute"] < LUNCH[1])]
    days = part.groupby("trading_date").agg(
        high=("high", "max"), low=("low", "min"), minutes=("minute", "size")
    )
    days["lunch"] = days["high"] - days["low"]
    return days


@pytest.mark.slow
def test_a_window_an_early_close_cut_is_said_with_how_long_it_ran(
    sample_settings, lunch_days, rth_days_all
) -> None:
    """p30a Q4: the lunch range (12:00-13:30) read on RTH rows is a 60- or 75-minute range on
    the holidays and early closes. Late November holds many: said with the cut windows'
    lengths and the mean without them, as pandas counts them."""
    dates = pd.DatetimeIndex(lunch_days.index)
    late = lunch_days[(dates.month == 11) & (dates.day >= 22)]
    cut = late["minutes"] < LUNCH[1] - LUNCH[0]
    lengths = late.loc[cut, "minutes"].value_counts()
    assert 0.1 * len(late) <= cut.sum() < len(late) and len(lengths) == 2
    (most, n_most), (other, n_other) = lengths.items()
    query = {
        "map": LUNCH_RANGE,
        "where": "month() == 11 and day() >= 22",
        "select": ["count(lunch) as days", "mean(lunch) as lunch_range"],
    }
    result = ask(query, sample_settings, **RTH_DAILY)
    assert result.summary.values["lunch_range"] == pytest.approx(late["lunch"].mean())
    rth = pd.DatetimeIndex(rth_days_all.index)
    rows = int(((rth.month == 11) & (rth.day >= 22)).sum())  # some have no lunch window
    said = [w for w in result.metadata.warnings if "cut short" in w]
    assert said == [
        f"{cut.sum()} of the {rows} days' 12:00-13:30 windows were cut short by holidays and "
        f"early closes ({most} of its 90 minutes on {n_most} days, {other} on {n_other}), so "
        "their range and volume are a part window's: without them lunch_range is "
        f"{late.loc[~cut, 'lunch'].mean():.4g}. {LEAVE_OUT}"
    ]
    # The window as the session: its short-session warning says how long it ran too.
    own = ask(
        {**query, "select": "mean(range)"},
        sample_settings,
        **RTH_DAILY | {"session": "12:00-13:30"},
    )
    [short] = _short(own)
    assert short.startswith(f"{cut.sum()} of the {len(late)} days are short sessions")
    assert f"(12:00-13:30 ran {most} of its 90 minutes on {n_most} days, {other} on " in short


@pytest.mark.slow
def test_a_few_cut_windows_over_all_days_say_nothing(sample_settings, lunch_days) -> None:
    """Over every day the cut lunch windows are 2.5%, under the share a short-session warning
    is given from, and move the mean by less than any other day does."""
    cut = lunch_days["minutes"] < LUNCH[1] - LUNCH[0]
    assert cut.sum() < 0.1 * len(lunch_days)
    query = {"map": LUNCH_RANGE, "select": ["mean(lunch / morning) as ratio"]}
    result = ask(query, sample_settings, **RTH_DAILY)
    assert not [w for w in result.metadata.warnings if "cut short" in w]


# --- the holiday sessions of a weekday question -------------------------------------------


def _holiday_minutes(settings, symbol: str, years: tuple[int, int], window: tuple[int, int]):
    """Minutes each NYSE weekday holiday of ``years`` traded in ``window``, from the raw bars
    and NYSE's calendar (pandas_market_calendars), never through Barb."""
    import pandas_market_calendars as mcal

    bars = pd.read_parquet(data_path(symbol, settings), columns=["trading_date", "minute"])
    bars = bars[bars["trading_date"].dt.year.between(*years)]
    inside = bars[(bars["minute"] >= window[0]) & (bars["minute"] < window[1])]
    minutes = inside.groupby("trading_date").size()
    nyse = mcal.get_calendar("NYSE").valid_days(f"{years[0]}-01-01", f"{years[1]}-12-31")
    weekdays = pd.bdate_range(f"{years[0]}-01-01", f"{years[1]}-12-31")
    closed = weekdays.difference(nyse.tz_localize(None))
    held = minutes[minutes.index.isin(closed)]
    held.index = [f"{d:%Y-%m-%d}" for d in held.index]
    return held


WEEKDAY_RANGE = {"map": {"wd": "dayname()"}, "group_by": "wd", "select": "mean(range)"}


@pytest.mark.slow
def test_a_crude_oil_weekday_question_counts_its_short_and_full_holiday_sessions(
    sample_settings,
    monkeypatch,
) -> None:
    """CL is no stock index: its holiday sessions are its own days, short (13:00) until 2021
    and full 09:00-14:30 from 2022, and the stock market's days are not its question."""
    # The note's words, whatever leaving the holidays out moves.
    monkeypatch.setattr("barb.caveats.calendar.HOLIDAY_SHIFT", 0.0)
    from barb.data.sample import write_samples

    write_samples(["CL"], sample_settings)  # NQ and ES are in the default sample
    result = ask({"period": "2021:2022", **WEEKDAY_RANGE}, sample_settings, "CL", **RTH_DAILY)
    held = _holiday_minutes(sample_settings, "CL", (2021, 2022), (540, 870))
    short, full = held[held < 330], held[held == 330]
    assert len(short) + len(full) == len(held) and len(short) and len(full)
    assert [w for w in result.metadata.warnings if "holiday" in w] == [
        f"{len(held)} of the rows are US stock-market holidays, which CL trades as its own "
        f"days: {len(short)} were short sessions (e.g. {short.index[0]}, closed "
        f"{9 + short.iloc[0] // 60}:{short.iloc[0] % 60:02d}), {len(full)} traded the full "
        f'09:00-14:30 (e.g. {full.index[0]}). "where": "not holiday()" leaves out the short '
        "ones' part days, and the full ones with them."
    ]
    # 2025 held one short one (p46e q46 read "1 were short sessions").
    result = ask({"period": "2025", **WEEKDAY_RANGE}, sample_settings, "CL", **RTH_DAILY)
    held = _holiday_minutes(sample_settings, "CL", (2025, 2025), (540, 870))
    assert (held < 330).sum() == 1
    [said] = [w for w in result.metadata.warnings if "holiday" in w]
    assert f"{len(held)} of the rows are US stock-market holidays" in said
    assert "days: 1 was a short session (e.g. " in said
    # A year of short ones only; and where every one traded in full, nothing to say.
    result = ask({"period": "2019", **WEEKDAY_RANGE}, sample_settings, "CL", **RTH_DAILY)
    held = _holiday_minutes(sample_settings, "CL", (2019, 2019), (540, 870))
    assert (held < 330).all()
    assert [w for w in result.metadata.warnings if "holiday" in w] == [
        f"{len(held)} of the rows are US stock-market holidays: CL traded short hours on all "
        f'(e.g. {held.index[0]}, closed 13:00). "where": "not holiday()" leaves out these part '
        "days."
    ]
    result = ask(
        {"period": "2023-01-01:2023-08-31", **WEEKDAY_RANGE}, sample_settings, "CL", **RTH_DAILY
    )
    held = _holiday_minutes(sample_settings, "CL", (2023, 2023), (540, 870))
    assert (held[held.index < "2023-09"] == 330).all()
    assert not [w for w in result.metadata.warnings if "holiday" in w], result.metadata.warnings


@pytest.mark.slow
def test_a_stock_index_holiday_example_is_one_of_the_short_sessions_it_counts(
    sample_settings,
    monkeypatch,
) -> None:
    """ES's 2025 held 7 short holiday sessions on RTH; the day of mourning (2025-01-09), which
    CME closed at 09:30 ET, has no RTH bar and is none of them (the sample traded it in
    full before p41b, and the warning counted 8): the example is a short one, and the
    words are the stock market's."""
    # The note's words, whatever leaving the holidays out moves.
    monkeypatch.setattr("barb.caveats.calendar.HOLIDAY_SHIFT", 0.0)
    result = ask({"period": "2025", **WEEKDAY_RANGE}, sample_settings, "ES", **RTH_DAILY)
    held = _holiday_minutes(sample_settings, "ES", (2025, 2025), RTH)
    short = held[held < RTH[1] - RTH[0]]
    assert "2025-01-09" not in held.index and len(short) == len(held) == 7
    # (Thanksgiving's and Juneteenth's half days make Wednesday the highest: said between.)
    [said] = [w for w in result.metadata.warnings if "holiday" in w]
    assert said.startswith(
        f"{len(held)} of the rows are US holiday sessions (the stock market closed, "
        f"the futures traded short hours), e.g. {short.index[0]}"
    )
    assert said.endswith(
        '"where": "not holiday()" leaves them out when the question is about the stock '
        "market's days."
    )


# --- groups of daily rows mostly of short sessions -------------------------------------------


def _mostly_short(result: Result) -> list[str]:
    return [w for w in result.metadata.warnings if w.startswith("Short sessions make up")]


@pytest.mark.slow
def test_thanksgiving_and_the_day_after_grouped_against_other_days_are_named(
    sample_settings, rth_days_all
) -> None:
    """p43a A (Q3): Thanksgiving's and the day after's mean range beside all other days
    read 0.95% and 1.42% against 1.84% with nothing said, both groups wholly short
    sessions. The groups, their counts and closes come from the raw minute bars (the 4th
    Thursday of November and the day after); the other days' few are not named."""
    dates = pd.DatetimeIndex(rth_days_all.index)
    thursdays = pd.date_range("2008-11-01", "2025-11-30", freq="WOM-4THU")
    thursdays = thursdays[thursdays.month == 11]
    kind = np.where(
        dates.isin(thursdays),
        "Thanksgiving",
        np.where(dates.isin(thursdays + pd.Timedelta(days=1)), "day after", "other"),
    )
    short = rth_days_all["rth"] < RTH[1] - RTH[0]
    ends = (rth_days_all["last"] + 1).map(lambda m: f"{m // 60:02d}:{m % 60:02d}")
    result = ask(
        {
            "map": {
                "r": "range / open * 100",
                "kind": "if(month() == 11 and holiday(), 'Thanksgiving', "
                "if(month() == 11 and post_holiday(), 'day after', 'other'))",
            },
            "group_by": "kind",
            "select": ["count()", "mean(r)", "mean(close / prev(close) > 1) as up"],
        },
        sample_settings,
        **RTH_DAILY,
    )
    counts = pd.Series(kind).value_counts()
    assert result.table.set_index("kind")["count"].to_dict() == counts.to_dict()
    means = rth_days_all["r"].groupby(kind).mean()
    assert result.table.set_index("kind")["mean_r"].to_dict() == pytest.approx(means.to_dict())
    named, closes = [], []
    # In the order of the groups ('Thanksgiving' sorts before 'day after').
    for group, kinds in (("Thanksgiving", "holidays"), ("day after", "early closes")):
        in_group = kind == group
        k, n = int((short & in_group).sum()), int(in_group.sum())
        assert k == n == 18
        group_closes = sorted(set(ends[short & in_group]))
        closes += group_closes
        either = " or ".join(group_closes)
        named.append(f"all {n} days of group '{group}' ({kinds}, the exchange closed at {either})")
    others = short[kind == "other"]
    assert 0 < others.sum() < 0.05 * len(others)
    assert _mostly_short(result) == [
        f"Short sessions make up {named[0]} and {named[1]}, so their mean_r is a part day's: "
        f'against full days compare the hours both trade, "session": "09:30-{min(closes)}", '
        "over every day."
    ]


@pytest.mark.slow
@pytest.mark.parametrize("period", [None, "2023"])
def test_weekdays_hold_too_few_short_sessions_to_be_named(
    sample_settings, rth_days_all, period
) -> None:
    """Mondays hold most holidays (MLK, Presidents', Memorial and Labor Day), but under a
    tenth of them: a Monday's mean range is a day's, and no group is named."""
    days = rth_days_all if period is None else rth_days_all.loc[period]
    dates = pd.DatetimeIndex(days.index)
    shares = (days["rth"] < RTH[1] - RTH[0]).groupby(dates.dayofweek).mean()
    assert 0.05 < shares[0] < 0.5 and shares.idxmax() == 0
    query = {"group_by": "dayname()", "select": ["mean(range)", "mean(volume)"]}
    if period is not None:
        query["period"] = period
    assert _mostly_short(ask(query, sample_settings, **RTH_DAILY)) == []


@pytest.mark.slow
def test_many_wholly_short_groups_are_said_once(sample_settings, rth_days_all) -> None:
    """p43f C1: short sessions by year named "all N days of group year Y (holidays and early
    closes, the exchange closed at …)" once for each of 18 years, about 1,900 characters.
    Now one clause for all of them, with the total, the groups' sizes and every close, from
    the raw minute bars (a day short of RTH's 450 minutes)."""
    short = rth_days_all[rth_days_all["rth"] < RTH[1] - RTH[0]]
    years = pd.DatetimeIndex(short.index).year
    sizes = short.groupby(years).size()
    result = ask(
        {
            "map": {"r": "range / open * 100"},
            "where": "early_close()",
            "group_by": "year()",
            "select": ["count() as days", "mean(r) as avg_range"],
        },
        sample_settings,
        **RTH_DAILY,
    )
    assert result.table.set_index("year")["days"].to_dict() == sizes.to_dict()
    closes = " or ".join(sorted(set(_clock(short["last"]))))
    closes = closes.replace(" or ", ", ", closes.count(" or ") - 1)
    [said] = _mostly_short(result)
    assert said == (
        f"Short sessions make up all {len(short)} days of every one of the {len(sizes)} groups "
        f"({sizes.min()}-{sizes.max()} days each: holidays and early closes, the exchange "
        f"closed at {closes}), so their avg_range is a part day's: against full days compare "
        f'the hours both trade, "session": "09:30-{min(_clock(short["last"]))}", over every day.'
    )


@pytest.mark.parametrize("seed", range(5))
def test_the_quick_look_at_short_rows_never_misses_a_mostly_short_group(seed: int) -> None:
    """short_group_caveat skips its groupby when the short rows' keys show no group can be
    mostly short; on random keys (text, numbers, empties) it must say True whenever a
    groupby of every row finds such a group."""
    from barb.caveats.short_session_groups import MOSTLY_SHORT, _some_group_mostly

    rng = np.random.default_rng(seed)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        kind = rng.integers(3)
        keys = (
            rng.choice(["Mon", "Tue", "Wed"], n).astype(object)
            if kind == 0
            else rng.integers(0, 4, n).astype(float)
        )
        if kind == 2:
            keys[rng.random(n) < 0.2] = np.nan
        short = rng.random(n) < rng.random()
        kept = pd.DataFrame({"k": keys})
        sizes = kept.groupby("k", dropna=False).size()
        shorts = pd.Series(short).groupby(kept["k"], dropna=False).sum()
        mostly = bool((shorts > MOSTLY_SHORT * sizes).any())
        if mostly:
            assert _some_group_mostly(kept, ["k"], short), (keys, short)


@pytest.mark.slow
def test_a_weekday_question_is_told_of_holidays_only_where_they_move_a_value(
    sample_settings,
) -> None:
    """p46e: the holiday note fired where leaving the holidays out moved no weekday's value by
    more than 2 % (NQ's 2025 mean ranges: 0.3 % at most), and was noise in 3 of 4 queries.
    It is said when a shown value moves by 5 % or more: Monday's mean close - open, 0.216 %
    with them and 0.283 % without. Holidays from pandas_market_calendars' NYSE, values with
    pandas over the sample's RTH minutes."""
    import pandas_market_calendars as mcal
    from rth_bars import sample_rth_days

    days = sample_rth_days(sample_settings)
    days = days[pd.DatetimeIndex(days.index).year == 2025]
    dates = pd.DatetimeIndex(days.index)
    open_days = mcal.get_calendar("NYSE").valid_days("2025-01-01", "2025-12-31")
    holiday = pd.Series(~dates.isin(open_days.tz_localize(None)), index=days.index)
    assert holiday.any()
    weekday = pd.Series(dates.strftime("%a"), index=days.index)

    def most_moved(values: pd.Series, keys: pd.Series) -> float:
        left = ~holiday[values.index]
        every, kept = values.groupby(keys).mean(), values[left].groupby(keys[left]).mean()
        return float((kept / every - 1).abs().max())

    ranges = days["high"] - days["low"]
    assert most_moved(ranges, weekday) < 0.05
    result = ask(
        {"period": "2025", "map": {"wd": "dayname()"}, "group_by": "wd",
         "select": ["mean(range)", "count()"]},
        sample_settings,
        **RTH_DAILY,
    )  # fmt: skip
    assert not [w for w in result.metadata.warnings if "holiday" in w]

    move = (days["close"] - days["open"]) / days["open"] * 100
    ends = weekday.isin(["Mon", "Fri"])
    assert most_moved(move[ends], weekday[ends]) >= 0.05
    result = ask(
        {"period": "2025",
         "map": {"wd": "dayname()", "move_pct": "(close - open) / open * 100"},
         "where": "wd in ('Mon', 'Fri')", "group_by": "wd",
         "select": ["mean(move_pct)", "mean(move_pct > 0) as up_share", "count()"]},
        sample_settings,
        **RTH_DAILY,
    )  # fmt: skip
    [said] = [w for w in result.metadata.warnings if "holiday" in w]
    assert said.startswith(f"{int(holiday[ends].sum())} of the rows are US holiday sessions")
