"""How many rows a statistic was taken over, when that is fewer than the rows kept.

``mean(nr)`` with ``nr = if(close > open, next(ret), 0 / 0)`` over 4,649 days is the mean
of the 2,390 up days' next returns; the result said "4,649 matched", and the model answered
"over 4,649 days". Statistics that skip missing values (``FunctionSpec.sample``) say their
own count whenever it is smaller: beside the value for a single row, in a warning for groups.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from barb.planning import SelectItem
from barb.script import ast
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate
from barb.script.library import lookup

# A sample size is said when at least this share of the rows kept is empty.
NOTABLE_SHARE = 0.01


def sample_sizes(
    select: Sequence[SelectItem], ctx: EvalContext, by: Sequence[str] = ()
) -> tuple[dict[str, int], int]:
    """Per select item taken over notably fewer rows than ``ctx.frame`` holds (those with
    all its ``by`` keys): how many; and how many rows that is against. Only items with
    exactly one sample statistic in them count. Notable: more than one row and at least
    ``NOTABLE_SHARE`` of them empty (the data's first day, with no previous close, is not)."""
    kept = len(ctx.frame)
    rows: np.ndarray | None = None
    sizes: dict[str, int] = {}
    for item in select:
        calls = _aggregates(item.expr)
        if len(calls) != 1 or not calls[0][1]:
            continue
        call, arity = calls[0]
        present: np.ndarray | None = None
        for arg in call.args[:arity]:
            named = isinstance(arg, ast.Column) and arg.name in ctx.frame.columns
            values = ctx.frame[arg.name] if named else evaluate(arg, ctx)
            if np.ndim(values) == 0:  # a literal: present or not on every row
                if isinstance(values, float) and not np.isfinite(values):
                    present = np.zeros(len(ctx.frame), dtype=bool)
                continue
            has = _present(values)
            if has is None:  # every row has it: the common case
                continue
            present = has if present is None else present & has
        if present is None:
            continue
        if rows is None:  # the rows in groups: those with every key, found once
            rows = np.ones(len(ctx.frame), dtype=bool)
            for key in by:
                rows &= ctx.frame[key].notna().to_numpy()
            kept = int(np.count_nonzero(rows))
        empty = kept - int(np.count_nonzero(present & rows))
        if empty > 1 and empty >= NOTABLE_SHARE * kept:
            sizes[item.name] = kept - empty
    return sizes, kept


def sample_caveats(sizes: dict[str, int], kept: int) -> list[str]:
    """For grouped results: the statistics' rows in all, against the rows kept, one line per
    count."""
    by_size: dict[int, list[str]] = {}
    for name, size in sizes.items():
        by_size.setdefault(size, []).append(name)
    return [
        f"{' and '.join(names)} {'is' if len(names) == 1 else 'are'} over the {size:,} of the "
        f"{kept:,} rows kept that have a value (the others are empty); count() counts all "
        "of them."
        for size, names in by_size.items()
    ]


def _present(values: pd.Series) -> np.ndarray | None:
    """Which rows have a value; None when all do (read from the numbers, not through
    pandas' missing-value machinery: this runs on every aggregate)."""
    if isinstance(values.dtype, np.dtype) and values.dtype.kind in "iub":
        return None
    if isinstance(values.dtype, np.dtype) and values.dtype.kind == "f":
        missing = np.isnan(values.to_numpy())
    else:
        missing = values.isna().to_numpy()
    return ~missing if missing.any() else None


def _aggregates(expr: ast.Expr) -> list[tuple[ast.Call, int]]:
    """The aggregate calls in ``expr``, each with its ``sample`` arity (0: not a sample
    statistic, such as count() in ``mean(x) / count()``)."""
    if isinstance(expr, ast.Call):
        spec = lookup(expr.name)
        if spec is not None and spec.is_aggregate:
            return [(expr, spec.sample)]
    found: list[tuple[ast.Call, int]] = []
    for field in expr.CHILDREN:
        value = getattr(expr, field)
        for child in value if isinstance(value, tuple) else (value,):
            found += _aggregates(child)
    return found
