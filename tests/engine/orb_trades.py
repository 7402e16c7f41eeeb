"""The opening-range breakout the stop_and_target concept trades, a day at a time with
pandas: the oracle its tests hold Barb's answers against (never Barb's code)."""

from __future__ import annotations

import numpy as np
import pandas as pd

OPENING_END = 585  # 09:45, minutes into the day


def orb_trades(bars: pd.DataFrame, close_minute: int) -> pd.DataFrame:
    """Each day's long on the first minute from 09:45 whose high breaks the 09:30-09:45
    high: out at the range's low or one range above, whichever a minute from the entry on
    reaches first (the stop when one minute reaches both), else at the last close before
    ``close_minute``. The days without a break are left out. ``bars``: minutes with ``day``
    and ``minute``; one row per trade: day, kind (stop, target, close), pnl."""
    trades = []
    for day, bars_of_day in bars[bars["minute"] < close_minute].groupby("day"):
        minute = bars_of_day["minute"].to_numpy()
        opening, rest = bars_of_day[minute < OPENING_END], bars_of_day[minute >= OPENING_END]
        high, low = opening["high"].max(), opening["low"].min()
        target = high + (high - low)
        broke = np.flatnonzero(rest["high"].to_numpy() > high)
        if not len(broke):
            continue
        after = rest.iloc[broke[0] :]
        stops = np.flatnonzero(after["low"].to_numpy() <= low)
        hits = np.flatnonzero(after["high"].to_numpy() >= target)
        stop = stops[0] if len(stops) else np.inf
        hit = hits[0] if len(hits) else np.inf
        if np.isfinite(stop) and stop <= hit:
            kind, pnl = "stop", low - high
        elif np.isfinite(hit):
            kind, pnl = "target", target - high
        else:
            kind, pnl = "close", bars_of_day["close"].iloc[-1] - high
        trades.append((day, kind, pnl))
    return pd.DataFrame(trades, columns=["day", "kind", "pnl"])
