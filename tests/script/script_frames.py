"""Hand-made frames and contexts for the Barb Script tests (no data files, no network)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.errors import UnknownSession
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate_aggregate
from barb.script.parser import parse_expression

SESSIONS = ("RTH", "ETH")


def make_daily(rows: int = 60, seed: int = 7, gaps: bool = True) -> pd.DataFrame:
    """Daily bars on business days with a random walk; a few missing closes if ``gaps``."""
    rng = np.random.default_rng(seed)
    timestamp = pd.bdate_range("2024-01-01", periods=rows)
    close = 100 + np.cumsum(rng.normal(0, 2, rows)).round(2)
    open_ = (close + rng.normal(0, 1, rows)).round(2)
    high = np.maximum(open_, close) + rng.uniform(0, 3, rows).round(2)
    low = np.minimum(open_, close) - rng.uniform(0, 3, rows).round(2)
    volume = rng.integers(0, 5, rows) * 100  # zeros included, for division by zero
    frame = pd.DataFrame(
        {
            "timestamp": timestamp,
            "open": open_,
            "high": high,
            "low": low,
            "close": close,
            "volume": volume.astype(np.int64),
        }
    )
    if gaps:
        frame.loc[[i for i in (3, 17) if i < rows], "close"] = np.nan
    frame["range"] = frame["high"] - frame["low"]
    frame["trading_date"] = frame["timestamp"]
    return frame


def make_intraday() -> pd.DataFrame:
    """Hourly ETH-style bars from Sunday 2024-03-10 18:00 to Tuesday 16:00 (wall clock)."""
    stamps = pd.date_range("2024-03-10 18:00", "2024-03-12 16:00", freq="h")
    stamps = stamps[(stamps.hour != 17)]
    n = len(stamps)
    close = 100 + np.arange(n, dtype=float)
    frame = pd.DataFrame(
        {
            "timestamp": stamps,
            "open": close - 0.5,
            "high": close + 1,
            "low": close - 1,
            "close": close,
            "volume": np.full(n, 10, dtype=np.int64),
        }
    )
    frame["range"] = frame["high"] - frame["low"]
    # The trading date is the date the Globex day ends: 18:00 and later count for the next day.
    frame["trading_date"] = (frame["timestamp"] + pd.Timedelta(hours=6)).dt.normalize()
    return frame


def session_bars_for(frame: pd.DataFrame):
    """A fake session_bars: RTH = the frame's daily bars shifted by 1; ETH = by 2."""

    def session_bars(name: str) -> pd.DataFrame:
        if name.upper() not in SESSIONS:
            raise UnknownSession(f"Session '{name}' does not exist. Available: RTH, ETH.")
        offset = 1.0 if name.upper() == "RTH" else 2.0
        daily = frame.groupby("trading_date").agg(
            open=("open", "first"),
            high=("high", "max"),
            low=("low", "min"),
            close=("close", "last"),
            volume=("volume", "sum"),
        )
        daily = daily.astype(np.float64) + offset
        return daily.iloc[1:]  # the first date has no session bar: NaN expected there

    return session_bars


def make_context(frame: pd.DataFrame, timeframe: str = "daily", step: str = "map") -> EvalContext:
    return EvalContext(
        frame=frame, timeframe=timeframe, session_bars=session_bars_for(frame), step=step
    )


def tiny_context(**columns) -> EvalContext:
    """A select-step context of ``columns``, one minute bar each from 2024-01-02 09:30: frames
    small enough to read an aggregate's answer off."""
    frame = pd.DataFrame(columns)
    frame["timestamp"] = pd.date_range("2024-01-02 09:30", periods=len(frame), freq="min")
    frame["trading_date"] = frame["timestamp"].dt.normalize()
    return make_context(frame, step="select")


def aggregate(ctx: EvalContext, text: str, by: list[str] | None = None):
    """The aggregate ``text`` over ``ctx``, by the columns ``by``."""
    return evaluate_aggregate(parse_expression(text), ctx, by)
