"""A where's rows: how well their mean is known, and the same mean without the where.

"5 down days in a row, what does NQ do the next day" over the last 5 years kept 21 days:
mean next return +0.41%, 12 of 21 up. Asked with group_by, the result warned that the
groups differ by less than their noise; asked with a where, as the backtest concepts teach,
it printed the numbers alone, and "+0.41%, 6 times the average day" read as an edge. The
mean is known to about ±0.74 there (t over 21 rows), and the other 1,268 days' 0.065% is
well within it (Welch p = 0.34). So for a single-row answer of the first stage under a where
or an event filter ("filter": "only"), each ``mean(x)`` of a number or a true/false column
(a share) is said with its band, the value over all the period's rows, and whether the rows
kept differ from the others by more than noise: a Welch t-test for numbers, Fisher's exact
test for a share (3 events in 12 are too few for a normal band's test; χ² where the counts
are too many to sum exactly, ``group_noise.two_shares_p``). A share over few rows is said
with Wilson's interval as group_noise says it, "up 0.5 (95%: 0.09–0.91)" for NQ 2024's 2
days wider than 900 points, where t(1)'s band read "0.5 ± 6.4".

A share is read against the same share without the where, however many rows the where
keeps: a condition's edge is the change it makes to the outcome, not a share's distance from
50% (that is ``no_edge``'s test, of a single row with no where). CL's next day was up on
0.5149 of the 2,379 days after a close above the 20-day mean, a coin flip's noise (binomial
p = 0.12), and on 0.4674 of the days below it: the condition moves it by more than noise
(Fisher p = 0.0012), said nowhere while the where kept over half the rows (p40a #15). ES
2013 was up on 0.6174 of the 149 days after an up day, 0.581 of all its days (p40a #14):
"62%, momentum" was drift. And a share far from the period's is said too: NQ made a new
20-day high on 0.583 of the days after one, beside 0.190 of all days (p40a #8), and 58% with
nothing beside it reads as a little better than a coin flip.

Nor for a mean of a running count or total the where keeps rows by (``own_runs``): under
"where": "above and not next(above)", mean(streak(above)) is the runs' mean length, 9.7
days on NQ, and the streak on every day (0 below the average, part of a run elsewhere) a
different quantity, whose 8.0 read as "runs are significantly longer" (p39b Q23).

A mean of numbers gets no band when the band is small beside the gap (``CLEAR_GAP``): "mean
range in 2024" as a where over all years is 14 bands above the period's, and a line about
noise would be noise itself; it is said with the period's value alone ("mean_range is
158.11 over the 1,202 rows; over all 2,032 of the period's rows it is 120.66, far beyond
its noise"), as where there is no band to say (every row kept alike, or too few counted).
Nothing is said when the where drops fewer than 2 of the period's rows: that is no
condition; nor when it only leaves out the calendar's days off (``CLEANING``).

A mean of a value read ahead over overlapping windows is judged on the rows it is worth:
"below its SMA50, how often is NQ higher 40 days later" kept 1,739 days, 1,710 of them
within 40 days of the one before, and was told "up_share is 0.6797 ± 0.022 … differ from
the other 2,870 by more than noise (Fisher p < 0.001)", each day taken for an independent
outcome; samples of every 40th day gave p from 0.008 to 1.0 by their first day (p40a #17).
When the overlap warning holds (``barb.caveats.overlapping_windows``), the band is over the
rows taken so that no two windows share a bar (78) and the test sets them against the other
rows counted the same way (96), a share's hits scaled to those counts: ± 0.11, Fisher p =
0.27. For windows of evenly spaced rows that count is the one at which independent rows
give the mean the variance the overlapping ones give; of rows bunched unevenly it is near
it, not exact (78 where the variance of 40-day sums of independent daily moves over those
days gives 67): what the overlap warning already names, and the p a careful reader of
non-overlapping samples gets, not a fine correction.

Each item's value over all the period's rows is kept as data too (``SetupMean.baseline``):
a chart draws it beside the answer's line, "all days: 52.4%" under the 49.5% after 3 down
days, which a line at 49.5% over the yearly shares alone did not show (p40a C3). What the
chart draws the model is told: NQ's 1h bars of 2024 wider than 100 points averaged 158.11
beside a dashed "all bars: 120.66 points" and the model read no 120.66, the gap being
plain (a mean of the where's own column, as that one, is now left out, below).

Nor is a mean read against the other rows when the where itself decides it there
(``structural_baseline``): NQ's gaps down over 1% filled on 0.3243 of 515 days beside "all
days: 0.8115", 2,452 of the other 4,131 being gap-ups, filled by construction (p44a Q05);
mean(gap_pct) under "gap_pct < -1" beside all the rows' is the selection itself (Q05b).

Several means tested over the same rows are said in one sentence (``setup_sentences``),
each with its numbers, those apart from the other rows first: NQ's CPI mornings had three
lines in one template for mean_abs_move, mean_range and up_share, which the model read
back one by one (p44a Q13).

Cost: the mean's argument evaluated once more over the period's rows (a column read when it
is one) and a few passes over its values: 0.4 ms on daily bars, about 30 ms per mean of a
condition over 6.4 million minute bars; scipy.special is imported on first use.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from barb.caveats.group_noise import few_rows_interval, interval_text, two_shares_p
from barb.caveats.overlapping_windows import (
    counted_text,
    forward_window,
    independent_count,
    overlapping,
    scaled_counts,
)
from barb.caveats.structural_baseline import structural
from barb.lineage import own_runs
from barb.planning import StagePlan
from barb.result import Baseline
from barb.script import ast
from barb.summary_text import two_digits, value_text

# The band said is this many standard errors at least; a t quantile's for fewer rows (2.09
# at 21), so a few rows' band is the 95% one and many rows' the groups' ± 2 (group_noise).
ERRORS = 2.0
# A mean of numbers is said when its gap from the period's value is under this many bands:
# beyond it the difference is plain (p far below any doubt) and the band changes nothing the
# model says. Not a share's: its base rate is what the share is read against.
CLEAR_GAP = 5.0
# Below this p the rows kept are said to differ by more than noise.
NOISE_P = 0.05
# The calendar filters the warnings themselves advise ("where": "not holiday()" leaves the
# stock market's days off out): a where made of their negations alone cleans the rows and
# picks no setup, so its rows are not read against the few it left (the 116 holiday
# sessions of NQ's 4,649 days, "Fisher p = 0.45" under every share).
CLEANING = frozenset({"holiday", "early_close"})


@dataclass(frozen=True)
class _Tested:
    """A tested mean's numbers, to say beside others' over the same rows (``rows``: the
    part of the sentence that names them, the same for each mean over those rows)."""

    value: str
    band: str  # "± 0.068"; a share over few rows its Wilson interval, "95%: 0.09–0.91"
    base: str
    test: str
    differs: bool
    rows: tuple[str, str, str, str]  # kept, standard errors, all the rows, the other rows

    @property
    def errors(self) -> bool:
        """Whether the band is a ± of standard errors (not a share's 95% interval)."""
        return self.band.startswith("±")

    def item(self, name: str, label: str) -> str:
        """ "up_share 0.5163 ± 0.068 (all rows 0.4936, Fisher p = 0.53)"; a share over few
        rows "up 0.5 (95%: 0.09–0.91; all rows 0.471, Fisher p = 1)"."""
        if self.errors:
            return f"{name} {self.value} {self.band} ({label} {self.base}, {self.test})"
        return f"{name} {self.value} ({self.band}; {label} {self.base}, {self.test})"


@dataclass(frozen=True)
class SetupMean:
    """A ``mean(x)`` over the rows a where kept: what is said of it and that value
    (``baseline``); ``tested``: the sentence holds its band and the test against the other
    rows, not the value over all of them alone (its gap plain, or no band to say);
    ``numbers``: those of a tested sentence, for ``setup_sentences``."""

    sentence: str
    baseline: Baseline
    tested: bool = True
    numbers: _Tested | None = None


def setup_sentences(said: dict[str, SetupMean]) -> list[str]:
    """The warnings for ``setup_noise``'s means: the tested ones over the same rows in one
    sentence, each with its numbers, by verdict; a mean alone over its rows as it was. NQ's
    CPI mornings had three lines in one template, "mean_abs_move is 65.03 ± 13 (2 standard
    errors, 215 rows); over all 4,656 of the period's rows it is 22.77: the 215 rows differ
    from the other 4,441 by more than noise (Welch p < 0.001)", then mean_range's and
    up_share's (p44a Q13); now "Over the 215 rows kept (bands of 2 standard errors) and all
    4,656 of the period's rows: mean_abs_move 65.03 ± 13 (all rows 22.77, Welch p < 0.001)
    and mean_range 124.65 ± 18 (all rows 44.53, Welch p < 0.001) differ from the other 4,441
    by more than noise; up_share 0.5163 ± 0.068 (all rows 0.4936, Fisher p = 0.53) is within
    noise of them." A mean over other rows (its argument empty on some) keeps its sentence,
    as does one said with the value over all the rows alone (its gap plain)."""
    groups: dict[object, list[tuple[str, SetupMean]]] = {}
    for name, found in said.items():
        key = found.numbers.rows if found.numbers is not None else name
        groups.setdefault(key, []).append((name, found))
    return [
        _together(group) if len(group) > 1 else group[0][1].sentence
        for group in groups.values()
        if group[0][1].sentence
    ]


def _together(group: list[tuple[str, SetupMean]]) -> str:
    """One sentence of several tested means over the same rows (``setup_sentences``)."""
    first = group[0][1].numbers
    assert first is not None
    kept, errors, over, others = first.rows
    label = "all rows" if over.startswith("all ") else "rows judged"
    if over.endswith("times of day"):
        label = "same-time rows"

    numbers = [(name, n) for name, found in group if (n := found.numbers) is not None]

    def listed(differs: bool) -> list[str]:
        return [n.item(name, label) for name, n in numbers if n.differs == differs]

    apart, within = listed(True), listed(False)
    verdicts = []
    if apart:
        verb = "differ" if len(apart) > 1 else "differs"
        verdicts.append(f"{_and(apart)} {verb} from the other {others} by more than noise")
    if within:
        them = "them" if apart else f"the other {others}"
        verb = "are" if len(within) > 1 else "is"
        verdicts.append(f"{_and(within)} {verb} within noise of {them}")
    # Shares over few rows print their 95% interval: the ± bands alone are of errors.
    errors = f" (bands of {errors} standard errors)" if any(n.errors for _, n in numbers) else ""
    return f"Over the {kept}{errors} and {over}: {'; '.join(verdicts)}."


def _and(items: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def setup_noise(
    stage: StagePlan,
    values: Callable[[ast.Expr], object],
    given: np.ndarray,
    keep: np.ndarray,
    timeframe: str = "1d",
    judged: str = "",
) -> dict[str, SetupMean]:
    """What is said (``SetupMean``) of each select item of ``stage`` that is ``mean(x)`` of
    numbers or of a condition, by the item's name, over the rows ``keep`` a where or an event
    filter left of the rows ``given`` (masks over every row the first stage evaluated on,
    which ``values`` evaluates an expression over, as the stage did, its warnings kept
    apart): "mean_next_ret is 0.4137 ± 0.74 (2.09 standard errors, 21 rows); over all 1,289
    of the period's rows it is 0.07029: the difference from the other 1,268 is within noise
    (Welch p = 0.34).", and that value over all the rows as data (0.07029 over 1,289 rows).
    ``timeframe``: the rows' bars, as a window read ahead is named ("40-day"). ``judged``:
    which of the period's rows ``given`` are, when not all of them: "over the 318 of the
    period's rows the where can judge" (NQ 2008-2009 above its SMA200, whose first 199 days
    have no SMA: neither kept nor left, so not among "the other" rows), or "at the same
    times of day" (CPI days' 09:30 bars against the other days' 09:30 bars)."""
    kept, rows = int(np.count_nonzero(keep)), int(np.count_nonzero(given))
    if kept < 2 or rows - kept < 2 or (stage.where is not None and _cleaning(stage.where)):
        return {}
    said = {}
    inside = keep[given]
    mapped = dict(stage.map_exprs) | dict(stage.hoisted)
    for item in stage.select:
        expr = item.expr
        if not (isinstance(expr, ast.Call) and expr.name.lower() == "mean" and len(expr.args) == 1):
            continue
        if stage.where is not None and own_runs(expr, stage.where, mapped):
            continue
        read = _values(expr.args[0], values, given)
        if read is None:
            continue
        window = forward_window(expr.args[0], stage)
        if (
            stage.where is not None
            and window == 0
            and structural(expr.args[0], stage.where, mapped, values, given, inside)
        ):
            continue  # the where decides it on the other rows: no base rate to say or draw
        ahead = _Ahead(window, np.flatnonzero(given), timeframe) if window >= 2 else None
        found = _setup_mean(item.name, *read, inside, ahead, judged)
        if found is not None:
            said[item.name] = found
    return said


def _cleaning(where: ast.Expr) -> bool:
    """Whether ``where`` is only negations of ``CLEANING`` calls, joined by and: "not
    holiday() and not early_close()", not "not holiday() and dayname() == 'Mon'"."""
    if isinstance(where, ast.Logical):
        return where.op == "and" and _cleaning(where.left) and _cleaning(where.right)
    return (
        isinstance(where, ast.Not)
        and isinstance(where.operand, ast.Call)
        and where.operand.name.lower() in CLEANING
        and not where.operand.args
    )


def _values(
    arg: ast.Expr, evaluate: Callable[[ast.Expr], object], given: np.ndarray
) -> tuple[np.ndarray, np.ndarray | None, bool] | None:
    """The argument's values on the rows ``given`` (floats, or true/false for a share), which
    of them are empty (None: none) and whether they are true/false; None for text, dates or
    a literal. ``evaluate`` reads it over every row the stage had (its map and hoisted
    columns are there)."""
    values = evaluate(arg)
    if not isinstance(values, pd.Series) or len(values) != len(given):
        return None
    if pd.api.types.is_bool_dtype(values.dtype):
        empty = values.isna().to_numpy()[given] if values.dtype == "boolean" else None
        return values.to_numpy(dtype=bool, na_value=False)[given], _any(empty), True
    if not pd.api.types.is_numeric_dtype(values.dtype):
        return None
    if values.dtype == np.float64:  # its empty values are NaN already: no pass over all rows
        numbers = values.to_numpy()[given]
    else:
        numbers = values.to_numpy(dtype=np.float64, na_value=np.nan)[given]
    return numbers, _any(np.isnan(numbers)), False


def _any(empty: np.ndarray | None) -> np.ndarray | None:
    return empty if empty is not None and empty.any() else None


@dataclass(frozen=True)
class _Ahead:
    """A mean's value read ``window`` bars ahead: the positions of the rows given (in bars)
    and their timeframe, to count the rows one at a time when their windows overlap."""

    window: int
    positions: np.ndarray
    timeframe: str

    def counts(self, inside: np.ndarray, empty: np.ndarray | None) -> tuple[int, int] | None:
        """The rows kept and the others, each as many as are taken so that no two windows
        share a bar; None when the rows kept overlap too little to be said so."""
        positions = self.positions
        if empty is not None:
            positions, inside = positions[~empty], inside[~empty]
        kept = positions[inside]
        if not overlapping(kept, self.window):
            return None
        others = positions[~inside]
        return independent_count(kept, self.window), independent_count(others, self.window)


def _setup_mean(
    name: str,
    values: np.ndarray,
    empty: np.ndarray | None,
    share: bool,
    inside: np.ndarray,
    ahead: _Ahead | None = None,
    judged: str = "",
) -> SetupMean | None:
    """The item's sentence (none at a plain gap) and baseline; None when it has too few
    values kept or left out. The rows
    given are many (6.4 million minute bars): read in whole passes, the others' moments as
    all of them less the few kept. With ``ahead``, rows whose windows overlap are counted as
    those taken one at a time, in the band and the test. ``judged``: which of the period's rows
    the rows given are, when not all of them (``setup_noise``)."""
    counted = None if ahead is None else ahead.counts(inside, empty)
    if empty is not None:
        values, inside = values[~empty], inside[~empty]
    setup = values[inside].astype(np.float64)
    n, rows = len(setup), len(values)
    if n < 2 or rows - n < 2:
        return None
    hits = int(np.count_nonzero(values)) if share else 0
    base = hits / rows if share else float(values.mean())
    mean = float(setup.mean())
    # Where no band is said, the value over all the rows still is: a chart draws it.
    plain = f"{name} is {value_text(mean)} over the {n:,} rows; {_over(rows, judged)} it is "
    unsaid = SetupMean(f"{plain}{value_text(base)}.", Baseline(value=base, rows=rows), False)
    from scipy import special  # here: importing it costs a process a few tenths of a second

    # The counts the band and the test take the rows for (all of them, or one at a time).
    n_eff, m_eff = counted if counted is not None else (n, rows - n)
    if n_eff < 2 or m_eff < 2:
        return unsaid
    error = float(setup.std(ddof=1)) / math.sqrt(n_eff)
    errors = max(ERRORS, float(special.stdtrit(n_eff - 1, 0.975)))
    band = errors * error
    # A share over few rows: Wilson's interval, as group_noise prints it; a ± of t's
    # standard errors ran past 0 and 1 ("up 0.5 ± 6.4" over 2 rows) and a share of 1 had none.
    interval = few_rows_interval(mean, n_eff) if share else None
    if band == 0 and interval is None:
        return unsaid
    if not share and abs(mean - base) >= CLEAR_GAP * band:
        return replace(unsaid, sentence=f"{plain}{value_text(base)}, far beyond its noise.")
    m = rows - n
    if share:
        own = int(setup.sum())
        if counted is None:
            test, p = two_shares_p(own, n, hits - own, m)
        else:  # each part's hits in their share of its rows counted one at a time
            own_eff, rest_eff = scaled_counts([own, hits - own], [n_eff, m_eff], [n, m])
            test, p = two_shares_p(int(own_eff), n_eff, int(rest_eff), m_eff)
    else:
        deviations = values - base
        spread = float(deviations @ deviations)  # about the mean of all the rows
        test, p = "Welch", _welch(setup, base, spread, rows, special, (n_eff, m_eff))
    others = f"{m:,}" if counted is None else f"{m:,} (counted so: {m_eff:,})"
    apart = (
        f"the difference from the other {others} is within noise"
        if p >= NOISE_P
        else f"the {n:,} rows differ from the other {others} by more than noise"
    )
    kept = f"{n:,} rows"
    if counted is not None:
        assert ahead is not None
        kept = counted_text(n, ahead.window, n_eff, ahead.timeframe)
    shown = f"± {two_digits(band)}" if interval is None else interval_text(interval)
    if interval is None:
        known = f"{value_text(mean)} {shown} ({errors:.3g} standard errors, {kept})"
    else:
        known = f"{value_text(mean)} ({shown}, {kept})"
    sentence = (
        f"{name} is {known}; {_over(rows, judged)} it is {value_text(base)}: "
        f"{apart} ({test} p {_p_text(p)})."
    )
    if counted is None:
        kept = f"{n:,} rows kept"
    over = _over(rows, judged).removeprefix("over ")
    numbers = _Tested(
        value_text(mean),
        shown,
        value_text(base),
        f"{test} p {_p_text(p)}",
        p < NOISE_P,
        (kept, f"{errors:.3g}", over, others),
    )
    return replace(unsaid, sentence=sentence, tested=True, numbers=numbers)


def _over(rows: int, judged: str) -> str:
    """ "over all 4,649 of the period's rows", or "over the 318 of the period's rows the
    where can judge" (``judged``: which of them)."""
    if judged:
        return f"over the {rows:,} of the period's rows {judged}"
    return f"over all {rows:,} of the period's rows"


def _welch(
    setup: np.ndarray,
    base: float,
    spread: float,
    rows: int,
    special,
    counted: tuple[int, int] | None = None,
) -> float:
    """Two-sided p of Welch's t-test of the ``setup`` values' mean against the other rows':
    their count, mean and squares read from all ``rows``' mean ``base`` and sum of squared
    deviations from it (``spread``) less the setup's share of each. ``counted``: the two
    parts' rows as the test takes them (fewer, of overlapping windows), else all."""
    n = len(setup)
    m = rows - n
    n_eff, m_eff = counted or (n, m)
    mean = float(setup.mean())
    other = (base * rows - mean * n) / m
    own = float(((setup - mean) ** 2).sum())
    # All rows' squares about their mean are each part's about its own, and its mean's gap.
    rest = max(spread - own - n * (mean - base) ** 2 - m * (other - base) ** 2, 0.0)
    a, b = own / (n - 1) / n_eff, rest / (m - 1) / m_eff
    if a + b == 0:
        return 1.0 if mean == other else 0.0
    t = (mean - other) / math.sqrt(a + b)
    df = (a + b) ** 2 / (a**2 / (n_eff - 1) + b**2 / (m_eff - 1))
    return float(min(1.0, 2 * special.stdtr(df, -abs(t))))


def _p_text(p: float) -> str:
    """ "= 0.34", "= 0.012", "< 0.001"."""
    return "< 0.001" if p < 0.001 else f"= {two_digits(p)}"
