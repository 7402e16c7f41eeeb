"""Bars an early close cuts, grouped with the full bars of the same time of day.

On a holiday or early-close session the futures stop at 13:00 or 13:15, so NQ's hourly RTH
bar from 12:30 lasts 30 or 45 minutes that day, and "average volume by hour" puts it in the
12:30 group beside the full hours of every other day. Over all history those bars are 113 of
the group's 4,611 (2.5%) and move its mean volume by 1.0%, its mean range by 0.1%; over 2024
alone, 10 of 259, 1.7% of the volume; over Novembers and Decembers, 41 of 760. Said when
leaving them out moves the group's mean volume or mean range, the two things a shorter bar
holds less of, by more than NOTABLE_SHIFT, of those the select reads (ES's "range by hour"
was told of volume, p47c E): a smaller share is within what any other day
moves a mean by, and naming it on every hourly question would drown the warnings that
matter. Bars on an aligned close (a 5-minute bar ending 13:00) are whole and never said.

A group whose bars are mostly cut is the query's choice of days ("by 30-minute slot on half
days": NQ's 13:00 bar ran 13:00-13:15 on all 23 of 2015-2025's) and has no whole bars to
leave them out against: its mean volume, 7,335 against 14,879 at 12:30, read as volume
halving into the close where per minute it was flat (489 against 496). Said with the volume
per minute of its bars and of the bar beside them on the same days, and the timeframe whose
bars no close cuts (p35a A).

A second stage counting the times a first stage picked per day (the hour of the day's high)
is said of the group whose picks were mostly such bars: on half days alone, NQ's "12:30"
high was 12:30-13:00 or 12:30-13:15 every time (``early_close_pick_caveat``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.caveats.short_sessions import sizes_read
from barb.events.rules import us_market_closed
from barb.frames import MINUTE_OF_DAY
from barb.instruments import MINUTES_PER_DAY, format_clock
from barb.lineage import through_map
from barb.planning import Plan
from barb.script import ast
from barb.short_bars import length_text
from barb.short_days import close_clock, day_edges, short_days, window_edges
from barb.summary_text import two_digits, value_text
from barb.time_keys import clock_kind, minutes_of_day
from barb.time_zones import short_name
from barb.timeframes import finest_fit

# Said when dropping the cut bars moves a group's mean volume or range by more than this.
NOTABLE_SHIFT = 0.01
# What a shorter bar holds less of.
MEASURES = ("volume", "range")
# The aggregates whose shift is said, by the statistic they take (avg is mean).
STATISTICS = {"mean": "mean", "avg": "mean", "median": "median", "sum": "sum"}
# Their order in the warning; a sum's shift is that of its bars' mean (``_shifts``).
STATISTIC_WORDS = ("mean", "median", "sum")
# Days named when a table lists bars a short session cut; more are counted.
NAMED_DAYS = 2


def early_close_bar_caveat(plan: Plan, kept: pd.DataFrame | None) -> list[str]:
    """The first stage's intraday bars ``kept``, grouped by a time of day: the group whose
    mean volume or range moves most when the bars an early close or a holiday session cut
    short are left out, when that is more than NOTABLE_SHIFT."""
    step = plan.timeframe.minutes
    if step is None or plan.first.shape != "grouped" or kept is None or not len(kept):
        return []
    query = plan.query.to_json()
    keys = [name for name, _ in plan.first.group_keys]
    needed = [*keys, "trading_date", MINUTE_OF_DAY, *MEASURES]
    missing = any(column not in kept.columns for column in needed)
    if missing or not by_time_of_day(kept, keys, query):
        return []
    cut = cut_bars(plan, kept, step)
    if not cut.any():
        return []
    rows = kept[needed].assign(cut=cut)
    touched = rows.loc[cut, keys].drop_duplicates()
    rows = rows.merge(touched, on=keys)  # only the groups that hold a cut bar
    read = _measures_read(plan)  # the shifts said are of the columns and statistics selected
    found, mostly = [], []
    for values, group in rows.groupby(keys, sort=True, dropna=True, observed=True):
        if group["cut"].sum() * 2 > len(group):  # no whole bars to leave the cut ones out of
            mostly.append((int(group["cut"].sum()), values, group))
            continue
        shifts = _shifts(group, read)
        if shifts and max(abs(s) for s in shifts.values()) > NOTABLE_SHIFT:
            found.append((max(abs(s) for s in shifts.values()), values, group, shifts))
    if mostly:
        _, values, group = max(mostly, key=lambda item: item[0])
        return [_mostly_text(plan, kept, values, group, step, len(mostly) - 1)]
    if not found:
        return []
    _, values, group, shifts = max(found, key=lambda item: item[0])
    return [_text(plan, values, group, shifts, len(found) - 1)]


def _measures_read(plan: Plan) -> tuple[tuple[str, str], ...]:
    """The ``MEASURES`` the first stage's aggregates read (through its map), each with the
    statistic that reads it (``STATISTICS``), in their order: ES's "range by hour" was told
    that leaving the cut bars out moved the 12:30 group's mean volume by +1.9 %, a column it
    never selected, and its range by +0.8 % (p47c E); a sum(volume) by hour was told of its
    "mean volume". An aggregate of no statistic here (a percentile) is not said."""
    stage = plan.first
    mapped = dict(stage.map_exprs) | dict(stage.hoisted)
    read: set[tuple[str, str]] = set()
    for item in stage.select:
        if not item.aggregate:
            continue
        for node in _calls(item.expr):
            statistic = STATISTICS.get(node.name.lower())
            if statistic is not None and node.args:
                read |= {(m, statistic) for m in sizes_read(node.args[0], mapped)}
    order = list(STATISTIC_WORDS)
    return tuple(sorted(read, key=lambda r: (MEASURES.index(r[0]), order.index(r[1]))))


def _calls(expr: ast.Node) -> list[ast.Call]:
    """Every call in ``expr``, outermost first."""
    found, pending = [], [expr]
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.Call):
            found.append(node)
        pending.extend(node.children())
    return found


def _shifts(group: pd.DataFrame, read: tuple[tuple[str, str], ...]) -> dict[tuple[str, str], float]:
    """How much each statistic ``read`` of the group moves when its cut bars are left out.
    A sum is not compared with the sum of fewer bars (leaving any bars out lowers it): its
    cut bars are counted at the mean of its whole ones, which is the mean's shift."""
    whole = group.loc[~group["cut"]]
    shifts = {}
    for measure, statistic in read:
        how = "mean" if statistic == "sum" else statistic
        every = float(group[measure].agg(how))
        if every:
            shifts[(measure, statistic)] = float(whole[measure].agg(how)) / every - 1
    return shifts


