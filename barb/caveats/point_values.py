"""A distance in points turned into dollars with another instrument's point value.

A model answering in dollars for CL from an NQ chat wrote ``mean(pnl) * 20 as exp_usd``:
NQ's 20 USD a point, where a CL contract's 1.0 move is 1,000 USD. The number came out
-0.50 for -25.12, with nothing said (p32e Q8/16). A product of a distance in points and a
number that is another instrument's point value, not this one's, named as dollars, is
said, with this instrument's point value.

Read from the plan alone (no bars): a query joining another instrument may mean its points
(``es_range * 50``), so a join's own point values are never questioned.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from barb.column_units import POINTS, first_map_unit
from barb.instruments import Instrument, available_instruments, load_instrument
from barb.script import ast
from barb.settings import EngineSettings

# Names that say a column is a contract's dollars.
_DOLLAR_NAMES = ("usd", "dollar")


def other_point_value_caveat(
    named: Iterable[tuple[str, ast.Expr]],
    instrument: Instrument,
    joined: set[str],
    query: dict,
    settings: EngineSettings,
) -> list[str]:
    """One warning for the first of the first stage's ``named`` expressions (its map's and
    select's) named as dollars whose points are multiplied by another instrument's point
    value; else none."""
    scaled_dollars = [
        (name, product)
        for name, expr in named
        if any(word in name.lower() for word in _DOLLAR_NAMES)
        for product in _products(expr)
    ]
    if not scaled_dollars:  # most queries: no instrument file is read
        return []
    others: dict[float, list[str]] = {}
    for symbol in available_instruments(settings):
        if symbol == instrument.symbol or symbol in joined:
            continue
        value = load_instrument(symbol, settings).point_value
        if value != instrument.point_value:
            others.setdefault(value, []).append(symbol)
    for name, (factor, scaled) in scaled_dollars:
        symbols = others.get(factor)
        if symbols and first_map_unit(scaled, query) == POINTS:
            theirs = " and ".join(f"{s}'s" for s in symbols)
            ratio = instrument.point_value / factor
            off = f"{ratio:,g} times too small" if ratio > 1 else f"{1 / ratio:,g} times too large"
            return [
                f"{name} multiplies {instrument.symbol}'s points by {factor:g}, {theirs} "
                f"dollars per point: one {instrument.symbol} contract's 1.0 move is "
                f"{instrument.point_value:,g} USD, so {name} is {off} for one "
                f"{instrument.symbol} contract."
            ]
    return []


def _products(expr: ast.Expr) -> Iterator[tuple[float, ast.Expr]]:
    """Each ``x * k`` or ``k * x`` in ``expr`` with ``k`` a positive number, as (k, x)."""
    for node in ast.walk(expr):
        if not isinstance(node, ast.Binary) or node.op != "*":
            continue
        for number, other in ((node.right, node.left), (node.left, node.right)):
            value = ast.literal_value(number)
            if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
                yield float(value), other
