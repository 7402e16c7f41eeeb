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


SO_FAR_DAYS = {"en": "{days} of {total} days", "ru": "{days} из {total} {word}"}


def calendar_days(start: pd.Timestamp, end: pd.Timestamp) -> int:
    """The days CME Globex Equity (NQ's calendar) trades from ``start`` to ``end``."""
    import pandas_market_calendars as mcal

    return len(mcal.get_calendar("CME Globex Equity").valid_days(start, end))


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize(("timeframe", "period"), [("weekly", "last_1_bars"), ("monthly", "mtd")])
def test_the_card_of_an_unfinished_bar_counts_its_days(
    sample_settings, days, language, timeframe, period
) -> None:
    """ "Week so far: 2026-01-05 — 2026-01-07" left the reader to count how much of the week
    was still to come: the card says "3 of 5 days" (Russian "3 из 5 дней")."""
    dates = pd.DatetimeIndex(days.index)
    last = dates[-1]
    if timeframe == "weekly":
        start = last - pd.Timedelta(days=last.weekday())
        end = start + pd.Timedelta(days=4)
    else:
        start, end = last.replace(day=1), last + pd.offsets.MonthEnd(0)
    so_far = int(((dates >= start) & (dates <= last)).sum())
    total = calendar_days(start, end)
    assert so_far < total
    query = {"session": "RTH", "from": timeframe, "period": period}
    shown = texts(figure(run(query, sample_settings), language))
    word = "дня" if total % 10 == 1 and total % 100 != 11 else "дней"
    assert SO_FAR_DAYS[language].format(days=so_far, total=total, word=word) in shown


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_card_of_a_whole_week_counts_no_days(sample_settings, days, language) -> None:
    query = {"session": "RTH", "from": "weekly", "period": "last_week"}
    shown = texts(figure(run(query, sample_settings), language))
    assert not any(word in shown for word in (" of 5 days", " из 5 дней"))


@pytest.mark.parametrize("period", ["last_2_weeks", "last_3_weeks"])
def test_every_one_of_a_few_weeks_is_named(sample_settings, days, period) -> None:
    """Two weekly bars a week apart on an axis eight weeks wide stood closer than a label's
    width, and only the first week was named."""
    count = int(period.split("_")[1])
    whole = weeks(days).iloc[-1 - count : -1]  # the last week is not over
    query = {"session": "RTH", "from": "weekly", "period": period}
    (price,) = figure(run(query, sample_settings)).axes
    shown = [t.get_text() for t in price.get_xticklabels() if t.get_text()]
    assert shown == [f"{d:%Y-%m-%d}" for d in whole["first"]]
