"""What a review of intraday path questions found in the charts: a count of a condition drew
every row behind the number (646 strong days, bars of 259, 258, 258… per year), the groups
counted most and least often were "максимум Пн / минимум Чт" (read as the week's low being
on Thursday), and a whole year was drawn hollow when the data's last year had no row kept.
Expected values are pandas over the sample's RTH days (DuckDB, ``conftest.py``), never
Barb's engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_results import bar_heights, figure, run
from matplotlib.collections import PolyCollection

from barb.charts import chart_headline

pytestmark = pytest.mark.slow

RU_WEEKDAYS = ("Пн", "Вт", "Ср", "Чт", "Пт")
EN_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")


def per_year(flags: pd.Series) -> pd.Series:
    """True rows per year, every year of the days from the first to the last."""
    years = pd.DatetimeIndex(flags.index).year
    counts = flags.astype(int).groupby(years).sum()
    return counts.reindex(range(years.min(), years.max() + 1), fill_value=0)


def hollow(ax) -> list[bool]:
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    return [tuple(face[:3]) == (1.0, 1.0, 1.0) for face in bars.get_facecolors()]


# --- 1: a count of a condition draws the rows it counted ---------------------------------------


def test_a_count_of_a_mapped_condition_draws_the_days_it_held_per_year(
    sample_settings, days
) -> None:
    """Q19: strong closes (top 10% of the range) per year, not every RTH day per year."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"strong": "close_near_high()"},
        "select": "count(strong) as strong_days",
    }
    result = run(query, sample_settings)
    rng = days["high"] - days["low"]
    strong = (rng > 0) & ((days["close"] - days["low"]) / rng >= 0.9)
    expected = per_year(strong)
    assert result.summary.value == strong.sum()
    assert expected.max() < 100  # far from the ~258 days of a year
    for language in ("en", "ru"):
        (ax,) = figure(result, language).axes
        np.testing.assert_array_equal(bar_heights(ax), expected.to_numpy())


def test_a_count_of_a_condition_in_the_select_draws_the_days_it_held_per_month(
    sample_settings, days
) -> None:
    """Q18: ``count(up and wide)`` in 2025, per month: the days both held, not all days."""
    year = days[pd.DatetimeIndex(days.index).year == 2025]
    wide = float((year["high"] - year["low"]).median())
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "map": {"up": "close > open", "wide": f"high - low > {wide}"},
        "select": "count(up and wide) as wide_up_days",
    }
    result = run(query, sample_settings)
    held = (year["close"] > year["open"]) & (year["high"] - year["low"] > wide)
    months = pd.DatetimeIndex(year.index).month
    expected = held.astype(int).groupby(months).sum().reindex(range(1, 13), fill_value=0)
    assert result.summary.value == held.sum()
    all_days = pd.Series(1, index=year.index).groupby(months).sum()
    assert (expected < all_days).all()
    (ax,) = figure(result).axes
    np.testing.assert_array_equal(bar_heights(ax), expected.to_numpy())


def test_a_count_of_a_column_draws_the_days_it_has_a_value_on(sample_settings, days) -> None:
    """``count(col)`` counts the rows with a value: a 200-day mean has none on the first 199
    days, so 2008 counts 60 days, not 259."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"ma": "rolling_mean(close, 200)"},
        "select": "count(ma) as days_with_ma",
    }
    result = run(query, sample_settings)
    known = days["close"].rolling(200).mean().notna()
    expected = per_year(known)
    assert result.summary.value == known.sum()
    assert expected.iloc[0] < (pd.DatetimeIndex(days.index).year == 2008).sum()
    (ax,) = figure(result).axes
    np.testing.assert_array_equal(bar_heights(ax), expected.to_numpy())


def test_a_count_after_a_where_still_draws_every_kept_day(sample_settings, days) -> None:
    query = {"session": "RTH", "from": "daily", "where": "close > open", "select": "count()"}
    result = run(query, sample_settings)
    expected = per_year(days["close"] > days["open"])
    (ax,) = figure(result).axes
    np.testing.assert_array_equal(bar_heights(ax), expected.to_numpy())


# --- 3: the groups of a count are the most and least often, not a maximum and a minimum -------


@pytest.mark.parametrize(
    ("language", "names", "words"),
    [
        ("en", EN_WEEKDAYS, ("most often", "least often")),
        ("ru", RU_WEEKDAYS, ("чаще всего", "реже всего")),
    ],
)
def test_a_count_by_weekday_names_the_days_most_and_least_often(
    sample_settings, days, language, names, words
) -> None:
    """Q02: "weeks: максимум Пн 85, минимум Чт 31" of the weekday making the week's low."""
    query = {
        "session": "RTH",
        "from": "daily",
        "where": "close > open",
        "group_by": "dayname()",
        "select": "count() as days",
    }
    result = run(query, sample_settings)
    up = days[days["close"] > days["open"]]
    counts = pd.Series(pd.DatetimeIndex(up.index).dayofweek).value_counts()
    assert counts.nunique() == len(counts)  # no tie at either end
    most, least = counts.idxmax(), counts.idxmin()
    head = chart_headline(result, language) or ""
    # "count() as days" is named for its unit, in the chart's language (p47d D5)
    named = {"en": "days", "ru": "дни"}[language]
    assert head.startswith(f"{named}: {words[0]} {names[most]} ")
    assert f", {words[1]} {names[least]} " in head
    assert "максимум" not in head and "highest" not in head


