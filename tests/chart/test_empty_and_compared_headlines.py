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


@pytest.mark.parametrize(
    ("language", "form"),
    [
        ("en", "nothing matched (0 of 8 bars, 2025-07-01)"),
        ("ru", "ничего не подошло (0 из 8 баров, 2025-07-01)"),  # genitive, not "8 1h-бары"
    ],
)
def test_bars_with_no_calendar_name_are_counted_after_of(
    sample_settings, language: str, form: str
) -> None:
    """Hourly bars of a full RTH day, 09:30-17:00: eight (the last half an hour)."""
    query = {"session": "RTH", "from": "1h", "period": "2025-07-01", "where": "volume < 0",
             "select": "mean(range)"}  # fmt: skip
    assert chart_headline(run(query, sample_settings), language) == form


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
        ("en", "average range: gap_up: yes {yes} vs gap_up: no {no} points"),
        ("ru", "средний диапазон: gap_up: да {yes} против gap_up: нет {no} пункта"),
    ],
)
def test_two_groups_by_a_condition_are_compared_not_ranked(
    sample_settings, days, language, form
) -> None:
    """ES's range on FOMC days against the others was headlined "highest fomc: yes 90.03,
    lowest fomc: no 74.35" («больше всего fomc: да»): two groups are a comparison; of days
    by a name, "gap_up days 1.23 vs other days 0.98", by a condition written out, its yes
    against its no."""
    in_year = pd.DatetimeIndex(days.index).year == 2025
    up = (days["open"] > days["close"].shift())[in_year]  # 2025's first day: 2024's close
    year = days[in_year]
    means = (year["high"] - year["low"]).groupby(up).mean()
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "map": {"gap_up": "open > prev(close)"},
        "group_by": "gap_up",
        "select": "mean(range)",
    }
    result = run(query, sample_settings)
    yes, no = (f"{means[k]:.2f}" for k in (True, False))
    if language == "ru":
        yes, no = yes.replace(".", ","), no.replace(".", ",")
    days_form = {
        "en": "average range: gap_up days {yes} vs other days {no} points",
        "ru": "средний диапазон: в дни gap_up {yes} против {no} пункта в остальные дни",
    }[language]
    said = chart_headline(result, language)
    assert said is not None and said.startswith(days_form.format(yes=yes, no=no)), said
    assert "highest" not in said and "больше всего" not in said
    written = {**query, "map": {}, "group_by": "open > prev(close)"}
    said = chart_headline(run(written, sample_settings), language)
    shown = form.replace("gap_up", "open > prev(close)").format(yes=yes, no=no)
    assert said is not None and said.startswith(shown), said


@pytest.mark.parametrize(
    ("language", "form"),
    [
        ("en", "average range: up days higher in {k} of {n} years"),
        ("ru", "средний диапазон: в дни up выше в {k} из {n} лет"),
    ],
)
def test_periods_by_a_yes_no_key_count_where_yes_is_higher(
    sample_settings, days, language, form
) -> None:
    """CL's range by year and NFP day was headlined with each series' extreme years; the
    question is in how many years the NFP days were wider."""
    years = pd.DatetimeIndex(days.index).year
    kept = days[(years >= 2015) & (years <= 2025)]
    ranges = kept["high"] - kept["low"]
    up = kept["close"] > kept["open"]
    means = ranges.groupby([pd.DatetimeIndex(kept.index).year, up]).mean().unstack()
    higher = int((means[True] > means[False]).sum())
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2015:2025",
        "map": {"up": "close > open"},
        "group_by": ["year()", "up"],
        "select": "mean(range)",
    }
    said = chart_headline(run(query, sample_settings), language)
    assert said is not None and said.startswith(form.format(k=higher, n=len(means))), said


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_period_not_written_as_a_calendar_name_reads_as_its_dates(
    sample_settings, days, language
) -> None:
    """f49g: «ничего не подошло (0 из 7 дней, 2025-12-29:2026-01-07)» and «…, last_10_days»
    put the query's tokens in the headline (the bot pins relative periods to such ranges).
    The dates are DuckDB's first and last RTH day in them."""
    dates = pd.DatetimeIndex(days.index)
    inside = dates[(dates >= "2025-12-29") & (dates <= "2026-01-07")]
    period = f"{inside[0].date()} — {inside[-1].date()}"
    for written in ("2025-12-29:2026-01-07", "last_10_days"):
        query = {"session": "RTH", "from": "daily", "period": written, "where": "range > 5000",
                 "select": "mean(range)"}  # fmt: skip
        said = chart_headline(run(query, sample_settings), language)
        assert said == NOTHING[language].format(n=len(inside), period=period)
