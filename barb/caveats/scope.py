"""What the person should know about a result beyond its numbers, as warning sentences:
bars a period's edges or a join left out, the data's unfinished last week/month/year, a
group of an unfinished year, and which hours a named session had on the instrument the query
ran on. The joined events' warnings are in ``events``, a part-of-the-day session's in
``sessions``."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from barb.bar_labels import label_column, row_label, unit_label
from barb.caveats.events import event_caveats
from barb.caveats.join_ends import join_end_caveat
from barb.caveats.join_hours import join_hours_caveat
from barb.frames import masked_values, period_start
from barb.lineage import through_map
from barb.notes import (
    GROUP_DAYS,
    OPEN_GROUP,
    OPEN_LEFT_OUT,
    START_LEFT_OUT,
    UNJUDGED_LAST,
    UNJUDGED_LAST_ROWS,
    Note,
)
from barb.period_rows import CutBar, Scope, Unmatched, calendar_days, still_open
from barb.planning import Plan
from barb.script import ast
from barb.summary_text import count_text, named_text


def scope_caveats(
    plan: Plan,
    scope: Scope,
    kept_dates: Callable[[], np.ndarray | None] | None = None,
    cut_rows: Callable[[], str] | None = None,
) -> list[str]:
    """Bars the period or a join left out, or the data has not finished; ``kept_dates`` reads
    the trading dates of the first stage's rows kept, ``cut_rows`` says which bars the
    period's edges cut hold a row the query counts (``barb.caveats.cut_bar_rows``)."""
    warnings = []
    if scope.cut:
        warnings.append(_cut_text(plan, scope.cut, cut_rows() if cut_rows else ""))
    if scope.start_cut is not None:
        warnings.append(_start_cut_text(plan, scope))
    warnings += event_caveats(plan, scope, kept_dates)
    if scope.open_bar is not None:
        warnings.append(_open_bar_text(plan, scope))
    if scope.open_after is not None and scope.in_period.any():
        warnings.append(_open_after_text(plan, scope))
    for unmatched in scope.unmatched:
        if unmatched.count:
            warnings.append(_unmatched_text(plan, unmatched))
    warnings += join_end_caveat(plan, scope)
    if kept_dates is not None:
        warnings += join_hours_caveat(plan, kept_dates)
    if plan.period.bars is not None and np.count_nonzero(scope.in_period) < plan.period.bars:
        warnings.append(
            f"Only {np.count_nonzero(scope.in_period)} bars exist, fewer than the "
            f"{plan.period.bars} asked for."
        )
    return warnings


def _start_cut_text(plan: Plan, scope: Scope) -> str:
    """The data's first bar, left out as a part one: a weekly bar named by its label, the
    week's first trading date, as the table and week() name it ("The week 2008-01-02", not
    its Monday 2007-12-31 beside "its weekly bar (2008-01-02)"); a longer one by its unit's
    own label, with the bar's beside it where that differs."""
    cut, label = scope.start_cut, scope.start_cut_label
    assert cut is not None
    unit = plan.timeframe.label
    if label is not None and unit == "week":
        cut = dataclasses.replace(cut, begins=np.datetime64(label, "D"))
    named = unit_label(cut.begins, unit)
    return Note.of(
        START_LEFT_OUT,
        unit=unit,
        label=named,
        bar=f" ({label})" if label and label != named else "",
        held=cut.days,
        total=cut.calendar_days,
    )