def by_time_of_day(kept: pd.DataFrame, keys: list[str], query: dict) -> bool:
    """Whether a group key holds a time of day (each distinct value read once)."""
    for key in keys:
        if pd.api.types.is_datetime64_any_dtype(kept[key]):  # a date holds no time of day
            continue
        values = pd.Series(kept[key].dropna().unique())
        if len(values) and minutes_of_day(key, values, query) is not None:
            return True
    return False


def cut_bars(plan: Plan, kept: pd.DataFrame, step: int) -> np.ndarray:
    """Which rows are bars that a short session's late open or early close falls inside.
    The session's short days are found once per process; only those whose open or close is
    off the bars' grid (bars start at the session's open) are looked for among the rows, so
    minute and 5-minute bars cost no pass over them."""
    dataset = plan.dataset
    every = dataset.trading_dates().astype("datetime64[D]")
    short = every[short_days(dataset, plan.session, every)]
    opened, closed = day_edges(dataset, short)
    start, end = window_edges(dataset, plan.session)
    late = (opened > start) & ((opened - start) % step != 0)
    early = (closed < end) & ((closed - start) % step != 0)
    short, opened, closed = short[late | early], opened[late | early], closed[late | early]
    if not len(short):
        return np.zeros(len(kept), dtype=bool)
    dates = kept["trading_date"].to_numpy().astype("datetime64[D]")
    at = np.clip(np.searchsorted(short, dates), 0, len(short) - 1)
    on_short = short[at] == dates
    day_start = dataset.instrument.trading_day_start_minute
    begins = (kept[MINUTE_OF_DAY].to_numpy().astype(np.int64) - day_start) % MINUTES_PER_DAY
    ends = begins + step
    inside = ((opened[at] > begins) & (opened[at] < ends)) | (
        (closed[at] > begins) & (closed[at] < ends)
    )
    return on_short & inside


