"""A ranking by a run's length that lists several days of the same run.

streak(cond) counts a run's rows up to each one, so a run of 11 down days holds rows of 11,
10, 9…: "the 5 longest losing streaks", sorted by the streak and cut to 5, listed NQ's
2008-05-01 (11), 2018-11-05 (11), 2008-04-30 (10), 2018-11-02 (10) and 2020-07-09 (10),
three runs read as five (p35c C3). So is bars_since(cond), the rows since each event: a
stretch's rows count up the same way. Said when a sort by such a column lists rows of one
run, with how many runs the rows are and the where that keeps each run's last row only (the
run still going at the data's end too: next() is empty there). A listed row that is the
data's last bar inside a run is said to be its length so far, as a group keyed by a running
value that the data's end leaves open is (``barb.caveats.open_runs``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from barb.bar_labels import row_label
from barb.lineage import through_map
from barb.planning import StagePlan
from barb.script import ast
from barb.summary_text import listed_text, value_text

# The running counts whose row at ``position`` with value v belongs to the run that its
# row ``position - v`` begins (streak: the row before the run; bars_since: the event's;
# positions among the rows with a count),
# with what one run is and what the count counts.
RUN_COUNTS: dict[str, tuple[str, str, str]] = {
    "streak": ("run", "runs", "a run's rows up to each one"),
    "bars_since": ("stretch", "stretches", "the rows since the event, up to each one"),
}
# Runs named in the warning; more are counted.
NAMED_RUNS = 3


def same_run_caveat(
    stage: StagePlan,
    rows: pd.DataFrame,
    selected: Mapping[str, pd.Series] | None,
    listed: np.ndarray,
    timeframe: str,
    data_dates: Callable[[], np.ndarray] | None = None,
) -> list[str]:
    """The warnings for a table sorted by a run count (``rows``: every row the stage's map
    ran over, in the order it ran; ``selected``: its select's values over them; ``listed``:
    which of them the sort and limit list): two listed rows are of one run, or one is the
    data's last bar (``data_dates``: the data's trading dates; None: a then stage's rows,
    not bars) inside a run."""
    found = _run_count(stage, rows, selected)
    if found is None:
        return []
    column, expr, values = found
    every = pd.to_numeric(pd.Series(np.asarray(values)), errors="coerce").to_numpy()
    # Each row's place among the rows with a count: a streak skips an unknown row, empty,
    # and goes on past it.
    place = np.cumsum(~np.isnan(every)) - 1
    at = np.flatnonzero(listed)
    counts = every[at]
    at, counts = at[~np.isnan(counts)], counts[~np.isnan(counts)]
    one, many, counted = RUN_COUNTS[expr.name.lower()]
    said = _open_at_end(rows, at, counts, column, one, timeframe, data_dates)
    runs = place[at] - counts.astype(np.int64)
    found_runs = len(np.unique(runs))
    if found_runs == len(at):
        return said
    values_at = dict(zip(at.tolist(), counts.tolist(), strict=True))
    # Each run is named by its latest row listed; its other rows listed are earlier ones.
    rows_of = pd.Series(at).groupby(runs, sort=False)
    repeated = [
        (int(group.iloc[-1]), [int(row) for row in group.iloc[:-1]])
        for _, group in rows_of
        if len(group) > 1
    ]
    repeated.sort()

    def named(row: int) -> str:
        return row_label(rows, row, timeframe)

    repeats = [
        f"{listed_text([named(row) for row in earlier])} "
        f"{'of the one at' if i else _earlier(len(earlier), one)} {named(last)} "
        f"({value_text(values_at[last])})"
        for i, (last, earlier) in enumerate(repeated[:NAMED_RUNS])
    ]
    if len(repeated) > NAMED_RUNS:
        repeats.append(f"rows of {len(repeated) - NAMED_RUNS} more {many} too")
    shown = column if column in dict(stage.map_exprs) else expr.to_text()
    keep = f"{shown} > 0 and coalesce(next({shown}), 0) == 0"
    if stage.where is not None:
        where = stage.where.to_text()
        either = isinstance(stage.where, ast.Logical) and stage.where.op == "or"
        keep = f"{f'({where})' if either else where} and {keep}"
    runs_text = one if found_runs == 1 else many
    return [
        f"The {len(at)} rows listed by {column} are {found_runs} {runs_text}, not {len(at)}: "
        f"{column} counts {counted}, so {listed_text(repeats)}. Each {one} once, on its last "
        f'row: "where": "{keep}".',
        *said,
    ]


def _run_count(
    stage: StagePlan, rows: pd.DataFrame, selected: Mapping[str, pd.Series] | None
) -> tuple[str, ast.Call, pd.Series] | None:
    """The column the stage sorts by first when it is a run count (streak, bars_since), with
    its expression and its values over ``rows``; else None."""
    if not stage.sort:
        return None
    column = stage.sort[0].column
    chosen = {s.name: s.expr for s in stage.select}
    expr = through_map(chosen.get(column, ast.Column(column)), dict(stage.map_exprs))
    if not (isinstance(expr, ast.Call) and expr.name.lower() in RUN_COUNTS):
        return None
    values = (selected or {}).get(column)
    if values is None:
        if column not in rows.columns:
            return None
        values = rows[column]
    return column, expr, values


def _open_at_end(
    rows: pd.DataFrame,
    at: np.ndarray,
    counts: np.ndarray,
    column: str,
    one: str,
    timeframe: str,
    data_dates: Callable[[], np.ndarray] | None,
) -> list[str]:
    """The data's last bar listed inside a run: its count is the run's so far, as a group
    keyed by a running value is (``barb.caveats.open_runs``)."""
    if data_dates is None or not len(at) or at[-1] != len(rows) - 1 or counts[-1] <= 0:
        return []
    if "trading_date" not in rows.columns:
        return []
    day = np.datetime64(rows["trading_date"].iloc[-1], "D")
    if day != np.datetime64(np.asarray(data_dates())[-1], "D"):
        return []
    count = value_text(counts[-1])
    return [
        f"{row_label(rows, int(at[-1]), timeframe)} ({column} = {count}) is the data's last "
        f"bar: its {one} is still going there, so {count} is its length so far, not a "
        f"finished {one}'s."
    ]


def _earlier(rows: int, one: str) -> str:
    """'is an earlier row of the run at', 'are earlier rows of the stretch at'."""
    return f"{'is an earlier row' if rows == 1 else 'are earlier rows'} of the {one} at"


def listed_runs(
    stage: StagePlan,
    rows: pd.DataFrame,
    selected: Mapping[str, pd.Series] | None,
    positions: np.ndarray,
) -> list[int] | None:
    """The run each row listed (``positions`` among ``rows``, in the table's order) is a row
    of, numbered by the first listed, when two listed rows share a run (-1: no count), else
    None: a chart marks the bars that are earlier rows of a run drawn above. NQ's 4 longest
    losing streaks 2008-05-01 (11), 2018-11-05 (11), 2008-04-30 (10), 2018-11-02 (10) are
    [0, 1, 0, 1]: 2 runs (p48f M5)."""
    found = _run_count(stage, rows, selected)
    if found is None or not len(positions):
        return None
    _, _, values = found
    every = pd.to_numeric(pd.Series(np.asarray(values)), errors="coerce").to_numpy()
    place = np.cumsum(~np.isnan(every)) - 1
    counts = every[positions]
    known = ~np.isnan(counts)
    runs = np.where(known, place[positions] - np.nan_to_num(counts).astype(np.int64), -1)
    ids: dict[int, int] = {}
    numbered = [
        ids.setdefault(int(run), len(ids)) if ok else -1
        for run, ok in zip(runs, known, strict=True)
    ]
    if len(ids) == int(known.sum()):
        return None
    return numbered