def _cut_text(plan: Plan, cut: Sequence[CutBar], counted: str = "") -> str:
    """The bars the period's edges cut, each named with its days inside the period, and the
    two forms that count those days: weekly bars of "ytd" in January 2026 left out the week
    2025-12-29, and with it 2026-01-02 (+1.06%, when the year so far was +0.79%).
    ``counted`` names those that hold a row the query counts, with the answer with them."""
    tf, period = plan.timeframe, plan.period
    unit = tf.label
    days = plan.dataset.session_daily(plan.session).index.to_numpy()
    named = []
    for bar in cut:
        lo, hi = bar.first_date, bar.last_date
        if period.start is not None:
            lo = max(lo, _as_ns(period.start))
        if period.end is not None:
            hi = min(hi, _as_ns(period.end))
        inside = days[(days >= lo) & (days <= hi)]
        if not len(inside):
            named.append(f"the {unit} {bar.label} (none of its days in the period)")
            continue
        first, last = _day(inside[0]), _day(inside[-1])
        held = first if len(inside) == 1 else f"{first} — {last}"
        named.append(f"the {unit} {bar.label} ({held} in the period)")
    start = _day(cut[0].first_date) if cut[0].first_date < _as_ns(period.start) else period.start
    end = _day(cut[-1].last_date) if cut[-1].last_date > _as_ns(period.end) else period.end
    whole = f"{start or ''}:{end or ''}"
    noun = f"{tf.name} bar" + ("s" if len(cut) > 1 else "")
    keys = json.dumps(_GROUP_KEYS[unit])
    return (
        f"{len(cut)} {noun} cut by the period's edges left out, as only whole {unit}s inside "
        f"it count: {' and '.join(named)}. {counted + ' ' if counted else ''}"
        f"To count those days: daily bars grouped by {unit} "
        f'("from": "daily", "group_by": {keys}), or the whole {unit}s: "period": "{whole}".'
    )


# The group_by that makes daily bars into weekly or longer rows, each labelled.
_GROUP_KEYS = {
    "week": "week()",
    "month": ["year()", "month()"],
    "quarter": ["year()", "quarter()"],
    "year": "year()",
}


def _as_ns(day: object) -> np.datetime64:
    """A period's bound as bar dates are held; NaT for an open side (compares false)."""
    return np.datetime64(day, "ns") if day is not None else np.datetime64("NaT", "ns")


def _open_after_text(plan: Plan, scope: Scope) -> str:
    """next() at the period's end, when the bar after it is the data's unfinished one: it
    reads nothing there rather than a month of four days."""
    bar = scope.open_after
    assert bar is not None
    last_row = scope.frame.iloc[[int(np.flatnonzero(scope.in_period)[-1])]]
    labelled = label_column(last_row, plan.timeframe.name)
    assert labelled is not None
    unit = plan.timeframe.label
    return (
        f"next() reads no {unit} after {labelled[1][0]}: the {unit} after it, {bar.label}, "
        f"is not over yet (the data covers only {_day(bar.first_date)} — "
        f"{_day(bar.last_date)}), so next() is empty there."
    )


def _open_bar_text(plan: Plan, scope: Scope) -> str:
    """The data's unfinished last bar, what it covers, and the period that gives the other
    kind: the whole ones when it was kept, it alone when it was left out. "How did NQ close
    last week" as weekly last_1_bars read this week's three days (-0.26%), not the last whole
    week (+4.17%)."""
    bar = scope.open_bar
    assert bar is not None
    days = f"{_day(bar.first_date)} — {_day(bar.last_date)}"
    unit = plan.timeframe.label
    if not bar.kept and unit in _TO_DATE:
        ahead = last_whole_label(plan, scope)
        return Note.of(
            OPEN_LEFT_OUT,
            unit=unit,
            label=bar.label,
            first=_day(bar.first_date),
            last=_day(bar.last_date),
            to_date=_TO_DATE[unit],
            ahead=ahead,
        )
    if not bar.kept:
        return (
            f"The {unit} {bar.label} is not over yet (the data covers only {days}): left out, "
            f'so only whole {unit}s count. This {unit} so far: "period": "last_1_bars".'
            f"{_nothing_ahead(plan, scope)}"
        )
    text = (
        f"The {unit} {bar.label} is not over yet: the data ends on {_day(bar.last_date)}, so "
        f"this bar covers only {days}."
    )
    n = plan.period.bars or 1
    if n == 1:
        return f'{text} The last whole {unit}: "period": "last_{unit}".'
    if unit in _WHOLE_UNITS:
        return f'{text} The last {n} whole {unit}s: "period": "last_{n}_{unit}s".'
    return text


