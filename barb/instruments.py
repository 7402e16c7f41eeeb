"""Instruments: one YAML file each in the instruments directory, validated by pydantic."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from barb.errors import InvalidSession, UnknownInstrument, UnknownSession
from barb.settings import EngineSettings, default_settings
from barb.time_zones import aliases_text, zone_name
from barb.yaml_text import load_yaml

MINUTES_PER_DAY = 24 * 60
# Session texts an instrument keeps resolved (see Instrument._resolved).
_RESOLVED_KEPT = 256
# A session written as a time window: "09:30-09:45" (an en dash is accepted too).
_WINDOW = re.compile(r"^(\d{1,2}):(\d{2})\s*[-–]\s*(\d{1,2}):(\d{2})$")
# A window on another time zone's clock: "10:00-11:00 Europe/Moscow", "08:00-09:00 London".
_ZONED = re.compile(r"^(\d{1,2}:\d{2}\s*[-–]\s*\d{1,2}:\d{2})\s+(\S+)$")


def parse_clock(value: str) -> int:
    """'09:30' -> minutes after midnight (570)."""
    hours, minutes = value.split(":")
    h, m = int(hours), int(minutes)
    if not (0 <= h <= 24 and 0 <= m < 60) or h * 60 + m > 24 * 60:
        raise ValueError(f"not a time of day: {value!r}")
    return h * 60 + m


class SessionSpec(BaseModel):
    """A window of the trading day, [start, end) in wall-clock time; may cross midnight."""

    model_config = ConfigDict(frozen=True)

    start: str
    end: str
    parent: str | None = None
    description: str | None = None
    # A window on another zone's clock (IANA name): start and end are that clock's, and which
    # exchange hours they are changes with both zones' daylight saving (barb.time_zones).
    zone: str | None = None

    @field_validator("start", "end")
    @classmethod
    def _clock(cls, value: str) -> str:
        parse_clock(value)
        return value

    @property
    def hours(self) -> str:
        """``09:30-17:00``, as a time-window session is written."""
        return f"{self.start}-{self.end}"

    @property
    def label(self) -> str:
        """``10:00-11:00 Europe/Moscow``: the hours, with the zone of a window on another clock."""
        return f"{self.hours} {self.zone}" if self.zone else self.hours

    @property
    def start_minute(self) -> int:
        return parse_clock(self.start)

    @property
    def end_minute(self) -> int:
        return parse_clock(self.end) % (24 * 60)

    @property
    def crosses_midnight(self) -> bool:
        return self.end_minute <= self.start_minute

    @property
    def length_minutes(self) -> int:
        return (self.end_minute - self.start_minute) % (24 * 60) or 24 * 60


class TimeWindow(BaseModel):
    model_config = ConfigDict(frozen=True)
    start: str
    end: str


class SettlementWindow(TimeWindow):
    """Where the exchange took its daily settlement, up to a date (None: still today)."""

    until: dt.date | None = None


class SampleSpec(BaseModel):
    """How `barb data sample` makes this instrument's synthetic bars."""

    model_config = ConfigDict(frozen=True)

    seed: int
    annual_volatility: float = Field(gt=0, lt=3)
    daily_volume: int = Field(gt=0)
    anchors: dict[dt.date, float]
    # Annualised volatility by calendar year (approximately the real one); years not listed
    # use annual_volatility.
    volatility: dict[int, float] = Field(default_factory=dict)
    # Weight of the shocks common to every instrument (the market): pairs of instruments
    # have daily-return correlation near the product of their loadings.
    market_loading: float = Field(default=0.0, ge=0, le=1)


class MicroContract(BaseModel):
    """The exchange's smaller contract on the same prices (CME's MNQ is a tenth of NQ):
    traders who hold micros asked what a move is worth to them and got the E-mini's
    figure, ten times theirs."""

    model_config = ConfigDict(frozen=True)

    symbol: str
    point_value: float = Field(gt=0)


