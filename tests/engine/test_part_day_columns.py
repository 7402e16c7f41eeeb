"""Which columns listed on a short session are a part day's: a move to a price the session set
after its open (close - open, range, a same-day fill) is, the gap from the close before to the
open is not (p34a A: "their gap_pct is a part day's" on Thanksgiving, whose -0.29% gap is a
whole night's). With a then stage the rows counted are the ones it lists (p34a Q13 counted
"10 of the 262 rows listed" over 18 listed rows, none short). Hand-made minute bars around
Thanksgiving 2024 (the 28th closes at 13:00, the 29th at 13:15); expected values from pandas
over the same bars."""

from __future__ import annotations

import pandas as pd
import pytest
from asking import RTH_DAILY, ask, warnings_with
from small_bars import bars_from_closes, session_stamps, write_minutes

from barb.settings import EngineSettings

CLOSES = {"2024-11-28": "13:00", "2024-11-29": "13:15"}
KINDS = {"2024-11-28": "holiday", "2024-11-29": "early close"}
RTH = (570, 1020)
WEEK = "2024-11-25:2024-12-03"
LEAVE_OUT = '"where": "not holiday() and not early_close()" leaves them out.'
GAP = "(open - prev(close)) / prev(close) * 100"


def _minutes() -> pd.DataFrame:
    import numpy as np

    rng = np.random.default_rng(34)
    ts = session_stamps("2024-11-18", "2024-12-06", CLOSES)
    n = len(ts)
    close = np.round((20000 + np.cumsum(rng.choice([-1.0, 0.0, 1.0], n) * 2.25)) * 4) / 4
    open_ = np.concatenate(([close[0]], close[:-1])) + 0.25 * rng.integers(-2, 3, n)
    return bars_from_closes(ts, close, rng.integers(1, 300, n), open_=open_)


@pytest.fixture(scope="module")
def bars() -> pd.DataFrame:
    return _minutes()


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory, bars) -> EngineSettings:
    settings = EngineSettings(data_dir=tmp_path_factory.mktemp("thanksgiving"))
    write_minutes(bars, "NQ", settings, "Thanksgiving 2024, hand-made")
    return settings


@pytest.fixture(scope="module")
def days(bars) -> pd.DataFrame:
    """RTH days (09:30-17:00) of the raw bars: open, high, low, close, minutes traded, the
    gap in percent and whether the day is a short session."""
    minute = bars["timestamp"].dt.hour * 60 + bars["timestamp"].dt.minute
    rth = bars[(minute >= RTH[0]) & (minute < RTH[1])]
    day = rth["timestamp"].dt.strftime("%Y-%m-%d")
    out = rth.groupby(day).agg(
        open=("open", "first"),
        high=("high", "max"),
        low=("low", "min"),
        close=("close", "last"),
        minutes=("open", "size"),
    )
    out["gap_pct"] = (out["open"] / out["close"].shift() - 1) * 100
    out["short"] = out["minutes"] < RTH[1] - RTH[0]
    return out


def _short(result) -> list[str]:
    return warnings_with(result, "short session")


def _said(listed: pd.DataFrame, what: str) -> str:
    short = listed.index[listed["short"]]
    named = ", ".join(f"{d} ({KINDS[d]}, closed {CLOSES[d]})" for d in short)
    # Every row short: leaving them out would leave none; the hours all trade compare.
    other = LEAVE_OUT
    if len(short) == len(listed):
        earliest = min(CLOSES[d] for d in short)
        other = (
            f'Against full days compare the hours both trade, "session": "09:30-{earliest}", '
            "over every day."
        )
    return (
        f"{len(short)} of the {len(listed)} rows listed are short sessions: {named}; "
        f"their {what} a part day's. {other}"
    )