def early_close_row_caveat(
    plan: Plan, table: pd.DataFrame | None, seen: np.ndarray | None = None
) -> list[str]:
    """A table of intraday bars that lists a bar a short session cut: "2024-11-29 closed
    early, at 13:15 ET: its 12:30 bar is 45 minutes (12:30-13:15), the others an hour." The
    day after Thanksgiving's hourly RTH bars were listed with that bar as a normal one (range
    16.75, volume 55,189), and "the quietest hour" read it beside full ones (p47e M2). Said
    of every row, naming up to ``NAMED_DAYS`` of their days. ``seen`` marks the rows the
    model is shown of a table too long to show whole (None: all of them): those are named
    first, and how many of the cut bars it saw is said. ES's RTH hours of November and
    December 2024 named Thanksgiving's and the day after's "and 1 more listed day like it",
    none of them among the 10 rows shown. Over all the rows, not the first 50,000 kept for
    display: the last 5 shown lie past them, and ES's ETH hours by range (106,422 rows)
    read "None of these 57 bars is among the 5 rows shown" (r48c #4)."""
    step = plan.timeframe.minutes
    if step is None or table is None or not len(table):
        return []
    if plan.dataset.instrument.session(plan.session).zone is not None:  # another day's edges
        return []
    if "timestamp" not in table.columns or "trading_date" not in table.columns:
        return []
    # Each row's minute of the day with numpy: pandas' .dt.hour and .dt.minute took 0.17 s
    # of ES's 6.4 million ETH minute bars, listed whole.
    stamps = pd.to_datetime(table["timestamp"], errors="coerce").to_numpy("datetime64[m]")
    minutes = (stamps - stamps.astype("datetime64[D]")).astype(np.int64)
    minutes[np.isnat(stamps)] = -1
    rows = pd.DataFrame({"trading_date": table["trading_date"].to_numpy(), MINUTE_OF_DAY: minutes})
    cut = cut_bars(plan, rows, step)
    if not cut.any():
        return []
    first = np.ones(len(rows), dtype=bool) if seen is None else seen
    order = np.concatenate([np.flatnonzero(cut & first), np.flatnonzero(cut & ~first)])
    listed = rows.iloc[order]
    days = listed["trading_date"].to_numpy().astype("datetime64[D]")
    opened, closed = day_edges(plan.dataset, days)
    day_start = plan.dataset.instrument.trading_day_start_minute
    begins = (listed[MINUTE_OF_DAY].to_numpy().astype(np.int64) - day_start) % MINUTES_PER_DAY
    zone = short_name(plan.dataset.instrument.timezone)
    start, end = window_edges(plan.dataset, plan.session)
    parts, named = [], []
    for day, begin, opened_at, last in zip(days, begins, opened, closed, strict=True):
        if len(named) == NAMED_DAYS and day not in named:
            continue
        held_from, held_to = max(begin, opened_at), min(begin + step, last)
        bar = (
            f"its {close_clock(plan.dataset, begin)} bar is {length_text(held_to - held_from)} "
            f"({close_clock(plan.dataset, held_from)}-{close_clock(plan.dataset, held_to)})"
        )
        if day in named:
            parts[-1] += f", {bar.removeprefix('its ')}"
            continue
        named.append(day)
        edges = []
        if opened_at > start:
            edges.append(f"opened late, at {close_clock(plan.dataset, opened_at)} {zone}")
        if last < end and start == 0 and bool(us_market_closed(np.array([day]))[0]):
            # ETH: the holiday's Globex session is cut by its holiday halt, the stock
            # market shut all day; RTH's 09:30-13:00 is a half day, an early close.
            edges.append(
                f"was a US holiday (stocks shut), trading halted at "
                f"{close_clock(plan.dataset, last)} {zone}"
            )
        elif last < end:
            edges.append(f"closed early, at {close_clock(plan.dataset, last)} {zone}")
        parts.append(f"{day} {' and '.join(edges)}: {bar}")
    more = len(np.unique(days)) - len(named)
    bars, on_view = int(cut.sum()), int((cut & first).sum())
    if on_view == bars:  # every one among the rows shown
        tail = f"; {more} more listed day{'s' if more > 1 else ''} like it" if more > 0 else ""
        return ["; ".join(parts) + f", the others {length_text(step)}{tail}."]
    tail = f"; {more} more day{'s' if more > 1 else ''} like it" if more > 0 else ""
    among = (
        f"{on_view or 'None'} of {'these' if bars > 1 else 'this'} {bars} "
        f"bar{'s' if bars > 1 else ''} {'is' if on_view <= 1 else 'are'} among the "
        f"{int(first.sum())} rows shown, of {len(rows):,}"
    )
    return ["; ".join(parts) + f", the others {length_text(step)}{tail}. {among}."]


