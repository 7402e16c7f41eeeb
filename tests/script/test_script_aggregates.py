"""Aggregates, ungrouped and grouped, against the same query in DuckDB SQL."""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pandas as pd
import pytest
from script_frames import make_context, make_daily

from barb.script.context import EvalContext
from barb.script.evaluator import evaluate, evaluate_aggregate, evaluate_select
from barb.script.parser import parse_expression

# Barb Script aggregate → the same in DuckDB (which reads NaN in pandas frames as NULL).
PAIRS = [
    ("mean(range)", "avg(range)"),
    ("sum(volume)", "coalesce(sum(volume), 0)"),
    ("max(high)", "max(high)"),
    ("min(low)", "min(low)"),
    ("std(close)", "stddev_samp(close)"),
    ("median(close)", "median(close)"),
    ("count()", "count(*)"),
    ("count(close)", "count(close)"),
    ("count(close > open)", "count(*) filter (where close > open)"),
    ("percentile(range, 90)", "quantile_cont(range, 0.9)"),
    ("percentile(close, 0)", "quantile_cont(close, 0.0)"),
    ("percentile(close, 12.5)", "quantile_cont(close, 0.125)"),
    ("correlation(range, volume)", "corr(range, volume)"),
    ("correlation(close, open)", "corr(close, open)"),
    # Both bias-corrected sample estimators (pandas' skew and kurt; excess kurtosis).
    ("skew(close)", "skewness(close)"),
    ("skew(range)", "skewness(range)"),
    ("kurt(close)", "kurtosis(close)"),
    ("kurt(volume)", "kurtosis(volume)"),
    # A comparison with a missing value is unknown, as in SQL: the share skips those rows.
    ("mean(close > open)", "avg((close > open)::int)"),
    ("mean(close > open and volume > 0)", "avg((close > open and volume > 0)::int)"),
    ("mean(not (close > open))", "avg((not (close > open))::int)"),
    ("mean(close > open or volume > 0)", "avg((close > open or volume > 0)::int)"),
    ("sum(close > open)", "sum((close > open)::int)"),
    ("sum(volume) / count()", "sum(volume) / count(*)"),
    ("max(high) - min(low)", "max(high) - min(low)"),
    ("round(mean(range), 1)", "round(avg(range), 1)"),
    ("mean(high - low) * 2 + 1", "avg(high - low) * 2 + 1"),
]


@pytest.fixture
def bars() -> EvalContext:
    frame = make_daily(120, seed=11)
    # Group keys: a weekday name, a two-valued flag, and a key with missing values.
    frame["dow"] = evaluate(parse_expression("dayname()"), make_context(frame))
    frame["up"] = frame["close"] > frame["open"]
    frame["bucket"] = np.where(frame.index % 7 == 0, np.nan, frame.index % 3)
    return make_context(frame, step="select")


def sql(frame: pd.DataFrame, query: str) -> pd.DataFrame:
    con = duckdb.connect()
    plain = frame.copy()
    plain["dow"] = plain["dow"].astype(object)
    con.register("bars", plain)
    return con.execute(query).df()


