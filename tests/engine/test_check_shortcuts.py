"""The warnings' shortcuts give what the full reading gives: a check that stops early on a
bound, a run of dates or a query without the call it looks for says nothing the long way
would have said. Expected values from numpy and pandas over the bars, not through Barb's
checks."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from barb import interpreter, stages
from barb.caveats import calendar
from barb.caveats.calendar import HolidayShift
from barb.caveats.price_levels import LEVEL_RATIO, blended_levels, closes_may_blend
from barb.column_units import column_unit, column_units
from barb.data.store import DataMeta, data_path, write_bars
from barb.events.rules import early_close_days, us_market_closed
from barb.frames import equality_values, take_rows
from barb.interpreter import execute
from barb.planning import plan_query
from barb.script.query import parse_query
from barb.sessions import minutes_of_day as minute_of_day
from barb.sessions import trading_dates
from barb.settings import EngineSettings
from barb.short_days import date_positions, special_days
from barb.time_keys import minutes_of_day


def test_date_positions_are_the_binary_search() -> None:
    days = np.arange("2024-01-01", "2024-03-01", dtype="datetime64[D]")[::2]
    cases = [
        days[5:20],  # a run: read at once
        days[[1, 2, 4, 9]],  # gaps: searched
        np.array(["2023-12-01", "2024-01-03"], dtype="datetime64[D]"),  # before the first
        days[-3:],
        np.array(["2024-03-05"], dtype="datetime64[D]"),  # after the last
        days[:0],
        days[3:8].astype("datetime64[ns]"),  # another unit
    ]
    for dates in cases:
        assert date_positions(days, dates).tolist() == np.searchsorted(days, dates).tolist()


def test_special_days_are_the_set_test(engine_settings: EngineSettings) -> None:
    dataset = plan_query(parse_query({"from": "daily"}), "NQ", engine_settings).dataset
    days = np.arange("2008-01-01", "2026-12-31", dtype="datetime64[D]")
    early = early_close_days(dataset.instrument.calendar)
    want = us_market_closed(days) | np.isin(days, early)
    assert want.sum() > 100  # holidays and early closes, not an empty test
    assert np.array_equal(special_days(dataset, days), want)


def test_a_date_in_a_time_column_is_read_by_its_first_value() -> None:
    query: dict = {}
    times = pd.Series(["09:30", "10:00", "16:30"])
    assert minutes_of_day("t", times, query).tolist() == [570.0, 600.0, 990.0]
    for mixed in (["2024-01-02", "10:00"], ["09:30", "2024-01-02"], ["9:30", "10:00"]):
        assert minutes_of_day("t", pd.Series(mixed), query) is None


def test_column_units_are_each_columns_unit() -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"chg": "close - prev(close)", "up": "close > open"},
        "group_by": "dayname()",
        "select": ["mean(chg)", "mean(up)", "count() as days", "max(close)", "mean(range * 20)"],
    }
    names = ["mean_chg", "mean_up", "days", "max_close", "mean_range_20", "dayname"]
    assert column_units(names, "daily", query) == {
        name: column_unit(name, "daily", query) for name in names
    }
    assert column_units(names, "daily", query)["mean_chg"] == "points"


def test_stage_comparisons_are_read_through_the_map(engine_settings: EngineSettings) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"big": "range > 1.5 * atr(14)", "mon": "dayname() == 'Mon'"},
        "where": "big and not mon",
        "select": "count()",
    }
    plan = plan_query(parse_query(query), "NQ", engine_settings)
    assert plan.first.comparisons == {">", "=="}
    plain = plan_query(
        parse_query({"from": "daily", "select": "mean(range)"}), "NQ", engine_settings
    )
    assert plain.first.comparisons == frozenset()


def _ramp_settings(tmp_path: Path, minutes: pd.DataFrame) -> EngineSettings:
    """The hand-made bars with prices that triple from January to March: levels that blend
    over the whole, not over a week."""
    frame = minutes.copy()
    scale = np.linspace(1.0, 3.0, len(frame))
    for column in ("open", "high", "low", "close"):
        frame[column] = np.round(frame[column] * scale * 4) / 4
    frame["trading_date"] = trading_dates(frame["timestamp"], 18 * 60)
    frame["minute"] = minute_of_day(frame["timestamp"])
    settings = EngineSettings(data_dir=tmp_path)
    meta = DataMeta(
        instrument="NQ",
        timezone="America/New_York",
        source="synthetic",
        description="prices that triple",
        first_date=frame["trading_date"].iloc[0].date(),
        last_date=frame["trading_date"].iloc[-1].date(),
        rows=len(frame),
    )
    write_bars(frame, meta, data_path("NQ", settings))
    return settings


@pytest.mark.parametrize("ramp", [False, True])
def test_closes_that_cannot_blend_are_told_by_the_days_extremes(
    tmp_path: Path, minutes: pd.DataFrame, engine_settings: EngineSettings, ramp: bool
) -> None:
    settings = _ramp_settings(tmp_path, minutes) if ramp else engine_settings
    bars = pd.read_parquet(data_path("NQ", settings), columns=["trading_date", "close"])
    by_day = bars.groupby("trading_date")["close"].agg(["min", "max"])
    plan = plan_query(parse_query({"session": "RTH", "from": "daily"}), "NQ", settings)
    daily = plan.dataset.frame("RTH", "daily")
    told = []
    days = list(by_day.index)
    for first, last in [(days[0], days[-1]), (days[0], days[4]), (days[20], days[-1])]:
        span = by_day.loc[first:last]
        may = closes_may_blend(plan, first.date(), last.date())
        assert may == bool(span["max"].max() / span["min"].min() >= LEVEL_RATIO)
        rows = daily[(daily["trading_date"] >= first) & (daily["trading_date"] <= last)]
        if not may:  # the bound holds: the rows' own levels could not have blended
            assert blended_levels(rows.reset_index(drop=True)) is None
        told.append(may)
    assert told == ([True, False, False] if ramp else [False, False, False])


def test_holiday_rows_are_the_set_test() -> None:
    days = np.arange("2024-01-01", "2024-03-01", dtype="datetime64[D]")
    for closed in (
        np.array(["2024-01-15", "2024-02-19"], dtype="datetime64[D]"),
        np.array(["2023-12-25", "2024-01-01", "2024-02-29", "2024-07-04"], dtype="datetime64[D]"),
        days[:0],
    ):
        assert np.array_equal(calendar._on_days(days, closed), np.isin(days, closed))


def _shifts(settings: EngineSettings, query: dict) -> list[tuple[HolidayShift | None, dict]]:
    """What holiday_shift measured in ``query``, with what it was given."""
    said: list[tuple[HolidayShift | None, dict]] = []
    measure = calendar.holiday_shift

    def spy(stage, ctx, kept, closed, **kwargs):  # type: ignore[no-untyped-def]
        shift = measure(stage, ctx, kept, closed, **kwargs)
        said.append((shift, {"kept": kept, "closed": closed}))
        return shift

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(interpreter, "holiday_shift", spy)
        assert execute(query, "NQ", settings=settings).ok
    return said


@pytest.mark.parametrize(
    "query",
    [
        {"session": "RTH", "from": "daily", "group_by": "dayname()", "select": "mean(range)"},
        {
            "session": "RTH",
            "from": "daily",
            "map": {"wd": "dayname()", "body": "close - open"},
            "group_by": "wd",
            "select": ["mean(body)", "median(high - low)", "sum(volume)"],
        },
        # An aggregate of a function of the row: every column is taken, as it may read any.
        {
            "session": "RTH",
            "from": "daily",
            "group_by": "dayname()",
            "select": "mean(abs(close - open))",
        },
    ],
)
def test_a_weekday_statistic_without_its_holidays_reads_the_rows_it_did(
    engine_settings: EngineSettings, query: dict
) -> None:
    """The holiday sessions left out of only the columns a statistic reads (``_rows_read``)
    move it as leaving them out of every column does, and as pandas computes it."""
    quick = _shifts(engine_settings, query)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(calendar, "_rows_read", lambda kept, mask, *_: take_rows(kept, mask))
        full = _shifts(engine_settings, query)
    assert len(quick) == len(full) == 1
    (shift, given), (whole, _) = quick[0], full[0]
    assert shift is not None and whole is not None
    assert shift == whole
    kept, closed = given["kept"], given["closed"]
    holiday = np.isin(kept["trading_date"].to_numpy().astype("datetime64[D]"), closed)
    assert holiday.any() and not holiday.all()  # MLK and Presidents' Day sessions
    if query["select"] == "mean(range)":
        days = kept.assign(day=kept["trading_date"].dt.day_name().str[:3])
        was = days.groupby("day")["range"].mean()
        now = days[~holiday].groupby("day")["range"].mean().reindex(was.index)
        assert shift.most == pytest.approx(float(((now - was).abs() / was.abs()).max()))


@pytest.mark.parametrize(("period", "empty"), [("2024-01", True), ("2024-02", False)])
def test_a_first_with_a_value_finds_no_rows_kept(
    engine_settings: EngineSettings, period: str, empty: bool
) -> None:
    """picked_caveat looks for the rows the stage kept (a scan of every bar it evaluated)
    only when a first() came out empty: the data's first month's prev(close) is, the next
    month's is not, and the warning is the same either way."""
    seen: list[tuple[list[str], bool]] = []
    check = stages.picked_caveat

    def spy(start, select, answers):  # type: ignore[no-untyped-def]
        fresh = dataclasses.replace(start)  # nothing found yet
        said = check(fresh, select, answers)
        assert said == check(start, select, answers)
        seen.append((said, "kept" in fresh.__dict__))
        return said

    query = {
        "session": "RTH",
        "from": "daily",
        "period": period,
        "map": {"before": "prev(close)"},
        "select": ["first(before) as start", "last(close) as end"],
    }
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stages, "picked_caveat", spy)
        assert execute(query, "NQ", settings=engine_settings).ok
    assert len(seen) == 1
    said, found = seen[0]
    assert bool(said) is empty and found is empty


def test_a_keys_codes_compare_as_its_values() -> None:
    """equality_values: a category's codes where every row has one tell the same neighbours
    apart and count the same rows of each value as its names do; with an empty key, the
    values themselves."""
    names = ["Mon", "Tue", "Tue", "Wed", "Mon", "Fri", "Fri", "Mon"]
    weekdays = pd.Series(pd.Categorical(names, categories=["Mon", "Tue", "Wed", "Thu", "Fri"]))
    codes = equality_values(weekdays)
    assert codes.dtype.kind == "i"
    plain = np.array(names, dtype=object)
    assert np.array_equal(codes[1:] != codes[:-1], plain[1:] != plain[:-1])
    for at, name in enumerate(names):
        assert np.count_nonzero(codes == codes[at]) == np.count_nonzero(plain == name)
    gap = pd.Series(pd.Categorical(["Mon", None, "Mon"]))
    assert equality_values(gap).tolist()[::2] == ["Mon", "Mon"]
    numbers = pd.Series([3, 1, 3])
    assert equality_values(numbers).tolist() == [3, 1, 3]