class Instrument(BaseModel):
    model_config = ConfigDict(frozen=True)

    symbol: str
    name: str
    exchange: str
    timezone: str
    tick_size: float = Field(gt=0)
    point_value: float = Field(gt=0)
    micro: MicroContract | None = None
    currency: str = "USD"
    # What a difference of two prices is called: an index future moves in points, crude oil
    # in dollars (a barrel's price), and "0,0172 пункта" read wrong of CL's moves.
    price_unit: Literal["points", "dollars"] = "points"
    calendar: str
    # Whether the price is a US stock index's (NQ, ES): its question about weekdays or a
    # month's days is about the stock market's days, which leave a holiday session out. CL's
    # holiday sessions are its own days, short (13:30) or, since 2022, in full.
    stock_index: bool = False
    trading_day_start: str
    maintenance_break: TimeWindow | None = None
    # The exchange's daily settlement window (settlement is a VWAP of trades in it) and the
    # old trading-floor hours traders still name: known times, for the concept lookup.
    # Oldest first; each but the last ends on its ``until`` date.
    settlement: tuple[SettlementWindow, ...] = ()
    pit_hours: TimeWindow | None = None
    # The price bucket of a volume or TPO profile built from 1-minute bars (a multiple of the
    # tick, about 30 levels in a recent day's default session), for the concept lookup.
    profile_step: float | None = Field(default=None, gt=0)
    default_session: str
    sessions: dict[str, SessionSpec]
    events: list[str] = Field(default_factory=list)
    sample: SampleSpec | None = None
    # Sessions resolved so far, by the text asked for: a window is parsed and checked
    # against the trading hours once (~60 us, and a query resolves its session five times).
    _resolved: dict[str, tuple[str, SessionSpec]] = PrivateAttr(default_factory=dict)

    @property
    def trading_day_start_minute(self) -> int:
        return parse_clock(self.trading_day_start)

    @property
    def tick_decimals(self) -> int:
        """The digits after the point a price is written with: 2 for NQ's 0.25 and CL's
        0.01 (25850.75, 57.19), none for a whole-point tick."""
        exponent = Decimal(str(self.tick_size)).normalize().as_tuple().exponent
        return max(0, -exponent) if isinstance(exponent, int) else 0

    @property
    def window_example(self) -> str:
        """A time window of this instrument's own for error hints, the first 15 minutes of its
        default session: CL's errors must not suggest NQ's '09:30-09:45'."""
        opens = self.sessions[self.default_session].start_minute
        return f"{format_clock(opens)}-{format_clock(opens + 15)}"

    @property
    def window_form(self) -> str:
        return f"'HH:MM-HH:MM' (24-hour exchange time, e.g. '{self.window_example}')"

    def session(self, name: str) -> SessionSpec:
        """The session called ``name`` (case-insensitive) or written as a time window
        ('09:30-09:45'), or an error naming the real sessions and the window form."""
        return self._resolve(name)[1]

    def session_key(self, name: str) -> str:
        """The one spelling of a session: its name in capitals, or a window as 'HH:MM-HH:MM'.

        Frames are cached under it, so 'rth' and 'RTH', '9:30-9:45' and '09:30-09:45' share one.
        """
        return self._resolve(name)[0]

    def written_window(self, name: str) -> str | None:
        """``name``'s hours as 'HH:MM-HH:MM' (and its zone, on another clock) when it is
        written as a time window, None when it names a session. A window keeps its clock hours
        on another instrument: session_key reads '09:30-17:00' as NQ's RTH, and CL's RTH is
        other hours."""
        if name.strip().upper() in self.sessions:
            return None
        if self._zoned(name.strip()) is not None:
            return self._resolve(name)[1].label
        return self._window(name.strip()).hours

    def _resolve(self, name: str) -> tuple[str, SessionSpec]:
        resolved = self._resolved.get(name)
        if resolved is None:
            resolved = self._resolve_anew(name)
            if len(self._resolved) >= _RESOLVED_KEPT:  # texts come from models: keep a few
                self._resolved.clear()
            self._resolved[name] = resolved
        return resolved

    def _resolve_anew(self, name: str) -> tuple[str, SessionSpec]:
        text = name.strip()
        spec = self.sessions.get(text.upper())
        if spec is not None:
            return text.upper(), spec
        zoned = self._zoned(text)
        if zoned is not None:
            window, zone = zoned
            if zone != self.timezone:
                spec = self._window(window, zone=zone)
                return spec.label, spec
            text = window  # '09:30-09:45 ET' is the exchange's own clock
        if any(ch.isdigit() for ch in text):
            spec = self._window(text)
            for known, named in self.sessions.items():
                # '09:30-17:00' is RTH: one frame, and the answer names the session.
                if (named.start_minute, named.end_minute) == (spec.start_minute, spec.end_minute):
                    return known, named
            return f"{spec.start}-{spec.end}", spec
        raise UnknownSession(
            f"Session '{name}' does not exist for {self.symbol}. "
            f"Available: {', '.join(self.sessions)}, or a time window {self.window_form}.",
            step="session",
            hint=f"Default session is {self.default_session}.",
        )

    def _zoned(self, text: str) -> tuple[str, str] | None:
        """('10:00-11:00', 'Europe/Moscow') for a window written with a zone; None without
        one. An unknown zone is an error listing the short names it may be written as."""
        match = _ZONED.match(text)
        if match is None:
            return None
        window, written = match.groups()
        zone = zone_name(written)
        if zone is None:
            raise InvalidSession(
                f"Session '{text}' names a time zone '{written}' that does not exist.",
                step="session",
                hint=f"Write an IANA zone ('10:00-11:00 Europe/Moscow') or one of "
                f"{aliases_text()}.",
            )
        return window, zone

    def _window(self, text: str, zone: str | None = None) -> SessionSpec:
        """A custom session from 'HH:MM-HH:MM': bars opening in [start, end), exchange time,
        or with ``zone`` on that zone's clock.

        An exchange-time window must lie inside one trading day's hours (from the Globex open
        to the maintenance break), so a window that crosses midnight belongs, like ETH, to the
        trading date on which it ends. A window on another clock is checked day by day when a
        query runs (barb.caveats.zones): which exchange hours it is moves with daylight saving.
        """
        match = _WINDOW.match(text)
        if match is None:
            raise self._bad_window(text, f"write a time window as {self.window_form}.")
        sh, sm, eh, em = (int(g) for g in match.groups())
        for h, m, can_end in ((sh, sm, False), (eh, em, True)):
            if m > 59 or h > 24 or (h == 24 and (m or not can_end)):
                raise self._bad_window(
                    text, f"{h:02d}:{m:02d} is not a time of day (00:00 to 23:59)."
                )
        start, end = sh * 60 + sm, eh * 60 + em
        if start == end:
            raise self._bad_window(text, "it starts and ends at the same time, so it is empty.")
        spec = SessionSpec(
            start=f"{sh:02d}:{sm:02d}",
            end=f"{eh:02d}:{em:02d}",
            description="custom time window",
            zone=zone,
        )
        if zone is not None:
            return spec
        opens, closes = self.trading_hours
        since_open = (start - opens) % MINUTES_PER_DAY
        until_end = (end - opens) % MINUTES_PER_DAY or MINUTES_PER_DAY
        span = (closes - opens) % MINUTES_PER_DAY or MINUTES_PER_DAY
        if since_open < span and (until_end <= since_open or until_end > span):
            # '16:00-00:00' ("at night", Moscow time): one trading date's end and the next
            # one's evening, which the break divides.
            close, reopen = format_clock(closes), format_clock(opens)
            raise InvalidSession(
                f"Session window '{text}' spans {self.symbol}'s daily break "
                f"({self.pause_text()}), where one trading date ends and the next begins.",
                step="session",
                hint=f"Split it in two: '{spec.start}-{close}' (the end of a trading date) and "
                f"'{reopen}-{spec.end}' (the evening of the next one).",
            )
        if until_end <= since_open or until_end > span:
            day = f"{format_clock(opens)}–{format_clock(closes)}"
            raise InvalidSession(
                f"Session window '{text}' lies outside {self.symbol}'s trading hours, "
                f"{day} ET ({self.pause_text()}).",
                step="session",
                hint=f"Choose a window inside {day}, e.g. '{self.window_example}'; one that "
                "crosses midnight, like '20:00-02:00', counts for the trading date on which it "
                "ends.",
            )
        return spec

    @property
    def trading_hours(self) -> tuple[int, int]:
        """(open, close) of a trading day in minutes after midnight; the close is the start of
        the maintenance break, or the next open when there is none."""
        opens = self.trading_day_start_minute
        if self.maintenance_break is None:
            return opens, opens
        return opens, parse_clock(self.maintenance_break.start)

    @property
    def full_session(self) -> str:
        """The session that spans the whole trading day (ETH), open to maintenance break."""
        opens, closes = self.trading_hours
        day = (closes - opens) % MINUTES_PER_DAY or MINUTES_PER_DAY
        for name, spec in self.sessions.items():
            if spec.start_minute == opens and spec.length_minutes == day:
                return name
        return "ETH"

    def pause_text(self) -> str:
        brk = self.maintenance_break
        if brk is None:
            return "the trading day starts at " + self.trading_day_start
        return f"no trading {brk.start}–{brk.end}"

    def _bad_window(self, text: str, problem: str) -> InvalidSession:
        return InvalidSession(
            f"Session '{text}' is not a valid time window: {problem}",
            step="session",
            hint=f"Use a named session ({', '.join(self.sessions)}) or a window "
            f"{self.window_form}.",
        )


