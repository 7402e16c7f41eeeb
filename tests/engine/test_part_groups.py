"""Groups and bars that hold part of their week: the data's unfinished last week is compared
with the days the exchange trades in a whole one, not with a median that takes in a week the
period cut ("this week vs last week" over last_2_weeks said "3 days, against 2 in a whole
week"); and the data's first week, which began before the data (the sample starts on
Wednesday 2008-01-02; Monday 2007-12-31 traded), is a part week like one the period cuts.

Expected values by pandas over the sample's raw minute bars (RTH 09:30-17:00), and the
exchange's trading days by pandas_market_calendars, never through Barb.
"""

from __future__ import annotations

import json

import pandas as pd
import pandas_market_calendars as mcal
import pytest
from asking import RTH_DAILY, ask, warnings_with

from barb import execute
from barb.data.store import data_path
from barb.instruments import load_instrument

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def daily(sample_settings) -> pd.DataFrame:
    """NQ's RTH days from the raw minute bars: range, volume and the week's Monday."""
    minutes = pd.read_parquet(data_path("NQ", sample_settings))
    rth = minutes[(minutes["minute"] >= 570) & (minutes["minute"] < 1020)]
    days = rth.groupby("trading_date").agg(
        high=("high", "max"), low=("low", "min"), volume=("volume", "sum")
    )
    days["range"] = days["high"] - days["low"]
    monday = days.index - pd.to_timedelta(days.index.dayofweek, unit="D")
    # Named by its first trading date, as week() and the weekly bars name it.
    days["week"] = days.index.to_series().groupby(monday).transform("min")
    return days


def exchange_days(start: str, end: str) -> pd.DatetimeIndex:
    calendar = mcal.get_calendar(load_instrument("NQ").calendar)
    return calendar.valid_days(start, end).tz_localize(None)


@pytest.mark.parametrize("period", ["last_2_weeks", "2025-12-24:"])
def test_the_unfinished_week_is_compared_with_the_exchanges_whole_week(
    period, sample_settings, daily
) -> None:
    """It said "3 days, against 2 in a whole week (the median)" over last_2_weeks (the 1-day
    week the period cut in the median) and "against 3" from 2025-12-24, as if complete."""
    query = {
        "period": period,
        "group_by": "week()",
        "select": ["count() as days", "mean(range) as avg_range"],
    }
    result = ask(query, sample_settings, **RTH_DAILY)
    last = daily.index[-1]
    monday = last - pd.Timedelta(days=last.dayofweek)
    held = int((daily["week"] == daily.loc[last, "week"]).sum())
    whole = len(exchange_days(str(monday.date()), str((monday + pd.Timedelta(days=6)).date())))
    assert (held, whole) == (3, 5)
    [said] = [w for w in result.metadata.warnings if "is not over" in w]
    assert f"It holds {held} days, against {whole} in the whole week" in said, said
    # The week the period's start cut is a part group too: the chart is told which.
    first = result.table["week"].iloc[0]
    assert result.metadata.cut_groups == [{"week": str(pd.Timestamp(first).date())}]
    assert result.metadata.open_group == {"week": str(monday.date())}
    start = daily.index[daily.index >= (daily.index[-1] - pd.Timedelta(days=13))][0]
    if period == "2025-12-24:":
        start = pd.Timestamp("2025-12-24")
    shown = daily[daily.index >= start].groupby("week")["range"].agg(["size", "mean"])
    assert result.table["days"].tolist() == shown["size"].tolist()
    assert result.table["avg_range"].tolist() == pytest.approx(shown["mean"].tolist())


def test_with_a_where_the_median_is_of_whole_weeks_only(sample_settings, daily) -> None:
    """Where not every day is kept the calendar's count is no yardstick: the median of the
    groups before it, the week the period's start cut left out of it."""
    query = {
        "period": "2025-12-24:",
        "where": "range > 0",
        "group_by": "week()",
        "select": "count() as days",
    }
    result = ask(query, sample_settings, **RTH_DAILY)
    days = daily[(daily.index >= "2025-12-24") & (daily["range"] > 0)]
    sizes = days.groupby("week").size()
    # Whole weeks: neither the one the period's start cut nor the data's unfinished last.
    whole = sizes.iloc[1:-1]
    assert len(whole) == 1
    [said] = [w for w in result.metadata.warnings if "is not over" in w]
    assert f"It holds {sizes.iloc[-1]} days, against {whole.iloc[0]} in a whole week." in said


