"""Whether an answer moves beyond its own noise when some of its rows are left out.

A warning that some rows are not what they seem (the short sessions among 517 day rows)
matters when the answer without them is another answer. p39a counted 13 firings of the
short-session sentence, all true, and one that changed anything: the mean post-cash volume
of NQ's RTH days in 2024-2025 was 7,075.5 with the 20 holiday and early-close days (no bar
after 16:00 there) and 7,366 without, 2.5 standard errors away; the mean day volume 288,934
against 294,234 is 1.4, within the noise of the days' own spread, and the day range 340.87
against 343.46 is 0.5. So a value is said to have moved when the answer lies outside the
band the rows left put around their own value: the answer a trader would have had without
them, and how far it is known. (The band of all the rows holds the part days' spread too,
and widens with the very rows it is asked about: 2 short days among 15 made it wide enough
to hold a mean day volume 6% off.)

- ``mean``, ``sum`` and a count of a condition: the mean of what they add up moves by
  more than 2 standard errors (the band the no-edge and setup-noise warnings say), or by
  ``SHARE_MOVED`` of itself or more: a value a few rows make, within the noise of the rest
  as it may be, is read as the answer's. A sum is that mean times its rows; fewer rows
  alone are no other answer, but a total they move by ``HOLIDAY_SHIFT`` of itself is
  (sum(pnl) is the same total as last(cumsum(pnl)), which any change moves). The ORB
  long's expectancy in 2024 read 3.92 points, 1.48 without its 8 holiday and half days
  (within ±15), and nothing was said, where 2024-2025's total (the last row of its cumsum,
  a value one row gives) 1,618.75 -> 1,002.5 was (p48j q21, q03).
- ``median`` and ``percentile``: outside the order statistics 2 binomial standard
  deviations of rank either side (a quantile's distribution-free band).
- ``std``, ``correlation``, ``skew``, ``kurt``: 2 of their large-sample standard errors.
- a value one row gives (``min``, ``max``, ``first``, ``last``, ``arg_min``, ``arg_max``,
  ``mode``; ``max(loss_run)`` of a streak, ``min(dd)`` of a drawdown): any change in the
  digits shown. The longest losing streak is 6 or 7, with no band about it.
- ``count()``: a count of rows falls by the rows left out, which the warning says: only in
  groups is it read, as each group's share of the rows.

In a grouped answer each group is read so; a group only those rows made is gone without
them, and the group a sort lists first may change. Cost: each aggregate evaluated again over
the two stages' rows (a then stage's few hundred day rows).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from barb.caveats.calendar import HOLIDAY_SHIFT
from barb.planning import StagePlan
from barb.script import ast
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate, evaluate_aggregate
from barb.script.library import is_aggregate_call, lookup
from barb.stage_output import SINGLE_ROW, StageOutput
from barb.summary_text import listed_text, value_text

# The band: this many standard errors (as no_edge and setup_noise say theirs).
ERRORS = 2.0
# A mean moved by this share of itself is another answer, whatever its noise (see above).
SHARE_MOVED = 0.25
# The aggregates whose value is the mean of what they read (a count of a condition too).
MEANS = frozenset({"mean", "sum", "count"})
QUANTILES = frozenset({"median", "percentile"})
# Large-sample standard errors of a statistic's value v over n rows.
SPREADS: dict[str, Callable[[float, int], float]] = {
    "std": lambda v, n: abs(v) / math.sqrt(2 * (n - 1)),
    "correlation": lambda v, n: (1 - v * v) / math.sqrt(n - 1),
    "skew": lambda v, n: math.sqrt(6 / n),
    "kurt": lambda v, n: math.sqrt(24 / n),
}
# Groups named with their values; more are counted.
NAMED_GROUPS = 3


def moved_values(
    stage: StagePlan, ctx: EvalContext, answer: StageOutput, without: StageOutput
) -> list[str]:
    """The values of ``stage``'s answer (``answer``) outside the band of the same stage run
    without some rows (``without``), as that answer shows them: ['exp_pts is 0.32',
    'max_losses_in_row is 5'], or for groups ["'low first': avg_ret is 0.95", "'14:00' comes
    first"]. [] when none moved. ``ctx`` is the stage's context, evaluated again over each
    one's rows kept."""
    if answer.kept is None or without.kept is None:
        return []
    by = [name for name, _ in stage.group_keys]
    before, after = _over(ctx, answer.kept), _over(ctx, without.kept)
    if stage.shape in SINGLE_ROW:
        values = _single_values(without)
        return [
            f"{item.name} is {value_text(values.get(item.name))}"
            for item in stage.select
            if any(
                bool(_moved(call, before, after, None, total=call is item.expr)[1].any())
                for call in _calls(item.expr)
            )
        ]
    if stage.shape != "grouped" or answer.table is None or without.table is None:
        return []
    return _grouped(stage, by, before, after, answer.table, without.table)


def _grouped(
    stage: StagePlan,
    by: list[str],
    before: EvalContext,
    after: EvalContext,
    table: pd.DataFrame,
    table_without: pd.DataFrame,
) -> list[str]:
    """'14:00: days is 44', and '14:00 comes first' when a sort lists another group first."""
    found: dict[Any, list[str]] = {}
    listed = table.set_index(by).index
    values = table_without.set_index(by)
    for item in stage.select:
        moved = pd.Series(False, index=listed)
        for call in _calls(item.expr):
            groups, flags = _moved(call, before, after, by, total=call is item.expr)
            moved |= pd.Series(flags, index=groups).reindex(listed, fill_value=False)
        for key in listed[moved.to_numpy()]:
            value = values[item.name].get(key) if key in values.index else None
            found.setdefault(key, []).append(
                f"{item.name} is {value_text(value)}" if value is not None else "gone"
            )
    said = [
        f"{_label(key)}: {listed_text(list(dict.fromkeys(texts)))}"
        for key, texts in list(found.items())[:NAMED_GROUPS]
    ]
    if len(found) > NAMED_GROUPS:
        said.append(f"{len(found) - NAMED_GROUPS} more groups")
    if stage.sort and len(values) and values.index[0] != listed[0]:
        said.append(f"{_label(values.index[0])} comes first")
    return said


def _moved(
    call: ast.Call,
    before: EvalContext,
    after: EvalContext,
    by: Sequence[str] | None,
    *,
    total: bool = False,
) -> tuple[pd.Index | None, np.ndarray]:
    """The answer's groups (None for a single row) and, per group, whether ``call``'s value
    over ``before``'s rows (the answer) lies outside the band of its value over ``after``'s
    (the rows left). ``total``: the call is a value shown (a sum that is the answer's total,
    not a profit factor's gross wins)."""
    spec = lookup(call.name)
    name = spec.name if spec is not None else call.name.lower()
    answered = evaluate_aggregate(call, before, by or None)
    groups = answered.index if isinstance(answered, pd.Series) else None
    was = _values(answered, groups)
    now = _values(evaluate_aggregate(call, after, by or None), groups)
    size = len(was)
    if name == "count" and not call.args:
        if groups is None:  # fewer rows, as the warning says
            return groups, np.zeros(1, dtype=bool)
        rows, left = len(before.frame), max(len(after.frame), 1)
        share = _numbers_of(now) / left
        band = ERRORS * np.sqrt(share * (1 - share) / left)
        return groups, _gone(was, now) | (np.abs(_numbers_of(was) / rows - share) > band)
    if name in MEANS:
        mean, _, _ = _stats(_numbers(call, name, before), _codes(before, by, groups), size)
        left, spread, count = _stats(_numbers(call, name, after), _codes(after, by, groups), size)
        with np.errstate(invalid="ignore", divide="ignore"):
            band = np.nan_to_num(ERRORS * spread / np.sqrt(count))
        with np.errstate(invalid="ignore"):
            share = np.abs(mean - left) >= SHARE_MOVED * np.abs(mean)
        moved = _gone(was, now) | (np.abs(mean - left) > band) | (share & (mean != 0))
        if name == "sum" and total:  # the total itself
            total, rest = _numbers_of(was), _numbers_of(now)
            with np.errstate(invalid="ignore"):
                moved |= (total != 0) & (np.abs(rest - total) >= HOLIDAY_SHIFT * np.abs(total))
        return groups, moved
    if name in QUANTILES:
        q = 0.5 if name == "median" else float(ast.literal_value(call.args[1])) / 100
        x, codes = _numbers(call, name, after), _codes(after, by, groups)
        bands = np.array([_rank_band(x[codes == at], q) for at in range(size)]).reshape(-1, 2)
        value = _numbers_of(was)
        return groups, _gone(was, now) | (value < bands[:, 0]) | (value > bands[:, 1])
    if name in SPREADS:
        _, _, count = _stats(_numbers(call, name, after), _codes(after, by, groups), size)
        value, left = _numbers_of(was), _numbers_of(now)
        band = np.array(
            [
                ERRORS * SPREADS[name](v, int(n)) if n > 3 and not np.isnan(v) else 0.0
                for v, n in zip(left, count, strict=True)
            ]
        )
        return groups, _gone(was, now) | (np.abs(value - left) > band)
    shown = np.array([value_text(a) != value_text(b) for a, b in zip(was, now, strict=True)])
    return groups, shown


def _values(value: Any, groups: pd.Index | None) -> np.ndarray:
    """A select's value per group of ``groups`` (object array; one entry for a single row):
    a group the rows left lack is None."""
    if groups is None:
        return np.array([value], dtype=object)
    return value.reindex(groups).to_numpy(dtype=object)


def _numbers_of(values: np.ndarray) -> np.ndarray:
    """Values as floats, NaN where missing or not a number."""
    return pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype="float64")


