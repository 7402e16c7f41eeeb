"""check() refuses what execute() refuses whatever the data holds, and nothing else (r47c).

check() runs before a plan is shown: a query it passes reaches the person with a Run
button. It had stopped at planning, so 54 of 1,068 queries that execute() refuses with no
data involved (hour() on daily bars, session_high('NOPE'), mean(dayname()), a date minus a
date, year() in a then stage) were shown as plans and failed after Run. It now evaluates the
planned stages over no bar (``barb.period_rows.no_rows``), by the same code as the run.
Each case below is compared with execute() itself over the same hand-made bars.
"""

from __future__ import annotations

import pytest

from barb.frames import Dataset
from barb.interpreter import check, execute
from barb.planning import plan_query
from barb.script.query import parse_query
from barb.settings import EngineSettings
from barb.timeframes import TIMEFRAMES

D = {"session": "RTH", "from": "daily", "period": "2024-02"}
H = {"session": "RTH", "from": "1h", "period": "2024-02"}
M = {"session": "RTH", "from": "1m", "period": "2024-02-05"}
E = {"session": "ETH", "from": "1m", "period": "2024-02-05:2024-02-09"}

# Refused by execute() whatever the bars hold (from r47c's misses.tsv).
REFUSED = [
    {**D, "where": "time() >= '15:00'", "select": "count()"},
    {**D, "group_by": "hour()", "select": "mean(range)"},
    {**D, "map": {"m": "minute()"}, "select": "mean(m)"},
    {**D, "select": "arg_max(time(), high) as t"},
    {**D, "select": "mean(hour('UTC'))"},
    {**D, "group_by": "hour('MSK')", "select": "count()"},
    {**D, "where": "hour('MSK') >= 10", "select": "count()"},
    {"session": "RTH", "from": "weekly", "group_by": "time()", "select": "count()"},
    {**H, "select": "mean(hour('Mars'))"},
    {**D, "map": {"x": "session_high('NOPE')"}, "select": "mean(x)"},
    {**D, "map": {"x": "weekly(high, 1, 'NOPE')"}, "select": "mean(x)"},
    {**D, "map": {"x": "session_high('25:00-26:00')"}, "select": "mean(x)"},
    {**D, "map": {"n": "trading_day('decade')"}, "select": "max(n)"},
    {**D, "where": "close", "select": "count()"},
    {**D, "select": "mean(dayname())"},
    {**D, "map": {"x": "close + 'abc'"}, "select": "mean(x)"},
    {**D, "map": {"x": "if(close, 1, 2)"}, "select": "mean(x)"},
    {**D, "where": "dayname() in ('Mon', 'Xyz')", "select": "count()"},
    {**D, "where": "dayname() > 3", "select": "count()"},
    {**M, "where": "time() == '25:00'", "select": "count()"},
    {**M, "where": "time() == 'noon'", "select": "count()"},
    {**D, "where": "date() >= 'notadate'", "select": "count()"},
    {**D, "where": "date() == '2024-02-30'", "select": "count()"},
    {**D, "map": {"d": "date()"}, "select": "mean(d - prev(d))"},
    {**D, "where": "close > open and volume", "select": "count()"},
    {**H, "map": {"x": "daily(high, 1, 'NOPE')"}, "select": "mean(x)"},
]

