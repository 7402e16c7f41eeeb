"""What a person saw on drawn charts: the Russian headline of a positive column dropped the
column's name where English kept it; values all below zero left a label's room empty over
zero; ETH's hours from 18:00 had no 18:00 tick. Expected values are DuckDB over the
sample's minute bars, written with plain Python formatting."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pandas as pd
import pytest
from engine_results import bar_heights, figure, run
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
    column's name was drawn. The name is the plan's words for it (p38c): «средний
    диапазон», longer still."""
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "dayname()",
        "select": "mean(range) as mean_range",
    }
    means = (days["high"] - days["low"]).groupby(pd.DatetimeIndex(days.index).dayofweek).mean()
    high, low = int(means.idxmax()), int(means.idxmin())
    result = run(query, sample_settings)
    # Within noise of each other (p47d D1): their span, lowest first, the name kept.
    en = drawn_headline(figure(result))
    assert en.startswith(f"average range: {['Mon', 'Tue', 'Wed', 'Thu', 'Fri'][low]} ")
    ru = drawn_headline(figure(result, "ru"))
    top, bottom = (f"{means[d]:.2f}".replace(".", ",") for d in (high, low))
    assert ru.startswith("средний диапазон: "), ru
    assert f"{RU_WEEKDAYS[low]} {bottom}" in ru and f"{RU_WEEKDAYS[high]} {top}" in ru, ru


@pytest.mark.parametrize(
    ("group_by", "select", "names"),
    [
        # The engine's name for mean(range) is said in words; a name the query chose is kept.
        ("month()", "mean(range) as mean_range", ("average range", "средний диапазон")),
        ("year()", "max(high) as yearly_high_price", ("yearly_high_price",) * 2),
        # A count named for its unit, in the chart's language (p47d D5).
        ("dayname()", "count() as days", ("days", "дни")),
    ],
)
def test_drawn_headlines_of_one_positive_column_name_it(
    sample_settings, group_by: str, select: str, names: tuple[str, str]
) -> None:
    result = run(
        {"session": "RTH", "from": "daily", "group_by": group_by, "select": select},
        sample_settings,
    )
    for language, name in zip(("en", "ru"), names, strict=True):
        head = drawn_headline(figure(result, language))
        assert head.startswith(f"{name}: "), (language, head)


# --- values all below zero: the axis ends just above zero --------------------------------------


def test_yearly_drawdowns_end_the_axis_just_above_zero(sample_settings, days) -> None:
    """Every year's deepest drawdown is below zero and its label hangs under its bar, yet
    the axis kept a label's room over zero (0 to +18 of an axis down to −78)."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"dd_pct": "(close / cummax(close, 'year') - 1) * 100"},
        "group_by": "year()",
        "select": "min(dd_pct) as max_dd",
    }
    closes = days["close"]
    years = pd.DatetimeIndex(closes.index).year
    expected = ((closes / closes.groupby(years).cummax() - 1) * 100).groupby(years).min()
    assert (expected < 0).all()
    result = run(query, sample_settings)
    for language in ("en", "ru"):
        fig = figure(result, language)
        (ax,) = fig.axes
        np.testing.assert_allclose(bar_heights(ax), expected.to_numpy())
        assert ax.get_ylim()[1] >= 0
        box = ax.get_window_extent()
        zero_px = ax.transData.transform((0, 0))[1]
        assert box.y1 - zero_px <= 12 * fig.dpi / 100  # at most 12 px over zero
        labels = [t for t in ax.texts if t.get_text().endswith("%")]
        assert len(labels) == len(expected)
        for label in labels:  # every label hangs under its bar, inside the plot
            extent = label.get_window_extent()
            assert box.y0 <= extent.y0 and extent.y1 <= zero_px, label.get_text()


def test_a_positive_column_keeps_the_room_for_its_labels(sample_settings) -> None:
    query = {"session": "RTH", "from": "daily", "group_by": "year()", "select": "mean(range) as r"}
    fig = figure(run(query, sample_settings))
    (ax,) = fig.axes
    box = ax.get_window_extent()
    labels = [t.get_window_extent() for t in ax.texts if t.get_text()[:1].isdigit()]
    assert labels and all(extent.y1 <= box.y1 for extent in labels)


# --- a session from its 18:00 open labels its first hour ---------------------------------------


def test_eth_hours_drawn_from_the_open_label_the_open(sample_settings, con) -> None:
    """ETH's hours run from 18:00; the ticks were 21:00, 02:00 … 15:00: the lowest hour,
    21:00, kept its label and took the 18:00 tick three groups before it off. They step
    evenly from it, the named hours marked."""
    query = {"session": "ETH", "from": "1h", "group_by": "hour()", "select": "mean(range) as r"}
    means = (
        con.execute(
            """
            SELECT h, avg(r) AS r FROM (
                SELECT trading_date, hour(timestamp) AS h, max(high) - min(low) AS r
                FROM nq GROUP BY 1, 2)
            GROUP BY 1
            """
        )
        .df()
        .set_index("h")["r"]
    )
    order = sorted(means.index, key=lambda h: (h - 18) % 24)
    assert order[0] == 18
    expected = means.reindex(order)
    low, high = f"{int(expected.idxmin()):02d}:00", f"{int(expected.idxmax()):02d}:00"
    result = run(query, sample_settings)
    for language in ("en", "ru"):
        fig = figure(result, language)
        (ax,) = fig.axes
        np.testing.assert_allclose(bar_heights(ax), expected.to_numpy(), rtol=1e-9)
        ticks = [t for t in ax.get_xticklabels() if t.get_text()]
        texts = [t.get_text() for t in ticks]
        assert texts[0] == "18:00", texts
        # The hours the headline names: labelled, or, off the even step the labels keep,
        # a tick of their own (p46w #9).
        marked = {round(t) for t in ax.get_xticks(minor=True)}
        for named in (low, high):
            assert named in texts or order.index(int(named[:2])) in marked, (named, texts)
        assert len(set(np.diff(ax.get_xticks()))) == 1, texts
        boxes = [t.get_window_extent() for t in ticks]
        assert all(a.x1 < b.x0 for a, b in pairwise(boxes)), texts
