"""What a person saw on drawn charts: the Russian headline of a positive column dropped the
column's name where English kept it. Expected values are DuckDB over the sample's minute
bars (the ``days`` fixture), written with plain Python formatting."""

from __future__ import annotations

import pandas as pd
import pytest
from engine_results import figure, run
from matplotlib.figure import Figure

from barb.charts.style import TITLE_PT

pytestmark = pytest.mark.slow

RU_WEEKDAYS = ["Пн", "Вт", "Ср", "Чт", "Пт"]


def drawn_headline(fig: Figure) -> str:
    """The headline as drawn, its bold lines joined."""
    lines = [t.get_text() for t in fig.texts if t.get_fontsize() == TITLE_PT and t.get_text()]
    return " ".join(lines)


# --- the drawn headline names the column in Russian as in English ------------------------------


def test_a_mean_by_weekday_names_its_column_in_both_languages(sample_settings, days) -> None:
    """«больше всего Ср 140,7 пункта, меньше всего Пн 134,6 пункта» under "mean_range:
    highest Wed 140.7 points, …": the Russian words are longer, and the form without the
    column's name was drawn."""
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "dayname()",
        "select": "mean(range) as mean_range",
    }
    means = (days["high"] - days["low"]).groupby(pd.DatetimeIndex(days.index).dayofweek).mean()
    high, low = int(means.idxmax()), int(means.idxmin())
    result = run(query, sample_settings)
    en = drawn_headline(figure(result))
    assert en.startswith(f"mean_range: highest {['Mon', 'Tue', 'Wed', 'Thu', 'Fri'][high]} ")
    ru = drawn_headline(figure(result, "ru"))
    top, bottom = (f"{means[d]:.2f}".replace(".", ",") for d in (high, low))
    assert ru.startswith(f"mean_range: больше всего {RU_WEEKDAYS[high]} {top}"), ru
    assert f"меньше всего {RU_WEEKDAYS[low]} {bottom}" in ru, ru


@pytest.mark.parametrize(
    ("group_by", "select", "column"),
    [
        ("month()", "mean(range) as mean_range", "mean_range"),
        ("year()", "max(high) as yearly_high_price", "yearly_high_price"),
        ("dayname()", "count() as days", "days"),
    ],
)
def test_drawn_headlines_of_one_positive_column_name_it(
    sample_settings, group_by: str, select: str, column: str
) -> None:
    result = run(
        {"session": "RTH", "from": "daily", "group_by": group_by, "select": select},
        sample_settings,
    )
    for language in ("en", "ru"):
        head = drawn_headline(figure(result, language))
        assert head.startswith(f"{column}: "), (language, head)
