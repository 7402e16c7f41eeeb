"""What the person should know about a result beyond its numbers, as warning sentences:
bars a period's edges or a join left out, the data's unfinished last week/month/year, a
release that falls inside a bar or off a window's start, a group of an unfinished year, and
which hours a named session had on the instrument the query ran on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from barb.bar_labels import label_column
from barb.events.catalog import resolve_event
from barb.events.schedule import join_arrays, moved_releases
from barb.instruments import SessionSpec, parse_clock
from barb.lineage import through_map
from barb.period_rows import Scope, Unmatched, still_open
from barb.planning import Plan
from barb.script import ast
from barb.script.indicator_functions import READ_PREVIOUS_CLOSE
from barb.sessions import MINUTES_PER_DAY

# A session that leaves out at most this much of the main one (CASH: RTH but for the post-cash
# hour) is a whole day's session: its true range's reach back is the usual overnight gap.
MAIN_SESSION_SLACK = 60


def scope_caveats(
    plan: Plan, scope: Scope, kept_dates: Callable[[], np.ndarray | None] | None = None
) -> list[str]:
    """Bars the period or a join left out, or the data has not finished; ``kept_dates`` reads
    the trading dates of the first stage's rows kept."""
    warnings = []
    if scope.cut_bars:
        unit = plan.timeframe.label
        noun = f"{plan.timeframe.name} bar" + ("s" if scope.cut_bars > 1 else "")
        warnings.append(
            f"{scope.cut_bars} {noun} cut by the period's edges left out: only whole {unit}s "
            "inside the period count."
        )
    warnings += _another_market_s_events(plan)
    warnings += _releases_inside_bars(plan, scope)
    warnings += _releases_off_the_window(plan, scope)
    warnings += _releases_moved(plan, scope, kept_dates)
    warnings += _releases_without_a_bar(plan, scope)
    if scope.open_bar is not None:
        bar = scope.open_bar
        days = f"{_day(bar.first_date)} — {_day(bar.last_date)}"
        unit = plan.timeframe.label
        if bar.kept:
            warnings.append(
                f"The {unit} {bar.label} is not over yet: the data ends on {_day(bar.last_date)}, "
                f"so this bar covers only {days}."
            )
        else:
            warnings.append(
                f"The {unit} {bar.label} is not over yet (the data covers only {days}): "
                f"left out, so only whole {unit}s count.{_nothing_ahead(plan, scope)}"
            )
    for unmatched in scope.unmatched:
        if unmatched.count:
            warnings.append(_unmatched_text(plan, unmatched))
    if plan.period.bars is not None and np.count_nonzero(scope.in_period) < plan.period.bars:
        warnings.append(
            f"Only {np.count_nonzero(scope.in_period)} bars exist, fewer than the "
            f"{plan.period.bars} asked for."
        )
    return warnings


def _another_market_s_events(plan: Plan) -> list[str]:
    """An event joined on an instrument whose market it is not (opex on CL): the event list
    says so, but a model that never read it would call them CL's own expirations."""
    instrument = plan.dataset.instrument
    warnings = []
    for join in plan.events:
        spec = resolve_event(join.source, instrument) if join.source is not None else None
        if spec is not None and spec.note_for(instrument) is not None:
            assert spec.elsewhere is not None
            said = spec.elsewhere[0].lower() + spec.elsewhere[1:]
            warnings.append(f"'{spec.name}' on {instrument.symbol}: {said}")
    return warnings


def _unmatched_text(plan: Plan, unmatched: Unmatched) -> str:
    """Bars a join left out, the first few named: the person can check that the other
    market really had no bar there (a holiday only one of them keeps)."""
    n = unmatched.count
    names = ", ".join(unmatched.names)
    if n > len(unmatched.names):
        names += f" and {n - len(unmatched.names)} more"
    return (
        f"{n} {plan.dataset.instrument.symbol} bar{'s' if n > 1 else ''} without a matching "
        f"{unmatched.symbol} bar left out: {names}."
    )


def _nothing_ahead(plan: Plan, scope: Scope) -> str:
    """What the open bar's leaving out does to next(): the period's last whole bars have
    no bar after them to read, so their values ahead are empty, not the unfinished bar's."""
    if plan.reach.ahead == 0 or not len(scope.in_period) or not scope.in_period[-1]:
        return ""
    labelled = label_column(scope.frame.iloc[-1:], plan.timeframe.name)
    assert labelled is not None
    unit = plan.timeframe.label
    return (
        f" next() reads no {unit} after {labelled[1][0]}, the last whole one: it is empty "
        f"there, not the unfinished {unit}'s."
    )


