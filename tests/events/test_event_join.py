"""The join step: event flags with unknown outside coverage, and minutes from the release."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pandas_market_calendars as mcal
import pytest

from barb.errors import UnknownEvent
from barb.events import event_dates, join_events
from barb.instruments import Instrument

Stamps = pd.DatetimeIndex | list[str]


def bars(timestamps: Stamps, trading_dates: Stamps) -> pd.DataFrame:
    n = len(timestamps)
    return pd.DataFrame(
        {
            "timestamp": pd.DatetimeIndex(timestamps).astype("datetime64[ns]"),
            "trading_date": pd.DatetimeIndex(trading_dates).astype("datetime64[ns]"),
            "open": np.ones(n),
            "high": np.ones(n),
            "low": np.ones(n),
            "close": np.ones(n),
            "volume": np.ones(n, dtype=np.int64),
        }
    )


def daily_bars(instrument: Instrument, start: str, end: str) -> pd.DataFrame:
    days = mcal.get_calendar(instrument.calendar).valid_days(start, end).tz_localize(None)
    return bars(days, days)


def minute_bars(instrument: Instrument, trading_day: str) -> pd.DataFrame:
    """One Globex day of 1-minute bars: 18:00 the evening before to 16:59."""
    day = pd.Timestamp(trading_day)
    stamps = pd.date_range(
        day - pd.Timedelta(hours=6), day + pd.Timedelta(hours=17), freq="min", inclusive="left"
    )
    return bars(stamps, [day] * len(stamps))


def test_daily_flags_inside_coverage_and_unknown_outside(es: Instrument) -> None:
    frame = daily_bars(es, "2025-12-01", "2026-03-31")
    out = join_events(frame, "nfp", es)
    assert str(out["nfp"].dtype) == "boolean"
    flags = dict(zip(out["trading_date"].dt.date, out["nfp"], strict=True))
    assert flags[dt.date(2025, 12, 16)] is np.True_
    assert flags[dt.date(2026, 1, 9)] is np.True_
    assert flags[dt.date(2026, 2, 11)] is np.True_
    assert flags[dt.date(2026, 2, 6)] is np.False_  # the planned date, moved by the lapse
    assert flags[dt.date(2026, 2, 27)] is np.False_  # last covered day
    assert all(v is pd.NA for d, v in flags.items() if d >= dt.date(2026, 3, 1))
    assert "nfp_minutes" not in out.columns  # daily bars: one bar per trading date
    # The input is not modified.
    assert "nfp" not in frame.columns


def test_daily_flags_match_event_dates_for_every_event(es: Instrument, cl: Instrument) -> None:
    for instrument in (es, cl):
        frame = daily_bars(instrument, "2008-01-01", "2026-12-31")
        for name in instrument.events:
            out = join_events(frame, name, instrument)
            expected = set(event_dates(name, instrument)["trading_date"])
            flagged = set(out.loc[out[name].fillna(False).astype(bool), "trading_date"])
            assert flagged == expected & set(frame["trading_date"]), name


def test_daily_bars_before_coverage_are_unknown(es: Instrument) -> None:
    frame = daily_bars(es, "2007-12-17", "2008-01-10")
    out = join_events(frame, "cpi", es)
    before = out["trading_date"] < "2008-01-01"
    assert out.loc[before, "cpi"].isna().all()
    assert out.loc[~before, "cpi"].notna().all()


def test_sunday_decision_counts_for_monday(es: Instrument) -> None:
    frame = daily_bars(es, "2020-03-09", "2020-03-20")
    out = join_events(frame, "fomc", es)
    flagged = list(out.loc[out["fomc"].fillna(False).astype(bool), "trading_date"].dt.date)
    assert flagged == [dt.date(2020, 3, 16)]


def test_minutes_on_a_one_minute_frame(es: Instrument) -> None:
    # 2012-06-20: statement at 12:30 ET (press-conference day); 2012-06-21: no FOMC.
    frame = pd.concat(
        [minute_bars(es, "2012-06-20"), minute_bars(es, "2012-06-21")], ignore_index=True
    )
    out = join_events(frame, "fomc", es)
    minutes = dict(zip(out["timestamp"], out["fomc_minutes"], strict=True))
    assert minutes[pd.Timestamp("2012-06-20 12:30")] == 0
    assert minutes[pd.Timestamp("2012-06-20 12:29")] == -1
    assert minutes[pd.Timestamp("2012-06-20 13:29")] == 59
    assert minutes[pd.Timestamp("2012-06-19 18:00")] == -(18 * 60 + 30)
    assert np.isnan(minutes[pd.Timestamp("2012-06-21 12:30")])
    day1 = out["trading_date"] == "2012-06-20"
    assert out.loc[day1, "fomc"].all()
    assert not out.loc[~day1, "fomc"].any()
    hour_after = out["fomc"].fillna(False) & (out["fomc_minutes"] >= 0) & (out["fomc_minutes"] < 60)
    assert list(out.loc[hour_after, "timestamp"]) == list(
        pd.date_range("2012-06-20 12:30", periods=60, freq="min")
    )


def test_minutes_count_from_the_release_time_of_each_era(es: Instrument) -> None:
    cases = {"2012-08-01": "14:15", "2014-06-18": "14:00", "2013-06-19": "14:00"}
    for day, clock in cases.items():
        out = join_events(minute_bars(es, day), "fomc", es)
        zero = out.loc[out["fomc_minutes"] == 0, "timestamp"]
        assert list(zero) == [pd.Timestamp(f"{day} {clock}")], day
    nfp = join_events(minute_bars(es, "2025-11-20"), "nfp", es, intraday=True)
    assert list(nfp.loc[nfp["nfp_minutes"] == 0, "timestamp"]) == [pd.Timestamp("2025-11-20 08:30")]


def test_minutes_after_a_sunday_decision(es: Instrument) -> None:
    # Decision Sunday 2020-03-15 17:00; the Globex reopen at 18:00 is 60 minutes later.
    out = join_events(minute_bars(es, "2020-03-16"), "fomc", es)
    assert out["fomc"].all()
    assert out["fomc_minutes"].iloc[0] == 60


def test_hourly_bars_with_one_bar_a_day_need_the_intraday_flag(es: Instrument) -> None:
    frame = bars(["2024-01-31 14:00", "2024-02-01 14:00"], ["2024-01-31", "2024-02-01"])
    assert "fomc_minutes" not in join_events(frame, "fomc", es).columns
    out = join_events(frame, "fomc", es, intraday=True)
    assert list(out["fomc_minutes"].fillna(-999)) == [0, -999]


def test_weekly_bar_is_true_if_any_day_is_an_event(es: Instrument) -> None:
    mondays = pd.date_range("2024-01-01", "2024-12-31", freq="W-MON")
    frame = bars(mondays, mondays + pd.Timedelta(days=4))
    out = join_events(frame, "fomc", es)
    decisions = set(event_dates("fomc", es, dt.date(2024, 1, 1), dt.date(2024, 12, 31))["date"])
    expected = [any(m + pd.Timedelta(days=k) in decisions for k in range(5)) for m in mondays]
    assert list(out["fomc"]) == expected
    assert sum(expected) == 8


def test_weekly_bars_opening_the_evening_before(es: Instrument) -> None:
    # Period start at the Sunday 18:00 reopen: the bar still covers Monday..Friday only, so the
    # Wednesday 2024-01-31 decision is in the week of 01-29 and not in the week before.
    sundays = pd.DatetimeIndex(["2024-01-21 18:00", "2024-01-28 18:00", "2024-02-04 18:00"])
    frame = bars(sundays, sundays.normalize() + pd.Timedelta(days=5))
    assert list(join_events(frame, "fomc", es)["fomc"]) == [False, True, False]


def test_monthly_bars_across_the_end_of_coverage(es: Instrument) -> None:
    starts = pd.DatetimeIndex(["2026-01-01", "2026-02-01", "2026-03-01", "2026-04-01"])
    ends = pd.DatetimeIndex(["2026-01-30", "2026-02-27", "2026-03-31", "2026-04-30"])
    out = join_events(bars(starts, ends), "nfp", es)
    assert list(out["nfp"].astype(object)) == [True, True, pd.NA, pd.NA]
    # A bar spanning the end of coverage with a known event in it is True, not unknown.
    out = join_events(bars(["2026-02-01"], ["2026-03-31"]), "nfp", es)
    assert out["nfp"].iloc[0] is np.True_
    out = join_events(bars(["2026-02-12"], ["2026-03-31"]), "nfp", es)
    assert out["nfp"].iloc[0] is pd.NA


def test_unknown_source_names_what_exists(es: Instrument) -> None:
    frame = daily_bars(es, "2024-01-01", "2024-01-31")
    with pytest.raises(UnknownEvent) as info:
        join_events(frame, "fmoc", es)
    error = info.value
    assert error.step == "join"
    assert error.hint == "Did you mean 'fomc'?"
    assert "Available: cpi, fomc, nfp, opex, quad_witching;" in error.message
    assert error.to_dict()["error_type"] == "UnknownEvent"
    with pytest.raises(UnknownEvent, match="not available for ES"):
        join_events(frame, "eia", es)


def test_source_name_is_case_insensitive(es: Instrument) -> None:
    out = join_events(daily_bars(es, "2024-01-29", "2024-02-02"), "FOMC", es)
    assert list(out["fomc"]) == [False, False, True, False, False]


def test_empty_frame(es: Instrument) -> None:
    out = join_events(bars([], []), "cpi", es)
    assert "cpi" in out.columns and out.empty


def test_join_over_many_bars_marks_every_event(es: Instrument) -> None:
    # Its speed is bench's to measure (no wall-clock bound here: the machines are shared).
    daily = daily_bars(es, "2008-01-01", "2025-12-31")
    assert len(daily) >= 4500
    assert join_events(daily, "fomc", es)["fomc"].sum() > 100
    stamps = pd.date_range("2020-01-01", periods=1_500_000, freq="min")
    trading = stamps.normalize() + pd.to_timedelta((stamps.hour >= 18).astype(int), unit="D")
    minute = bars(stamps, trading)
    out = join_events(minute, "fomc", es, intraday=True)
    assert out["fomc_minutes"].notna().sum() == out["fomc"].sum()


def test_the_join_shares_the_bars_columns_and_leaves_the_frame_alone(es: Instrument) -> None:
    """The event columns are added to a new frame that shares the bars' own columns: a deep
    copy of NQ's 6.4 million 1m bars took 10 of the 11 s of the reference's "range in the
    hour after each FOMC statement" on a busy machine, past the 20 s limit. The input
    frame keeps its columns, and its values are the output's."""
    frame = minute_bars(es, "2012-06-20")
    out = join_events(frame, "fomc", es)
    assert list(frame.columns) == [
        "timestamp",
        "trading_date",
        "open",
        "high",
        "low",
        "close",
        "volume",
    ]
    for column in frame.columns:
        assert np.shares_memory(out[column].to_numpy(), frame[column].to_numpy()), column
    assert out["fomc"].all() and "fomc_minutes" in out.columns
