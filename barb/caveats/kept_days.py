"""The daily rows a first stage kept as the short-session checks read them: their trading
dates, and which of them a session or window traded short on. Built once per run by the
interpreter and handed to each check that asks (``short_group_caveat``, then
``part_day_share_caveat`` in its place), where each had converted the dates and searched
the short ones again (a fifth of their cost on "RTH range by weekday")."""

from __future__ import annotations

from functools import cached_property

import numpy as np
import pandas as pd

from barb.frames import Dataset
from barb.short_days import short_days


class KeptDays:
    """``kept``'s trading dates (one row per date: daily rows) and their short sessions,
    each read on first use."""

    def __init__(self, dataset: Dataset, kept: pd.DataFrame | None) -> None:
        self.dataset = dataset
        self.kept = kept
        self._short: dict[str, np.ndarray] = {}

    def of(self, kept: pd.DataFrame | None) -> bool:
        """Whether these are ``kept``'s days (a check handed other rows reads its own)."""
        return kept is self.kept

    @cached_property
    def days(self) -> np.ndarray:
        """Each row's trading date, datetime64[D]."""
        assert self.kept is not None
        return self.kept["trading_date"].to_numpy().astype("datetime64[D]")

    def short(self, window: str) -> np.ndarray:
        """Which rows are a short session of ``window`` (``barb.short_days.short_days``)."""
        found = self._short.get(window)
        if found is None:
            found = self._short[window] = short_days(self.dataset, window, self.days)
        return found


def unique_days(dates: np.ndarray) -> np.ndarray:
    """``dates``' distinct days (datetime64[D]), sorted: as ``np.unique``, whose hashing
    took 0.3 ms over 4,600 daily rows (numpy 2.3) where these take 5-30 us (already in
    order, as daily rows kept in time are, they are taken as they are)."""
    days = dates.astype("datetime64[D]")
    if len(days) < 2 or bool((days[1:] > days[:-1]).all()):
        return days
    days = np.sort(days)
    return days[np.concatenate(([True], days[1:] != days[:-1]))]
