"""Text → expression tree.

The grammar lives in ``grammar.lark``; Lark builds one LALR parser for it, lazily, and calls
``_TreeBuilder`` as it reduces each rule, so no intermediate parse tree is kept. Parses are
cached: the same few strings come back on every query. A failure becomes an
``ExpressionSyntaxError`` with the position, a snippet with a caret under the problem and a
hint about the usual fix.
"""

from __future__ import annotations

import functools
import importlib.resources
import math
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

from barb.errors import ExpressionSyntaxError, QueryTooLarge
from barb.script import ast
from barb.script.calendar_names import calendar_name_hint
from barb.script.daily_calls import DAILY_ARGUMENTS

MAX_LENGTH = 1000
# Far beyond any sensible expression, and well inside Python's recursion limit for the
# evaluator and to_text, which recurse over the tree.
MAX_DEPTH = 60
_MAX_INT_DIGITS = 18
_SNIPPET_RADIUS = 40

_OPERATORS_HINT = (
    "Expressions use column names, numbers, 'text', functions like mean(x), and the "
    "operators + - * / % ** == != < <= > >= and or not in."
)


def parse_expression(text: str, *, step: str = "expression") -> ast.Expr:
    """Parse one expression (a map value, a where condition, a group_by expression)."""
    result = _parse(text, "expression") if isinstance(text, str) else _not_text(text)
    if isinstance(result, _Failure):
        raise result.to_error(step)
    return result


def parse_select_item(text: str, *, step: str = "select") -> tuple[ast.Expr, str | None]:
    """Parse a select item: an expression with an optional trailing ``as name``."""
    result = _parse(text, "select_item") if isinstance(text, str) else _not_text(text)
    if isinstance(result, _Failure):
        raise result.to_error(step)
    return result


@dataclass(frozen=True)
class _Failure:
    """A parse failure, cached like a success; becomes an exception with the caller's step."""

    message: str
    hint: str | None = None
    position: int | None = None  # 1-based
    snippet: str | None = None
    too_large: bool = False

    def to_error(self, step: str) -> ExpressionSyntaxError | QueryTooLarge:
        details: dict[str, Any] = {}
        if self.position is not None:
            details = {"position": self.position, "snippet": self.snippet}
        cls = QueryTooLarge if self.too_large else ExpressionSyntaxError
        return cls(self.message, step=step, hint=self.hint, details=details)


def _not_text(value: object) -> _Failure:
    return _Failure(
        f"An expression must be text, got {type(value).__name__} {value!r}.",
        hint='write it as a string, e.g. "range > 20"',
    )


@functools.lru_cache(maxsize=2048)
def _parse(text: str, start: str) -> Any:
    if not text.strip():
        return _Failure("The expression is empty.", hint="write an expression such as: range > 20")
    if len(text) > MAX_LENGTH:
        return _Failure(
            f"The expression is {len(text)} characters long; the limit is {MAX_LENGTH}.",
            hint="split the work into several map columns",
            too_large=True,
        )
    try:
        result = _lark().parse(text, start=start)
    except _BadLiteral as bad:
        return _positioned(text, bad.position, bad.message, bad.hint)
    except UnexpectedCharacters as exc:
        return _unexpected_character(text, exc)
    except (UnexpectedToken, UnexpectedEOF) as exc:
        return _unexpected_token(text, exc, start)
    except LarkError as exc:  # any other lark failure is still the text's fault
        return _Failure(f"Syntax error in {text!r}: {exc}", hint=_OPERATORS_HINT)
    expr = result[0] if isinstance(result, tuple) else result
    if ast.depth(expr) > MAX_DEPTH:
        return _Failure(
            f"The expression has more than {MAX_DEPTH} operators chained or nested.",
            hint="split the work into several map columns",
            too_large=True,
        )
    return result


@functools.cache
def _lark() -> Lark:
    grammar = importlib.resources.files("barb.script").joinpath("grammar.lark").read_text()
    return Lark(
        grammar,
        parser="lalr",
        start=["expression", "select_item"],
        transformer=_TreeBuilder(),
        maybe_placeholders=True,
        cache=_tables_cache(),
    )