@pytest.mark.parametrize(
    "gap",
    [
        {"gap_pct": GAP},
        {"pc": "session_close('RTH', 1)", "gap_pct": "(open - pc) / pc * 100"},
        {"pc": "prev(close)", "gap_pct": "(open - pc) / pc * 100", "up": "gap_up()"},
    ],
)
def test_a_gap_on_a_short_session_is_no_part_day_s(settings, days, gap) -> None:
    """The gap into Thanksgiving runs from the 27th's 17:00 close to the 09:30 open, a night
    as long as any other: nothing about it is a part day's. The day after Thanksgiving's
    prev(close) is the holiday's 13:00 close, which its own warning still says."""
    result = ask({"period": WEEK, "map": gap, "select": list(gap)}, settings, **RTH_DAILY)
    listed = days.loc["2024-11-25":"2024-12-03"]
    assert listed["short"].sum() == 2
    assert result.table["gap_pct"].to_numpy() == pytest.approx(listed["gap_pct"].to_numpy())
    assert _short(result) == []
    if "session_close" not in str(gap):
        [after] = warnings_with(result, "follows a US holiday session")
        assert "2024-11-29 after 2024-11-28, closed 13:00" in after


@pytest.mark.parametrize(
    ("listed", "what"),
    [
        ({"move": "close - open"}, "move is"),
        (
            {"filled": "if(open > prev(close), low <= prev(close), high >= prev(close))"},
            "filled is",
        ),
        ({"filled": "gap_filled()"}, "filled is"),
        ({"gap_pct": GAP, "r": "range"}, "r is"),
    ],
)
def test_a_move_to_a_price_after_the_open_is_a_part_day_s(settings, days, listed, what) -> None:
    """A half day's close, high and low stop at its early close: its move, range and
    same-day fill are a part day's, and still named (the gap beside them is not)."""
    result = ask({"period": WEEK, "map": listed, "select": list(listed)}, settings, **RTH_DAILY)
    assert _short(result) == [_said(days.loc["2024-11-25":"2024-12-03"], what)]


def test_a_then_stage_counts_the_rows_it_lists(settings, days) -> None:
    """The first stage's 15 rows hold both short sessions; a then stage that lists none of
    them says nothing, one that lists them counts its own rows, and one that lists only the
    gap says nothing of them."""
    first = {
        "period": "2024-11-18:2024-12-06",
        "map": {"move": "close - open", "gap_pct": GAP},
        "select": ["move", "gap_pct", "day() as d"],
    }
    month_day = pd.to_datetime(days.index).day
    before = ask({**first, "then": {"where": "d < 28"}}, settings, **RTH_DAILY)
    assert len(before.table) == int((month_day < 28).sum()) and _short(before) == []
    late = ask({**first, "then": {"where": "d >= 28"}}, settings, **RTH_DAILY)
    assert _short(late) == [_said(days[month_day >= 28], "move is")]
    gaps = ask({**first, "then": {"select": ["gap_pct"]}}, settings, **RTH_DAILY)
    assert gaps.table["gap_pct"].to_numpy() == pytest.approx(
        days["gap_pct"].to_numpy(), nan_ok=True
    )
    assert _short(gaps) == []


