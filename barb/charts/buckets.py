"""Groups keyed by a bucket of a number (``floor(ret_pct, 0.5)``, ``ceil(range, 10)``,
``round(gap, 1)``): drawn on a true number line, each bar as wide as its bucket, so that an
empty bucket is a gap and the tails stand apart. As evenly spaced categories, −11.5 → −4.5
took the width of −4.5 → −2.5, and the 11% day stood beside the 6.5% ones."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from barb.charts.value_text import TickFormatter, format_value, number_text, with_unit
from barb.charts.words import Words
from barb.lineage import Lineage
from barb.script import ast

# How a bucket's bar sits from its key, in steps: floor's key is its lowest value, ceil's
# its highest, round's its middle.
_START = {"floor": 0.0, "ceil": -1.0, "round": -0.5}
MAX_DECIMALS = 6


@dataclass(frozen=True)
class Buckets:
    """Where each group's bar starts on the number line and how wide it is; ``step`` is
    None when the keys are not evenly stepped (each bar then sits on its key, narrower)."""

    starts: np.ndarray
    width: float
    step: float | None

    def centres(self) -> np.ndarray:
        return self.starts + self.width / 2

    def label(self, at: int, value_unit: str | None, words: Words) -> str:
        """The bucket at ``at`` as its range (``−0.5 … 0%``), or its key when the step is
        not known: both written as the language writes numbers (``−0,5 … 0 %``)."""
        lo = float(self.starts[at])
        if self.step is None:
            return self._number(lo + self.width / 2, value_unit, words)
        first = number_text(lo, _places(lo), words)
        return f"{first} … {self._number(lo + self.step, value_unit, words)}"

    def _number(self, value: float, value_unit: str | None, words: Words) -> str:
        """``value`` with only the decimals it has (0, not 0.00; 0.25)."""
        decimals = _places(value)
        if value_unit == "%":
            return format_value(value, "%", decimals=decimals, words=words)
        return with_unit(number_text(value, decimals, words), value_unit, words, value)


def numeric_buckets(result: Any, table: pd.DataFrame, by: list[str]) -> Buckets | None:
    """The number line of a table grouped by one bucket key, in key order; None for other
    groups (a weekday, a year, several keys)."""
    if len(by) != 1 or table.empty:
        return None
    column = table[by[0]]
    if column.dtype.kind not in "fiu" or column.isna().any():
        return None
    found = Lineage(result.query).definition(by[0])
    call = found[0] if found is not None else None
    if not isinstance(call, ast.Call) or call.name not in _START:
        return None
    keys = column.to_numpy(dtype="float64")
    if len(keys) < 2 or np.any(np.diff(keys) <= 0):  # drawn left to right by key
        return None
    step = _step(call)
    if step is None or not _on_steps(keys, step):
        gaps = np.diff(keys)
        width = float(gaps.min()) * 0.8
        return Buckets(keys - width / 2, width, None)
    return Buckets(keys + _START[call.name] * step, step, step)


def _step(call: ast.Call) -> float | None:
    """The bucket's width as the call writes it: ``floor(x, 0.5)`` 0.5, ``floor(x)`` 1,
    ``round(x, 1)`` 0.1; None when it is no number."""
    arg = call.args[1] if len(call.args) > 1 else None
    if arg is None:
        return 1.0
    if isinstance(arg, ast.Unary) and isinstance(arg.operand, ast.Number):
        return None
    if not isinstance(arg, ast.Number) or not arg.value:
        return None
    value = float(arg.value)
    return 10.0 ** (-value) if call.name == "round" else abs(value)


def _on_steps(keys: np.ndarray, step: float) -> bool:
    """Whether every key is a multiple of ``step`` apart from the first."""
    steps = (keys - keys[0]) / step
    return bool(np.allclose(steps, np.round(steps), atol=1e-6))


def _places(value: float) -> int:
    """The fewest decimals that write ``value`` as it is (0.25 needs two, 0 none)."""
    for places in range(MAX_DECIMALS + 1):
        if abs(value - round(value, places)) <= 10.0 ** -(MAX_DECIMALS + 2):
            return places
    return MAX_DECIMALS


def number_line(ax: Axes, buckets: Buckets, words: Words, value_unit: str | None) -> None:
    """The group axis as numbers, ticked where the locator finds round ones, and spanning
    the buckets with half a bucket to spare each side."""
    ax.xaxis.set_major_locator(MaxNLocator(nbins=7, steps=[1, 2, 2.5, 5, 10]))
    ax.xaxis.set_major_formatter(TickFormatter(words, value_unit))
    pad = buckets.width / 2
    ax.set_xlim(buckets.starts[0] - pad, buckets.starts[-1] + buckets.width + pad)
