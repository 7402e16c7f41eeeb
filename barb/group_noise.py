"""Groups' means that differ by less than their own noise: no group "wins".

"The most volatile weekday" over 18 years of NQ: Wednesday's mean range 140.64 against
Monday's 137.21, each over about 900 days whose ranges spread about 130 points, so each mean
is known to about ±4.3 (one standard error) and the 3.4-point gap between the highest and
the lowest is noise; in percent of the price the order even changes. The model and the
chart's headline named Wednesday. So for each select item that is a mean (``mean(x)``) by
group, when the highest and the lowest group's means differ by less than ``NOISE_ERRORS``
standard errors of their difference (each group's std / sqrt(n)), a warning says so, and the
result's metadata names the column (``Metadata.even_groups``) for a chart to say "the
differences are small" rather than name a winner.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from barb.planning import SelectItem
from barb.script import ast
from barb.script.context import RowGroups
from barb.script.evaluator import SelectValue
from barb.summary_text import value_text

# Standard errors of the difference between the highest and the lowest group's means below
# which the difference is said to be noise: about the 95% band of a two-sided test.
NOISE_ERRORS = 2.0


@dataclass(frozen=True)
class EvenGroups:
    """The warning (none, or one sentence) and the columns whose groups are within noise."""

    warnings: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Spread:
    """One group's mean and standard error, named as the warning writes it."""

    name: str
    mean: float
    error: float

    def text(self) -> str:
        return f"{self.name} {value_text(self.mean)} ± {_rounded(NOISE_ERRORS * self.error)}"


def even_groups(select: Sequence[SelectItem], answers: Mapping[str, SelectValue]) -> EvenGroups:
    """The select items that are means by group whose highest and lowest groups differ by
    less than ``NOISE_ERRORS`` standard errors of the difference; read from the values each
    mean was taken over (no evaluation again)."""
    said, columns = [], []
    for item in select:
        ends = _ends(item, answers[item.name])
        if ends is None:
            continue
        high, low = ends
        if high.mean - low.mean < NOISE_ERRORS * math.hypot(high.error, low.error):
            said.append(f"{item.name} highest {high.text()}, lowest {low.text()}")
            columns.append(item.name)
    if not said:
        return EvenGroups()
    return EvenGroups(
        [
            "The groups' means differ by less than their noise: "
            f"{'; '.join(said)} (± {NOISE_ERRORS:g} standard errors)."
        ],
        columns,
    )


def _ends(item: SelectItem, answer: SelectValue) -> tuple[_Spread, _Spread] | None:
    """The highest and the lowest group of a ``mean(x)`` item with their standard errors;
    None for any other item, fewer than two groups, or an end group of fewer than two rows.

    Only the two end groups' rows are read again (two comparisons of the group codes): on
    6 million minute bars by time of day, every group's spread cost half a second."""
    expr = item.expr
    if not (isinstance(expr, ast.Call) and expr.name.lower() == "mean" and len(expr.args) == 1):
        return None
    rows, args = answer.rows, answer.samples.get(expr)
    if not rows.grouped or not args or not isinstance(args[0], pd.Series):
        return None
    means = pd.to_numeric(pd.Series(answer.value), errors="coerce").to_numpy(dtype=np.float64)
    finite = np.flatnonzero(np.isfinite(means))
    if len(finite) < 2:
        return None
    high, low = finite[np.argmax(means[finite])], finite[np.argmin(means[finite])]
    if high == low:
        return None
    assert rows.index is not None
    ends = []
    for at in (high, low):
        error = _error(args[0], rows, int(at))
        if error is None:
            return None
        ends.append(_Spread(_group_name(rows.index, int(at)), float(means[at]), error))
    return ends[0], ends[1]


def _error(values: pd.Series, rows: RowGroups, at: int) -> float | None:
    """The standard error of group ``at``'s mean, std (ddof 1) / sqrt(n) over its rows with
    a value; None under two rows, or values that are not numbers. The group's rows are
    picked before any conversion: a copy of millions of values cost more than the rest."""
    assert rows.codes is not None
    code = int(rows.slots[at]) if rows.slots is not None else at
    picked = values.array[np.flatnonzero(rows.codes == code)]
    try:
        held = picked.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):  # not numbers: a spread means nothing
        return None
    held = held[~np.isnan(held)]
    if len(held) < 2:
        return None
    return float(held.std(ddof=1) / math.sqrt(len(held)))


def _group_name(index: pd.Index, at: int) -> str:
    """ "Wed", "09:30", "month 1", "year 2024 month 3": a text key alone, a number with its
    key's name."""
    values = index[at] if isinstance(index, pd.MultiIndex) else (index[at],)
    names = [name or "group" for name in index.names]
    return " ".join(
        value_text(value) if isinstance(value, str) else f"{name} {value_text(value)}"
        for name, value in zip(names, values, strict=True)
    )


def _rounded(value: float) -> str:
    """Two significant digits: 8.6, 0.021, 140."""
    return f"{float(f'{value:.2g}'):g}"
