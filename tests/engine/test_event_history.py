"""Counts since an event (streak, bars_since, ffill) read back only to their event before the
period (``barb.script.event_history``), not from the data's first bar, and answer exactly as
over all history: "the longest run of up minutes on 2024-02-20", "minutes since the last
volume spike", "the close against the last wide bar's", over the hand-made minute bars
(2024-01-02 to 2024-03-28), each period's answer the same as the plan run over every bar
from the first, and as a plain Python loop over every bar."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest
from asking import ask

from barb import interpreter
from barb.interpreter import run, run_on
from barb.period_rows import bars_in_scope
from barb.planning import plan_query
from barb.result import Result
from barb.script.query import parse_query

# A wide bar (491 of the 85,560 ETH minutes), and a rarer one (74: a wide bar on almost no
# volume) that the first rows read back hold none of before many periods, so the rows are
# widened, some periods' up to the data's first bar.
WIDE = 3.25
RARE = "range >= 3 and volume < 20"


def _said(result: Result) -> str:
    """Everything the Result says but its rows (compared as frames) and the time taken."""
    assert result.summary is not None and result.metadata is not None
    meta = result.metadata.model_dump(exclude={"elapsed_ms"})
    return json.dumps([result.summary.model_dump(), meta, result.focus_columns], default=str)


def _assert_same(narrow: Result, whole: Result, asked: dict[str, Any]) -> None:
    assert _said(narrow) == _said(whole), asked
    for rows in ("table", "source_rows", "drawn_rows", "run_rows"):
        mine, theirs = getattr(narrow, rows), getattr(whole, rows)
        assert (mine is None) == (theirs is None), (rows, asked)
        if mine is not None:
            pd.testing.assert_frame_equal(mine, theirs, obj=f"{rows} of {asked}")


def _both(query: dict[str, Any], settings) -> tuple[Result, Result]:
    """The plan run as the engine runs it, and over every bar from the data's first."""
    plan = plan_query(parse_query(query).with_instrument("NQ"), "NQ", settings)
    assert plan.event_reach is not None  # the case: read back to the event, not to 2024-01-02
    return run(plan, settings), run_on(plan, settings, bars_in_scope(plan))


QUERIES: list[dict[str, Any]] = [
    {"map": {"run": "streak(close > open)"}, "select": ["max(run)", "sum(run)", "first(run)"]},
    {"map": {"run": "streak(close < prev(close))"}, "where": "run >= 3", "select": "count()"},
    {"map": {"run": "streak(close > open, 'day')"}, "select": ["max(run)", "sum(run)"]},
    {
        "map": {"up": "close > rolling_mean(close, 30)", "run": "streak(up)", "p": "prev(run, 2)"},
        "where": "p >= 2",
        "select": ["count()", "max(run)"],
    },
    {"map": {"b": f"bars_since(range >= {WIDE})"}, "select": ["max(b)", "sum(b)", "first(b)"]},
    {"map": {"b": f"bars_since({RARE})"}, "select": ["max(b)", "sum(b)", "first(b)"]},
    {
        "map": {"f": f"ffill(if({RARE}, close, 0 / 0))"},
        "select": ["first(f)", "sum(f)", "count()"],
    },
    {"map": {"run": "streak(close > open)", "b": "bars_since(run == 0)"}},
]


@pytest.mark.parametrize("query", QUERIES, ids=range(len(QUERIES)))
def test_each_period_answers_as_over_all_history(engine_settings, query) -> None:
    """Every field of the Result (values, warnings, the rows behind the number) is the same
    read back to the event as read from the first bar: a day, a week, the last bars, ETH and
    RTH, 1- and 5-minute bars, a period at the data's start."""
    periods = ["2024-01-03", "2024-02-20", "2024-03-11:2024-03-15", "last_30_bars"]
    for session, bars in (("ETH", "1m"), ("RTH", "1m"), ("ETH", "5m")):
        for period in periods if "select" in query else periods[1:2]:
            asked = {**query, "session": session, "from": bars, "period": period}
            _assert_same(*_both(asked, engine_settings), asked)


def _loop_counts(bars: pd.DataFrame) -> pd.DataFrame:
    """streak(close > open), bars_since(range >= WIDE) and ffill(if(range >= WIDE, close,
    0 / 0)) over every bar, one bar at a time."""
    run, since, filled = [], [], []
    count, last, value = 0, None, np.nan
    for i, (o, h, lo, c) in enumerate(bars[["open", "high", "low", "close"]].to_numpy()):
        count = count + 1 if c > o else 0
        if h - lo >= WIDE:
            last, value = i, c
        run.append(count)
        since.append(np.nan if last is None else i - last)
        filled.append(value)
    return bars.assign(run=run, since=since, filled=filled)


def test_counts_are_a_loop_s_over_every_bar(engine_settings, minutes) -> None:
    """The values in each period, read back only to their event, are a plain loop's over
    every ETH bar since the data's first: a run that began the day before counts from
    there, and a last wide bar weeks back is the one filled."""
    counted = _loop_counts(minutes)
    day = (counted["timestamp"] + pd.Timedelta(hours=6)).dt.normalize()
    for period in ("2024-01-16", "2024-02-20", "2024-03-05", "2024-03-28"):
        result = ask(
            {
                "session": "ETH",
                "from": "1m",
                "period": period,
                "map": {
                    "run": "streak(close > open)",
                    "since": f"bars_since(range >= {WIDE})",
                    "filled": f"ffill(if(range >= {WIDE}, close, 0 / 0))",
                },
                "select": ["sum(run)", "max(run)", "sum(since)", "first(since)", "sum(filled)"],
            },
            engine_settings,
        )
        inside = counted[day == pd.Timestamp(period)]
        got = result.table.iloc[0] if result.table is not None else result.summary.values
        assert int(got["sum_run"]) == int(inside["run"].sum()), period
        assert int(got["max_run"]) == int(inside["run"].max()), period
        assert float(got["sum_since"]) == float(inside["since"].sum()), period
        assert float(got["first_since"]) == float(inside["since"].iloc[0]), period
        assert float(got["sum_filled"]) == pytest.approx(float(inside["filled"].sum()), rel=1e-12)


