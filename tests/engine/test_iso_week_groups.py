"""weekofyear() numbers ISO weeks: over one year its group 1 holds the year's first days and
its last (2025-12-29..31 are ISO week 1 of 2026), which read as one five-day week. "Best
weeks of 2025 by week number" ranked that group first, from Jan 2's open to Dec 31's close.

Checked against pandas over the sample's raw minute bars, never through Barb.
"""

from __future__ import annotations

import pandas as pd
import pytest
from asking import ask

from barb.data.store import data_path

pytestmark = pytest.mark.slow

RTH = (570, 1020)  # NQ's RTH, 09:30-17:00, in minutes of the day
BEST_WEEKS = {
    "session": "RTH",
    "from": "daily",
    "period": "2025",
    "map": {"wk": "weekofyear()"},
    "group_by": "wk",
    "select": ["(last(close) / first(open) - 1) * 100 as wk_ret_pct", "count() as days"],
    "sort": "wk_ret_pct desc",
}


@pytest.fixture(scope="module")
def daily(sample_settings) -> pd.DataFrame:
    """NQ's RTH daily bars: open and close by trading date."""
    bars = pd.read_parquet(data_path("NQ", sample_settings))
    bars = bars[(bars["minute"] >= RTH[0]) & (bars["minute"] < RTH[1])]
    days = bars.groupby("trading_date").agg(open=("open", "first"), close=("close", "last"))
    days.index = pd.DatetimeIndex(days.index)
    return days


def test_a_year_grouped_by_week_number_warns_of_its_merged_week(sample_settings, daily) -> None:
    result = ask(BEST_WEEKS, sample_settings)
    year = daily[daily.index.year == 2025]
    week_one = year[year.index.isocalendar().week.to_numpy() == 1]
    assert [str(d.date()) for d in week_one.index] == [
        "2025-01-02",
        "2025-01-03",
        "2025-12-29",
        "2025-12-30",
        "2025-12-31",
    ]
    row = result.table[result.table["wk"] == 1].iloc[0]
    merged = (week_one["close"].iloc[-1] / week_one["open"].iloc[0] - 1) * 100
    assert row["wk_ret_pct"] == pytest.approx(merged) and row["days"] == 5
    assert any(
        "group 1 holds 2 different weeks: 2025-01-02 — 2025-01-03 and 2025-12-29 — 2025-12-31" in w
        and "group by week()" in w
        for w in result.metadata.warnings
    ), result.metadata.warnings


def test_grouped_by_week_each_group_is_one_week(sample_settings, daily) -> None:
    """week() (the week's Monday) gives the real weeks, and nothing is said."""
    result = ask({**BEST_WEEKS, "map": {"wk": "week()"}, "limit": 3}, sample_settings)
    year = daily[daily.index.year == 2025]
    monday = year.index - pd.to_timedelta(year.index.weekday, unit="D")
    weeks = year.groupby(monday).agg(open=("open", "first"), close=("close", "last"))
    returns = ((weeks["close"] / weeks["open"] - 1) * 100).sort_values(ascending=False)
    assert [str(pd.Timestamp(w).date()) for w in result.table["wk"]] == [
        str(d.date()) for d in returns.index[:3]
    ]
    assert list(result.table["wk_ret_pct"]) == pytest.approx(list(returns.iloc[:3]))
    assert not [w for w in result.metadata.warnings if "weekofyear" in w]


def test_week_numbers_across_years_are_not_warned_about(sample_settings) -> None:
    """Week N of every year together is what weekofyear() is for: each group holds one
    week a year on purpose."""
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2020:2025",
            "group_by": "weekofyear()",
            "select": "mean(range)",
        },
        sample_settings,
    )
    # Week 53 holds 2020's four last days alone: said as a group too few to compare, not
    # as weeks merged.
    merged = [
        w
        for w in result.metadata.warnings
        if "weekofyear" in w and "too few" not in w and "their noise" not in w
    ]
    assert not merged
    assert [w for w in result.metadata.warnings if "weekofyear 53: 4 days" in w]


def test_year_and_week_number_together_still_merge_week_one(sample_settings) -> None:
    """group_by [year(), weekofyear()] puts 2024-12-30/31 (ISO week 1 of 2025) with 2024's
    first days: year() does not undo the merge."""
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2023:2025",
            "group_by": ["year()", "weekofyear()"],
            "select": "count()",
        },
        sample_settings,
    )
    assert any(
        "holds 2 different weeks: 2024-01-02 — 2024-01-05 and 2024-12-30 — 2024-12-31" in w
        for w in result.metadata.warnings
    ), result.metadata.warnings
