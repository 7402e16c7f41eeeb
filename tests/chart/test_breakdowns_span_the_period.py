"""A where-filtered answer broken down per month, week or year spans the query's period, not
only the periods with a kept row (p34b C). "Inside days of 2024, the share closing above the
mother high next day" ended at 29.4%, and its chart's month axis ran Jan–Oct: the last inside
day was in October, so November and December were missing and June was a blank slot with no
label, and the chart read as data ending in October. Now every month of the period is a slot
and has its name; a month with no row has no share (no bar, no "0%") and says "no days". A
count per group (``group_by: month()`` or ``week()``) fills the period's groups with 0.

The bars are hand-made (``chart_factories``); the expected shares and counts are pandas over
the same rows."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from chart_factories import make_bars, metadata
from engine_results import bar_heights, figure
from matplotlib.text import Text

from barb.result import Result, Summary, summarize_grouped

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
SHARE_QUERY = {
    "session": "RTH",
    "from": "daily",
    "period": "2024",
    "map": {"above": "close > open"},
    "where": "volume > 800000",
    "select": ["count()", "mean(above) as share_above"],
}


@pytest.fixture(scope="module")
def year() -> pd.DataFrame:
    """Every business day of 2024."""
    return make_bars(len(pd.bdate_range("2024-01-02", "2024-12-31")), start="2024-01-02")


@pytest.fixture(scope="module")
def kept(year: pd.DataFrame) -> pd.DataFrame:
    """Two days in each month from January to October but June: none in June, November or
    December, as 2024's inside days."""
    stamps = year["timestamp"]
    months = stamps.dt.month
    pick = (months <= 10) & (months != 6) & (stamps.dt.day.isin([10, 11, 12, 13, 14]))
    rows = year[pick].groupby(months[pick]).head(2).reset_index(drop=True)
    rows["above"] = rows["close"] > rows["open"]
    return rows


def _period_meta(year: pd.DataFrame, rows: int):
    return metadata(year).model_copy(update={"rows_matched": rows, "period_requested": "2024"})


def _share_result(year: pd.DataFrame, kept: pd.DataFrame) -> Result:
    values = {"count": len(kept), "share_above": float(kept["above"].mean())}
    return Result(
        query=SHARE_QUERY,
        summary=Summary(type="dict", values=values),
        source_rows=kept,
        metadata=_period_meta(year, len(kept)),
        focus_columns=["above"],
    )


def _texts(fig, rotation: float | None = None) -> list[Text]:
    return [
        t
        for t in fig.findobj(Text)
        if t.get_text() and (rotation is None or t.get_rotation() == rotation)
    ]


def test_a_share_per_month_spans_the_period_and_says_no_days(year, kept) -> None:
    result = _share_result(year, kept)
    months = kept["timestamp"].dt.month
    expected = kept["above"].groupby(months).mean()
    assert list(expected.index) == [1, 2, 3, 4, 5, 7, 8, 9, 10]

    fig = figure(result)
    (ax,) = fig.axes
    # Every month of 2024 is a slot, each named; none cut after October.
    assert [t.get_text() for t in ax.get_xticklabels()] == MONTHS
    np.testing.assert_allclose(ax.get_xticks(), np.arange(12))
    # A bar for each month with rows, at its month's slot, as tall as its share; no bar, not
    # a 0% one, where no row was kept.
    (bars,) = [c for c in ax.collections if c.get_paths()]
    centres = [float(np.mean(p.vertices[:4, 0])) for p in bars.get_paths()]
    np.testing.assert_allclose(centres, expected.index.to_numpy() - 1)
    np.testing.assert_allclose(bar_heights(ax), expected.to_numpy(), rtol=1e-12)
    empty = sorted(t.xy[0] for t in ax.texts if t.get_text() == "no days")
    assert empty == [5, 10, 11]  # Jun, Nov, Dec
    shares = [t for t in ax.texts if t.get_text().endswith("%")]
    assert sorted({round(t.xy[0]) for t in shares}) == list(expected.index - 1)