def _text(
    plan: Plan,
    values: object,
    group: pd.DataFrame,
    shifts: dict[tuple[str, str], float],
    others: int,
) -> str:
    parts = values if isinstance(values, tuple) else (values,)
    label = ", ".join(value_text(part) for part in parts)
    cut = group[group["cut"]]
    first = cut.iloc[0]
    day = str(np.datetime64(first["trading_date"], "D"))
    _, closed = day_edges(plan.dataset, np.array([day], dtype="datetime64[D]"))
    start = plan.dataset.instrument.trading_day_start_minute
    clock = format_clock((int(closed[0]) + start) % MINUTES_PER_DAY)
    moved = "without them " + ", ".join(
        f"its {statistic} {m} {shift * 100:+.1f}%"
        for (m, statistic), shift in shifts.items()
        if statistic != "sum"
    )
    totals = [
        # The total as it is against the total of as many whole bars: 1 / (1 + shift) - 1.
        f"its total {m} is {abs(1 / (1 + shift) - 1) * 100:.1f}% "
        f"{'under' if shift > 0 else 'over'} what as many whole bars would sum to"
        for (m, statistic), shift in shifts.items()
        if statistic == "sum"
    ]
    moved = "; ".join([*([moved] if len(totals) < len(shifts) else []), *totals])
    more = f" ({others} more group{'s' if others > 1 else ''} like it)" if others else ""
    return (
        f"The {label} group holds {len(cut)} bar{'s' if len(cut) > 1 else ''} that a holiday "
        f"or early close cut short (e.g. {day}, closed at {clock}) among its {len(group):,}: "
        f"{moved}{more}. "
        '"where": "not holiday() and not early_close()" leaves those days out.'
    )


def _mostly_text(
    plan: Plan,
    kept: pd.DataFrame,
    values: object,
    group: pd.DataFrame,
    step: int,
    others: int,
) -> str:
    """'In the 13:00 group, 23 of its 23 bars were cut short by an early close or holiday
    (13:00-13:15 on 23, e.g. 2015-11-27), where the other bars are half an hour: their volume
    and range cover fewer minutes than the other groups'. Per minute it traded 489 contracts,
    against 496 in the 12:30 bars of the same days; on "from": "15m" no bar is cut.'"""
    parts = values if isinstance(values, tuple) else (values,)
    keys = [name for name, _ in plan.first.group_keys]
    # A time of day reads alone ("13:00"), a number with its key's name ("hour 13").
    label = ", ".join(
        value_text(part) if isinstance(part, str) else f"{key} {value_text(part)}"
        for key, part in zip(keys, parts, strict=False)
    )
    cut = group[group["cut"]]
    held, last = _spans(plan, cut, step)
    more = f" ({others} more group{'s' if others > 1 else ''} like it)" if others else ""
    text = (
        f"In the {label} group, {len(cut):,} of its {len(group):,} bars were cut short by an "
        f"early close or holiday ({held}), where the other bars are {length_text(step)}: their "
        f"volume and range cover fewer minutes than the other groups'{more}."
    )
    per_minute = _per_minute(plan, kept, group, step, last=last)
    whole = _whole_timeframe(plan, cut, step)
    if whole is not None:
        form = f'on "from": "{whole}" no bar is cut'
    else:
        form = 'compare volume per minute: sum(volume) / count() on "from": "1m"'
    return f"{text} {per_minute}{form}." if per_minute else f"{text} To compare, {form}."


