"""A second stage's statistic over the first stage's groups, the data's unfinished last one
among them (p32c N1: "the mean of each year's max drawdown", -20.41 over 19 years with
2026's 4 days, -21.49 without): the part group's warning says which statistics it is one of
the rows of and their values without it, only where they move. Expected values are pandas'
over the fixture's RTH days (its data ends on Thursday 2024-03-28, inside a week)."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from matplotlib.text import Text
from rth_bars import rth_daily

from barb import execute
from barb.charts import draw_chart
from barb.charts.words import words_for
from barb.data.store import data_path

LAST_WEEK = "2024-03-25"


def _weekly_ranges(minutes: pd.DataFrame) -> pd.Series:
    """Each week's RTH range (highest high - lowest low), by its Monday."""
    days = rth_daily(minutes)
    monday = days.index - pd.to_timedelta(days.index.dayofweek, unit="D")
    return days["high"].groupby(monday).max() - days["low"].groupby(monday).min()


def _open_week_said(result) -> str:
    assert result.ok, result.to_dict()
    [said] = [w for w in result.metadata.warnings if w.startswith(f"The week {LAST_WEEK}")]
    return said


_FED = re.compile(
    r" (?:In (?P<group>[^,]+), the|The) second stage's (?P<stats>.+) (?:is|are) over "
    r"(?P<n>\d+) rows, this \w+ among them: without it (?P<without>.+)\.$"
)


def _fed(said: str) -> dict[str, tuple[float, float]] | None:
    """The statistics the warning says the part week feeds: name -> (with, without)."""
    found = _FED.search(said)
    if found is None:
        return None
    stats = re.findall(r"(\w+) \((-?[\d.]+)\)", found["stats"])
    without = re.split(r", | and ", found["without"])
    assert len(stats) == len(without), said
    return {
        name: (float(value), float(alone))
        for (name, value), alone in zip(stats, without, strict=True)
    }


def test_a_mean_over_weeks_says_it_holds_the_unfinished_week(engine_settings, minutes) -> None:
    """Each week's range, then the mean, median and max over the weeks: the open week feeds
    them all. Said with their values without it, each only where it moves; never of a
    total, which holds its days as the data does."""
    ranges = _weekly_ranges(minutes)
    assert ranges.index[-1] == pd.Timestamp(LAST_WEEK)
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "week()",
        "select": "max(high) - min(low) as rng",
        "then": {
            "select": [
                "mean(rng) as mean_rng",
                "median(rng) as median_rng",
                "max(rng) as widest",
                "sum(rng) as total",
            ]
        },
    }
    said = _open_week_said(execute(query, "NQ", settings=engine_settings))
    whole = ranges.iloc[:-1]
    expected = {
        "mean_rng": (ranges.mean(), whole.mean()),
        "median_rng": (ranges.median(), whole.median()),
        "widest": (ranges.max(), whole.max()),
    }
    moved = {k: v for k, v in expected.items() if round(v[0], 2) != round(v[1], 2)}
    assert "mean_rng" in moved  # the data makes the mean move
    fed = _fed(said)
    assert fed is not None, said
    assert f"over {len(ranges)} rows" in said
    assert fed.keys() == moved.keys()
    for name, (value, alone) in moved.items():
        assert fed[name] == (pytest.approx(value, abs=0.01), pytest.approx(alone, abs=0.01))


def test_a_grouped_second_stage_names_the_group_the_week_is_in(engine_settings, minutes) -> None:
    """Weeks split by whether their range passed 100, then the mean range of each kind:
    only the kind the open week falls in holds it."""
    ranges = _weekly_ranges(minutes)
    wide = ranges > 100
    kind = bool(wide.iloc[-1])
    members = ranges[wide == kind]
    assert len(members) > 1
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "week()",
        "select": "max(high) - min(low) as rng",
        "then": {
            "map": {"wide": "rng > 100"},
            "group_by": "wide",
            "select": "mean(rng) as mean_rng",
        },
    }
    said = _open_week_said(execute(query, "NQ", settings=engine_settings))
    assert f" In wide {str(kind).lower()}, the second stage's mean_rng (" in said
    assert _fed(said) == {
        "mean_rng": (
            pytest.approx(members.mean(), abs=0.01),
            pytest.approx(members.iloc[:-1].mean(), abs=0.01),
        )
    }