def test_the_datas_first_week_began_before_it_and_is_a_part_group(sample_settings, daily) -> None:
    """Daily bars by week() over 2008-01: the group 2007-12-31 held 3 days with no word,
    while the week the period's end cut was flagged."""
    first = daily.index[0]
    monday = first - pd.Timedelta(days=first.dayofweek)
    week_days = exchange_days(str(monday.date()), str((monday + pd.Timedelta(days=4)).date()))
    before = week_days[week_days < first]
    assert len(before) == 1 and len(week_days) == 4  # Monday 2007-12-31 traded, Tuesday not
    held = int((daily["week"] == first).sum())  # the week is named by its first date held
    result = ask(
        {"period": "2008-01", "group_by": "week()", "select": "count() as days"},
        sample_settings,
        **RTH_DAILY,
    )
    assert result.table["days"].iloc[0] == held == 3
    assert (
        f"The week {first.date()} began before the data starts: its row counts only {held} "
        f"of its {len(week_days)} days."
    ) in result.metadata.warnings, result.metadata.warnings
    assert {"week": str(first.date())} in result.metadata.cut_groups
    # Ranked first by volume from January to May 2008, it names the first whole week too.
    ranked = ask(
        {
            "period": "2008-01:2008-05",
            "group_by": "week()",
            "select": "sum(volume) as vol",
            "sort": "vol asc",
            "limit": 1,
        },
        sample_settings,
        **RTH_DAILY,
    )
    spring = daily[daily.index < "2008-06-01"].groupby("week")["volume"].sum()
    assert spring.idxmin() == first and spring.index[-1] == pd.Timestamp("2008-05-26")
    whole = spring.drop(first)
    [said] = [w for w in ranked.metadata.warnings if "began before the data" in w]
    assert said.endswith(
        "Sorted by vol ascending, it ranks first: among the whole weeks the lowest vol is "
        f"{whole.min()}, in {whole.idxmin().date()}."
    ), said


def test_the_datas_first_week_of_5m_bars_is_a_part_group(sample_settings, daily) -> None:
    """p46a #5: 5-minute bars by week() over 2008-01 listed the week 2007-12-31's volume, 3
    of its 4 days, beside whole weeks with no word; only the Good Friday week was named."""
    first = daily.index[0]
    held = daily[daily["week"] == first]
    result = ask(
        {"session": "RTH", "from": "5m", "period": "2008-01"}
        | {"group_by": "week()", "select": "sum(volume) as vol"},
        sample_settings,
    )
    assert result.table["vol"].iloc[0] == held["volume"].sum()
    assert (
        f"The week {first.date()} began before the data starts: its row counts only "
        f"{len(held)} of its 4 days."
    ) in result.metadata.warnings, result.metadata.warnings
    assert {"week": str(first.date())} in result.metadata.cut_groups


def test_a_yes_no_key_made_from_week_is_no_week_group(sample_settings, daily) -> None:
    """ "Gaps over the weekend against the weekday ones", grouped by week() != prev(week()):
    its two groups are kinds of day, yet the data's first week was said to be cut in it."""
    query = {
        "map": {"gap": "open - prev(close)", "first_of_week": "week() != prev(week())"},
        "group_by": "first_of_week",
        "select": ["count()", "mean(abs(gap)) as gap"],
    }
    result = ask({**query, "period": "2008-01:2008-03"}, sample_settings, **RTH_DAILY)
    first = daily[daily.index < "2008-04-01"]
    # The data's first day has no prev(week()): its key is unknown and it is in no group.
    starts = (first["week"] != first["week"].shift()).iloc[1:]
    assert result.table["count"].tolist() == [int((~starts).sum()), int(starts.sum())]
    assert not [w for w in result.metadata.warnings if "The week" in w], result.metadata.warnings


def test_weekly_bars_leave_the_datas_first_part_week_out(sample_settings, daily) -> None:
    """ "The lowest-volume week of 2008" on weekly bars ranked the 3-day week 2008-01-02
    second lowest: it is left out, counted and said, like a week the period cuts."""
    first = daily.index[0]
    monday = first - pd.Timedelta(days=first.dayofweek)
    result = ask(
        {"session": "RTH", "from": "weekly", "period": "2008", "sort": "volume asc"},
        sample_settings,
    )
    weeks = daily[daily.index.year == 2008].groupby("week")["volume"].sum()
    whole = weeks.drop(first).iloc[:-1].sort_values()  # the last runs into 2009
    assert result.table["volume"].tolist() == whole.tolist()
    assert str(first.date()) not in [str(w) for w in result.table["week"]]
    # One label per bar: the week named by its first trading date, as the table and week()
    # name it, never by its Monday beside the bar's own label (issue 11).
    assert monday < first
    assert any(
        f"The week {first.date()} began before the data starts: its weekly bar holds only "
        "3 of its 4 days." in w
        for w in result.metadata.warnings
    ), result.metadata.warnings
    assert not [w for w in result.metadata.warnings if str(monday.date()) in w]
    # A period of that bar alone still gives it.
    alone = execute(
        {"session": "RTH", "from": "weekly", "period": "2008-01-01:2008-01-04"},
        "NQ",
        settings=sample_settings,
    )
    assert alone.table["volume"].tolist() == [weeks[first]]


