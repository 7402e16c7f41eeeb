"""Two-bar patterns and next() against a holiday's or an early close's short session.

inside_day() and outside_day() compare a bar's range with the bar before: a short session's
part-day range sits inside the bar before more often, and the bar after it engulfs it more
often. NQ's 22 outside days of 2024 held two such (after Presidents' Day's 13:00 session;
July 4 against July 3's 13:15 close) with nothing said. next() of an inside day read a
holiday stub as "the next day" the same way. Hand-made minute bars around July 4 (July 3
closes at 13:15, July 4 at 13:00), each day's RTH high and low set so that the patterns fall
on and beside the short days; expected values from pandas over the same minute bars, short
days read from the bars (the last RTH minute before 16:59), not from a calendar.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask, warnings_with
from small_bars import bars_from_closes, write_minutes

from barb.settings import EngineSettings

RTH_START, RTH_END = 570, 1020  # 09:30-17:00
# Each weekday's RTH low and high; the nights before trade inside them.
RANGES = {
    "2024-06-24": (90, 110),
    "2024-06-25": (95, 105),
    "2024-06-26": (90, 114),
    "2024-06-27": (98, 110),
    "2024-06-28": (102, 118),
    "2024-07-01": (108, 116),
    "2024-07-02": (105, 125),
    "2024-07-03": (113, 121),
    "2024-07-04": (111, 123),
    "2024-07-05": (115, 121),
    "2024-07-08": (112, 128),
    "2024-07-09": (119, 131),
    "2024-07-10": (123, 129),
    "2024-07-11": (115, 133),
    "2024-07-12": (125, 135),
}
CLOSES = {"2024-07-03": "13:15", "2024-07-04": "13:00"}
# The words of each warning.
MOTHER = "against a short session"
AHEAD = "a short session (a holiday or early close: a part day) for"
BOTH_SIDES = (
    "not holiday() and not early_close() and not prev(holiday()) and not prev(early_close())"
)
ABOVE = {"above": "next(close) > prev(high)"}


def _minutes(seed: int = 9) -> pd.DataFrame:
    """Every minute from 18:00 the evening before to 17:00 (or the early close): the night
    within the middle of the day's range, RTH a wave from its middle that touches the low and
    the high once each."""
    rng = np.random.default_rng(seed)
    days = []
    for day, (low, high) in RANGES.items():
        start = pd.Timestamp(day) - pd.Timedelta(hours=6)
        end = pd.Timestamp(day) + pd.Timedelta(CLOSES.get(day, "17:00") + ":00")
        ts = pd.date_range(start, end, freq="1min", inclusive="left")
        minute = ts.hour * 60 + ts.minute
        rth = (minute >= RTH_START) & (minute < RTH_END)
        mid, half = (low + high) / 2, (high - low) / 2
        close = mid + 0.25 * half * rng.uniform(-1, 1, len(ts))
        wave = np.sin(np.linspace(0, 2 * np.pi, int(rth.sum()), endpoint=False) + 0.3)
        close[rth] = mid + 0.9 * half * wave
        close = np.round(close * 4) / 4
        frame = bars_from_closes(ts, close, rng.integers(1, 300, len(ts)), up=0.0, down=0.0)
        first = np.flatnonzero(rth)[0]
        frame.loc[first + 20, "high"], frame.loc[first + 60, "low"] = high, low
        days.append(frame)
    return pd.concat(days, ignore_index=True)


@pytest.fixture(scope="module")
def minutes() -> pd.DataFrame:
    return _minutes()


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory, minutes: pd.DataFrame) -> EngineSettings:
    data_dir: Path = tmp_path_factory.mktemp("short_session_patterns")
    settings = EngineSettings(data_dir=data_dir)
    write_minutes(minutes, "NQ", settings, "hand-made bars around July 4")
    return settings


@pytest.fixture(scope="module")
def days(minutes: pd.DataFrame) -> pd.DataFrame:
    """Each date's RTH high, low and close, the clock it closed at, whether it is short
    (RTH stopped before 17:00), and the two patterns."""
    ts = minutes["timestamp"]
    minute = ts.dt.hour * 60 + ts.dt.minute
    rth = minutes[(minute >= RTH_START) & (minute < RTH_END)].copy()
    rth["date"] = rth["timestamp"].dt.strftime("%Y-%m-%d")
    last = rth.groupby("date")["timestamp"].last() + pd.Timedelta(minutes=1)
    out = rth.groupby("date").agg(high=("high", "max"), low=("low", "min"), close=("close", "last"))
    out["closed"] = last.dt.strftime("%H:%M")
    out["short"] = out["closed"] != "17:00"
    out["inside"] = (out["high"] < out["high"].shift()) & (out["low"] > out["low"].shift())
    out["outside"] = (out["high"] > out["high"].shift()) & (out["low"] < out["low"].shift())
    out["short_before"] = out["short"].shift(fill_value=False)
    out["short_after"] = out["short"].shift(-1, fill_value=False)
    out["above"] = out["close"].shift(-1) > out["high"].shift()
    return out


def _mother(result) -> list[str]:
    return warnings_with(result, MOTHER)


def _named(days: pd.DataFrame, date: str) -> str:
    """A row as the warning names it: its own close, the bar before's, or both."""
    parts = []
    if days.loc[date, "short"]:
        parts.append(f"closed {days.loc[date, 'closed']}")
    if days.loc[date, "short_before"]:
        before = days.index[days.index.get_loc(date) - 1]
        parts.append(f"the bar before, {before}, closed {days.loc[before, 'closed']}")
    return f"{date} ({'; '.join(parts)})"


