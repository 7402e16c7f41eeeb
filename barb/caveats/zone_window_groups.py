"""A window on another zone's clock, grouped by the exchange's clock.

'08:00-16:30 London' lays ES's hourly bars on London's clock: 08:00, 09:00 … 16:00 there.
London is ET + 5 h, except in the weeks the two countries change their clocks apart (Mar 10-
28 and Oct 27-31 of 2025, 20 of 259 dates), when it is ET + 4 h. Grouped by time() (ET, what
a model writes first), the same London bar then lands in two groups: '04:00' held 239
London-09:00 bars and 20 London-08:00 ones, and a '12:00' group held only the 20 London-16:00
bars of those weeks (p47e M1c). Said, with the groups that show it and time('London'), which
names each bar by its start on the window's own clock.

Cost: only for such a window grouped by such a key: one tz-database offset per kept bar.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from barb.frames import MINUTE_OF_DAY
from barb.instruments import format_clock
from barb.lineage import through_map
from barb.planning import Plan
from barb.script import ast
from barb.short_bars import ShortBar, length_text, session_short_bar
from barb.stage_output import StageOutput
from barb.summary_text import listed_text
from barb.time_zones import short_name, zone_shifts

# Exchange-clock keys a bar's time is read from: time() as 'HH:MM', hour() as a number.
_CLOCK_CALLS = frozenset({"time", "hour"})


def zone_window_group_caveat(plan: Plan, first: StageOutput) -> list[str]:
    """For a first stage over a window on another zone's clock, grouped by the exchange's
    time() or hour(), when that zone's offset from the exchange changes over the kept bars'
    dates: "'08:00-16:30 Europe/London' lays the bars on London's clock, ET + 5 h on 239 of
    the 259 dates and ET + 4 h on the other 20, so time()'s groups mix its bars: '04:00' is
    its 09:00 bar on 239 dates and its 08:00 bar on 20; '12:00' holds its 16:00 bar (half an
    hour) on 20 dates only. "group_by": "time('London')" names each bar by its start there."""
    window = plan.dataset.instrument.session(plan.session)
    if window.zone is None or plan.then is not None or not plan.timeframe.intraday:
        return []
    key = _exchange_clock_key(plan)
    rows = first.kept
    if key is None or rows is None or not len(rows) or MINUTE_OF_DAY not in rows.columns:
        return []
    name, call = key
    if name not in rows.columns:
        return []
    home = plan.dataset.instrument.timezone
    stamps = rows["timestamp"].to_numpy(dtype="datetime64[ns]")
    shifts = zone_shifts(stamps, home, window.zone)
    dates = rows["trading_date"].to_numpy()
    offsets = Counter(
        pd.DataFrame({"date": dates, "shift": shifts}).drop_duplicates("date")["shift"].tolist()
    ).most_common()
    if len(offsets) < 2:
        return []
    there = (rows[MINUTE_OF_DAY].to_numpy(dtype=np.int64) + shifts) % (24 * 60)
    bars = pd.DataFrame({"key": rows[name].to_numpy(), "there": there, "date": dates})
    held = bars.groupby(["key", "there"], observed=True)["date"].nunique()
    # The zone as the session wrote it ('London'), for the call that reads its clock.
    written = str(plan.query.session or window.zone).split()[-1]
    short = session_short_bar(plan.timeframe.name, window.hours, window.zone)
    return [_text(plan, written, call, offsets, held, short)]


def _exchange_clock_key(plan: Plan) -> tuple[str, str] | None:
    """The first stage's first group key that is the exchange's time() or hour(), through
    the map: ("time", "time()")."""
    mapped = dict(plan.first.map_exprs)
    for name, key in plan.first.group_keys:
        expr = through_map(key, mapped)
        if isinstance(expr, ast.Call) and expr.name.lower() in _CLOCK_CALLS and not expr.args:
            return name, f"{expr.name.lower()}()"
    return None


def _text(
    plan: Plan,
    written: str,
    call: str,
    offsets: list[tuple[int, int]],
    held: pd.Series,
    short: ShortBar | None,
) -> str:
    home = short_name(plan.dataset.instrument.timezone)
    total = sum(count for _, count in offsets)
    spans = [f"{home} {_offset(shift)} on {count:,}" for shift, count in offsets]
    spans[0] += f" of the {total:,} dates"
    spans[-1] = spans[-1].replace(" on ", " on the other ", 1) if len(spans) == 2 else spans[-1]
    said = (
        f"'{plan.session}' lays the bars on {written}'s clock, {listed_text(spans)}, so {call}'s "
        "groups mix its bars"
    )
    per_key: dict[object, list[tuple[int, int]]] = {}
    for (key, minute), count in held.items():
        per_key.setdefault(key, []).append((int(minute), int(count)))
    mixed = next((k for k, bars in per_key.items() if len(bars) > 1), None)
    parts = []
    if mixed is not None:
        bars = sorted(per_key[mixed], key=lambda b: -b[1])
        listed = [f"its {_bar(m, short)} on {n:,}" for m, n in bars]
        listed[0] += " dates"
        parts.append(f"{_key(mixed)} is {listed_text(listed)}")
    # A group only the rarer offsets' dates fill: the bars of those weeks alone.
    few = offsets[0][1]
    alone = [k for k, bars in per_key.items() if len(bars) == 1 and bars[0][1] < few]
    for key in alone[:1]:
        ((minute, count),) = per_key[key]
        parts.append(f"{_key(key)} holds its {_bar(minute, short)} on {count:,} dates only")
    if parts:
        said += ": " + "; ".join(parts)
    own = f"{call[:-1]}'{written}')"  # time('London')
    return f'{said}. "group_by": "{own}" names each bar by its start on the window\'s clock.'


def _bar(minute: int, short: ShortBar | None) -> str:
    """'09:00 bar'; the window's short last bar with its length: '16:00 bar (half an hour)'."""
    if short is not None and minute == short.start:
        return f"{format_clock(minute)} bar ({length_text(short.minutes)})"
    return f"{format_clock(minute)} bar"


def _key(value: object) -> str:
    """A group key as the table lists it, a time of day quoted: '04:00', 4."""
    return f"'{value}'" if isinstance(value, str) else str(value)


def _offset(shift: int) -> str:
    """'+ 5 h', '- 3 h', '+ 5 h 30 min'."""
    sign = "+" if shift >= 0 else "-"
    hours, minutes = divmod(abs(int(shift)), 60)
    return f"{sign} {hours} h" + (f" {minutes} min" if minutes else "")
