"""Comparisons of a calendar or clock function with a number it never returns.

``month() == 13`` read "count = 0" and "No bars matched" with no cause, and ``month() in (1, 2,
13)`` dropped the 13 without a word (p34c M2): the same mistake as ``dayname() == 'Monday'``,
which the evaluator refuses because 'Monday' is none of the day names. Here the ranges are
the registry's (``FunctionSpec.values``: month() 1-12, hour() 0-23, dayofweek() 0-6), and a
comparison that no value in the range can satisfy is refused before the query runs, through
map names too (``"m": "month()"`` with ``m == 13``). A comparison that every value satisfies
(month() <= 12) is harmless and passes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from barb.errors import TypeMismatch
from barb.lineage import through_map
from barb.script import ast
from barb.script.functions import FunctionSpec
from barb.script.library import lookup

# Whether ``op value`` can hold for no value from low to high (month() > 12).
_NEVER: dict[str, Callable[[float, float, float], bool]] = {
    "==": lambda v, low, high: v < low or v > high or not float(v).is_integer(),
    "<": lambda v, low, high: v <= low,
    "<=": lambda v, low, high: v < low,
    ">": lambda v, low, high: v >= high,
    ">=": lambda v, low, high: v > high,
}
_MIRRORED = {"==": "==", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def out_of_range(expr: ast.Expr, mapped: Mapping[str, ast.Expr], step: str) -> list[TypeMismatch]:
    """An error for each comparison in ``expr`` that its function's range never satisfies;
    ``mapped``: the map entries its names may stand for.

    >>> from barb.script.parser import parse_expression
    >>> [error] = out_of_range(parse_expression("month() == 13"), {}, "where")
    >>> error.message
    "month() runs 1-12, so 'month() == 13' never matches."
    """
    errors = []
    for node in ast.walk(expr):
        error = _never_matching(node, mapped, step)
        if error is not None:
            errors.append(error)
    return errors


def _never_matching(
    node: ast.Node, mapped: Mapping[str, ast.Expr], step: str
) -> TypeMismatch | None:
    if isinstance(node, ast.Compare) and node.op in _MIRRORED:  # != excludes one value
        sides = ((node.left, node.right, node.op), (node.right, node.left, _MIRRORED[node.op]))
        for side, other, op in sides:
            found = _ranged(side, mapped)
            value = _number(other)
            if found is not None and value is not None and _NEVER[op](value, *found.values):
                return found.error(f"'{node.to_text()}' never matches", step)
    elif isinstance(node, ast.InList) and not node.negated:
        found = _ranged(node.operand, mapped)
        if found is None:
            return None
        values = [_number(v) for v in node.values]
        outside = [v for v in values if v is not None and _NEVER["=="](v, *found.values)]
        if outside:
            listed = ", ".join(_text(v) for v in outside)
            verb = "never matches" if len(outside) == 1 else "never match"
            return found.error(f"{listed} in '{node.to_text()}' {verb}", step)
    return None


@dataclass(frozen=True)
class _Ranged:
    """A call of a function with a fixed range, as a message names it: "month()", or
    "m (month())" for a map column."""

    spec: FunctionSpec
    values: tuple[int, int]
    what: str

    def error(self, consequence: str, step: str) -> TypeMismatch:
        low, high = self.values
        return TypeMismatch(
            f"{self.what} runs {low}-{high}, so {consequence}.",
            step=step,
            hint=f"{self.spec.signature()} — {self.spec.summary}",
        )


def _ranged(expr: ast.Expr, mapped: Mapping[str, ast.Expr]) -> _Ranged | None:
    """The call of a function with a fixed range that ``expr`` is (through map names)."""
    call = through_map(expr, mapped)
    if not isinstance(call, ast.Call):
        return None
    spec = lookup(call.name)
    if spec is None or spec.values is None:
        return None
    what = call.to_text()
    return _Ranged(spec, spec.values, what if call is expr else f"{expr.to_text()} ({what})")


def _number(expr: ast.Expr) -> float | None:
    value = ast.literal_value(expr)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def _text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