def test_a_mean_by_weekday_in_russian_names_the_days_with_the_most_and_least(
    sample_settings, days
) -> None:
    """A value's groups in Russian: "больше всего / меньше всего", not "максимум / минимум",
    the words of a price's high and low."""
    # By year: NQ's weekdays are within noise of each other, and name no widest (p47d D1).
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2010:2025",
        "group_by": "year()",
        "select": "mean(range) as mean_range",
    }
    result = run(query, sample_settings)
    years = pd.DatetimeIndex(days.index).year
    kept = days[(years >= 2010) & (years <= 2025)]
    means = (kept["high"] - kept["low"]).groupby(pd.DatetimeIndex(kept.index).year).mean()
    widest, narrowest = means.idxmax(), means.idxmin()
    head = chart_headline(result, "ru") or ""
    assert head.startswith(f"средний диапазон: больше всего {widest} ")
    assert f", меньше всего {narrowest} " in head
    assert (chart_headline(result, "en") or "").startswith("average range: highest ")


# --- 4: only a year the data's end cuts is hollow ----------------------------------------------


def test_a_whole_last_year_is_not_hollow_when_the_open_year_kept_no_row(
    sample_settings, days
) -> None:
    """June days over all the data (to 2026-01-07): 2025 is the last bar and is whole."""
    query = {
        "session": "RTH",
        "from": "daily",
        "where": "month() == 6",
        "select": "mean(close > open) as up_share",
    }
    result = run(query, sample_settings)
    dates = pd.DatetimeIndex(days.index)
    june = days[dates.month == 6]
    up = (june["close"] > june["open"]).groupby(pd.DatetimeIndex(june.index).year).mean()
    assert dates[-1].year == up.index[-1] + 1  # the data runs into a year with no June
    (ax,) = figure(result).axes
    np.testing.assert_allclose(bar_heights(ax), up.to_numpy())
    assert not any(hollow(ax))


def test_the_last_year_the_period_cuts_is_hollow(sample_settings, days) -> None:
    """March days to 2025-06-30: 2025 is cut by the period's end, and hollow."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2020:2025-06-30",
        "where": "month() == 3",
        "select": "mean(close > open) as up_share",
    }
    result = run(query, sample_settings)
    (ax,) = figure(result).axes
    assert hollow(ax) == [False] * 5 + [True]


@pytest.mark.parametrize(("first", "open_year"), [(4, False), (5, True)])
def test_a_last_year_holding_every_day_kept_is_not_hollow(
    sample_settings, days, first, open_year
) -> None:
    """The first 4 trading days of each year: the data ends on 2026's fourth, so 2026 is
    whole and drawn filled; its fifth is still to come, so "the first 5" draws it hollow."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"n": "trading_day('year')", "ret": "(close / prev(close) - 1) * 100"},
        "where": f"n <= {first}",
        "group_by": "year()",
        "select": f"sum(ret) as first{first}",
    }
    result = run(query, sample_settings)
    dates = pd.DatetimeIndex(days.index)
    ret = (days["close"] / days["close"].shift() - 1) * 100
    n = pd.Series(1, index=days.index).groupby(dates.year).cumsum()
    kept = ret[(n <= first).to_numpy()]
    expected = kept.groupby(pd.DatetimeIndex(kept.index).year).sum()
    assert dates[-1] == pd.Timestamp("2026-01-07") and (dates.year == 2026).sum() == 4
    (ax,) = figure(result).axes
    np.testing.assert_allclose(bar_heights(ax), expected.to_numpy())
    assert hollow(ax) == [False] * (len(expected) - 1) + [open_year]
