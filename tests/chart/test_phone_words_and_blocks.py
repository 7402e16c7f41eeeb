"""What a person reads on a phone's chart (charts2 review): a Russian histogram's note of the
days past its axis agrees with its count («4 дня … не показаны», never «не показано»), for
1, 2, 5 and 21 as Russian plurals take them."""

from __future__ import annotations

import re

import pytest
from engine_results import bar_heights, figure, run

from barb.charts.words import words_for

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("count", "said"),
    [
        (1, "1 день ниже −3,86 % — вне графика"),
        (2, "2 дня ниже −3,86 % не показаны"),
        (5, "5 дней ниже −3,86 % не показаны"),
        (21, "21 день ниже −3,86 % — вне графика"),
    ],
)
def test_the_days_past_the_axis_agree_with_their_count(count: int, said: str) -> None:
    words = words_for("ru")
    rows = words.rows("daily", count=count)
    text = words("below_not_drawn", plural_of=count, count=count, rows=rows, value="−3,86 %")
    assert text == said


def test_a_russian_histogram_notes_its_cut_days_in_agreement(sample_settings, con) -> None:
    query = {
        "session": "20:00-02:00",
        "from": "daily",
        "period": "2025",
        "map": {"move": "close - open"},
        "select": ["mean(range)", "mean(move)"],
    }
    fig = figure(run(query, sample_settings), "ru")
    (ax,) = fig.axes
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    (said,) = [t for t in legend if t.startswith("move: ")]
    moves = con.execute(
        """
        SELECT arg_max(close, timestamp) - arg_min(open, timestamp) AS m FROM nq
        WHERE (hour(timestamp) >= 20 OR hour(timestamp) < 2) AND year(trading_date) = 2025
        GROUP BY trading_date
        """
    ).df()["m"]
    count, edge, verb = re.fullmatch(r"move: (\d+) \w+ ниже (\S+) (.+)", said).groups()
    assert int(count) == int((moves < float(edge.replace("\u2212", "-").replace(",", "."))).sum())
    n = int(count)
    one = n % 10 == 1 and n % 100 != 11
    assert verb == ("— вне графика" if one else "не показаны"), said


@pytest.mark.parametrize("language", ["en", "ru"])
def test_weekday_by_hour_names_each_weekday_once_under_its_block(
    sample_settings, con, language
) -> None:
    """ETH hourly volume by weekday × hour (2024): the weekday once under its block, level,
    and the hours inside at one round step, where «Пн · 00:00 … Ср · 08:00, Ср · 23:00»
    had stepped unevenly, turned 40°. The highest bar is the busiest hour by DuckDB."""
    query = {
        "session": "ETH",
        "from": "1h",
        "period": "2024",
        "group_by": ["dayofweek()", "hour()"],
        "select": "mean(volume)",
    }
    fig = figure(run(query, sample_settings), language)
    (ax,) = fig.axes
    ticks = [t for t in ax.get_xticklabels() if t.get_text()]
    assert ticks and all(t.get_rotation() == 0 for t in ticks)
    hours = [int(t.get_text()) for t in ticks]
    assert hours == [0, 12] * 5  # one step, every weekday alike
    names = words_for(language).weekdays[:5]
    under = [t.get_text() for t in ax.texts if t.get_text() in names]
    assert under == names  # each weekday once, in order
    hourly = con.execute(
        """
        SELECT isodow(h) - 1 AS d, hour(h) AS hr, avg(v) AS v FROM (
            SELECT date_trunc('hour', timestamp) AS h, sum(volume) AS v FROM nq
            WHERE year(timestamp) = 2024 GROUP BY 1)
        GROUP BY 1, 2
        """
    ).df()
    assert round(bar_heights(ax).max()) == round(hourly["v"].max())
    # The headline fits whole, shortened rather than cut («▼ Ср · 23:00 4 810, в…»), and
    # says both ends' numbers.
    size = max(t.get_fontsize() for t in fig.texts)
    headline = " ".join(t.get_text() for t in fig.texts if t.get_fontsize() == size)
    assert "…" not in headline
    for value in (hourly["v"].max(), hourly["v"].min()):
        written = f"{round(value):,}".replace(",", "," if language == "en" else "\u00a0")
        assert written in headline, (written, headline)


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_top_ten_headline_writes_its_first_as_its_bar_does(
    sample_settings, days, language
) -> None:
    """The 10 worst RTH days by change: the headline said «−12,6 %» over a bar of «−12,60 %»,
    one number at two precisions on one chart. The worst change from DuckDB's days."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"chg": "(close / prev(close) - 1) * 100"},
        "sort": "chg asc",
        "limit": 10,
    }
    worst = float(((days["close"] / days["close"].shift() - 1) * 100).min())
    written = f"{worst:.2f}".replace("-", "\u2212")
    written = f"{written}%" if language == "en" else f"{written.replace('.', ',')}\u00a0%"
    fig = figure(run(query, sample_settings), language)
    size = max(t.get_fontsize() for t in fig.texts)
    headline = " ".join(t.get_text() for t in fig.texts if t.get_fontsize() == size)
    assert headline.endswith(written), (headline, written)
    (ax,) = fig.axes
    assert written in [t.get_text() for t in ax.texts]  # its bar's label
