"""How many rows a statistic was taken over, when that is fewer than the rows kept.

``mean(nr)`` with ``nr = if(close > open, next(ret), 0 / 0)`` over 4,649 days is the mean
of the 2,390 up days' next returns; the result said "4,649 matched", and the model answered
"over 4,649 days". Statistics that skip missing values (``FunctionSpec.sample``) say their
own count whenever it is smaller: beside the value for a single row, in a warning for groups.

A grouped warning also names the groups that are short themselves: the share of days above
the 50-day mean by year is over all of 2009's days but only 210 of 2008's 259 (the mean has
no value before its 50th day), and a count over all the years does not say which year.

Rows empty because the data begins (``barb.caveats.data_start``) are said with their dates, and a
count of a condition is said to leave them out too: "days below the 200-day SMA in 2008" was
60 with no word, over the 60 of 2008's 259 days that had the mean (unknown is not true).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from barb.caveats.data_start import opened_text
from barb.caveats.empty_rows import notable
from barb.planning import SelectItem
from barb.script import ast
from barb.script.context import EvalContext
from barb.script.evaluator import SelectValue, evaluate
from barb.script.functions import FunctionSpec
from barb.script.library import lookup
from barb.summary_text import group_name, value_text

if TYPE_CHECKING:
    from barb.caveats.data_start import DataStart

# The short groups a warning names, the worst; the others are counted.
NAMED_GROUPS = 3
# The words of a name for rows, or for their number, that read as all of them: a count of
# a condition named "days" or "n_trades" reads as every day or trade (and in Russian
# transliteration: "dni", "sdelok", "vsego").
ROW_WORDS = frozenset(
    {
        *("n", "num", "number", "count", "cnt", "total", "all", "rows", "row", "obs"),
        *("days", "day", "sessions", "session", "nights", "night", "bars", "bar", "hours"),
        *("weeks", "week", "months", "month", "quarters", "years", "year", "trades", "trade"),
        *("samples", "sample", "size", "len", "length", "of"),
        *("dni", "dney", "dnei", "sdelki", "sdelok", "vsego", "kolvo", "kol", "vo"),
    }
)


def sample_sizes(
    select: Sequence[SelectItem],
    ctx: EvalContext,
    selected: Mapping[str, SelectValue],
    start: DataStart | None = None,
) -> tuple[dict[str, int], list[str]]:
    """For a single row: per select item taken over notably fewer rows than ``ctx.frame``
    holds, how many (only items with exactly one sample statistic in them, or one count of a
    condition, count); and the warning that says which of them are empty because the data
    begins (``start``: the first stage's; None for a second stage)."""
    kept = len(ctx.frame)
    sizes: dict[str, int] = {}
    lines = _Lines()
    counted = any(_counts_rows(item.expr) for item in select)
    for item in select:
        empty = _empty(item, ctx, selected[item.name], start)
        if empty is None:
            continue
        missing = int(np.count_nonzero(empty.rows))
        if not notable(missing, kept) and not (counted and empty.begins_short()):
            continue
        sizes[item.name] = kept - missing
        begins = empty.begins(start)
        if begins is not None:
            lines.add(item.name, f"over {kept - missing:,} of the {kept:,} rows kept:", begins)
    return sizes, lines.texts(start)


# A standard deviation from fewer values than this is said to be rough: its own relative
# error, about 1 / sqrt(2 (n - 1)) for normal values, is 16% at 20 and 41% at 4.
FEW_FOR_A_SPREAD = 20
# A group whose statistic the data's start leaves over this share of its rows or fewer is
# a part group to a chart (hollow, not ranked): 2008's share above the 200-day mean is over
# 60 of its 259 days (Oct-Dec), another period than the other years'; the 50-day mean's 210
# of 259 stays 2008's, said only in the warning.
BEGUN_SHARE = 0.5
_SPREADS = frozenset({"std"})


def few_values_caveat(
    select: Sequence[SelectItem], ctx: EvalContext, selected: Mapping[str, SelectValue]
) -> list[str]:
    """For a single row: a standard deviation over fewer than ``FEW_FOR_A_SPREAD`` values.
    "NQ's realized volatility this year" as std(ret) * sqrt(252) over "ytd" was 12.75 from
    the data's 4 returns of 2026, said as plainly as 18 years' 21.73."""
    said = []
    for item in select:
        answer = selected[item.name]
        for call in ast.walk(item.expr):
            if not (isinstance(call, ast.Call) and call.name.lower() in _SPREADS):
                continue
            args = answer.samples.get(call)
            if not args or not isinstance(args[0], pd.Series):
                continue
            n = int(pd.to_numeric(args[0], errors="coerce").notna().sum())
            if 1 < n < FEW_FOR_A_SPREAD:
                error = 100 / np.sqrt(2 * (n - 1))
                said.append(
                    f"{item.name} rests on a standard deviation of {n} values only: from so few it "
                    f"is known to about ±{error:.0f}% of itself; a longer period gives a "
                    "steadier one."
                )
                break
    return said


@dataclass(frozen=True)
class BegunGroup:
    """A group whose statistic is over at most half its rows because the data begins: its
    position in group order, and the rows with a value of the ``rows`` it holds (2008's
    share of days above the 200-day mean: 60 of 259)."""

    at: int
    size: int
    rows: int


def sample_caveats(
    select: Sequence[SelectItem],
    ctx: EvalContext,
    selected: Mapping[str, SelectValue],
    shown: np.ndarray,
    start: DataStart | None = None,
) -> tuple[list[str], list[BegunGroup]]:
    """For a grouped result: the statistics taken over notably fewer rows than their groups
    hold, in all or in one of the groups ``shown`` (positions in group order); one line for
    the statistics that are over the same rows. ``start``: see ``sample_sizes``. And the
    groups whose statistic the data's start leaves at most ``BEGUN_SHARE`` of its rows: a
    chart draws them hollow and ranks them not ("lowest 2008 0.0%" of 60 of its 259 days)."""
    lines = _Lines()
    begun: dict[int, BegunGroup] = {}
    counted = _all_rows_count(select)
    # A few rows the data's start empties are said beside count() only where a count of a
    # condition is shown too, whose ratio to count() the reader sets against the share:
    # "days=259, big=113, share=0.438" (113 of 258). ES's up share by weekday beside
    # count() alone had been told of 1 empty Wednesday of 934 that changed nothing (p47c H).
    tallied = any(_counts_condition(item.expr) for item in select)
    for item in select:
        answer = selected[item.name]
        found = _empty(item, ctx, answer, start)
        if found is None:
            continue
        begins = False  # said of the groups shown: the limit's top months need not hold January
        if found.unread is not None and found.unread.any():
            unread = np.asarray(answer.rows.count_where(found.unread), dtype=np.int64)
            begins = bool(unread[shown].any())
            held = np.asarray(answer.rows.size(), dtype=np.int64)
            for at in np.flatnonzero((unread > 0) & (held - unread <= BEGUN_SHARE * held)):
                size = int(held[at] - unread[at])
                if at not in begun or size < begun[at].size:
                    begun[int(at)] = BegunGroup(int(at), size, int(held[at]))
        if found.count and not begins:
            continue
        missing = found.rows
        rows = np.asarray(answer.rows.size(), dtype=np.int64)
        empty = np.asarray(answer.rows.count_where(missing), dtype=np.int64)
        sizes = rows - empty
        kept, size = int(rows.sum()), int(sizes.sum())
        short = np.zeros(len(rows), dtype=bool)
        short[shown] = notable(empty[shown], rows[shown])
        if begins and counted and tallied and found.begins_short():
            short[shown] |= unread[shown] > 0
        if not short.any() and not notable(kept - size, kept):
            continue
        touched = np.zeros(len(rows), dtype=bool)
        touched[shown] = empty[shown] > 0
        named = _groups_text(answer.rows.index, short, touched, sizes, rows)
        said = (
            f"over the {size:,} of the {kept:,} rows kept that have a value (the others are "
            f"empty){named}{counted}."
        )
        lines.add(item.name, said, found.begins(start) if begins else None)
    return lines.texts(start), sorted(begun.values(), key=lambda group: group.at)


def true_count_caveat(
    select: Sequence[SelectItem], selected: Mapping[str, SelectValue]
) -> list[str]:
    """``count(up)`` of a true/false column named as if it counted rows, beside count() or
    mean(up): it counts the rows where ``up`` is true, as ``count(up == true)`` does. "Does
    ES go up more often on Fridays" selected count(up) as days, count(up == true) as up_days
    and mean(up) as up_share, and read "days=451, up_days=451, up_share=0.53": Monday's 451
    up days of 850. Only a name made of words for rows (``ROW_WORDS``: days, n, total_trades)
    reads so: one with another word names the event counted ("count(hit) as stopped",
    "up_days", the default "count_up") and is not warned of; the warning had been said of
    every such count, twice in one answer (p35c C4)."""
    beside = {item.expr for item in select}
    rows_counted = any(_counts_rows(expr) for expr in beside)
    said = []
    for item in select:
        expr = item.expr
        if not (
            isinstance(expr, ast.Call)
            and expr.name.lower() == "count"
            and len(expr.args) == 1
            and isinstance(expr.args[0], ast.Column)
        ):
            continue
        column = expr.args[0].name
        if not _names_rows(item.name):
            continue
        if not (rows_counted or ast.Call("mean", expr.args) in beside):
            continue
        args = selected[item.name].samples.get(expr)
        if not args or not pd.api.types.is_bool_dtype(getattr(args[0], "dtype", None)):
            continue
        said.append(
            f"{item.name} is count({column}): it counts the rows where {column} is true "
            f"({_first_count(selected[item.name])}), as count({column} == true) does, not the "
            "rows; count() counts rows."
        )
    return said


def _names_rows(name: str) -> bool:
    """Whether every word of ``name`` is a word for rows or their number: "days",
    "n_trades", "totalBars"; not "stopped", "up_days" or "gap_entries"."""
    words = re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower())
    return bool(words) and all(word in ROW_WORDS for word in words)


