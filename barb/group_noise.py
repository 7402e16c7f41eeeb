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

A ranking names its first group even when the ends are far apart: "the quietest hour" of NQ's
ETH, sorted by mean % range, named 21:00 at 0.233% while seven other overnight hours lay
between 0.2343% and 0.2369%, each known to about ±0.002. So when a grouped result is sorted
by a mean and its second group is within ``NOISE_ERRORS`` standard errors of the difference
from the first, every group within that noise is counted and the first few named.

Cost: every group's spread in one weighted bincount over the rows, only when a grouped mean
is there to check (about 24 ms on 6.4 million minute bars).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from barb.planning import SelectItem
from barb.script import ast
from barb.script.bincount import bincount, bincount_squares
from barb.script.context import RowGroups
from barb.script.evaluator import SelectValue
from barb.script.query import SortKey
from barb.summary_text import value_text

# Standard errors of the difference between the highest and the lowest group's means below
# which the difference is said to be noise: about the 95% band of a two-sided test.
NOISE_ERRORS = 2.0
# Groups within the first one's noise named with their mean; the others are counted.
_NAMED_GROUPS = 5


@dataclass(frozen=True)
class EvenGroups:
    """The warnings (none, or one sentence each), the columns whose groups are all within
    noise, and the grouped means checked whose ends are not, each with its ends' text
    ("highest fomc true 2.775 ± 0.3, lowest fomc false 2.239 ± 0.041"): a points column
    within noise over blended price levels can have its percent form beside it apart."""

    warnings: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    apart: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Spread:
    """One group's mean and standard error, named as the warning writes it."""

    name: str
    mean: float
    error: float

    def value(self) -> str:
        return f"{value_text(self.mean)} ± {_rounded(NOISE_ERRORS * self.error)}"

    def text(self) -> str:
        return f"{self.name} {self.value()}"


def even_groups(
    select: Sequence[SelectItem],
    answers: Mapping[str, SelectValue],
    sort: Sequence[SortKey] = (),
) -> EvenGroups:
    """The select items that are means by group whose highest and lowest groups differ by
    less than ``NOISE_ERRORS`` standard errors of the difference, and the ranking a sort by
    such a mean names first within the noise of those after it; read from the values each
    mean was taken over (no evaluation again)."""
    said, columns, ranked = [], [], []
    apart: dict[str, str] = {}
    ranking = sort[0].column if sort else None
    for item in select:
        groups = _Groups.of(item, answers[item.name])
        if groups is None:
            continue
        ends = groups.ends()
        if ends is not None and _within_noise(*ends):
            said.append(f"{item.name} highest {ends[0].text()}, lowest {ends[1].text()}")
            columns.append(item.name)
            continue
        if ends is not None:
            apart[item.name] = f"highest {ends[0].text()}, lowest {ends[1].text()}"
        if item.name == ranking:
            ranked += groups.ranked_first(descending=sort[0].descending, column=item.name)
    warnings = ranked
    if said:
        warnings = [
            "The groups' means differ by less than their noise: "
            f"{'; '.join(said)} (± {NOISE_ERRORS:g} standard errors).",
            *ranked,
        ]
    return EvenGroups(warnings, columns, apart)


def _within_noise(one: _Spread, other: _Spread) -> bool:
    return abs(one.mean - other.mean) < NOISE_ERRORS * math.hypot(one.error, other.error)


