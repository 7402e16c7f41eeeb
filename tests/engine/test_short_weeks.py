"""Weeks listed that hold fewer trading days than a full week are said and marked (p33a Q9,
Q19b, Q29): ETH volume by week showed the two holiday weeks of Christmas and New Year as a
40% fall, with nothing said, in the text or on the chart.

The engine tests' minute bars have no bars on 2024-01-15 (Martin Luther King Jr. Day), so
the week of 2024-01-15 trades four days and its weekly bar is labelled by its Tuesday. The
weeks and their days are counted here with pandas over the raw minutes (a bar at 18:00 or
later belongs to the next date), never through Barb.
"""

from __future__ import annotations

import datetime as dt

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

from barb import execute
from barb.charts import draw_chart
from barb.result import Result

PERIOD = "2024-01-08:2024-03-22"  # eleven whole weeks, the holiday's among them
SAID = "fewer than 5 trading days"


def _run(query: dict, settings) -> Result:
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


def _figure(result: Result) -> Figure:
    fig = draw_chart(result)
    assert fig is not None
    fig.canvas.draw()
    return fig


def _weeks(minutes: pd.DataFrame, first: str, last: str) -> pd.DataFrame:
    """ETH weeks whose Monday to Friday lie within [first, last]: each one's first trading
    date, how many it has, the weekdays with none, and its volume."""
    stamps = minutes["timestamp"]
    day = stamps.dt.normalize() + pd.to_timedelta((stamps.dt.hour >= 18).astype(int), unit="D")
    days = minutes.assign(day=day).groupby("day")["volume"].sum().to_frame()
    days["monday"] = days.index - pd.to_timedelta(days.index.weekday, unit="D")
    weeks = days.groupby("monday").agg(
        first=("volume", lambda v: v.index.min()), days=("volume", "size"), volume=("volume", "sum")
    )
    weeks = weeks[(weeks.index >= first) & (weeks.index + pd.Timedelta(days=4) <= last)]
    traded = set(days.index)
    weeks["closed"] = [
        [d.date() for d in pd.date_range(m, periods=5) if d not in traded] for m in weeks.index
    ]
    return weeks


def _short(weeks: pd.DataFrame) -> pd.DataFrame:
    return weeks[weeks["days"] < 5]


def _warning(result: Result) -> str | None:
    assert result.metadata is not None
    found = [w for w in result.metadata.warnings if SAID in w or "trading days (" in w]
    assert len(found) <= 1
    return found[0] if found else None


def test_weekly_volume_names_the_weeks_that_hold_fewer_days(engine_settings, minutes) -> None:
    weeks = _weeks(minutes, "2024-01-08", "2024-03-22")
    short = _short(weeks)
    assert len(short) == 1 and short["days"].iloc[0] == 4  # the case
    week = short.iloc[0]
    label = f"{week['first']:%Y-%m-%d}"  # a weekly bar is named by its first trading date
    query = {"session": "ETH", "from": "weekly", "period": PERIOD, "select": ["volume", "range"]}
    result = _run(query, engine_settings)
    assert result.table is not None
    np.testing.assert_array_equal(result.table["volume"], weeks["volume"])
    said = _warning(result)
    assert said is not None
    closed = week["closed"]
    assert closed == [dt.date(2024, 1, 15)]
    assert said.startswith(
        f"1 of the {len(weeks)} weeks listed holds {SAID}: {label} (4 days: no trading on "
    )
    assert f"{closed[0]}), so its volume and range cover fewer days" in said
    assert '"group_by": "week()", "select": ["mean(volume)", "mean(range)"' in said
    assert result.metadata is not None
    assert [(w.label, w.days, w.closed) for w in result.metadata.short_weeks] == [
        (label, 4, closed)
    ]


def test_one_week_listed_says_its_own_days(engine_settings, minutes) -> None:
    short = _short(_weeks(minutes, "2024-01-15", "2024-01-19"))
    query = {"session": "ETH", "from": "weekly", "period": "2024-01-15:2024-01-19"}
    said = _warning(_run({**query, "select": ["volume"]}, engine_settings))
    assert said is not None
    label = f"{short['first'].iloc[0]:%Y-%m-%d}"
    assert said.startswith(f"The week {label} holds {short['days'].iloc[0]} trading days (")