def _first_count(answer: SelectValue) -> str:
    """ "451 of the 850 rows in weekday Mon", "143 of the 259 rows": the count of the first
    group (or the one row) against the rows it was counted over."""
    rows = answer.rows.size()
    if not answer.rows.grouped:
        return f"{value_text(answer.value)} of the {int(rows):,} rows"
    assert answer.rows.index is not None
    count = value_text(pd.Series(answer.value).iloc[0])
    name = group_name(answer.rows.index, 0)
    return f"{count} of the {int(np.asarray(rows)[0]):,} rows in {name}"


def _all_rows_count(select: Sequence[SelectItem]) -> str:
    """ "; count() counts all of them" when the stage's select has a count() of every row
    (no argument), with its name when it has one of its own; else nothing. ``count(ret) as
    n`` counts only the rows with a value, and a query without count() has nothing to tell
    apart: the warning had said "count() counts all of them" of a query that had neither."""
    names = [item.name for item in select if _counts_rows(item.expr)]
    if not names:
        return ""
    own = [name for name in names if name != "count"]
    return f"; count(){f' ({own[0]})' if own else ''} counts all of them"


def _counts_condition(expr: ast.Expr) -> bool:
    """Whether ``expr`` holds a count of some rows: count(big), count(ret > 0)."""
    return any(
        isinstance(node, ast.Call) and node.name.lower() == "count" and bool(node.args)
        for node in ast.walk(expr)
    )