@dataclass
class _Groups:
    """A grouped ``mean(x)`` item: its means, the values they were taken over, the groups,
    and every group's standard error once asked for."""

    means: np.ndarray
    values: pd.Series
    rows: RowGroups
    errors: np.ndarray | None = None

    @classmethod
    def of(cls, item: SelectItem, answer: SelectValue) -> _Groups | None:
        """None for any other item than a grouped mean of one argument."""
        expr = item.expr
        if not (isinstance(expr, ast.Call) and expr.name.lower() == "mean" and len(expr.args) == 1):
            return None
        rows, args = answer.rows, answer.samples.get(expr)
        if not rows.grouped or not args or not isinstance(args[0], pd.Series):
            return None
        means = pd.to_numeric(pd.Series(answer.value), errors="coerce")
        return cls(means.to_numpy(dtype=np.float64), args[0], rows)

    def spread(self, at: int) -> _Spread | None:
        """Group ``at``'s mean and standard error; None under two rows with a value."""
        if self.errors is None:
            self.errors = _every_error(self.values, self.rows, self.means)
        error = float(self.errors[at])
        if not math.isfinite(error):
            return None
        assert self.rows.index is not None
        return _Spread(_group_name(self.rows.index, at), float(self.means[at]), error)

    def ends(self) -> tuple[_Spread, _Spread] | None:
        """The highest and the lowest group; None under two groups with a mean, or an end
        group of fewer than two rows."""
        finite = np.flatnonzero(np.isfinite(self.means))
        if len(finite) < 2:
            return None
        high = int(finite[np.argmax(self.means[finite])])
        low = int(finite[np.argmin(self.means[finite])])
        if high == low:
            return None
        spreads = self.spread(high), self.spread(low)
        if spreads[0] is None or spreads[1] is None:
            return None
        return spreads[0], spreads[1]

    def ranked_first(self, *, descending: bool, column: str) -> list[str]:
        """A sentence when the group the sort puts first is within noise of the next one,
        naming every group within its noise in the sort's order."""
        finite = np.flatnonzero(np.isfinite(self.means))
        keys = -self.means[finite] if descending else self.means[finite]
        order = finite[np.argsort(keys, kind="stable")]  # as the table's stable sort
        if len(order) < 2:
            return []
        first, second = self.spread(int(order[0])), self.spread(int(order[1]))
        if first is None or second is None or not _within_noise(first, second):
            return []  # a clear first, or no spread to tell: one group picked at most
        close = [
            spread
            for spread in (self.spread(int(at)) for at in order[1:])
            if spread is not None and _within_noise(first, spread)
        ]
        named = [f"{s.name} {value_text(s.mean)}" for s in close[:_NAMED_GROUPS]]
        more = len(close) - len(named)
        listed = ", ".join(named) + (f" and {more} more" if more else "")
        others = "other group is" if len(close) == 1 else "other groups are"
        return [
            f"{column}: {first.name} ranks first at {first.value()} (± {NOISE_ERRORS:g} "
            f"standard errors), but {len(close)} {others} within {NOISE_ERRORS:g} standard "
            f"errors of the difference from it: {listed}; their order is noise."
        ]


def _every_error(values: pd.Series, rows: RowGroups, means: np.ndarray) -> np.ndarray:
    """Each group's standard error of its mean, std (ddof 1) / sqrt(n) over its rows with a
    value; NaN under two rows, or values that are not numbers.

    One pass of the squares about a common centre: a group's sum of squares about its own
    mean is that less n (mean - centre)², with the means select took. Whole numbers (volume)
    are never missing and are read as they are."""
    assert rows.codes is not None
    codes, counts = rows.codes, rows.sizes
    if values.dtype.kind in "iu":
        numbers = values.to_numpy()
    else:
        try:
            numbers = values.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):  # not numbers: a spread means nothing
            return np.full(rows.ngroups, np.nan)
        missing = np.isnan(numbers)
        if missing.any():
            counts = None
            codes, numbers = codes[~missing], numbers[~missing]
    if rows.sizes is None and (codes < 0).any():  # rows in no group
        counts = None
        numbers, codes = numbers[codes >= 0], codes[codes >= 0]
    if counts is None:
        counts = bincount(codes, minlength=rows.ncodes)
    by_code = np.full(rows.ncodes, np.nan)
    by_code[rows.slots if rows.slots is not None else np.arange(rows.ngroups)] = means
    finite = means[np.isfinite(means)]
    centre = float(np.median(finite)) if len(finite) else 0.0
    squares = bincount_squares(codes, numbers, centre, minlength=rows.ncodes)
    n = counts.astype(np.float64)
    with np.errstate(all="ignore"):
        own = np.maximum(squares - n * (by_code - centre) ** 2, 0.0)
        errors = np.sqrt(own / (n - 1) / n)
    errors[n < 2] = np.nan
    return errors if rows.slots is None else errors[rows.slots]


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
