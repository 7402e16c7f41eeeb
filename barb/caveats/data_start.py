"""Rows with no value because the data begins: what they read lies before the data's first bar.

The engine gives a period its history (``barb.period_rows``): a 200-day mean has a value on
2010's first day. The data's own first bars have none before them. "Days ES was below its
200-day SMA in 2008" counted 60 with no word, though the mean had no value on 199 of 2008's
259 days (the sample starts 2008-01-02): ES was below it on each of the 60 days it had one.
The first yearly return, ``close / prev(close) - 1`` on 2008, has no close before it, and a
sort of years left the worst one out without a word.

A row is empty for that reason when its expression reaches further back than the bars
before it: its place among the bars the first stage evaluated on is less than how far back
the expression reads. That happens only where the data's start cut that history: otherwise
the period's rows have their whole reach before them (``barb.script.reach``). A reach with
no end (bars_since) is empty there until its first value. The first bar's close-to-close
change is said with the form that measures it from its open on bars of many sessions (a
week, a year), where that leaves out only the gap into the first; a daily bar's open-to-close
is another measure (the first day of each year: mean -0.434% close to close, -0.199% with
2008-01-02's open-to-close among them), so that row is only said to be left out.

A record against a running high or low from the data's first bar has no value missing, but
the same cut: NQ's 11 "all-time highs" of 2008 are highs since 2008-01-02 (``record_caveat``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from barb.bar_labels import label_column
from barb.caveats.empty_rows import notable
from barb.lineage import nodes
from barb.planning import SelectItem, StagePlan
from barb.script import ast
from barb.script.evaluator import SelectValue
from barb.script.hoisting import unhoisted
from barb.script.library import lookup
from barb.script.reach import own_reach, reads_earlier_days
from barb.summary_text import group_name, listed_text
from barb.timeframes import timeframe

# The running functions a row without a value is left out of: a total (its part is
# missing from every later value), not a running high or low (the rows' own extreme).
RUNNING_TOTALS = frozenset({"cumsum", "cumprod"})
# The lag the first bar can be measured without, from its own open: prev(close) (or
# prev(close, 1)) is the close before the bar, and the bar's open is where it began.


@dataclass(frozen=True, eq=False)
class DataStart:
    """The bars the first stage evaluated on (``frame``: the period's and the history before
    them) and which of them it answers from (``keep``, after its where), to tell which empty
    values are empty because the data begins and to name them."""

    stage: StagePlan
    frame: pd.DataFrame
    keep: np.ndarray
    timeframe: str
    # Every trading date of the instrument's data (EvalContext.trading_dates), read only to
    # name its first.
    dates: Callable[[], np.ndarray] | None = None
    # An expression's values over ``frame`` (the stage's evaluator on it), to tell which rows
    # the parts that read bars before them leave empty; None: every empty row within their
    # reach is said to be.
    values: Callable[[ast.Expr], pd.Series] | None = None

    @cached_property
    def kept(self) -> np.ndarray:
        """The positions in ``frame`` of the rows the stage answers from (its ctx.frame's),
        found only when a value is empty: every query has a first stage."""
        return np.flatnonzero(self.keep)

    @cached_property
    def _columns(self) -> dict[str, int | None]:
        """How far back each column the stage made reads (its map, its hoisted parts)."""
        made: dict[str, int | None] = {}
        for name, expr in (*self.stage.map_exprs, *self.stage.hoisted):
            made[name] = _back(expr, made)
        return made

    @cached_property
    def begins(self) -> str:
        """The data's first trading date: 2008-01-02."""
        dates = self.dates() if self.dates is not None else self.frame["trading_date"]
        return str(np.datetime64(np.asarray(dates)[0], "D"))

    @property
    def why(self) -> str:
        return f"as it needs bars from before {self.begins}, where the data begins"

    @property
    def why_of_many(self) -> str:
        return f"as they need bars from before {self.begins}, where the data begins"

    def unread(
        self, exprs: Iterable[ast.Expr], empty: np.ndarray, at: np.ndarray, *, said: bool = False
    ) -> np.ndarray:
        """Which of the ``empty`` rows (rows at positions ``at`` of ``frame``) are empty
        because ``exprs`` read bars from before the data's first. ``said``: only rows that
        are a notable part of ``at`` matter; fewer are given as none, without evaluating
        ``exprs`` again (MACD's 33 first days of 4,600, which no warning names)."""
        back = self.back(exprs)
        if back == 0 or not empty.any():
            return np.zeros(len(empty), dtype=bool)
        if back is None:  # empty until its first value: the rows before it
            known = np.flatnonzero(~empty)
            first = known[0] if len(known) else len(empty)
            unread = empty & (np.arange(len(empty)) < first)
        else:
            unread = empty & (at < back)
        if not unread.any():
            return unread
        if said and not notable(int(np.count_nonzero(unread)), len(at)):
            return np.zeros(len(empty), dtype=bool)  # the most there can be is no news
        return unread & self._inputs_empty(exprs, at)

    def _inputs_empty(self, exprs: Iterable[ast.Expr], at: np.ndarray) -> np.ndarray:
        """Which rows at ``at`` have a part of ``exprs`` that reads earlier bars (an rsi(), a
        prev()) empty: only there does the data's start empty them. ``mean(if(x, ret10, 0 /
        0))`` is empty by design wherever x is false, and had been said to be empty on the
        378 such days of 2008-2009 "as it needs bars from before 2008-01-02", where x has no
        value on its first 15 only. Every row when the values cannot be read."""
        if self.values is None:
            return np.ones(len(at), dtype=bool)
        found = np.zeros(len(at), dtype=bool)
        for part in self._reading_back(exprs):
            values = self.frame[part.name] if isinstance(part, ast.Column) else self.values(part)
            found |= pd.isna(pd.Series(values).to_numpy())[at]
        return found

    def _reading_back(self, exprs: Iterable[ast.Expr]) -> list[ast.Expr]:
        """The parts of ``exprs`` that read bars before their row, outermost first: calls
        reading back themselves, and map columns that are such a call (read from ``frame``);
        the other columns the stage made are followed into their expressions."""
        made = dict((*self.stage.map_exprs, *self.stage.hoisted))
        found: list[ast.Expr] = []
        seen: set[str] = set()

        def walk(node: ast.Node) -> None:
            if isinstance(node, ast.Column):
                expr = made.get(node.name)
                back = self._columns.get(node.name)
                if expr is None or node.name in seen or (back is not None and back <= 0):
                    return
                seen.add(node.name)
                if _reads_back(expr) and node.name in self.frame.columns:
                    found.append(node)
                else:
                    walk(expr)
            elif _reads_back(node):
                found.append(node)  # type: ignore[arg-type]
            else:
                for child in node.children():
                    walk(child)

        for expr in exprs:
            walk(expr)
        return found

    def back(self, exprs: Iterable[ast.Expr]) -> int | None:
        """How many bars before its own ``exprs`` read at most (None: all of them)."""
        back: int | None = 0
        for expr in exprs:
            widest = _back(expr, self._columns)
            back = None if back is None or widest is None else max(back, widest)
        return back

    def subject(self, expr: ast.Expr) -> ast.Expr:
        """What in ``expr`` reads bars before its row, as the query named it: ``r`` of ``1 +
        r`` (r = close / prev(close) - 1), when one map column does; else ``expr``."""
        reading = {
            node.name
            for node in ast.walk(expr)
            if isinstance(node, ast.Column) and node.name in self._columns
            if (back := self._columns[node.name]) is None or back > 0
        }
        return ast.Column(reading.pop()) if len(reading) == 1 else expr

    def span(self, rows: np.ndarray, at: np.ndarray) -> str:
        """The ``rows`` (a mask over rows at positions ``at``) from first to last as the
        result names bars, "2008-01-02 to 2008-10-07"; a lone one by its name, "2008"."""
        where = at[rows]
        first, last = self.names(where[[0, -1]])
        return first if len(where) == 1 else f"{first} to {last}"

    def since(self, empty: np.ndarray, at: np.ndarray, unread: np.ndarray) -> str:
        """ "; it has one from 2008-10-08 on": the first of the rows at ``at`` with a value,
        when more than one before it have none, all of them for the data's start (the
        ``unread`` rows); else nothing. An if() empty by design on the rows after said
        "no value on 2008-01-02 to 2008-01-22 … it has one from 2008-04-10 on"."""
        known = np.flatnonzero(~empty)
        if not len(known) or known[0] < 2 or unread[: known[0]].sum() < known[0]:
            return ""
        return f"; it has one from {self.names(at[known[:1]])[0]} on"

    def unhoisted(self, expr: ast.Expr) -> ast.Expr:
        """``expr`` as the query wrote it: the hidden columns the planner hoisted out of its
        aggregates (``barb.script.hoisting``) back in their place."""
        return unhoisted(expr, self.stage.hoisted)

    def from_open(self, expr: ast.Expr, clause: str | None = None, *, running: bool = False) -> str:
        """ " From its own open on the first bar: close > coalesce(prev(close), open)." (the
        ``opened_forms``), or nothing."""
        return opened_text(self.opened_forms(expr, clause, running=running))

    def opened_forms(
        self, expr: ast.Expr, clause: str | None = None, *, running: bool = False
    ) -> list[str]:
        """The forms of ``expr`` measured from its own open on the first bar, where
        ``expr`` (or the map column it reads) compares with the close before the bar and
        reads nothing further back: the data's first bar has no close before it, and its open
        is where it began. The form is the same on every other bar. Written as the query's
        ``clause`` ("where") when given; nothing when it reads no prev(close), or on daily
        and intraday bars: the data's first opens after a closure, and its open-to-close
        leaves out the gap a close-to-close return holds. A ``running`` product or sum of it
        is the exception: compounded from the first open it is the move since the data's
        first price, one measure (cumprod(1 + r) - 1 = last close / first open - 1)."""
        calendar = timeframe(self.timeframe).calendar
        if not (calendar or running) or self.back([expr]) != 1:
            return []
        forms = []
        if _reads_prev_close(expr):
            form = _opened(expr).to_text()
            forms.append(form if clause is None else f'"{clause}": "{form}"')
        else:
            # Every map column it reads that needs it: NQ's and ES's returns in one
            # "nq - es" had the form for NQ's alone, and the retry met the same hint.
            mapped = dict(self.stage.map_exprs)
            for node in nodes(expr, mapped):
                if isinstance(node, ast.Column) and node.name in mapped:
                    made = mapped[node.name]
                    if _reads_prev_close(made):
                        forms.append(f'"{node.name}": "{_opened(made).to_text()}"')
        return list(dict.fromkeys(forms))

    def names(self, at: np.ndarray) -> list[str]:
        """The rows at positions ``at`` of ``frame`` as the result names them: 2008-01-02,
        2008-01, 2008; intraday bars by their minute."""
        rows = self.frame.iloc[at]
        labelled = label_column(rows, self.timeframe)
        if labelled is not None:
            return [str(name) for name in labelled[1]]
        return list(pd.DatetimeIndex(rows["timestamp"]).strftime("%Y-%m-%d %H:%M"))


def opened_text(forms: Iterable[str]) -> str:
    """' From its own open on the first bar: "nq_ret": "…", "es_ret": "…".': each form
    once, in one sentence (NQ's and ES's returns had a sentence each)."""
    forms = list(dict.fromkeys(forms))
    return f" From its own open on the first bar: {', '.join(forms)}." if forms else ""


def where_caveat(start: DataStart, given: np.ndarray, values: pd.Series) -> list[str]:
    """The period's rows (``given``, a mask over ``start.frame``) the where dropped as
    unknown because what it reads lies before the data (``values``: the where's own, before
    unknown was read as false): "below the 200-day SMA in 2008" kept 60 days of 259, and
    the 199 dropped were the days the mean had no value, not days above it."""
    where = start.stage.where
    if where is None or not isinstance(values.dtype, pd.BooleanDtype):
        return []
    back = start.back([where])
    if back == 0:  # reads its own row: nothing before the data to miss
        return []
    if back is not None and not given[:back].any():
        return []  # no row of the period lies within its reach of the data's first bar
    at = np.flatnonzero(given)
    unknown = values.array.isna()[at]  # the mask itself: no Series of every row's
    unread = start.unread([where], unknown, at, said=True)
    dropped = int(np.count_nonzero(unread))
    if not dropped or not notable(dropped, len(at)):
        return []
    if _listed_before(start, int(at[unread][-1])):
        return []
    kept = int(np.count_nonzero(values.fillna(False).to_numpy(dtype=bool)[at]))
    judged = len(at) - int(np.count_nonzero(unknown))
    return [
        f"The where dropped {dropped:,} of the period's {len(at):,} rows "
        f"({start.span(unread, at)}): {where.to_text()} has no value there, {start.why}"
        f"{start.since(unknown, at, unread)}. The {kept:,} rows kept are of the {judged:,} it can "
        f"judge.{start.from_open(where, 'where')}"
    ]


# The columns a table's rows are in time order by.
_TIME_KEYS = ("timestamp", "trading_date", "date")


def _listed_before(start: DataStart, dropped: int) -> bool:
    """Whether a table's limit lists the latest rows (sort by time descending) and enough
    rows kept lie after the last row the where dropped (at ``dropped`` in ``start.frame``)
    to fill it: a dropped row could not be listed, had it passed. "When did ES last close
    below its 50-day SMA" (2025-09-09) had been told of 2008's first 49 days, where the mean
    has no value (p48d C1); "the first time" (ascending) still is."""
    stage = start.stage
    if stage.shape != "table" or stage.limit is None or not stage.sort:
        return False
    first = stage.sort[0]
    if not first.descending or first.column not in (*_TIME_KEYS, stage.label):
        return False
    return int(np.count_nonzero(start.keep[dropped + 1 :])) >= stage.limit


def running_caveat(start: DataStart, period: np.ndarray) -> list[str]:
    """A running total (``RUNNING_TOTALS``) whose argument has no value on the period's first
    rows because the data begins: it runs from the first row with one, and every later
    value leaves those out. "NQ's return in 2008", last((cumprod(1 + r) - 1) * 100) with r
    = close / prev(close) - 1, read -40.88% with no word: from 2008-01-02's close, the
    data's first day having no close before it; from its open, -38.49%. Said once for the
    calls whose arguments are empty on the same rows, when a row the stage answers from
    comes after them: NQ's and ES's compounded returns joined were said of NQ's alone."""
    stage = start.stage
    exprs = [e for _, e in (*stage.map_exprs, *stage.hoisted, *stage.group_keys)]
    exprs += [item.expr for item in stage.select]
    exprs += [stage.where] if stage.where is not None else []
    calls = _running_totals(exprs)  # the query's shape first: most have none
    if not calls or start.values is None:
        return []
    at = np.flatnonzero(period)
    # The calls by the rows they leave out and the first they run from: said together.
    runs: dict[tuple[str, str], list[ast.Call]] = {}
    for call in calls:
        argument = call.args[0]
        if start.back([argument]) == 0:
            continue
        empty = pd.isna(pd.Series(start.values(argument)).to_numpy())[at]
        unread = start.unread([argument], empty, at)
        if not unread.any():
            continue
        last = int(at[unread][-1])
        valued = at[(at > last) & ~empty]
        if not len(valued) or not (start.kept > last).any():
            continue
        runs.setdefault((start.span(unread, at), start.names(valued[:1])[0]), []).append(call)
    if not runs:
        return []
    (rows, since), said = next(iter(runs.items()))  # the first call's; others are rarer
    subjects = list(dict.fromkeys(start.subject(call.args[0]).to_text() for call in said))
    one, alone = len(subjects) == 1, len(said) == 1
    opened = opened_text(
        form for call in said for form in start.opened_forms(call.args[0], running=True)
    )
    return [
        f"{listed_text(subjects)} {'has' if one else 'have'} no value on {rows}, "
        f"{start.why if one else start.why_of_many}: "
        f"{listed_text([call.to_text() for call in said])} "
        f"{'leaves' if alone else 'leave'} {'it' if one else 'them'} out, running from "
        f"{since}.{opened}"
    ]


def record_caveat(start: DataStart, period: np.ndarray) -> list[str]:
    """``record_rows``' warning alone."""
    found = record_rows(start, period)
    return [found[0]] if found is not None else []


def record_rows(start: DataStart, period: np.ndarray) -> tuple[str, np.ndarray] | None:
    """A record test against a running high or low (cummax, cummin without a restart unit)
    that starts at the data's first bar: its records in the data's first year are highs (or
    lows) since that bar, not of all time. "New all-time highs per year", count(close >
    prev(cummax(close))) by year(), read 11 for NQ's 2008, highs over the 2,050 close of
    2008-01-02; the highs before the data are not in it (p46t E). Said with how many of the
    rows the stage answers from the test holds on in that year; nothing when none, or when
    the period starts later (the running high starts there, and ``running_history`` says
    when the history went beyond it). With the bars it holds on (``start.frame``'s rows), so
    a then stage that keeps none of their rows drops it: the 2022 fall of ES kept by
    then.where from all history's episodes was told of 2008's 7 highs (p47g d5)."""
    stage = start.stage
    if start.values is None or not len(period) or not period[0]:
        return None
    begins = start.begins
    first = start.frame["trading_date"].to_numpy()[:1].astype("datetime64[D]")
    if not len(first) or str(first[0]) != begins:
        return None
    exprs = [e for _, e in (*stage.map_exprs, *stage.hoisted, *stage.group_keys)]
    exprs += [item.expr for item in stage.select]
    exprs += [stage.where] if stage.where is not None else []
    made = dict((*stage.map_exprs, *stage.hoisted))
    for test, call in _record_tests(exprs, made):
        held = pd.Series(start.values(test))
        if len(held) != len(start.frame) or not pd.api.types.is_bool_dtype(held.dtype):
            continue
        year = begins[:4]
        first_year = start.frame["trading_date"].dt.year.to_numpy() == int(year)
        hits = held.fillna(False).to_numpy(dtype=bool) & start.keep & period & first_year
        count = int(np.count_nonzero(hits))
        if not count:
            return None
        which = "highs" if call.name.lower() == "cummax" else "lows"
        rows = "row" if count == 1 else "rows"
        text = (
            f"{call.to_text()} runs from the data's first bar ({begins}): the {count:,} {rows} "
            f"where {test.to_text()} holds in {year}, the data's first year, are {which} since "
            f"then, not of all time; the prices before the data are not in it."
        )
        return text, hits
    return None


def picked_caveat(
    start: DataStart, select: Sequence[SelectItem], answers: Mapping[str, SelectValue]
) -> list[str]:
    """An answer left n/a by first() of a value the period's first row has none of because
    the data begins there (for groups: the first row's group's). "NQ's 2008 return" on daily
    bars, last(close) / first(before) with before = prev(close), read start=n/a, ret_pct=n/a
    with no word, while the same on yearly bars listed ret_pct with this cause and the form
    from the first open (p47a Q22): from 2008-01-02's open, 1970.5 to 1212, it is -38.5%.
    The form is offered as for a running product: first to last from the first open is the
    move since the data's first price. Said once per call, naming every answer it empties."""
    if start.values is None:
        return []
    # The kept rows' positions only once a first() can be empty: finding them scans every
    # bar the stage evaluated (6.4 million minute bars: 10-25 ms, most of the 1m volume by
    # hour's warnings), and a first() whose answer has a value needs none of them.
    at: np.ndarray | None = None
    emptied: dict[ast.Call, list[str]] = {}
    group = ""
    for item in select:
        answer = answers[item.name]
        value, group = _first_row_value(answer)
        if not pd.isna(value):
            continue
        for call in _first_calls(item.expr):
            argument = call.args[0]
            if start.back([argument]) == 0:
                continue
            if at is None:
                at = start.kept
            if not len(at):
                return []
            empty = pd.isna(pd.Series(start.values(argument)).to_numpy())[at]
            if empty[0] and start.unread([argument], empty, at)[0]:
                emptied.setdefault(call, []).append(item.name)
    said = []
    for call, names in emptied.items():
        assert at is not None  # found for every call emptied
        written = start.unhoisted(call.args[0])
        opened = opened_text(start.opened_forms(written, running=True))
        said.append(
            f"{listed_text(names)}{group} {'is' if len(names) == 1 else 'are'} n/a: "
            f"{start.subject(written).to_text()} has no value on {start.names(at[:1])[0]}, "
            f"the period's first row, {start.why}; {start.unhoisted(call).to_text()} takes "
            f"it from there.{opened}"
        )
    return said


def _first_row_value(answer: SelectValue) -> tuple[Any, str]:
    """The answer's value for the first row's group (its only one, ungrouped), and " of
    year 2008" naming that group ("" ungrouped)."""
    rows = answer.rows
    if rows.codes is None or rows.index is None:
        return answer.value, ""
    code = int(rows.codes[0]) if len(rows.codes) else -1
    if code < 0:
        return 0, ""
    position = code if rows.slots is None else int(np.searchsorted(rows.slots, code))
    return answer.value.iloc[position], f" of {group_name(rows.index, position)}"


def _first_calls(expr: ast.Expr) -> list[ast.Call]:
    """The first(x) calls in ``expr``, each once: the aggregates that take the period's
    first row's value (last() takes the latest, which the data's start does not reach)."""
    found: list[ast.Call] = []
    for node in ast.walk(expr):
        if not isinstance(node, ast.Call) or node.name.lower() != "first":
            continue
        if len(node.args) == 1 and node not in found:
            found.append(node)
    return found


def _record_tests(
    exprs: Iterable[ast.Expr], made: Mapping[str, ast.Expr]
) -> list[tuple[ast.Compare, ast.Call]]:
    """The comparisons in ``exprs`` (through the map's columns) that read a running high or
    low without a restart unit, each with that call: close > prev(cummax(close))."""
    found: list[tuple[ast.Compare, ast.Call]] = []
    seen: set[str] = set()
    pending = list(exprs)
    while pending:
        for node in ast.walk(pending.pop(0)):
            if isinstance(node, ast.Column) and node.name in made and node.name not in seen:
                seen.add(node.name)
                pending.append(made[node.name])
            if not isinstance(node, ast.Compare):
                continue
            running = [
                call
                for call in ast.walk(node)
                if isinstance(call, ast.Call)
                and call.name.lower() in ("cummax", "cummin")
                and len(call.args) == 1
            ]
            if running:
                found.append((node, running[0]))
    return found


def _running_totals(exprs: Iterable[ast.Expr]) -> list[ast.Call]:
    """The calls of ``RUNNING_TOTALS`` in ``exprs``, each once, outermost first."""
    found: list[ast.Call] = []
    for expr in exprs:
        for node in ast.walk(expr):
            running = isinstance(node, ast.Call) and node.name.lower() in RUNNING_TOTALS
            if running and node.args and node not in found:
                found.append(node)
    return found


def listed_caveat(
    start: DataStart,
    columns: Mapping[str, tuple[ast.Expr, pd.Series]],
    listed: np.ndarray | None = None,
    averaged: Collection[str] | None = None,
) -> list[str]:
    """A table of bars with a column empty on its first rows because the data begins, said
    for the one empty on the most and every column empty on the same rows: the first yearly
    return (2008) has no close before it, and a sort by the return ranked the worst year
    last without a word; NQ's and ES's returns joined were said of nq_ret alone (p45d #6).
    ``columns``: the name, expression and values over ``start.frame`` of each column the
    table shows; ``listed``: the rows a limit lists, as positions among the rows kept
    (None: all of them); ``averaged``: the columns the answer gives a mean of (None: all).

    Under a limit, said only where it changes what is listed: a row listed is empty, or the
    sort ranks by the empty column (its empty rows could have ranked first). "SMA200 now"
    (sort by timestamp desc, limit 1) had been told of 2008's 199 empty days "left out of
    the mean" over one row of 2026 with a value and no mean (p48d C1)."""
    at = start.kept
    found: list[tuple[str, np.ndarray, ast.Expr]] = []
    for name, (expr, values) in columns.items():
        if not isinstance(values, pd.Series) or len(values) != len(start.frame):
            continue
        if start.back([expr]) == 0:  # reads its own row: nothing before the data to miss
            continue
        empty = values.isna().to_numpy()[at]
        unread = start.unread([expr], empty, at, said=True)
        count = int(np.count_nonzero(unread))
        if count and notable(count, len(at)):
            found.append((name, unread, expr))
    sort = {key.column for key in start.stage.sort}
    if listed is not None and start.stage.limit is not None:
        found = [column for column in found if column[0] in sort or column[1][listed].any()]
    if not found:
        return []
    _, unread, _ = max(found, key=lambda column: int(np.count_nonzero(column[1])))
    said = [(name, expr) for name, rows, expr in found if np.array_equal(rows, unread)]
    names = [name for name, _ in said]
    count = int(np.count_nonzero(unread))
    rows = start.span(unread, at)
    if count > 1:
        rows = f"{count:,} rows ({rows})"
    sorted_by = any(name in sort for name in names)
    left = "ranked last" if sorted_by else "listed as n/a"
    one = len(names) == 1
    if averaged is None or any(name in averaged for name in names):
        left += f" and left out of {'the mean' if one else 'their means'}"
    opened = opened_text(form for _, expr in said for form in start.opened_forms(expr))
    return [
        f"{listed_text(names)} {'has' if one else 'have'} no value on {rows}, "
        f"{start.why if one else start.why_of_many}: {left}.{opened}"
    ]


# What a literal reads: no bar at all (below any bar's offset).
_NO_BAR = -(2**31)


def _back(expr: ast.Node, made: Mapping[str, int | None]) -> int | None:
    """How many bars before its own a row of ``expr`` reads at most (None: all of them), a
    next() netted out: ``if(close > open, next(ret), 0 / 0)`` with ``ret = close /
    prev(close) - 1`` reads the bar and the one after, nothing before it, so its first row's
    emptiness is the if()'s. (``barb.script.reach`` adds them up instead, as widening a
    period needs.) Negative when it reads only later bars."""
    if isinstance(expr, ast.LITERAL_TYPES):
        return _NO_BAR
    if isinstance(expr, ast.Column):
        return made.get(expr.name, 0)
    inner: int | None = _NO_BAR
    for child in expr.children():
        back = _back(child, made)
        inner = None if inner is None or back is None else max(inner, back)
    if not isinstance(expr, ast.Call):
        return inner
    spec = lookup(expr.name)
    if spec is not None and spec.body is not None and not expr.args:
        return _back(spec.body, {})  # a named pattern reads what its body reads
    own = own_reach(expr)
    if own.back is None or inner is None or reads_earlier_days(expr):
        return None  # daily(close): its first value is where the data's start lets it be
    # A window reads its argument on the bars before (prev, rolling_mean); next() on the
    # bar after only. Called on no bar's values (hour()), it reads its own.
    return own.back - own.ahead + (0 if inner == _NO_BAR else inner)


def _reads_back(node: ast.Node) -> bool:
    """Whether ``node`` is a call that itself reads bars before its row (prev, rsi,
    rolling_mean, a pattern), its arguments left out."""
    if not isinstance(node, ast.Call):
        return False
    own = own_reach(node)
    return own.back is None or own.back > 0 or reads_earlier_days(node)


def _reads_prev_close(expr: ast.Node) -> bool:
    """Whether ``expr`` reads a close before the bar (prev(close), or a joined
    prev(es_close)) not yet given its open where it has none."""
    if _coalesced(expr):
        return False
    if _open_of_prev_close(expr) is not None:
        return True
    return any(_reads_prev_close(child) for child in expr.children())


def is_prev_close(node: ast.Node) -> bool:
    """Whether ``node`` is prev(close) (or prev(close, 1)): the close before the bar, the
    base of its own change."""
    if not isinstance(node, ast.Call) or node.name.lower() != "prev" or not node.args:
        return False
    lag = ast.literal_value(node.args[1]) if len(node.args) > 1 else 1
    return node.args[0] == ast.Column("close") and lag == 1


def _opened(expr: ast.Node) -> ast.Node:
    """``expr`` with each close before the bar read as the bar's open where it has no
    value: coalesce(prev(close), open), coalesce(prev(es_close), es_open)."""
    if _coalesced(expr):
        return expr
    opened = _open_of_prev_close(expr)
    if opened is not None:
        return ast.Call("coalesce", (expr, ast.Column(opened)))  # type: ignore[arg-type]
    return ast.with_children(expr, _opened)


def _open_of_prev_close(node: ast.Node) -> str | None:
    """'open' for prev(close), 'es_open' for a joined prev(es_close); None for others."""
    if not isinstance(node, ast.Call) or node.name.lower() != "prev" or not node.args:
        return None
    lag = ast.literal_value(node.args[1]) if len(node.args) > 1 else 1
    column = node.args[0]
    if lag != 1 or not isinstance(column, ast.Column):
        return None
    if column.name == "close" or column.name.endswith("_close"):
        return column.name.removesuffix("close") + "open"
    return None


def _coalesced(node: ast.Node) -> bool:
    """coalesce(prev(close), open) and its joined kin: given its open already."""
    if not isinstance(node, ast.Call) or node.name.lower() != "coalesce" or len(node.args) != 2:
        return False
    opened = _open_of_prev_close(node.args[0])
    return opened is not None and node.args[1] == ast.Column(opened)