def test_a_ranking_says_the_short_week_only_when_it_lists_it(engine_settings, minutes) -> None:
    """The busiest weeks first: the four-day week comes late, and is said once listed."""
    weeks = _weeks(minutes, "2024-01-08", "2024-03-22")
    ranks = weeks["volume"].rank(method="first", ascending=False)
    place = int(ranks.loc[_short(weeks).index[0]])
    assert place > 1  # the case: weeks ranked above it are listed without it
    query = {"session": "ETH", "from": "weekly", "period": PERIOD, "select": ["volume"]}
    query["sort"] = "volume desc"
    listed = _warning(_run({**query, "limit": place}, engine_settings))
    assert listed is not None
    assert listed.startswith(f"1 of the {place} weeks listed holds {SAID}")
    assert _warning(_run({**query, "limit": place - 1}, engine_settings)) is None


@pytest.mark.parametrize(
    "select",
    [["close"], ["open", "close"], ["ret"]],
)
def test_prices_and_returns_are_not_said(engine_settings, select) -> None:
    """A week's close is no less a close for the holiday, nor its return a return."""
    query = {"session": "ETH", "from": "weekly", "period": PERIOD, "select": select}
    query["map"] = {"ret": "close / prev(close) - 1"}
    result = _run(query, engine_settings)
    assert _warning(result) is None
    assert result.metadata is not None and result.metadata.short_weeks == []


def test_groups_by_week_of_a_sum_are_said_by_their_first_day(engine_settings, minutes) -> None:
    """The week is named as week() and the weekly bar name it: by its first trading date
    (the Tuesday after a holiday Monday with no session), not by a Monday without bars."""
    short = _short(_weeks(minutes, "2024-01-08", "2024-03-22"))
    first = f"{short['first'].iloc[0]:%Y-%m-%d}"
    assert pd.Timestamp(first).dayofweek == 1
    query = {"session": "ETH", "from": "daily", "period": PERIOD, "group_by": "week()"}
    said = _warning(_run({**query, "select": ["sum(volume) as vol"]}, engine_settings))
    assert said is not None
    assert f": {first} (4 days: no trading on" in said
    assert "so its vol covers fewer days" in said
    spread = _warning(_run({**query, "select": ["max(high) - min(low) as rng"]}, engine_settings))
    assert spread is not None and "its rng covers" in spread


@pytest.mark.parametrize(
    "select",
    [
        ["mean(volume) as vol"],  # per day already
        ["sum(volume) as vol", "count() as days"],  # the rows say their days
    ],
)
def test_groups_by_week_that_read_per_day_are_not_said(engine_settings, select) -> None:
    query = {"session": "ETH", "from": "daily", "period": PERIOD, "group_by": "week()"}
    assert _warning(_run({**query, "select": select}, engine_settings)) is None


def test_a_week_the_period_cuts_is_left_to_its_own_warning(engine_settings) -> None:
    """The period starts on the holiday week's Wednesday: its row is a part week, said as
    one, not a week of four trading days."""
    query = {"session": "ETH", "from": "daily", "period": "2024-01-17:2024-02-02"}
    result = _run(
        {**query, "group_by": "week()", "select": ["sum(volume) as vol"]}, engine_settings
    )
    assert _warning(result) is None


# --- the chart ----------------------------------------------------------------------------


def _hatched(ax) -> list[PolyCollection]:
    return [c for c in ax.collections if isinstance(c, PolyCollection) and c.get_hatch()]


def _centres(bars: PolyCollection) -> list[float]:
    return [float(p.vertices[:4, 0].mean()) for p in bars.get_paths()]


def test_the_weekly_chart_hatches_the_short_week_and_notes_it(engine_settings, minutes) -> None:
    weeks = _weeks(minutes, "2024-01-08", "2024-03-22")
    week = _short(weeks).iloc[0]
    label = f"{week['first']:%Y-%m-%d}"
    query = {"session": "ETH", "from": "weekly", "period": PERIOD, "select": ["volume"]}
    fig = _figure(_run(query, engine_settings))
    (ax,) = fig.axes
    (stripes,) = _hatched(ax)
    assert _centres(stripes) == pytest.approx([mdates.date2num(week["first"])])
    height = stripes.get_paths()[0].vertices[2, 1]
    assert height == pytest.approx(week["volume"])  # over the week's own bar
    assert f"({label}: 4)" in ax.get_xlabel()


