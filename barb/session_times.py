"""The times of day the model's texts name, read from one instrument's sessions.

NQ's RTH opens at 09:30 and closes at 17:00, CL's at 09:00 and 14:30: a text that calls
'09:30-09:45' the opening range is right for one and sends a model to the wrong window on the
other. So the reference, the session concepts and the examples write times as placeholders
(``$opening_range``, ``$close``, ``$RTH_CLOSE``…) that are filled here from the instrument's
default session and its other sessions, never typed in by hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from string import Template
from typing import Any

from barb.instruments import (
    MINUTES_PER_DAY,
    Instrument,
    SettlementWindow,
    format_clock,
    load_instrument,
)

# What traders call "the opening range" unless they say otherwise: the first 15 minutes.
OPENING_RANGE_MINUTES = 15


def _window(start: int, end: int) -> str:
    return f"{format_clock(start)}-{format_clock(end)}"


def _duration(minutes: int) -> str:
    """How long a short bar lasts, in words: 'half an hour', '45 minutes'."""
    return "half an hour" if minutes == 30 else f"{minutes} minutes"


@dataclass(frozen=True)
class SessionTimes:
    """The times of an instrument's default session (RTH) that the texts speak of."""

    instrument: Instrument

    @property
    def session(self) -> str:
        return self.instrument.default_session

    @property
    def _start(self) -> int:
        return self.instrument.sessions[self.session].start_minute

    @property
    def _length(self) -> int:
        return self.instrument.sessions[self.session].length_minutes

    def _at(self, offset: int) -> int:
        """The clock minute ``offset`` minutes after the session open."""
        return (self._start + offset) % MINUTES_PER_DAY

    def _span(self, offset: int, minutes: int) -> str:
        """The window of ``minutes`` from ``offset`` after the open, cut at the session close."""
        return _window(self._at(offset), self._at(min(offset + minutes, self._length)))

    @property
    def open(self) -> str:
        return format_clock(self._start)

    @property
    def close(self) -> str:
        return format_clock(self._at(self._length))

    @property
    def opening_range(self) -> str:
        return self._span(0, OPENING_RANGE_MINUTES)

    @property
    def hourly_offsets(self) -> range:
        """Where the session's hourly bars start, in minutes after its open (they are aligned
        to the open, and the last one stops at the close)."""
        return range(0, self._length, 60)

    @property
    def hourly_starts(self) -> tuple[str, ...]:
        return tuple(format_clock(self._at(offset)) for offset in self.hourly_offsets)

    def hourly_bar(self, index: int) -> str:
        """The window of the session's ``index``-th hourly bar ('09:30-10:30'; -1: the last)."""
        return self._span(self.hourly_offsets[index], 60)

    @property
    def last_bar_minutes(self) -> int:
        return self._length - self.hourly_offsets[-1]

    @property
    def last_bar_note(self) -> str:
        """' (the last one 14:00-14:30, half an hour)' when the last hourly bar is short."""
        if self.last_bar_minutes == 60:
            return ""
        return f" (the last one {self.hourly_bar(-1)}, {_duration(self.last_bar_minutes)})"

    def _listed(self, items: list[str]) -> str:
        """Three or more as 'first, second … last', fewer in full."""
        if len(items) <= 3:
            return ", ".join(items)
        return f"{items[0]}, {items[1]} … {items[-1]}"

    @property
    def hourly_bars(self) -> str:
        """'09:30, 10:30 … 16:30 (the last one 16:30-17:00, half an hour)'."""
        return self._listed(list(self.hourly_starts)) + self.last_bar_note

    @property
    def hourly_windows(self) -> str:
        """'09:30-10:30, 10:30-11:30 … 16:30-17:00 (half an hour)'."""
        windows = [self.hourly_bar(i) for i in range(len(self.hourly_offsets))]
        short = self.last_bar_minutes != 60
        return self._listed(windows) + (f" ({_duration(self.last_bar_minutes)})" if short else "")

    @property
    def hour_note(self) -> str:
        """Why time() and not hour(): said only where they differ, on a half-past open."""
        if self._start % 60 == 0:
            return ""
        return f", where hour() would call the {self.open} bar {self._start // 60}"

    @property
    def day_end(self) -> str:
        """Where the trading day stops: the maintenance break, else the next day's open."""
        brk = self.instrument.maintenance_break
        return brk.start if brk is not None else self.instrument.trading_day_start

    @property
    def day_break(self) -> str:
        brk = self.instrument.maintenance_break
        return f"{brk.start}-{brk.end}" if brk is not None else "overnight"

    def values(self) -> dict[str, str]:
        """Every placeholder a text may use, by name."""
        named: dict[str, str] = {}
        for name, spec in self.instrument.sessions.items():
            named |= {name: spec.hours, f"{name}_start": spec.start, f"{name}_end": spec.end}
            # Its last hour (the whole session when shorter): CASH's is the power hour.
            last = max(spec.length_minutes - 60, 0)
            named[f"{name}_last_hour"] = _window(
                (spec.start_minute + last) % MINUTES_PER_DAY, spec.end_minute
            )
        pit = self.instrument.pit_hours
        if pit is not None:
            named |= {"pit_hours": f"{pit.start}-{pit.end}"}
        settled = self.instrument.settlement
        if settled:
            now = settled[-1]
            earlier = "".join(
                f"; through {w.until} it was {w.start}-{w.end}" for w in settled[:-1] if w.until
            )
            named |= {
                "settlement": f"{now.start}-{now.end}",
                "settlement_end": now.end,
                "settlement_before": earlier,
                "settle_expr": _settle_expression(settled),
                "settle_lag_note": _settle_lag_note(settled),
            }
        named |= self._day_session()
        if self.instrument.profile_step is not None:
            named["profile_step"] = f"{self.instrument.profile_step:g}"
        return named | {
            "symbol": self.instrument.symbol,
            "session": self.session,
            "hours": f"{self.open}-{self.close}",
            "open": self.open,
            "close": self.close,
            "opening_range": self.opening_range,
            # The first bar after the opening range, where a breakout entry can come.
            "opening_range_end": format_clock(self._at(OPENING_RANGE_MINUTES)),
            "second_hour": self.hourly_bar(min(1, len(self.hourly_offsets) - 1)),
            "last_half_hour": _window(self._at(max(self._length - 30, 0)), self._at(self._length)),
            "after_close": f"{self.close}-{self.day_end}",
            "hourly_bars": self.hourly_bars,
            "hourly_windows": self.hourly_windows,
            "hour_note": self.hour_note,
            "day_start": self.instrument.trading_day_start,
            "day_end": self.day_end,
            "day_break": self.day_break,
            # What a difference of two prices is in: NQ's points, CL's dollars.
            "price_unit": self.instrument.price_unit,
            # What a move of 1.0 is worth on one contract: NQ's 20 USD, CL's 1,000.
            "point_value": f"{self.instrument.point_value:g}",
            "currency": self.instrument.currency,
        }

    def _day_session(self) -> dict[str, str]:
        """The session market profile calls the day (the initial balance's): the stock
        market's cash session where the instrument has one, not RTH's post-cash hour after
        it; else the default session (CL's pit hours)."""
        sessions = self.instrument.sessions
        if "CASH" in sessions:
            note = f"the stock market's hours, not {self.session}'s hour after its close"
            return {
                "day_session": "CASH",
                "day_session_hours": sessions["CASH"].hours,
                "day_session_note": note,
            }
        return {
            "day_session": self.session,
            "day_session_hours": sessions[self.session].hours,
            "day_session_note": f"{self.session} as a whole",
        }

    def fill(self, value: Any) -> Any:
        """``value`` with every ``$placeholder`` in its text filled in: a string, or the
        strings inside a query's dicts and lists. An unknown placeholder is an error (KeyError),
        so a text can never reach the model half filled."""
        return _filled(value, self.values())