@pytest.mark.parametrize(
    ("written", "op"),
    [
        ("2024-01-01", "=="),  # the week's closed Monday, which week() no longer names
        ("2024-01-10", "=="),  # a Wednesday: the trader means its week
        ("2024-01-02", "=="),  # the label itself
        ("2024-01-01", "in"),
        ("2024-01-03", "!="),
    ],
)
def test_a_date_compared_with_week_means_its_week(sample_settings, daily, written, op) -> None:
    """``week() == '2024-01-01'`` matched nothing once week() named the week by its first
    trading date (2024-01-02): "count = 0, No bars matched". Any day of a week means that
    week, and the label it was read as is said. The days by pandas over the raw minutes."""
    where = {
        "==": f"week() == '{written}'",
        "in": f"week() in ('{written}', '2024-01-08')",
        "!=": f"week() != '{written}' and date() >= '2024-01-01' and date() < '2024-01-20'",
    }[op]
    result = ask({"where": where, "select": "sum(volume) as v"}, sample_settings, **RTH_DAILY)
    day = pd.Timestamp(written)
    monday = day - pd.Timedelta(days=day.dayofweek)
    label = daily.index[(daily.index >= monday) & (daily.index < monday + pd.Timedelta(days=7))][0]
    chosen = {
        "==": daily["week"] == label,
        "in": daily["week"].isin([label, pd.Timestamp("2024-01-08")]),
        "!=": (daily["week"] != label)
        & (daily.index >= "2024-01-01")
        & (daily.index < "2024-01-20"),
    }[op]
    assert chosen.sum() >= 4
    assert result.summary.value == daily.loc[chosen, "volume"].sum()
    said = [w for w in result.metadata.warnings if w.startswith("week() names each week")]
    if label == day:
        assert not said
    else:
        assert said == [
            f"week() names each week by its first trading date: '{written}' was read as its "
            f"week, {label.date()}."
        ]


@pytest.mark.parametrize(
    ("query", "reads"),
    [
        # A map's name for week(), compared in the where.
        ({"map": {"wk": "week()"}, "where": "wk == '{day}'", "select": "sum(volume) as v"}, "v"),
        # A second stage over the first stage's week key (named by the engine, or by a map).
        (
            {
                "group_by": "week()",
                "select": "sum(volume) as v",
                "then": {"where": "week == '{day}'"},
            },
            "v",
        ),
        (
            {
                "map": {"wk": "week()"},
                "group_by": "wk",
                "select": "sum(volume) as v",
                "then": {"where": "wk in ('{day}', '2030-01-07')"},
            },
            "v",
        ),
        # Weekly bars: their date() and, in a second stage, their week label (text).
        ({"from": "weekly", "where": "date() == '{day}'", "select": ["volume"]}, "volume"),
        ({"from": "weekly", "then": {"where": "week == '{day}'"}}, "volume"),
    ],
)
def test_a_date_compared_with_a_column_of_weeks_means_its_week(
    sample_settings, daily, query, reads
) -> None:
    """``week() == '2024-01-01'`` meant that date's week, but the same date against a map's
    ``wk`` (``"wk": "week()"``), a second stage's ``week`` key or a weekly bar's date matched
    nothing: "the week of January 1st 2024" answered 0 rows with no word of why (New Year's
    Monday is no week's label; 2024-01-02 is). Each reads that week now, and says so. The
    week's volume by pandas over the raw minutes."""
    day = "2024-01-01"
    text = json.dumps(query).replace("{day}", day)
    result = ask(json.loads(text), sample_settings, **RTH_DAILY)
    label = pd.Timestamp("2024-01-02")
    expected = daily.loc[daily["week"] == label, "volume"].sum()
    assert (daily["week"] == label).sum() == 4
    table = result.table
    if table is None:  # one number
        assert result.summary.value == expected
    else:
        assert len(table) == 1 and table[reads].iloc[0] == expected
    assert warnings_with(result, f"'{day}' was read as its week, 2024-01-02")


@pytest.mark.parametrize(
    ("timeframe", "where", "first", "last", "read"),
    [
        ("monthly", "date() == '2024-01-01'", "2024-01-01", "2024-01-31", ["2024-01-01"]),
        ("quarterly", "date() in ('2024-01-01', '2024-05-20')", "2024-01-01", "2024-06-30", None),
        ("yearly", "date() == '2024-06-01'", "2024-01-01", "2024-12-31", ["2024-06-01"]),
    ],
)
def test_a_date_compared_with_a_calendar_bars_date_means_its_bar(
    sample_settings, daily, timeframe, where, first, last, read
) -> None:
    """On monthly bars date() is the month's first trading date (2024-01-02): "January 2024"
    written as ``date() == '2024-01-01'`` matched nothing ("No bars matched"). The bar
    holding the day is read, and said; the volume by pandas over the raw minutes."""
    query = {"from": timeframe, "where": where, "select": "sum(volume) as v"}
    result = ask(query, sample_settings, **RTH_DAILY)
    assert result.summary.value == daily.loc[first:last, "volume"].sum()
    said = warnings_with(result, f"date() of a {timeframe} bar is its")
    if read is not None:
        assert len(said) == 1 and f"'{read[0]}' was read as its" in said[0]
        assert said[0].endswith("2024-01-02.")