def test_a_russian_share_per_month_says_no_days_in_russian(year, kept) -> None:
    fig = figure(_share_result(year, kept), "ru")
    (ax,) = fig.axes
    assert len(ax.get_xticklabels()) == 12
    assert sum(t.get_text() == "нет дней" for t in ax.texts) == 3


def test_a_share_per_week_spans_the_period(year) -> None:
    """Two months of 2024 are drawn per week: the weeks before the first kept row and after
    the last are slots too."""
    days = year[year["timestamp"].between("2024-03-01", "2024-04-30")].reset_index(drop=True)
    kept = days[days["timestamp"].between("2024-03-18", "2024-04-05")].reset_index(drop=True)
    kept = kept.assign(above=kept["close"] > kept["open"])
    meta = metadata(days).model_copy(update={"rows_matched": len(kept)})
    query = {**SHARE_QUERY, "period": "2024-03-01:2024-04-30"}
    values = {"count": len(kept), "share_above": float(kept["above"].mean())}
    result = Result(
        query=query,
        summary=Summary(type="dict", values=values),
        source_rows=kept,
        metadata=meta,
    )
    weeks = pd.period_range("2024-03-01", "2024-04-30", freq="W")
    found = kept["timestamp"].dt.to_period("W")
    expected = kept["above"].groupby(found).mean()

    fig = figure(result)
    (ax,) = fig.axes
    assert len(weeks) == 10 and len(expected) == 3
    np.testing.assert_allclose(bar_heights(ax), expected.to_numpy(), rtol=1e-12)
    empty = sorted(t.xy[0] for t in ax.texts if t.get_text() == "no days")
    assert empty == [i for i, w in enumerate(weeks) if w not in expected.index]


def test_a_count_by_month_fills_the_months_after_the_last_match(year, kept) -> None:
    table = kept.groupby(kept["timestamp"].dt.month).size().rename("count")
    table = table.rename_axis("month").reset_index()
    query = {**SHARE_QUERY, "group_by": "month()", "select": "count()"}
    result = Result(
        query=query,
        summary=summarize_grouped(table, ["month"], ["count"]),
        table=table,
        metadata=_period_meta(year, len(kept)),
    )
    expected = kept["timestamp"].dt.month.value_counts().reindex(range(1, 13), fill_value=0)

    fig = figure(result)
    (ax,) = fig.axes
    np.testing.assert_array_equal(bar_heights(ax), expected.to_numpy())


def test_a_count_by_week_fills_the_weeks_with_none(year, kept) -> None:
    first_half = kept[kept["timestamp"] < "2024-07-01"]
    monday = first_half["timestamp"] - pd.to_timedelta(first_half["timestamp"].dt.dayofweek, "D")
    table = first_half.groupby(monday).size().rename("count").rename_axis("week").reset_index()
    days = year[year["timestamp"] < "2024-07-01"]
    query = {**SHARE_QUERY, "period": "2024-01:2024-06", "group_by": "week()", "select": "count()"}
    meta = metadata(days).model_copy(update={"rows_matched": len(first_half)})
    assert meta.period_end == dt.date(2024, 6, 28)
    result = Result(
        query=query,
        summary=summarize_grouped(table, ["week"], ["count"]),
        table=table,
        metadata=meta,
    )
    mondays = pd.date_range("2024-01-01", "2024-06-24", freq="W-MON")
    expected = pd.Series(1, index=pd.DatetimeIndex(monday)).groupby(level=0).sum()
    expected = expected.reindex(mondays, fill_value=0)

    fig = figure(result)
    (ax,) = fig.axes
    assert len(mondays) == 26 and (expected > 0).sum() == 6
    np.testing.assert_array_equal(bar_heights(ax), expected.to_numpy())
