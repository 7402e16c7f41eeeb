"""Where a window meets the day before. Intraday bars of RTH: prev() and rolling windows read
each morning's first bars with yesterday's last ones ("3x the volume of the previous 20 bars"
flagged the open). Daily bars of a part of the day: prev(close) is that window's own close a
day earlier, not the previous RTH close. Both said, with the form that answers the question;
checked with pandas over the sample's minutes."""

from __future__ import annotations

import pandas as pd
import pytest
import talib
from asking import ask, warnings_with
from rth_bars import rth_daily, rth_minutes


def _rth_five_minute(minutes: pd.DataFrame) -> pd.DataFrame:
    """RTH 5-minute volume, each bar with its day and its place in the day (0: 09:30)."""
    rth = rth_minutes(minutes)
    bars = rth.groupby(rth["timestamp"].dt.floor("5min")).agg(
        volume=("volume", "sum"), day=("day", "first")
    )
    bars["place"] = bars.groupby("day").cumcount()
    return bars


SPIKE = {
    "session": "RTH",
    "from": "5m",
    "period": "2024-02",
    "map": {"avg20": "rolling_mean(prev(volume), 20)", "spike": "volume > 1.2 * avg20"},
    "where": "spike",
    "select": "count()",
}


def test_a_rolling_window_reaching_the_day_before_is_said(engine_settings, minutes) -> None:
    """A spike against the previous 20 bars: each day's first 20 bars are read with the day
    before's last ones. Counted in pandas; the where the warning gives keeps the window within
    the day and is then silent."""
    bars = _rth_five_minute(minutes)
    avg20 = bars["volume"].shift().rolling(20).mean()  # the RTH bars chained across days
    february = bars.index.to_period("M") == "2024-02"
    spike = (bars["volume"] > 1.2 * avg20).to_numpy() & february
    earlier = spike & (bars["place"] < 20).to_numpy()
    assert earlier.sum() > 0

    result = ask(SPIKE, engine_settings)
    assert result.summary.value == spike.sum()
    assert warnings_with(result, "earlier trading date") == [
        f"rolling_mean(prev(volume), 20) reads an earlier trading date for {earlier.sum():,} of "
        f"the {spike.sum():,} rows kept (the day's first bars, read with the previous day's "
        'last ones); "where": "… and prev(date(), 20) == date()" keeps it within the day. To '
        "compare a bar with the same time on earlier days, rolling_mean(x, n, 'time') reads "
        "the last n days at its time (today's included; the n days before today: "
        "(rolling_sum(x, n + 1, 'time') - x) / n), or use daily bars of that window "
        '("session": "09:30-09:35", "from": "daily").'
    ]

    within = ask({**SPIKE, "where": "spike and prev(date(), 20) == date()"}, engine_settings)
    assert within.summary.value == (spike & ~earlier).sum()
    assert warnings_with(within, "earlier trading date") == []


def _rth_five_minute_bars(minutes: pd.DataFrame) -> pd.DataFrame:
    """RTH 5-minute open and close, each bar with its day and its place in the day."""
    rth = rth_minutes(minutes)
    bars = rth.groupby(rth["timestamp"].dt.floor("5min")).agg(
        open=("open", "first"), close=("close", "last"), day=("day", "first")
    )
    bars["place"] = bars.groupby("day").cumcount()
    return bars


# p30a V1b: the guard the warning gives, written in the map beside the prev() it guards.
RUN = {
    "session": "RTH",
    "from": "5m",
    "period": "2024-02",
    "map": {"up": "close > open", "same_day": "prev(date()) == date()"},
    "select": ["count()", "mean(run) as share"],
}


