"""What a person reads on the chart and in its caption, checked against DuckDB over the
sample's minute bars (the ``days`` fixture), never Barb's engine: the footer's count, the
subtitle's measures in words, a tie's clock, the tie a limit cut."""

from __future__ import annotations

import pandas as pd
from engine_results import figure, run
from matplotlib.figure import Figure
from matplotlib.text import Text


def texts(fig: Figure) -> list[str]:
    """Every text drawn, a wrapped one on one line."""
    shown = [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return [t.replace("\n", " ") for t in shown]


def days_of(days: pd.DataFrame, year: int) -> pd.DataFrame:
    index = pd.to_datetime(pd.Series(days.index, index=days.index))
    return days[(index.dt.year == year).to_numpy()]


def test_a_footer_of_a_query_without_where_counts_the_bars_not_a_match(
    sample_settings, days
) -> None:
    """«подошло 259 из 259 (дневные бары)» under "average range by weekday": nothing was
    filtered, and the footer read as a filter that kept every day. A where's footer still
    says what it kept."""
    year = days_of(days, 2024)
    query = {"session": "RTH", "from": "daily", "period": "2024", "group_by": "dayofweek()"}
    result = run({**query, "select": "mean(range)"}, sample_settings)
    shown = texts(figure(result, "ru"))
    assert f"дневные бары: {len(year)}" in shown
    assert not any("подошло" in t for t in shown)
    assert f"daily bars: {len(year)}" in texts(figure(result, "en"))

    wide = year[(year["high"] - year["low"]) > 300]
    result = run({**query, "where": "range > 300", "select": "mean(range)"}, sample_settings)
    said = f"подошло {len(wide)} из {len(year)} (дневные бары)"
    assert any(t.startswith(said) for t in texts(figure(result, "ru")))


def test_the_subtitle_names_the_measure_and_the_sort_in_words(sample_settings, days) -> None:
    """«mean(range) · по дню недели» under «средний диапазон: Ср 349,17 – Вт 381,05» and
    «range · сортировка range по убыванию» under the widest days: the chart's words named
    the measure, its subtitle the query's code. A formula with no words stays as written."""
    year = days_of(days, 2024)
    by_day = run(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "group_by": "dayofweek()",
            "select": "mean(range)",
        },
        sample_settings,
    )
    shown = texts(figure(by_day, "ru"))
    assert "средний диапазон · по дню недели" in shown
    assert not any("mean(range)" in t for t in shown)
    assert "average range · by weekday" in texts(figure(by_day, "en"))

    widest = run(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "select": ["range", "close - open"],
            "sort": "range desc",
            "limit": 5,
        },
        sample_settings,
    )
    top = (year["high"] - year["low"]).nlargest(5)
    assert widest.table is not None
    assert widest.table["range"].tolist() == top.tolist()  # the chart of the right rows
    said = "диапазон, close - open · сортировка: диапазон по убыванию · первые 5"
    assert said in " ".join(texts(figure(widest, "ru")))  # on two lines