def _releases_inside_bars(plan: Plan, scope: Scope) -> list[str]:
    """An event released inside a bar (NFP at 08:30 in the 08:00-09:00 bar): the bars from
    the release on begin at the next bar, so "the hour after" on these bars is not that."""
    tf = plan.timeframe
    if not tf.intraday or (tf.minutes or 1) <= 1:
        return []
    warnings = []
    for join in plan.events:
        column = f"{join.source}_minutes"
        if column not in scope.frame.columns:
            continue
        minutes = scope.frame[column].to_numpy()
        with np.errstate(invalid="ignore"):
            inside = scope.in_period & (minutes < 0) & (minutes > -tf.minutes)
        if not inside.any():
            continue
        at = int(np.flatnonzero(inside)[0])
        opens = pd.Timestamp(scope.frame["timestamp"].iloc[at])
        released = opens - pd.Timedelta(minutes=float(minutes[at]))
        warnings.append(
            f"{join.source.upper()} came out at {released:%H:%M}, inside the {tf.name} bar "
            f"opening {opens:%H:%M}: the first bar after it opens "
            f"{opens + pd.Timedelta(minutes=tf.minutes):%H:%M}. For the time right after a "
            f"release use 1m bars, or a window such as '{released:%H:%M}-"
            f"{released + pd.Timedelta(minutes=tf.minutes):%H:%M}' as the session."
        )
    return warnings


def _releases_off_the_window(plan: Plan, scope: Scope) -> list[str]:
    """A window session that starts at an event's usual time ("14:00-14:30" for FOMC) reads
    "the half hour after the release" only on the days the release came at that time: FOMC
    came at 14:15 in 2008-2012 and at 12:30 on press-conference days."""
    # Daily bars only: a weekly bar's trading date is its last day, not the release's.
    if plan.timeframe.name != "daily" or not plan.events:
        return []
    instrument = plan.dataset.instrument
    window = instrument.session(plan.session)
    warnings = []
    for join in plan.events:
        if join.source is None or join.source not in scope.frame.columns:
            continue
        spec = resolve_event(join.source, instrument)
        if spec.time != window.start:
            continue
        marked = scope.frame[join.source].fillna(False).to_numpy(dtype=bool) & scope.in_period
        days = scope.frame["trading_date"].to_numpy()[marked]
        if not len(days):
            continue
        arrays = join_arrays(spec, instrument)
        day_numbers = days.astype("datetime64[D]").astype(np.int64)
        releases = arrays.release_ns[np.searchsorted(arrays.days, day_numbers)]
        times = pd.Series(pd.to_datetime(releases).strftime("%H:%M"))
        other = times[times != window.start].value_counts()
        if other.empty:
            continue
        at = ", ".join(f"{time} on {count}" for time, count in other.items())
        name, length = join.source, (window.end_minute - window.start_minute) % MINUTES_PER_DAY
        # A 14:15 release is inside 14:00-14:30 (the window starts before it), a 12:30 one
        # outside it (the window misses it): "misses" said of both was wrong for the first.
        offsets = [(parse_clock(t) - window.start_minute) % MINUTES_PER_DAY for t in other.index]
        inside = sorted(t for t, o in zip(other.index, offsets, strict=True) if o < length)
        outside = sorted(t for t, o in zip(other.index, offsets, strict=True) if o >= length)
        how = []
        if inside:
            how.append(f"starts before the {', '.join(inside)} releases")
        if outside:
            how.append(f"misses the {', '.join(outside)} ones" if inside else "misses them")
        warnings.append(
            f"{name.upper()} came out at another time than the window's {window.start} on "
            f"{int(other.sum())} of the {len(days)} {name} days in the period ({at}): there the "
            f"window {' and '.join(how)}. For the time after each release use 1m bars: "
            f'"where": "{name} and {name}_minutes >= 0 and {name}_minutes < {length}".'
        )
    return warnings


