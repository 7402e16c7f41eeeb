"""Huge and hostile inputs that ran and answered wrong, or failed inside (p46d #5-#13): a
period ending past 2262, a map over the engine's own columns, group keys whose value counts
multiply past int64, results past a float's range, and a lag or window longer than the data
inside daily() and session_*(). Each answer is checked against pandas over the same bars.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask, warnings_with
from rth_bars import RTH_START, rth_daily, rth_minutes

from barb import execute
from barb.errors import InvalidQuery
from barb.script.query import parse_query
from barb.settings import EngineSettings

BEGINS = "as it needs bars from before 2024-01-02, where the data begins"


@pytest.fixture(scope="module")
def days(minutes: pd.DataFrame) -> pd.DataFrame:
    return rth_daily(minutes)


# --- #5-6: a period past nanosecond time (2262-04-11) is cut to the data --------------------


@pytest.mark.parametrize(
    ("period", "first"),
    [
        (":9999-12-31", None),  # had kept no bars: count = 0, ok
        ("2024-02-01:2999-12-31", "2024-02-01"),  # had read "no trading date … nearest"
        ("0001-01-01:9999-12-31", None),  # had built 3.65 M dates to say so
        ("2024:2300", None),
    ],
)
def test_a_period_ending_after_2262_answers_over_the_data(
    engine_settings: EngineSettings, days: pd.DataFrame, period: str, first: str | None
) -> None:
    result = ask({"period": period, "select": "count()"}, engine_settings, **RTH_DAILY)
    assert result.summary.value == len(days.loc[first:])
    assert warnings_with(result, f"The period {period} is only partly covered")


# --- #7, #9, #10: map cannot write the columns the engine reads -------------------------------


@pytest.mark.parametrize(
    ("name", "instead"),
    [
        ("trading_date", "td"),
        ("minute_of_day", "mins"),
        ("timestamp", "ts"),
        ("high", "my_high"),
        ("close", "my_close"),
        ("volume", "my_volume"),
        ("range", "my_range"),
    ],
)
def test_a_map_over_a_column_barb_keeps_is_refused_with_a_name_to_use(
    name: str, instead: str
) -> None:
    with pytest.raises(InvalidQuery) as info:
        parse_query({"from": "daily", "map": {"x": "1", name: "0"}, "select": "count()"})
    assert f"'{name}' is a column Barb keeps" in info.value.message
    assert f"name yours e.g. '{instead}'" in info.value.message
    with pytest.raises(InvalidQuery):  # a second stage's map as well
        parse_query({"from": "daily", "select": "close", "then": {"map": {name: "1"}}})


def test_time_of_day_is_not_read_from_a_mapped_minute_of_day(
    engine_settings: EngineSettings,
) -> None:
    """minute_of_day = 0 made time() == '10:00' match no bar (count 0, said as a result)."""
    result = execute(
        {
            "session": "RTH",
            "from": "1m",
            "period": "2024-03-01",
            "map": {"minute_of_day": "0"},
            "where": "time() == '10:00'",
            "select": "count()",
        },
        "NQ",
        settings=engine_settings,
    )
    assert not result.ok
    assert "'minute_of_day' is a column Barb keeps" in result.to_dict()["message"]


# --- #8: group keys whose value counts multiply past 2**63 ----------------------------------


def test_many_keys_with_many_values_group_as_pandas_does(
    engine_settings: EngineSettings, minutes: pd.DataFrame
) -> None:
    """Six keys of 1m bars, as p46d's daily timestamp, close, volume, open, high and low,
    whose value counts multiply past int64 (one number for every combination had failed:
    "Internal error")."""
    bars = minutes[minutes["timestamp"] < "2024-02-10"]
    keys = ["volume", "close", "open", "high", "low", "timestamp"]
    assert np.prod([bars[k].nunique() for k in keys], dtype=object) > 2**63
    expected = bars.groupby(keys, sort=True).agg(n=("close", "size"), v=("volume", "sum"))
    result = ask(
        {
            "session": "ETH",
            "from": "1m",
            "period": ":2024-02-09",
            "group_by": keys,
            "select": ["count() as n", "sum(volume) as v"],
        },
        engine_settings,
    )
    table = result.table
    assert len(table) == len(expected) == len(bars)
    for key in keys:
        np.testing.assert_array_equal(table[key], expected.index.get_level_values(key))
    np.testing.assert_array_equal(table["n"], expected["n"])


# --- #11: a result past a float's range is said, as division by zero is ---------------------


def test_a_result_past_a_floats_range_is_said_with_how_many(
    engine_settings: EngineSettings, days: pd.DataFrame
) -> None:
    """exp(close / 24) passes 1.8e308 where close > 17,035: max_x had read n/a or the
    largest of the others with nothing said."""
    with np.errstate(over="ignore"):
        past = int(np.isinf(np.exp(days["close"] / 24)).sum())
    assert 0 < past < len(days)
    result = ask(
        {"map": {"x": "exp(close / 24)"}, "select": "max(x)"}, engine_settings, **RTH_DAILY
    )
    assert warnings_with(result, "overflowed") == [
        f"'exp(close / 24)' overflowed (past ±1.8e308) for {past:,} values; those results are "
        "empty (NaN)."
    ]
    with np.errstate(over="ignore"):
        finite = np.exp(days["close"] / 24)
    assert result.summary.value == pytest.approx(finite[np.isfinite(finite)].max(), rel=1e-12)
    said = ask({"map": {"x": "2 ** 100000000"}, "select": "max(x)"}, engine_settings, **RTH_DAILY)
    assert warnings_with(said, "'2 ** 100000000' overflowed (past ±1.8e308); its result is empty")
    with np.errstate(over="ignore"):
        grown = int(np.isinf(np.cumprod(days["close"].to_numpy() ** 2)).sum())
    assert 0 < grown < len(days)
    growth = ask(
        {"map": {"x": "cumprod(close * close)"}, "select": "max(x)"}, engine_settings, **RTH_DAILY
    )
    assert warnings_with(
        growth, f"'cumprod(close * close)' overflowed (past ±1.8e308) for {grown:,} values"
    )
    plain = ask(
        {"map": {"x": "exp(close / 100)"}, "select": "max(x)"}, engine_settings, **RTH_DAILY
    )
    assert not warnings_with(plain, "overflowed")


# --- #12: daily(), weekly() and session_*() reaching before the data say so -----------------


def test_a_daily_window_longer_than_the_data_says_the_rows_it_empties(
    engine_settings: EngineSettings, minutes: pd.DataFrame, days: pd.DataFrame
) -> None:
    """daily(rolling_mean(close, 40)) on hourly bars has no value before the 40th day, and
    mean(d) had been over the rest with nothing said, as rolling_mean() itself says."""
    rth = rth_minutes(minutes)
    slot = (rth["timestamp"].dt.hour * 60 + rth["timestamp"].dt.minute - RTH_START) // 60
    hours = rth.assign(slot=slot).groupby(["day", "slot"]).size()
    empty = int(hours.loc[: days.index[39]].size)  # lag 1: the 40th day's mean from the 41st
    result = ask(
        {"from": "1h", "map": {"d": "daily(rolling_mean(close, 40))"}, "select": "mean(d)"},
        engine_settings,
        session="RTH",
    )
    assert warnings_with(result, f"d has no value on {empty:,} of them")
    assert warnings_with(result, BEGINS)
    means = days["close"].rolling(40).mean().shift()
    counts = hours.groupby(level="day").size()
    expected = (means * counts).sum() / counts[means.notna()].sum()
    assert result.summary.value == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(
    "expr", ["session_high('RTH', 10000)", "weekly(high, 10000)", "monthly(close, 10000)"]
)
def test_a_lag_past_all_the_data_says_why_nothing_is_left(
    engine_settings: EngineSettings, days: pd.DataFrame, expr: str
) -> None:
    result = ask({"map": {"x": expr}, "select": "mean(x)"}, engine_settings, **RTH_DAILY)
    assert warnings_with(result, f"x has no value on {len(days):,} of them")
    assert warnings_with(result, BEGINS)
