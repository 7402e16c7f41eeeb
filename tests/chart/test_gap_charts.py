"""Charts a gap/overnight tester found wrong: weekly bars counted in the year of their label,
times from the 18:00 open read on the clock, Russian names of the engine's keys, aggregates
past the panels named, and the half-hour last bar of an hourly RTH marked. Expected numbers
come from DuckDB or pandas over the same Parquet bars, never the engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_results import bar_heights, figure, run

pytestmark = pytest.mark.slow


def tick_texts(ax, axis: str = "x") -> list[str]:
    labels = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    return [t.get_text() for t in labels if t.get_text()]


# --- 1: a week is counted in the year of its label, its first trading date ---------------------


def test_weekly_bars_per_year_are_counted_by_the_weeks_first_date(sample_settings, days) -> None:
    """Counted by its last day, the week of 2025-12-29 was drawn as a 2026 bar of 1 and 2008
    held 52 weeks, where ``year()`` and the week's label say 53 and no 2026."""
    query = {
        "session": "RTH",
        "from": "weekly",
        "map": {"pwh": "prev(high)"},
        "select": ["count()", "mean(high > pwh) as broke_pwh"],
    }
    result = run(query, sample_settings)
    dates = pd.DatetimeIndex(days.index)
    monday = dates - pd.to_timedelta(dates.dayofweek, unit="D")
    first = pd.Series(dates, index=monday).groupby(level=0).min()
    assert dates[-1].dayofweek < 4  # the data ends mid-week: that week is left out
    first = first.iloc[:-1]
    expected = first.groupby(first.dt.year).size()
    assert expected.index[-1] < dates[-1].year  # no week of the last year is over
    fig = figure(result)
    (ax,) = fig.axes
    np.testing.assert_array_equal(bar_heights(ax), expected.to_numpy())
    shown = [int(t) for t in tick_texts(ax)]
    assert max(shown) <= expected.index[-1] and min(shown) >= expected.index[0]
