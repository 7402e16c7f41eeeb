"""Operators and null handling, checked against plain Python over the same rows."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from script_frames import make_context

from barb.errors import ArgumentError, TypeMismatch, UnknownColumn, UnknownFunction
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate, evaluate_aggregate
from barb.script.parser import parse_expression


def run(text: str, ctx: EvalContext) -> pd.Series:
    return evaluate(parse_expression(text), ctx)


def values(frame: pd.DataFrame, column: str) -> list[float]:
    return [float(v) for v in frame[column]]


def nan_equal(actual: pd.Series, expected: list[float]) -> None:
    assert len(actual) == len(expected)
    for got, want in zip(actual.tolist(), expected, strict=True):
        if isinstance(want, float) and math.isnan(want):
            assert isinstance(got, float) and math.isnan(got)
        else:
            assert got == pytest.approx(want)


@pytest.fixture
def small() -> EvalContext:
    frame = pd.DataFrame(
        {
            "a": [1.0, 2.0, np.nan, 4.0, 0.0],
            "b": [2.0, 0.0, 1.0, np.nan, 0.0],
            "i": np.array([3, 4, 5, 6, 7], dtype=np.int64),
            "s": pd.Series(["x", "y", None, "x", "z"], dtype=object),
            "t": pd.to_datetime(["2024-03-14", "2024-03-15", None, "2024-03-18", "2024-03-19"]),
        }
    )
    return make_context(frame)


def test_arithmetic_matches_python(ctx: EvalContext) -> None:
    frame = ctx.frame
    got = run("(high - low) * 2 + close / 4 - open % 3", ctx)
    want = [
        (h - lo) * 2 + c / 4 - math.fmod(o, 3) if not math.isnan(c) else float("nan")
        for h, lo, c, o in zip(
            values(frame, "high"),
            values(frame, "low"),
            values(frame, "close"),
            values(frame, "open"),
            strict=True,
        )
    ]
    nan_equal(got, want)
    assert got.index.equals(frame.index)


def test_precedence_and_power(small: EvalContext) -> None:
    assert run("2 + 3 * 4 ** 2", small).iloc[0] == 50
    assert run("-2 ** 2", small).iloc[0] == -4
    assert run("2 ** -1", small).iloc[0] == 0.5
    assert run("-7 % 3", small).iloc[0] == 2  # sign of the divisor, as in Python


def test_integers_stay_integers(small: EvalContext) -> None:
    assert run("i * 60 + i - 1", small).dtype == np.int64
    assert run("i % 2", small).dtype == np.int64
    assert run("i / 2", small).dtype == np.float64
    # A condition counts 1/0; an unknown one (a missing) is missing.
    nan_equal(run("(a > 1) + 0", small), [0.0, 1.0, float("nan"), 1.0, 0.0])
    assert run("(i > 3) + 0", small).tolist() == [0, 1, 1, 1, 1]


def test_literals_broadcast(small: EvalContext) -> None:
    assert run("1 + 1", small).tolist() == [2] * 5
    assert run("'x'", small).tolist() == ["x"] * 5
    assert run("true", small).dtype == np.bool_


def test_division_by_zero_is_nan_and_warned(small: EvalContext) -> None:
    nan_equal(run("a / b", small), [0.5, float("nan"), float("nan"), float("nan"), float("nan")])
    # Rows 1 and 4 divide by zero (row 2's numerator is missing anyway).
    assert small.warnings == [
        "Division by zero in 'a / b' for 2 values; those results are empty (NaN)."
    ]
    run("a / b", small)
    assert len(small.warnings) == 1  # the same warning once
    nan_equal(run("i % b", small), [1.0, float("nan"), 0.0, float("nan"), float("nan")])
    assert not np.isinf(run("1 / 0 + a", small)).any()


def test_overflow_gives_nan_not_inf(small: EvalContext) -> None:
    assert run("10 ** 400", small).isna().all()
    assert run("i * 10 ** 300 * 10 ** 300", small).isna().all()
    big = run("i * 3037000500 * 3037000500", small)  # beyond int64: float, not wrapped
    assert big.dtype == np.float64 and (big > 0).all()


def conditions(series: pd.Series) -> list[bool | None]:
    """A condition's values with unknown as None."""
    return [None if v is pd.NA else bool(v) for v in series.tolist()]


def test_comparisons_with_a_missing_value_are_unknown(small: EvalContext) -> None:
    """As in SQL: row 2 has a, s and t missing, and its comparisons are neither true nor
    false, so "not (a > 1)" does not pass it either."""
    assert conditions(run("a > 1", small)) == [False, True, None, True, False]
    assert conditions(run("a != 1", small)) == [False, True, None, True, True]
    assert conditions(run("a == a", small)) == [True, True, None, True, True]
    assert conditions(run("s != 'x'", small)) == [False, True, None, False, True]
    assert conditions(run("s < 'y'", small)) == [True, False, None, True, False]
    assert conditions(run("a not in (1, 4)", small)) == [False, True, None, False, True]
    assert conditions(run("s not in ('x')", small)) == [False, True, None, False, True]
    assert conditions(run("not (a > 1)", small)) == [True, False, None, False, True]


