"""What a chart review at phone width found: answers drawn with no chart, or drawn without
proving what the headline says. Expected values are pandas over the sample's RTH days
(DuckDB, ``conftest.py``), never Barb's engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_results import bar_heights, figure, run
from matplotlib.text import Text

pytestmark = pytest.mark.slow


def texts(fig) -> str:
    shown = [t.get_text() for t in fig.findobj(Text) if t.get_visible()]
    return " ".join(t.replace("\n", " ") for t in shown)


def weeks_of(days: pd.DataFrame) -> pd.DataFrame:
    """Per week (by its Monday): its first open, last close and first day's change."""
    index = pd.DatetimeIndex(days.index)
    week = index - pd.to_timedelta(index.dayofweek, unit="D")
    frame = days.assign(mon=days["close"] - days["open"]).set_axis(index)
    return frame.groupby(week).agg(o=("open", "first"), c=("close", "last"), mon=("mon", "first"))


def test_a_then_share_over_weeks_draws_the_share_per_year_of_the_kept_weeks(
    sample_settings, days
) -> None:
    weeks = weeks_of(days)
    kept = weeks[weeks["mon"] < 0]
    assert 0 < len(kept) < len(weeks)
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "week()",
        "select": ["first(open) as o", "last(close) as c", "first(close - open) as mon"],
        "then": {"where": "mon < 0", "select": "mean(c > o)"},
    }
    result = run(query, sample_settings)
    up = (kept["c"] > kept["o"]).astype(float)
    assert result.summary.value == pytest.approx(up.mean())
    per_year = up.groupby(kept.index.year).mean()
    full = per_year.reindex(range(per_year.index.min(), per_year.index.max() + 1))
    for language in ("en", "ru"):
        fig = figure(result, language)
        (ax,) = fig.axes
        np.testing.assert_allclose(bar_heights(ax), full.fillna(0).to_numpy())
        (line,) = [x for x in ax.lines if x.get_ydata()[0] == pytest.approx(up.mean())]
        assert line is not None
    assert f"then {len(kept)} of {len(weeks)}" in texts(figure(result))


def test_a_then_count_draws_the_groups_it_counted(sample_settings, days) -> None:
    year = days[pd.DatetimeIndex(days.index).year == 2024]
    pts = (year["close"] - year["open"]).groupby(pd.DatetimeIndex(year.index).month).sum()
    negative = pts[pts < 0]
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024",
        "group_by": "month()",
        "select": "sum(close - open) as pts",
        "then": {"where": "pts < 0", "select": "count()"},
    }
    result = run(query, sample_settings)
    assert result.summary.value == len(negative)
    for language in ("en", "ru"):
        (ax,) = figure(result, language).axes
        np.testing.assert_allclose(bar_heights(ax), negative.to_numpy())
