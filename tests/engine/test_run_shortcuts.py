"""The cheaper ways a run does a thing give what the plain ways gave: a ranking's stable
order, the rows a where kept, and the clock readings skipped when a query calls no hour()
or time(). (That every answer and warning stays byte-identical is
``bench/answer_dump.py``'s diff, docs/benchmarks.md.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from barb.caveats.zone_midnight import (
    clock_columns,
    group_clocks,
    text_clock_zones,
    zone_clock_columns,
)
from barb.frames import masked_values, take_rows
from barb.interpreter import plan_query
from barb.script.query import parse_query
from barb.settings import EngineSettings
from barb.stages import _stable_order


def test_a_ranking_orders_rows_as_a_stable_pandas_sort() -> None:
    rng = np.random.default_rng(3)
    for trial in range(600):
        n = int(rng.integers(0, 40))
        if trial % 3 == 2:
            values: np.ndarray = rng.integers(-3, 4, n)  # ties, no empty value
        else:
            values = rng.integers(-3, 4, n).astype(float) if trial % 3 else rng.normal(size=n)
            values[rng.random(n) < 0.2] = np.nan
            values[rng.random(n) < 0.05] = -0.0
            values[rng.random(n) < 0.05] = np.inf
        for ascending in (True, False):
            key = pd.Series(values)
            expected = key.sort_values(ascending=ascending, kind="stable", na_position="last")
            np.testing.assert_array_equal(
                _stable_order(values, ascending), expected.index.to_numpy()
            )


def test_rows_kept_are_each_column_taken_apart() -> None:
    rng = np.random.default_rng(7)
    n = 500
    frame = pd.DataFrame(
        {
            "timestamp": pd.date_range("2024-01-02 09:30", periods=n, freq="min"),
            "open": rng.normal(size=n),
            "close": rng.normal(size=n),
            "volume": rng.integers(0, 100, n),
            "day": pd.Categorical(rng.choice(["Mon", "Tue", "Wed"], n)),
        }
    )
    frame["up"] = pd.array(rng.random(n) < 0.5, dtype="boolean")
    frame.loc[::7, "up"] = pd.NA
    frame["yr"] = np.full(n, 2024, dtype=np.int32)
    for keep in (rng.random(n) < 0.3, np.zeros(n, dtype=bool), rng.random(n) < 0.95):
        at = np.flatnonzero(keep)
        apart = pd.DataFrame({name: masked_values(frame[name], at) for name in frame.columns})
        pd.testing.assert_frame_equal(take_rows(frame, keep), apart)


CLOCK_QUERIES: list[tuple[dict[str, Any], bool]] = [
    ({"session": "RTH", "from": "5m", "map": {"r": "rsi(close, 14)"}}, False),
    (
        {"session": "ETH", "from": "1m", "where": "close > ema(close, 50)", "select": "count()"},
        False,
    ),
    (
        {
            "session": "ETH",
            "from": "1h",
            "map": {"t": "hour() * 60 + minute()"},
            "group_by": "date()",
            "select": "arg_max(t, high) as hi_t",
        },
        True,
    ),
    (
        {
            "session": "RTH",
            "from": "15m",
            "map": {"m": "hour('MSK') * 60 + minute('MSK')"},
            "select": ["mean(m)"],
        },
        True,
    ),
    ({"session": "RTH", "from": "5m", "group_by": "hour('MSK')", "select": "count()"}, True),
    (
        {
            "session": "ETH",
            "from": "1h",
            "group_by": "date()",
            "select": "arg_max(time('MSK'), high) as t",
            "then": {"group_by": "t", "select": "count()"},
        },
        True,
    ),
]


@pytest.mark.parametrize(("query", "clocked"), CLOCK_QUERIES)
def test_a_query_without_hour_or_time_has_no_clock_to_read(
    engine_settings: EngineSettings, query: dict[str, Any], clocked: bool
) -> None:
    plan = plan_query(parse_query(query).with_instrument("NQ"), "NQ", engine_settings)
    assert plan.reads_clock is clocked
    found = [
        clock_columns(plan),
        text_clock_zones(plan),
        zone_clock_columns(plan),
        group_clocks(plan),
    ]
    if plan.then is not None:
        found += [clock_columns(plan, then=True), text_clock_zones(plan, then=True)]
    if not clocked:  # what the run skips reading is nothing
        assert not any(found)
    else:
        assert any(found)