def _filled(value: Any, values: dict[str, str]) -> Any:
    if isinstance(value, str):
        return Template(value).substitute(values)
    if isinstance(value, dict):
        return {key: _filled(item, values) for key, item in value.items()}
    if isinstance(value, list):
        return [_filled(item, values) for item in value]
    return value


def _settle_expression(windows: tuple[SettlementWindow, ...]) -> str:
    """The settlement window's close in each era: ES settled at 16:15 through 2020-10-23
    and at 16:00 since, and one window for all history read 16:00 in the old era."""
    expression = f"session_close('{windows[-1].start}-{windows[-1].end}')"
    for window in reversed(windows[:-1]):
        if window.until is not None:
            expression = (
                f"if(date() <= '{window.until}', "
                f"session_close('{window.start}-{window.end}'), {expression})"
            )
    return expression


def _settle_lag_note(windows: tuple[SettlementWindow, ...]) -> str:
    """Why the previous settlement is prev(settle) and not a lag inside the era's if: the if
    tests the row's date, so on 2020-10-26 session_close('15:59-16:00', 1) read ES's 16:00
    close of 10-23, a day that settled at 16:15 (NQ: 10393 for 10423.75)."""
    eras = [(w, after) for w, after in pairwise(windows) if w.until]
    if not eras:
        return ""
    window, after = eras[-1]
    return (
        ", not a lag inside the if: the if tests the row's own date, so on the first day after "
        f"{window.until} the lag reads {window.until}'s {after.end} close, not its "
        f"{window.end} settle"
    )


# Texts asked for without an instrument (tests, docs) name the times of this one.
WORDING_SYMBOL = "NQ"


def times_for(instrument: Instrument | None) -> SessionTimes:
    """The times the texts name: the instrument's, or without one those of WORDING_SYMBOL."""
    return SessionTimes(instrument or load_instrument(WORDING_SYMBOL))