def _releases_moved(
    plan: Plan, scope: Scope, kept_dates: Callable[[], np.ndarray | None] | None = None
) -> list[str]:
    """Releases on a day without trading (CPI on Good Friday, FOMC on a Sunday) count for the
    next trading day: a Monday "CPI day" is one of them. But on intraday bars a where on the
    minutes after the release (fomc_minutes < 60) finds no bar of that day when the market
    opened later than the window (FOMC on Sunday 2020-03-15 at 17:00, the first bar at
    18:00): that release is not in the result, and is said so instead."""
    sources = [join.source for join in plan.events if join.source is not None]
    if not sources or not scope.in_period.any():
        return []
    # Rows are in time order: the period's first and last trading dates are at its ends.
    dates = scope.frame["trading_date"].to_numpy(dtype="datetime64[ns]")
    first = dates[int(np.argmax(scope.in_period))]
    last = dates[len(dates) - 1 - int(np.argmax(scope.in_period[::-1]))]
    warnings = []
    for source in sources:
        released, seen = moved_releases(source, plan.dataset.instrument)
        inside = (seen >= first) & (seen <= last)
        if not inside.any():
            continue
        released, seen = released[inside], seen[inside]
        missed = _moved_out_of_window(plan, scope, source, seen, kept_dates)
        if missed:
            warnings.append(_out_of_window_text(source, missed))
        counted = ~np.isin(seen.astype("datetime64[D]"), [day for day, _, _ in missed])
        pairs = [(_day(d), _day(t)) for d, t in zip(released[counted], seen[counted], strict=True)]
        if not pairs:
            continue
        days = ", ".join(f"{d} → {t}" for d, t in pairs[:3])
        more = f" and {len(pairs) - 3} more" if len(pairs) > 3 else ""
        count = f"{len(pairs)} {source.upper()} release" + ("s" if len(pairs) > 1 else "")
        verb = "counts" if len(pairs) == 1 else "count"
        warnings.append(
            f"{count} fell on a day without trading and {verb} for the next trading day "
            f"({days}{more})."
        )
    return warnings


def _moved_out_of_window(
    plan: Plan,
    scope: Scope,
    source: str,
    seen: np.ndarray,
    kept_dates: Callable[[], np.ndarray | None] | None,
) -> list[tuple[np.datetime64, pd.Timestamp, pd.Timestamp | None]]:
    """The moved releases whose day kept no row under a where on ``<source>_minutes``: each
    day, its release and the first bar after it (None: no bar after it that day)."""
    column = f"{source}_minutes"
    where = plan.first.where
    if kept_dates is None or where is None or column not in scope.frame.columns:
        return []
    if not any(isinstance(node, ast.Column) and node.name == column for node in ast.walk(where)):
        return []
    kept = kept_dates()
    kept_days = np.unique(kept.astype("datetime64[D]")) if kept is not None else []
    instrument = plan.dataset.instrument
    arrays = join_arrays(resolve_event(source, instrument), instrument)
    day_of_row = scope.frame["trading_date"].to_numpy().astype("datetime64[D]")
    minutes = scope.frame[column].to_numpy(dtype=np.float64)
    stamps = scope.frame["timestamp"].to_numpy()
    missed = []
    for day in np.unique(seen.astype("datetime64[D]")):
        if np.isin(day, kept_days):
            continue
        at = np.searchsorted(arrays.days, day.astype(np.int64))
        release = pd.Timestamp(int(arrays.release_ns[at]))
        with np.errstate(invalid="ignore"):
            after = np.flatnonzero((day_of_row == day) & (minutes >= 0))
        opens = pd.Timestamp(stamps[after[0]]) if len(after) else None
        missed.append((day, release, opens))
    return missed


def _out_of_window_text(
    source: str, missed: list[tuple[np.datetime64, pd.Timestamp, pd.Timestamp | None]]
) -> str:
    parts = []
    for _, release, opens in missed:
        if opens is None:
            parts.append(f"{release:%Y-%m-%d %H:%M}: no bar after it")
        else:
            late = int((opens - release) / pd.Timedelta(minutes=1))
            parts.append(
                f"{release:%Y-%m-%d %H:%M}, market closed: the first bar after it opens "
                f"{opens:%H:%M}, {source}_minutes = {late}"
            )
    noun = "release falls" if len(missed) == 1 else "releases fall"
    return (
        f"{len(missed)} {source.upper()} {noun} on a day without trading and no bar of its "
        f"day is inside the where's {source}_minutes window ({'; '.join(parts)}): not in the "
        "result."
    )


