"""A calendar or clock function compared with a number it never returns is an error naming its
range: month() == 13 read "count = 0" and "No bars matched" with no cause, and month() in
(1, 2, 13) dropped the 13 without a word (p34c M2). The ranges are the registry's, and no bar
falls outside them: the edges still count what DuckDB counts."""

from __future__ import annotations

import re

import pytest

from barb import execute
from barb.script.library import library
from tests.asking import ask

DAILY = {"session": "ETH", "from": "daily", "select": "count()"}
HOURLY = {"session": "ETH", "from": "1h", "select": "count()"}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"where": "month() == 13"}, "month() runs 1-12, so 'month() == 13' never matches."),
        (
            {"where": "month() in (1, 2, 13)"},
            "month() runs 1-12, so 13 in 'month() in (1, 2, 13)' never matches.",
        ),
        ({"where": "month() > 12"}, "month() runs 1-12, so 'month() > 12' never matches."),
        ({"where": "0 >= month()"}, "month() runs 1-12, so '0 >= month()' never matches."),
        ({"where": "dayofweek() == 7"}, "dayofweek() runs 0-6, so 'dayofweek() == 7' never"),
        ({"where": "quarter() == 5"}, "quarter() runs 1-4, so 'quarter() == 5' never matches."),
        ({"where": "day() == 32"}, "day() runs 1-31, so 'day() == 32' never matches."),
        ({"where": "weekofyear() == 54"}, "weekofyear() runs 1-53"),
        ({"select": "count(dayofyear() == 367)"}, "dayofyear() runs 1-366"),
        ({"map": {"m": "month()"}, "where": "m == 13"}, "m (month()) runs 1-12, so 'm == 13'"),
        (HOURLY | {"where": "hour() == 24"}, "hour() runs 0-23, so 'hour() == 24' never"),
        (HOURLY | {"where": "hour('UTC') > 23"}, "hour('UTC') runs 0-23"),
        (
            HOURLY | {"where": "minute() in (0, 30, 60, 75)"},
            "minute() runs 0-59, so 60, 75 in 'minute() in (0, 30, 60, 75)' never match.",
        ),
    ],
)
def test_a_value_outside_the_range_is_an_error_naming_it(engine_settings, query, message) -> None:
    result = execute(DAILY | query, "NQ", settings=engine_settings)
    assert not result.ok, result.metadata.warnings
    said = result.to_dict()
    assert said["error_type"] == "TypeError"
    assert said["message"].startswith(message)
    function = re.findall(r"(\w+)\(", message.split(" runs")[0])[-1]  # m (month()): month
    assert said["hint"].startswith(f"{function}(")  # the function's line of the reference


@pytest.mark.parametrize(
    ("query", "sql"),
    [
        ({"where": "month() <= 12 and month() >= 1"}, "true"),
        ({"where": "month() != 13"}, "true"),
        ({"where": "month() in (3, 12)"}, "month(tdate) = 3"),
        ({"where": "dayofweek() < 5 and day() <= 31"}, "true"),
    ],
)
def test_comparisons_inside_the_range_still_count_the_days(engine_settings, db, query, sql):
    result = ask(query, engine_settings, **DAILY)
    days = db.execute(f"SELECT count(DISTINCT tdate) FROM bars WHERE {sql}").fetchone()[0]
    assert result.summary.value == days > 0


def test_the_last_hour_of_the_clock_is_inside_it(engine_settings, db) -> None:
    result = ask({"where": "hour() == 23 and minute() == 0"}, engine_settings, **HOURLY)
    expected = db.execute("SELECT count(DISTINCT tdate) FROM bars WHERE mod = 1380").fetchone()[0]
    assert result.summary.value == expected > 0


def test_no_bar_returns_a_value_outside_its_functions_range(engine_settings) -> None:
    """A range too narrow would refuse a query that matches bars."""
    ranged = sorted({spec.name for spec in library().values() if spec.values is not None})
    assert ranged == [
        "day",
        "dayofweek",
        "dayofyear",
        "hour",
        "minute",
        "month",
        "quarter",
        "weekofyear",
    ]
    select = [f"{agg}({name}()) as {agg}_{name}" for name in ranged for agg in ("min", "max")]
    result = ask({"select": select}, engine_settings, session="ETH", **{"from": "1m"})
    values = result.summary.values
    for name in ranged:
        low, high = library()[name].values
        assert low <= values[f"min_{name}"] <= values[f"max_{name}"] <= high, name
