"""What a person reads on a phone's chart (charts2 review): a Russian histogram's note of the
days past its axis agrees with its count («4 дня … не показаны», never «не показано»), for
1, 2, 5 and 21 as Russian plurals take them."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from engine_results import RTH, bar_heights, figure, run

from barb.charts import chart_headline
from barb.charts.header import subtitle_text
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


@pytest.mark.parametrize(
    ("language", "said"),
    [("ru", "только дни cpi, в 09:30"), ("en", "only cpi days, at 09:30")],
)
def test_a_where_of_event_days_at_a_time_is_said_in_words(
    sample_settings, language: str, said: str
) -> None:
    """«где cpi and time() == '09:30' · с cpi» put query code in a Russian subtitle; an
    event's days, a time of day and a weekday are said in words, the event once."""
    query = {
        "session": "RTH",
        "from": "5m",
        "period": "2024",
        "join": "cpi",
        "where": "cpi and time() == '09:30'",
        "group_by": "month()",
        "select": "mean(range)",
    }
    fig = figure(run(query, sample_settings), language)
    lines = [t.get_text() for t in fig.texts]
    (subtitle,) = [line for line in lines if said in line]
    assert "time()" not in subtitle and " and " not in subtitle
    assert subtitle.count("cpi") == 1


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("ru", "количество баров · где «range > 300 and close > open»"),
        ("en", "number of bars · where “range > 300 and close > open”"),
    ],
)
def test_a_where_past_words_is_quoted_as_code(language: str, said: str) -> None:
    query = {"where": "range > 300 and close > open", "select": "count()"}
    assert subtitle_text(query, words_for(language)) == said


def test_a_weekday_and_days_without_an_event_are_said_in_words() -> None:
    query = {"join": ["cpi"], "where": "not cpi and dayofweek() == 4", "select": "mean(range)"}
    assert subtitle_text(query, words_for("ru")) == "средний диапазон · только дни без cpi, Пт"


@pytest.mark.parametrize("language", ["en", "ru"])
def test_times_on_another_clock_name_it_in_the_headline(sample_settings, con, language) -> None:
    """The time of day of each RTH day's high on Moscow's clock, counted: the headline read
    «дни: чаще всего 17:30 949 дней», a time a reader takes for New York's; it names the
    clock as the axis does ("t (MSK)", «t (МСК)»). The most frequent time from DuckDB's 5-minute
    highs, moved to Moscow by pandas."""
    query = {
        "session": "RTH",
        "from": "5m",
        "period": "2024",
        "group_by": "date()",
        "select": "arg_max(time('Moscow'), high) as t",
        "then": {"group_by": "t", "select": "count() as days"},
    }
    bars = con.execute(
        f"""
        SELECT time_bucket(INTERVAL 5 MINUTE, timestamp) AS t, max(high) AS h FROM nq
        WHERE {RTH} AND year(trading_date) = 2024 GROUP BY 1 ORDER BY 1
        """
    ).df()
    bars["d"] = bars["t"].dt.date
    highs = pd.DatetimeIndex(bars.loc[bars.groupby("d")["h"].idxmax(), "t"])
    moscow = highs.tz_localize("America/New_York").tz_convert("Europe/Moscow").strftime("%H:%M")
    counts = pd.Series(moscow).value_counts()
    assert counts.iloc[0] > counts.iloc[1]  # one most frequent time
    headline = chart_headline(run(query, sample_settings), language)
    assert headline is not None
    # «МСК», as a Russian trader names the clock: «16:30 (Moscow)» left it in English.
    clock = {"en": "MSK", "ru": "МСК"}[language]
    assert f"{counts.index[0]} ({clock}) {counts.iloc[0]}" in headline, headline


def test_year_by_weekday_names_each_year_once_and_weekdays_inside(sample_settings, days) -> None:
    """RTH range by year × weekday, 2020-2025: each year once under its block, its weekdays
    at one step inside (Пн, Чт), where «2020 · Пн» … had been turned 40°. Heights from
    DuckDB's days."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2020:2025",
        "group_by": ["year()", "dayofweek()"],
        "select": "mean(range)",
    }
    fig = figure(run(query, sample_settings), "ru")
    (ax,) = fig.axes
    years = [str(y) for y in range(2020, 2026)]
    assert [t.get_text() for t in ax.texts if t.get_text() in years] == years
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert ticks == ["Пн", "Чт"] * 6 and all(t.get_rotation() == 0 for t in ax.get_xticklabels())
    dates = pd.DatetimeIndex(days.index)
    span = days[(dates.year >= 2020) & (dates.year <= 2025)]
    at = pd.DatetimeIndex(span.index)
    means = (span["high"] - span["low"]).groupby([at.year, at.dayofweek]).mean()
    np.testing.assert_allclose(bar_heights(ax), means.to_numpy(), rtol=1e-9)
