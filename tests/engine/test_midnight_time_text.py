"""Times of day compared or sorted as text over a session that crosses midnight (p29d Q25).

"Overnight, does the high come before the low?" as ``high_time < low_time`` over each day's
``arg_max(time(), high)`` and ``arg_min(time(), low)``: 'HH:MM' text puts 00:00 before
18:00, so a 18:57 high read as after a 07:33 low and Barb printed 0.4517 where the session's
order gives 0.4903, with nothing said. It now says how many rows the text order reads
against the session's and gives the reference's minutes counted from the open.

Expected values from pandas over the hand-made minute bars (conftest): the trading date
starts at 18:00, OVERNIGHT is 18:00-09:30, each day's high and low at their first minute.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from barb import execute

OPEN, LENGTH = 18 * 60, 15 * 60 + 30  # OVERNIGHT: 18:00-09:30
MINUTES_FORM = "if(hour() >= 18, hour() * 60 + minute() - 1440, hour() * 60 + minute())"
INSTEAD = f"Count minutes from the 18:00 open instead (TIME OF DAY AS A NUMBER): {MINUTES_FORM}"


def clock(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


def since_open(minute):
    return (np.asarray(minute) - OPEN) % 1440


@pytest.fixture(scope="module")
def overnight(minutes: pd.DataFrame) -> pd.DataFrame:
    """The OVERNIGHT minute bars, each with its trading date and minute of the day."""
    stamps = minutes["timestamp"]
    minute = (stamps.dt.hour * 60 + stamps.dt.minute).to_numpy()
    dates = stamps.dt.normalize() + pd.to_timedelta((minute >= OPEN).astype(int), unit="D")
    frame = minutes.assign(minute=minute, tdate=dates)
    return frame[since_open(minute) < LENGTH].reset_index(drop=True)


@pytest.fixture(scope="module")
def extremes(overnight: pd.DataFrame) -> pd.DataFrame:
    """Each date's minute of the day of its (first) high and (first) low."""
    days = overnight.groupby("tdate")
    return pd.DataFrame(
        {
            "high": overnight.loc[days["high"].idxmax(), ["tdate", "minute"]].set_index("tdate")[
                "minute"
            ],
            "low": overnight.loc[days["low"].idxmin(), ["tdate", "minute"]].set_index("tdate")[
                "minute"
            ],
        }
    )


def clock_warnings(result) -> list[str]:
    assert result.ok, result.to_dict()
    return [w for w in result.metadata.warnings if "as text" in w]


EXTREMES = {
    "group_by": "date()",
    "select": ["arg_max(time(), high) as high_time", "arg_min(time(), low) as low_time"],
}


def test_high_before_low_compared_as_text_says_how_many_days_it_reads_wrong(
    engine_settings, extremes
) -> None:
    text = extremes["high"] < extremes["low"]
    session = since_open(extremes["high"]) < since_open(extremes["low"])
    against = text != session
    assert against.sum() > 0 and text.mean() != session.mean()
    query = {
        "session": "OVERNIGHT",
        "from": "1m",
        **EXTREMES,
        "then": {"select": ["count()", "mean(high_time < low_time) as high_first"]},
    }
    result = execute(query, "NQ", settings=engine_settings)
    # The number is what the query says (the text order) ...
    assert result.summary.values["high_first"] == pytest.approx(text.mean())
    # ... and the warning says how often that is not the session's order.
    first = against.idxmax()
    a, b = int(extremes.at[first, "high"]), int(extremes.at[first, "low"])
    before, after = ("before", "after") if since_open(a) < since_open(b) else ("after", "before")
    assert clock_warnings(result) == [
        '"high_time < low_time" compares times of day as text, 00:00 first, though OVERNIGHT '
        f"(18:00-09:30) opens at 18:00: it reads {against.sum()} of {len(extremes)} rows "
        f"against the session's order ({clock(a)} comes {before} {clock(b)} in the session, "
        f"{after} it as text). {INSTEAD} in place of time()."
    ]
    # The form it points to gives the session's order, and nothing is said of it.
    counted = {
        "session": "OVERNIGHT",
        "from": "1m",
        "map": {"t": MINUTES_FORM},
        "group_by": "date()",
        "select": ["arg_max(t, high) as high_t", "arg_min(t, low) as low_t"],
        "then": {"select": ["count()", "mean(high_t < low_t) as high_first"]},
    }
    fixed = execute(counted, "NQ", settings=engine_settings)
    assert fixed.summary.values["high_first"] == pytest.approx(session.mean())
    assert clock_warnings(fixed) == []


def test_times_inside_one_calendar_day_say_nothing(engine_settings) -> None:
    query = {
        "session": "RTH",
        "from": "1m",
        **EXTREMES,
        "then": {"select": ["count()", "mean(high_time < low_time) as high_first"]},
        "sort": "high_time asc",
    }
    assert clock_warnings(execute(query, "NQ", settings=engine_settings)) == []


def test_a_clock_written_in_the_query_is_read_as_written(engine_settings, overnight) -> None:
    """``time() < '02:00'``, ``time() >= '18:00'`` and the windows written with both bounds
    name the clock's hours: the evening of an ETH day split from its morning is right, and
    was told to count minutes instead (p31c W1). Only two columns of times are said."""
    minute = overnight["minute"]
    base = {"session": "OVERNIGHT", "from": "1m", "select": "count()"}
    for where, kept in (
        ("time() < '02:00'", minute < 120),
        ("time() >= '18:00'", minute >= OPEN),
        ("time() >= '20:00' or time() < '02:00'", (minute >= 1200) | (minute < 120)),
        ("time() >= '00:00' and time() < '02:00'", minute < 120),
    ):
        result = execute({**base, "where": where}, "NQ", settings=engine_settings)
        assert result.summary.value == kept.sum(), where
        assert clock_warnings(result) == [], where
    split = {
        "session": "OVERNIGHT",
        "from": "1m",
        "map": {"part": "if(time() >= '18:00', 'eve', if(time() < '03:00', 'night', 'early'))"},
        "group_by": "part",
        "select": "count()",
    }
    result = execute(split, "NQ", settings=engine_settings)
    counts = dict(zip(result.table["part"], result.table["count"], strict=True))
    assert counts["eve"] == (minute >= OPEN).sum() and counts["night"] == (minute < 180).sum()
    assert clock_warnings(result) == []


def test_a_sort_by_times_as_text_names_the_time_listed_too_early(engine_settings, extremes) -> None:
    """ "The earliest overnight highs", sorted by high_time: 00:xx listed before 18:xx."""
    highs = np.unique(extremes["high"])
    by_session = sorted(highs, key=lambda m: since_open(m))
    differ = next(i for i, (t, s) in enumerate(zip(highs, by_session, strict=True)) if t != s)
    query = {"session": "OVERNIGHT", "from": "1m", **EXTREMES, "sort": "high_time asc", "limit": 3}
    result = execute(query, "NQ", settings=engine_settings)
    assert result.table["high_time"].iloc[0] == clock(int(highs[0]))
    assert clock_warnings(result) == [
        '"sort": "high_time asc" orders times of day as text, 00:00 first, though OVERNIGHT '
        f"(18:00-09:30) opens at 18:00: {clock(int(highs[differ]))} is listed before "
        f"{clock(int(by_session[differ]))}, which comes earlier in the session. "
        f"{INSTEAD} in place of time()."
    ]