def _per_minute(
    plan: Plan, kept: pd.DataFrame, group: pd.DataFrame, step: int, *, last: bool
) -> str:
    """'Per minute it traded 489 contracts, against 496 in the 12:30 bars of the same days; ':
    the group's volume over the minutes its bars traded, and the same of the bars beside them
    (before a bar cut at the close, after one cut at a late open) on the group's dates."""
    held = bar_minutes(plan, group, step)
    if not held.sum():
        return ""
    own = float(group["volume"].sum() / held.sum())
    said = f"Per minute it traded {_volume_text(own)} contracts"
    begin = int(group.loc[group["cut"], MINUTE_OF_DAY].iloc[0])
    beside = (begin - step if last else begin + step) % MINUTES_PER_DAY
    dates = group["trading_date"].unique()
    rows = kept[(kept[MINUTE_OF_DAY] == beside) & kept["trading_date"].isin(dates)]
    minutes = bar_minutes(plan, rows, step) if len(rows) else np.zeros(1)
    if not minutes.sum():
        return f"{said}; "
    other = float(rows["volume"].sum() / minutes.sum())
    return (
        f"{said}, against {_volume_text(other)} in the {format_clock(beside)} bars of the "
        f"same days; "
    )


def bar_minutes(plan: Plan, rows: pd.DataFrame, step: int) -> np.ndarray:
    """The minutes of trading each bar of ``rows`` (trading_date, minute of the day it opens)
    spans: ``step``, less what the session's end or its day's late open or early close leave
    out (NQ's 30-minute 13:00 bar on a 13:15 close: 15)."""
    days = rows["trading_date"].to_numpy().astype("datetime64[D]")
    opened, closed = day_edges(plan.dataset, days)
    start, end = window_edges(plan.dataset, plan.session)
    day_start = plan.dataset.instrument.trading_day_start_minute
    begins = (rows[MINUTE_OF_DAY].to_numpy().astype(np.int64) - day_start) % MINUTES_PER_DAY
    first = np.maximum(begins, np.maximum(opened, start))
    ends = np.minimum(begins + step, np.minimum(closed, end))
    return np.clip(ends - first, 0, None)


def _whole_timeframe(plan: Plan, cut: pd.DataFrame, step: int) -> str | None:
    """The longest intraday timeframe shorter than ``step`` whose bars fit in it and end on
    every cut day's close inside the session and start at its late open (a 13:15 close: 15m);
    None when only 1m does."""
    days = cut["trading_date"].to_numpy().astype("datetime64[D]")
    opened, closed = day_edges(plan.dataset, days)
    start, end = window_edges(plan.dataset, plan.session)
    edges = np.concatenate([opened[opened > start], closed[closed < end]]) - start
    return finest_fit(step, edges.tolist())


def _volume_text(value: float) -> str:
    """``489``, ``1,652``, ``3.4``."""
    return f"{value:,.0f}" if value >= 10 else two_digits(value)


def _spans(plan: Plan, cut: pd.DataFrame, step: int) -> tuple[str, bool]:
    """The windows the ``cut`` bars (trading_date, minute of the day they open) traded,
    commonest first ('12:30-13:00 on 22, e.g. 2014-05-26; 12:30-13:15 on 10, e.g.
    2008-11-28'), and whether each ends at its day's close (not cut by a late open)."""
    days = cut["trading_date"].to_numpy().astype("datetime64[D]")
    opened, closed = day_edges(plan.dataset, days)
    day_start = plan.dataset.instrument.trading_day_start_minute
    begins = (cut[MINUTE_OF_DAY].to_numpy().astype(np.int64) - day_start) % MINUTES_PER_DAY
    ends = np.minimum(begins + step, closed)
    spans: dict[str, list[str]] = {}
    for begin, end, day in zip(np.maximum(begins, opened), ends, days, strict=True):
        window = f"{format_clock((begin + day_start) % MINUTES_PER_DAY)}-"
        spans.setdefault(window + format_clock((end + day_start) % MINUTES_PER_DAY), []).append(
            str(day)
        )
    ranked = sorted(spans.items(), key=lambda item: -len(item[1]))
    held = "; ".join(f"{window} on {len(on)}, e.g. {on[0]}" for window, on in ranked)
    return held, bool((ends == closed).all())