def _counts_rows(expr: ast.Expr) -> bool:
    """Whether ``expr`` holds count() with no argument, alone or in arithmetic."""
    return any(
        isinstance(node, ast.Call) and node.name.lower() == "count" and not node.args
        for node in ast.walk(expr)
    )


def _groups_text(
    index: pd.Index | None,
    short: np.ndarray,
    touched: np.ndarray,
    sizes: np.ndarray,
    rows: np.ndarray,
) -> str:
    """ ", in year 2008 over 210 of its 259 rows": the worst short groups, in group order,
    and how many more groups have an empty row (``touched``), short enough to name or not.
    Volume by weekday named "Mon 847 of 930, Thu 906 of 934, Fri 890 of 914" as if that
    were all, and Tue (929 of 936) and Wed (926 of 935) were short too."""
    found = np.flatnonzero(short)
    if index is None or not len(found):
        return ""
    share = (rows[found] - sizes[found]) / rows[found]
    worst = np.sort(found[np.argsort(-share, kind="stable")[:NAMED_GROUPS]])
    said = []
    for at in worst:
        unit = "" if said else " rows"
        said.append(f"{group_name(index, at)} over {sizes[at]:,} of its {rows[at]:,}{unit}")
    more = int(np.count_nonzero(touched)) - len(worst)
    tail = f" and {more} more group{'s' if more > 1 else ''}" if more else ""
    return ", in " + ", ".join(said) + tail