def test_a_month_of_minutes_reads_back_to_the_event_not_the_first_bar(
    engine_settings, monkeypatch
) -> None:
    """A streak of up minutes on 2024-03-12 reads a few thousand bars back (its run breaks
    within minutes), not the 80,000 from 2024-01-02; a count since a rarer event reads
    further, widening until its event is among the rows."""
    read = _spy_rows_read(monkeypatch)
    every = len(bars_in_scope(_plan({"session": "ETH", "from": "1m"}, engine_settings)).frame)
    query = {"session": "ETH", "from": "1m", "period": "2024-03-12", "select": "max(run)"}
    ask({**query, "map": {"run": "streak(close > open)"}}, engine_settings)
    assert len(read) == 1 and read[0] < every / 10
    read.clear()
    rare = {**query, "map": {"run": f"bars_since({RARE})"}}
    whole = run_on(
        _plan(rare, engine_settings), engine_settings, bars_in_scope(_plan(rare, engine_settings))
    )
    _assert_same(ask(rare, engine_settings), whole, rare)
    assert len(read) > 1 and read == sorted(read)  # widened, each time further back


def _spy_rows_read(monkeypatch) -> list[int]:
    """The number of bars each run of a first stage is given, as the query runs."""
    read: list[int] = []
    original = interpreter.run_on

    def spied(plan, settings, scope, cut=None):
        read.append(len(scope.frame))
        return original(plan, settings, scope, cut)

    monkeypatch.setattr(interpreter, "run_on", spied)
    return read


def _plan(query: dict[str, Any], settings):
    return plan_query(parse_query(query).with_instrument("NQ"), "NQ", settings)


# Running highs and lows of a bar's own column: the stage runs on the rest's rows, and the
# extreme before them is read from the data apart (``barb.script.bars_before``).
EXTREMES: list[dict[str, Any]] = [
    {"map": {"dd": "close - cummax(close)"}, "select": ["min(dd)", "mean(dd)", "count()"]},
    {"map": {"nh": "high > prev(cummax(high))"}, "where": "nh", "select": "count()"},
    {"map": {"lo": "cummin(low)", "v": "cummax(volume)"}, "select": ["last(lo)", "last(v)"]},
    {
        "map": {"r": "cummax(range)", "run": "streak(close > open)"},
        "select": ["max(r)", "max(run)"],
    },
    {"map": {"dd": "close - cummax(close)"}, "sort": "dd asc", "limit": 5},
]


@pytest.mark.parametrize("query", EXTREMES, ids=range(len(EXTREMES)))
def test_running_extremes_answer_as_over_all_history(engine_settings, query) -> None:
    """cummax()/cummin() of a bar's column read on the rest's rows: every field of the
    Result (the number, the warning that history went beyond, said only when the answer from
    all history differs, the rows) is the one over every bar from the first; on minute bars
    built per query and on cached 15-minute and daily bars."""
    said = 0
    for session, bars, periods in (
        ("ETH", "1m", ["2024-01-03", "2024-02-20", "2024-03-11:2024-03-15", "last_30_bars"]),
        ("RTH", "1m", ["2024-02-20", "2024-03"]),
        ("ETH", "15m", ["2024-03-05", "2024-02"]),
        ("ETH", "daily", ["2024-03", "2024-02-26:2024-03-08"]),
    ):
        for period in periods:
            asked = {**query, "session": session, "from": bars, "period": period}
            narrow, whole = _both(asked, engine_settings)
            _assert_same(narrow, whole, asked)
            said += any("went higher" in w or "went lower" in w for w in whole.metadata.warnings)
    assert said  # the history-beyond path is among them


def test_a_drawdown_reads_the_period_s_rows_and_history_s_high_apart(
    engine_settings, minutes, monkeypatch
) -> None:
    """A drawdown on 2024-03-12's minutes reads that day's rows, not the 80,000 from
    2024-01-02; the warning names the highest close before the day, as a loop over every
    earlier bar finds it (its first bar when tied)."""
    read = _spy_rows_read(monkeypatch)
    every = len(bars_in_scope(_plan({"session": "ETH", "from": "1m"}, engine_settings)).frame)
    query = {
        "session": "ETH",
        "from": "1m",
        "period": "2024-03-12",
        "map": {"dd": "close - cummax(close)"},
        "select": "min(dd)",
    }
    result = ask(query, engine_settings)
    assert len(read) == 1 and read[0] < every / 10
    day = (minutes["timestamp"] + pd.Timedelta(hours=6)).dt.normalize()
    earlier = minutes[day < pd.Timestamp("2024-03-12")]
    best, at = -np.inf, None
    for stamp, close in zip(earlier["timestamp"], earlier["close"], strict=True):
        if close > best:
            best, at = close, stamp
    inside = minutes[day == pd.Timestamp("2024-03-12")]
    assert best > inside["close"].iloc[0]  # the case: history went higher
    said = [w for w in result.metadata.warnings if w.startswith("cummax() starts")]
    assert said and f"{best:.10g} on {at:%Y-%m-%d %H:%M}" in said[0], said
