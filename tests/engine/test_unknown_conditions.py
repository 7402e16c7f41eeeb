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

from barb.charts import chart_headline, draw_chart
from barb.export import csv_bytes
from barb.summary_text import render_summary

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
    assert (
        f"The day {days.index[-1]:%Y-%m-%d} has no value for next_dir (n/a) and is left out: "
        "it is in no group."
    ) in result.metadata.warnings


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


def _up_streak(flags: pd.Series) -> int:
    """The longest run of true in a row, counted by hand."""
    longest = run = 0
    for flag in flags:
        run = run + 1 if flag else 0
        longest = max(longest, run)
    return longest


@pytest.mark.parametrize(
    ("expr", "made"),
    [
        ("close > prev(close)", lambda c: c > c.shift()),
        ("close > rolling_mean(close, 3)", lambda c: c > c.rolling(3).mean()),
    ],
)
@pytest.mark.parametrize("listed", ["map", "select"])
def test_a_condition_listed_into_then_stays_one(engine_settings, minutes, expr, made, listed):
    """A condition empty anywhere in the history a stage computes over (the data's first day
    has no prev()) was listed as an object column of True/False/NA: then read it as text, and
    "count(up)" counted every row (p39b B1: NQ 2024 gave 259 up days, not 138), while mean,
    where, == true and streak refused it. It stays a condition: count its trues, mean the
    share, where keeps the trues, streak runs over it."""
    closes = rth_daily(minutes)["close"]
    up = made(closes).loc["2024-02-01":"2024-02-29"]
    assert 0 < up.sum() < len(up)
    first = (
        {"map": {"up": expr}, "select": ["date()", "up"]}
        if listed == "map"
        else {"select": ["date()", f"{expr} as up"]}
    )
    base = {"session": "RTH", "from": "daily", "period": "2024-02", **first}
    then = {
        "map": {"run": "streak(up)"},
        "select": [
            "count(up) as ups",
            "mean(up) as share",
            "count(up == true) as equal",
            "max(run) as longest",
            "count() as n",
        ],
    }
    result = ask({**base, "then": then}, engine_settings)
    assert result.summary.values == pytest.approx(
        {
            "ups": int(up.sum()),
            "share": up.mean(),
            "equal": int(up.sum()),
            "longest": _up_streak(up),
            "n": len(up),
        }
    )
    kept = ask({**base, "then": {"where": "up", "select": "count()"}}, engine_settings)
    assert kept.summary.value == int(up.sum())


def test_an_unknown_listed_into_then_is_left_out(engine_settings, minutes) -> None:
    """The data's last day has no next(): listed into then it stays unknown, neither counted
    as up nor in the share, and the summary and CSV show it empty (n/a), not 'None'."""
    days = _march(minutes)
    up = days["next_close"] > days["close"]
    known = up.iloc[:-1]
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": PERIOD,
            "map": {"up": "next(close) > close"},
            "select": ["date()", "up"],
            "then": {"select": ["count(up) as ups", "mean(up) as share", "count() as n"]},
        },
        engine_settings,
    )
    assert result.summary.values == pytest.approx(
        {"ups": int(known.sum()), "share": known.mean(), "n": len(days)}
    )
    listed = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": PERIOD,
            "map": {"up": "next(close) > close"},
            "select": ["date()", "up"],
            "then": {"map": {"run": "streak(up)"}},
        },
        engine_settings,
    )
    # streak() skips an unknown row, its own count empty (p39a M1).
    assert pd.isna(listed.table["up"].iloc[-1]) and pd.isna(listed.table["run"].iloc[-1])
    text = render_summary(listed)
    assert f"{days.index[-1]:%Y-%m-%d},n/a,n/a" in text and "None" not in text
    csv = csv_bytes(listed).decode("utf-8-sig")
    assert f"{days.index[-1]:%Y-%m-%d},,," in csv and "None" not in csv and "nan" not in csv


def test_a_few_days_drawn_by_a_condition_show_its_unknown_day(engine_settings, minutes) -> None:
    """Down days marked by whether the next day rose: the data's last day has no next day.
    Its unknown drew no chart ("boolean value of NA is ambiguous"); it is a kind of its own."""
    days = _march(minutes)
    down = days[days["close"] < rth_daily(minutes)["close"].shift().loc["2024-03-01":]]
    up = (down["next_close"] > down["close"])[down["next_close"].notna()]
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": PERIOD,
            "map": {"up": "next(close) > close"},
            "where": "close < prev(close)",
            "select": ["date()", "up"],
        },
        engine_settings,
    )
    yes, no = int(up.sum()), int((~up).sum())
    assert yes and no and yes + no + 1 == len(down) <= 60
    assert chart_headline(result) == f"{len(down)} days, up: yes {yes}, no {no}, n/a 1"
    fig = draw_chart(result)
    assert fig is not None
    (ax,) = fig.axes
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [f"up: yes ({yes})", f"up: no ({no})", "up: n/a (1)"]