def _tables_cache() -> str | bool:
    """Where the LALR tables are kept, so that a fresh worker loads them (6 ms) instead of
    building them (60 ms). Lark checks the file against the grammar and its own version.

    In the user's cache folder, not Lark's default of the shared temporary folder: the
    file is unpickled, so nobody else may be able to write it.
    """
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = root / "barb"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only home: build the tables each time
        return False
    return str(folder / f"grammar-py{sys.version_info[0]}{sys.version_info[1]}.lark")


def _on_daily_bars(name: str, args: tuple[ast.Expr, ...]) -> tuple[ast.Expr, ...]:
    """The arguments of a call, its daily-bars one (``daily``'s) sealed off from the walks
    over the rows' tree (``ast.OnDailyBars``)."""
    at = DAILY_ARGUMENTS.get(name)
    if at is None or at >= len(args):
        return args
    return (*args[:at], ast.OnDailyBars(args[at]), *args[at + 1 :])


class _BadLiteral(Exception):
    """A literal the grammar accepts but Barb cannot represent (e.g. 1e999)."""

    def __init__(self, position: int, message: str, hint: str):
        self.position = position
        self.message = message
        self.hint = hint


_SMALLER = "numbers must stay below 1e18"
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


class _TreeBuilder(Transformer):
    """Called by Lark for each reduced rule; builds ast nodes bottom-up."""

    def expression(self, children: list[Any]) -> ast.Expr:
        return children[0]

    def select_item(self, children: list[Any]) -> tuple[ast.Expr, str | None]:
        alias = str(children[1]) if len(children) > 1 else None
        return children[0], alias

    def number(self, children: list[Token]) -> ast.Number:
        token = children[0]
        text = str(token)
        if text.isdigit():
            if len(text.lstrip("0")) > _MAX_INT_DIGITS:
                raise _BadLiteral(token.start_pos, f"the number {text} is too large", _SMALLER)
            return ast.Number(int(text))
        value = float(text)
        if not math.isfinite(value):
            raise _BadLiteral(token.start_pos, f"the number {text} is too large", _SMALLER)
        return ast.Number(value)

    def neg_number(self, children: list[Token]) -> ast.Number:
        number = self.number(children)
        return ast.Number(-number.value)

    def string(self, children: list[Token]) -> ast.String:
        return ast.String(_ESCAPE.sub(r"\1", str(children[0])[1:-1]))

    def true(self, children: list[Token]) -> ast.Bool:
        return ast.Bool(True)

    def false(self, children: list[Token]) -> ast.Bool:
        return ast.Bool(False)

    def column(self, children: list[Token]) -> ast.Column:
        return ast.Column(str(children[0]))

    def call(self, children: list[Any]) -> ast.Call:
        name = str(children[0]).lower()
        args = tuple(c for c in children[1:] if c is not None)
        return ast.Call(name, _on_daily_bars(name, args))

    def neg(self, children: list[Any]) -> ast.Unary:
        return ast.Unary("-", children[0])

    def pos(self, children: list[Any]) -> ast.Unary:
        return ast.Unary("+", children[0])

    def add(self, children: list[Any]) -> ast.Binary:
        return ast.Binary("+", *children)

    def sub(self, children: list[Any]) -> ast.Binary:
        return ast.Binary("-", *children)

    def mul(self, children: list[Any]) -> ast.Binary:
        return ast.Binary("*", *children)

    def div(self, children: list[Any]) -> ast.Binary:
        return ast.Binary("/", *children)

    def mod(self, children: list[Any]) -> ast.Binary:
        return ast.Binary("%", *children)

    def power(self, children: list[Any]) -> ast.Binary:
        return ast.Binary("**", *children)

    def compare(self, children: list[Any]) -> ast.Compare:
        left, op, right = children
        op = {"=": "==", "<>": "!="}.get(str(op), str(op))
        return ast.Compare(op, left, right)

    def in_list(self, children: list[Any]) -> ast.InList:
        return ast.InList(children[0], tuple(children[1:]))

    def not_in_list(self, children: list[Any]) -> ast.InList:
        return ast.InList(children[0], tuple(children[1:]), negated=True)

    def and_(self, children: list[Any]) -> ast.Logical:
        return ast.Logical("and", *children)

    def or_(self, children: list[Any]) -> ast.Logical:
        return ast.Logical("or", *children)

    def not_(self, children: list[Any]) -> ast.Not:
        return ast.Not(children[0])


# --- error reporting ------------------------------------------------------------------------