# The periods that give the data's unfinished week, month or year alone ("so far"), and the
# units whose last N whole bars a period names (last_N_weeks); quarters have last_quarter only.
_TO_DATE = {"week": "wtd", "month": "mtd", "quarter": "qtd", "year": "ytd"}
_WHOLE_UNITS = frozenset({"week", "month", "year"})


def _unmatched_text(plan: Plan, unmatched: Unmatched) -> str:
    """Bars a join left out, the first few named: the person can check that the other
    market really had no bar there (a holiday only one of them keeps)."""
    n = unmatched.count
    names = named_text(unmatched.names, n)
    text = (
        f"{n} {unmatched.symbol} bar{'s' if n > 1 else ''} without a matching "
        f"{unmatched.partner} bar left out: {names}{_outside_text(unmatched)}."
    )
    if unmatched.lag is None:
        return text
    after, before = unmatched.lag
    first = unmatched.names[0]
    step, on, reads = ("next", before, after) if unmatched.ahead else ("prev", after, before)
    if unmatched.symbol != plan.dataset.instrument.symbol:
        prefix = unmatched.symbol.lower()
        return (
            f"{text} {step}({prefix}_close) on {on} reads the {unmatched.symbol} bar of "
            f"{reads}, not the {first} left out."
        )
    return (
        f"{text} {unmatched.symbol}'s own {step}() on {on} reads its bar of {reads}, not "
        f"the {first} left out."
    )


def _outside_text(unmatched: Unmatched) -> str:
    """Where the bars left out lie when not all in the period: before or after it, among the
    bars its rows read (prev() on its first day, a rolling window's first rows)."""
    if not unmatched.outside:
        return ""
    where = "outside the period"
    if unmatched.outside < unmatched.count:
        where = f"{unmatched.outside} of them {where}"
    return f" ({where}, among the bars its rows read)"


def _nothing_ahead(plan: Plan, scope: Scope) -> str:
    """What the open bar's leaving out does to next(): the period's last whole bars have
    no bar after them to read, so their values ahead are empty, not the unfinished bar's."""
    label = last_whole_label(plan, scope)
    if label is None:
        return ""
    unit = plan.timeframe.label
    return (
        f" next() reads no {unit} after {label}, the last whole one: it is empty "
        f"there, not the unfinished {unit}'s."
    )


def last_whole_label(plan: Plan, scope: Scope, rows: int = 1) -> str | None:
    """The label of the period's last bar when the query reads ahead of its rows and no bar
    follows it, the data ending there or in an unfinished bar left out (``_open_bar_text``):
    "2025-12-29", whose next() is empty; of its last ``rows`` bars, the first and the last
    ("2024-03-26 — 2024-03-28"). None otherwise."""
    bar = scope.open_bar
    if (bar is not None and bar.kept) or plan.reach.ahead == 0 or rows < 1:
        return None
    if not len(scope.in_period) or not scope.in_period[-1]:
        return None
    tf = plan.timeframe.name
    last = row_label(scope.frame, len(scope.frame) - 1, tf)
    if rows == 1:
        return last
    return f"{row_label(scope.frame, len(scope.frame) - rows, tf)} — {last}"


