"""Points of two joined instruments added, subtracted or compared as if they were one scale.

"NQ-ES spread on CPI days" written ``(close - open) - (es_close - es_open)`` gave
mean_spread = -91.65 points over 2024's 12 CPI days with no word that an NQ point and an ES
point are of prices 3.5 times apart: a day both markets rose 1% is +170 NQ points and +48 ES
points, a "spread" of 122 points of nothing. So is ``close - es_close`` (13,547.65 "points")
and a where ``close - open > es_close - es_open`` ("days NQ outperformed ES" kept NQ's
larger points, not its larger moves). Said when a first-stage expression adds, subtracts or
compares a price or a distance of the query's own instrument with one of a joined
instrument's whose prices over the rows kept are ``SAME_SCALE`` or more apart, with that
ratio and the percent form that compares them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd

from barb.column_units import POINTS, PRICE, first_map_unit
from barb.lineage import nodes, through_map
from barb.planning import Plan, StagePlan
from barb.script import ast
from barb.script.columns_read import columns_read

# The two instruments' mean closes' larger over their smaller from which their points are
# said to differ (MNQ beside NQ is 1; NQ beside ES 3.5, ES beside CL 70).
SAME_SCALE = 1.25
# A price or a distance between prices: what a point of each instrument measures.
_SCALED = frozenset({POINTS, PRICE})
# The bars' own prices (and the range made of them).
_OWN = frozenset({"open", "high", "low", "close", "range"})


def mixed_points_caveat(plan: Plan, kept: pd.DataFrame | None) -> list[str]:
    """One warning per joined instrument whose points the first stage mixes with the
    query's own; ``kept``: the rows the first stage kept (their closes give the scales)."""
    if not plan.instruments or kept is None or not len(kept) or "close" not in kept.columns:
        return []
    stage = plan.first
    maps = dict(stage.map_exprs + stage.hoisted)
    query = plan.query.to_json()
    symbol = plan.dataset.instrument.symbol
    warnings = []
    for joined in plan.instruments:
        prefix = joined.join.prefix
        if f"{prefix}close" not in kept.columns:
            continue
        mixed = next(_mixed(stage, maps, query, prefix), None)
        if mixed is None:
            continue
        ours, theirs = kept["close"].mean(), kept[f"{prefix}close"].mean()
        if not (ours > 0 and theirs > 0) or max(ours, theirs) / min(ours, theirs) < SAME_SCALE:
            continue
        other = joined.dataset.instrument.symbol
        verb = "compares" if isinstance(mixed, ast.Compare) else "mixes"
        prices = all(first_map_unit(side, query) == PRICE for side in (mixed.left, mixed.right))
        if prices:  # two price levels: their ratio is what moves as one market outruns
            what, instead = "prices", f"their ratio, close / {prefix}close"
        else:
            what = "points"
            instead = (
                f"percents: (close / open - 1) * 100 - ({prefix}close / {prefix}open - 1) * 100"
            )
        warnings.append(
            f"{mixed.to_text()} {verb} {symbol}'s {what} with {other}'s: over these rows "
            f"{symbol}'s close averaged {ours:,.2f} and {other}'s {theirs:,.2f} "
            f"({_times(ours, theirs)}), so a move of the same size in percent is that many "
            "times more points of one than of the other, and the difference mostly says the "
            f"two price levels. To compare the markets use {instead}."
        )
    return warnings


def _mixed(
    stage: StagePlan, maps: dict[str, ast.Expr], query: dict, prefix: str
) -> Iterator[ast.Binary | ast.Compare]:
    """The sums, differences and comparisons of the stage's expressions (each map entry as
    written, the select's items, the where) whose one side is the query's own prices or
    points and the other side the joined instrument's."""
    exprs = [e for _, e in stage.map_exprs] + [s.expr for s in stage.select]
    if stage.where is not None:
        exprs.append(stage.where)
    for expr in exprs:
        for node in ast.walk(expr):
            if (isinstance(node, ast.Binary) and node.op in ("+", "-")) or (
                isinstance(node, ast.Compare) and node.op in ("<", "<=", ">", ">=")
            ):
                pass
            else:
                continue
            sides = (_whose(node.left, maps, prefix), _whose(node.right, maps, prefix))
            if set(sides) != {"own", "joined"}:
                continue
            if any(_weighed(side, maps) for side in (node.left, node.right)):
                continue  # a hedge ratio's spread, close - 3.5 * es_close: the query scaled it
            if all(first_map_unit(side, query) in _SCALED for side in (node.left, node.right)):
                yield node


def _weighed(expr: ast.Expr, maps: dict[str, ast.Expr]) -> bool:
    """Whether ``expr`` is a product or a quotient (through the map's names): a price times
    a hedge ratio or a point value, which the query put on the other's scale itself."""
    expr = through_map(expr, maps)
    return isinstance(expr, ast.Binary) and expr.op in ("*", "/")


def _combines(node: ast.Node) -> bool:
    """A sum, a difference or an ordering: what puts two values on one scale."""
    if isinstance(node, ast.Binary):
        return node.op in ("+", "-")
    return isinstance(node, ast.Compare) and node.op in ("<", "<=", ">", ">=")


def _whose(expr: ast.Expr, maps: dict[str, ast.Expr], prefix: str) -> str | None:
    """ "own" when ``expr`` reads only the query's own prices, "joined" only the joined
    instrument's (through the map's names), else None."""
    read: set[str] = set()
    for node in nodes(expr, maps):
        if isinstance(node, ast.Column | ast.Call):
            read |= columns_read(node)
    own = bool(read & _OWN)
    joined = any(name.startswith(prefix) for name in read)
    if own == joined:
        return None
    return "own" if own else "joined"


def _times(ours: float, theirs: float) -> str:
    """ "3.52 times as high" / "70.1 times as low"."""
    if ours >= theirs:
        return f"{ours / theirs:.2f} times as high"
    return f"{theirs / ours:.2f} times as low"