_UNICODE_OPERATORS = {"≥": ">=", "≤": "<=", "≠": "!=", "×": "*", "÷": "/", "−": "-"}
_OPERAND_TERMINALS = {"NAME", "NUMBER", "STRING", "TRUE", "FALSE", "LPAR", "MINUS", "PLUS"}
_COMBINE_TERMINALS = {"_AND", "_OR", "PLUS", "MINUS", "STAR", "SLASH", "COMPARE"}


def _snippet(text: str, position0: int) -> str:
    """The text around ``position0`` with a caret line under it."""
    flat = re.sub(r"\s", " ", text)
    start = max(0, position0 - _SNIPPET_RADIUS)
    end = min(len(flat), position0 + _SNIPPET_RADIUS)
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(flat) else ""
    line = prefix + flat[start:end] + suffix
    caret = " " * (len(prefix) + position0 - start) + "^"
    return f"{line}\n{caret}"


def _positioned(text: str, position0: int, problem: str, hint: str | None) -> _Failure:
    shown = text if len(text) <= 2 * _SNIPPET_RADIUS else text[: 2 * _SNIPPET_RADIUS] + "…"
    return _Failure(
        f"Syntax error at position {position0 + 1} in {shown!r}: {problem}.",
        hint=hint or None,
        position=position0 + 1,
        snippet=_snippet(text, position0),
    )


def _unexpected_character(text: str, exc: UnexpectedCharacters) -> _Failure:
    position0 = exc.pos_in_stream
    char = text[position0]
    if char in "'\"":
        return _positioned(
            text, position0, "this quote is never closed", "close the text with a matching quote"
        )
    spelled = _UNICODE_OPERATORS.get(char)
    if spelled:
        hint = f"write {spelled} instead of {char}"
    elif char.isalpha():  # a name in another alphabet: 'as средний'
        hint = "names use Latin letters, digits and _ (e.g. avg_range); text values go in quotes"
    else:
        hint = _OPERATORS_HINT
    return _positioned(text, position0, f"unexpected character {char!r}", hint)


def _describe(token: Token) -> str:
    if token.type == "$END":
        return "end of expression"
    if token.type == "NAME":
        return f"name '{token}'"
    if token.type == "NUMBER":
        return f"number {token}"
    if token.type == "STRING":
        return f"text {token}"
    return f"'{token}'"


def _unexpected_token(text: str, exc: UnexpectedToken | UnexpectedEOF, start: str) -> _Failure:
    token = exc.token if isinstance(exc, UnexpectedToken) else Token("$END", "")
    expected = set(getattr(exc, "expected", ()) or ())
    at_end = token.type == "$END"
    position0 = len(text.rstrip()) if at_end else token.start_pos
    problem = f"unexpected {_describe(token)}"
    return _positioned(text, position0, problem, _hint(text, token, expected, start))


def _hint(text: str, token: Token, expected: set[str], start: str) -> str:
    """The usual fix for this kind of mistake."""
    kind = token.type
    value = str(token).lower()
    opens = text.count("(") - text.count(")")
    if kind == "$END":
        if opens > 0:
            return "a '(' is not closed; add ')'"
        return "the expression ends early: a value is missing after the last operator"
    if kind == "RPAR" and opens < 0:
        return "there is a ')' without a matching '('"
    if kind == "_AS":
        if start == "expression":
            return "an alias ('as name') is only allowed in select items"
        return "write the alias as a plain name after 'as', e.g. mean(range) as avg_range"
    if "LSQB" in expected and "NAME" not in expected:
        return "write the list in parentheses: dayname() in ('Mon', 'Fri')"
    if kind == "NAME" and (weekday_or_month := calendar_name_hint(str(token))) is not None:
        return weekday_or_month  # dayname() in (Mon, Fri)
    if kind == "COMPARE" and "COMPARE" not in expected and "_AND" in expected:
        return "comparisons do not chain; join them with 'and': a < b and b < c"
    if kind in _OPERAND_TERMINALS and expected & _COMBINE_TERMINALS:
        if value == "between":
            return "write a range as: x >= 10 and x <= 20"
        return "use 'and' / 'or' to combine conditions, or an operator (+ - * /) between values"
    if value == "*" and text[: token.start_pos].rstrip().endswith("("):  # SQL's count(*)
        return "count() counts the rows; a function takes no '*' (count(*) is count())"
    if expected & _OPERAND_TERMINALS:
        return f"a value is missing before {_describe(token)}"
    return _OPERATORS_HINT