def test_prices_compare_as_the_decimals_they_are() -> None:
    """CL's 67.26 - 67.46 is -0.19999999999998863 in binary: still a 20-cent gap, as in
    integer cents; whole numbers keep comparing exactly, however large."""
    frame = pd.DataFrame(
        {
            "hi": [67.46, 100.01, 1.5 + 70.25, 25_000.25],
            "lo": [67.26, 100.00, 70.25, 25_000.00],
            "big": np.array([10**15, 10**15 + 1, 5, 6], dtype=np.int64),
        }
    )
    ctx = make_context(frame)
    cents = [
        round(h * 100) - round(lo * 100) for h, lo in zip(frame["hi"], frame["lo"], strict=True)
    ]
    assert run("hi - lo", ctx).tolist() != [c / 100 for c in cents]  # binary, not decimal
    for op, limit in itertools.product(["==", "!=", "<", "<=", ">", ">="], [0.2, 0.01, 1.5, 0.25]):
        got = run(f"hi - lo {op} {limit}", ctx).tolist()
        want = [eval_op(op, c, round(limit * 100)) for c in cents]
        assert got == want, (op, limit)
    assert run("big < 1000000000000001", ctx).tolist() == [True, False, True, True]
    assert run("big == 1000000000000001", ctx).tolist() == [False, True, False, False]
    # Numbers a trader would call different stay different.
    assert run("hi - lo > 0.2 - 0.000001", ctx).tolist()[0]


def eval_op(op: str, a: int, b: int) -> bool:
    return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def test_conditions_are_numpy_bool_when_every_value_is_known(small: EvalContext) -> None:
    for text in ("i > 4", "i == 3 or i > 6", "not i > 4", "i in (3, 4)"):
        assert run(text, small).dtype == np.bool_
    for text in ("a > 1", "s == 'x'", "a > 1 and b > 1", "not a > 1", "a in (1, 2)"):
        assert run(text, small).dtype == "boolean"


def test_logic_is_three_valued(small: EvalContext) -> None:
    # false and unknown is false; true or unknown is true; otherwise unknown stays unknown.
    assert conditions(run("a >= 1 and b >= 1", small)) == [True, False, None, None, False]
    assert conditions(run("a >= 4 or b >= 2", small)) == [True, False, None, True, False]
    assert conditions(run("a >= 4 || !(b >= 2) && true", small)) == [False, True, True, True, True]
    assert conditions(run("a > 100 and b >= 1", small)) == [False, False, None, False, False]


def test_dates_compare_with_text(small: EvalContext) -> None:
    assert conditions(run("t == '2024-03-15'", small)) == [False, True, None, False, False]
    assert conditions(run("t >= '2024-03-15'", small)) == [False, True, None, True, True]
    assert conditions(run("'2024-03-15' < t", small)) == [False, False, None, True, True]
    assert conditions(run("t != '2024-03-15'", small)) == [True, False, None, True, True]
    assert conditions(run("t in ('2024-03-14', '2024-03-19')", small)) == [
        True,
        False,
        None,
        False,
        True,
    ]
    assert conditions(run("t == prev(t)", small)) == [None, False, None, None, False]


def test_weekday_names_compare_in_week_order(ctx: EvalContext) -> None:
    frame = ctx.frame
    names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    weekday = [names[d.weekday()] for d in frame["trading_date"]]
    assert run("dayname() < 'Wed'", ctx).tolist() == [w in ("Mon", "Tue") for w in weekday]
    assert run("'Wed' <= dayname()", ctx).tolist() == [w not in ("Mon", "Tue") for w in weekday]
    assert run("dayname() != 'Mon'", ctx).tolist() == [w != "Mon" for w in weekday]
    for text in ("dayname() == 'Monday'", "dayname() != 'monday'", "dayname() in ('Mon', 'Fri.')"):
        with pytest.raises(TypeMismatch, match="is not one of Mon, Tue, Wed, Thu, Fri, Sat, Sun"):
            run(text, ctx)
    assert run("dayname() in ('Mon', 'Fri')", ctx).tolist() == [
        w in ("Mon", "Fri") for w in weekday
    ]
    later = [names.index(b) > names.index(a) for a, b in itertools.pairwise(weekday)]
    # The first row has no previous day: the comparison is unknown.
    assert conditions(run("dayname() > prev(dayname())", ctx)) == [None, *later]