@pytest.mark.parametrize(
    ("run", "lag", "back"),
    [
        ("prev(up) and up and prev(date()) == date()", 1, None),
        ("date() == prev(date(), 1) and (prev(up) and up)", 1, None),
        ("prev(up) and up and same_day", 1, None),  # the guard through a map name
        ("if(same_day, prev(up) and up, false)", 1, None),
        ("prev(up, 2) and up and prev(date(), 2) == date()", 2, None),
        ("prev(up) and up", 1, 1),  # no guard
        ("prev(up) and up or same_day", 1, 1),  # or keeps the first bar's prev(up)
        ("prev(up, 2) and up and same_day", 2, 2),  # the second bar reads the day before
        ("if(same_day, up, prev(up))", 1, 1),  # the guard is not on the prev()
    ],
)
@pytest.mark.parametrize("where", ["map", "select"])
def test_a_guard_beside_the_prev_it_guards_is_silent(
    engine_settings, minutes, run, lag, back, where
) -> None:
    """p30a V1b: prev(date()) == date() anded with the prev() it guards keeps each day's
    first bars from reading the day before, in a map column or inside an aggregate: the
    warning that gives that guard is not said again. It is said where the guard does not
    cover the prev(), counting the rows pandas finds reading the day before."""
    bars = _rth_five_minute_bars(minutes)
    february = bars.index.to_period("M") == "2024-02"
    up = bars["close"] > bars["open"]
    within = up.shift(lag, fill_value=False) & up & (bars["day"] == bars["day"].shift(lag))
    if where == "map":
        query = {**RUN, "map": {**RUN["map"], "run": run}}
    else:
        query = {**RUN, "select": ["count()", f"mean({run}) as share"]}
    result = ask(query, engine_settings)
    said = warnings_with(result, "earlier trading date")
    if back is None:
        assert result.summary.values["share"] == pytest.approx(within[february].mean())
        assert said == []
    else:
        crossing = int((february & (bars["place"] < back).to_numpy()).sum())
        assert len(said) == 1 and f"for {crossing:,} of the {february.sum():,} rows" in said[0]


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"where": "spike and time() >= '11:10'"}, "rows kept after the 20th bar of the day"),
        ({"session": "RTH_OPEN"}, "a part of the day: said as chained days instead"),
        ({"from": "daily"}, "daily bars: yesterday is the bar before"),
    ],
)
def test_no_warning_when_the_window_stays_in_the_day(engine_settings, changes, why) -> None:
    assert (
        warnings_with(ask({**SPIKE, **changes}, engine_settings), "earlier trading date") == []
    ), why


def test_an_indicator_cross_over_the_night_is_not_said(engine_settings, minutes) -> None:
    """RSI(14) on RTH 15m bars runs on across the night as its chart draws it, so an entry
    below 30 on a day's first bar is a cross on that chart (NQ's one entry of 2025-12 was at
    09:30). TA-Lib over the chained RTH bars: the where the warning gave would drop those."""
    rth = rth_minutes(minutes)
    grouped = rth.groupby(rth["timestamp"].dt.floor("15min"))
    bars = pd.DataFrame({"close": grouped["close"].last(), "day": grouped["day"].first()})
    rsi = pd.Series(talib.RSI(bars["close"].to_numpy(), 14), index=bars.index)
    entry = (rsi < 30) & (rsi.shift() >= 30)
    first_bar = bars["day"] != bars["day"].shift()
    assert (entry & first_bar).sum() > 0  # what the warning's where would have dropped

    query = {
        "session": "RTH",
        "from": "15m",
        "map": {"rsi14": "rsi(close, 14)", "entry": "rsi14 < 30 and prev(rsi14) >= 30"},
        "where": "entry",
        "select": "count()",
    }
    result = ask(query, engine_settings)
    assert result.summary.value == entry.sum()
    assert warnings_with(result, "earlier trading date") == []


