"""Tree helpers: walking, referenced names, aggregates, output names."""

from __future__ import annotations

import pytest

from barb.script import ast
from barb.script.library import contains_aggregate
from barb.script.parser import parse_expression


def test_walk_visits_every_node_parents_first() -> None:
    tree = parse_expression("mean(high - low) > 2 and d in ('Mon')")
    kinds = [type(n).__name__ for n in ast.walk(tree)]
    assert kinds == [
        "Logical",
        "Compare",
        "Call",
        "Binary",
        "Column",
        "Column",
        "Number",
        "InList",
        "Column",
        "String",
    ]


def test_referenced_columns_and_functions() -> None:
    tree = parse_expression("rolling_mean(range, 20) > range * 1.5 and dayname() == 'Mon'")
    assert ast.referenced_columns(tree) == ("range",)
    assert ast.called_functions(tree) == ("rolling_mean", "dayname")


def test_contains_aggregate() -> None:
    assert contains_aggregate(parse_expression("sum(volume) / count()"))
    assert contains_aggregate(parse_expression("round(MEAN(range), 1)"))
    assert not contains_aggregate(parse_expression("rolling_mean(range, 5)"))
    assert not contains_aggregate(parse_expression("unknown(range)"))


def test_depth() -> None:
    assert ast.depth(parse_expression("a")) == 1
    assert ast.depth(parse_expression("-(a + b)")) == 3


def test_literal_value() -> None:
    assert ast.literal_value(parse_expression("-3")) == -3
    assert ast.literal_value(parse_expression("+2.5")) == 2.5
    assert ast.literal_value(parse_expression("'x'")) == "x"
    assert ast.literal_value(parse_expression("close")) is None


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("mean(range)", "mean_range"),
        ("count()", "count"),
        ("percentile(range, 90)", "percentile_range_90"),
        ("correlation(range, volume)", "correlation_range_volume"),
        ("dayname()", "dayname"),
        ("sum(volume) / count()", "sum_volume_count"),
        ("max(high) - min(low)", "max_high_min_low"),
        ("mean(High - Low)", "mean_high_low"),
        ("percentile(range, 12.5)", "percentile_range_12_5"),
        ("session_high('RTH')", "session_high_rth"),
        ("Range", "Range"),  # a bare column keeps its name
        ("'!!'", "value"),
        # A comparison keeps its operator: "true" of prev_close_close read both ways.
        ("prev(close) < close", "prev_close_lt_close"),
        ("prev(close) > close", "prev_close_gt_close"),
        ("sum(close >= open)", "sum_close_ge_open"),
        ("fh <= 0", "fh_le_0"),
        ("a == b", "a_eq_b"),
        ("a != b", "a_ne_b"),
    ],
)
def test_default_name(text: str, name: str) -> None:
    assert ast.default_name(parse_expression(text)) == name


def test_to_text_of_hand_built_trees_parses_back() -> None:
    tree = ast.Binary("**", ast.Number(-2), ast.Unary("-", ast.Number(1)))
    assert tree.to_text() == "(-2) ** -1"
    again = parse_expression(tree.to_text())
    assert again.to_text() == tree.to_text()
    chained = ast.Compare("<", ast.Compare("<", ast.Column("a"), ast.Column("b")), ast.Number(1))
    assert chained.to_text() == "(a < b) < 1"
    assert parse_expression(chained.to_text()) == chained
    text = ast.String("it's \\ here")
    assert parse_expression(text.to_text()) == text