def unjudged_last_caveat(plan: Plan, scope: Scope, rows: int) -> list[str]:
    """The period's last bars, the data's last, that a where reading next() could not judge
    (``StageOutput.last_unjudged`` of them), when no unfinished bar's warning says it already
    (``_nothing_ahead``): "Wednesdays over the last 30 days" read 4 days under a period
    running to 2026-01-07, a Wednesday left out in silence (p48i 2)."""
    label = last_whole_label(plan, scope, rows) if scope.open_bar is None else None
    if label is None:
        return []
    # "the data's last date" read as a calendar fact: a bar is a day, a week, a bar of 5m.
    unit = {"date": "day", "timestamp": "bar"}.get(plan.timeframe.label, plan.timeframe.label)
    if rows == 1:
        return [Note.of(UNJUDGED_LAST, unit=unit, label=label)]
    return [Note.of(UNJUDGED_LAST_ROWS, unit=unit, label=label, rows=str(rows))]


def open_group_caveat(
    plan: Plan,
    group: OpenGroup | None,
    kept: pd.DataFrame | None = None,
    ranked: str = "",
    cut: Sequence[OpenGroup] = (),
) -> list[str]:
    """Daily bars grouped by week(), or by year() (or year and month, or year and quarter):
    the group of the data's last week or year (``open_group``) is a few days, and can top a
    ranking of whole ones. Said with how many days it holds of the rows ``kept`` and, when
    a stage's sort puts it first, the first whole group (``ranked``, from
    ``barb.caveats.ranked_groups``): "the year with the lowest NQ-ES correlation", sorted and cut to
    1, read 2026 (0.796 over 4 days) where the whole years' lowest was 2021 (0.8834).
    ``cut``: the groups the period's edges or the data's start cut, no whole ones either."""
    if group is None:
        return []
    held = _days_held(plan, group, kept, cut)
    last = str(pd.Timestamp(plan.dataset.last_date).date())
    days = held if isinstance(held, Note) else None
    note = Note.of(OPEN_GROUP, unit=group.unit, label=group.label, last=last, held=days)
    if ranked or (held and days is None):
        return [str(note) + held + ranked]  # parts said only in English: the whole in English
    return [note]


@dataclass(frozen=True)
class OpenGroup:
    """The group of the data's last week, month, quarter or year, still open: its ``unit``,
    ``label`` (``2026``, ``2026-01``) and its key columns' values as written (``{"year":
    "2026"}``), so a chart finds its row; ``values`` are the same as the columns hold them
    (2026, a week's Monday as a timestamp). ``cut`` says what cuts it: "open" the data's end
    (not over yet), or a ``PeriodCut.edge`` for a group of the data's start or the period's
    edges that takes this form to be found (``barb.caveats.ranked_groups.cut_group``)."""

    unit: str
    label: str
    keys: dict[str, str]
    values: dict[str, object] = field(default_factory=dict)
    cut: str = "open"

    def rows(self, frame: pd.DataFrame) -> np.ndarray:
        """Which of ``frame``'s rows (groups, or the bars kept) are of this week or year."""
        mask = np.ones(len(frame), dtype=bool)
        for column, value in self.values.items():
            held = frame[column]
            numbers = isinstance(held.dtype, np.dtype) and held.dtype.kind in "iuf"
            if numbers and isinstance(value, int | float | np.number):
                mask &= held.to_numpy() == value  # a year, a month: numbers, none empty
                continue
            if isinstance(value, pd.Timestamp):
                held = pd.to_datetime(held, errors="coerce")
            mask &= np.asarray((held == value).fillna(False), dtype=bool)
        return mask


