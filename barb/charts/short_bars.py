"""The group of the session's short last bar on a chart of groups by a time of day (16:30-17:00
of hourly RTH bars, ranked against full hours): which group it is, so the chart names it
``16:30 (30 min)`` and notes its length. Found by the engine's ``barb.short_bars``, which
warns the model of the same group.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from barb.errors import BarbError
from barb.result import Result, result_instrument
from barb.short_bars import session_short_bar, short_bar_rows


@dataclass(frozen=True)
class ShortBar:
    """The group (a position in the table) that holds only the short bar, and its length."""

    at: int
    minutes: int
    # The session's end, where the short bar stops: "17:00".
    end: str


def short_bar(result: Result, table: pd.DataFrame, by: list[str]) -> ShortBar | None:
    """The group of ``table`` whose bars are all the session's short last bar; None when the
    bars fill the session evenly or the groups are not the bars' times."""
    meta = result.metadata
    if meta is None or len(by) != 1:
        return None
    hours, zone = meta.session_hours, None
    if hours is None:  # a window ('09:45-12:00'): its hours, on its own clock
        instrument = result_instrument(result)
        try:
            window = instrument.session(meta.session) if instrument is not None else None
        except BarbError:
            window = None
        hours, zone = (window.hours, window.zone) if window is not None else (None, None)
    short = session_short_bar(meta.timeframe, hours, zone)
    if short is None:
        return None
    rows = short_bar_rows(short, table, by[0], result.query)
    found = np.flatnonzero(rows) if rows is not None else []
    return ShortBar(int(found[0]), short.minutes, short.end) if len(found) == 1 else None