def test_inside_days_on_or_after_a_short_session_are_named(settings, days) -> None:
    """July 3 (13:15) is inside July 2; July 5 is inside July 4's 13:00 session."""
    result = ask({"where": "inside_day()", "select": ["count()"]}, settings, **RTH_DAILY)
    inside = days[days["inside"]]
    touched = inside[inside["short"] | inside["short_before"]]
    assert result.summary.value == len(inside) == 6
    assert touched.index.tolist() == ["2024-07-03", "2024-07-05"]
    named = ", ".join(_named(days, d) for d in touched.index)
    assert _mother(result) == [
        f"{len(touched)} of the {len(inside)} rows kept read inside_day() against a short "
        f"session (a holiday or early close: a part day's range): {named}. Without them count "
        f'is {len(inside) - len(touched)}. "where": "… and {BOTH_SIDES}" leaves them out.'
    ]


def test_the_where_it_gives_leaves_them_out(settings, days) -> None:
    result = ask(
        {"where": f"inside_day() and {BOTH_SIDES}", "select": ["count()"]}, settings, **RTH_DAILY
    )
    inside = days[days["inside"]]
    regular = inside[~inside["short"] & ~inside["short_before"]]
    assert result.summary.value == len(regular) == 4
    assert _mother(result) == []


def test_an_outside_day_that_is_short_against_a_short_one_names_both(settings, days) -> None:
    """July 4's 13:00 session engulfs July 3's 13:15 one."""
    result = ask({"where": "outside_day()", "select": ["count()"]}, settings, **RTH_DAILY)
    outside = days[days["outside"]]
    touched = outside[outside["short"] | outside["short_before"]]
    assert touched.index.tolist() == ["2024-07-04"]
    assert _mother(result) == [
        f"1 of the {len(outside)} rows kept read outside_day() against a short session (a "
        f"holiday or early close: a part day's range): {_named(days, '2024-07-04')}. Without "
        f'them count is {len(outside) - 1}. "where": "… and {BOTH_SIDES}" leaves them out.'
    ]


def test_leaving_out_the_rows_own_short_sessions_leaves_the_bar_before(settings, days) -> None:
    """The nr7 concept's "not holiday() and not early_close()" keeps July 5, whose mother bar
    is July 4's 13:00 session: only the prev() half of the form is given."""
    result = ask(
        {"where": "inside_day() and not holiday() and not early_close()", "select": ["count()"]},
        settings,
        **RTH_DAILY,
    )
    kept = days[days["inside"] & ~days["short"]]
    assert result.summary.value == len(kept)
    assert _mother(result) == [
        f"1 of the {len(kept)} rows kept read inside_day() against a short session (a holiday "
        f"or early close: a part day's range): {_named(days, '2024-07-05')}. Without them "
        f'count is {len(kept) - 1}. "where": "… and not prev(holiday()) and not '
        'prev(early_close())" leaves them out.'
    ]


def test_no_short_session_kept_says_nothing(settings, days) -> None:
    result = ask(
        {"period": "2024-06", "where": "inside_day()", "map": ABOVE, "select": "mean(above)"},
        settings,
        **RTH_DAILY,
    )
    june = days[days["inside"] & days.index.str.startswith("2024-06")]
    assert result.summary.value == pytest.approx(june["above"].mean())
    assert not (june["short"] | june["short_before"] | june["short_after"]).any()
    assert _mother(result) == [] and warnings_with(result, AHEAD) == []


