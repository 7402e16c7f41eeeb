"""The expression tree of Barb Script.

Each node is a small frozen dataclass that declares, as data, which of its fields are child
expressions (``CHILDREN``); ``walk`` and everything built on it follow that declaration, so a
new node type needs no traversal code. ``to_text`` gives a canonical source form that parses
back to the same tree (parentheses only where precedence needs them).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar, Literal, TypeVar

ArithmeticOp = Literal["+", "-", "*", "/", "%", "**"]
CompareOp = Literal["==", "!=", "<", "<=", ">", ">="]
LogicalOp = Literal["and", "or"]

# Binding strength used by to_text; the grammar's precedence, loosest first.
_OR, _AND, _NOT, _CMP, _ADD, _MUL, _UNARY, _POW, _ATOM = range(1, 10)
_BINARY_PRECEDENCE = {"+": _ADD, "-": _ADD, "*": _MUL, "/": _MUL, "%": _MUL, "**": _POW}


@dataclass(frozen=True, slots=True)
class Node:
    # Names of the fields holding child expressions (a node, or a tuple of nodes).
    CHILDREN: ClassVar[tuple[str, ...]] = ()

    @property
    def precedence(self) -> int:
        return _ATOM

    def to_text(self) -> str:
        raise NotImplementedError

    def children(self) -> Iterator[Node]:
        for name in self.CHILDREN:
            value = getattr(self, name)
            if isinstance(value, tuple):
                yield from value
            else:
                yield value

    def __str__(self) -> str:
        return self.to_text()


def _wrap(node: Node, min_precedence: int) -> str:
    """The node's text, parenthesized when it binds looser than its position requires."""
    text = node.to_text()
    return f"({text})" if node.precedence < min_precedence else text


@dataclass(frozen=True, slots=True)
class Number(Node):
    value: int | float

    @property
    def precedence(self) -> int:
        # A negative literal (only inside "in" lists, or built by hand) reads as "-n".
        return _UNARY if self.value < 0 else _ATOM

    def to_text(self) -> str:
        return repr(self.value)


@dataclass(frozen=True, slots=True)
class String(Node):
    value: str

    def to_text(self) -> str:
        escaped = self.value.replace("\\", "\\\\").replace("'", "\\'")
        return f"'{escaped}'"


@dataclass(frozen=True, slots=True)
class Bool(Node):
    value: bool

    def to_text(self) -> str:
        return "true" if self.value else "false"


LiteralNode = Number | String | Bool


