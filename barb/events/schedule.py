"""Event dates per instrument: read from Barb's data files or computed by rule, then mapped to
the instrument's trading dates. Everything here is cached: the tables are small and immutable.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd

from barb.events.catalog import EventSpec, event_catalog
from barb.events.data_files import load_event_file
from barb.events.names import resolve_event
from barb.events.rules import eia_releases, expirations, trading_days
from barb.instruments import Instrument

# Release times in Barb's data files and rules are US Eastern wall clock.
EVENT_TIMEZONE = "America/New_York"

DAY_NS = 86_400 * 10**9
MINUTE_NS = 60 * 10**9


def _from_file(spec: EventSpec) -> pd.DataFrame:
    assert spec.file is not None
    data = load_event_file(spec.file)
    default = dt.time.fromisoformat(spec.time)
    records = []
    for row in data.rows:
        clock = dt.time.fromisoformat(row.time) if row.time else default
        record: dict[str, object] = {
            "date": row.date,
            "time": dt.datetime.combine(row.date, clock),
            "scheduled": row.scheduled,
        }
        # Extra flags: only the columns this file actually has.
        if "press_conference" in data.columns:
            record["press_conference"] = bool(row.press_conference)
        if "reference_month" in data.columns:
            record["reference_month"] = row.reference_month
        record["note"] = row.note
        records.append(record)
    return pd.DataFrame(records)


def _releases(spec: EventSpec, calendar: str) -> pd.DataFrame:
    if spec.kind == "file":
        return _from_file(spec)
    if spec.rule == "opex":
        return expirations(calendar, quarterly_only=False)
    if spec.rule == "quad_witching":
        return expirations(calendar, quarterly_only=True)
    if spec.rule == "eia":
        return eia_releases()
    raise AssertionError(f"no date source for event {spec.name!r}")


def _to_local(times: pd.Series, timezone: str) -> np.ndarray:
    """Eastern wall-clock release times as wall-clock times in the instrument's timezone."""
    values = times.to_numpy(dtype="datetime64[ns]")
    if timezone == EVENT_TIMEZONE:
        return values
    local = (
        pd.DatetimeIndex(values).tz_localize(EVENT_TIMEZONE).tz_convert(timezone).tz_localize(None)
    )
    return local.to_numpy(dtype="datetime64[ns]")


def _trading_dates(local: np.ndarray, calendar: str, day_start_minute: int) -> np.ndarray:
    """The trading date whose bars first see a release at each wall-clock time: the same day,
    the next one from the Globex reopen on, rolled forward over weekends and exchange holidays
    (a Sunday 17:00 decision, or NFP on Good Friday for a closed market, counts for Monday)."""
    ns = local.view("int64")
    days = ns // DAY_NS
    minute = (ns - days * DAY_NS) // MINUTE_NS
    # A start at midnight means a plain calendar day: nothing moves to the next date.
    days = days + ((minute >= day_start_minute) & (day_start_minute > 0))
    open_days = trading_days(calendar).astype("int64")
    position = np.searchsorted(open_days, days, side="left")
    inside = position < len(open_days)
    rolled = np.where(inside, open_days[np.minimum(position, len(open_days) - 1)], days)
    return (rolled * DAY_NS).astype("datetime64[ns]")


@cache
def _event_table(name: str, calendar: str, timezone: str, day_start_minute: int) -> pd.DataFrame:
    spec = event_catalog()[name]
    table = _releases(spec, calendar)
    out = pd.DataFrame(
        {
            "date": pd.to_datetime(table["date"]).astype("datetime64[ns]"),
            "time": pd.to_datetime(table["time"]).astype("datetime64[ns]"),
            "scheduled": table["scheduled"].astype(bool),
        }
    )
    local = _to_local(out["time"], timezone)
    out["trading_date"] = _trading_dates(local, calendar, day_start_minute)
    for column in table.columns.difference(["date", "time", "scheduled"], sort=False):
        values = table[column]
        if column == "moved_from":
            values = pd.to_datetime(values).astype("datetime64[ns]")
        out[column] = values
    return out