@pytest.mark.parametrize(
    ("text", "part"),
    [
        ("'Mon' + 1", "Operator '+' needs numbers on both sides, got text and a number"),
        ("s * 2", "got text and a number"),
        ("t + 1", "got a date and a number"),
        ("-s", "Sign '-' needs a number, got text"),
        ("a == 'x'", "Cannot compare a number with text"),
        ("t == 5", "Cannot compare a date with a number"),
        ("t == 'soon'", "'soon' is not a date"),
        ("t == ''", "'' is not a date"),
        ("a and b > 1", "'and' needs conditions (true/false), got a number and"),
        ("not a", "'not' needs conditions (true/false), got a number"),
        ("a in ('x')", "Cannot compare a number with text"),
        ("s in (1, 2)", "Cannot compare text with a number"),
        ("if(a > 1, 1, 'x')", "if() needs then and else of the same kind"),
        ("rolling_mean(s, 2)", "rolling_mean() needs a number for col, got text"),
        ("streak(a)", "streak() needs a condition (true/false) for cond, got a number"),
    ],
)
def test_type_errors_name_operator_and_kinds(small: EvalContext, text: str, part: str) -> None:
    small.step = "where"
    with pytest.raises(TypeMismatch) as info:
        run(text, small)
    assert part in info.value.message
    assert info.value.step == "where"


def test_ordering_weekday_against_unknown_name(ctx: EvalContext) -> None:
    with pytest.raises(TypeMismatch, match="'Monday' is not one of Mon, Tue"):
        run("dayname() < 'Monday'", ctx)


@pytest.mark.parametrize(
    ("text", "example"),
    [("time() == '9:30'", "09:30"), ("time() >= '9:45'", "09:45"), ("time() == '930'", "09:30")],
)
def test_a_time_without_its_leading_zero_is_shown_with_it(
    intraday_ctx: EvalContext, text: str, example: str
) -> None:
    with pytest.raises(TypeMismatch) as info:
        run(text, intraday_ctx)
    assert info.value.hint == f"times are HH:MM with a leading zero, e.g. '{example}'"


def test_runtime_name_errors(ctx: EvalContext) -> None:
    with pytest.raises(UnknownColumn, match="does not exist"):
        run("rnage + 1", ctx)
    with pytest.raises(UnknownFunction):
        run("foo(range)", ctx)
    with pytest.raises(ArgumentError, match="aggregate"):
        run("range > mean(range)", ctx)
    with pytest.raises(ArgumentError, match="takes 2 to 3 arguments"):
        run("rolling_mean(range)", ctx)


def test_nullable_extension_columns() -> None:
    frame = pd.DataFrame(
        {
            "n": pd.array([1, None, 3], dtype="Int64"),
            "f": pd.array([True, None, False], dtype="boolean"),
            "s": pd.array(["a", None, "c"], dtype="string"),
        }
    )
    ctx = make_context(frame)
    nan_equal(run("n * 2", ctx), [2.0, float("nan"), 6.0])
    assert conditions(run("f and true", ctx)) == [True, None, False]
    assert conditions(run("f or true", ctx)) == [True, True, True]
    assert conditions(run("s == 'a'", ctx)) == [True, None, False]


def test_aggregate_arithmetic_and_constants(ctx: EvalContext) -> None:
    frame = ctx.frame
    volume = frame["volume"].tolist()
    assert evaluate_aggregate(parse_expression("sum(volume) / count()"), ctx) == pytest.approx(
        sum(volume) / len(volume)
    )
    assert evaluate_aggregate(parse_expression("max(high) - min(low)"), ctx) == pytest.approx(
        max(frame["high"]) - min(frame["low"])
    )
    assert evaluate_aggregate(parse_expression("1 + 2"), ctx) == 3
    assert evaluate_aggregate(parse_expression("mean(range) > 0"), ctx) is True
    value = evaluate_aggregate(parse_expression("count()"), ctx)
    assert type(value) is int


def test_aggregate_division_by_zero(ctx: EvalContext) -> None:
    empty = make_context(ctx.frame.iloc[:0].reset_index(drop=True))
    value = evaluate_aggregate(parse_expression("sum(volume) / count()"), empty)
    assert math.isnan(value)
    assert empty.warnings == [
        "Division by zero in 'sum(volume) / count()' for 1 value; those results are empty (NaN)."
    ]


def test_select_row_values_need_an_aggregate(ctx: EvalContext) -> None:
    with pytest.raises(TypeMismatch, match="outside an aggregate"):
        evaluate_aggregate(parse_expression("range - mean(range)"), ctx)
    with pytest.raises(TypeMismatch, match="one value per row"):
        evaluate_aggregate(parse_expression("prev(close)"), ctx)
    with pytest.raises(ArgumentError, match="cannot be nested"):
        evaluate_aggregate(parse_expression("mean(sum(range))"), ctx)