@pytest.mark.parametrize(
    ("listed", "what"),
    [
        # p43a Q22: Wednesday's close to Black Friday's, over the holiday between.
        ({"wed": "session_close('RTH', 2)", "move": "(close / wed - 1) * 100"}, None),
        ({"move": "close / prev(close, 2) - 1"}, None),
        # p43a Q13: the day before's range is a full day's; the ratio's volume is the row's.
        ({"prev_r": "prev(range) / prev(open) * 100"}, None),
        ({"prev_r": "prev(range)", "ratio": "volume / prev(volume)"}, "ratio is"),
        # p47b #19: the day's change to its early close is the whole day's (the market
        # closed for the day), its range a part day's.
        ({"ret": "close / prev(close) - 1"}, None),
        ({"chg": "close - session_close('RTH', 1)"}, None),
        ({"ret": "close / prev(close) - 1", "r": "range"}, "r is"),
    ],
)
def test_only_the_short_days_own_span_is_a_part_day_s(settings, days, listed, what) -> None:
    """The day after Thanksgiving alone (a 13:15 close): a move from two sessions back, the
    day's change to its close and the day before's range are not a part day's; its own
    volume and range are. Said, the form offered is the hours every day trades, not a where
    that leaves out the one row listed."""
    query = {"period": WEEK, "map": listed, "where": "day() == 29", "select": list(listed)}
    result = ask(query, settings, **RTH_DAILY)
    [friday] = result.table["date"].astype(str)
    assert friday == "2024-11-29" and days.loc[friday, "short"]
    close = days["close"]
    if "wed" in listed:  # the 27th's close, two sessions back
        assert result.table["move"].iloc[0] == pytest.approx(
            (close[friday] / close["2024-11-27"] - 1) * 100
        )
    if "ret" in listed:  # from the holiday's 13:00 close to the 29th's 13:15 one
        assert result.table["ret"].iloc[0] == pytest.approx(close[friday] / close["2024-11-28"] - 1)
    if what is None:
        assert _short(result) == []
        return
    assert _short(result) == [
        f"1 of the 1 rows listed is a short session: {friday} (early close, closed "
        f"{CLOSES[friday]}); their {what} a part day's. Against full days compare the hours "
        f'both trade, "session": "09:30-{CLOSES[friday]}", over every day.'
    ]


def _mostly_short(result) -> list[str]:
    return [w for w in result.metadata.warnings if w.startswith("Short sessions make up")]


@pytest.mark.parametrize(("first", "last"), [(28, 29), (27, 29), (26, 29)])
def test_a_group_mostly_of_short_sessions_is_named(settings, days, first, last) -> None:
    """p43a A: Christmas Eve's or Black Friday's mean range and volume grouped against the
    other days read as quiet days with nothing said, where they are half days. Each group
    whose days are mostly short sessions is named with its count, kinds and closes (pandas
    over the bars), the sizes it reads, and the hours every day trades; a group with fewer
    than half is not (26-29 holds 2 of 4)."""
    day = pd.to_datetime(days.index).day
    key = (day >= first) & (day <= last)
    query = {
        "period": "2024-11-18:2024-12-06",
        "map": {"tg": f"day() >= {first} and day() <= {last}"},
        "group_by": "tg",
        "select": ["count()", "mean(range)", "mean(volume)", "mean(close / prev(close, 2) - 1)"],
    }
    result = ask(query, settings, **RTH_DAILY)
    group = days[key]
    assert result.table.set_index("tg")["count"][True] == len(group)
    short = group.index[group["short"]]
    if 2 * len(short) <= len(group):
        assert _mostly_short(result) == []
        return
    count = (
        f"all {len(short)} days"
        if len(short) == len(group)
        else (f"{len(short)} of the {len(group)} days")
    )
    closes = sorted(CLOSES[d] for d in short)
    assert _mostly_short(result) == [
        f"Short sessions make up {count} of group tg true (holidays and early closes, the "
        f"exchange closed at {' or '.join(closes)}), so its mean_range and mean_volume are a "
        f"part day's: against full days compare the hours both trade, "
        f'"session": "09:30-{closes[0]}", over every day.'
    ]


def test_groups_with_a_short_session_among_full_days_are_not_named(settings, days) -> None:
    """By weekday the holiday is one Thursday of three and the half day one Friday of three:
    each group's value is mostly full days'."""
    weekday = pd.to_datetime(days.index).day_name()
    shares = days.groupby(weekday)["short"].mean()
    assert 0 < shares.max() <= 0.5
    query = {"period": "2024-11-18:2024-12-06", "group_by": "dayname()", "select": "mean(range)"}
    assert _mostly_short(ask(query, settings, **RTH_DAILY)) == []
