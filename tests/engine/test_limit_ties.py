"""A limit that cuts through a tie says so, naming the tied rows: "which weekday has the
most days" cut to 1 kept Tuesday where Wednesday had as many. Expected ties from pandas over
RTH daily bars built from the minute file."""

from __future__ import annotations

import pandas as pd
from asking import RTH_DAILY, ask
from rth_bars import rth_daily

from barb.result import Result


def _ties(result: Result) -> list[str]:
    return [w for w in result.metadata.warnings if "cuts through a tie" in w]


def _days_per_weekday(minutes: pd.DataFrame, month: str) -> pd.Series:
    days = rth_daily(minutes).loc[month].index
    return pd.Series(days.day_name().str[:3]).value_counts()


def test_a_group_tied_with_the_last_one_kept_is_named(engine_settings, minutes) -> None:
    counts = _days_per_weekday(minutes, "2024-01")
    top = counts[counts == counts.max()]
    assert len(top) > 1  # January 2024: five Tuesdays, Wednesdays and Thursdays
    result = ask(
        {
            "period": "2024-01",
            "group_by": "dayname()",
            "select": "count() as days",
            "sort": "days desc",
            "limit": 1,
        },
        engine_settings,
        **RTH_DAILY,
    )
    [kept] = result.table["dayname"].tolist()
    assert kept in top.index
    named = ", ".join(day for day in ["Mon", "Tue", "Wed", "Thu", "Fri"] if day in top.index)
    assert _ties(result) == [
        f"limit 1 cuts through a tie: {len(top)} rows have days = {counts.max()} ({named}), "
        f"and 1 of them is kept, the first in the rows' order; say it is a tie, or raise the "
        f"limit to {len(top)}."
    ]
    # Room for every tied row: nothing is said.
    wider = ask(
        {
            "period": "2024-01",
            "group_by": "dayname()",
            "select": "count() as days",
            "sort": "days desc",
            "limit": len(top),
        },
        engine_settings,
        **RTH_DAILY,
    )
    assert _ties(wider) == []


def test_bars_tied_at_the_cut_are_counted(engine_settings, minutes) -> None:
    """Bars sorted by weekday number, cut to 2: every Friday of the period ties."""
    daily = rth_daily(minutes).loc["2024-02"]
    fridays = daily.index[daily.index.dayofweek == 4]
    result = ask(
        {"period": "2024-02", "map": {"wd": "dayofweek()"}, "sort": "wd desc", "limit": 2},
        engine_settings,
        **RTH_DAILY,
    )
    [warning] = _ties(result)
    names = ", ".join(f"{day:%Y-%m-%d}" for day in fridays[:3])
    assert warning.startswith(
        f"limit 2 cuts through a tie: {len(fridays)} rows have wd = 4 ({names} and "
        f"{len(fridays) - 3} more), and 2 of them are kept"
    )
    assert warning.endswith(f"raise the limit to {len(fridays)}.")


def test_a_selected_table_cut_between_different_values_says_nothing(engine_settings) -> None:
    result = ask(
        {"period": "2024-02", "select": "range", "sort": "range desc", "limit": 3},
        engine_settings,
        **RTH_DAILY,
    )
    top = result.table["range"].tolist()
    assert top == sorted(top, reverse=True)
    assert _ties(result) == []