# Run by execute(): of varied shapes, some with an empty result, that check() must pass.
PASSED = [
    {**D, "select": "count()"},
    {**D, "where": "close > open", "select": ["count() as up", "mean(range) as r"]},
    {**D, "map": {"wd": "dayname()"}, "group_by": "wd", "select": "mean(range)"},
    {**D, "where": "dayname() in ('Mon', 'Fri')", "select": "count()"},
    {**D, "where": "date() >= '2024-02-12'", "select": ["close"], "sort": "close desc"},
    {**D, "select": ["close", "range"], "sort": "range desc", "limit": 3},
    {**D, "map": {"r": "rsi(close, 14)", "s": "rolling_mean(close, 5)"}, "select": "mean(r)"},
    {**D, "map": {"x": "session_high('RTH')"}, "select": "mean(x)"},
    {**H, "map": {"x": "daily(high)"}, "select": "mean(x)"},
    {**D, "map": {"n": "trading_day('month')"}, "where": "n == 1", "select": ["close"]},
    {**D, "select": "arg_max(date(), high) as d"},
    {**D, "select": "days_between(first(date()), last(date()))"},
    {**D, "select": ["percentile(range, 90) as p90", "median(range) as m"]},
    {**H, "group_by": "hour()", "select": "mean(range)"},
    {**H, "where": "time() >= '15:00'", "select": "count()"},
    {**H, "group_by": "hour('MSK')", "select": "count()"},
    {**M, "where": "time() == '15:59'", "select": ["close"]},
    {**M, "where": "time() == '15:59' and volume < 0", "select": ["close"]},  # empty
    {**M, "group_by": "floor(time(), 30)", "select": ["count() as bars", "first(time())"]},
    {**M, "where": "volume < 0", "select": ["min(time()) as a", "max(time()) as b"]},  # empty
    {
        **E,
        "group_by": "date()",
        "select": "arg_max(time(), high) as t",
        "then": {"select": ["min(t) as earliest", "max(t) as latest"]},
    },
    {
        **E,
        "group_by": "date()",
        "select": "arg_max(time(), high) as t",
        "then": {"map": {"latest": "max(t)"}, "where": "t == latest"},
    },
    {
        **E,
        "where": "volume < 0",  # nothing kept: the then stage reads an empty table
        "group_by": "date()",
        "select": "arg_max(time(), high) as t",
        "then": {"map": {"latest": "max(t)"}, "where": "t == latest"},
    },
    {
        **D,
        "group_by": "week()",
        "select": "max(date()) as d",
        "then": {"map": {"last": "max(d)"}, "where": "d == last"},
    },
    {
        **D,
        "group_by": "dayname()",
        "select": "mean(range) as r",
        "then": {"where": "r > 0", "sort": "r desc", "limit": 1},
    },
    {**D, "join": "fomc", "where": "not fomc", "select": "mean(range)"},
    {"session": "RTH", "from": "weekly", "select": ["close"]},
    {"session": "ETH", "from": "monthly", "select": "mean(range)"},
    {"session": "18:00-00:00", "from": "15m", "period": "2024-02-06", "select": "count()"},
    {**D, "period": "2024-02-10", "select": "count()"},  # a Saturday: the run's to say
    {**D, "period": "2024", "where": "open < open", "group_by": "month()", "select": "mean(open)"},
    # A then stage is the run's to judge: over no row its table's columns and aggregates have
    # no type, and "t == max(t)" was refused as text against 'None' (r47g).
    *(
        {
            **E,
            "group_by": "date()",
            "select": ["arg_max(time(), high) as t", "first(dayname()) as w"],
            "then": {"map": {"x": x}, "select": "count()"},
        }
        for x in ("t == max(t)", "t < min(t)", "if(t >= max(t), 1, 0)", "w == mode(w)")
    ),
]


@pytest.mark.parametrize("query", REFUSED, ids=range(len(REFUSED)))
def test_check_refuses_what_execute_refuses_on_any_data(
    query: dict, engine_settings: EngineSettings
) -> None:
    ran = execute(query, "NQ", settings=engine_settings)
    assert not ran.ok
    checked = check(query, "NQ", settings=engine_settings)
    assert checked is not None, f"check() passed it; execute: {ran.error}"
    assert checked.error.error_type == ran.error.error_type
    assert str(checked.error) == str(ran.error)


@pytest.mark.parametrize("query", PASSED, ids=range(len(PASSED)))
def test_check_passes_what_does_not_fail_for_the_query(
    query: dict, engine_settings: EngineSettings
) -> None:
    assert check(query, "NQ", settings=engine_settings) is None
    ran = execute(query, "NQ", settings=engine_settings)
    assert ran.ok or ran.error.error_type == "InvalidPeriod", ran.error  # the closed day


@pytest.mark.parametrize("session", ["RTH", "ETH", "20:00-02:00"])
def test_the_frame_checked_on_is_the_runs_without_its_rows(
    session: str, engine_settings: EngineSettings
) -> None:
    """The columns and dtypes evaluated on are those of the frame a run reads (a text
    column where the run has numbers would refuse what runs)."""
    loaded = plan_query(parse_query({"from": "daily"}), "NQ", engine_settings).dataset
    dataset = Dataset(instrument=loaded.instrument, bars=loaded.bars)  # nothing cached yet
    for timeframe in TIMEFRAMES:
        empty = dataset.no_bars(session, timeframe)
        assert not len(empty)
        whole = dataset.frame(session, timeframe)
        assert len(whole)
        assert empty.dtypes.to_dict() == whole.dtypes.to_dict(), timeframe
        assert list(empty.columns) == list(whole.columns), timeframe
