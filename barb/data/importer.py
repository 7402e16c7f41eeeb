"""Import real minute bars from a vendor file into Barb's store.

``import_file`` reads one of the layouts in ``barb.data.formats``, validates every bar at
once with vectorized checks, converts times to the instrument's wall clock, adds the derived
columns and writes the file atomically. Any problem raises ``DataError`` naming the file,
the first offending line (for Parquet input, the row) and what is wrong; the existing data
file is then left exactly as it was.

Timestamps must be bar open times. Naive times are wall-clock in ``timezone`` (default: the
instrument's); times with a UTC offset, and Databento's, are instants and converted, so
daylight-saving changes are handled by the timezone database.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd

from barb.data import formats
from barb.data.formats import BadFile, BadRow, Format, Layout, RawBars
from barb.data.store import DataMeta, data_path, make_meta, write_bars
from barb.errors import DataError
from barb.instruments import Instrument, load_instrument
from barb.sessions import minutes_of_day, trading_dates
from barb.settings import EngineSettings

MINUTE_NS = 60 * 1_000_000_000


def import_file(
    path: Path | str,
    symbol: str,
    settings: EngineSettings | None = None,
    timezone: str | None = None,
    fmt: Format | str | None = None,
) -> DataMeta:
    """Import the bars in ``path`` as the data of ``symbol``; returns what was written.

    ``fmt`` forces a layout (``plain``, ``split``, ``databento``) or ``parquet``; by default
    it is detected from the file's first bytes and header.
    """
    settings = settings or EngineSettings()
    path = Path(path)
    where = str(path)
    instrument = load_instrument(symbol, settings)
    if fmt is not None and fmt not in formats.FORMATS:
        raise DataError(f"unknown format {fmt!r}; use one of {', '.join(formats.FORMATS)}.")
    if timezone is not None:
        _check_zone(timezone)
    if not path.is_file():
        raise DataError("no such file.", path=where)
    if path.stat().st_size == 0:
        raise DataError("the file is empty.", path=where)

    parquet = fmt == "parquet" or (fmt is None and formats.is_parquet(path))
    header: formats.CsvHeader | None = None
    try:
        if parquet:
            raw = formats.read_parquet(path, None)
        else:
            header = formats.read_csv_header(path)
            layout = formats.detect_layout(header.columns, _forced_layout(fmt))
            raw = formats.read_csv(path, header, layout)
        if raw.utc and timezone is not None:
            raise BadFile(
                "the file's times carry their own UTC offset (or are Databento's UTC), so "
                "--timezone does not apply; leave it out."
            )
        frame = to_stored_form(raw, instrument, timezone or instrument.timezone)
    except BadFile as exc:
        raise DataError(exc.message, path=where, line=exc.line) from None
    except UnicodeDecodeError:
        raise DataError("not UTF-8 text: is it a CSV or Parquet file?", path=where) from None
    except BadRow as exc:
        if header is None:
            raise DataError(f"row {exc.row + 1}: {exc.message}", path=where) from None
        line = formats.line_of_row(path, header, exc.row)
        raise DataError(exc.message, path=where, line=line) from None

    zone = "UTC" if raw.utc else (timezone or instrument.timezone)
    meta = make_meta(
        frame,
        instrument=instrument.symbol,
        timezone=instrument.timezone,
        source="imported",
        description=(
            f"imported from {path.name} ({raw.layout} {'Parquet' if parquet else 'CSV'}, "
            f"times in {zone})"
        ),
    )
    write_bars(frame, meta, data_path(instrument.symbol, settings))
    return meta


def _forced_layout(fmt: str | None) -> Layout | None:
    if fmt in formats.LAYOUT_COLUMNS:
        return cast(Layout, fmt)
    return None


def _check_zone(name: str) -> None:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise DataError(
            f"unknown timezone {name!r}; use an IANA name such as America/Chicago or UTC."
        ) from None


def to_stored_form(raw: RawBars, instrument: Instrument, source_zone: str) -> pd.DataFrame:
    """Validate ``raw`` and turn it into the stored form, or raise ``BadRow``."""
    check_series(raw)
    first = first_problem(raw)
    if first is not None:
        raise first
    wall = to_wall_clock(raw, source_zone, instrument.timezone)
    timestamp = wall.view("datetime64[ns]")
    return pd.DataFrame(
        {
            "timestamp": timestamp,
            "open": raw.open,
            "high": raw.high,
            "low": raw.low,
            "close": raw.close,
            "volume": raw.volume.astype(np.int64),
            "trading_date": trading_dates(timestamp, instrument.trading_day_start_minute),
            "minute": minutes_of_day(timestamp),
        },
        copy=False,  # no second copy of millions of rows
    )


def show(ns: int, utc: bool) -> str:
    text = str(pd.Timestamp(int(ns)))
    return f"{text} UTC" if utc else text


def first_problem(raw: RawBars) -> BadRow | None:
    """The problem on the earliest row, of all the checks run over the whole file at once."""
    o, h, low, c, v = raw.open, raw.high, raw.low, raw.close, raw.volume
    t = raw.instants
    step = np.diff(t)
    # Each check: rows where it fails, and the message for one such row.
    checks: list[tuple[np.ndarray, Callable[[int], str]]] = [
        (
            np.isnan(o) | np.isnan(h) | np.isnan(low) | np.isnan(c),
            lambda i: "missing "
            + ", ".join(
                n for n, a in zip(formats.PRICES, (o, h, low, c), strict=True) if np.isnan(a[i])
            )
            + ".",
        ),
        (np.isnan(v), lambda i: "missing volume."),
        (v < 0, lambda i: f"negative volume {v[i]:g}."),
        (v != np.floor(v), lambda i: f"volume {v[i]:g} is not a whole number."),
        (h < low, lambda i: f"high {h[i]:g} is below low {low[i]:g}."),
        (
            (o < low) | (o > h),
            lambda i: f"open {o[i]:g} is outside the bar's low..high ({low[i]:g}..{h[i]:g}).",
        ),
        (
            (c < low) | (c > h),
            lambda i: f"close {c[i]:g} is outside the bar's low..high ({low[i]:g}..{h[i]:g}).",
        ),
        (
            np.concatenate(([False], step == 0)),
            lambda i: f"duplicate bar: {show(t[i], raw.utc)} again, as in the bar before.",
        ),
        (
            np.concatenate(([False], step < 0)),
            lambda i: f"bars out of order: {show(t[i], raw.utc)} comes after "
            f"{show(t[i - 1], raw.utc)}; sort the file by time.",
        ),
        (
            t % MINUTE_NS != 0,
            lambda i: f"{show(t[i], raw.utc)} is not on a whole minute; Barb imports "
            "one-minute bars stamped with their open time.",
        ),
    ]
    found = [(int(np.argmax(mask)), message) for mask, message in checks if mask.any()]
    if not found:
        return None
    row, message = min(found, key=lambda item: item[0])
    return BadRow(row, message(row))


def check_series(raw: RawBars) -> None:
    """Several Databento symbols are fine only one after another (a continuous series)."""
    if raw.series is None or len(raw) == 0:
        return
    s = raw.series
    starts = np.concatenate(([0], np.flatnonzero(s[1:] != s[:-1]) + 1))
    if len(starts) == 1:
        return
    name = raw.series_names
    names = [name[code] for code in dict.fromkeys(s[starts].tolist())]
    advice = (
        f"The file holds {len(names)} series ({', '.join(names[:5])}"
        f"{', …' if len(names) > 5 else ''}); export one continuous series (such as "
        "Databento's NQ.c.0) or a single contract."
    )
    _, first_seen = np.unique(s[starts], return_index=True)
    back = np.setdiff1d(np.arange(len(starts)), first_seen)
    if back.size:
        row = int(starts[back.min()])
        raise BadRow(row, f"bars of {name[s[row]]} resume after other symbols' bars. {advice}")
    overlap = starts[1:][raw.instants[starts[1:]] <= raw.instants[starts[1:] - 1]]
    if overlap.size:
        row = int(overlap[0])
        raise BadRow(
            row,
            f"{name[s[row]]} starts before {name[s[row - 1]]} ends, so they overlap in time. "
            + advice,
        )


def to_wall_clock(raw: RawBars, source_zone: str, target_zone: str) -> np.ndarray:
    """int64 ns of naive wall-clock time in ``target_zone``; refuses times a clock change
    makes impossible (skipped) or ambiguous (repeated)."""
    values = pd.DatetimeIndex(raw.instants.view("datetime64[ns]"))
    if raw.utc:
        local = values.tz_localize("UTC")
    elif source_zone == target_zone:
        return raw.instants
    else:
        local = values.tz_localize(source_zone, ambiguous="NaT", nonexistent="NaT")
        bad = np.flatnonzero(local.isna())
        if bad.size:
            row = int(bad[0])
            raise BadRow(
                row,
                f"{show(raw.instants[row], False)} does not exist or occurs twice in "
                f"{source_zone} (a clock change); give such times in UTC or with an offset.",
            )
    wall = local.tz_convert(target_zone).tz_localize(None).asi8
    repeated = np.flatnonzero(wall[1:] <= wall[:-1])
    if repeated.size:
        row = int(repeated[0]) + 1
        raise BadRow(
            row,
            f"{show(wall[row], False)} occurs twice in {target_zone} wall-clock time (the "
            "clocks went back); Barb stores wall-clock time and cannot hold both bars.",
        )
    return wall
