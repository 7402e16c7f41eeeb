"""mode(col): the most frequent value, of equally frequent ones the one seen first.

Checked on frames small enough to read (the tie rule, missing values, each kind of value,
the tie warning), and against DuckDB over random frames, where the answer is written as
counts per value and each value's first row (``ORDER BY n DESC, first_row``), grouped by
every grouping path RowGroups has (small integers with gaps, text, several keys with missing
ones).
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

from barb.script.context import EvalContext
from barb.script.evaluator import evaluate
from barb.script.parser import parse_expression

# --- literal answers ---------------------------------------------------------------------------


def test_the_most_frequent_value_and_of_equals_the_first_seen() -> None:
    ctx = tiny(x=[3.0, 1.0, 3.0, 2.0, 1.0, 5.0], t=["10:30", "09:30", "09:30", "10:30", "x", "y"])
    assert agg(ctx, "mode(x)") == 3.0  # 3 and 1 twice each: 3 comes first
    assert agg(ctx, "mode(t)") == "10:30"  # '10:30' and '09:30' twice each
    # Of an expression: 2, 1, 2, 1, 1, 3 (halves away from zero): 1, three times.
    assert agg(ctx, "mode(round(x / 2))") == 1.0


def test_grouped_each_groups_own_mode() -> None:
    ctx = tiny(
        key=[1, 1, 1, 2, 2, 2, 2, 3],
        t=["b", "a", "a", "x", "y", "y", "x", "z"],
        n=[7, 8, 8, 1, 2, 2, 1, 4],
    )
    assert agg(ctx, "mode(t)", ["key"]).tolist() == ["a", "x", "z"]
    assert agg(ctx, "mode(n)", ["key"]).tolist() == [8, 1, 4]


def test_missing_values_are_skipped_and_all_missing_is_empty() -> None:
    ctx = tiny(
        key=[1, 1, 1, 1, 2, 2],
        x=[np.nan, np.nan, 2.0, np.nan, np.nan, np.nan],
        t=[None, "a", None, None, None, None],
    )
    assert agg(ctx, "mode(x)") == 2.0  # NaN is the commonest, and no value
    got = agg(ctx, "mode(x)", ["key"])
    assert got.iloc[0] == 2.0 and math.isnan(got.iloc[1])
    text = agg(ctx, "mode(t)", ["key"])
    assert text.iloc[0] == "a" and pd.isna(text.iloc[1])
    only_missing = tiny(x=[np.nan, np.nan])
    assert math.isnan(agg(only_missing, "mode(x)"))
    empty = tiny(x=[1.0])
    empty.frame = empty.frame.iloc[0:0]
    assert math.isnan(agg(empty, "mode(x)"))


def test_values_of_every_kind_come_back_as_they_are() -> None:
    """A weekday stays an ordered weekday (a second stage groups it Monday first), a date a
    date, a true/false a true/false."""
    ctx = tiny(key=[1, 1, 1, 2, 2], flag=[True, False, False, True, True])
    ctx.frame["weekday"] = evaluate(parse_expression("dayname()"), ctx)
    ctx.frame["day"] = pd.to_datetime(["2024-01-05", "2024-01-02", "2024-01-02", None, None])
    weekdays = agg(ctx, "mode(weekday)", ["key"])
    assert isinstance(weekdays.dtype, pd.CategoricalDtype) and weekdays.dtype.ordered
    assert weekdays.tolist() == ["Tue", "Tue"]
    days = agg(ctx, "mode(day)", ["key"])
    assert days.iloc[0] == pd.Timestamp("2024-01-02") and pd.isna(days.iloc[1])
    assert agg(ctx, "mode(day)") == pd.Timestamp("2024-01-02")
    assert agg(ctx, "mode(flag)", ["key"]).tolist() == [False, True]


def test_ties_are_said_with_the_values_tied() -> None:
    ctx = tiny(key=[1, 1, 1, 1, 2, 2, 2], t=["b", "a", "a", "b", "x", "x", "y"])
    assert agg(ctx, "mode(t)") == "b"  # 'a', 'b' and 'x' twice each: 'b' first
    assert ctx.warnings == [
        "3 values of t are equally frequent (2 rows each): b is shown (the earliest); also a, x."
    ]
    ctx.warnings.clear()
    assert agg(ctx, "mode(t)", ["key"]).tolist() == ["b", "x"]
    assert ctx.warnings == [
        "In 1 of 2 key groups (50.0%), two or more values of t are equally frequent: mode "
        "gives each the earliest of them only (1: b, also a (2 each))."
    ]
    untied = tiny(t=["a", "b", "b"])
    assert agg(untied, "mode(t)") == "b" and untied.warnings == []


# --- against DuckDB ---------------------------------------------------------------------------


@pytest.fixture
def bars() -> EvalContext:
    frame = make_daily(300, seed=5)  # closes missing on rows 3 and 17
    frame.loc[frame.index % 11 == 0, "close"] = np.nan
    frame["rn"] = np.arange(len(frame))
    frame["level"] = np.floor(frame["close"] / 2)  # repeats, with missing values
    frame["wk"] = frame["timestamp"] - pd.to_timedelta(frame["timestamp"].dt.weekday, unit="D")
    frame.loc[frame.index % 13 == 0, "wk"] = pd.NaT
    frame["month"] = frame["timestamp"].dt.month  # small integers: the offset path
    frame["quarter_gap"] = np.where(frame["month"] % 2 == 0, frame["month"], 99)  # sparse span
    frame["name"] = frame["timestamp"].dt.day_name()  # text: the factorize path
    frame["bucket"] = np.where(frame.index % 7 == 0, np.nan, frame.index % 3)  # missing keys
    frame["up"] = frame["close"] > frame["open"]
    return make_context(frame, step="select")


def duck_mode(frame: pd.DataFrame, keys: list[str], column: str) -> pd.DataFrame:
    """Per group: the value with the most rows, of equals the one whose first row is first."""
    con = duckdb.connect()
    con.register("bars", frame)
    present = " AND ".join(f"{k} IS NOT NULL" for k in keys) or "TRUE"
    listed = "".join(f"{k}, " for k in keys)
    if not keys:
        return con.execute(
            f"""SELECT (SELECT {column} FROM bars WHERE {column} IS NOT NULL
                        GROUP BY {column} ORDER BY count(*) DESC, min(rn) LIMIT 1) AS v"""
        ).df()
    on = " AND ".join(f"g.{k} = c.{k}" for k in keys)
    return con.execute(
        f"""
        WITH c AS (SELECT {listed}{column} AS v, count(*) AS n, min(rn) AS f FROM bars
                   WHERE {present} AND {column} IS NOT NULL GROUP BY {listed}{column}),
             g AS (SELECT DISTINCT {", ".join(keys)} FROM bars WHERE {present})
        SELECT {", ".join(f"g.{k}" for k in keys)}, first(c.v ORDER BY c.n DESC, c.f) AS v
        FROM g LEFT JOIN c ON {on} GROUP BY ALL ORDER BY ALL
        """
    ).df()


def same(got: list, want: list) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if pd.isna(w):
            assert pd.isna(g)
        elif isinstance(w, float | np.floating):
            assert float(g) == w
        else:
            assert pd.Timestamp(g) == pd.Timestamp(w) if isinstance(w, pd.Timestamp) else g == w


@pytest.mark.parametrize("column", ["level", "name", "wk", "up"])
@pytest.mark.parametrize("keys", [[], ["month"], ["quarter_gap"], ["name"], ["bucket", "up"]])
def test_against_duckdb(bars: EvalContext, column: str, keys: list[str]) -> None:
    got = agg(bars, f"mode({column})", keys or None)
    want = duck_mode(bars.frame, keys, column)
    if not keys:
        same([got], [want["v"].iloc[0]])
        return
    if len(keys) == 1:
        assert list(got.index) == list(want[keys[0]])
    else:
        assert list(got.index) == list(zip(*(want[k] for k in keys), strict=True))
    same(got.tolist(), want["v"].tolist())
