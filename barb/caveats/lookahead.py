"""What next() cannot see: the rows the data's end leaves without a later bar.

next(close, 5) of the data's last 5 bars is empty. A share or a mean of it skips those rows
while count() counts them, so "after an up day, how often was NQ higher 5 days later" over
the last 20 days reads "15 days, 100%" where 12 days had an outcome (all 12 up). Said with
the number of kept rows it leaves empty and what the averages are over. A table's rows are
its answer: said of those it holds (the 5 listed of a limit), and only when one of them is
empty. Under the 5 best days of all history, "empty for 5 of the 4649 rows kept … means and
shares of it are over the other 4644" was about no row listed, and read as if the mean of
the 5 printed rows were over 4,644 days.
"""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pandas as pd

from barb.lineage import nodes
from barb.planning import Plan, StagePlan
from barb.script import ast
from barb.summary_text import listed_text


def lookahead_caveats(
    stage: StagePlan, frame: pd.DataFrame, keep: np.ndarray, *, intraday: bool, calendar: bool
) -> list[str]:
    """What the first stage's farthest next() cannot see, or sees from another day.

    ``frame`` is the first stage's rows (the period's and the bars read around it), which
    reach the data's end whenever a kept row's next() runs past them: the planner loads
    ``n`` bars after the period where there are any. A week's or month's end is the open
    bar's warning ("next() reads no week after …"): the data's end is not its row."""
    call = _farthest_next(stage)
    if call is None:
        return []
    table = stage.shape == "table"
    calls = next_calls(stage)
    warnings = (
        [] if calendar else _past_data_end(calls, frame, keep, intraday=intraday, table=table)
    )
    across = intraday and not _reads_the_next_date(call[0])
    return warnings + (_across_days(call, frame, keep) if across else [])


def _reads_the_next_date(text: str) -> bool:
    """Whether the call is next(date()): a later trading date is what it is read for (a
    day's last bar is where it differs from date()), and "keeps it within the day" advised
    dropping the very bars a week's "did every day close above its VWAP" reads (p39b Q10)."""
    return text.startswith("next(date()")


def _past_data_end(
    calls: dict[int, list[str]],
    frame: pd.DataFrame,
    keep: np.ndarray,
    *,
    intraday: bool,
    table: bool,
) -> list[str]:
    """The kept rows (a ``table``'s: those it holds) the data's end leaves empty, and what
    a mean of them is over. Each next() call is named, those reading nearer with their own
    count: "next(close) and next(high) are empty for 1 of the 11 rows" named next(close)
    alone, and the model read next(high)'s n/a as a value the note did not concern."""
    kept = int(np.count_nonzero(keep))
    # By reach, farthest first: the rows each call leaves empty, the data's last ``ahead``.
    found = [
        (texts, int(np.count_nonzero(keep[max(len(keep) - ahead, 0) :])))
        for ahead, texts in sorted(calls.items(), reverse=True)
    ]
    found = [(texts, empty) for texts, empty in found if empty]
    if not found or not kept:
        return []
    (texts, empty), nearer = found[0], found[1:]
    text = f"{listed_text(texts)} {'is' if len(texts) == 1 else 'are'}"
    also = ", ".join(f"{listed_text(t)} for {n:,}" for t, n in nearer)
    also = f" ({also})" if also else ""
    last = frame.iloc[-1]
    end = (
        f"with the {pd.Timestamp(last['timestamp']):%Y-%m-%d %H:%M} bar"
        if intraday
        else f"on {pd.Timestamp(last['trading_date']):%Y-%m-%d}"
    )
    it = "it" if len(texts) == 1 and not nearer else "them"
    others = kept - empty
    # Nearer calls are empty on fewer rows: the count of the others is the farthest's.
    other = f"the rows with a value (the other {others:,} for {listed_text(texts)})"
    other = other if nearer else f"the other {others:,}"
    only = f"only {other}" if nearer else f"{other} only"
    if table:
        held = f"{empty:,} of the {kept:,} rows the table holds" if kept > 1 else "its one row"
        over = (
            f"a mean of {it} over {'them' if it == 'it' else 'these rows'} averages {only}"
            if others
            else f"no mean of {it} has a row to average"
        )
        return [f"{text} empty for {held}{also}: the data ends {end}; {over}."]
    text_empty = f"{empty:,} of the {kept:,} rows kept" if kept > 1 else "the one row kept"
    over = (
        f"means and shares of {it} are over {other}, while count() counts all {kept:,}"
        if others
        else f"no mean or share of {it} has a row to average"
    )
    return [f"{text} empty for {text_empty}{also}: the data ends {end}; {over}."]


