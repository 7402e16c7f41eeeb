"""A statistic over fewer rows than were kept says how many: "after an up day, the mean next
day's return" written as ``if(up, next(ret), 0 / 0)`` over every day is a mean of the up
days only, and "N matched" counts them all. Expected counts from pandas over RTH daily bars
built from the minute file."""

from __future__ import annotations

import pandas as pd
import pytest
from rth_bars import rth_daily

from barb import execute, render_summary
from barb.result import Result

NEXT_AFTER_UP = {
    "ret": "close / prev(close) - 1",
    "nr": "if(close > open, next(ret), 0 / 0)",
}


def _ask(query: dict, settings) -> Result:
    result = execute({"session": "RTH", "from": "daily", **query}, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


def _after_up_days(minutes: pd.DataFrame) -> pd.DataFrame:
    daily = rth_daily(minutes)
    ret = daily["close"] / daily["close"].shift() - 1
    daily["nr"] = ret.shift(-1).where(daily["close"] > daily["open"])
    return daily


def test_a_mean_over_some_of_the_days_says_how_many(engine_settings, minutes) -> None:
    daily = _after_up_days(minutes)
    result = _ask({"map": NEXT_AFTER_UP, "select": ["mean(nr)", "count()"]}, engine_settings)
    values = result.summary.values
    assert values["count"] == len(daily)
    assert values["mean_nr"] == pytest.approx(daily["nr"].mean())
    sample = int(daily["nr"].notna().sum())
    assert 0 < sample < len(daily) / 2 + 20  # the up days, less the last day if it is one
    assert result.summary.samples == {"mean_nr": sample}
    first = render_summary(result).splitlines()[0]
    assert first.startswith("Result: mean_nr=")
    assert first.endswith(f" (over {sample:,} rows with a value), count={len(daily)}")
    # The empty value written as the reference says is not warned about as a division.
    assert not [w for w in result.metadata.warnings if "Division by zero" in w]


def test_a_single_statistic_and_a_correlation_count_their_rows(engine_settings, minutes) -> None:
    daily = _after_up_days(minutes)
    daily["ret"] = daily["close"] / daily["close"].shift() - 1
    result = _ask({"map": NEXT_AFTER_UP, "select": "percentile(nr, 90)"}, engine_settings)
    sample = int(daily["nr"].notna().sum())
    assert f"(over {sample:,} rows with a value)" in render_summary(result).splitlines()[0]
    pair = _ask(
        {"map": {"ret": NEXT_AFTER_UP["ret"]}, "select": "correlation(ret, prev(ret))"},
        engine_settings,
    )
    both = int((daily["ret"].notna() & daily["ret"].shift().notna()).sum())
    assert pair.summary.samples == {"correlation_ret_prev_ret": both}
    assert pair.summary.value == pytest.approx(daily["ret"].corr(daily["ret"].shift()))


def test_groups_say_what_their_statistic_is_over(engine_settings, minutes) -> None:
    daily = _after_up_days(minutes)
    result = _ask(
        {"map": NEXT_AFTER_UP, "group_by": "month()", "select": "mean(nr)"}, engine_settings
    )
    sample = int(daily["nr"].notna().sum())
    assert (
        f"mean_nr is over the {sample:,} of the {len(daily):,} rows kept that have a value "
        "(the others are empty); count() counts all of them."
    ) in result.metadata.warnings
    both = _ask(
        {"map": NEXT_AFTER_UP, "group_by": "month()", "select": ["mean(nr)", "std(nr)"]},
        engine_settings,
    )
    assert (
        f"mean_nr and std_nr are over the {sample:,} of the {len(daily):,} rows kept that have "
        "a value (the others are empty); count() counts all of them."
    ) in both.metadata.warnings


def test_nothing_is_said_when_every_row_has_a_value(engine_settings) -> None:
    result = _ask({"select": ["mean(range)", "percentile(range, 90)"]}, engine_settings)
    assert result.summary.samples == {}
    assert "over" not in render_summary(result).splitlines()[0]
    grouped = _ask({"group_by": "month()", "select": "mean(range)"}, engine_settings)
    assert not [w for w in grouped.metadata.warnings if "rows kept that have a value" in w]


def test_groups_say_nothing_of_the_first_days_missing_return(engine_settings, minutes) -> None:
    """The data's first day has no previous close: one empty row of about 60 is no news."""
    ret = "close / prev(close) - 1"
    query = {"map": {"ret": ret}, "group_by": "month()", "select": ["mean(ret)", "std(ret)"]}
    result = _ask(query, engine_settings)
    assert not [w for w in result.metadata.warnings if "rows kept that have a value" in w]
    assert _ask({**query, "select": "mean(ret)"}, engine_settings).ok


def test_one_missing_row_is_not_worth_a_word(engine_settings) -> None:
    """The data's first day has no previous close: a mean of returns over every day is over
    one row fewer, which is no news beside the value."""
    result = _ask(
        {"map": {"ret": "close / prev(close) - 1"}, "select": ["mean(ret)", "std(ret)"]},
        engine_settings,
    )
    assert result.summary.samples == {}
    assert "rows with a value" not in render_summary(result)
