"""Groups by another zone's clock across the US change of clocks (p39a M3), and the session's
hours on that clock per offset in the midnight warning (p39a's "169 dates" nit), against
pandas' own tz conversion of hand-made bars.

The bars are ET wall clock, every minute from 18:00 the evening before to 17:00, on three
weeks: 2024-10-28..11-01 (US summer time: Moscow ET + 7 h), 2024-11-04..11-08 and
2024-11-25..11-29 (ET + 8 h), the last with Thanksgiving (13:00 close) and the day after
(13:15). RTH (09:30-17:00 ET) is 16:30-00:00 MSK on the first 5 dates, 17:30-01:00 on the 8
full winter ones, and ends at 21:00 and 21:15 MSK on the 2 short ones.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from asking import ask, warnings_with
from small_bars import bars_from_closes, write_minutes

from barb import render_summary
from barb.settings import EngineSettings
from barb.summary_text import value_text

DAYS = [
    *pd.bdate_range("2024-10-28", "2024-11-01"),
    *pd.bdate_range("2024-11-04", "2024-11-08"),
    *pd.bdate_range("2024-11-25", "2024-11-29"),
]
CLOSES = {pd.Timestamp("2024-11-28"): "13:00", pd.Timestamp("2024-11-29"): "13:15"}
RTH = {"session": "RTH", "from": "1m"}
MIXED = "groups mix ET hours"


@pytest.fixture(scope="module")
def bars() -> pd.DataFrame:
    rng = np.random.default_rng(39)
    stamps = [
        pd.date_range(
            day - pd.Timedelta(hours=6),
            day + pd.Timedelta(CLOSES.get(day, "17:00") + ":00"),
            freq="1min",
            inclusive="left",
        )
        for day in DAYS
    ]
    ts = stamps[0].append(stamps[1:])
    close = 20000 + np.cumsum(rng.choice([-0.25, 0.0, 0.25], size=len(ts)))
    return bars_from_closes(ts, close, rng.integers(1, 500, len(ts)))


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory, bars: pd.DataFrame) -> EngineSettings:
    data_dir: Path = tmp_path_factory.mktemp("zone_clock_groups")
    settings = EngineSettings(data_dir=data_dir)
    write_minutes(bars, "NQ", settings, "hand-made bars across the US fall change")
    return settings


@pytest.fixture(scope="module")
def rth(bars: pd.DataFrame) -> pd.DataFrame:
    """The RTH bars with their trading date, ET hour, and hour and minute of the day on
    Moscow's and UTC's clocks, by pandas and the tz database."""
    stamps = bars["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    inside = bars[(minute >= 570) & (minute < 1020)]
    local = pd.DatetimeIndex(inside["timestamp"]).tz_localize("America/New_York")
    frame = pd.DataFrame(
        {
            "date": (inside["timestamp"] + pd.Timedelta(hours=6)).dt.normalize().to_numpy(),
            "et_hour": inside["timestamp"].dt.hour.to_numpy(),
            "et_at": minute[inside.index].to_numpy(),
            "high": inside["high"].to_numpy(),
        },
        index=inside.index,
    )
    for name, zone in (("msk", "Europe/Moscow"), ("utc", "UTC")):
        there = local.tz_convert(zone)
        frame[f"{name}_hour"] = there.hour
        frame[f"{name}_at"] = there.hour * 60 + there.minute
        # Minutes the zone is ahead of New York at each bar.
        offset = there.tz_localize(None) - local.tz_localize(None)
        frame[f"{name}_offset"] = (offset // pd.Timedelta(minutes=1)).to_numpy()
    return frame


def _groups(rth: pd.DataFrame, zone: str) -> dict[int, dict[int, tuple[int, int]]]:
    """Per hour on ``zone``'s clock: per offset, (the ET hour, its dates)."""
    found: dict[int, dict[int, tuple[int, int]]] = {}
    keys = [f"{zone}_hour", f"{zone}_offset"]
    for (hour, offset), group in rth.groupby(keys):
        ((et_hour,),) = {tuple(group["et_hour"].unique())}
        found.setdefault(int(hour), {})[int(offset)] = (int(et_hour), group["date"].nunique())
    return found


