"""A where's mean is drawn beside its value over all the period's rows: a grey dashed line
in the legend as "all days: 52.5%" («все дни: 52,5 %»). After 3 down days NQ's next day was
up on 49.5% of 517 days; the chart drew that line over the yearly shares and nothing for
the 52.45% of all days, so the person could not see the condition sits below normal, as
the warning told the model (p40a C3). The values are checked with pandas over DuckDB's
daily bars, never the engine."""

from __future__ import annotations

import numpy as np
import pytest
from engine_results import as_read, figure, run
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from barb.charts.style import BASELINE_LINE
from barb.summary_text import value_text

pytestmark = pytest.mark.slow

ALL_DAYS = {"en": "all days: ", "ru": "все дни: "}
UP_NEXT = {"up_next": "next(close) > close"}
AFTER_DOWN_DAYS = {
    "session": "RTH",
    "from": "daily",
    "map": UP_NEXT,
    "where": "streak(close < prev(close)) >= 3",
    "select": ["count()", "mean(up_next) as p_up"],
}


def baselines(ax: Axes) -> list[Line2D]:
    """The grey dashed lines drawn across the plot."""
    return [
        line
        for line in ax.get_lines()
        if line.get_color() == BASELINE_LINE["color"] and line.get_linestyle() == "--"
    ]


def legend_texts(ax: Axes) -> list[str]:
    legend = ax.get_legend()
    return [] if legend is None else [t.get_text() for t in legend.get_texts()]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_share_after_down_days_draws_the_share_of_all_days(
    sample_settings, days, language
) -> None:
    up_next = (days["close"].shift(-1) > days["close"]).iloc[:-1]  # the last day has no next
    result = run(AFTER_DOWN_DAYS, sample_settings)
    found = result.metadata.baselines["p_up"]
    assert found.rows == len(up_next)
    assert found.value == pytest.approx(up_next.mean(), abs=1e-12)

    (ax,) = figure(result, language).axes
    (line,) = baselines(ax)
    assert np.allclose(line.get_ydata(), up_next.mean())
    (text,) = [t for t in legend_texts(ax) if t.startswith(ALL_DAYS[language])]
    percent = text.removeprefix(ALL_DAYS[language]).replace(",", ".").rstrip("% \u00a0")
    # As the warning gives it to the model ("it is 0.5248"): 52.48%, not 52.5%.
    assert float(percent) == pytest.approx(float(value_text(up_next.mean())) * 100)


def test_a_share_without_a_where_has_no_baseline(sample_settings) -> None:
    query = {k: v for k, v in AFTER_DOWN_DAYS.items() if k != "where"}
    result = run(query, sample_settings)
    assert result.metadata.baselines == {}
    (ax,) = figure(result).axes
    assert not baselines(ax)
    assert not [t for t in legend_texts(ax) if t.startswith(ALL_DAYS["en"])]


def test_a_mean_return_after_a_gap_draws_the_mean_of_all_days(sample_settings, days) -> None:
    ret = ((days["close"].shift(-1) / days["close"] - 1) * 100).iloc[:-1]
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"gap": "open / prev(close) - 1", "ret": "(next(close) / close - 1) * 100"},
        "where": "gap > 0.005",
        "select": ["count()", "mean(ret) as next_ret"],
    }
    result = run(query, sample_settings)
    found = result.metadata.baselines["next_ret"]
    assert (found.rows, found.value) == (len(ret), pytest.approx(ret.mean(), rel=1e-9))
    (ax,) = figure(result).axes
    (line,) = baselines(ax)
    assert np.allclose(line.get_xdata(), ret.mean())
    (text,) = [t for t in legend_texts(ax) if t.startswith(ALL_DAYS["en"])]
    assert text == f"all days: {as_read(ret.mean())}%"  # as the warning gives it