@dataclass(frozen=True, slots=True)
class Column(Node):
    name: str

    def to_text(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Call(Node):
    # Lower-cased: function names are case-insensitive.
    name: str
    args: tuple[Expr, ...] = ()
    CHILDREN: ClassVar[tuple[str, ...]] = ("args",)

    def to_text(self) -> str:
        return f"{self.name}({', '.join(a.to_text() for a in self.args)})"


@dataclass(frozen=True, slots=True)
class Unary(Node):
    op: Literal["-", "+"]
    operand: Expr
    CHILDREN: ClassVar[tuple[str, ...]] = ("operand",)

    @property
    def precedence(self) -> int:
        return _UNARY

    def to_text(self) -> str:
        return f"{self.op}{_wrap(self.operand, _UNARY)}"


@dataclass(frozen=True, slots=True)
class Binary(Node):
    op: ArithmeticOp
    left: Expr
    right: Expr
    CHILDREN: ClassVar[tuple[str, ...]] = ("left", "right")

    @property
    def precedence(self) -> int:
        return _BINARY_PRECEDENCE[self.op]

    def to_text(self) -> str:
        own = self.precedence
        if self.op == "**":
            # Right-associative; the base is an atom, the exponent may be signed.
            return f"{_wrap(self.left, _ATOM)} ** {_wrap(self.right, _UNARY)}"
        return f"{_wrap(self.left, own)} {self.op} {_wrap(self.right, own + 1)}"


@dataclass(frozen=True, slots=True)
class Compare(Node):
    op: CompareOp
    left: Expr
    right: Expr
    CHILDREN: ClassVar[tuple[str, ...]] = ("left", "right")

    @property
    def precedence(self) -> int:
        return _CMP

    def to_text(self) -> str:
        return f"{_wrap(self.left, _ADD)} {self.op} {_wrap(self.right, _ADD)}"


@dataclass(frozen=True, slots=True)
class InList(Node):
    operand: Expr
    values: tuple[LiteralNode, ...]
    negated: bool = False
    CHILDREN: ClassVar[tuple[str, ...]] = ("operand", "values")

    @property
    def precedence(self) -> int:
        return _CMP

    def to_text(self) -> str:
        keyword = "not in" if self.negated else "in"
        items = ", ".join(v.to_text() for v in self.values)
        return f"{_wrap(self.operand, _ADD)} {keyword} ({items})"


@dataclass(frozen=True, slots=True)
class Logical(Node):
    op: LogicalOp
    left: Expr
    right: Expr
    CHILDREN: ClassVar[tuple[str, ...]] = ("left", "right")

    @property
    def precedence(self) -> int:
        return _OR if self.op == "or" else _AND

    def to_text(self) -> str:
        own = self.precedence
        return f"{_wrap(self.left, own)} {self.op} {_wrap(self.right, own + 1)}"


@dataclass(frozen=True, slots=True)
class Not(Node):
    operand: Expr
    CHILDREN: ClassVar[tuple[str, ...]] = ("operand",)

    @property
    def precedence(self) -> int:
        return _NOT

    def to_text(self) -> str:
        return f"not {_wrap(self.operand, _NOT)}"


@dataclass(frozen=True, slots=True)
class OnDailyBars(Node):
    """daily()'s argument: an expression over the session's daily bars, not over the rows
    around it (``daily(atr(14))`` on 1m bars is the daily ATR). No child expressions: the
    walks of the tree (reach, hoisting, the columns read, the caveats) never enter it, since
    its columns and functions read other bars than the query's rows; the validator and the
    evaluator open it themselves."""

    expr: Expr

    @property
    def precedence(self) -> int:
        return self.expr.precedence

    def to_text(self) -> str:
        return self.expr.to_text()


Expr = (
    Number
    | String
    | Bool
    | Column
    | Call
    | Unary
    | Binary
    | Compare
    | InList
    | Logical
    | Not
    | OnDailyBars
)
LITERAL_TYPES = (Number, String, Bool)


NodeT = TypeVar("NodeT", bound=Node)


def with_children(node: NodeT, change: Callable[[Node], Node]) -> NodeT:
    """``node`` with ``change`` applied to each of its child expressions (each of a Call's
    args): the one way a rewrite (hoisting, a lag put around a yardstick) rebuilds a tree."""
    if not node.CHILDREN:
        return node
    changes: dict[str, object] = {}
    for name in node.CHILDREN:
        value = getattr(node, name)
        changes[name] = (
            tuple(change(v) for v in value) if isinstance(value, tuple) else change(value)
        )
    return dataclasses.replace(node, **changes)


def walk(expr: Node) -> Iterator[Node]:
    """Every node of the tree, parents before children, left to right (no recursion)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(list(node.children())))


def depth(expr: Node) -> int:
    """Levels of nesting (a lone literal is 1); computed without recursion."""
    deepest = 0
    stack = [(expr, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in node.children())
        if isinstance(node, OnDailyBars):  # evaluated too, though no walk enters it
            stack.append((node.expr, level + 1))
    return deepest


def referenced_columns(expr: Node) -> tuple[str, ...]:
    """Columns named in the text, in order of first appearance.

    Syntactic only: columns a function reads by default (``rsi()`` reads ``close``, the time
    functions read ``timestamp`` / ``trading_date``) are not included.
    """
    return tuple(dict.fromkeys(n.name for n in walk(expr) if isinstance(n, Column)))


def called_functions(expr: Node) -> tuple[str, ...]:
    """Lower-cased names of the functions called, in order of first appearance."""
    return tuple(dict.fromkeys(n.name for n in walk(expr) if isinstance(n, Call)))


def literal_value(expr: Node) -> int | float | str | bool | None:
    """The Python value of a literal (a signed number counts); None if it is not one."""
    if isinstance(expr, LITERAL_TYPES):
        return expr.value
    if isinstance(expr, Unary) and isinstance(expr.operand, Number):
        return -expr.operand.value if expr.op == "-" else expr.operand.value
    return None


_NON_ALNUM = re.compile(r"[^0-9a-zA-Z]+")
# A comparison's operator is kept as a word: "prev_close_close" read the same for < and >,
# and a group keyed by it says "true" of one of them.
_COMPARISONS = {"<=": "le", ">=": "ge", "==": "eq", "!=": "ne", "<": "lt", ">": "gt"}
_COMPARISON = re.compile("|".join(re.escape(op) for op in _COMPARISONS))


def default_name(expr: Node) -> str:
    """The output name of a select item without an alias.

    ``mean(range)`` → ``mean_range``, ``count()`` → ``count``, ``percentile(range, 90)`` →
    ``percentile_range_90``, ``prev(close) < close`` → ``prev_close_lt_close``; a bare column
    keeps its name; anything else becomes the snake_case of its canonical text, comparisons
    named by a word.
    """
    if isinstance(expr, Column):
        return expr.name
    text = _COMPARISON.sub(lambda m: f" {_COMPARISONS[m.group()]} ", expr.to_text())
    name = _NON_ALNUM.sub("_", text).strip("_").lower()
    return name or "value"
