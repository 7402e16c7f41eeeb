"""What an expression is evaluated against."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

# Timeframes shorter than a day, in minutes; the others are calendar periods.
INTRADAY_MINUTES: dict[str, int] = {
    "1m": 1,
    "5m": 5,
    "15m": 15,
    "30m": 30,
    "1h": 60,
    "2h": 120,
    "4h": 240,
}
PERIOD_TIMEFRAMES: tuple[str, ...] = ("daily", "weekly", "monthly", "quarterly", "yearly")
TIMEFRAMES: tuple[str, ...] = (*INTRADAY_MINUTES, *PERIOD_TIMEFRAMES)


@dataclass
class EvalContext:
    """The rows an expression runs over, and how to reach other sessions' bars.

    ``frame`` has a RangeIndex and at least: ``timestamp`` (datetime64[ns], wall clock in the
    instrument's timezone: bar open for intraday, period start for daily and longer),
    ``open``, ``high``, ``low``, ``close``, ``volume``, ``range`` and ``trading_date``
    (datetime64[ns] at midnight; for weekly and longer bars, the last trading date in the
    bar), plus columns added by ``map`` and ``join``.
    """

    frame: pd.DataFrame
    timeframe: str
    # Session name -> that session's daily bars indexed by trading_date
    # (columns open, high, low, close, volume); raises UnknownSession.
    session_bars: Callable[[str], pd.DataFrame]
    step: str = "map"

    @property
    def intraday(self) -> bool:
        return self.timeframe in INTRADAY_MINUTES