def early_close_pick_caveat(
    plan: Plan, picks: pd.DataFrame | None, passed: np.ndarray | None
) -> list[str]:
    """A second stage grouping the times of day a first stage picked per date(): "on half
    days, which hour makes the high" as arg_max(time(), high) as t by date(), then group_by
    t, counted NQ's 12:30 bar on 32 of 155 days, where that bar ran 12:30-13:15 (13:00 on
    holiday sessions), the day's last, beside full hours (p32c #26). Said of the group whose
    picked bars were mostly cut short: there the label names a bar of another length; where
    they are a few of its days (32 of the 342 days of all history), it is the hour's.

    ``picks`` is the first stage's table, ``passed`` the rows of it the second stage's where
    kept (None: all)."""
    step = plan.timeframe.minutes
    then = plan.then
    if step is None or then is None or not then.group_keys or picks is None or not len(picks):
        return []
    day_key = _date_key(plan)
    if day_key is None or day_key not in picks.columns:
        return []
    rows = picks if passed is None else picks[passed]
    query = plan.query.to_json()
    for key, _ in then.group_keys:
        starts = _bar_starts(plan, rows, key, query) if key in rows.columns else None
        if starts is None:
            continue
        bars = pd.DataFrame(
            {
                "trading_date": pd.to_datetime(rows[day_key]).to_numpy(),
                MINUTE_OF_DAY: starts,
                "key": rows[key].to_numpy(),
            }
        ).dropna()
        if not len(bars):
            continue
        bars["cut"] = cut_bars(plan, bars, step)
        counts = bars.groupby("key", sort=False, observed=True)["cut"].agg(["size", "sum"])
        mostly = counts[counts["sum"] * 2 > counts["size"]]
        if len(mostly):
            value = mostly["sum"].idxmax()
            group = bars[bars["key"] == value]
            # Mostly short days: the query chose them, and has no others to compare with.
            dates = bars["trading_date"].to_numpy().astype("datetime64[D]")
            chosen = bool(short_days(plan.dataset, plan.session, dates).mean() >= 0.5)
            return [_pick_text(plan, key, value, group, step, len(mostly) - 1, chosen)]
    return []


def _date_key(plan: Plan) -> str | None:
    """The first stage's group key that is date() (through its map): one row per day."""
    mapped = dict(plan.first.map_exprs)
    for name, expr in plan.first.group_keys:
        expr = through_map(expr, mapped)
        if isinstance(expr, ast.Call) and expr.name.lower() == "date" and not expr.args:
            return name
    return None


def _bar_starts(plan: Plan, rows: pd.DataFrame, key: str, query: dict) -> np.ndarray | None:
    """The minute of the day each row's picked bar starts at, when ``key`` holds a time of
    day (time()'s '12:30', a minute of the day) or an hour that holds one bar (hour() of
    hourly bars from 09:30: 12 is the bar from 12:30); else None."""
    column = rows[key]
    minutes = minutes_of_day(key, column, query)
    if minutes is None or clock_kind(key, column, query) != "hour":
        return minutes
    step = plan.timeframe.minutes or 0
    if step < 60:
        return None  # an hour of 5m bars holds twelve: which one was picked is not known
    spec = plan.dataset.instrument.session(plan.session)
    if spec.zone is not None:  # a window on another clock is other exchange hours on other dates
        return None
    count = -(-spec.length_minutes // step)
    grid = ((spec.start_minute + k * step) % MINUTES_PER_DAY for k in range(count))
    by_hour = {start // 60: start for start in grid}
    return np.array([by_hour.get(int(m) // 60, np.nan) if m == m else np.nan for m in minutes])


def _pick_text(
    plan: Plan,
    key: str,
    value: object,
    group: pd.DataFrame,
    step: int,
    others: int,
    chosen: bool,
) -> str:
    """'The 12:30 bar was cut short by an early close or holiday on 32 of the 32 days in its
    group (12:30-13:00 on 22, e.g. 2014-05-26; 12:30-13:15 on 10, e.g. 2008-11-28), the
    last bar of those days, where the others are an hour: its counts and sums are not
    comparable with theirs.'"""
    cut = group[group["cut"]]
    held, at_close = _spans(plan, cut, step)
    start = format_clock(int(group[MINUTE_OF_DAY].iloc[0]))
    bar = start if isinstance(value, str) else f"{start} bar ({key} {value_text(value)})"
    bar = f"{bar} bar" if isinstance(value, str) else bar
    last = " the last bar of those days," if at_close else ""
    more = f" ({others} more group{'s' if others > 1 else ''} like it)" if others else ""
    text = (
        f"The {bar} was cut short by an early close or holiday on {len(cut)} of the "
        f"{len(group)} days in its group ({held}),{last} where the others are "
        f"{length_text(step)}: its counts and sums are not comparable with theirs{more}."
    )
    if chosen:
        return text
    return f'{text} "where": "not holiday() and not early_close()" leaves those days out.'