def test_a_count_by_a_weekday_says_plainly_it_holds_the_week(engine_settings, minutes) -> None:
    """ "Which weekday makes the week's high": the open week's weekday counts it. Once read
    "In day Mon, the second stage's weeks (5) is over 5 rows, it among them: without it 4"."""
    days = rth_daily(minutes)
    monday = days.index - pd.to_timedelta(days.index.dayofweek, unit="D")
    picked = days["high"].groupby(monday).idxmax().dt.day_name().str[:3]  # earliest of ties
    day = picked.iloc[-1]
    weeks = int((picked == day).sum())
    assert weeks > 1
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "week()",
        "select": "arg_max(dayname(), high) as day",
        "then": {"group_by": "day", "select": "count() as weeks"},
    }
    said = _open_week_said(execute(query, "NQ", settings=engine_settings))
    assert said.endswith(f" {day}'s {weeks} weeks include this week: without it, {weeks - 1}.")


def test_a_second_stage_group_of_the_open_week_alone_says_its_values_are_the_weeks(
    engine_settings, minutes
) -> None:
    """p40e Q09: "the month with the most inside days each year" read month 1, 0 days, for
    2026, whose only month is the open one: a best of one row. A second-stage group that
    is the open week alone says its statistics are that week's own (pandas's range), not
    of a count of its rows."""
    ranges = _weekly_ranges(minutes)
    last = ranges.iloc[-1]
    assert (ranges == last).sum() == 1  # the key below holds the open week alone
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "week()",
        "select": "max(high) - min(low) as rng",
        "then": {
            "map": {"same": f"rng == {last}"},
            "group_by": "same",
            "select": ["max(rng) as widest", "count() as weeks"],
        },
    }
    said = _open_week_said(execute(query, "NQ", settings=engine_settings))
    assert said.endswith(
        f" In the second stage it is the only row of same true: its widest ({last:g}) is this "
        "week's own, compared with no other."
    )


def test_a_second_stage_where_that_drops_the_week_says_nothing_of_it(
    engine_settings, minutes
) -> None:
    """The open week left out by then.where is no row of the mean."""
    ranges = _weekly_ranges(minutes)
    cut = ranges.iloc[-1] + 0.25  # only the wider weeks, not the open one
    assert (ranges > cut).sum() > 1
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "week()",
        "select": "max(high) - min(low) as rng",
        "then": {"where": f"rng > {cut}", "select": "mean(rng) as mean_rng"},
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.summary.value == pytest.approx(ranges[ranges > cut].mean())
    assert _fed(_open_week_said(result)) is None


def test_days_grouped_by_week_are_whole_days(engine_settings) -> None:
    """Days keyed by their week and date: the open week's days are whole rows, and a mean
    over the days is not said to hold a part group."""
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": ["week()", "date()"],
        "select": "max(high) as h",
        "then": {"select": "mean(h) as mean_h"},
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    assert not any("second stage's" in w for w in result.metadata.warnings)


def test_months_regrouped_by_month_number_are_no_year(engine_settings) -> None:
    """(year, month) groups regrouped by month alone: the open month is one of its month's
    rows, not a year; it was named "the year 3", ranked among "the whole years" 1 and 2."""
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": ["year()", "month()"],
        "select": "count() as days",
        "then": {"group_by": "month", "select": "sum(days) as d", "sort": "d asc"},
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    assert not any("among the whole years" in w for w in result.metadata.warnings)