@pytest.mark.parametrize(
    ("session", "frame", "where", "said"),
    [
        ("RTH", "15m", "close > prev(close)", "prev(close)"),  # the close before the gap
        ("RTH", "15m", "true_range() > prev(true_range())", "prev(true_range())"),
        ("RTH", "15m", "close > prev(vwap())", "prev(vwap())"),  # restarts each day
        ("RTH", "15m", "rsi(close, 14) > prev(rsi(close, 14))", None),
        ("RTH", "15m", "low_rsi and not prev(low_rsi)", None),
        ("ETH", "1h", "macd_hist() > 0 and prev(macd_hist()) <= 0", None),
        ("ETH", "1h", "close > ma and prev(close) <= prev(ma)", "prev(close)"),
    ],
)
def test_which_prev_reads_across_the_night(engine_settings, session, frame, where, said) -> None:
    """prev() of a line chained across days (an indicator, a rolling window) steps along its
    chart; prev() of the bar's own values (close, true range, the day's vwap) reads across
    the night's gap."""
    query = {
        "session": session,
        "from": frame,
        "map": {"low_rsi": "rsi(close, 14) < 45", "ma": "ema(close, 5)"},
        "where": where,
        "select": "count()",
    }
    found = [w.split(" reads ")[0] for w in warnings_with(ask(query, engine_settings), "earlier")]
    assert found == ([said] if said else [])