def _gone(was: np.ndarray, now: np.ndarray) -> np.ndarray:
    """The groups the answer has a value for and the rows left have none."""
    return pd.notna(pd.Series(was)).to_numpy() & pd.isna(pd.Series(now)).to_numpy()


def _numbers(call: ast.Call, name: str, ctx: EvalContext) -> np.ndarray:
    """What ``call`` reduces, per row of ``ctx.frame``, as numbers: a condition as 1 or 0,
    and what a count of a column counts as 1 where it has a value."""
    values = evaluate(call.args[0], ctx)
    if pd.api.types.is_bool_dtype(values.dtype):
        return values.to_numpy(dtype="float64", na_value=np.nan)
    if name == "count":
        return values.notna().to_numpy(dtype="float64")
    return pd.to_numeric(values, errors="coerce").to_numpy(dtype="float64")


def _codes(ctx: EvalContext, by: Sequence[str] | None, groups: pd.Index | None) -> np.ndarray:
    """Each row's place among ``groups`` (the answer's; -1: none of them)."""
    if not by or groups is None:
        return np.zeros(len(ctx.frame), dtype=np.int64)
    keys = pd.MultiIndex.from_frame(ctx.frame[list(by)])
    known = groups if isinstance(groups, pd.MultiIndex) else pd.MultiIndex.from_arrays([groups])
    return known.get_indexer(keys)


