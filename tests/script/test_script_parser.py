"""The parser: every literal kind, precedence, canonical text, errors with positions."""

from __future__ import annotations

from pathlib import Path

import pytest

from barb.errors import ExpressionSyntaxError, QueryTooLarge
from barb.script import ast
from barb.script.parser import MAX_DEPTH, parse_expression, parse_select_item

CASES = [
    tuple(part.strip() for part in line.split("=>"))
    for line in (Path(__file__).parent / "parse_cases.txt").read_text().splitlines()
    if line.strip() and not line.startswith("#")
]


@pytest.mark.parametrize(("text", "canonical"), CASES, ids=[c[0] for c in CASES])
def test_golden_canonical_text(text: str, canonical: str) -> None:
    tree = parse_expression(text)
    assert tree.to_text() == canonical
    # The canonical text parses back to the same tree.
    assert parse_expression(canonical) == tree


def test_literals() -> None:
    assert parse_expression("42") == ast.Number(42)
    assert isinstance(parse_expression("42").value, int)
    assert parse_expression("4.5") == ast.Number(4.5)
    assert parse_expression(".5") == ast.Number(0.5)
    assert parse_expression("5.") == ast.Number(5.0)
    assert parse_expression("1e3") == ast.Number(1000.0)
    assert parse_expression("'a b'") == ast.String("a b")
    assert parse_expression('"it\'s"') == ast.String("it's")
    assert parse_expression(r"'back\\slash'") == ast.String("back\\slash")
    assert parse_expression("''") == ast.String("")
    assert parse_expression("true") == ast.Bool(True)
    assert parse_expression("FALSE") == ast.Bool(False)


def test_precedence_tree() -> None:
    tree = parse_expression("a or b and not c > 1 + 2 * -3 ** 2")
    assert tree == ast.Logical(
        "or",
        ast.Column("a"),
        ast.Logical(
            "and",
            ast.Column("b"),
            ast.Not(
                ast.Compare(
                    ">",
                    ast.Column("c"),
                    ast.Binary(
                        "+",
                        ast.Number(1),
                        ast.Binary(
                            "*",
                            ast.Number(2),
                            ast.Unary("-", ast.Binary("**", ast.Number(3), ast.Number(2))),
                        ),
                    ),
                )
            ),
        ),
    )


def test_left_associative_and_power_right_associative() -> None:
    assert parse_expression("8 - 4 - 2") == ast.Binary(
        "-", ast.Binary("-", ast.Number(8), ast.Number(4)), ast.Number(2)
    )
    assert parse_expression("2 ** 3 ** 2") == ast.Binary(
        "**", ast.Number(2), ast.Binary("**", ast.Number(3), ast.Number(2))
    )


def test_calls_and_names() -> None:
    assert parse_expression("count()") == ast.Call("count")
    assert parse_expression("Rolling_Mean(range, 20)") == ast.Call(
        "rolling_mean", (ast.Column("range"), ast.Number(20))
    )
    # Column names keep their case; keywords are not names but may start one.
    assert parse_expression("Close") == ast.Column("Close")
    assert parse_expression("android") == ast.Column("android")
    assert parse_expression("if(a, 1, 2)") == ast.Call(
        "if", (ast.Column("a"), ast.Number(1), ast.Number(2))
    )


def test_membership() -> None:
    assert parse_expression("d in ('Mon', 'Fri')") == ast.InList(
        ast.Column("d"), (ast.String("Mon"), ast.String("Fri"))
    )
    assert parse_expression("d not in [1, -2]") == ast.InList(
        ast.Column("d"), (ast.Number(1), ast.Number(-2)), negated=True
    )


def test_select_item_alias() -> None:
    assert parse_select_item("mean(range) as avg_range") == (
        ast.Call("mean", (ast.Column("range"),)),
        "avg_range",
    )
    assert parse_select_item("count() AS n") == (ast.Call("count"), "n")
    assert parse_select_item("count()") == (ast.Call("count"), None)


def test_alias_outside_select_is_an_error() -> None:
    with pytest.raises(ExpressionSyntaxError) as info:
        parse_expression("mean(range) as m", step="where")
    assert info.value.step == "where"
    assert "select" in info.value.hint


def test_error_position_and_snippet() -> None:
    with pytest.raises(ExpressionSyntaxError) as info:
        parse_expression("range > > 5", step="where")
    error = info.value
    assert error.message == "Syntax error at position 9 in 'range > > 5': unexpected '>'."
    assert error.step == "where"
    assert error.details["position"] == 9
    assert error.details["snippet"] == "range > > 5\n        ^"
    assert error.to_dict()["error_type"] == "SyntaxError"


@pytest.mark.parametrize(
    ("text", "position", "hint_part"),
    [
        ("range > 5 volume < 3", 11, "'and' / 'or'"),
        ("range between 1 and 5", 7, "x >= 10 and x <= 20"),
        ("mean(range", 11, "not closed"),
        ("range > 5)", 10, "without a matching"),
        ("a < b < c", 7, "do not chain"),
        ("d in 'Mon'", 6, "in parentheses"),
        ("dayname() == 'Mon", 14, "quote"),
        ("range ≥ 5", 7, "write >= instead of ≥"),
        ("range > диапазон", 9, "Latin letters"),
        ("range $ 5", 7, "operators"),
        ("a and and b", 7, "value is missing"),
        ("count(*) > 1", 7, "count(*) is count()"),  # SQL's count, not a missing value
        ("range * * 2", 9, "value is missing"),
        ("range +", 8, "ends early"),
        ("1e999", 1, "below"),
        ("123456789012345678901", 1, "below"),
    ],
)
def test_error_hints(text: str, position: int, hint_part: str) -> None:
    with pytest.raises(ExpressionSyntaxError) as info:
        parse_expression(text)
    assert info.value.details["position"] == position
    assert hint_part in info.value.hint
    snippet = info.value.details["snippet"]
    assert snippet.splitlines()[1].index("^") == position - 1


def test_empty_and_non_text() -> None:
    with pytest.raises(ExpressionSyntaxError, match="empty"):
        parse_expression("   ")
    with pytest.raises(ExpressionSyntaxError, match="must be text"):
        parse_expression(5)  # type: ignore[arg-type]


def test_long_snippets_are_windowed() -> None:
    text = "a + " * 30 + "* b"
    with pytest.raises(ExpressionSyntaxError) as info:
        parse_expression(text)
    line, caret = info.value.details["snippet"].splitlines()
    assert line.startswith("…") and len(line) < 90
    assert line[caret.index("^")] == "*"


def test_size_limits() -> None:
    with pytest.raises(QueryTooLarge):
        parse_expression("a + " * 300 + "a")
    deep = "(" * 10 + "-" * (MAX_DEPTH + 1) + "a" + ")" * 10
    with pytest.raises(QueryTooLarge, match="nested"):
        parse_expression(deep)
    assert parse_expression("(" * 200 + "a" + ")" * 200) == ast.Column("a")
    # A flat sum of 61 terms nests nothing: it had been "nested more than 60 levels deep".
    with pytest.raises(QueryTooLarge) as info:
        parse_expression(" + ".join(["close"] * (MAX_DEPTH + 1)))
    assert info.value.message == (
        f"The expression has more than {MAX_DEPTH} operators chained or nested."
    )


def test_parse_is_cached() -> None:
    # Parsed once per text: the same tree comes back (its speed is bench's to measure).
    text = "range > rolling_mean(range, 20) * 1.5 and dayname() in ('Mon', 'Fri')"
    first = parse_expression(text)
    assert parse_expression(text) is first