def test_moscow_hours_say_which_new_york_hours_they_hold(settings, rth) -> None:
    """p39a Q11: "the busiest Moscow hour of RTH". Each group's New York hour and dates per
    offset are pandas', and the groups held by one offset alone are named."""
    groups = _groups(rth, "msk")
    offsets = rth.groupby("date")["msk_offset"].first().value_counts()
    assert dict(offsets) == {480: 10, 420: 5}
    assert groups[17] == {420: (10, 5), 480: (9, 10)}
    assert groups[0] == {480: (16, 8)} and groups[16] == {420: (9, 5)}
    result = ask({"group_by": "hour('MSK')", "select": "mean(volume) as v"}, settings, **RTH)
    assert list(result.table["hour_msk"]) == sorted(groups)  # 0 listed first
    assert warnings_with(result, MIXED) == [
        "MSK is ET + 8 h on 10 of the 15 dates and ET + 7 h on the other 5, so hour('MSK')'s "
        "groups mix ET hours: 17 is hour 9 ET on 10 dates and hour 10 ET on 5; 0 holds hour "
        "16 ET on 8 dates only and 16 hour 9 ET on 5 only (0 listed first, though the session "
        "reaches it after midnight there); hour() in place of hour('MSK') reads the "
        "exchange's clock, if the question is of its session."
    ]
    # What it offers groups by New York's hours, each one of them all 15 dates.
    own = ask({"group_by": "hour()", "select": "count() as bars"}, settings, **RTH)
    assert list(own.table["hour"]) == sorted(rth["et_hour"].unique())
    assert warnings_with(own, MIXED) == []