def _instrument_key(name: str, instrument: Instrument) -> tuple[str, str, str, int]:
    return (name, instrument.calendar, instrument.timezone, instrument.trading_day_start_minute)


def event_dates(
    name: str,
    instrument: Instrument,
    start: dt.date | None = None,
    end: dt.date | None = None,
) -> pd.DataFrame:
    """Every release of ``name`` for ``instrument`` whose date lies in [start, end].

    Columns: ``date`` (release day, datetime64 midnight), ``time`` (release, wall clock ET),
    ``scheduled`` (False for unscheduled FOMC decisions), ``trading_date`` (the instrument's
    trading date whose bars first see the release) and the event's own flags:
    ``press_conference`` and ``note`` (fomc), ``reference_month`` and ``note`` (nfp, cpi),
    ``quarterly`` and ``moved_from`` (opex, quad_witching), ``holiday_delay`` (eia).
    Dates outside the event's coverage are unknown; they are simply absent here.
    """
    spec = resolve_event(name, instrument, step="events")
    table = _event_table(*_instrument_key(spec.name, instrument))
    keep = np.ones(len(table), dtype=bool)
    if start is not None:
        keep &= (table["date"] >= pd.Timestamp(start)).to_numpy()
    if end is not None:
        keep &= (table["date"] <= pd.Timestamp(end)).to_numpy()
    # A copy: the cached table must not be changed by callers.
    return table.loc[keep].reset_index(drop=True)


@cache
def _moved(
    name: str, calendar: str, timezone: str, day_start_minute: int
) -> tuple[np.ndarray, np.ndarray]:
    table = _event_table(name, calendar, timezone, day_start_minute)
    moved = table["trading_date"] != table["date"]
    return (
        table.loc[moved, "date"].to_numpy(dtype="datetime64[ns]"),
        table.loc[moved, "trading_date"].to_numpy(dtype="datetime64[ns]"),
    )


def moved_releases(name: str, instrument: Instrument) -> tuple[np.ndarray, np.ndarray]:
    """The releases of ``name`` on a day without trading (CPI on Good Friday, FOMC on a
    Sunday): their dates, and the trading dates whose bars see them. A few, kept."""
    spec = resolve_event(name, instrument, step="events")
    return _moved(*_instrument_key(spec.name, instrument))


@dataclass(frozen=True)
class JoinArrays:
    """What ``join`` needs, as plain arrays: sorted event trading days and their first release."""

    days: np.ndarray  # int64 day numbers since the epoch, sorted, unique
    release_ns: np.ndarray  # int64 wall-clock ns (instrument timezone) of the first release
    coverage_start_day: int
    coverage_end_day: int


@cache
def _join_arrays(name: str, calendar: str, timezone: str, day_start_minute: int) -> JoinArrays:
    table = _event_table(name, calendar, timezone, day_start_minute)
    local = _to_local(table["time"], timezone).view("int64")
    days = table["trading_date"].to_numpy(dtype="datetime64[ns]").view("int64") // DAY_NS
    order = np.lexsort((local, days))
    days, local = days[order], local[order]
    # Two releases mapped to one trading date: keep the earliest, minutes count from it.
    first = np.concatenate(([True], days[1:] != days[:-1])) if len(days) else days.astype(bool)
    spec = event_catalog()[name]
    epoch = dt.date(1970, 1, 1)
    return JoinArrays(
        days=days[first],
        release_ns=local[first],
        coverage_start_day=(spec.coverage_start - epoch).days,
        coverage_end_day=(spec.coverage_end - epoch).days,
    )


def join_arrays(spec: EventSpec, instrument: Instrument) -> JoinArrays:
    return _join_arrays(*_instrument_key(spec.name, instrument))
