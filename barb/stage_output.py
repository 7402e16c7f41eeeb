"""What a stage gives back, and what its plan says of the answer's columns and shape.

``barb.stages.run_stage`` makes a ``StageOutput``; the interpreter and the warning checks
(``barb.caveats``) read it. Kept apart from the stage's running so that a check reads a
stage's answer without importing the engine that makes it: the engine calls the checks,
never the other way round. For ``"select": ["count() as days", "mean(range)"], "sort":
"days desc"``, ``counted_columns`` is ``["days"]``, ``query_columns`` ``["days",
"mean_range"]`` and ``sort_keys`` ``[("days", True)]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np
import pandas as pd

from barb.planning import StagePlan
from barb.result import Baseline, LimitTie, RowsBuilder, Summary
from barb.script.ast import Call

if TYPE_CHECKING:
    from barb.script.evaluator import SelectValue

# The shapes of a single-row answer.
SINGLE_ROW = ("scalar", "dict")


class FewGroupsWarning(Protocol):
    """The warning naming a grouped stage's groups of too few rows to compare, as the
    interpreter reads it (``barb.caveats.group_noise`` makes it): its ``text`` among the
    warnings, and ``without`` the groups of an unfinished year, which their own warning
    names ("2026: 4 days"), or None when no group is left to name."""

    @property
    def text(self) -> str: ...

    def without(self, keys: Sequence[Mapping[str, str]]) -> str | None: ...


@dataclass
class StageOutput:
    """A stage's answer (its summary, table and rows), the rows it kept, and what it said."""

    summary: Summary
    table: pd.DataFrame | None = None
    # The rows behind a single-row answer (built when read), or the bars the latest rows
    # were taken from.
    source_rows: pd.DataFrame | RowsBuilder | None = None
    rows_kept: int = 0
    # The rows kept (first stage): their trading dates are read only when a caveat needs them.
    kept: pd.DataFrame | None = None
    # A table cut by a limit: the rows kept it listed from (``kept`` holds those listed).
    listed_from: pd.DataFrame | None = None
    # Which of the rows given passed the stage's where (all of them without one).
    passed: np.ndarray | None = None
    # A streak record's longest runs with the bar either side, by their places among the
    # stage's rows before its where, in time order (``barb.record_runs``), and those rows as
    # the CSV shows them (built when read).
    runs_at: np.ndarray | None = None
    run_rows: pd.DataFrame | RowsBuilder | None = None
    # When that record happened, for the text the model reads ("the run of 14 (run) ended
    # 2020-11-10, began 2020-10-22"; ``barb.record_runs.record_run_text``).
    record_text: str | None = None
    focus: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Each table row's place before the stage's sort and limit: time order for bars, key
    # order for groups. A second stage's first()/last() and arg_max ties read the rows so.
    order: np.ndarray | None = None
    # A grouped stage's every group, before its sort and limit (a second stage's rows, when
    # they are the first's groups): what a caveat ranks the whole groups by when the limit
    # kept an unfinished year's ("2026 over 4 days").
    groups: pd.DataFrame | None = None
    # Grouped means whose highest and lowest groups differ by less than their noise
    # (``barb.caveats.group_noise``): a chart says the differences are small, naming no winner.
    even_columns: list[str] = field(default_factory=list)
    # The grouped means whose ends differ by more than their noise, with the ends' text.
    apart_columns: dict[str, str] = field(default_factory=dict)
    # The columns whose groups (a calendar part's, a stretch of time each) no test compared.
    untested_columns: list[str] = field(default_factory=list)
    # A count whose most or fewest counted group is within noise of others, those groups'
    # keys by column, an end each, its group first (``group_noise.CountedNoise.near``).
    near_groups: dict[str, list[list[dict[str, str]]]] = field(default_factory=dict)
    # A limit that cut through a tie of the groups ranked: a chart numbers them one place.
    limit_tie: LimitTie | None = None
    # How many of the period's last rows the first stage's where had no value on (a next()
    # past the data's end): 0 when it judged the last.
    last_unjudged: int = 0
    # Of a table ranked by a run count, the run each row is a row of, when two share one
    # (``same_run_rows.listed_runs``): a chart greys a run's earlier rows.
    same_runs: list[int] | None = None
    # The groups of too few rows to compare, and the warning naming them.
    few_groups: FewGroupsWarning | None = None
    # What its groups' noise tests said of them (``barb.caveats.group_noise``): a then
    # stage whose where keeps none of those groups drops them (rows no answer shows).
    noise: list[str] = field(default_factory=list)
    # The data's-first-year record warning and the table rows it is about (None: not
    # known), so a then stage keeping none of them drops it (``barb.caveats.data_start``).
    record_rows: tuple[str, np.ndarray | None] | None = None
    # Groups whose statistic the data's start leaves over at most half their rows, by their
    # keys as text, with that size and their rows: a chart draws them hollow, unranked.
    begun_groups: list[tuple[dict[str, str], int, int]] = field(default_factory=list)
    # A single row's means under a where, each over all the period's rows too
    # (``barb.caveats.setup_noise``), by name: a chart draws them beside the answer.
    baselines: dict[str, Baseline] = field(default_factory=dict)
    # Each select item's value over the rows kept, by name, with the arguments its
    # statistics read (``evaluate_select``): what a caveat weighs a change against without
    # evaluating it again (``barb.caveats.calendar.holiday_shift``). Empty for a listing.
    aggregates: dict[str, SelectValue] = field(default_factory=dict)

    def kept_dates(self) -> np.ndarray | None:
        """The trading dates of the rows kept (bars with a trading_date column), else None;
        of a table cut by a limit, the rows it lists."""
        if self.kept is None or "trading_date" not in self.kept.columns:
            return None
        return self.kept["trading_date"].to_numpy()


def counted_columns(stage: StagePlan) -> list[str]:
    """The names of the stage's selected counts of rows (``count() as days``,
    ``count(big)``): how many rows a group holds, not the value the question compares."""
    return [
        s.name for s in stage.select if isinstance(s.expr, Call) and s.expr.name.lower() == "count"
    ]


def rows_counted(stage: StagePlan) -> list[str]:
    """The names of the stage's counts of every row (``count() as bars``), not of a
    condition's (``count(big)``)."""
    return [
        s.name
        for s in stage.select
        if isinstance(s.expr, Call) and s.expr.name.lower() == "count" and not s.expr.args
    ]


def query_columns(stage: StagePlan) -> list[str]:
    """The columns a table stage's rows are listed with: its select, else the columns its
    map made; then its sort keys."""
    made = [s.name for s in stage.select] or [n for n, _ in stage.map_exprs]
    return list(dict.fromkeys([*made, *(k.column for k in stage.sort)]))


def sort_keys(stage: StagePlan) -> list[tuple[str, bool]]:
    """The stage's sort as (column, descending) pairs, as a summary names its order."""
    return [(k.column, k.descending) for k in stage.sort]