def test_a_second_stage_key_empty_on_one_row_leaves_that_row_in_no_group(
    engine_settings, minutes
) -> None:
    """p35b #25: each period's first prev(close), then regrouped by whether it passed a
    level: the data's first period has no previous close, so its key is empty, and the open
    last period is a row of one of the groups. That raised "Internal error"; the empty row
    is in no group, as in the first stage's group_by."""
    days = rth_daily(minutes)
    days["before"] = days["close"].shift()
    monday = days.index - pd.to_timedelta(days.index.dayofweek, unit="D")
    weeks = pd.DataFrame(
        {
            "start": days["before"].groupby(monday).agg(lambda s: s.iloc[0]),
            "rng": days["high"].groupby(monday).max() - days["low"].groupby(monday).min(),
        }
    )
    assert weeks["start"].isna().sum() == 1 and weeks.index[-1] == pd.Timestamp(LAST_WEEK)
    known = weeks.dropna(subset=["start"])
    above = known["start"] > 17000
    expected = known.groupby(above)["rng"].agg(["size", "mean"])
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"before": "prev(close)"},
        "group_by": "week()",
        "select": ["first(before) as start", "max(high) - min(low) as rng"],
        "then": {
            "group_by": "start > 17000",
            "select": ["count() as weeks", "mean(rng) as mean_rng"],
        },
    }
    result = execute(query, "NQ", settings=engine_settings)
    said = _open_week_said(result)
    got = result.table.set_index("start_gt_17000")
    assert got["weeks"].to_dict() == expected["size"].to_dict()
    assert got["mean_rng"].to_numpy() == pytest.approx(expected["mean"].to_numpy())
    kind = bool(above.iloc[-1])
    members = known.loc[above == kind, "rng"]
    assert f" In start_gt_17000 {str(kind).lower()}, the second stage's" in said
    assert _fed(said)["mean_rng"] == (
        pytest.approx(members.mean(), abs=0.01),
        pytest.approx(members.iloc[:-1].mean(), abs=0.01),
    )
    assert "1 row with no value for start_gt_17000 (n/a) left out: they are in no group." in (
        result.metadata.warnings
    )


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_chart_of_the_counts_notes_the_bar_holding_the_open_week(
    engine_settings, minutes, language
) -> None:
    """p43b Q16: the warning said "high first's 463 weeks include this week: without it,
    462", and the chart's title and bar said 463 with no word of it. The bar's note says
    both numbers, and no other bar has one."""
    days = rth_daily(minutes)
    monday = days.index - pd.to_timedelta(days.index.dayofweek, unit="D")
    picked = days["high"].groupby(monday).idxmax().dt.day_name().str[:3]
    day, weeks = picked.iloc[-1], int((picked == picked.iloc[-1]).sum())
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "week()",
        "select": "arg_max(dayname(), high) as day",
        "then": {"group_by": "day", "select": "count() as weeks"},
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert _open_week_said(result).endswith(f"include this week: without it, {weeks - 1}.")
    words = words_for(language)
    named = dict(zip(words_for("en").weekdays, words.weekdays, strict=True))
    fig = draw_chart(result, language=language)
    fig.canvas.draw()
    shown = " ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible())
    shown = shown.replace("\n", " ")
    week = {"en": f"week of {LAST_WEEK}", "ru": f"неделя с {LAST_WEEK}"}[language]
    note = {
        "en": f"{named[day]}: {weeks} includes an unfinished period ({week}); {weeks - 1} "
        "without it",
        "ru": f"{named[day]}: {weeks} с учётом незавершённого периода ({week}); без него "
        f"{weeks - 1}",
    }[language]
    assert note in shown, shown
    assert shown.count(LAST_WEEK) == 1


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_week_the_period_cuts_is_not_called_unfinished(
    engine_settings, minutes, language
) -> None:
    """p43f M2: a count holding the first week, cut short at its start (there by the data's
    start), was noted "includes an unfinished period". A week the query's dates cut (from
    Thursday 2024-01-18: the week of 2024-01-15 holds 2 of its 4 days) is noted as cut; the
    open last week still as unfinished. Counts by pandas over the days from the period's
    start."""
    days = rth_daily(minutes).loc["2024-01-18":]
    monday = days.index - pd.to_timedelta(days.index.dayofweek, unit="D")
    picked = days["high"].groupby(monday).idxmax().dt.day_name().str[:3]
    first, last = picked.iloc[0], picked.iloc[-1]
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024-01-18:",
        "group_by": "week()",
        "select": "arg_max(dayname(), high) as day",
        "then": {"group_by": "day", "select": "count() as weeks"},
    }
    result = execute(query, "NQ", settings=engine_settings)
    # Every weekday the days hold, 0 where no week's high fell (Tue, Thu: p48d M1).
    weekdays = days.index.day_name().str[:3].unique()
    expected = picked.value_counts().reindex(weekdays, fill_value=0)
    assert result.table.set_index("day")["weeks"].to_dict() == expected.to_dict()
    words = words_for(language)
    named = dict(zip(words_for("en").weekdays, words.weekdays, strict=True))
    fig = draw_chart(result, language=language)
    fig.canvas.draw()
    shown = " ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible())
    shown = shown.replace("\n", " ")
    # Either week moves its bar by one when the other does not share it.
    n = int((picked == first).sum())
    without = n - 1 - (first == last)
    # Named as week() names it, by its first trading date: MLK Monday has no bars here.
    label = f"{rth_daily(minutes).loc['2024-01-15':].index[0]:%Y-%m-%d}"
    assert label == "2024-01-16"
    week = {"en": f"week of {label}", "ru": f"неделя с {label}"}[language]
    note = {
        "en": f"{named[first]}: {n} includes a period the query's dates cut ({week}); "
        f"{without} without it",
        "ru": f"{named[first]}: {n} с учётом периода, обрезанного датами запроса ({week}); "
        f"без него {without}",
    }[language]
    assert note in shown, shown
    unfinished = {"en": "unfinished period", "ru": "незавершённого периода"}[language]
    assert shown.count(unfinished) == 1 and f"{unfinished} ({week}" not in shown


