"""The rows that prove a streak record: the longest run itself, not every bar.

"The longest run of up days" is ``max(run)`` over ``"run": "streak(close > prev(close))"``,
and the rows behind that number are every day it was read over: NQ's CSV held all 4,647
RTH days for an answer of 14 (p47d q09), the 14 a trader wants to check lost among them,
and on minute bars the run could lie past the file's first 50,000 rows. A streak record's
file holds each longest run (every one of a tie) with the bar before it and the bar after
it, so the streak's column reads 0, 1, 2 … 14, 0: where the run began and where it broke,
and each of its days beside the one it was compared with. The chart still draws the
streak over every row (the distribution it is the longest of).

Only when the record is the whole answer: a backtest's ``count() as trades``, win rate and
total beside ``max(loss_run)`` are over every trade, and its file had held 18 of 516 (r48b).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd

from barb.i18n import N_
from barb.lineage import through_map
from barb.planning import HIDDEN, StagePlan
from barb.script import ast
from barb.summary_text import listed_text

# The select calls that read a column's longest run: max(run) and arg_max(date(), run) (the
# value of anything on the record's row), and how many arguments each takes.
_RECORD_CALLS = {"max": 1, "arg_max": 2}


def record_columns(stage: StagePlan) -> list[str]:
    """The streak columns whose longest run is the stage's whole answer: every select item
    is ``max(run)`` or ``arg_max(…, run)`` of a column its map makes with streak() (through
    its names). [] when any item is something else: ``["max(run)", "mean(range)",
    "count()"]`` is over every row, and so is an inline ``max(streak(…))``, whose values are
    no column of the rows."""
    mapped = dict(stage.map_exprs)
    found: list[str] = []
    for item in stage.select:
        expr = item.expr
        if not isinstance(expr, ast.Call) or _RECORD_CALLS.get(expr.name.lower()) != len(expr.args):
            return []
        read = expr.args[-1]
        if not isinstance(read, ast.Column):
            return []
        made = through_map(read, mapped)
        if not (isinstance(made, ast.Call) and made.name.lower() == "streak"):
            return []
        if read.name not in found:
            found.append(read.name)
    return found


def record_run_positions(
    stage: StagePlan,
    rows: pd.DataFrame,
    given: np.ndarray,
    kept: np.ndarray,
    order: np.ndarray | None = None,
    history: np.ndarray | None = None,
) -> np.ndarray | None:
    """Where in ``rows`` (the stage's rows before its where, with its map's columns) the
    longest runs of the streaks ``record_columns`` names lie, each with the bar before and
    the bar after it, in time order (``order``: each row's place in time; None: the rows'
    own), only those the where kept (``kept``); ``given``: the rows the stage answers from
    (the period's). None when the answer reads no streak's record, no row is in a run, the
    runs would be about as many rows as were kept, or the where dropped a row of a run or
    the bar either side of it (``"where": "run > 0"``: the days it began after and broke on
    are not among the rows): the rows behind the number prove it then, as before.

    A run ending 2020-11-10 at 14 holds the bars reading 14, 13 … 1 going back (an unknown
    one among them, which streak() skips, too); the rows are then 2020-10-22 (0) to
    2020-11-11 (0). Unknown bars next to the run are passed over to the known one (with
    Wednesdays unknown: 0, empty, 1 … 6, 0). A run the rows' start cuts (begun before the
    period) holds its rows before the period too, among the history the engine read
    (``history``: those rows, before the period's first; None: none read), where the where
    does not judge them: "max_run = 7" over 2025 had a file of 2 rows, 2025-01-02 (7) and
    2025-01-03 (0), the run's 6 days of December 2024 not among them (p48i item 4). One
    still going at their end has no bar after."""
    if not record_columns(stage):
        return None
    time = _time_order(rows, order)
    read = np.zeros(len(rows), dtype=bool) if history is None else history[time]
    given, kept = given[time], kept[time]
    spans: set[int] = set()
    for _, values, best, ends in _longest_runs(stage, rows, time, kept):
        if len(ends) * (best + 2) >= np.count_nonzero(kept):
            return None  # a tie of runs about as long as the rows: the rows themselves
        for end in ends:
            span = _span(values, given, kept, int(end), read)
            if span is None:
                return None
            spans.update(range(span[0], span[1] + 1))
    if not spans:
        return None
    at = np.array(sorted(spans))
    return time[at[kept[at] | read[at]]]


def _span(
    values: np.ndarray, given: np.ndarray, kept: np.ndarray, end: int, read: np.ndarray
) -> tuple[int, int] | None:
    """The first and last bar of the run ending at ``end`` with the known bar either side
    (none past the rows given, or the history ``read`` before them); None when the where
    dropped one of the period's or a bar of the run reads other than the next count down."""
    rows = given | read
    want, at, first = values[end], end, end
    while at >= 0 and rows[at] and want >= 1:
        if not np.isnan(values[at]):
            if values[at] != want or (given[at] and not kept[at]):
                return None
            first, want = at, want - 1
        at -= 1
    before, after = _known(values, rows, first, -1), _known(values, given, end, 1)
    if any(edge is not None and given[edge] and not kept[edge] for edge in (before, after)):
        return None
    return first if before is None else before, end if after is None else after


def _known(values: np.ndarray, given: np.ndarray, at: int, step: int) -> int | None:
    """The first bar past ``at`` going ``step`` whose value is known; None when the rows
    given end first."""
    at += step
    while 0 <= at < len(values) and given[at]:
        if not np.isnan(values[at]):
            return at
        at += step
    return None


# The run rows' note, under a name no query's column can take: "before the period" on the
# rows of a run begun before it, a catalog key the CSV writes in the person's language.
RUN_NOTE_COLUMN = HIDDEN + "run_note"
BEFORE_PERIOD_NOTE = N_("csv.before_period")


def noted_before(rows: pd.DataFrame, before: np.ndarray | None) -> pd.DataFrame:
    """``rows`` (a record's runs, as shown) with ``RUN_NOTE_COLUMN`` saying which lie
    before the period (``before``), when any does: the file proves the 7 of a run that
    began 2024-12-23 with its 6 rows of 2024 marked, not as 2025's own."""
    if before is None or not before.any():
        return rows
    return rows.assign(**{RUN_NOTE_COLUMN: np.where(before, BEFORE_PERIOD_NOTE, "")})


# How many tied runs the record's line names by their dates before "and N more".
NAMED_RUNS = 5


def record_run_text(
    stage: StagePlan,
    rows: pd.DataFrame,
    given: np.ndarray,
    kept: np.ndarray,
    label: Callable[[int], str],
    order: np.ndarray | None = None,
) -> str | None:
    """When the streak record ``record_columns`` names happened, for the text the model
    reads: "the run of 14 (run) ended 2020-11-10, began 2020-10-22"; each run of a tie
    named ("the 2 runs of 11 (drun) ended 2008-05-01 (began 2008-04-17) and 2018-11-05
    (began 2018-10-22)"). max(run) = 14 had shown January 2008's rows and not when the 14
    was (p48f C2). ``label``: a row's name by its place in ``rows``; a run begun before the
    period is dated from its first row, whenever that was (streak() counts it so). None
    when the answer reads no record or no row is in a run."""
    if not record_columns(stage):
        return None
    time = _time_order(rows, order)
    said = []
    for name, values, best, ends in _longest_runs(stage, rows, time, kept[time]):
        runs = [
            (label(int(time[end])), label(int(time[_first_of(values, int(end))]))) for end in ends
        ]
        length = int(best) if float(best).is_integer() else best
        if len(runs) == 1:
            ((ended, began),) = runs
            said.append(f"the run of {length} ({name}) ended {ended}, began {began}")
            continue
        dates = [f"{ended} (began {began})" for ended, began in runs[:NAMED_RUNS]]
        if len(runs) > NAMED_RUNS:
            dates.append(f"{len(runs) - NAMED_RUNS:,} more")
        said.append(f"the {len(runs):,} runs of {length} ({name}) ended {listed_text(dates)}")
    return "; ".join(said) if said else None


def _time_order(rows: pd.DataFrame, order: np.ndarray | None) -> np.ndarray:
    """The rows' positions in time order (``order``: each row's place in time)."""
    return np.arange(len(rows)) if order is None else np.argsort(order, kind="stable")


def _longest_runs(
    stage: StagePlan, rows: pd.DataFrame, time: np.ndarray, kept: np.ndarray
) -> Iterator[tuple[str, np.ndarray, float, np.ndarray]]:
    """For each streak column ``record_columns`` names: its name, its values in time order
    (``time``), its longest run among the rows kept (``kept``, in time order) and where
    each run of that length ends; none for a column with no run."""
    for name in record_columns(stage):
        if name not in rows.columns or not pd.api.types.is_numeric_dtype(rows[name]):
            continue
        values = rows[name].to_numpy(dtype="float64", na_value=np.nan)[time]
        best = float(np.nanmax(values[kept], initial=0))
        if best > 0:
            yield name, values, best, np.flatnonzero(kept & (values == best))


def _first_of(values: np.ndarray, end: int) -> int:
    """The first row of the run ending at ``end`` (reading 1), unknown rows passed over."""
    want, at, first = values[end], end, end
    while at >= 0 and want >= 1:
        if not np.isnan(values[at]):
            if values[at] != want:
                break
            first, want = at, want - 1
        at -= 1
    return first
