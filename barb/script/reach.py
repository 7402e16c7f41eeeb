"""How far an expression reaches beyond the bar it is computed for.

A period selects rows; it must not cut the history that ``prev()``, rolling windows,
indicators and patterns read. The planner asks this module how many bars before (and after,
for ``next()``) the period each expression needs, and evaluates on that slice:
- finite windows need exactly their length, so the answer equals the computation over all
  history;
- recursive smoothing (EMA, Wilder) never forgets its start, but its weight decays
  geometrically: after :func:`decay_bars` bars the start's weight is below 1e-12, far below
  the 1e-6 the engine promises against TA-Lib over all history;
- running totals and counts since an event (cumsum, obv, streak, bars_since, rank) need
  everything before: their reach is unbounded (``None``).

Every function of the library has a rule here: a row-wise category reaches nothing, and a
test checks that no order-dependent function is missing from the table.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from barb.script import ast
from barb.script.functions import FunctionSpec
from barb.script.library import lookup

# Relative weight left on a recursive smoother's seed after its warm-up.
_DECAY_TOLERANCE = 1e-12


@dataclass(frozen=True)
class Reach:
    """Bars needed before (None: all history) and after the bar being computed."""

    back: int | None = 0
    ahead: int = 0

    def then(self, other: Reach) -> Reach:
        """Reach of a function of reach ``self`` applied to an argument of reach ``other``."""
        back = None if self.back is None or other.back is None else self.back + other.back
        return Reach(back, self.ahead + other.ahead)

    def widest(self, other: Reach) -> Reach:
        back = None if self.back is None or other.back is None else max(self.back, other.back)
        return Reach(back, max(self.ahead, other.ahead))

    @property
    def local(self) -> bool:
        """True when every row can be computed from that row alone."""
        return self.back == 0 and self.ahead == 0


ROW = Reach()
ALL = Reach(None)


def decay_bars(alpha: float) -> int:
    """Bars after which a smoother with factor ``alpha`` has forgotten its seed."""
    if alpha >= 1:  # ema(x, 1) is x itself: nothing to forget
        return 0
    return math.ceil(math.log(_DECAY_TOLERANCE) / math.log1p(-alpha))


def _ema(n: int) -> int:
    return n + decay_bars(2 / (n + 1))


def _wilder(n: int) -> int:
    return n + decay_bars(1 / n)


Args = dict[str, Any]
Rule = Callable[[Args], Reach]

# Order-dependent functions by name: literal arguments (with defaults) -> reach of the call
# itself; the reach of its series arguments is added on top.
_RULES: dict[str, Rule] = {
    "prev": lambda a: Reach(a["n"]),
    "next": lambda a: Reach(0, a["n"]),
    "rolling_mean": lambda a: Reach(a["n"] - 1),
    "rolling_sum": lambda a: Reach(a["n"] - 1),
    "rolling_max": lambda a: Reach(a["n"] - 1),
    "rolling_min": lambda a: Reach(a["n"] - 1),
    "rolling_std": lambda a: Reach(a["n"] - 1),
    "rolling_count": lambda a: Reach(a["n"] - 1),
    "ema": lambda a: Reach(_ema(a["n"])),
    "cummax": lambda a: ALL,
    "cummin": lambda a: ALL,
    "cumsum": lambda a: ALL,
    "streak": lambda a: ALL,
    "bars_since": lambda a: ALL,
    "rank": lambda a: ALL,
    "obv": lambda a: ALL,
    "rsi": lambda a: Reach(_wilder(a["n"])),
    "true_range": lambda a: Reach(1),
    "atr": lambda a: Reach(1 + _wilder(a["n"])),
    # DX from Wilder-smoothed +DM/-DM/TR, then ADX as Wilder's smoothing of DX.
    "adx": lambda a: Reach(1 + 2 * _wilder(a["n"])),
    "plus_di": lambda a: Reach(1 + _wilder(a["n"])),
    "minus_di": lambda a: Reach(1 + _wilder(a["n"])),
    "cci": lambda a: Reach(a["n"] - 1),
    "mfi": lambda a: Reach(a["n"]),
    "bollinger_upper": lambda a: Reach(a["n"] - 1),
    "bollinger_middle": lambda a: Reach(a["n"] - 1),
    "bollinger_lower": lambda a: Reach(a["n"] - 1),
    "donchian_upper": lambda a: Reach(a["n"] - 1),
    "donchian_middle": lambda a: Reach(a["n"] - 1),
    "donchian_lower": lambda a: Reach(a["n"] - 1),
    "stochastic_k": lambda a: Reach(a["k"] + a["slowing"]),
    "stochastic_d": lambda a: Reach(a["k"] + a["slowing"] + a["d"]),
    "macd": lambda a: Reach(_ema(a["slow"])),
    "macd_signal": lambda a: Reach(_ema(a["slow"]) + _ema(a["signal"])),
    "macd_hist": lambda a: Reach(_ema(a["slow"]) + _ema(a["signal"])),
    "keltner_upper": lambda a: Reach(max(_ema(a["n"]), 1 + _wilder(a["atr_n"]))),
    "keltner_middle": lambda a: Reach(_ema(a["n"])),
    "keltner_lower": lambda a: Reach(max(_ema(a["n"]), 1 + _wilder(a["atr_n"]))),
    # Resets each trading date: the slice is always widened to whole trading dates.
    "vwap": lambda a: ROW,
}

# Categories whose functions read only the row itself (or its trading date's session bars).
_ROW_CATEGORIES = frozenset({"scalar", "time", "session", "aggregate"})


def reach(expr: ast.Node) -> Reach:
    """How many bars before and after each row ``expr`` reads."""
    if isinstance(expr, ast.Call):
        spec = lookup(expr.name)
        own = _own_reach(spec, expr) if spec is not None else ROW
        inner = ROW
        for arg in expr.args:
            inner = inner.widest(reach(arg))
        return own.then(inner)
    result = ROW
    for child in expr.children():
        result = result.widest(reach(child))
    return result


def _own_reach(spec: FunctionSpec, call: ast.Call) -> Reach:
    if spec.name in _RULES:
        return _RULES[spec.name](_literal_args(spec, call))
    if spec.category == "candle":
        return ALL if spec.body is None else reach(spec.body)
    if spec.category in _ROW_CATEGORIES:
        return ROW
    return ALL  # an order-dependent function without a rule: never cut its history


def has_rule(spec: FunctionSpec) -> bool:
    """Whether the reach of ``spec`` is known rather than assumed unbounded."""
    return spec.name in _RULES or spec.category in _ROW_CATEGORIES | {"candle"}


def _literal_args(spec: FunctionSpec, call: ast.Call) -> Args:
    """Literal parameters of a call by name, defaults filled in (validation has run)."""
    values: Args = {}
    for i, param in enumerate(spec.params):
        if param.kind == "series":
            continue
        value = ast.literal_value(call.args[i]) if i < len(call.args) else None
        if value is None:
            value = param.default
        values[param.name] = int(value) if isinstance(value, int | float) else value
    return values
