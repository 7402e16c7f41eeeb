"""sar(), supertrend() and obv() are paths from the data's first bar: a stage that reads them
runs on the period's rows, their values the kept whole-history path's at the rows' offset
(``barb.script.path_cache.served_path``), not over every bar since the first. "How many
minutes closed above the SAR on 2024-02-20", "OBV's last value in March", over ETH and RTH,
1- and 5-minute and daily bars: every field of the Result, and each bar's value, the same as
the plan run over every bar from the first, and as TA-Lib's SAR and OBV over the bars from
the first one."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
import talib
from asking import ask
from test_event_history import _assert_same

from barb.interpreter import run, run_on
from barb.period_rows import bars_in_scope
from barb.planning import plan_query
from barb.result import Result
from barb.script import path_cache
from barb.script.query import parse_query

PATHS = {"s": "sar(0.02, 0.2)", "t": "supertrend(10, 3)", "o": "obv()"}


@pytest.fixture
def empty_cache():
    path_cache._kept.clear()
    path_cache._served.clear()
    yield
    path_cache._kept.clear()
    path_cache._served.clear()


def _both(query: dict[str, Any], settings, instrument: str = "NQ") -> tuple[Result, Result]:
    """The plan run as the engine runs it (the period's rows), and over every bar."""
    plan = plan_query(parse_query(query).with_instrument(instrument), instrument, settings)
    assert plan.event_reach is not None and plan.event_reach.back is not None
    return run(plan, settings), run_on(plan, settings, bars_in_scope(plan))


QUERIES: list[dict[str, Any]] = [
    {"map": PATHS},  # a listing: every bar's three values
    {"map": PATHS, "where": "close > s and prev(close) <= prev(s)", "select": "count()"},
    {"map": {"o": "obv()", "d": "o - prev(o, 3)"}, "select": ["last(o)", "max(d)"]},
    {"where": "close > supertrend(10, 3)", "select": ["count()", "first(close)"]},
    # A then stage's sar() over the first stage's rows reads them from their own first row,
    # as it did when the first stage ran over every bar.
    {
        "map": {"s": "sar(0.02, 0.2)"},
        "then": {"map": {"t": "sar(0.02, 0.2)", "u": "obv()"}, "select": ["last(t)", "sum(u)"]},
    },
]


@pytest.mark.parametrize("query", QUERIES, ids=range(len(QUERIES)))
def test_each_period_is_the_plan_over_every_bar(empty_cache, engine_settings, query) -> None:
    """Each period's Result (summary, warnings, the rows and their values) is the plan's run
    over every bar from the first: ETH and RTH (RTH minutes are every RTH minute since the
    first, as over all history), 1- and 5-minute and daily bars, a day, a week, a month, the
    data's first and last days."""
    periods = ["2024-01-02", "2024-02-20", "2024-03-11:2024-03-15", "2024-03", "last_30_bars"]
    for session in ("ETH", "RTH"):
        for bars in ("1m", "5m", "daily"):
            for period in periods if bars != "daily" else ["2024-02", "2024-03-11:2024-03-28"]:
                asked = {**query, "session": session, "from": bars, "period": period}
                _assert_same(*_both(asked, engine_settings), asked)


def test_the_rows_are_talib_s_from_the_first_bar(empty_cache, engine_settings, minutes) -> None:
    """Each minute's SAR and OBV on 2024-02-20, asked before and after another day (the path
    kept, then served at another offset), is TA-Lib's over every ETH minute since the first."""
    sar = talib.SAR(minutes["high"].to_numpy(), minutes["low"].to_numpy(), 0.02, 0.2)
    obv = talib.OBV(minutes["close"].to_numpy(), minutes["volume"].to_numpy(dtype=np.float64))
    day = (minutes["timestamp"] + pd.Timedelta(hours=6)).dt.normalize()
    for period in ("2024-02-20", "2024-03-27", "2024-02-20"):
        listed = ask(
            {"session": "ETH", "from": "1m", "period": period, "map": PATHS}, engine_settings
        ).table
        inside = (day == pd.Timestamp(period)).to_numpy()
        assert listed is not None and len(listed) == inside.sum()
        np.testing.assert_array_equal(listed["timestamp"], minutes["timestamp"][inside])
        # Barb's loop and TA-Lib's C round the same steps apart by an ulp at most.
        np.testing.assert_allclose(listed["s"].to_numpy(), sar[inside], rtol=1e-12, atol=0)
        np.testing.assert_array_equal(listed["o"].to_numpy(), obv[inside])
    assert path_cache._served  # served from the kept path, not run over every bar