def test_a_range_statistic_of_inside_days_is_said_once(settings, days) -> None:
    """July 3 is 1 of the 6 inside days: the part-day share warning said it too; the rows
    are named once, with the value without both touched rows."""
    result = ask(
        {"where": "inside_day()", "select": ["count()", "mean(high - low) as r"]},
        settings,
        **RTH_DAILY,
    )
    inside = days[days["inside"]]
    regular = inside[~inside["short"] & ~inside["short_before"]]
    said = warnings_with(result, "short session")
    assert len(said) == 1, said
    r = (regular["high"] - regular["low"]).mean()
    assert f"Without them count is {len(regular)}, r is {r:.10g}." in said[0]


def test_next_reading_a_short_session_is_said(settings, days) -> None:
    """July 3's next day is July 4's 13:00 session."""
    result = ask(
        {"where": "inside_day()", "map": ABOVE, "select": ["count()", "mean(above)"]},
        settings,
        **RTH_DAILY,
    )
    inside = days[days["inside"]]
    assert result.summary.values["mean_above"] == pytest.approx(inside["above"].mean())
    ahead = inside[inside["short_after"]]
    assert ahead.index.tolist() == ["2024-07-03"]
    rest = inside[~inside["short_after"]]
    assert warnings_with(result, AHEAD) == [
        f"next(close) reads {AHEAD} 1 of the {len(inside)} rows kept (2024-07-03 reads "
        f"2024-07-04, closed {days.loc['2024-07-04', 'closed']}). Without them count is "
        f'{len(rest)}, mean_above is {rest["above"].mean():.10g}. "where": "… and not '
        'next(holiday()) and not next(early_close())" leaves them out.'
    ]


def test_next_n_reading_a_short_session_gives_its_n(settings, days) -> None:
    """next(close, 2) of July 1 and July 2 reads July 3's and July 4's closes: the form
    carries the 2."""
    result = ask(
        {"map": {"r2": "next(close, 2) / close - 1"}, "select": ["count()", "mean(r2)"]},
        settings,
        **RTH_DAILY,
    )
    landing = days["short"].shift(-2, fill_value=False)
    assert landing.sum() == 2
    said = warnings_with(result, AHEAD)
    assert len(said) == 1 and said[0].startswith(
        f"next(close, 2) reads {AHEAD} 2 of the {len(days)} rows kept (e.g. 2024-07-01 reads "
        "2024-07-03, closed 13:15)."
    )
    assert said[0].endswith(
        '"where": "… and not next(holiday(), 2) and not next(early_close(), 2)" leaves them out.'
    )


def test_a_query_that_leaves_out_the_holiday_next_days_says_nothing(settings, days) -> None:
    result = ask(
        {
            "where": "inside_day() and not next(holiday()) and not next(early_close())",
            "map": ABOVE,
            "select": ["count()", "mean(above)"],
        },
        settings,
        **RTH_DAILY,
    )
    kept = days[days["inside"] & ~days["short_after"]]
    assert result.summary.values["count"] == len(kept)
    assert result.summary.values["mean_above"] == pytest.approx(kept["above"].mean())
    assert warnings_with(result, AHEAD) == []


def test_the_hand_made_days_are_the_ones_meant(days) -> None:
    assert days.index.tolist() == list(RANGES)
    assert days.loc[days["short"], "closed"].to_dict() == CLOSES
    assert [(r.low, r.high) for r in days.itertuples()] == list(RANGES.values())


def test_next_reading_few_short_sessions_is_not_said(settings, days, monkeypatch) -> None:
    """Below NOTABLE_NEXT_SHARE of the rows kept nothing is said: all history's "days after
    an up day" hold 3% whose next day is a part day, and without them the mean next return
    moves in its fourth digit. Here 2 of the 15 rows (13%) are said at 5% and not at 15%."""
    import barb.caveats.short_sessions as caveats

    query = {"map": {"r": "next(close) / close - 1"}, "select": ["count()", "mean(r)"]}
    ahead = days["short"].shift(-1, fill_value=False)
    share = ahead.sum() / len(days)
    assert 0.05 <= share < 0.15 and len(warnings_with(ask(query, settings, **RTH_DAILY), AHEAD))
    monkeypatch.setattr(caveats, "NOTABLE_NEXT_SHARE", 0.15)
    assert warnings_with(ask(query, settings, **RTH_DAILY), AHEAD) == []
