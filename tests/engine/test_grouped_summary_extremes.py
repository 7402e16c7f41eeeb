"""The highest and lowest group a grouped summary names (what the model reads as "the best
and the worst") are of the column the question is about: the sort's, else the first number
that is not a count, a second stage's map first. They followed the first column: "lowest
days: week=2024-12-30 … ret_pct=0.8137" (a 2-day week) while the worst week lost 5.893%.
Expected days from pandas over RTH bars built here from the minute file."""

from __future__ import annotations

import pandas as pd
import pytest
from rth_bars import rth_daily

from barb import execute, render_summary

# Each day's return from its open, as a second stage makes it from the day's first and last
# hourly prices; a count of bars (8 every day) selected first.
DAY_RETURNS = {
    "session": "RTH",
    "from": "1h",
    "group_by": "date()",
    "select": ["count() as bars", "first(open) as start", "last(close) as finish"],
    "then": {"map": {"ret_pct": "(finish / start - 1) * 100"}},
}


@pytest.fixture(scope="module")
def days(minutes: pd.DataFrame) -> pd.DataFrame:
    daily = rth_daily(minutes)
    daily["ret_pct"] = (daily["close"] / daily["open"] - 1) * 100
    return daily


def _extremes(query: dict, settings) -> tuple[dict, dict, str]:
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    summary = result.summary
    assert not summary.whole  # the groups are not all listed: the extremes are the answer
    return summary.max, summary.min, render_summary(result)


def _day(at: pd.Timestamp) -> str:
    return f"{at:%Y-%m-%d}"


@pytest.mark.parametrize("sort", [None, "ret_pct desc", "ret_pct asc"])
def test_a_second_stage_s_return_names_the_best_and_worst_day(
    engine_settings, days: pd.DataFrame, sort: str | None
) -> None:
    """By the sort column, or unsorted by the column the second stage made: never by the
    count of bars (every day 8) nor the day's first price."""
    query = {**DAY_RETURNS, "then": {**DAY_RETURNS["then"], **({"sort": sort} if sort else {})}}
    high, low, text = _extremes(query, engine_settings)
    best, worst = days["ret_pct"].idxmax(), days["ret_pct"].idxmin()
    assert (high["date"], low["date"]) == (_day(best), _day(worst))
    assert high["ret_pct"] == pytest.approx(days.loc[best, "ret_pct"], abs=1e-3)
    assert low["ret_pct"] == pytest.approx(days.loc[worst, "ret_pct"], abs=1e-3)
    assert f"lowest ret_pct: date={_day(worst)}" in text
    assert "ret_pct across groups: min=" in text


def test_a_count_selected_first_is_not_the_compared_column(
    engine_settings, days: pd.DataFrame
) -> None:
    """``count() as bars, max(high) as hi`` by day: the highest and lowest day are by hi."""
    query = {
        "session": "RTH",
        "from": "1h",
        "group_by": "date()",
        "select": ["count() as bars", "max(high) as hi"],
    }
    high, low, text = _extremes(query, engine_settings)
    assert high["date"] == _day(days["high"].idxmax())
    assert low["date"] == _day(days["high"].idxmin())
    assert high["hi"] == days["high"].max() and low["hi"] == days["high"].min()
    assert "highest hi:" in text and "highest bars:" not in text
