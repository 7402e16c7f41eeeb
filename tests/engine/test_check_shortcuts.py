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
from barb.script.context import RowGroups
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
    """The holiday sessions left out of only the columns a statistic reads (``rows_read``),
    grouped by the answer's own groups (``RowGroups.taken``), move it as leaving them out
    of every column and grouping the rest again does, and as pandas computes it."""
    quick = _shifts(engine_settings, query)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(calendar, "rows_read", lambda kept, mask, *_: take_rows(kept, mask))
        patch.setattr(RowGroups, "taken", lambda *_: None)
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
    # February's Presidents' Day session makes stock_days_caveat run the stage once more
    # without it (prev() reads the close before it), for its numbers alone: no check there.
    assert len(seen) == 1
    for said, found in seen:
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


def _key_frames() -> list[pd.DataFrame]:
    """Keys of every kind a stage groups by, over 300 rows: a weekday with empty rows, yes/no
    with and without empty ones, small whole numbers, dates, numbers with NaN, text."""
    rng = np.random.default_rng(7)
    n = 300
    days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    weekday = pd.Categorical(rng.choice([*days[:5], None], n), categories=days, ordered=True)
    flagged = rng.choice([True, False, None], n)
    return [
        pd.DataFrame(
            {
                "weekday": weekday,
                "unordered": pd.Categorical(
                    rng.choice(["b", "a", "c"], n), categories=["c", "b", "a"]
                ),
                "fomc": pd.array(list(flagged), dtype="boolean"),
                "known": pd.array(list(flagged != None), dtype="boolean"),  # noqa: E711
                "up": rng.random(n) > 0.5,
                "year": rng.integers(2008, 2026, n),
                "month": rng.integers(1, 13, n),
                "date": np.datetime64("2024-01-01")
                + rng.integers(0, 40, n).astype("timedelta64[D]"),
                "size": np.where(rng.random(n) > 0.9, np.nan, rng.integers(0, 6, n) / 2),
                "text": rng.choice(["x", "y", "z"], n).astype(object),
                "value": rng.normal(size=n),
            }
        )
    ]


@pytest.mark.parametrize("key", ["weekday", "unordered", "fomc", "known", "up"])
def test_a_keys_codes_are_what_factorize_gives(key: str) -> None:
    """A category's and a yes/no key's codes read from its own small integers are
    pandas.factorize's, sorted: codes, values, their kind, and the index they make."""
    from barb.script.context import factorized_key

    (frame,) = _key_frames()
    for rows in (frame, frame.iloc[:0], frame.iloc[::7], frame.iloc[[3]]):
        column = rows[key].reset_index(drop=True)
        codes, uniques = pd.factorize(column, sort=True)
        mine, found = factorized_key(column)
        assert mine.dtype == codes.dtype and np.array_equal(mine, codes)
        assert type(found) is type(uniques) and found.dtype == uniques.dtype
        assert repr(pd.Index(found, name=key)) == repr(pd.Index(uniques, name=key))


@pytest.mark.parametrize(
    "keys",
    [
        ["weekday"],
        ["unordered"],
        ["fomc"],
        ["up"],
        ["year"],
        ["year", "month"],
        ["weekday", "fomc"],
        ["date"],
        ["size"],
        ["date", "size"],
    ],
)
def test_the_groups_of_some_rows_are_those_grouped_again(keys: list[str]) -> None:
    """``RowGroups.taken``: the groups of some of the rows, read from the groups of all, give
    every statistic by group, its group sizes and its index as grouping those rows again."""
    (frame,) = _key_frames()
    rng = np.random.default_rng(3)
    grouped = RowGroups.by_keys(frame, keys)
    cases = [
        np.arange(250, 300),  # the last rows (the last 12 months)
        np.flatnonzero(rng.random(len(frame)) > 0.1),  # all but a few (the holidays)
        np.flatnonzero(frame["month"].to_numpy() == 3),  # a group's rows alone
        np.array([17]),
    ]
    for positions in cases:
        rows = frame.iloc[positions].reset_index(drop=True)
        again = RowGroups.by_keys(rows, keys)
        taken = grouped.taken(positions)
        assert taken is not None and taken.length == again.length == len(positions)
        assert repr(taken.index) == repr(again.index)
        if isinstance(again.index, pd.MultiIndex):  # levels of the values these rows hold
            assert [repr(level) for level in taken.index.levels] == [
                repr(level) for level in again.index.levels
            ]
        else:
            assert taken.index.dtype == again.index.dtype
        if again.sizes is None:  # keys hashed: the same codes, numbered among these rows
            assert np.array_equal(taken.codes, again.codes)
        for how in ("mean", "median", "count", "max"):
            assert taken.reduce(rows["value"], how).equals(again.reduce(rows["value"], how))
        assert taken.size().equals(again.size())
        spread, spread_again = taken.spread(taken.size()), again.spread(again.size())
        assert np.array_equal(spread, spread_again, equal_nan=True)


