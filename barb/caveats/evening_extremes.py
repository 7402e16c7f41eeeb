"""A full-day daily extreme made on the evening before its trading date.

The full session (NQ's ETH, 18:00-17:00) opens the evening before the date it counts for, so
"when was NQ's 2021 high?" answered 16721 "on 2021-12-22" with no word, though it was made
at 19:50 ET on calendar day 2021-12-21: a trader who checks a calendar-day chart or a broker
statement for 2021-12-22 will not find it (p47g q33). And "NQ's high on 2021-12-21" read
16668.5, that trading date's, with nothing said of the evening of the 21st, which counts for
the 22nd and went to 16721 (q34). The yearly RTH-extreme warning already says the calendar
day and clock (``barb.caveats.full_days``); these say it of the full day's own extremes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.caveats.sessions import session_clock
from barb.instruments import format_clock
from barb.lineage import through_map
from barb.planning import Plan
from barb.script import ast
from barb.stage_output import query_columns
from barb.summary_text import value_text

# The bar prices whose extreme an answer names a date for, by the side it takes.
_SIDE_OF = {"high": "max", "low": "min"}
_ARG_SIDE = {"arg_max": "max", "arg_min": "min"}


def evening_extreme_caveat(plan: Plan, kept: pd.DataFrame | None) -> list[str]:
    """The sentence for the first stage's arg_max(date(), high) (arg_min of low), or the
    first row of a listing ranked by high (low), over daily bars of a session that opens the
    evening before its date, when the extreme's own minute bar is on that evening: '16721 on
    2021-12-22 was made 2021-12-21 at 19:50 ET, the evening session that counts for
    2021-12-22.' Nothing when the day's extreme came after midnight."""
    if plan.timeframe.name != "daily" or plan.then is not None or kept is None or not len(kept):
        return []
    if "trading_date" not in kept.columns or not _opens_the_evening_before(plan):
        return []
    found = _answered_extremes(plan, kept)
    warnings = []
    for side, column in found:
        values = kept[column].to_numpy(dtype=float)
        if np.isnan(values).all():
            continue
        # The answer's row: a ranking's first, the extreme among the rows it lists.
        row = int(np.nanargmax(values) if side == "max" else np.nanargmin(values))
        date = np.datetime64(kept["trading_date"].to_numpy()[row], "D")
        stamp = _extreme_bar(plan, date, column, side)
        if stamp is None or f"{stamp:%Y-%m-%d}" == str(date):
            continue
        clock = session_clock(plan)
        at = f"{format_clock(stamp.hour * 60 + stamp.minute)}{f' {clock}' if clock else ''}"
        warnings.append(
            f"{value_text(values[row])} on {date} was made {stamp:%Y-%m-%d} at {at}, the "
            f"evening session that counts for {date}."
        )
    return warnings


def evening_after_caveat(plan: Plan, kept: pd.DataFrame | None) -> list[str]:
    """For a one-day period on such a session, whose listed high (low) the evening of that
    calendar day passed: those bars count for the next trading date. "NQ's high on
    2021-12-21" read 16668.5; the evening of 2021-12-21 went to 16721 at 19:50."""
    period = plan.period
    if plan.timeframe.name != "daily" or plan.then is not None or kept is None or len(kept) != 1:
        return []
    if period.start is None or period.start != period.end or period.bars is not None:
        return []
    if not _opens_the_evening_before(plan):
        return []
    mapped = dict(plan.first.map_exprs)
    exprs = {item.name: item.expr for item in plan.first.select}
    values = [through_map(exprs.get(n, ast.Column(n)), mapped) for n in query_columns(plan.first)]
    listed = {value.name for value in values if isinstance(value, ast.Column)}
    if not plan.first.select:  # the bar itself is listed
        listed |= set(_SIDE_OF)
    minutes = plan.dataset.bars.frame
    day = np.datetime64(period.start, "D")
    dates = minutes["trading_date"].to_numpy().astype("datetime64[D]")
    later = dates > day
    if not later.any():
        return []
    after = dates[int(np.argmax(later))]
    lo, hi = int(np.searchsorted(dates, after, "left")), int(np.searchsorted(dates, after, "right"))
    stamps = pd.DatetimeIndex(minutes["timestamp"].to_numpy()[lo:hi])
    evening = np.flatnonzero(stamps.normalize() == pd.Timestamp(day))
    if not len(evening):
        return []
    opens = f"{stamps[evening[0]]:%H:%M}"
    clock = session_clock(plan)
    for column, side in _SIDE_OF.items():
        if column not in listed or column not in kept.columns:
            continue
        values = minutes[column].to_numpy()[lo:hi][evening].astype(float)
        at = int(np.argmax(values) if side == "max" else np.argmin(values))
        level, own = float(values[at]), float(kept[column].iloc[0])
        if not (level > own if side == "max" else level < own):
            continue
        stamp = stamps[evening[at]]
        when = f"{format_clock(stamp.hour * 60 + stamp.minute)}{f' {clock}' if clock else ''}"
        went = "higher" if side == "max" else "lower"
        return [
            f"{column} is trading date {day}'s, which began the evening before; the evening of "
            f"{day} from {opens} counts for {after} and went {went}, to {value_text(level)} at "
            f'{when} (that evening alone: "session": "{opens}-00:00", "period": "{after}").'
        ]
    return []