def test_a_full_weeks_chart_has_no_hatching(engine_settings) -> None:
    query = {"session": "ETH", "from": "weekly", "period": "2024-01-22:2024-03-22"}
    fig = _figure(_run({**query, "select": ["volume"]}, engine_settings))
    (ax,) = fig.axes
    assert _hatched(ax) == []
    assert ax.get_xlabel() == ""


def test_a_ranking_labels_the_short_week_with_its_days(engine_settings, minutes) -> None:
    weeks = _weeks(minutes, "2024-01-08", "2024-03-22")
    short = _short(weeks)
    label = f"{short['first'].iloc[0]:%Y-%m-%d}"
    query = {"session": "ETH", "from": "weekly", "period": PERIOD, "select": ["volume"]}
    fig = _figure(_run({**query, "sort": "volume asc", "limit": len(weeks)}, engine_settings))
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_yticklabels()]
    order = weeks["volume"].rank(method="first").astype(int)
    at = int(order.loc[short.index[0]])
    assert labels[at - 1] == f"{at}. {label} (4 days)"
    assert sum("days)" in text for text in labels) == 1


def test_groups_by_week_hatch_the_short_week(engine_settings, minutes) -> None:
    weeks = _weeks(minutes, "2024-01-08", "2024-03-22")
    at = list(weeks.index).index(_short(weeks).index[0])
    query = {"session": "ETH", "from": "daily", "period": PERIOD, "group_by": "week()"}
    fig = _figure(_run({**query, "select": ["sum(volume) as vol"]}, engine_settings))
    (ax,) = fig.axes
    (stripes,) = _hatched(ax)
    assert _centres(stripes) == pytest.approx([at])  # groups stand at 0, 1, 2 …
    assert stripes.get_paths()[0].vertices[2, 1] == pytest.approx(weeks["volume"].iloc[at])


# --- the form that lists each week's trading days (p43f M3) ------------------------------

INTRADAY = {"session": "ETH", "from": "5m", "period": PERIOD, "group_by": "week()"}
DAYS_FORM = "count(day() != coalesce(prev(day()), 0)) as days"


def test_intraday_bars_are_given_a_count_of_days_not_of_bars(engine_settings, minutes) -> None:
    """On 5m bars count() counts bars: the hint "count() as days" read 139 "days" in a
    five-day week. The form it gives now counts each week's trading dates, as pandas does."""
    weeks = _weeks(minutes, "2024-01-08", "2024-03-22")
    query = {**INTRADAY, "where": "range > 2", "select": ["count() as big_bars"]}
    said = _warning(_run(query, engine_settings))
    assert said is not None
    assert '"count() as days"' not in said
    assert said.endswith(
        "count() counts the bars the where keeps, not the week's trading days: "
        f'"{DAYS_FORM}" in the select lists each week\'s trading days, in a query without '
        "the where (count(range > 2) counts the rows it keeps)."
    )
    # 5m bars from the minutes (18:00 opens the session, on a 5-minute edge).
    bars = minutes.groupby(minutes["timestamp"].dt.floor("5min")).agg(
        high=("high", "max"), low=("low", "min")
    )
    stamps = bars.index.to_series()
    day = stamps.dt.normalize() + pd.to_timedelta((stamps.dt.hour >= 18).astype(int), unit="D")
    monday = day - pd.to_timedelta(day.dt.weekday, unit="D")
    big = (bars["high"] - bars["low"] > 2).groupby(monday).sum()
    # The hinted query, as written: the days beside the bars, every bar of the week read.
    hinted = {**INTRADAY, "select": ["count(range > 2) as big_bars", DAYS_FORM]}
    result = _run(hinted, engine_settings)
    assert result.table is not None
    np.testing.assert_array_equal(result.table["days"], weeks["days"])
    assert weeks["days"].min() == 4 and weeks["days"].max() == 5  # the case: one short week
    np.testing.assert_array_equal(result.table["big_bars"], big.loc[weeks.index])
    # The days are listed: neither the short week's nor prev()'s day-before warning is said.
    assert _warning(result) is None
    assert result.metadata is not None
    assert not any("prev(day())" in w for w in result.metadata.warnings)


