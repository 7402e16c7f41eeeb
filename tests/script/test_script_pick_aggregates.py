"""first, last, arg_max and arg_min: one row picked per group, in time order.

Checked three ways: literal answers on frames small enough to read (the tie rule, missing
values), DuckDB's ordered aggregates (``first(x ORDER BY …)``) over random frames, grouped
by every grouping path RowGroups has (small integers with gaps, factorized names, several
keys with missing ones).
"""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pandas as pd
import pytest
from script_frames import aggregate as agg
from script_frames import make_context, make_daily
from script_frames import tiny_context as tiny

from barb.errors import QueryError
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate
from barb.script.parser import parse_expression

# --- literal answers ---------------------------------------------------------------------------


def test_ties_go_to_the_earliest_row() -> None:
    ctx = tiny(
        day=[1, 1, 1, 1, 2, 2, 2],
        hour=[9, 10, 11, 12, 9, 10, 11],
        high=[5.0, 7.0, 7.0, 6.0, 3.0, 3.0, 3.0],
        low=[2.0, 1.0, 4.0, 1.0, 3.0, 2.0, 2.0],
    )
    assert agg(ctx, "arg_max(hour, high)", ["day"]).tolist() == [10, 9]
    assert agg(ctx, "arg_min(hour, low)", ["day"]).tolist() == [10, 10]
    assert agg(ctx, "arg_max(hour, high)") == 10  # ungrouped: the first 7.0
    assert agg(ctx, "arg_min(hour, low)") == 10  # 1.0 at 10 and at 12


def test_each_group_gives_exactly_one_answer_so_days_are_counted_once() -> None:
    """'Which hour makes the high': counting the picked hours counts every day once, where
    counting the bars that equal the day's high counts a tied day twice."""
    ctx = tiny(
        day=[1, 1, 1, 2, 2, 2, 3, 3, 3],
        hour=[9, 10, 11, 9, 10, 11, 9, 10, 11],
        high=[4.0, 4.0, 1.0, 2.0, 8.0, 8.0, 3.0, 1.0, 2.0],
    )
    picked = agg(ctx, "arg_max(hour, high)", ["day"])
    assert picked.tolist() == [9, 10, 9]
    assert picked.value_counts().sum() == 3
    frame = ctx.frame
    touching = frame["high"] == frame.groupby("day")["high"].transform("max")
    assert touching.sum() == 5  # the double count arg_max avoids


def test_first_and_last_take_the_edge_row_even_where_it_is_missing() -> None:
    """first(date()) and first(ret) side by side come from one row: a missing value on the
    group's first row is that row's, not the next row's (the first day of data has no ret)."""
    ctx = tiny(
        key=[1, 1, 1, 2, 2, 3, 3],
        x=[np.nan, 2.0, np.nan, 4.0, 5.0, np.nan, 7.0],
    )
    first, last = agg(ctx, "first(x)", ["key"]), agg(ctx, "last(x)", ["key"])
    assert math.isnan(first.iloc[0]) and first.iloc[1] == 4.0 and math.isnan(first.iloc[2])
    assert math.isnan(last.iloc[0]) and last.tolist()[1:] == [5.0, 7.0]
    assert math.isnan(agg(ctx, "first(x)"))
    assert agg(ctx, "last(x)") == 7.0
    assert agg(ctx, "first(key)", ["key"]).tolist() == [1, 2, 3]


def test_rows_with_a_missing_val_are_never_picked() -> None:
    ctx = tiny(key=[1, 1, 1, 2], arg=[10, 20, 30, 40], val=[np.nan, 1.0, np.nan, np.nan])
    got = agg(ctx, "arg_max(arg, val)", ["key"])
    assert got.iloc[0] == 20 and math.isnan(got.iloc[1])


def test_empty_input_gives_an_empty_value() -> None:
    ctx = tiny(x=[1.0, 2.0])
    ctx.frame = ctx.frame.iloc[0:0]
    assert math.isnan(agg(ctx, "first(x)"))
    assert math.isnan(agg(ctx, "arg_max(x, x)"))


