"""One precision for a column wherever a chart writes it, and Barb's own words in the chart's
language (p47d D5, D8): the headline said "Jul 2.092%" over a bar's "2.09%"; a Russian chart
headed a count named for its unit "weeks:" and "days:", with no unit after its counts
("09:30 71"), and its subtitle read "по month()". Values from pandas over DuckDB's bars."""

from __future__ import annotations

import pandas as pd
import pytest
from engine_results import figure, run
from matplotlib.text import Text

from barb.charts import chart_headline

pytestmark = pytest.mark.slow


def texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_percent_reads_the_same_in_the_headline_and_on_its_bar(
    sample_settings, days, language
) -> None:
    year = days[pd.DatetimeIndex(days.index).year == 2025]
    percent = (year["high"] - year["low"]) / year["open"] * 100
    means = percent.groupby(pd.DatetimeIndex(year.index).month).mean()
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "map": {"rp": "range / open * 100"},
        "group_by": "month()",
        "select": "mean(rp) as p",
    }
    result = run(query, sample_settings)
    headline = chart_headline(result, language)
    assert headline is not None
    shown = texts(figure(result, language))
    for value in (means.max(), means.min()):
        written = f"{value:.2f}%" if language == "en" else f"{value:.2f}\u00a0%".replace(".", ",")
        assert written in headline, (written, headline)
        assert any(t.startswith(written[:4]) and written in t for t in shown)  # its bar's label
    three = f"{means.max():.3f}"  # the model's four digits: not beside a bar's two
    assert (three if language == "en" else three.replace(".", ",")) not in headline


def test_a_count_named_for_its_unit_is_in_the_charts_language(sample_settings, days) -> None:
    year = days[pd.DatetimeIndex(days.index).year == 2025]
    dates = pd.DatetimeIndex(year.index)
    weeks = year.groupby(dates - pd.to_timedelta(dates.dayofweek, unit="D"))["high"].idxmax()
    counts = pd.DatetimeIndex(weeks.to_numpy()).dayofweek.value_counts()
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "group_by": "week()",
        "select": "arg_max(dayname(), high) as day",
        "then": {"group_by": "day", "select": "count() as weeks"},
    }
    result = run(query, sample_settings)
    names = ["Mon", "Tue", "Wed", "Thu", "Fri"]
    drawn = dict(zip(result.table["day"], result.table["weeks"], strict=True))
    assert drawn == {names[d]: int(n) for d, n in counts.items()}
    headline = chart_headline(result, "ru")
    assert headline is not None and headline.startswith("недели: чаще всего ")
    top = names.index(max(drawn, key=drawn.get))
    russian = ["Пн", "Вт", "Ср", "Чт", "Пт"][top]
    assert f"{russian} {max(drawn.values())} недел" in headline  # a unit after the count
    shown = texts(figure(result, "ru"))
    assert not [t for t in shown if "weeks" in t.split(" ·")[0] and "count()" not in t]
    assert "недели" in shown  # the axis
    assert (chart_headline(result, "en") or "").startswith("weeks: most often ")


def test_the_subtitle_names_a_calendar_key_in_words(sample_settings) -> None:
    query = {"session": "RTH", "from": "daily", "period": "2025", "group_by": "month()",
             "select": "mean(range)"}  # fmt: skip
    result = run(query, sample_settings)
    assert "средний диапазон · по месяцу" in texts(figure(result, "ru"))
    assert "average range · by month" in texts(figure(result, "en"))