@dataclass(frozen=True)
class _Empty:
    """The rows of ``ctx.frame`` a select item's one statistic (``call``) leaves out, and of
    them those empty because the data begins (None when that is not known: a second stage).
    Of a count of a condition (``count``), only those."""

    call: ast.Call
    rows: np.ndarray
    unread: np.ndarray | None
    count: bool = False
    # Each sampled argument with the rows it has no value on (those with any): the
    # correlation of nq_ret and es_ret is empty on the data's first day for both.
    parts: tuple[tuple[ast.Expr, np.ndarray], ...] = ()

    @property
    def sampled(self) -> tuple[ast.Expr, ...]:
        """The call's arguments its missing values are read from: arg_max(m, ret)'s ret."""
        spec = lookup(self.call.name)
        assert spec is not None
        return spec.sampled(self.call.args)

    def begins_short(self) -> bool:
        """Whether a statistic (not a count) leaves out rows because the data begins: said
        however few beside a count() of the rows. "days=259, big=113, share=0.438" by year
        was 113 of 2008's 258 days with a return, the first day having no close before it,
        and "113 of 259 days (43.8%)" did not add up."""
        return not self.count and self.unread is not None and bool(self.unread.any())

    def begins(self, start: DataStart | None) -> _Begins | None:
        """What reads before the data (close < sma200), on which rows ("199 of them
        (2008-01-02 to 2008-10-07)"), when some rows are empty for that reason; else None."""
        if start is None or self.unread is None or not self.unread.any():
            return None
        # Every argument empty there: correlation(nq_ret, es_ret) had been said of nq_ret
        # alone (p45d #6).
        subjects = tuple(
            start.unhoisted(arg) for arg, missing in self.parts if (missing & self.unread).any()
        )
        unread = int(np.count_nonzero(self.unread))
        rows = f"{unread:,} of them ({start.span(self.unread, start.kept)})"
        if unread == 1:
            rows = start.span(self.unread, start.kept)
        since = start.since(self.rows, start.kept, self.unread)
        opened = tuple(start.opened_forms(start.unhoisted(self.call)))
        return _Begins(subjects or (self.call,), rows, since, opened)


@dataclass(frozen=True)
class _Begins:
    """Why a statistic's rows are empty because the data begins: its ``subjects`` have no
    value on ``rows``; ``since`` its first value after them, ``opened`` the forms that have
    one."""

    subjects: tuple[ast.Expr, ...]
    rows: str
    since: str
    opened: tuple[str, ...]


class _Lines:
    """The sample-size lines of one stage, each fact said once: the statistics over the same
    rows for the same reason share a line, naming all of them and everything they read
    before the data. "% of green NQ days and the mean daily %" had said the data's first day
    (2008-01-02, no close before it) once for up_share, once for mean_ret and std_ret; and
    by month, the coalesce advice word for word twice (p44a Q35, Q03)."""

    def __init__(self) -> None:
        self._lines: dict[tuple[str, str, str], tuple[list[str], list[_Begins]]] = {}

    def add(self, name: str, said: str, begins: _Begins | None) -> None:
        """``name`` is ``said`` ("over 4,646 of the 4,647 rows kept:"), for ``begins``."""
        key = (said, begins.rows, begins.since) if begins else (said, "", "")
        names, reasons = self._lines.setdefault(key, ([], []))
        names.append(name)
        if begins is not None:
            reasons.append(begins)

    def texts(self, start: DataStart | None) -> list[str]:
        said = []
        for (line, rows, since), (names, reasons) in self._lines.items():
            text = f"{' and '.join(_listed(names))} {'is' if len(names) == 1 else 'are'} {line}"
            if reasons and start is not None:
                subjects = _subjects([subject for reason in reasons for subject in reason.subjects])
                one = len(subjects) == 1
                opened = opened_text(form for reason in reasons for form in reason.opened)
                text += (
                    f" {' and '.join(_listed(subjects))} {'has' if one else 'have'} no value on "
                    f"{rows}, {start.why if one else start.why_of_many}{since}.{opened}"
                )
            said.append(text)
        return said