def test_values_of_every_kind_come_back_as_they_are() -> None:
    ctx = tiny(
        key=[1, 1, 2, 2],
        val=[1.0, 3.0, 9.0, 2.0],
        name=["a", "b", "c", "d"],
        flag=[True, False, False, True],
    )
    ctx.frame["weekday"] = evaluate(parse_expression("dayname()"), ctx)
    assert agg(ctx, "arg_max(name, val)", ["key"]).tolist() == ["b", "c"]
    assert agg(ctx, "first(weekday)", ["key"]).tolist() == ["Tue", "Tue"]
    assert agg(ctx, "last(flag)", ["key"]).tolist() == [False, True]
    stamps = agg(ctx, "arg_min(timestamp, val)", ["key"])
    assert list(stamps) == [pd.Timestamp("2024-01-02 09:30"), pd.Timestamp("2024-01-02 09:33")]
    # A date as the value to maximise: the latest timestamp's name.
    assert agg(ctx, "arg_max(name, timestamp)") == "d"
    assert agg(ctx, "last(timestamp)") == pd.Timestamp("2024-01-02 09:33")


def test_text_cannot_be_maximised() -> None:
    ctx = tiny(name=["a", "b"], val=[1.0, 2.0])
    with pytest.raises(QueryError, match="a number or a date"):
        agg(ctx, "arg_max(val, name)")


def test_picking_aggregates_stay_in_select() -> None:
    ctx = tiny(x=[1.0, 2.0])
    with pytest.raises(QueryError, match="aggregate"):
        evaluate(parse_expression("first(x)"), ctx)


# --- against DuckDB's ordered aggregates ----------------------------------------------------------

_HAS_CLOSE = "FILTER (WHERE close IS NOT NULL)"
# Barb Script → DuckDB; `rn` is the row's position (time order), NaN is NULL in DuckDB.
PAIRS = [
    ("first(close)", "first(close ORDER BY rn)"),  # DuckDB's first keeps a NULL
    ("last(close)", "last(close ORDER BY rn)"),
    ("first(open)", "first(open ORDER BY rn)"),
    ("last(volume)", "last(volume ORDER BY rn)"),
    ("arg_max(rn, volume)", "first(rn ORDER BY volume DESC, rn)"),
    ("arg_min(rn, volume)", "first(rn ORDER BY volume, rn)"),
    ("arg_max(open, close)", f"first(open ORDER BY close DESC, rn) {_HAS_CLOSE}"),
    ("arg_min(high, round(close))", f"first(high ORDER BY round(close), rn) {_HAS_CLOSE}"),
]


@pytest.fixture
def bars() -> EvalContext:
    frame = make_daily(300, seed=5)  # closes missing on rows 3 and 17
    frame.loc[frame.index % 11 == 0, "close"] = np.nan
    frame["rn"] = np.arange(len(frame))
    frame["month"] = frame["timestamp"].dt.month  # small integers: the offset path
    frame["quarter_gap"] = np.where(frame["month"] % 2 == 0, frame["month"], 99)  # sparse span
    frame["name"] = frame["timestamp"].dt.day_name()  # text: the factorize path
    frame["bucket"] = np.where(frame.index % 7 == 0, np.nan, frame.index % 3)  # missing keys
    frame["up"] = frame["close"] > frame["open"]
    return make_context(frame, step="select")


def duck(frame: pd.DataFrame, keys: list[str], expr: str) -> pd.DataFrame:
    con = duckdb.connect()
    con.register("bars", frame)
    group = ", ".join(keys)
    where = " AND ".join(f"{k} IS NOT NULL" for k in keys) or "TRUE"
    select = f"{group}, " if keys else ""
    order = f"ORDER BY {group}" if keys else ""
    tail = f"GROUP BY {group} {order}" if keys else ""
    return con.execute(f"SELECT {select}{expr} AS v FROM bars WHERE {where} {tail}").df()


def same(got: list, want: list) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if w is None or (isinstance(w, float) and math.isnan(w)):
            assert g is None or (isinstance(g, float) and math.isnan(g))
        else:
            assert float(g) == pytest.approx(float(w), rel=1e-12)


@pytest.mark.parametrize(("barb", "sql"), PAIRS, ids=[p[0] for p in PAIRS])
@pytest.mark.parametrize("keys", [[], ["month"], ["quarter_gap"], ["name"], ["bucket", "up"]])
def test_against_duckdb(bars: EvalContext, barb: str, sql: str, keys: list[str]) -> None:
    got = agg(bars, barb, keys or None)
    want = duck(bars.frame, keys, sql)
    if not keys:
        same([got], [want["v"].iloc[0]])
        return
    if len(keys) == 1:
        assert list(got.index) == list(want[keys[0]])
    else:
        assert list(got.index) == list(zip(*(want[k] for k in keys), strict=True))
    same(got.tolist(), want["v"].tolist())
