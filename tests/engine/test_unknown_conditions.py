"""A condition that cannot be decided (next() past the data's end) stays unknown through
if(), and and/or/not keep it the way SQL does: unknown and false is false, unknown or true is
true. Expected answers from pandas over RTH daily bars built from the minute file (rth_bars), with
its own three-valued logic written out by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import ask
from rth_bars import rth_daily

PERIOD = "2024-03-01:"  # runs to the data's last day, 2024-03-28


def _march(minutes: pd.DataFrame) -> pd.DataFrame:
    daily = rth_daily(minutes)
    daily["next_close"] = daily["close"].shift(-1)  # NaN on the data's last day
    return daily.loc["2024-03-01":]


def test_if_of_an_unknown_condition_picks_neither_branch(engine_settings, minutes) -> None:
    """ "After a down day, was the next day up or down?": the data's last day has no next
    day, so it is neither, not "down"."""
    days = _march(minutes)
    down = days[days["close"] < rth_daily(minutes)["close"].shift().loc["2024-03-01":]]
    # The fixture's last day is a down day: the row old code called "down".
    assert down.index[-1] == days.index[-1] and np.isnan(down["next_close"].iloc[-1])
    known = down.dropna(subset=["next_close"])
    expected = (
        pd.Series(np.where(known["next_close"] > known["close"], "up", "down"))
        .value_counts()
        .sort_index()
    )
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": PERIOD,
            "map": {"next_dir": 'if(next(close) > close, "up", "down")'},
            "where": "close < prev(close)",
            "group_by": "next_dir",
            "select": "count() as days",
        },
        engine_settings,
    )
    got = result.table.set_index("next_dir")["days"]
    assert got.to_dict() == expected.to_dict()
    assert "1 row with no value for next_dir (n/a) left out: they are in no group." in (
        result.metadata.warnings
    )


def test_if_as_one_and_zero_averages_only_decided_rows(engine_settings, minutes) -> None:
    days = _march(minutes)
    known = days.dropna(subset=["next_close"])
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": PERIOD,
            "map": {
                "up": "if(next(close) > close, 1, 0)",
                "up_flag": "if(next(close) > close, true, false)",
                "word": "if(next(close) > close, 'up', 'down')",
            },
            "select": ["mean(up) as share", "count(up) as n", "mean(up_flag) as flag_share"],
        },
        engine_settings,
    )
    share = (known["next_close"] > known["close"]).mean()
    assert result.summary.values["share"] == pytest.approx(share)
    assert result.summary.values["flag_share"] == pytest.approx(share)
    assert result.summary.values["n"] == len(known) == len(days) - 1
    last = result.source_rows.iloc[-1]
    assert pd.isna(last["up"]) and pd.isna(last["up_flag"]) and pd.isna(last["word"])


def _kleene(a: pd.Series, b: pd.Series, op: str) -> pd.Series:
    """Three-valued and/or written out: None is unknown."""
    out = []
    for x, y in zip(a, b, strict=True):
        if op == "and":
            out.append(False if x is False or y is False else None if None in (x, y) else True)
        else:
            out.append(True if x is True or y is True else None if None in (x, y) else False)
    return pd.Series(out, index=a.index, dtype=object)


def _known_mean(values: pd.Series) -> float:
    decided = values.dropna()
    return float(decided.astype(bool).mean())


@pytest.mark.parametrize("other", ["close > open", "close < open"])
@pytest.mark.parametrize("op", ["and", "or"])
def test_and_or_keep_unknown_as_sql_does(engine_settings, minutes, op: str, other: str) -> None:
    """The last day's next(close) > close is unknown; the other side is true on it one way
    and false the other, so all four of unknown and/or true/false are met."""
    days = _march(minutes)
    nxt = pd.Series(
        [
            None if np.isnan(n) else bool(n > c)
            for n, c in zip(days["next_close"], days["close"], strict=True)
        ],
        index=days.index,
        dtype=object,
    )
    rising = days["close"] > days["open"]
    side = (rising if other == "close > open" else days["close"] < days["open"]).astype(object)
    both = _kleene(nxt, side, op)
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": PERIOD,
            "select": [
                f"mean(next(close) > close {op} {other}) as share",
                f"count(next(close) > close {op} {other}) as true_days",
            ],
        },
        engine_settings,
    )
    assert result.summary.values["share"] == pytest.approx(_known_mean(both))
    assert result.summary.values["true_days"] == int((both == True).sum())  # noqa: E712
    where = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": PERIOD,
            "where": f"not (next(close) > close {op} {other})",
            "select": "count()",
        },
        engine_settings,
    )
    # not unknown is unknown: where keeps only the rows whose negation is true.
    assert where.summary.value == int((both == False).sum())  # noqa: E712


@pytest.mark.parametrize("yesterday", ["daily(high)", "session_high('RTH', 1)"])
def test_a_per_day_max_of_a_condition_stays_one(engine_settings, minutes, yesterday) -> None:
    """ "Did the day trade above yesterday's high?" as max(cond) per date: the data's first
    date has no yesterday, so its max is unknown; the column was "text" then, and the second
    stage's mean, where and if() refused it (p36b C1). Now it is a condition whose unknown
    day is left out of the share, as the first stage's mean(cond) leaves out its rows."""
    result = ask(
        {
            "session": "RTH",
            "from": "1m",
            "period": "2024-01-02:2024-01-31",
            "map": {"big": f"high > {yesterday}"},
            "group_by": "date()",
            "select": "max(big) as hit",
            "then": {
                "map": {"one": "if(hit, 1, 0)"},
                "select": ["mean(hit) as share", "count(hit) as days", "sum(one) as ones"],
            },
        },
        engine_settings,
    )
    days = rth_daily(minutes).loc[:"2024-01-31"]
    above = (days["high"] > days["high"].shift()).iloc[1:]  # the first date: no yesterday
    assert len(above) == len(days) - 1 and 0 < above.sum() < len(above)
    assert result.summary.values == pytest.approx(
        {"share": above.mean(), "days": int(above.sum()), "ones": int(above.sum())}
    )
