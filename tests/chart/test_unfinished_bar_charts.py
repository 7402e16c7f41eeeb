"""The data's unfinished last bar in a chart of bars: the sample ends on Wednesday
2026-01-07, so weekly last_4_bars lists the week of 2026-01-05 with 3 days, which read
"-0.26%" as if it were a whole week. It is drawn hollow and noted with the days it covers,
as a grouped chart's open year; the one-row card says it is the week so far. Whole weeks
(last_2_weeks) are drawn filled. Expected weeks are DuckDB's RTH days (``conftest.py``)
grouped by their Monday, never Barb's engine."""

from __future__ import annotations

import pandas as pd
import pytest
from engine_results import figure, run
from matplotlib.collections import PolyCollection
from matplotlib.text import Text

pytestmark = pytest.mark.slow

RET = {"ret": "(close / prev(close) - 1) * 100"}
NOTES = {"en": "not over yet (hollow bar)", "ru": "период не завершён (полый столбец)"}
CARDS = {"en": "Week so far: {first} — {last}", "ru": "Неделя не завершена: {first} — {last}"}


def hollow(ax) -> list[bool]:
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    return [tuple(face[:3]) == (1.0, 1.0, 1.0) for face in bars.get_facecolors()]


def weeks(days: pd.DataFrame) -> pd.DataFrame:
    """Each week's first and last trading date and how many days it holds, by its Monday."""
    dates = pd.DatetimeIndex(days.index)
    monday = dates - pd.to_timedelta(dates.weekday, unit="D")
    frame = pd.DataFrame({"date": dates, "monday": monday})
    return frame.groupby("monday")["date"].agg(first="min", last="max", count="size")


def texts(fig) -> str:
    return "\n".join(t.get_text() for t in fig.findobj(Text) if t.get_visible())


@pytest.mark.parametrize("language", ["en", "ru"])
def test_only_the_unfinished_last_week_is_hollow(sample_settings, days, language) -> None:
    week = weeks(days).iloc[-1]
    assert week["count"] == 3  # Monday to Wednesday 2026-01-07
    query = {"session": "RTH", "from": "weekly", "period": "last_4_bars", "map": RET}
    fig = figure(run(query, sample_settings), language)
    price, lower = fig.axes
    assert hollow(price) == [False, False, False, True]
    assert hollow(lower) == [False, False, False, True]
    first, last = (str(week[k].date()) for k in ("first", "last"))
    note = lower.get_xlabel()
    assert note.startswith(f"{first}: {NOTES[language]}")
    assert f"{first} — {last}" in note


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_unfinished_month_is_hollow(sample_settings, days, language) -> None:
    dates = pd.DatetimeIndex(days.index)
    january = dates[dates >= dates[-1].replace(day=1)]
    query = {"session": "RTH", "from": "monthly", "period": "last_3_bars"}
    fig = figure(run(query, sample_settings), language)
    (price,) = fig.axes
    assert hollow(price) == [False, False, True]
    note = price.get_xlabel()
    assert note.startswith(f"{january[0]:%Y-%m}: {NOTES[language]}")
    assert f"{january[0].date()} — {january[-1].date()}" in note


@pytest.mark.parametrize("language", ["en", "ru"])
def test_whole_weeks_are_not_hollow(sample_settings, days, language) -> None:
    query = {"session": "RTH", "from": "weekly", "period": "last_2_weeks", "map": RET}
    fig = figure(run(query, sample_settings), language)
    price, lower = fig.axes
    assert hollow(price) == [False, False]
    assert hollow(lower) == [False, False]
    assert lower.get_xlabel() == ""
    assert NOTES[language] not in texts(fig)


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_card_of_the_unfinished_week_says_so_far(sample_settings, days, language) -> None:
    week = weeks(days).iloc[-1]
    query = {"session": "RTH", "from": "weekly", "period": "last_1_bars", "map": RET}
    fig = figure(run(query, sample_settings), language)
    first, last = (str(week[k].date()) for k in ("first", "last"))
    assert CARDS[language].format(first=first, last=last) in texts(fig)


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_card_of_a_whole_week_names_its_day(sample_settings, days, language) -> None:
    query = {"session": "RTH", "from": "weekly", "period": "last_week", "map": RET}
    fig = figure(run(query, sample_settings), language)
    shown = texts(fig)
    assert CARDS[language].split(":")[0] not in shown
    assert str(weeks(days).index[-2].date()) in shown
