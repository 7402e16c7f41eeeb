"""A window on another zone's clock that falls, on some dates, into the exchange's daily break.

'00:00-01:00 Europe/Moscow' is 16:00-17:00 ET in the US winter and 17:00-18:00 ET, NQ's
maintenance break, in the summer: the summer dates have no bar at all, and a window that
reaches into the break on some dates holds only part of its hours there. Neither shows in
the numbers, so it is said, with the count of dates and the exchange hours it was on them.

GMT, as a window's zone or a clock function's (hour('GMT')), is said too: it is UTC all
year, not the UK's clock that traders mean by "the London open, 08:00 GMT".
"""

from __future__ import annotations

import datetime as dt
from collections import Counter

import numpy as np
import pandas as pd

from barb.instruments import MINUTES_PER_DAY, Instrument, SessionSpec, format_clock
from barb.planning import Plan
from barb.script.ast import literal_value
from barb.summary_text import listed_text
from barb.time_zones import home_times, short_name

# The functions whose first argument may be a window on another clock.
_SESSION_FUNCTIONS = frozenset(
    f"session_{part}" for part in ("open", "high", "low", "close", "volume")
)
# The functions that read a bar's open on the clock their argument names.
_CLOCK_FUNCTIONS = frozenset({"hour", "minute", "time"})


def zone_window_caveat(plan: Plan, covered: tuple[dt.date | None, dt.date | None]) -> list[str]:
    """For each window on another zone's clock the query reads (its session, or a
    session_open('08:00-09:00 London')), the dates of the period on which it lay wholly or
    partly outside the exchange's trading hours."""
    instrument = plan.dataset.instrument
    # The zoned windows and GMT clocks first, from the query alone: most queries name
    # none, and the period's dates are not read for them.
    zoned = [(text, instrument.session(text)) for text in _zoned_texts(plan)]
    zoned = [(text, spec) for text, spec in zoned if spec.zone is not None]
    gmt_calls = _gmt_clock_calls(plan)
    if not zoned and not gmt_calls:
        return []
    dates = period_dates(plan, covered)
    if not len(dates):
        return []
    warnings = []
    for text, spec in zoned:
        main = text == plan.session
        said = _fit_text(instrument, spec, dates, main)
        if said:
            warnings.append(said)
        # The session as written: its name resolved says UTC for GMT.
        warnings += _gmt_caveat((plan.query.session or text) if main else text, spec, dates)
    if gmt_calls:
        warnings += _gmt_clock_caveat(gmt_calls, dates)
    return warnings


def _gmt_caveat(text: str, spec: SessionSpec, dates: np.ndarray) -> list[str]:
    """'08:00-09:00 GMT' is UTC all year (the tz database's GMT), but traders say "the
    London open, 08:00 GMT" of the UK's clock, an hour ahead of UTC in British Summer
    Time: on those dates the window is the hour after the one they meant."""
    if text.strip().rsplit(" ", 1)[-1].upper() != "GMT":
        return []
    summer = _british_summer(dates)
    if not summer:
        return []
    start = spec.start_minute + 60
    later = f"{format_clock(start)}-{format_clock(start + spec.length_minutes)}"
    return [
        f"'{text.strip()}' reads GMT as UTC all year; the UK's clock (BST) is an hour ahead of "
        f"it on {summer:,} of the {len(dates):,} dates, so there the window is "
        f"{later} London time. For the UK's clock: '{spec.hours} London'."
    ]


def _gmt_clock_caveat(calls: list[str], dates: np.ndarray) -> list[str]:
    """hour('GMT') reads UTC's clock all year, as a GMT window does: on the dates of
    British Summer Time the UK's 08:00 is 07:00 there, so "volume by London hour" puts
    the London open's bars in two hours."""
    summer = _british_summer(dates)
    if not summer:
        return []
    written = listed_text([f"{name}('{zone}')" for name, zone in calls])
    london = listed_text([f"{name}('London')" for name in dict.fromkeys(n for n, _ in calls)])
    return [
        f"{written} reads GMT as UTC all year; the UK's clock (BST) is an hour ahead of it "
        f"on {summer:,} of the {len(dates):,} dates, so there it reads an hour less than "
        f"London's clock. For the UK's clock: {london}."
    ]


def _british_summer(dates: np.ndarray) -> int:
    """How many of ``dates`` (datetime64[D]) are in British Summer Time at noon."""
    if not len(dates):
        return 0
    noon = pd.DatetimeIndex(dates.astype("datetime64[ns]")) + pd.Timedelta(hours=12)
    moved = noon.tz_localize("Europe/London").tz_convert("UTC").tz_localize(None) != noon
    return int(np.count_nonzero(moved))


def _gmt_clock_calls(plan: Plan) -> list[tuple[str, str]]:
    """The clock functions the query calls with GMT as their zone, as (name, zone as
    written), each once: [('hour', 'GMT')]."""
    written = _first_texts(plan, _CLOCK_FUNCTIONS)
    return [(name, text) for name, text in written if text.strip().upper() == "GMT"]


def period_dates(plan: Plan, covered: tuple[dt.date | None, dt.date | None]) -> np.ndarray:
    """The instrument's trading dates (its whole day's) in the period, as datetime64[D]."""
    period = plan.period
    first = period.start if period.bars is None and period.start else covered[0]
    last = period.end if period.bars is None and period.end else covered[1]
    dates = plan.dataset.trading_dates().astype("datetime64[D]")
    if first is not None:
        dates = dates[dates >= np.datetime64(first, "D")]
    if last is not None:
        dates = dates[dates <= np.datetime64(last, "D")]
    return dates