def _releases_without_a_bar(plan: Plan, scope: Scope) -> list[str]:
    """A release day that traded, only not in the query's session (NFP on Good Friday: a
    short Globex session to 09:15, no RTH bar): no row carries its flag, so a count of
    releases on RTH misses it."""
    if plan.timeframe.calendar or not scope.in_period.any():
        return []  # a weekly bar's trading date is its last day, not the release's
    sources = [join.source for join in plan.events if join.source is not None]
    if not sources or plan.session == "ETH":
        return []
    dates = scope.frame["trading_date"].to_numpy(dtype="datetime64[ns]")
    first = dates[int(np.argmax(scope.in_period))].astype("datetime64[D]")
    last = dates[len(dates) - 1 - int(np.argmax(scope.in_period[::-1]))].astype("datetime64[D]")
    traded = np.asarray(plan.dataset.trading_dates(), dtype="datetime64[D]")
    traded = traded[(traded >= first) & (traded <= last)]
    session_days = plan.dataset.session_daily(plan.session).index.to_numpy()
    missing_here = np.setdiff1d(traded, session_days.astype("datetime64[D]"))
    if not len(missing_here):
        return []
    instrument = plan.dataset.instrument
    warnings = []
    for source in sources:
        days = join_arrays(resolve_event(source, instrument), instrument).days
        missed = np.intersect1d(missing_here, days.astype("datetime64[D]"))
        if not len(missed):
            continue
        listed = ", ".join(_day(d) for d in missed[:5])
        more = f" and {len(missed) - 5} more" if len(missed) > 5 else ""
        count = f"{len(missed)} {source.upper()} release day" + ("s" if len(missed) > 1 else "")
        verb, pronoun = ("has", "it is") if len(missed) == 1 else ("have", "they are")
        warnings.append(
            f"{count} traded but {verb} no {plan.session} bar ({listed}{more}): no row "
            f"carries {source} there, so {pronoun} not counted. To count releases use the ETH "
            "session."
        )
    return warnings


def open_group_caveat(plan: Plan, group: OpenGroup | None) -> list[str]:
    """Daily bars grouped by week(), or by year() (or year and month, or year and quarter):
    the group of the data's last week or year (``open_group``) is a few days, and can top a
    ranking of whole ones."""
    if group is None:
        return []
    return [_open_group_text(group.unit, group.label, pd.Timestamp(plan.dataset.last_date))]


@dataclass(frozen=True)
class OpenGroup:
    """The group of the data's last week, month, quarter or year, still open: its ``unit``,
    ``label`` (``2026``, ``2026-01``) and its key columns' values as written (``{"year":
    "2026"}``), so a chart finds its row."""

    unit: str
    label: str
    keys: dict[str, str]


def open_group(plan: Plan, table: pd.DataFrame | None) -> OpenGroup | None:
    """The result's group that the data's end cuts short, when it is listed."""
    mapped = dict(plan.first.map_exprs)
    keys = {}
    for name, key in plan.first.group_keys:
        # A key named in the map ("wk": "week()") is the function it holds.
        expr = through_map(key, mapped)
        if isinstance(expr, ast.Call) and not expr.args:
            keys[expr.name] = name
    if table is None:
        return None
    last = pd.Timestamp(plan.dataset.last_date)
    calendar = plan.dataset.instrument.calendar
    week = keys.get("week")
    if week is not None and week in table.columns:
        monday = (last - pd.Timedelta(days=last.weekday())).normalize()
        listed = (pd.to_datetime(table[week], errors="coerce") == monday).any()
        if listed and still_open(np.datetime64(last, "ns"), "weekly", calendar):
            label = str(monday.date())
            return OpenGroup("week", label, {week: label})
    year = keys.get("year")
    if year is None or year not in table.columns:
        return None
    unit, label, mask = "year", str(last.year), table[year] == last.year
    values = {year: str(last.year)}
    for function, part, text in (
        ("month", last.month, f"{last.year}-{last.month:02d}"),
        ("quarter", last.quarter, f"{last.year}-Q{last.quarter}"),
    ):
        key = keys.get(function)
        if key is not None and key in table.columns:
            unit, label, mask = function, text, mask & (table[key] == part)
            values[key] = str(part)
    timeframe = {"year": "yearly", "month": "monthly", "quarter": "quarterly"}[unit]
    if not mask.any() or not still_open(np.datetime64(last, "ns"), timeframe, calendar):
        return None
    return OpenGroup(unit, label, values)