def open_group(
    plan: Plan,
    table: pd.DataFrame | None,
    kept_dates: Callable[[], np.ndarray | None] = lambda: None,
) -> OpenGroup | None:
    """The result's group that the data's end cuts short, when it is listed and the rows
    kept need days after the data's end (``kept_dates``: the trading dates of the rows
    kept)."""
    keys = key_columns(plan)
    if table is None:
        return None
    last = pd.Timestamp(plan.dataset.last_date)
    calendar = plan.dataset.instrument.calendar
    week = keys.get("week")
    if week is not None and week in table.columns:
        monday = (last - pd.Timedelta(days=last.weekday())).normalize()
        weeks = pd.to_datetime(table[week], errors="coerce")
        # week() names it by its first trading date, its Monday or a later day.
        found = weeks[(weeks - pd.to_timedelta(weeks.dt.dayofweek, unit="D")) == monday]
        if (
            not found.empty
            and still_open(np.datetime64(last, "ns"), "weekly", calendar)
            and not _all_there(plan, kept_dates(), "weekly")
        ):
            named = found.iloc[0]
            label = str(named.date())
            return OpenGroup("week", label, {week: label}, {week: named})
    year = keys.get("year")
    if year is None or year not in table.columns:
        return None
    unit, label, mask = "year", str(last.year), table[year] == last.year
    values: dict[str, object] = {year: last.year}
    for function, part, text in (
        ("month", last.month, f"{last.year}-{last.month:02d}"),
        ("quarter", last.quarter, f"{last.year}-Q{last.quarter}"),
    ):
        key = keys.get(function)
        if key is not None and key in table.columns:
            unit, label, mask = function, text, mask & (table[key] == part)
            values[key] = part
    timeframe = {"year": "yearly", "month": "monthly", "quarter": "quarterly"}[unit]
    if not mask.any() or not still_open(np.datetime64(last, "ns"), timeframe, calendar):
        return None
    if _all_there(plan, kept_dates(), timeframe):
        return None
    return OpenGroup(unit, label, {k: str(v) for k, v in values.items()}, values)


def key_columns(plan: Plan) -> dict[str, str]:
    """The first stage's group-key columns by the calendar function each holds (``{"year":
    "year", "month": "m"}``): a key named in the map ("wk": "week()") is the function it
    holds."""
    mapped = dict(plan.first.map_exprs)
    keys = {}
    for name, key in plan.first.group_keys:
        expr = through_map(key, mapped)
        if isinstance(expr, ast.Call) and not expr.args:
            keys[expr.name] = name
    return keys


def _all_there(plan: Plan, kept: np.ndarray | None, timeframe: str) -> bool:
    """Whether the data's last week or year already holds every row the query keeps of it:
    in each whole one before it, the rows kept lie no further into it, in calendar days or
    in the session's trading days, than the data reaches into the last one. "The first 4
    trading days of each year" keeps 2026's 2nd to 7th of January, all in the data."""
    if kept is None or not len(kept):
        return False
    days = np.asarray(kept).astype("datetime64[D]")  # repeats change no maximum (no unique: a sort)
    starts = period_start(days, timeframe).astype("datetime64[D]")
    last = np.datetime64(plan.dataset.last_date, "D")
    opens = period_start(np.array([last]), timeframe).astype("datetime64[D]")[0]
    whole = starts < opens
    if not whole.any():
        return False  # nothing to tell which days of a period the query keeps
    if (days[whole] - starts[whole]).max() <= last - opens:
        return True
    session = plan.dataset.session_daily(plan.session).index.to_numpy().astype("datetime64[D]")
    into = np.searchsorted(session, days[whole]) - np.searchsorted(session, starts[whole])
    reached = np.searchsorted(session, last, side="right") - np.searchsorted(session, opens)
    return bool(into.max() < reached)


