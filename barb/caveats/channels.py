"""Why a Donchian breakout matched nothing: the channel holds the bar it is compared with.

donchian_upper(20) is the highest high of the last 20 bars, this one included, so
``close > donchian_upper(20)`` (or ``high >``) can never be true, and the model read "No bars
matched" as "no breakouts". Said only when a where compares a price with a channel line of
the same bar and nothing matched; the fix is the previous bar's channel.
"""

from __future__ import annotations

from barb.lineage import nodes
from barb.planning import StagePlan
from barb.script import ast

# Each line, and the comparison that can never hold against it on its own bar.
_NEVER = {"donchian_upper": ">", "donchian_lower": "<"}
_MIRRORED = {">": "<", "<": ">"}


def same_bar_channel_caveat(stage: StagePlan) -> list[str]:
    """The warning for a where that compares a price with this bar's channel line."""
    if stage.where is None:
        return []
    mapped = dict(stage.map_exprs)
    for node in nodes(stage.where, mapped):
        if not isinstance(node, ast.Compare):
            continue
        for line, op in _NEVER.items():
            if (_is_line(node.right, line, mapped) and node.op == op) or (
                _is_line(node.left, line, mapped) and node.op == _MIRRORED[op]
            ):
                return [
                    f"{line}(n) includes the current bar, so nothing can break it on the same "
                    f"bar: compare with the previous bar's channel, prev({line}(20))."
                ]
    return []


def _is_line(expr: ast.Expr, line: str, mapped: dict[str, ast.Expr]) -> bool:
    """``expr`` is the channel line itself, directly or through a map column (not prev() of
    it, nor arithmetic on it)."""
    seen: set[str] = set()
    while isinstance(expr, ast.Column) and expr.name in mapped and expr.name not in seen:
        seen.add(expr.name)
        expr = mapped[expr.name]
    return isinstance(expr, ast.Call) and expr.name == line