def format_clock(minute: int) -> str:
    """Minutes after midnight -> '09:30' (the inverse of parse_clock; 1440 reads 00:00)."""
    return f"{minute // 60 % 24:02d}:{minute % 60:02d}"


def _instrument_files(directory: Path) -> dict[str, Path]:
    return _listing(directory, directory.stat().st_mtime_ns)


@cache
def _listing(directory: Path, mtime_ns: int) -> dict[str, Path]:
    """The YAML files of ``directory``, listed once per version of the folder."""
    return {p.stem.upper(): p for p in sorted(directory.glob("*.yaml"))}


@cache
def _load(path: Path, mtime: float) -> Instrument:
    with path.open(encoding="utf-8") as fh:
        return Instrument.model_validate(load_yaml(fh))


def available_instruments(settings: EngineSettings | None = None) -> list[str]:
    settings = settings or default_settings()
    return list(_instrument_files(settings.instruments_dir))


def load_instrument(symbol: str, settings: EngineSettings | None = None) -> Instrument:
    """The instrument called ``symbol`` from its YAML file."""
    settings = settings or default_settings()
    files = _instrument_files(settings.instruments_dir)
    path = files.get(symbol.upper())
    if path is None:
        raise UnknownInstrument(
            f"Instrument '{symbol}' is not configured. Available: {', '.join(files) or 'none'}.",
            step="instrument",
            hint=_micro_hint(symbol, files),
        )
    return _load(path, path.stat().st_mtime)


def _micro_hint(symbol: str, files: dict[str, Path]) -> str | None:
    """For a micro contract (MNQ), the instrument whose prices it trades at and what a move
    is worth on it: "MNQ is not configured" alone left the model to recall that MNQ is NQ's
    prices at a tenth of the size (p38d Q13b). None for any other symbol."""
    for path in files.values():
        full = _load(path, path.stat().st_mtime)
        micro = full.micro
        if micro is not None and micro.symbol.upper() == symbol.strip().upper():
            unit = full.price_unit.removesuffix("s")
            return (
                f"{micro.symbol} is the micro {full.symbol}: it trades at the same prices, so "
                f'ask {full.symbol} ("instrument": "{full.symbol}") and value a move of 1 {unit} '
                f"at {micro.point_value:,g} {full.currency} per {micro.symbol} contract "
                f"({full.symbol}: {full.point_value:,g})."
            )
    return None