def _days_held(
    plan: Plan, group: OpenGroup, kept: pd.DataFrame | None, cut: Sequence[OpenGroup] = ()
) -> str:
    """' It holds 3 days, against 5 in the whole week (the exchange's calendar).': the
    trading days (the bars, on weekly and longer ones) of the rows kept in the open week or
    year, and the days the exchange trades in all of it when every day is kept; else the
    median of the whole groups before it (``cut`` ones are none: "last_2_weeks" by week()
    read a 1-day week the period cut as a whole one, "against 2 in a whole week")."""
    columns = list(group.values)
    if kept is None or not len(kept) or "trading_date" not in kept.columns:
        return ""
    if any(column not in kept.columns for column in columns):
        return ""
    # The rows kept are in time order: a day begins where the trading date changes (the
    # period's keys are the same all day), so a day of minute bars counts once.
    dates = kept["trading_date"].to_numpy()
    begins = np.ones(len(kept), dtype=bool)
    begins[1:] = dates[1:] != dates[:-1]
    # Column by column: a frame's .loc with a mask and a list of columns cost this
    # warning most of its half millisecond.
    days = pd.DataFrame({column: masked_values(kept[column], begins) for column in columns})
    in_open = group.rows(days)
    noun = plan.timeframe.label if plan.timeframe.calendar else "day"
    text = f" It holds {count_text(int(in_open.sum()), noun)}"
    total = _trading_days_in(plan, group)
    if total is not None and total > in_open.sum():
        return Note.of(GROUP_DAYS, count=int(in_open.sum()), total=total, unit=group.unit)
    part = in_open.copy()
    for other in cut:
        if all(column in days.columns for column in other.values):
            part |= other.rows(days)
    whole = days[~part].groupby(columns).size()
    if len(whole):
        median = round(float(whole.median()))
        held = _whole_group(plan, group.unit, dates[begins][~np.asarray(part)])
        so_far = _days_so_far(plan, group) if noun == "day" else None
        if median <= in_open.sum() and so_far is not None:
            # The where keeps as many of each (a year's 3 biggest drops): "against 3 in a
            # whole year" told nothing; the days they were picked from do (p39b Q2).
            return text + f", as many as in {held}, picked from the {so_far:,} it has so far."
        text += f", against {median:,} in {held}"
        text += " (the median)" if whole.nunique() > 1 else ""
    return text + "."


def _days_so_far(plan: Plan, group: OpenGroup) -> int | None:
    """The trading dates of the query's session in the open week, month, quarter or year,
    up to the data's end."""
    unit = _UNIT_TIMEFRAMES.get(group.unit)
    if unit is None:
        return None
    last = np.datetime64(plan.dataset.last_date, "D")
    start = period_start(np.array([last]), unit).astype("datetime64[D]")[0]
    days = plan.dataset.session_daily(plan.session).index.to_numpy().astype("datetime64[D]")
    return int(((days >= start) & (days <= last)).sum())


def _whole_group(plan: Plan, unit: str, dates: np.ndarray) -> str:
    """What a whole group before the open one is: "a whole year"; of a year or quarter whose
    where keeps the days of one month, or of a run of them, those: "a whole January",
    "a whole January–March" (January days by year: "4 days, against 21 in a whole year"
    read as a year of 21 days)."""
    filtered = plan.first.where is not None or any(j.filter is not None for j in plan.events)
    if not filtered or unit not in ("year", "quarter"):
        return f"a whole {unit}"
    months = np.unique(pd.DatetimeIndex(dates).month)
    if len(months) == 12 or months[-1] - months[0] != len(months) - 1:
        return f"a whole {unit}"
    first, last = (_MONTH_NAMES[int(m) - 1] for m in months[[0, -1]])
    return f"a whole {first}" if first == last else f"a whole {first}–{last}"


_MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip


_UNIT_TIMEFRAMES = {"week": "weekly", "month": "monthly", "quarter": "quarterly", "year": "yearly"}


def _trading_days_in(plan: Plan, group: OpenGroup) -> int | None:
    """The trading days the exchange's calendar has in the open group's week, month, quarter
    or year, when the rows are days (or bars within them) and the query keeps every one (no
    where, no event filter: "the Mondays by year" compares with other years' Mondays)."""
    if plan.timeframe.calendar or plan.first.where is not None:
        return None
    if any(join.filter is not None for join in plan.events):
        return None
    last = np.datetime64(plan.dataset.last_date, "ns")
    return calendar_days(last, _UNIT_TIMEFRAMES[group.unit], plan.dataset.instrument.calendar)


def _day(value: np.datetime64) -> str:
    return str(np.datetime64(value, "D"))