def _listed(names: list[str]) -> list[str]:
    """ "a, b" and "c": the names to join with " and " as a list reads."""
    return [", ".join(names[:-1]), names[-1]] if len(names) > 2 else names


def _subjects(exprs: list[ast.Expr]) -> list[str]:
    """The distinct subjects, less those that read only columns named beside them: ret
    said, ret > 0 adds nothing."""
    named = {expr.name for expr in exprs if isinstance(expr, ast.Column)}
    kept = []
    for expr in exprs:
        columns = {node.name for node in ast.walk(expr) if isinstance(node, ast.Column)}
        if not isinstance(expr, ast.Column) and columns and columns <= named:
            continue
        kept.append(expr.to_text())
    return list(dict.fromkeys(kept))


def _empty(
    item: SelectItem, ctx: EvalContext, answer: SelectValue, start: DataStart | None
) -> _Empty | None:
    """Which rows of ``ctx.frame`` the item's one sample statistic skips; None when it has
    none, several, or is over every row. Its arguments as the aggregate evaluated them. A
    count of a condition (``FunctionSpec.counts_true``, beside counts of every row) skips its
    unknown rows; said only where the data's start left them unknown: elsewhere unknown is
    plainly not true."""
    calls = _aggregates(item.expr)
    counts = [(c, s) for c, s in calls if s.counts_true and c.args]
    if len(calls) == 1 and calls[0][1].sample:
        call, spec = calls[0]
    elif len(counts) == 1 and not any(s.sample for _, s in calls):
        # count(cond) * 100 / count() too: a share written as counts.
        call, spec = counts[0]
    else:
        return None
    sampled = spec.sampled(call.args)
    args = answer.samples.get(call)
    if args is None:  # not reached when the item was evaluated (kept for safety)
        args = tuple(evaluate(arg, ctx) for arg in sampled)
    empty: np.ndarray | None = None
    parts: list[tuple[ast.Expr, np.ndarray]] = []
    for arg, values in zip(sampled, args, strict=False):
        if np.ndim(values) == 0:  # a literal: empty or not on every row
            if pd.isna(values):
                empty = np.ones(len(ctx.frame), dtype=bool)
            continue
        if not spec.sample and not pd.api.types.is_bool_dtype(values.dtype):
            return None  # count(col) counts the rows with a value, as it says
        missing = _missing(values)
        if missing is None:  # every row has it: the common case
            continue
        empty = missing if empty is None else empty | missing
        parts.append((arg, missing))
    if empty is None:
        return None
    unread = None if start is None else start.unread(sampled, empty, start.kept)
    if not spec.sample:  # a count: only the rows the data's start left unknown
        if unread is None or not unread.any():
            return None
        return _Empty(call, unread, unread, count=True, parts=tuple(parts))
    return _Empty(call, empty, unread, parts=tuple(parts))


def _missing(values: pd.Series) -> np.ndarray | None:
    """Which rows have no value; None when all do (read from the numbers, not through
    pandas' missing-value machinery: this runs on every aggregate)."""
    if isinstance(values.dtype, np.dtype) and values.dtype.kind in "iub":
        return None
    if isinstance(values.dtype, np.dtype) and values.dtype.kind == "f":
        missing = np.isnan(values.to_numpy())
    else:
        missing = values.isna().to_numpy()
    return missing if missing.any() else None


def _aggregates(expr: ast.Expr) -> list[tuple[ast.Call, FunctionSpec]]:
    """The aggregate calls in ``expr``, each with its spec (its ``sample`` arity is 0 when it
    is not a sample statistic, such as count() in ``mean(x) / count()``)."""
    if isinstance(expr, ast.Call):
        spec = lookup(expr.name)
        if spec is not None and spec.is_aggregate:
            return [(expr, spec)]
    found: list[tuple[ast.Call, FunctionSpec]] = []
    for child in expr.children():
        found += _aggregates(child)
    return found
