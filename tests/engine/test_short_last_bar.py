"""The session's short last bar, grouped by its time of day: NQ's hourly RTH bars end in
16:30-17:00, ES's 4-hour ETH bars in 14:00-17:00, CL's hourly RTH bars in 14:00-14:30. Asked
"which hour has the least volume", a model read the half-hour 16:30 as the answer; the chart
marked it only for groups of the bars, not for hours a second stage took from them (the hour
of each day's low, counted). The result now says so to the model, in either stage.

Each bar's length is read from the raw minute bars (pandas): the minutes of the day a
session-aligned bucket holds over a year of data, never from the engine or its sessions."""

from __future__ import annotations

import pandas as pd
import pytest

from barb import execute
from barb.data.sample import write_samples
from barb.data.store import data_path

pytestmark = pytest.mark.slow

YEAR = 2025
# (symbol, session, its hours written out here, from, bar length in minutes)
CASES = [
    ("NQ", "RTH", (570, 1020), "1h", 60),
    ("ES", "ETH", (1080, 1020), "4h", 240),
    ("CL", "RTH", (540, 870), "1h", 60),
]
LENGTHS = {30: "half an hour", 60: "an hour", 180: "3 hours", 240: "4 hours"}


def clock(minute: int) -> str:
    return f"{minute // 60 % 24:02d}:{minute % 60:02d}"


def year_minutes(symbol: str, settings) -> pd.DataFrame:
    """A year of the instrument's minute bars: trading date, minute of the day, low, volume."""
    return pd.read_parquet(
        data_path(symbol, settings),
        columns=["trading_date", "minute", "low", "volume"],
        filters=[
            ("trading_date", ">=", pd.Timestamp(f"{YEAR}-01-01")),
            ("trading_date", "<", pd.Timestamp(f"{YEAR + 1}-01-01")),
        ],
    )


