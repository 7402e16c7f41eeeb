"""What a person reads on a chart at a phone's width: a headline of several statistics
whole, and a share's axis that ends at 100%. Checked on the drawn figure against DuckDB
over the sample's minute bars (``days``), never Barb's engine."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from engine_results import bar_heights, figure, run
from matplotlib.figure import Figure
from matplotlib.text import Text

from barb.charts import chart_headline
from barb.charts.style import TITLE_PT
from barb.settings import EngineSettings


def title_lines(fig: Figure) -> list[str]:
    """The headline's lines as drawn, top to bottom."""
    drawn = [
        t
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_fontsize() == TITLE_PT and t.get_text().strip()
    ]
    return [t.get_text() for t in sorted(drawn, key=lambda t: -t.get_position()[1])]


def numbers(text: str) -> list[float]:
    """The numbers a Russian text writes (``364,56``)."""
    found = re.findall(r"-?\d[\d\u00a0 ]*(?:,\d+)?", text)
    return [float(n.replace("\u00a0", "").replace(" ", "").replace(",", ".")) for n in found]


def test_three_statistics_headline_is_drawn_whole_in_russian(
    sample_settings: EngineSettings, days: pd.DataFrame
) -> None:
    """«средний диапазон = 364,56 пункта · медиана диапазона = 343,50…»: three statistics of
    the range, each named with its column and unit, ran past the title's lines and the
    chart dropped the third (the 90th percentile, the number asked for). The column and the
    unit are said once: «диапазон: среднее 364,56 · медиана 343,50 · 90-й перцентиль 516,30
    пункта», all three values drawn, nothing cut."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024",
        "select": ["mean(range)", "median(range)", "percentile(range, 90)"],
    }
    year = days[pd.to_datetime(days.index).year == 2024]
    ranges = (year["high"] - year["low"]).to_numpy()
    expected = [ranges.mean(), np.median(ranges), np.percentile(ranges, 90)]
    lines = title_lines(figure(run(query, sample_settings), "ru"))
    drawn = " ".join(lines)
    assert "…" not in drawn
    assert drawn.startswith("диапазон: среднее ") and "90-й перцентиль" in drawn
    assert drawn.endswith("пункта") and drawn.count("пункт") == 1
    # "90-й" is the percentile's name; the three values follow their words.
    values = [v for v in numbers(drawn) if v != 90]
    np.testing.assert_allclose(values, expected, atol=0.006)
    assert len(lines) <= 3
    # English reads the same way when it must, and whole either way.
    english = " ".join(title_lines(figure(run(query, sample_settings), "en")))
    assert "…" not in english and english.count("points") in (1, 3)


def test_a_share_axis_ends_at_100_percent_above_upright_labels(
    sample_settings: EngineSettings, days: pd.DataFrame
) -> None:
    """The share of days with a range over 20 points, by year: most years' 100% labels run
    upright above their bars, and the room made for them took the axis to 120% (a share
    never passes 100%). No tick or grid line past 100%, and the axis line ends there; the
    bars are the shares computed here. The years at 100% are too many to name, and are
    counted as years: "(9 groups tied)" named no unit."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2010:2025",
        "group_by": "year()",
        "select": "mean(range > 20)",
    }
    dated = days[
        (pd.to_datetime(days.index).year >= 2010) & (pd.to_datetime(days.index).year <= 2025)
    ]
    by_year = ((dated["high"] - dated["low"]) > 20).groupby(pd.to_datetime(dated.index).year).mean()
    whole = int((by_year == 1.0).sum())
    result = run(query, sample_settings)
    assert f"100.0% ({whole} years tied)" in str(chart_headline(result, "en"))
    assert f"(одинаково у {whole} лет)" in str(chart_headline(result, "ru"))
    for lang in ("en", "ru"):
        fig = figure(result, lang)
        [ax] = fig.axes
        np.testing.assert_allclose(bar_heights(ax), by_year.to_numpy(), atol=1e-12)
        assert by_year.max() == 1.0 and ax.get_ylim()[1] > 1.0  # room for the labels
        ticks = [t for t in ax.get_yticks() if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]]
        assert max(ticks) == 1.0
        labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
        assert labels[-1] in ("100%", "100 %", "100\u00a0%"), labels
        assert ax.spines["left"].get_bounds()[1] <= 1.0


def test_a_two_column_histogram_legend_names_its_columns_in_the_chart_s_words(
    sample_settings: EngineSettings, days: pd.DataFrame
) -> None:
    """max(high) and min(low) of 2025: the days' highs drawn as bars, their lows as an
    outline, the legend read "high", "low" in a Russian chart whose axis says «максимум ·
    минимум». Each answer is marked where DuckDB puts it."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "select": ["max(high)", "min(low)"],
    }
    year = days[pd.to_datetime(days.index).year == 2025]
    fig = figure(run(query, sample_settings), "ru")
    [ax] = fig.axes
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[:2] == ["максимум", "минимум"]
    marks = sorted(line.get_xdata()[0] for line in ax.lines if len(set(line.get_xdata())) == 1)
    assert marks == [year["low"].min(), year["high"].max()]