def _open_group_text(unit: str, label: str, last: pd.Timestamp) -> str:
    return (
        f"The {unit} {label} is not over: its group holds only the bars up to "
        f"{last.date()}, where the data ends (a period ending before it compares whole "
        f"{unit}s only)."
    )


def session_gap_caveat(plan: Plan) -> list[str]:
    """What reads other bars on a part of the day (the first hour, a window, the overnight
    session), where the bar before a day's first is the session's last a day earlier.

    Intraday bars: every indicator, rolling window or lag runs on the session's bars chained
    day to day, so the 09:30 bar of a '09:30-10:30' session follows yesterday's 10:25 one: not
    the values a chart of the whole session shows. Daily bars: only true range (atr, adx,
    keltner) reaches back, to a close a day earlier, so the hours between, most of the main
    session among them, count as the bar's true range: "first-hour ATR" comes out about twice
    the first hour's range (an RSI of first-hour closes is that, and means it)."""
    window = _part_of_the_day(plan)
    if window is None:
        return []
    named = plan.session if plan.session == window.hours else f"{plan.session} ({window.hours})"
    if plan.timeframe.intraday:
        return _chained_days(plan, window, named)
    calls = sorted(plan.first.calls & READ_PREVIOUS_CLOSE)
    if not calls:
        return []
    hours = (window.start_minute - window.end_minute) % MINUTES_PER_DAY / 60
    between = f"{hours:g} hour" + ("" if hours == 1 else "s")
    names = ", ".join(f"{name}()" for name in calls)
    return [
        f"{names} on {named}: true range reaches back to the previous bar's close, the "
        f"{window.end} close of the date before, {between} earlier, so it takes in the moves "
        "between the sessions, not only this one's. For the session's own size use range, or "
        "rolling_mean(range, 14) for its average."
    ]


def _part_of_the_day(plan: Plan) -> SessionSpec | None:
    """The query's session when it leaves out more of the main one than CASH does."""
    instrument = plan.dataset.instrument
    if plan.session in ("ETH", instrument.default_session):
        return None
    window = instrument.session(plan.session)
    main = instrument.session(instrument.default_session)
    if np.count_nonzero(_minutes(main) & ~_minutes(window)) <= MAIN_SESSION_SLACK:
        return None
    return window


def _chained_days(plan: Plan, window: SessionSpec, named: str) -> list[str]:
    """Functions reading other bars on intraday bars of a part of the day, and how to read
    them as a chart does: on the whole session, with a where keeping the window's bars (the
    columns are computed on every bar before where keeps rows)."""
    calls = sorted(plan.first.reading_other_bars)
    if not calls:
        return []
    instrument = plan.dataset.instrument
    main = instrument.default_session
    inside = not np.any(_minutes(window) & ~_minutes(instrument.session(main)))
    whole = main if inside else "ETH"
    since, until = f"time() >= '{window.start}'", f"time() < '{window.end}'"
    keep = f"{since} or {until}" if window.crosses_midnight else f"{since} and {until}"
    names = ", ".join(f"{name}()" for name in calls)
    return [
        f"{names} on {plan.timeframe.name} bars of {named}: the session's bars are chained day "
        f"to day, so each day's first bars continue from the previous day's last bars before "
        f"{window.end}, not from the bars before {window.start} as on an {whole} chart. For a "
        f'chart\'s values use "session": "{whole}" and keep the window\'s bars with "where": '
        f'"{keep}" (the columns are computed on every {whole} bar first).'
    ]


def _minutes(session: SessionSpec) -> np.ndarray:
    """The minutes of the day the session holds."""
    minutes = np.arange(MINUTES_PER_DAY)
    offset = (minutes - session.start_minute) % MINUTES_PER_DAY
    return offset < session.length_minutes


def session_hours(plan: Plan) -> str | None:
    """A named session's hours on the query's instrument ("09:00-14:30" for CL's RTH)."""
    spec = plan.dataset.instrument.sessions.get(plan.session)
    return None if spec is None else spec.hours


def _day(value: np.datetime64) -> str:
    return str(np.datetime64(value, "D"))
