"""A bar's clock (hour(), minute(), time()) on daily and longer bars, which have none, is an
error pointing to intraday bars: "which hour makes the RTH high" on daily bars read 00:00 for
every year, and time() >= '15:00' read "No bars matched" with no cause (p34c W1, M2). And
"1M" in from, a month in TradingView and pandas, read as 1-minute bars (p34c M1)."""

from __future__ import annotations

import pytest

from barb import execute
from tests.asking import ask


def _error(query: dict, settings) -> dict:
    result = execute({"session": "RTH", "period": "2024"} | query, "NQ", settings=settings)
    assert not result.ok, result.metadata.warnings if result.metadata else result
    return result.to_dict()


@pytest.mark.parametrize("timeframe", ["daily", "weekly"])
@pytest.mark.parametrize(
    ("call", "query"),
    [
        ("hour()", {"group_by": "year()", "select": "arg_max(hour(), high) as h"}),
        ("hour()", {"group_by": "hour()", "select": "mean(range)"}),
        ("time()", {"where": "time() >= '15:00'", "select": "count()"}),
        ("minute()", {"map": {"m": "minute()"}, "select": "max(m)"}),
    ],
)
def test_a_clock_on_bars_without_one_is_an_error_naming_intraday_bars(
    engine_settings, timeframe, call, query
) -> None:
    said = _error({"from": timeframe} | query, engine_settings)
    assert said["error_type"] == "ArgumentError"
    assert said["message"].startswith(
        f"{call} reads a bar's time of day, and {timeframe} bars have none"
    )
    assert '"from": "1h" or "1m"' in said["hint"]


def test_a_zones_clock_on_daily_bars_keeps_its_own_error(engine_settings) -> None:
    said = _error({"from": "daily", "select": "mean(hour('UTC'))"}, engine_settings)
    assert said["message"].startswith("hour('UTC') reads a bar's open on another clock")
    bad_zone = _error({"from": "daily", "select": "mean(hour('Mars'))"}, engine_settings)
    assert "there is no time zone 'Mars'" in bad_zone["message"]


def test_the_clock_on_intraday_bars_still_counts_its_bars(engine_settings, db) -> None:
    result = ask(
        {"from": "1m", "period": "2024", "where": "hour() == 10 and time() < '10:30'"},
        engine_settings,
        session="RTH",
        select="count()",
    )
    expected = db.execute(
        "SELECT count(*) FROM bars WHERE year(tdate) = 2024 AND mod >= 600 AND mod < 630"
    ).fetchone()[0]
    assert expected > 0
    assert result.summary.value == expected


@pytest.mark.parametrize("written", ["1M", "5M", "60M", " 1M "])
def test_an_upper_case_m_timeframe_is_ambiguous(engine_settings, written) -> None:
    said = _error({"from": written, "select": "count()"}, engine_settings)
    assert said["error_type"] == "UnknownTimeframe"
    name = written.strip()
    assert f"'{name}' is ambiguous: \"{name.lower()}\" is" in said["message"]
    assert '"monthly" is one bar per month' in said["message"]


@pytest.mark.parametrize(("written", "bars"), [("1m", "1m"), ("1MIN", "1m"), ("1H", "1h")])
def test_spellings_that_read_one_way_in_any_case_stay_accepted(
    engine_settings, written, bars
) -> None:
    result = ask({"from": written, "period": "2024-01-02", "select": "count()"}, engine_settings)
    assert result.ok and result.metadata.timeframe == bars