def buckets(frame: pd.DataFrame, hours: tuple[int, int], step: int) -> pd.DataFrame:
    """The session's minute bars, each with the start of its bar (from the session's open,
    across midnight) and its place in the trading day."""
    start, end = hours
    since = (frame["minute"].astype(int) - start) % 1440
    inside = frame[since < (end - start) % 1440].copy()
    inside["since"] = since[since < (end - start) % 1440]
    inside["bucket"] = (start + inside["since"] // step * step) % 1440
    return inside


def short_bucket(inside: pd.DataFrame, step: int) -> tuple[int, int]:
    """The bar that holds fewer minutes of the day than the others, and how many it holds."""
    held = inside.groupby("bucket")["minute"].nunique()
    assert (held <= step).all()
    [short] = held[held < step].index.tolist()
    assert (held.drop(short) == step).all()
    return int(short), int(held[short])


def expected_warning(short: int, minutes: int, step: int) -> str:
    label = clock(short)
    return (
        f"The {label} bar is {LENGTHS[minutes]} ({label}-{clock(short + minutes)}), the others "
        f"{LENGTHS[step]}: its sums, counts and ranges are not comparable with theirs."
    )


def short_bar_warnings(result) -> list[str]:
    assert result.ok, result.to_dict()
    return [w for w in result.metadata.warnings if " bar is " in w and "comparable" in w]


@pytest.fixture(scope="module")
def settings(sample_settings):
    write_samples(["CL"], sample_settings)  # NQ and ES are in the default sample
    return sample_settings


@pytest.mark.parametrize(("symbol", "session", "hours", "frame", "step"), CASES)
def test_groups_of_the_bars_by_time_say_the_last_bar_is_short(
    settings, symbol, session, hours, frame, step
) -> None:
    inside = buckets(year_minutes(symbol, settings), hours, step)
    short, minutes = short_bucket(inside, step)
    query = {
        "session": session,
        "from": frame,
        "period": str(YEAR),
        "group_by": "time()",
        "select": ["sum(volume) as vol", "count()"],
    }
    result = execute(query, symbol, settings=settings)
    # Unsorted, a column the short bar's group heads names the full-length one at that end
    # (p47c E: "lowest 16:30 (30 min)" of ES's hourly ranges, where 12:30 is the quietest
    # full hour); not count(), the bars themselves.
    volume = inside.groupby("bucket")["volume"].sum()
    full = volume.drop(short)
    suffix = ""
    if volume[short] < full.min():
        suffix = (
            " Its vol is the lowest: the lowest full-length one is "
            f"{clock(full.idxmin())} ({int(full.min())})."
        )
    assert suffix or symbol != "NQ"  # the case: NQ's 16:30 half hour trades the least
    assert short_bar_warnings(result) == [expected_warning(short, minutes, step) + suffix]
    assert clock(short) in result.table["time"].tolist()


@pytest.mark.parametrize(("symbol", "session", "hours", "frame", "step"), CASES)
def test_times_a_second_stage_groups_by_say_the_last_bar_is_short(
    settings, symbol, session, hours, frame, step
) -> None:
    """ "In which hour does the day's low come least often": each day's low hour, counted."""
    inside = buckets(year_minutes(symbol, settings), hours, step)
    short, minutes = short_bucket(inside, step)
    # The bar of each day's lowest minute (the first, of equal lows): the day's low bar.
    first_low = inside.sort_values(["trading_date", "since"]).groupby("trading_date")["low"]
    lows = inside.loc[first_low.idxmin(), "bucket"]
    assert short in set(lows) and len(set(lows)) > 1
    query = {
        "session": session,
        "from": frame,
        "period": str(YEAR),
        "group_by": "date()",
        "select": "arg_min(time(), low) as low_time",
        "then": {"group_by": "low_time", "select": "count() as days", "sort": "days desc"},
    }
    result = execute(query, symbol, settings=settings)
    # Most often first, ties in the session's order: where the short bar ranks first or
    # last (listed), the first or last full-length one is named too.
    opened = inside.groupby("bucket")["since"].min().sort_values().index
    ranked = (
        lows.value_counts().reindex(opened).dropna().sort_values(ascending=False, kind="stable")
    )
    suffix = ""
    if ranked.index[0] == short:
        first = ranked.drop(short)
        suffix = (
            " Sorted by days descending, it ranks first: the first full-length one is "
            f"{clock(first.index[0])} (days {int(first.iloc[0])})."
        )
    elif ranked.index[-1] == short:
        last = ranked.drop(short)
        suffix = (
            " Sorted by days descending, it ranks last: the last full-length one is "
            f"{clock(last.index[-1])} (days {int(last.iloc[-1])})."
        )
    assert short_bar_warnings(result) == [expected_warning(short, minutes, step) + suffix]
    counted = result.table.set_index("low_time")["days"]
    assert counted[clock(short)] == (lows == short).sum()


def test_bars_that_fill_the_session_or_groups_without_the_short_bar_say_nothing(
    settings,
) -> None:
    """30-minute RTH bars fill 09:30-17:00 evenly; hours before 16:00 leave 16:30 out."""
    query = {"session": "RTH", "period": str(YEAR), "group_by": "time()", "select": "count()"}
    even = execute({**query, "from": "30m"}, "NQ", settings=settings)
    assert short_bar_warnings(even) == []
    morning = execute({**query, "from": "1h", "where": "hour() < 16"}, "NQ", settings=settings)
    assert "16:30" not in morning.table["time"].tolist()
    assert short_bar_warnings(morning) == []


@pytest.mark.parametrize("then", [False, True])
def test_the_short_bar_atop_a_ranking_names_the_first_full_length_one(settings, then) -> None:
    """ "Which hour has the least volume", sorted and cut to 1: the table held 16:30 alone,
    so nothing was said of its length (no full bar beside it). Now it is, with the full
    hour that ranks first among the others (pandas over the minute bars' volume); likewise
    for hours a second stage counted (the hour of each day's low, least often)."""
    frame = pd.read_parquet(
        data_path("NQ", settings),
        columns=["trading_date", "minute", "low", "volume"],
        filters=[
            ("trading_date", ">=", pd.Timestamp(f"{YEAR}-01-01")),
            ("trading_date", "<", pd.Timestamp(f"{YEAR + 1}-01-01")),
        ],
    )
    inside = buckets(frame, (570, 1020), 60)
    short, minutes = short_bucket(inside, 60)
    query: dict = {"session": "RTH", "from": "1h", "period": str(YEAR)}
    if then:
        first_low = inside.sort_values(["trading_date", "since"]).groupby("trading_date")["low"]
        ranked = inside.loc[first_low.idxmin(), "bucket"].value_counts().sort_index()
        ranked = ranked.sort_values(kind="stable")
        column = "days"
        query |= {
            "group_by": "date()",
            "select": "arg_min(time(), low) as low_time",
            "then": {"group_by": "low_time", "select": "count() as days", "sort": "days asc"},
        }
        query["then"]["limit"] = 1
    else:
        ranked = inside.groupby("bucket")["volume"].sum().sort_values(kind="stable")
        column = "vol"
        query |= {
            "group_by": "time()",
            "select": "sum(volume) as vol",
            "sort": "vol asc",
            "limit": 1,
        }
    assert ranked.index[0] == short  # the half hour ranks first
    result = execute(query, "NQ", settings=settings)
    full = ranked.drop(short)
    assert short_bar_warnings(result) == [
        expected_warning(short, minutes, 60)
        + f" Sorted by {column} ascending, it ranks first: the first full-length one is "
        f"{clock(full.index[0])} ({column} {full.iloc[0]})."
    ]


@pytest.mark.parametrize(("symbol", "session", "hours", "frame", "step"), CASES)
def test_a_table_of_bars_holding_the_short_one_says_how_to_get_the_full_last_bar(
    settings, symbol, session, hours, frame, step
) -> None:
    """ "The last hour of today's session" as RTH 1h last_1_bars gave the 16:30 bar, half an
    hour, with nothing said. Now the warning gives its length and the window session that
    holds the session's last full bar, whose range and volume pandas reads here from the
    last date's minute bars."""
    inside = buckets(year_minutes(symbol, settings), hours, step)
    short, minutes = short_bucket(inside, step)
    frame_minutes = pd.read_parquet(
        data_path(symbol, settings), columns=["trading_date", "minute", "high", "low", "volume"]
    )
    last = frame_minutes[frame_minutes["trading_date"] == frame_minutes["trading_date"].max()]
    since = (last["minute"].astype(int) - hours[0]) % 1440
    length = (hours[1] - hours[0]) % 1440 or 1440
    short_bar = last[(since >= length - minutes) & (since < length)]
    full_bar = last[(since >= length - step) & (since < length)]
    result = execute(
        {"session": session, "from": frame, "period": "last_1_bars"}, symbol, settings=settings
    )
    assert result.ok, result.to_dict()
    [row] = result.table.to_dict("records")
    assert row["timestamp"].hour * 60 + row["timestamp"].minute == short
    assert row["range"] == short_bar["high"].max() - short_bar["low"].min()
    assert row["volume"] == short_bar["volume"].sum()
    start, end = clock(hours[1] - step), clock(hours[1])
    whole = "hour" if step == 60 else LENGTHS[step]
    expected = (
        f"The {clock(short)} bar is {LENGTHS[minutes]} ({clock(short)}-{end}), the others "
        f"{LENGTHS[step]}: its range, volume and move cover {minutes} minutes, not {step}. "
        f'The session\'s last {whole}, {start}-{end}: "from": "daily", "session": '
        f'"{start}-{end}".'
    )
    assert expected in result.metadata.warnings, result.metadata.warnings
    daily = execute(
        {"session": f"{start}-{end}", "from": "daily", "period": "last_1_bars"},
        symbol,
        settings=settings,
    )
    assert daily.table["range"].iloc[0] == full_bar["high"].max() - full_bar["low"].min()
    assert daily.table["volume"].iloc[0] == full_bar["volume"].sum()
    assert daily.table["range"].iloc[0] > row["range"]