@pytest.mark.slow
def test_a_month_of_the_year_is_named_beside_its_number(sample_settings) -> None:
    """f49g: each month's return, then the mean by month of the year, read "In month 1, the
    second stage's mean_ret …" where the noise warning of the same groups says "month 9
    (Sep)": the sample's open month (January 2026, 4 days) is named "month 1 (Jan)", and
    the mean with and without it is pandas's over every January's RTH days."""
    columns = ["open", "close", "trading_date", "minute"]
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=columns)
    rth = bars[(bars["minute"] >= 570) & (bars["minute"] < 1020)]
    days = rth.groupby("trading_date").agg(open=("open", "first"), close=("close", "last"))
    days.index = pd.to_datetime(days.index)
    by = [days.index.year, days.index.month]
    ret = days["close"].groupby(by).last() / days["open"].groupby(by).first() - 1
    januaries = ret[ret.index.get_level_values(1) == 1]
    assert tuple(januaries.index[-1]) == (2026, 1) and len(januaries) > 1
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": ["year()", "month()"],
        "select": "last(close) / first(open) - 1 as ret",
        "then": {"group_by": "month", "select": "mean(ret) as mean_ret"},
    }
    result = execute(query, "NQ", settings=sample_settings)
    assert result.ok, result.to_dict()
    [said] = [w for w in result.metadata.warnings if w.startswith("The month 2026-01")]
    assert " In month 1 (Jan), the second stage's mean_ret (" in said
    assert _fed(said) == {
        "mean_ret": (
            pytest.approx(januaries.mean(), abs=1e-5),
            pytest.approx(januaries.iloc[:-1].mean(), abs=1e-5),
        )
    }
