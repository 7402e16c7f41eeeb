"""A then stage's count() and share count the first stage's rows, and are named for them: the
days of groups by date(), the weeks of groups by week(), the groups of hours, never the bars
under them. "How often is the high of the day made after 15:00?" on 1-minute bars was titled
"number of bars = 4,496" and «количество баров: чаще всего 09:30 70» over 4,496 days, and its
plan said "Then: number of bars, share of bars where high_time >= '15:00'" (f49d). Expected
counts from pandas over the hand-made RTH minutes, never through Barb."""

from __future__ import annotations

import datetime as dt

import pytest
from asking import ask
from rth_bars import rth_minutes

from barb.charts import chart_headline
from barb.instruments import load_instrument
from bot.assistant.plan import render_plan

HIGH_TIME = {
    "session": "RTH",
    "from": "1m",
    "group_by": "date()",
    "select": "arg_max(time(), high) as high_time",
}
DAYS = {
    "en": ("number of days", "share of days where"),
    "ru": ("количество дней", "доля дней, где"),
}


def _high_after_15(minutes) -> tuple[int, float]:
    """The RTH days and the share of them whose high came at 15:00 or later (the earliest
    minute of a tied high, as arg_max takes)."""
    rth = rth_minutes(minutes)
    at = rth.loc[rth.groupby("day")["high"].idxmax(), "timestamp"]
    late = at.dt.hour * 60 + at.dt.minute >= 15 * 60
    return len(at), float(late.mean())


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_then_count_of_date_groups_is_a_number_of_days(
    engine_settings, minutes, language
) -> None:
    days, share = _high_after_15(minutes)
    assert 0 < share < 1
    then = {"select": ["count()", "mean(high_time >= '15:00')"]}
    result = ask({**HIGH_TIME, "then": then}, engine_settings)
    counted, shared = DAYS[language]
    sep = "," if language == "en" else "\u00a0"
    pct = f"{share * 100:.2f}".rstrip("0").rstrip(".")
    pct = (pct + "%") if language == "en" else pct.replace(".", ",") + "\u00a0%"
    days_text = f"{days:,}".replace(",", sep)
    assert chart_headline(result, language) == (
        f"{counted} = {days_text} · {shared} high_time >= '15:00' = {pct}"
    )
    plan = render_plan(
        {**HIGH_TIME, "then": then}, load_instrument("NQ"), dt.date(2026, 1, 7), language
    )
    then_line = plan.splitlines()[-1]
    assert then_line.endswith(f"{counted}, {shared} high_time >= '15:00'"), plan


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_then_count_per_group_names_what_the_groups_are(
    engine_settings, minutes, language
) -> None:
    """Days per hour of the high; weeks per weekday of the week's high; hour groups."""
    rth = rth_minutes(minutes)
    at = rth.loc[rth.groupby("day")["high"].idxmax(), "timestamp"]
    per_hour = {"then": {"group_by": "high_time", "select": "count()"}}
    result = ask({**HIGH_TIME, "from": "1h", **per_hour}, engine_settings)
    table = result.table
    assert int(table["count"].sum()) == len(at)  # each day counted once
    assert chart_headline(result, language).startswith(DAYS[language][0] + ":")

    weeks = {
        "session": "RTH",
        "from": "daily",
        "group_by": "week()",
        "select": "arg_max(dayname(), high) as day",
        "then": {"group_by": "day", "select": "count()"},
    }
    result = ask(weeks, engine_settings)
    n_weeks = at.dt.normalize().dt.to_period("W").nunique()
    assert int(result.table["count"].sum()) == n_weeks
    word = {"en": "number of weeks:", "ru": "количество недель:"}[language]
    assert chart_headline(result, language).startswith(word)

    hours = {
        "session": "RTH",
        "from": "1h",
        "group_by": "time()",
        "select": "mean(range) as r",
        "then": {"select": ["mean(r)", "count()"]},
    }
    result = ask(hours, engine_settings)
    word = {"en": "number of groups = 8", "ru": "количество групп = 8"}[language]
    assert word in chart_headline(result, language)  # 09:30 … 16:30, not 8 bars
