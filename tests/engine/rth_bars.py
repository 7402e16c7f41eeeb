"""RTH bars of the engine tests' minute fixture, built with pandas (never through Barb): the
independent side of tests that compare Barb's daily and hourly answers with their own."""

from __future__ import annotations

import pandas as pd

from barb.data.store import data_path
from barb.settings import EngineSettings

RTH_START, RTH_END = 570, 1020  # 09:30-17:00


def rth_minutes(minutes: pd.DataFrame) -> pd.DataFrame:
    """The minute bars inside RTH (the fixture's timestamps are the exchange's clock), with
    their ``day``: RTH lies inside its own calendar date."""
    stamps = minutes["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    rth = minutes[(minute >= RTH_START) & (minute < RTH_END)].copy()
    rth["day"] = rth["timestamp"].dt.normalize()
    return rth


def rth_daily(minutes: pd.DataFrame) -> pd.DataFrame:
    """One RTH bar per date: open, high, low, close, indexed by the date."""
    return (
        rth_minutes(minutes)
        .groupby("day")
        .agg(
            open=("open", "first"),
            high=("high", "max"),
            low=("low", "min"),
            close=("close", "last"),
        )
    )


def rth_hourly(minutes: pd.DataFrame) -> pd.DataFrame:
    """RTH hourly bars from 09:30 (the last one 16:30-17:00), open and close per bar, indexed
    by (day, slot)."""
    rth = rth_minutes(minutes)
    stamps = rth["timestamp"]
    rth["slot"] = (stamps.dt.hour * 60 + stamps.dt.minute - RTH_START) // 60
    return rth.groupby(["day", "slot"]).agg(open=("open", "first"), close=("close", "last"))


def sample_rth_days(settings: EngineSettings, symbol: str = "NQ") -> pd.DataFrame:
    """One RTH bar per trading date of the sample's minute file (whose ``minute`` column is
    the exchange's clock): open, high, low, close, indexed by the trading date."""
    columns = ["open", "high", "low", "close", "trading_date", "minute"]
    bars = pd.read_parquet(data_path(symbol, settings), columns=columns)
    rth = bars[(bars["minute"] >= RTH_START) & (bars["minute"] < RTH_END)]
    return rth.groupby("trading_date").agg(
        open=("open", "first"), high=("high", "max"), low=("low", "min"), close=("close", "last")
    )