def close_enough(got: float, want: float) -> bool:
    if want is None or (isinstance(want, float) and math.isnan(want)):
        return got is None or math.isnan(got)
    return got == pytest.approx(want, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize(("barb", "duck"), PAIRS, ids=[p[0] for p in PAIRS])
def test_ungrouped(bars: EvalContext, barb: str, duck: str) -> None:
    got = evaluate_aggregate(parse_expression(barb), bars)
    want = sql(bars.frame, f"select {duck} as v from bars")["v"].iloc[0]
    assert not isinstance(got, np.generic)  # a plain Python scalar
    assert close_enough(float(got), float(want))


@pytest.mark.parametrize(("barb", "duck"), PAIRS, ids=[p[0] for p in PAIRS])
def test_grouped_by_weekday(bars: EvalContext, barb: str, duck: str) -> None:
    got = evaluate_aggregate(parse_expression(barb), bars, ["dow"])
    want = sql(
        bars.frame,
        f"select dow, {duck} as v from bars group by dow "
        "order by list_position(['Mon','Tue','Wed','Thu','Fri'], dow)",
    )
    assert list(got.index) == list(want["dow"])  # Monday first, not alphabetical
    assert got.index.name == "dow"
    for g, w in zip(got.tolist(), want["v"].tolist(), strict=True):
        assert close_enough(float(g), float(w))


@pytest.mark.parametrize(("barb", "duck"), PAIRS, ids=[p[0] for p in PAIRS])
def test_grouped_by_two_keys_with_missing(bars: EvalContext, barb: str, duck: str) -> None:
    got = evaluate_aggregate(parse_expression(barb), bars, ["bucket", "up"])
    want = sql(
        bars.frame,
        f"select bucket, up, {duck} as v from bars where bucket is not null "
        "group by bucket, up order by bucket, up",
    )
    assert got.index.names == ["bucket", "up"]
    assert list(got.index) == list(zip(want["bucket"], want["up"], strict=True))
    for g, w in zip(got.tolist(), want["v"].tolist(), strict=True):
        assert close_enough(float(g), float(w))


def test_group_key_may_be_selected(bars: EvalContext) -> None:
    got = evaluate_aggregate(parse_expression("dow"), bars, ["dow"])
    assert list(got) == ["Mon", "Tue", "Wed", "Thu", "Fri"]
    constant = evaluate_aggregate(parse_expression("1"), bars, ["dow"])
    assert constant.tolist() == [1] * 5


def test_max_and_min_of_dates(bars: EvalContext) -> None:
    assert evaluate_aggregate(parse_expression("max(date())"), bars) == pd.Timestamp(
        bars.frame["trading_date"].max()
    )
    firsts = evaluate_aggregate(parse_expression("min(date())"), bars, ["dow"])
    assert firsts.iloc[0] == bars.frame["trading_date"].iloc[0]


def test_empty_frame() -> None:
    frame = make_daily(10).iloc[:0].reset_index(drop=True)
    ctx = make_context(frame)
    assert evaluate_aggregate(parse_expression("count()"), ctx) == 0
    assert evaluate_aggregate(parse_expression("sum(volume)"), ctx) == 0
    assert math.isnan(evaluate_aggregate(parse_expression("mean(range)"), ctx))
    assert math.isnan(evaluate_aggregate(parse_expression("percentile(range, 50)"), ctx))
    grouped = evaluate_aggregate(parse_expression("mean(range)"), ctx, ["volume"])
    assert len(grouped) == 0
    grouped = evaluate_aggregate(parse_expression("count()"), ctx, ["volume", "open"])
    assert len(grouped) == 0 and grouped.index.names == ["volume", "open"]


def test_correlation_needs_spread() -> None:
    frame = pd.DataFrame({"a": [1.0, 1.0, 1.0], "b": [1.0, 2.0, 3.0], "k": [1, 1, 2]})
    ctx = make_context(frame)
    assert math.isnan(evaluate_aggregate(parse_expression("correlation(a, b)"), ctx))
    grouped = evaluate_aggregate(parse_expression("correlation(b, b)"), ctx, ["k"])
    assert grouped.iloc[0] == pytest.approx(1.0)
    assert math.isnan(grouped.iloc[1])  # one row: no correlation


def test_grouped_sum_of_whole_numbers_stays_whole(bars: EvalContext) -> None:
    assert evaluate_aggregate(parse_expression("sum(volume)"), bars, ["dow"]).dtype == np.int64
    assert evaluate_aggregate(parse_expression("count()"), bars, ["dow"]).dtype == np.int64


def test_a_statistic_hands_back_what_it_was_taken_over(bars: EvalContext) -> None:
    """Its sample size reads these, rather than evaluating abs(close - open) a second time."""
    expr = parse_expression(
        "mean(abs(close - open)) + correlation(range, prev(close)) + first(low)"
    )
    answer = evaluate_select(expr, bars, ["dow"])
    frame = bars.frame
    mean, correlation, _ = (expr.left.left, expr.left.right, expr.right)
    assert set(answer.samples) == {mean, correlation}  # first() is no sample statistic
    (body,) = answer.samples[mean]
    np.testing.assert_array_equal(body.to_numpy(), (frame["close"] - frame["open"]).abs())
    first, second = answer.samples[correlation]
    np.testing.assert_array_equal(first.to_numpy(), frame["range"].to_numpy())
    np.testing.assert_array_equal(second.to_numpy(), frame["close"].shift().to_numpy())
    assert answer.rows.ngroups == 5
    # arg_max skips the rows whose val is missing, not those of the arg it names.
    picked = parse_expression("arg_max(dow, prev(close))")
    (val,) = evaluate_select(picked, bars, ["dow"]).samples[picked]
    np.testing.assert_array_equal(val.to_numpy(), frame["close"].shift().to_numpy())


def test_skew_and_kurt_edges_are_pandas() -> None:
    """Too few values give n/a (skew needs 3, kurt 4), equal values 0, as pandas' skew and
    kurt; missing values are skipped."""
    frame = pd.DataFrame(
        {
            "a": [2.5, 2.5, 2.5, 2.5, 1.0, 2.0, np.nan, 7.0, 1.0, 2.0, 4.0, 9.0],
            "k": [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3],
        }
    )
    ctx = make_context(frame)
    for name in ("skew", "kurt"):
        got = evaluate_aggregate(parse_expression(f"{name}(a)"), ctx, ["k"])
        want = [getattr(group, name)() for _, group in frame.groupby("k")["a"]]
        assert got.tolist() == pytest.approx(want, nan_ok=True)
        whole = evaluate_aggregate(parse_expression(f"{name}(a)"), ctx)
        assert whole == pytest.approx(getattr(frame["a"], name)())
    # Group 1 is flat (0 for both), group 2 has 3 values (a skew, no kurt).
    assert evaluate_aggregate(parse_expression("skew(a)"), ctx, ["k"]).iloc[0] == 0
    assert math.isnan(evaluate_aggregate(parse_expression("kurt(a)"), ctx, ["k"]).iloc[1])


def test_skew_and_kurt_do_not_depend_on_the_scale() -> None:
    """Returns as fractions of a basis point have the shape of the same returns in points
    (pandas' skew of values near 1e-6 is 0: it zeroes moments under 1e-14)."""
    values = np.random.default_rng(3).standard_normal(300) ** 2
    frame = pd.DataFrame({"a": values, "tiny": values * 1e-6})
    ctx = make_context(frame)
    for name in ("skew", "kurt"):
        want = getattr(frame["a"], name)()
        assert evaluate_aggregate(parse_expression(f"{name}(tiny)"), ctx) == pytest.approx(want)