def _zoned_texts(plan: Plan) -> list[str]:
    """The session texts the query names that carry a zone: its session and the literal
    windows of its session_*() calls, each once."""
    written = _first_texts(plan, _SESSION_FUNCTIONS)
    texts = [plan.session, *(text for _, text in written if " " in text.strip())]
    return list(dict.fromkeys(texts))


def _first_texts(plan: Plan, functions: frozenset[str]) -> list[tuple[str, str]]:
    """The calls of ``functions`` in the query whose first argument is written text, as
    (function, text), each once: [('session_high', '08:00-09:00 London')]."""
    found = [
        (call.name, value)
        for stage in (plan.first, plan.then)
        if stage is not None and stage.calls & functions
        for call in stage.call_nodes()
        if call.name in functions and call.args
        for value in (literal_value(call.args[0]),)
        if isinstance(value, str)
    ]
    return list(dict.fromkeys(found))


def _fit_text(instrument: Instrument, spec: SessionSpec, dates: np.ndarray, main: bool) -> str:
    """The sentence for one zoned window, or '' when it lay inside the trading hours on
    every date."""
    held, hours = _fit(instrument, spec, dates)
    length = spec.length_minutes
    none, part = held == 0, (held > 0) & (held < length)
    if not none.any() and not part.any():
        return ""
    zone = short_name(instrument.timezone)
    usual = Counter(hours[~none & ~part]).most_common(1)
    pause = instrument.pause_text()
    total = len(dates)
    what = "they have no bar" if main else f"the session_*('{spec.label}') values are missing"
    hours_of = f"{instrument.symbol}'s trading hours ({pause})"
    said = []
    if none.any():
        said.append(
            f"{int(none.sum()):,} ({_first(dates, none)} first) it was {_most(hours, none)} "
            f"{zone}, outside {hours_of}, so {what}"
        )
    if part.any():
        if none.any():
            hours_of = "them"
        said.append(
            f"{int(part.sum()):,} ({_first(dates, part)} first) it was {_most(hours, part)} "
            f"{zone}, partly outside {hours_of}, so those dates hold only part of the window"
        )
    elsewhere = f" On the other dates it is {usual[0][0]} {zone}." if usual else ""
    text = "; on ".join(said)
    return (
        f"The window {spec.label}, read on {instrument.symbol}'s {zone} clock: of {total:,} "
        f"trading dates, on {text}.{elsewhere}"
    )


def _first(dates: np.ndarray, where: np.ndarray) -> str:
    return str(dates[where][0])


def _most(hours: np.ndarray, where: np.ndarray) -> str:
    return Counter(hours[where]).most_common(1)[0][0]


def _fit(
    instrument: Instrument, spec: SessionSpec, dates: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each trading date: the minutes of the window inside that date's trading hours
    (the most any one of its days on the zone's clock gives), and the exchange hours of that
    day's window ('17:00-18:00')."""
    held, starts_at, ends_at = window_stamps(instrument, spec, dates)
    hours = np.array(
        [
            f"{format_clock(_clock(a))}-{format_clock(_clock(b))}"
            for a, b in zip(starts_at, ends_at, strict=True)
        ]
    )
    return held, hours


def window_stamps(
    instrument: Instrument, spec: SessionSpec, dates: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each trading date (datetime64[D]): the minutes of a window on another zone's
    clock inside that date's trading hours, and where that day's window begins and ends on
    the exchange's wall clock (datetime64[m]), of the zone's day that puts the most of it
    there: '23:00-01:00 MSK' on 2024-01-02 is 15:00-17:00 ET that day, 120 minutes."""
    assert spec.zone is not None
    opens, closes = instrument.trading_hours
    span = (closes - opens) % MINUTES_PER_DAY or MINUTES_PER_DAY
    day = np.timedelta64(1, "D")
    minute = np.timedelta64(1, "m")
    # Trading date D runs from the open on the evening before (18:00 on D-1) for ``span``.
    begins = (dates - day).astype("datetime64[m]") + opens * minute
    ends = begins + span * minute
    held = np.zeros(len(dates), dtype=np.int64)
    starts_at = np.zeros(len(dates), dtype="datetime64[m]")
    ends_at = np.zeros(len(dates), dtype="datetime64[m]")
    for back in (-2, -1, 0, 1):  # the zone's calendar days whose window may meet date D
        on = (dates + back * day).astype("datetime64[m]") + spec.start_minute * minute
        start = _home(on, spec.zone, instrument.timezone)
        end = _home(on + spec.length_minutes * minute, spec.zone, instrument.timezone)
        inside = np.minimum(end, ends) - np.maximum(start, begins)
        got = np.maximum(inside // minute, 0)
        # The day of the zone nearest the trading date's own hours: the most held, and
        # among windows wholly outside, the one that begins within the day's 24 hours.
        nearer = (got > held) | (
            (held == 0) & (got == 0) & (start >= begins) & (start < begins + day)
        )
        held = np.where(nearer, got, held)
        starts_at = np.where(nearer, start, starts_at)
        ends_at = np.where(nearer, end, ends_at)
    return held, starts_at, ends_at


def _clock(stamp: np.datetime64) -> int:
    return int((stamp - stamp.astype("datetime64[D]")) // np.timedelta64(1, "m"))


def _home(naive: np.ndarray, zone: str, home: str) -> np.ndarray:
    index = home_times(pd.DatetimeIndex(naive.astype("datetime64[ns]")), zone, home)
    return np.asarray(index, dtype="datetime64[m]")