def test_a_then_stage_grouping_by_the_utc_hour_of_the_day_s_high(settings, rth) -> None:
    """p39a Q14's shape: each day's high by the UTC hour of its hourly bar, counted by that
    hour. The groups' New York hours and dates per offset are pandas': the minute bar of the
    day's high (the earliest of ties) lies in the hourly bar opening 09:30 + 60 k ET."""
    highs = rth.loc[rth.groupby("date")["high"].idxmax()].copy()
    highs["bar_et"] = 570 + (highs["et_at"] - 570) // 60 * 60
    highs["key"] = (highs["bar_et"] + highs["utc_offset"]) // 60 % 24
    per = highs.groupby(["key", "utc_offset"])["date"].nunique()
    groups: dict[int, dict[int, int]] = {}
    for (key, offset), days in per.items():
        groups.setdefault(int(key), {})[int(offset)] = int(days)
    result = ask(
        {
            "session": "RTH",
            "from": "1h",
            "group_by": "date()",
            "select": "arg_max(hour('UTC'), high) as high_utc",
            "then": {"group_by": "high_utc", "select": "count() as days"},
        },
        settings,
    )
    # Every UTC hour an hourly bar opens in, 0 where no day's high fell (p48d M1).
    every = (570 + (rth["et_at"] - 570) // 60 * 60 + rth["utc_offset"]) // 60 % 24
    counted = {key: sum(days.values()) for key, days in groups.items()}
    assert set(every) > set(counted)  # the case: hours with no day's high
    assert dict(zip(result.table["high_utc"], result.table["days"], strict=True)) == {
        int(key): counted.get(int(key), 0) for key in every.unique()
    }
    order = [300, 240]  # ET + 5 h on 10 dates, + 4 h on 5
    mixed = next(key for key in sorted(groups) if len(groups[key]) == 2)
    two = [f"hour {(mixed - shift // 60) % 24} ET on {groups[mixed][shift]}" for shift in order]
    alone = [key for key in sorted(groups) if len(groups[key]) == 1]
    named = []
    for key in alone[:2]:
        ((shift, days),) = groups[key].items()
        verb, dates = ("", "") if named else ("holds ", " dates")
        named.append(f"{key} {verb}hour {(key - shift // 60) % 24} ET on {days}{dates} only")
    if len(alone) > 2:
        named.append(f"{len(alone) - 2} more")
    listed = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
    assert warnings_with(result, MIXED) == [
        "UTC is ET + 5 h on 10 of the 15 dates and ET + 4 h on the other 5, so high_utc's "
        f"groups mix ET hours: {mixed} is {two[0]} dates and {two[1]}; {listed}; hour() in "
        "place of hour('UTC') reads the exchange's clock, if the question is of its session."
    ]


@pytest.mark.parametrize(
    ("query", "said"),
    [
        # Chicago keeps New York's changes: one offset, and RTH within its day.
        ({"group_by": "hour('CT')", "select": "count() as n"}, []),
        # 1 of 11 dates on the summer offset: under a tenth, each group is one hour; the
        # Moscow groups still list the session's last hour first.
        (
            {"period": "2024-11-01:2024-11-29", "group_by": "hour('London')", "select": "count()"},
            [],
        ),
        (
            {"period": "2024-11-01:2024-11-29", "group_by": "hour('MSK')", "select": "count()"},
            [
                "hour('MSK') groups list 0 first, though the session reaches it after that "
                "clock's midnight; hour() in place of hour('MSK') lists the exchange's hours in "
                "the session's order."
            ],
        ),
        # Sorted by a value: the order is the sort's.
        ({"group_by": "hour('MSK')", "select": "count() as n", "sort": "n desc"}, None),
    ],
)
def test_one_offset_or_a_sort_leaves_only_what_still_holds(settings, query, said) -> None:
    result = ask(query, settings, **RTH)
    got = [w for w in result.metadata.warnings if "hour(" in w and "in place of" in w]
    if said is None:  # the offsets said, no order
        assert len(got) == 1 and MIXED in got[0] and "listed first" not in got[0]
        return
    assert got == said


def test_the_midnight_warning_counts_the_dates_of_each_offset(settings, rth) -> None:
    """p39a's nit: "17:30-01:00 MSK on 169 dates" were the US winter's 179 less its 10 short
    sessions, and "the others" held those. Now each offset's dates and its usual hours, and
    the dates that cross midnight apart; the form keeps an hour an hour (p39a Q37: it gave
    minutes), and over the day's high it gives pandas' hour counted past midnight."""
    days = rth.groupby("date").agg(
        offset=("msk_offset", "first"), first=("msk_at", "first"), last=("msk_at", "last")
    )
    crossing = days["last"] < days["first"]
    assert days["offset"].value_counts().to_dict() == {480: 10, 420: 5}
    assert crossing.sum() == 8 and crossing[days["offset"] == 480].sum() == 8
    query = {
        "group_by": "date()",
        "select": "arg_max(hour('MSK'), high) as h",
        "then": {"select": "mean(h) as avg_h"},
    }
    result = ask(query, settings, **RTH)
    highs = rth.loc[rth.groupby("date")["high"].idxmax(), "msk_hour"]
    right, wrong = highs.where(highs >= 12, highs + 24).mean(), highs.mean()
    assert warnings_with(result, "falls back to 0 at midnight") == [
        "hour('MSK') falls back to 0 at midnight inside RTH: on that clock RTH is 17:30-01:00 "
        "MSK on 10 of the period's 15 trading dates (2024-11-04 first) and 16:30-00:00 on the "
        "other 5, short sessions aside, so mean(h) reads the session's 00:00-01:00 MSK bars, "
        "on 8 dates, as the day's earliest. To count across midnight: hour('MSK') + "
        "if(hour('MSK') < 12, 24, 0) in place of hour('MSK'); counted so, the answer is "
        f"{value_text(right)} ({_clock(right * 60)}), not {value_text(wrong)} "
        f"({_clock(wrong * 60)})."
    ]
    form = "hour('MSK') + if(hour('MSK') < 12, 24, 0)"
    query["select"] = f"arg_max({form}, high) as h"
    counted = ask(query, settings, **RTH)
    assert counted.summary.value == pytest.approx(right)
    assert warnings_with(counted, "falls back to 0 at midnight") == []


def _clock(minutes: float) -> str:
    """Minutes as a time of day, past midnight too: 1,442 is 00:02."""
    at = round(minutes) % 1440
    return f"{at // 60:02d}:{at % 60:02d}"


def _moscow_window(bars: pd.DataFrame) -> pd.DataFrame:
    """The bars opening 23:00-01:00 on Moscow's clock, with their trading date and minute of
    Moscow's day, by pandas and the tz database."""
    local = pd.DatetimeIndex(bars["timestamp"]).tz_localize("America/New_York")
    there = local.tz_convert("Europe/Moscow")
    inside = np.isin(there.hour, [23, 0])
    return pd.DataFrame(
        {
            "date": (bars["timestamp"] + pd.Timedelta(hours=6)).dt.normalize().to_numpy(),
            "at": there.hour * 60 + there.minute,
            "high": bars["high"].to_numpy(),
        },
        index=bars.index,
    )[inside]


def test_a_moscow_window_across_midnight_is_said_where_its_clock_is_ordered(settings, bars) -> None:
    """'23:00-01:00 MSK' is 15:00-17:00 ET on the US-winter dates, crossing Moscow's
    midnight, and 16:00-18:00 ET in the summer, whose 17:00 break leaves 23:00-00:00 (the
    Thanksgiving closes leave none). Its bars keep one trading date each night, in order:
    date(), first() and last() are pandas' and nothing is said. A mean of the Moscow minute
    of each day's high read the 00:xx highs as the day's earliest, with no word: said now,
    with the dates pandas finds crossing midnight."""
    window = _moscow_window(bars)
    days = window.groupby("date")["at"].agg(["first", "last", "size"])
    crossing = days["last"] < days["first"]
    assert crossing.sum() == 8 and (~crossing).sum() == 5
    query = {
        "session": "23:00-01:00 MSK",
        "from": "1m",
        "map": {"tm": "hour('MSK') * 60 + minute('MSK')"},
        "group_by": "date()",
    }
    edges = ask({**query, "select": ["first(tm) as a", "last(tm) as b", "count() as n"]}, settings)
    assert pd.to_datetime(edges.table["date"]).tolist() == days.index.tolist()
    assert edges.table[["a", "b", "n"]].to_numpy().tolist() == days.to_numpy().tolist()
    assert warnings_with(edges, "falls back to 0 at midnight") == []
    highs = window.loc[window.groupby("date")["high"].idxmax(), "at"]
    asked = {**query, "select": "arg_max(tm, high) as high_at", "then": {"select": "mean(high_at)"}}
    result = ask(asked, settings)
    right, wrong = highs.where(highs >= 720, highs + 1440).mean(), highs.mean()
    assert result.summary.value == pytest.approx(wrong)
    # What the model reads: the mean as a Moscow time, and the mean counted across midnight.
    assert render_summary(result).splitlines()[0] == (
        f"Result: mean_high_at = {value_text(wrong)} ({_clock(wrong)} MSK)"
    )
    assert warnings_with(result, "falls back to 0 at midnight") == [
        "hour('MSK') falls back to 0 at midnight inside the window 23:00-01:00 Europe/Moscow: "
        f"on that clock it is 23:00-01:00 MSK on {crossing.sum()} of the period's {len(days)} "
        f"trading dates ({crossing[crossing].index[0].date()} first) and 23:00-00:00 on the "
        f"other {(~crossing).sum()}, so mean(high_at) reads the window's 00:00-01:00 MSK bars "
        "as the day's earliest. To count across midnight: if(tm < 720, tm + 1440, tm) in "
        f"place of tm; counted so, the answer is {value_text(right)} ({_clock(right)}), not "
        f"{value_text(wrong)} ({_clock(wrong)})."
    ]
    asked["map"] = {"tm": "if(hour('MSK') < 12, 1440, 0) + hour('MSK') * 60 + minute('MSK')"}
    counted = ask(asked, settings)
    assert counted.summary.value == pytest.approx(right)
    assert warnings_with(counted, "falls back to 0 at midnight") == []


@pytest.mark.parametrize(("window", "first"), [("23:00-01:00 MSK", 0), ("02:00-04:00 MSK", None)])
def test_a_moscow_window_s_groups_listed_first_after_midnight(settings, window, first) -> None:
    """A window on Moscow's clock opens at its own start there: 23:00-01:00 lists 0, after
    midnight, first; 02:00-04:00 (18:00 or 19:00 ET, the trading day's first hours) lists 2
    first as the window runs, which had been said to come after midnight (its 02:00 read as
    02:00 ET, 10:00 MSK)."""
    query = {"session": window, "from": "1h", "group_by": "hour('MSK')", "select": "count()"}
    got = [w for w in ask(query, settings).metadata.warnings if MIXED in w]
    assert len(got) == 1
    assert ("listed first" in got[0]) == (first is not None)
    if first is not None:
        assert f"({first} listed first, though the session reaches it after midnight" in got[0]


def test_three_offsets_over_all_the_data_are_said_though_the_rarest_is_few(
    sample_settings,
) -> None:
    """ "Во сколько обычно хай дня по Москве", over all the sample: Moscow is ET + 8 h, + 7 h
    (since 2014, US summers) and + 9 h (2011-2014's winters, 6% of dates). The rarest alone
    is under the 10% that is said, so nothing was: the model read 17:30 as the usual hour,
    949 days, with no word that 16:30's 646 are the same 09:30 ET bar on summer dates. The
    dates per offset are pandas' tz conversion of each RTH date's 09:30 ET."""
    result = ask(
        {
            "session": "RTH",
            "from": "1h",
            "group_by": "date()",
            "select": "arg_max(time('Moscow'), high) as high_time",
            "then": {"group_by": "high_time", "select": "count() as days", "sort": "days desc"},
        },
        sample_settings,
    )
    bars = pd.read_parquet(
        Path(sample_settings.data_dir) / "NQ.parquet", columns=["timestamp", "minute"]
    )
    rth = bars[(bars["minute"] >= 570) & (bars["minute"] < 1020)]
    opens = pd.Series(rth["timestamp"].dt.normalize().unique()) + pd.Timedelta(minutes=570)
    moscow = opens.dt.tz_localize("America/New_York").dt.tz_convert("Europe/Moscow")
    hours = (moscow.dt.tz_localize(None) - opens).dt.total_seconds() // 3600
    counts = hours.astype(int).value_counts()
    assert len(counts) == 3 and counts.iloc[-1] < 0.1 * len(opens)  # the case
    [said] = warnings_with(result, MIXED)
    spans = [f"ET + {hour} h on {count:,}" for hour, count in counts.items()]
    assert said.startswith(
        f"Moscow is {spans[0]} of the {len(opens):,} dates, {spans[1]} and {spans[2]}, "
    )