def test_the_days_form_counts_the_data_s_first_day(engine_settings, minutes) -> None:
    """count(date() != prev(date())), the form the hint gave, read 3 days for the data's
    first week (2024-01-02 to 2024-01-05, 4 days: the first bar has no bar before, so the
    comparison is unknown there) and 61 of the data's 62 dates. The form the hint gives now
    counts every week's trading dates as pandas does, the data's first week and the whole
    ones after it, and every date of the data in one count."""
    stamps = minutes["timestamp"]
    day = stamps.dt.normalize() + pd.to_timedelta((stamps.dt.hour >= 18).astype(int), unit="D")
    dates = pd.Series(day.unique())
    per_week = dates.groupby(dates - pd.to_timedelta(dates.dt.weekday, unit="D")).size()
    query = {**INTRADAY, "period": "2024-01-01:2024-01-26"}  # with the holiday's short week
    said = _warning(_run({**query, "select": "count() as bars"}, engine_settings))
    assert said is not None
    form = said.split('"')[-2]  # '… days" in the select lists each week's trading days.'
    assert form.endswith(" as days")
    result = _run({**query, "select": form}, engine_settings)
    assert result.table is not None
    np.testing.assert_array_equal(result.table["days"], per_week.iloc[:4])
    assert list(per_week.iloc[:4]) == [4, 5, 4, 5]  # the data's first week, then whole ones
    everything = _run({"session": "ETH", "from": "5m", "select": form}, engine_settings)
    assert everything.summary.value == len(dates) == 62


def test_daily_bars_kept_by_a_where_are_told_their_count_is_not_the_days(engine_settings) -> None:
    query = {"session": "ETH", "from": "daily", "period": PERIOD, "group_by": "week()"}
    said = _warning(
        _run({**query, "where": "close > open", "select": "count() as ups"}, engine_settings)
    )
    assert said is not None
    assert said.endswith(
        "count() counts the days the where keeps, not the week's trading days: "
        '"count() as days" in the select lists each week\'s trading days, in a query without '
        "the where (count(close > open) counts the rows it keeps)."
    )
    # Without the where and with count() as days (the hint followed) nothing is said.
    followed = {**query, "select": ["count(close > open) as ups", "count() as days"]}
    assert _warning(_run(followed, engine_settings)) is None


def test_a_weekday_only_the_asked_session_missed_is_said_as_such(tmp_path_factory, minutes) -> None:
    """NQ's RTH week of Good Friday 2024 read "no trading on Good Friday, 2024-03-29", though
    the futures traded until 09:15 and only RTH had no session (p46t minor). Here the bars
    of Friday 2024-03-22 stop at 09:15: RTH's week holds 4 days and says which session it
    missed; ETH's holds 5 and says nothing (pandas over the cut minutes)."""
    from small_bars import write_minutes

    from barb.settings import EngineSettings

    stamps = minutes["timestamp"]
    friday = stamps.dt.normalize() == pd.Timestamp("2024-03-22")
    cut = minutes[~(friday & (stamps.dt.hour * 60 + stamps.dt.minute >= 9 * 60 + 15))]
    settings = EngineSettings(data_dir=tmp_path_factory.mktemp("short_friday"))
    write_minutes(cut.reset_index(drop=True), "NQ", settings, "Friday 2024-03-22 until 09:15")
    last = cut.loc[cut["timestamp"].dt.normalize() == pd.Timestamp("2024-03-22"), "timestamp"].max()
    until = f"{last + pd.Timedelta(minutes=1):%H:%M}"
    rth = cut[(cut["timestamp"].dt.hour * 60 + cut["timestamp"].dt.minute).between(570, 1019)]
    week = rth[rth["timestamp"].dt.normalize().between("2024-03-18", "2024-03-22")]
    assert week["timestamp"].dt.normalize().nunique() == 4 and until == "09:15"  # the case
    query = {
        "from": "daily",
        "period": "2024-03-11:2024-03-22",
        "group_by": "week()",
        "select": ["sum(volume) as vol"],
    }
    said = _warning(_run({**query, "session": "RTH"}, settings))
    assert said is not None
    assert (
        f"2024-03-18 (4 days: no RTH session on 2024-03-22, the futures trading until {until})"
        in said
    )
    assert _warning(_run({**query, "session": "ETH"}, settings)) is None
