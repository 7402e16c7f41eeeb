"""Hoisting: what an aggregate reads across rows becomes a column computed before rows are cut.

``mean(close - prev(close))`` over Mondays in January means the change from each Monday's
previous trading day, not from the previous Monday, and on January's first Monday from the last
day of December. So the planner moves every order-dependent part inside an aggregate's
arguments into a hidden per-row column, computed on the period's bars plus their history like
``map``; the aggregate then reduces that column over the rows that are kept.
"""

from __future__ import annotations

from collections.abc import Sequence

from barb.script.ast import Column, Expr, Node, with_children
from barb.script.library import is_aggregate_call
from barb.script.reach import reach


def hoist(expr: Expr, hoisted: list[tuple[str, Expr]], prefix: str) -> Expr:
    """``expr`` with its aggregates' order-dependent parts replaced by columns named
    ``prefix`` + a number; each (name, part) is appended to ``hoisted``."""
    return _hoist(expr, hoisted, prefix, inside=False)


def _hoist(node: Expr, hoisted: list[tuple[str, Expr]], prefix: str, inside: bool) -> Expr:
    if inside and not reach(node).local:
        name = f"{prefix}{len(hoisted)}"
        hoisted.append((name, node))
        return Column(name)
    inside = inside or is_aggregate_call(node)
    return with_children(node, lambda child: _hoist(child, hoisted, prefix, inside))


def unhoisted(expr: Expr, hoisted: Sequence[tuple[str, Expr]]) -> Expr:
    """``expr`` as the query wrote it: the ``hoisted`` columns back in their place
    (``mean(__h0 > close)`` with ``__h0`` = ``next(close)`` is ``mean(next(close) >
    close)``)."""
    parts = dict(hoisted)
    if not parts:
        return expr

    def put_back(node: Node) -> Node:
        if isinstance(node, Column) and node.name in parts:
            return parts[node.name]
        return with_children(node, put_back)

    return put_back(expr)  # type: ignore[return-value]
