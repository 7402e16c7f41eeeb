"""Vendor files written by the tests: the same bars in every layout, zone and stamp.

``week_of_bars`` lays out one-minute CME bars by hand (Sunday 18:00 to Friday 17:00 New York
time, the 17:00-18:00 break each weekday), with a seeded random walk on the tick; the
writers put them into the files traders have, so that each import can be compared with the
bars that went in.
"""

from __future__ import annotations

import datetime as dt
import gzip
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from bench import layout_files

NY = "America/New_York"


def week_of_bars(
    first_sunday: dt.date = dt.date(2024, 3, 17),
    days: int = 5,
    step_minutes: int = 1,
    seed: int = 7,
    level: float = 18000,
) -> pd.DataFrame:
    """Bars with a tz-aware New York ``timestamp`` (bar open) and OHLCV, ``days`` sessions
    from the Sunday evening ``first_sunday``, around ``level`` (NQ's in March 2024; ES's
    was about 5,000: a first import far from the instrument's level is refused)."""
    stamps = []
    for k in range(days):
        start = pd.Timestamp(first_sunday + dt.timedelta(days=k)) + pd.Timedelta(hours=18)
        end = start + pd.Timedelta(hours=23)  # 18:00 to 17:00 next day
        stamps.append(pd.date_range(start, end, freq=f"{step_minutes}min", inclusive="left"))
    wall = stamps[0].append(stamps[1:])
    rng = np.random.default_rng(seed)
    n = len(wall)
    close = level + np.cumsum(rng.integers(-8, 9, n)) * 0.25
    open_ = np.concatenate(([close[0]], close[:-1]))
    high = np.maximum(open_, close) + rng.integers(0, 5, n) * 0.25
    low = np.minimum(open_, close) - rng.integers(0, 5, n) * 0.25
    return pd.DataFrame(
        {
            "timestamp": wall.tz_localize(NY),
            "open": open_,
            "high": high,
            "low": low,
            "close": close,
            "volume": rng.integers(1, 500, n),
        }
    )


def in_zone(bars: pd.DataFrame, zone: str, stamp: str = "open", step_minutes: int = 1) -> pd.Series:
    """Naive wall-clock times of ``bars`` in ``zone``; close stamps are the bar's end."""
    times = bars["timestamp"]
    if stamp == "close":
        times = times + pd.Timedelta(minutes=step_minutes)
    return times.dt.tz_convert(zone).dt.tz_localize(None)


def plain_csv(path: Path, bars: pd.DataFrame, zone: str = NY, stamp: str = "open") -> Path:
    out = bars.assign(timestamp=in_zone(bars, zone, stamp).dt.strftime("%Y-%m-%d %H:%M:%S"))
    out.to_csv(path, index=False)
    return path


def offset_csv(path: Path, bars: pd.DataFrame, zone: str) -> Path:
    """ISO 8601 times with their UTC offset (``2024-03-18T09:30:00-04:00``)."""
    local = bars["timestamp"].dt.tz_convert(zone)
    text = local.dt.strftime("%Y-%m-%dT%H:%M:%S%z").str.replace(
        r"(\d\d)(\d\d)$", r"\1:\2", regex=True
    )
    bars.assign(timestamp=text).to_csv(path, index=False)
    return path


def sierra_txt(path: Path, bars: pd.DataFrame, zone: str = NY) -> Path:
    wall = in_zone(bars, zone)
    lines = ["Date, Time, Open, High, Low, Last, Volume, NumberOfTrades, BidVolume, AskVolume"]
    for t, row in zip(wall, bars.itertuples(), strict=True):
        lines.append(
            f"{t.year}/{t.month}/{t.day}, {t:%H:%M:%S}.000, {row.open}, {row.high}, {row.low}, "
            f"{row.close}, {row.volume}, {row.volume // 3 + 1}, {row.volume // 2}, "
            f"{row.volume - row.volume // 2}"
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def tradingview_csv(path: Path, bars: pd.DataFrame, iso: bool = False) -> Path:
    if iso:
        time = bars["timestamp"].dt.strftime("%Y-%m-%dT%H:%M:%S%z")
        time = time.str.replace(r"(\d\d)(\d\d)$", r"\1:\2", regex=True)
    else:
        time = bars["timestamp"].astype("int64") // 10**9
    out = pd.DataFrame({"time": time, **{c: bars[c] for c in ("open", "high", "low", "close")}})
    out["Volume"] = bars["volume"]
    out["MA"] = bars["close"].rolling(9, min_periods=1).mean()  # an indicator column
    out.to_csv(path, index=False)
    return path


def ninjatrader_txt(path: Path, bars: pd.DataFrame, zone: str = NY) -> Path:
    """``yyyyMMdd HHmmss;o;h;l;c;v`` stamped at the bar's close, no header."""
    wall = in_zone(bars, zone, "close")
    lines = [
        f"{t:%Y%m%d %H%M%S};{r.open};{r.high};{r.low};{r.close};{r.volume}"
        for t, r in zip(wall, bars.itertuples(), strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def kibot_txt(path: Path, bars: pd.DataFrame, zone: str = NY) -> Path:
    wall = in_zone(bars, zone)
    lines = [
        f"{t:%m/%d/%Y},{t:%H:%M},{r.open},{r.high},{r.low},{r.close},{r.volume}"
        for t, r in zip(wall, bars.itertuples(), strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def european_csv(
    path: Path, bars: pd.DataFrame, zone: str = NY, date_format: str = "%d.%m.%Y"
) -> Path:
    """``;`` between fields and a decimal comma, as European spreadsheets write: the
    benchmark's writer (``bench.layout_files``), on ``zone``'s clock, prices to the cent."""
    wall = bars.assign(timestamp=in_zone(bars, zone))
    return layout_files.european_csv(wall, path, True, date_format, float_format="%.2f")


def gzipped(path: Path) -> Path:
    target = path.with_name(path.name + ".gz")
    target.write_bytes(gzip.compress(path.read_bytes(), mtime=0))
    return target


def zipped(path: Path) -> Path:
    target = path.with_name(path.name + ".zip")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(path, path.name)
    return target