def test_the_groups_of_some_rows_of_text_are_grouped_again() -> None:
    """Keys of Python objects (text) are left to be grouped again: pandas infers their
    index from the values the rows hold."""
    (frame,) = _key_frames()
    assert RowGroups.by_keys(frame, ["text"]).taken(np.arange(10)) is None
    whole = RowGroups.whole(len(frame)).taken(np.arange(10))
    assert whole is not None and not whole.grouped and whole.length == 10


def test_a_counts_group_names_are_made_as_read() -> None:
    """The names a count's warning reads are those of every group, made at once."""
    from barb.caveats.group_noise import _GroupNames
    from barb.summary_text import group_name

    index = pd.MultiIndex.from_arrays(
        [[2024, 2024, 2025], ["Mon", "Tue", "Mon"]], names=["y", None]
    )
    names = _GroupNames(index)
    every = [group_name(index, at, text_alone=True) for at in range(len(index))]
    assert list(names) == every and len(names) == 3
    assert names[-1] == every[-1] and names[1:] == every[1:]
    assert list(zip(names, [1, 2, 3], strict=True)) == list(zip(every, [1, 2, 3], strict=True))
    with pytest.raises(IndexError):
        names[3]


@pytest.mark.parametrize("key", ["weekday", "up", "year", "known"])
def test_a_group_mostly_short_is_found_by_its_counts(key: str) -> None:
    """``_some_group_mostly`` over small whole numbers counts every group at once: True
    exactly when some group's short rows pass ``MOSTLY_SHORT`` of its rows, as pandas
    counts them."""
    from barb.caveats.short_session_groups import MOSTLY_SHORT, _some_group_mostly

    (frame,) = _key_frames()
    frame = frame[frame["weekday"].notna()].reset_index(drop=True)  # every row a weekday
    rng = np.random.default_rng(11)
    for share in (0.1, 0.5, 0.8, 0.95):
        for _ in range(20):
            short = rng.random(len(frame)) < share
            shares = pd.Series(short).groupby(frame[key].to_numpy()).mean()
            assert _some_group_mostly(frame, [key], short) == bool((shares > MOSTLY_SHORT).any())


def test_distinct_days_are_numpys() -> None:
    """``unique_days`` (sorted days taken as they are, others sorted) is ``np.unique``."""
    from barb.caveats.kept_days import unique_days

    rng = np.random.default_rng(5)
    days = np.arange("2020-01-01", "2020-03-01", dtype="datetime64[D]")
    for dates in (
        days,
        days[::-1],
        days[rng.integers(0, len(days), 200)],
        days[:1],
        days[:0],
        (days.astype("datetime64[ns]") + np.timedelta64(9, "h"))[::3],
    ):
        assert np.array_equal(unique_days(dates), np.unique(dates.astype("datetime64[D]")))