def _window_daily(minutes: pd.DataFrame, start: int, end: int) -> pd.DataFrame:
    """Daily bars of [start, end) minutes of the day."""
    stamps = minutes["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    part = minutes[(minute >= start) & (minute < end)]
    return part.groupby(part["timestamp"].dt.normalize()).agg(
        open=("open", "first"), high=("high", "max"), low=("low", "min"), close=("close", "last")
    )


GAPS = {
    "session": "09:30-10:00",
    "from": "daily",
    "period": "2024-02",
    "map": {"gap_pct": "(open / prev(close) - 1) * 100"},
    "where": "abs(gap_pct) > 0.1",
    "select": ["count() as days", "mean(gap_filled()) as filled"],
}
GAP_WARNING = "the previous close is this session's own"


def _filled(bars: pd.DataFrame, before: pd.Series) -> pd.Series:
    return ((bars["open"] > before) & (bars["low"] <= before)) | (
        (bars["open"] < before) & (bars["high"] >= before)
    )


def test_a_gap_on_a_windows_daily_bars_is_said(engine_settings, minutes) -> None:
    """prev(close) and gap_filled() on 09:30-10:00 bars read yesterday's 10:00 close; the
    form the warning gives measures from the previous RTH close, as pandas does."""
    bars = _window_daily(minutes, 570, 600)
    february = bars.index.to_period("M") == "2024-02"

    def answer(before: pd.Series) -> tuple[int, float]:
        gap = (bars["open"] / before - 1) * 100
        kept = (gap.abs() > 0.1) & february
        return int(kept.sum()), float(_filled(bars, before)[kept].mean())

    own = answer(bars["close"].shift())
    from_rth = answer(rth_daily(minutes)["close"].shift().reindex(bars.index))
    assert own != from_rth  # the data tells them apart

    result = ask(GAPS, engine_settings)
    assert (result.summary.values["days"], result.summary.values["filled"]) == pytest.approx(own)
    assert warnings_with(result, GAP_WARNING) == [
        "gap_filled(), prev(close) on daily bars of 09:30-10:00: the previous close is this "
        "session's own, the 10:00 close of the date before, 23.5 hours before its open, not "
        "the previous RTH close, so a gap from it is not the gap at the open. The gap from the "
        "previous RTH close: open - session_close('RTH', 1), in percent "
        "(open / session_close('RTH', 1) - 1) * 100, filled within the session: "
        "if(open > pc, low <= pc, high >= pc) with pc = session_close('RTH', 1) in map."
    ]

    told = {
        **GAPS,
        "map": {
            "pc": "session_close('RTH', 1)",
            "gap_pct": "(open / pc - 1) * 100",
            "filled": "if(open > pc, low <= pc, high >= pc)",
        },
        "select": ["count() as days", "mean(filled) as filled"],
    }
    fixed = ask(told, engine_settings)
    assert (fixed.summary.values["days"], fixed.summary.values["filled"]) == pytest.approx(from_rth)
    assert warnings_with(fixed, GAP_WARNING) == []


@pytest.mark.parametrize(
    ("session", "where", "said"),
    [
        ("RTH_OPEN", "gap_up()", "gap_up() on daily bars of RTH_OPEN (09:30-10:30)"),
        ("RTH", "gap_up()", None),  # the previous close is RTH's
        ("CASH", "gap_up()", None),  # the day's, but for the post-cash hour
        ("AFTERNOON", "gap_up()", None),  # ends at RTH's close: prev(close) is that close
        ("RTH_OPEN", "close > open", None),
        # The window's own close-to-close change is what it says, not a gap.
        ("15:00-16:00", "close > prev(close)", None),
        ("15:00-16:00", "open > prev(close)", "prev(close) on daily bars of 15:00-16:00"),
    ],
)
def test_which_sessions_say_it(engine_settings, session, where, said) -> None:
    query = {"session": session, "from": "daily", "where": where, "select": "count()"}
    found = [w[: len(said or "")] for w in warnings_with(ask(query, engine_settings), GAP_WARNING)]
    assert found == ([said] if said else [])


FULL_GAPS = {
    "session": "09:30-10:00",
    "from": "daily",
    "period": "2024",
    "select": ["count(full_gap_up()) as up", "count(full_gap_down()) as down"],
}
FULL_GAP_WARNING = "is not a gap outside the previous RTH range"


def test_a_full_gap_on_a_windows_daily_bars_is_said(engine_settings, minutes) -> None:
    """full_gap_up() and full_gap_down() on 09:30-10:00 bars compare the open with the
    window's own high and low a day earlier; the forms the warning gives compare it with the
    previous RTH day's, as pandas does."""
    bars = _window_daily(minutes, 570, 600)
    rth = rth_daily(minutes).reindex(bars.index)

    def answer(high: pd.Series, low: pd.Series) -> tuple[int, int]:
        return int((bars["open"] > high).sum()), int((bars["open"] < low).sum())

    own = answer(bars["high"].shift(), bars["low"].shift())
    from_rth = answer(rth["high"].shift(), rth["low"].shift())
    assert own != from_rth  # the data tells them apart

    result = ask(FULL_GAPS, engine_settings)
    assert (result.summary.values["up"], result.summary.values["down"]) == own
    assert warnings_with(result, FULL_GAP_WARNING) == [
        "full_gap_down(), full_gap_up() on daily bars of 09:30-10:00: the previous high and "
        "low are this session's own on the date before, not the previous RTH day's, so a full "
        "gap from them is not a gap outside the previous RTH range. A full gap above the "
        "previous RTH high: open > session_high('RTH', 1); below the previous RTH low: "
        "open < session_low('RTH', 1)."
    ]
    # Neither is a gap from the previous close: that warning is not given for them.
    assert warnings_with(result, GAP_WARNING) == []

    told = {
        **FULL_GAPS,
        "select": [
            "count(open > session_high('RTH', 1)) as up",
            "count(open < session_low('RTH', 1)) as down",
        ],
    }
    fixed = ask(told, engine_settings)
    assert (fixed.summary.values["up"], fixed.summary.values["down"]) == from_rth
    assert warnings_with(fixed, FULL_GAP_WARNING) == []


@pytest.mark.parametrize(
    ("session", "where", "said"),
    [
        # Ends at RTH's close: the close before is RTH's, the high before is not.
        ("AFTERNOON", "full_gap_up()", "full_gap_up() on daily bars of AFTERNOON (12:30-17:00)"),
        ("RTH_OPEN", "open < prev(low)", "prev(low) on daily bars of RTH_OPEN (09:30-10:30)"),
        ("RTH", "full_gap_up()", None),
        ("RTH_OPEN", "high > prev(high)", None),  # not the open: the window's own change
    ],
)
def test_which_sessions_say_a_full_gap(engine_settings, session, where, said) -> None:
    query = {"session": session, "from": "daily", "where": where, "select": "count()"}
    found = [
        w[: len(said or "")] for w in warnings_with(ask(query, engine_settings), FULL_GAP_WARNING)
    ]
    assert found == ([said] if said else [])


# p39b Q29: "after a move from the RTH open, how often does the price come back to the open
# that day". back reads prev(away) on each day's first bar, the day before's flag, where the
# first bar always touches the open: "4,648 of 2,052,975 rows kept" read as nothing, while
# they set came_back on 1,464 of the 2,764 days.
REVISIT = {
    "session": "RTH",
    "from": "1m",
    "map": {
        "o": "session_open('RTH')",
        "away": "cummax(if(abs(close / o - 1) >= 0.001, 1, 0), 'day')",
        "back": "if(prev(away) == 1 and low <= o and high >= o, 1, 0)",
    },
    "group_by": "date()",
    "select": ["max(away) as went_away", "max(back) as came_back"],
}
SHARE = {"where": "went_away == 1", "select": ["count() as days", "mean(came_back) as share"]}


def _revisits(minutes: pd.DataFrame) -> pd.DataFrame:
    """Per RTH day: whether it moved 0.1% from the open, whether a later bar touched the
    open after that (``back`` as the query writes it, with prev() across the night), and
    the same without the day's first bar (``within``)."""
    rth = rth_minutes(minutes)
    day = rth["day"]
    o = rth.groupby("day")["open"].transform("first")
    away = ((rth["close"] / o - 1).abs() >= 0.001).astype(int).groupby(day).cummax()
    touch = (rth["low"] <= o) & (rth["high"] >= o)
    back = (away.shift() == 1) & touch
    first_bar = day != day.shift()
    return pd.DataFrame(
        {
            "went": away.groupby(day).max(),
            "back": back.groupby(day).max(),
            "within": (back & ~first_bar).groupby(day).max(),
        }
    )


@pytest.mark.parametrize("then", [True, False])
def test_day_groups_count_the_days_the_first_bars_change(engine_settings, minutes, then) -> None:
    """The warning counts the days whose came_back the first bars set (pandas: the day's
    max without its first bar), among the days the then stage keeps, or all days grouped;
    no advice about the same time on earlier days, which a prev() does not mean."""
    days = _revisits(minutes)
    rows = len(rth_minutes(minutes))
    if then:
        days = days[days["went"] == 1]
    changed = int((days["back"] != days["within"]).sum())
    assert 0 < changed < len(days)

    result = ask({**REVISIT, "then": SHARE} if then else REVISIT, engine_settings)
    if then:
        assert result.summary.values["days"] == len(days)
        assert result.summary.values["share"] == pytest.approx(days["back"].mean())
    which = "the then stage keeps" if then else "grouped"
    assert warnings_with(result, "earlier trading date") == [
        f"prev(away) reads an earlier trading date for {len(_revisits(minutes)) - 1:,} of the "
        f"{rows:,} rows kept (the day's first bars, read with the previous day's last ones), "
        f"which change came_back on {changed:,} of the {len(days):,} days {which}; "
        '"where": "… and prev(date(), 1) == date()" keeps it within the day.'
    ]

    guard = "prev(away) == 1 and low <= o and high >= o and prev(date()) == date()"
    guarded = {**REVISIT["map"], "back": f"if({guard}, 1, 0)"}
    fixed = ask({**REVISIT, "map": guarded, "then": SHARE}, engine_settings)
    kept = _revisits(minutes)
    kept = kept[kept["went"] == 1]
    assert fixed.summary.values["share"] == pytest.approx(kept["within"].mean())
    assert warnings_with(fixed, "earlier trading date") == []


def test_day_groups_the_first_bars_do_not_change_are_not_said(engine_settings) -> None:
    """max(prev(close) > 0) is true on every day with or without its first bar: the first
    bar's reading of the day before changes no day's answer, and nothing is said."""
    query = {**REVISIT, "select": ["max(prev(close) > 0) as any_bar"]}
    assert warnings_with(ask(query, engine_settings), "earlier trading date") == []
