"""The one registry of timeframes: what `from` accepts and how each is built and labelled.

Intraday timeframes are buckets of minutes aligned to the session open; calendar timeframes
(weekly and longer) are built from whole days of daily bars. Everything that used to keep its
own list of timeframes (the query's shape, the frame builder, the interpreter, the reference
text, the plan's wording) reads this table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["intraday", "daily", "calendar"]


@dataclass(frozen=True)
class Timeframe:
    name: str
    kind: Kind
    # Bucket length for intraday timeframes; None for daily and longer.
    minutes: int | None = None
    # Other spellings accepted in `from` ("1min", "d", "week").
    aliases: tuple[str, ...] = ()
    # How one bar is named where a person reads it (summary, CSV, chart).
    label: str = "timestamp"
    # English and Russian wording in the plan shown before Run.
    words: tuple[str, str] = ("", "")

    @property
    def intraday(self) -> bool:
        return self.kind == "intraday"

    @property
    def calendar(self) -> bool:
        """Weekly and longer: built from whole days of daily bars."""
        return self.kind == "calendar"


def _intraday(name: str, minutes: int, aliases: tuple[str, ...], en: str, ru: str) -> Timeframe:
    return Timeframe(name, "intraday", minutes, aliases, "timestamp", (en, ru))


TIMEFRAMES: dict[str, Timeframe] = {
    tf.name: tf
    for tf in (
        _intraday("1m", 1, ("1min",), "1-minute bars", "минутные бары"),
        _intraday("5m", 5, ("5min",), "5-minute bars", "5-минутные бары"),
        _intraday("15m", 15, ("15min",), "15-minute bars", "15-минутные бары"),
        _intraday("30m", 30, ("30min",), "30-minute bars", "30-минутные бары"),
        _intraday("1h", 60, ("60m", "60min"), "1-hour bars", "часовые бары"),
        _intraday("2h", 120, (), "2-hour bars", "2-часовые бары"),
        _intraday("4h", 240, (), "4-hour bars", "4-часовые бары"),
        Timeframe(
            "daily", "daily", None, ("1d", "d", "day"), "date", ("daily bars", "дневные бары")
        ),
        Timeframe(
            "weekly",
            "calendar",
            None,
            ("1w", "w", "week"),
            "week",
            ("weekly bars", "недельные бары"),
        ),
        Timeframe(
            "monthly", "calendar", None, ("month",), "month", ("monthly bars", "месячные бары")
        ),
        Timeframe(
            "quarterly",
            "calendar",
            None,
            ("quarter",),
            "quarter",
            ("quarterly bars", "квартальные бары"),
        ),
        Timeframe("yearly", "calendar", None, ("year",), "year", ("yearly bars", "годовые бары")),
    )
}
_BY_SPELLING: dict[str, Timeframe] = {
    spelling: tf for tf in TIMEFRAMES.values() for spelling in (tf.name, *tf.aliases)
}

INTRADAY: tuple[str, ...] = tuple(name for name, tf in TIMEFRAMES.items() if tf.intraday)
DAILY_AND_LONGER: tuple[str, ...] = tuple(n for n, tf in TIMEFRAMES.items() if not tf.intraday)


def resolve_timeframe(text: str) -> Timeframe | None:
    """The timeframe a `from` value names, in any accepted spelling; None if none."""
    return _BY_SPELLING.get(text.strip().lower())


def timeframe(name: str) -> Timeframe:
    """A timeframe by its canonical name (the interpreter's and frame builder's lookup)."""
    return TIMEFRAMES[name]