@pytest.mark.parametrize(
    ("query", "instrument"),
    [
        (
            {
                "session": "RTH",
                "from": "daily",
                "map": {
                    "ret": "(close - prev(close)) / prev(close) * 100",
                    "vol20": "rolling_std(ret, 20)",
                },
                "select": ["mean(vol20)", "max(vol20)"],
            },
            "NQ",
        ),
        (
            {
                "session": "CASH",
                "from": "daily",
                "period": "2022:2024",
                "map": {"r": "close / prev(close) - 1"},
                "group_by": "year()",
                "select": ["std(r)", "count()"],
            },
            "ES",
        ),
    ],
)
def test_the_stock_days_run_again_gives_a_full_runs_numbers(
    sample_settings: EngineSettings, query: dict, instrument: str
) -> None:
    """The first stage run again without the holiday sessions (``stock_days_caveat``) for
    its numbers alone (``checks=False``: none of its own warnings weighed) answers as the
    stage with every check on does over the same rows; and the rolling volatility's mean
    over the stock market's days is pandas' over the RTH bars without them."""
    runs: list[tuple[stages.StageOutput, stages.StageOutput]] = []
    first_stage = interpreter._StageBars.first_stage

    def spy(self, plan, ctx, frame, *, checks=True):  # type: ignore[no-untyped-def]
        output = first_stage(self, plan, ctx, frame, checks=checks)
        if not checks:
            full = dataclasses.replace(ctx, warnings=[], row_warnings=[], cut_runs={})
            runs.append((output, first_stage(self, plan, full, frame.copy(deep=False))))
        return output

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(interpreter._StageBars, "first_stage", spy)
        result = execute(query, instrument, settings=sample_settings)
    assert result.ok and len(runs) == 1
    quick, full = runs[0]
    assert quick.summary.value == full.summary.value
    assert quick.summary.values == full.summary.values
    if full.table is None:
        assert quick.table is None
    else:
        pd.testing.assert_frame_equal(quick.table, full.table)
    if instrument != "NQ":
        return
    bars = pd.read_parquet(data_path("NQ", sample_settings))
    minutes = bars["timestamp"].dt.hour * 60 + bars["timestamp"].dt.minute
    rth = bars[(minutes >= 570) & (minutes < 1020)]
    daily = rth.groupby(rth["timestamp"].dt.normalize())["close"].last()
    stock = daily[~us_market_closed(daily.index.to_numpy().astype("datetime64[D]"))]
    vol = (stock.pct_change() * 100).rolling(20).std()
    assert quick.summary.values is not None
    assert quick.summary.values["mean_vol20"] == pytest.approx(vol.mean(), rel=1e-9)
    said = f"mean_vol20 is {vol.mean():.3f}"
    assert any(said in w for w in result.metadata.warnings)


@pytest.mark.parametrize(
    "text",
    ["mean(r)", "median(r)", "sum(r)", "min(r)", "max(r)", "MEAN(r)", "median(e)", "max(e)"],
)
def test_a_tails_plain_statistic_is_the_engines(text: str) -> None:
    """The price-level note's statistic of one float column over the last 12 months' rows
    (``_plain_statistic``) is the number ``evaluate_select`` gives, bit for bit; other
    expressions (of two columns, of whole numbers, avg) are left to the engine (None)."""
    from barb.caveats.price_levels import _plain_statistic
    from barb.script.evaluator import evaluate_select
    from barb.script.parser import parse_expression
    from tests.script.script_frames import tiny_context

    rng = np.random.default_rng(3)
    r = rng.normal(300.0, 90.0, 257)
    r[rng.integers(0, 257, 20)] = np.nan
    ctx = tiny_context(r=r, e=np.full(257, np.nan), n=np.arange(257), h=r + 1.0)
    expr = parse_expression(text)
    quick = _plain_statistic(expr, ctx.frame)
    engine = evaluate_select(expr, ctx).value
    assert quick is not None
    assert (np.isnan(quick) and np.isnan(engine)) or quick == engine
    assert type(quick) is type(engine)
    for other in ("mean(r + h)", "avg(r)", "mean(n)", "count(r)", "std(r)", "mean(x)"):
        assert _plain_statistic(parse_expression(other), ctx.frame) is None
