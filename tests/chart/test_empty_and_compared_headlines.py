"""Headlines of results whose first line read in the engine's words (p47d D7, D10): a result
no row matched says what was searched and found empty, "nothing matched (0 of 23 days,
2025-07)", where it read "average range = n/a points" and "0 rows". The days searched are
counted here with DuckDB over the sample's minute bars."""

from __future__ import annotations

import pandas as pd
import pytest
from engine_results import run

from barb.charts import chart_headline

pytestmark = pytest.mark.slow

NOTHING = {
    "en": "nothing matched (0 of {n} days, {period})",
    "ru": "ничего не подошло (0 из {n} дней, {period})",
}


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_mean_and_a_listing_of_no_rows_say_what_was_searched(
    sample_settings, days, language
) -> None:
    dates = pd.DatetimeIndex(days.index)
    july = int(((dates.year == 2025) & (dates.month == 7)).sum())
    year = int((dates.year == 2025).sum())
    mean = {
        "session": "RTH",
        "from": "daily",
        "period": "2025-07",
        "where": "dayname() == 'Sat'",
        "select": "mean(range)",
    }
    said = chart_headline(run(mean, sample_settings), language)
    assert said == NOTHING[language].format(n=july, period="2025-07")
    assert "n/a" not in said and "н/д" not in said
    listing = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "map": {"gap_pct": "(open - prev(close)) / prev(close) * 100"},
        "where": "gap_pct < -10",
        "select": ["gap_pct", "open"],
    }
    said = chart_headline(run(listing, sample_settings), language)
    assert said == NOTHING[language].format(n=year, period="2025")


def test_a_count_of_no_rows_is_its_answer(sample_settings, days) -> None:
    """A count of 0 is the answer to "how many", not an empty result."""
    query = {"session": "RTH", "from": "daily", "period": "2025", "where": "range > 100000",
             "select": "count()"}  # fmt: skip
    assert chart_headline(run(query, sample_settings)) == "number of days = 0"


def test_no_value_takes_no_unit() -> None:
    from barb.charts.value_text import with_unit
    from barb.charts.words import words_for

    assert with_unit("н/д", "points", words_for("ru")) == "н/д"
    assert with_unit("n/a", "points", words_for("en")) == "n/a"


@pytest.mark.parametrize(
    ("language", "form"),
    [
        ("en", "average range: close > open days {yes} vs other days {no} points"),
        ("ru", "средний диапазон: в дни close > open {yes} против {no} пункта в остальные дни"),
    ],
)
def test_two_groups_by_a_condition_are_compared_not_ranked(
    sample_settings, days, language, form
) -> None:
    """ES's range on FOMC days against the others was headlined "highest fomc: yes 90.03,
    lowest fomc: no 74.35" («больше всего fomc: да»): two groups are a comparison."""
    year = days[pd.DatetimeIndex(days.index).year == 2025]
    means = (year["high"] - year["low"]).groupby(year["close"] > year["open"]).mean()
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "group_by": "close > open",
        "select": "mean(range)",
    }
    said = chart_headline(run(query, sample_settings), language)
    yes, no = (f"{means[k]:.2f}" for k in (True, False))
    if language == "ru":
        yes, no = yes.replace(".", ","), no.replace(".", ",")
    assert said is not None and said.startswith(form.format(yes=yes, no=no)), said
    assert "highest" not in said and "больше всего" not in said
