"""Groups by ``dayofweek()`` (0 is Monday) are weekdays to a trader: the chart read
"highest dayofweek 2 (54.4%)" over an axis of 0 to 4 named "dayofweek", in Russian too.
They are named as ``dayname()``'s are; the day with the highest mean checked against
DuckDB over the sample's minute bars."""

from __future__ import annotations

import pandas as pd
import pytest
from engine_results import figure, run
from matplotlib.axes import Axes
from test_reading_texts import title_lines

from barb.settings import EngineSettings

QUERY = {
    "session": "RTH",
    "from": "daily",
    "group_by": "dayofweek()",
    "select": "mean(range)",
}
DAYS = {"en": ["Mon", "Tue", "Wed", "Thu", "Fri"], "ru": ["Пн", "Вт", "Ср", "Чт", "Пт"]}
AXIS = {"en": "weekday", "ru": "день недели"}


@pytest.mark.parametrize("language", ["en", "ru"])
def test_dayofweek_groups_read_as_weekdays(
    sample_settings: EngineSettings, days: pd.DataFrame, language: str
) -> None:
    ranges = (days["high"] - days["low"]).groupby(pd.to_datetime(days.index).dayofweek).mean()
    fig = figure(run(QUERY, sample_settings), language)
    [ax] = [a for a in fig.axes if isinstance(a, Axes) and a.get_xticklabels()]
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert ticks == DAYS[language]
    assert ax.get_xlabel() == AXIS[language]
    drawn = " ".join(title_lines(fig))
    assert "dayofweek" not in drawn
    for day in (ranges.idxmax(), ranges.idxmin()):  # "Mon 134.58 to Wed 140.78"
        value = f"{ranges[day]:.2f}"
        assert (
            f"{DAYS[language][int(day)]} {value if language == 'en' else value.replace('.', ',')}"
            in drawn
        )
