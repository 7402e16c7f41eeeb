"""A percentile of a fraction in Russian: «97.5-й перцентиль диапазона» wrote the query's
English "97.5" amid Russian words, where 97.5 is written «97,5». The headline's percentile
numbers in the locale's form, its values checked against numpy over DuckDB's RTH days."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_results import figure, run
from test_reading_texts import numbers, title_lines

from barb.charts import chart_headline
from barb.settings import EngineSettings

QUERY = {
    "session": "RTH",
    "from": "daily",
    "period": "2024",
    "select": ["percentile(range, 97.5)", "percentile(range, 2.5)"],
}


@pytest.mark.parametrize(
    ("language", "high", "low"),
    [
        ("ru", "97,5-й перцентиль диапазона", "2,5-й перцентиль диапазона"),
        ("en", "97.5th percentile of range", "2.5th percentile of range"),
    ],
)
def test_a_fraction_percentile_is_written_as_the_locale_writes_numbers(
    sample_settings: EngineSettings, days: pd.DataFrame, language: str, high: str, low: str
) -> None:
    year = days[pd.to_datetime(days.index).year == 2024]
    ranges = (year["high"] - year["low"]).to_numpy()
    result = run(QUERY, sample_settings)
    headline = chart_headline(result, language)
    assert headline is not None
    assert headline.startswith(f"{high} = ") and f" · {low} = " in headline
    drawn = " ".join(title_lines(figure(result, language)))
    if language == "ru":
        assert "97.5" not in drawn and "2.5" not in drawn
        values = [v for v in numbers(drawn) if v not in (97.5, 2.5)]
        np.testing.assert_allclose(values, np.percentile(ranges, [97.5, 2.5]), atol=0.006)
