"""Instruments: one YAML file each in the instruments directory, validated by pydantic."""

from __future__ import annotations

import datetime as dt
from functools import cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from barb.errors import UnknownInstrument, UnknownSession
from barb.settings import EngineSettings, default_settings


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

    @field_validator("start", "end")
    @classmethod
    def _clock(cls, value: str) -> str:
        parse_clock(value)
        return value

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


class Instrument(BaseModel):
    model_config = ConfigDict(frozen=True)

    symbol: str
    name: str
    exchange: str
    timezone: str
    tick_size: float = Field(gt=0)
    point_value: float = Field(gt=0)
    currency: str = "USD"
    calendar: str
    trading_day_start: str
    maintenance_break: TimeWindow | None = None
    default_session: str
    sessions: dict[str, SessionSpec]
    events: list[str] = Field(default_factory=list)
    sample: SampleSpec | None = None

    @property
    def trading_day_start_minute(self) -> int:
        return parse_clock(self.trading_day_start)

    def session(self, name: str) -> SessionSpec:
        """The session called ``name`` (case-insensitive), or an error listing the real ones."""
        spec = self.sessions.get(name.upper())
        if spec is None:
            raise UnknownSession(
                f"Session '{name}' does not exist for {self.symbol}. "
                f"Available: {', '.join(self.sessions)}.",
                step="session",
                hint=f"Default session is {self.default_session}.",
            )
        return spec


def _instrument_files(directory: Path) -> dict[str, Path]:
    return _listing(directory, directory.stat().st_mtime_ns)


@cache
def _listing(directory: Path, mtime_ns: int) -> dict[str, Path]:
    """The YAML files of ``directory``, listed once per version of the folder."""
    return {p.stem.upper(): p for p in sorted(directory.glob("*.yaml"))}


@cache
def _load(path: Path, mtime: float) -> Instrument:
    with path.open(encoding="utf-8") as fh:
        return Instrument.model_validate(yaml.safe_load(fh))


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
        )
    return _load(path, path.stat().st_mtime)