def _opens_the_evening_before(plan: Plan) -> bool:
    """Whether the query's session is the full day and starts the evening before its date
    (ETH 18:00-17:00): its minutes are all of the trading date's, which the extremes read."""
    instrument = plan.dataset.instrument
    if plan.session != instrument.full_session:
        return False
    spec = instrument.session(plan.session)
    start, end = (int(h) * 60 + int(m) for h, m in (t.split(":") for t in (spec.start, spec.end)))
    return start > end


def _answered_extremes(plan: Plan, kept: pd.DataFrame) -> list[tuple[str, str]]:
    """[("max", "high")] for arg_max(date(), high) selected, or a listing whose first sort
    key is high descending (low ascending: "min", "low"); a one-day listing's high and low
    listed; [] otherwise."""
    stage = plan.first
    mapped = dict(stage.map_exprs) | dict(stage.hoisted)
    if stage.shape == "table":
        exprs = {item.name: item.expr for item in stage.select}
        names = query_columns(stage) if stage.select or stage.map_exprs else list(_SIDE_OF)
        listed = [through_map(exprs.get(n, ast.Column(n)), mapped) for n in names]
        prices = [v.name for v in listed if isinstance(v, ast.Column) and v.name in _SIDE_OF]
        prices = [name for name in dict.fromkeys(prices) if name in kept.columns]
        if len(kept) == 1:
            return [(_SIDE_OF[name], name) for name in prices]
        if not stage.sort:
            return []
        key = stage.sort[0]
        value = through_map(ast.Column(key.column), mapped)
        if not isinstance(value, ast.Column) or value.name not in _SIDE_OF:
            return []
        side = _SIDE_OF[value.name]
        ranked = key.descending == (side == "max") and value.name in kept.columns
        return [(side, value.name)] if ranked else []
    for item in stage.select:
        expr = item.expr
        if not isinstance(expr, ast.Call) or len(expr.args) != 2:
            continue
        side = _ARG_SIDE.get(expr.name.lower())
        value = through_map(expr.args[1], mapped)
        dated = through_map(expr.args[0], mapped)
        if side is None or not isinstance(value, ast.Column) or _SIDE_OF.get(value.name) != side:
            continue
        if isinstance(dated, ast.Call) and dated.name.lower() == "date" and not dated.args:
            return [(side, value.name)] if value.name in kept.columns else []
    return []


def _extreme_bar(plan: Plan, date: np.datetime64, column: str, side: str) -> pd.Timestamp | None:
    """The first minute bar of trading date ``date`` at its high (low)."""
    minutes = plan.dataset.bars.frame
    held = minutes["trading_date"].to_numpy()
    lo = int(np.searchsorted(held, date, side="left"))
    hi = int(np.searchsorted(held, date, side="right"))
    if hi <= lo:
        return None
    values = minutes[column].to_numpy()[lo:hi]
    at = lo + int(np.argmax(values) if side == "max" else np.argmin(values))
    return pd.Timestamp(minutes["timestamp"].to_numpy()[at])