def _across_days(call: tuple[str, int], frame: pd.DataFrame, keep: np.ndarray) -> list[str]:
    """Intraday rows kept whose next() reads a later trading date: "after 3 red hours, is
    the next hour green" read 16:30's next hour as the next morning's 09:30 for 289 of 2,036
    rows. Said with the where that keeps the day."""
    if "trading_date" not in frame.columns:
        return []
    text, ahead = call
    dates = frame["trading_date"].to_numpy()
    later = np.zeros(len(dates), dtype=bool)
    if len(dates) > ahead:
        later[:-ahead] = dates[ahead:] != dates[:-ahead]
    crossing = int(np.count_nonzero(later & keep))
    kept = int(np.count_nonzero(keep))
    if not crossing:
        return []
    return [
        f"{text} reads a later trading date for {crossing:,} of the {kept:,} rows kept (the "
        'day\'s last bars); "where": "… and next(date()'
        + (f", {ahead}" if ahead > 1 else "")
        + ') == date()" keeps it within the day.'
    ]


def next_calls(stage: StagePlan) -> dict[int, list[str]]:
    """The next() calls among what the stage answers with (its select; with no select, the
    map columns it lists), as written, by how far ahead they read: {1: ['next(close)'],
    5: ['next(close, 5)']}."""
    if "next" not in stage.calls:  # no walk of the query for the many that read none
        return {}
    mapped = dict(stage.map_exprs)
    exprs = [item.expr for item in stage.select] or [e for _, e in stage.map_exprs]
    found: dict[int, list[str]] = {}
    for expr in exprs:
        for node in nodes(expr, mapped):
            if not (isinstance(node, ast.Call) and node.name == "next"):
                continue
            ahead = 1
            if len(node.args) > 1 and isinstance(node.args[1], ast.Number):
                ahead = int(node.args[1].value)
            texts = found.setdefault(ahead, [])
            if node.to_text() not in texts:
                texts.append(node.to_text())
    return found


def _farthest_next(stage: StagePlan) -> tuple[str, int] | None:
    """The next() call reaching farthest among what the stage answers with (its select;
    with no select, the map columns it lists), as written, and its ``n``. A group key's
    empty rows are in no group, which keyless_rows says: said here too, it counted them."""
    calls = next_calls(stage)
    if not calls:
        return None
    ahead = max(calls)
    return calls[ahead][0], ahead


def then_past_period_caveat(plan: Plan, table: pd.DataFrame | None) -> list[str]:
    """A then.select column reading next() that is empty on a row listed, where the period
    ends before the data does: the then stage's rows are the first stage's table, which ends
    with the period, so the value may lie after it. The drawdown concept's episodes with
    "period": "2022" on ES read recovered n/a, "not yet", where ES got back to 5481.25 on
    2024-07-12 (p47g d3). Said with the form that reads past the period: no period, the rows
    kept by their date in then.where."""
    then, period = plan.then, plan.period
    if then is None or table is None or not len(table) or "next" not in then.calls:
        return []
    if period.end is None or period.bars is not None:
        return []
    if period.end >= pd.Timestamp(plan.dataset.last_date).date():
        return []
    mapped = dict(then.map_exprs)
    empty: dict[str, int] = {}  # each column read through next(), by its n/a rows listed
    for item in then.select:
        reads = any(
            isinstance(node, ast.Call) and node.name == "next" for node in nodes(item.expr, mapped)
        )
        if reads and item.name in table.columns:
            count = int(pd.isna(table[item.name]).sum())
            if count:
                empty[item.name] = count
    if not empty:
        return []
    key = _date_column(table)
    start = f"{period.start:%Y-%m-%d}" if period.start is not None else None
    end = f"{period.end:%Y-%m-%d}"
    if key is not None:
        kept = f"{key} <= '{end}'" if start is None else f"{key} >= '{start}' and {key} <= '{end}'"
        form = f'leave the period out and keep the rows in then.where ("{kept}")'
    else:
        form = "leave the period out and keep the rows in then.where"
    return [
        f"{_empty_text(empty)}: next() in then reads only the first stage's rows, which end "
        f"with the period ({end}), while the data goes on to "
        f'{pd.Timestamp(plan.dataset.last_date):%Y-%m-%d}, so n/a is not "not yet"; for '
        f"the value after the period, {form}."
    ]


def _empty_text(empty: dict[str, int]) -> str:
    """The columns n/a on rows listed, each named (the drawdown concept's recovered and
    calendar_days both read next(peak); the note named recovered alone): "recovered and
    calendar_days are n/a on 1 row listed", or each with its count where they differ:
    "recovered is n/a on 1 row listed, calendar_days on 2"."""

    def rows(count: int) -> str:
        return f"{count:,} row{'' if count == 1 else 's'}"

    names, counts = list(empty), set(empty.values())
    if len(counts) == 1:
        verb = "is" if len(names) == 1 else "are"
        return f"{listed_text(names)} {verb} n/a on {rows(counts.pop())} listed"
    first, *others = names
    return f"{first} is n/a on {rows(empty[first])} listed, " + ", ".join(
        f"{name} on {rows(empty[name])}" for name in others
    )


def _date_column(table: pd.DataFrame) -> str | None:
    """The table's first column of dates (the drawdown episode's peak), to keep rows by."""
    for name in table.columns:
        values = table[name]
        if pd.api.types.is_datetime64_any_dtype(values):
            return str(name)
        known = values.dropna()[:3]
        if len(known) and all(isinstance(v, dt.date) or _DATE.fullmatch(str(v)) for v in known):
            return str(name)
    return None


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