def _stats(x: np.ndarray, codes: np.ndarray, size: int) -> tuple[np.ndarray, ...]:
    """Each of ``size`` groups' mean, sample standard deviation and count of values."""
    known = (codes >= 0) & ~np.isnan(x)
    at, values = codes[known], x[known]
    count = np.bincount(at, minlength=size).astype("float64")
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(at, weights=values, minlength=size) / count
        squares = np.bincount(at, weights=(values - mean[at]) ** 2, minlength=size)
        spread = np.sqrt(squares / (count - 1))
    return mean, np.where(count > 1, spread, np.nan), count


def _rank_band(x: np.ndarray, q: float) -> tuple[float, float]:
    """The order statistics 2 binomial standard deviations of rank either side of the
    q-quantile's: its distribution-free band (NaN for no values)."""
    x = np.sort(x[~np.isnan(x)])
    n = len(x)
    if not n:
        return np.nan, np.nan
    reach = ERRORS * math.sqrt(n * q * (1 - q))
    low = min(max(math.floor(n * q - reach), 0), n - 1)
    high = min(max(math.ceil(n * q + reach), 0), n - 1)
    return float(x[low]), float(x[high])


def _over(ctx: EvalContext, rows: pd.DataFrame) -> EvalContext:
    """``ctx`` over ``rows``, saying nothing: the values are compared, not answered."""
    return dataclasses.replace(
        ctx, frame=rows.reset_index(drop=True), warnings=[], row_warnings=[], period=None
    )


def _calls(expr: ast.Expr) -> list[ast.Call]:
    return [node for node in ast.walk(expr) if is_aggregate_call(node)]  # type: ignore[misc]


def _single_values(output: StageOutput) -> dict[str, Any]:
    summary = output.summary
    if summary.type == "scalar":
        return {summary.columns[0]: summary.value} if summary.columns else {}
    return dict(summary.values or {})


def _label(key: Any) -> str:
    """A group by its key values: '14:00', '2024, 3'."""
    parts = key if isinstance(key, tuple) else (key,)
    return ", ".join(value_text(part) for part in parts)
