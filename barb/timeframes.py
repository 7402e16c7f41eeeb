"""The one registry of timeframes: what `from` accepts and how each is built and labelled.

Intraday timeframes are buckets of minutes aligned to the session open; calendar timeframes
(weekly and longer) are built from whole days of daily bars. Everything that used to keep its
own list of timeframes (the query's shape, the frame builder, the interpreter, the reference
text, the plan's wording) reads this table.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from barb.i18n import N_, text

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
    # The catalog key of its wording in the plan shown before Run ("daily bars").
    words: str = ""
    # The catalog key of its short name in a chart's scope line ("daily", "дневные").
    short: str = ""

    @property
    def intraday(self) -> bool:
        return self.kind == "intraday"

    @property
    def calendar(self) -> bool:
        """Weekly and longer: built from whole days of daily bars."""
        return self.kind == "calendar"


def _intraday(
    name: str, minutes: int, aliases: tuple[str, ...], words: str, short: str
) -> Timeframe:
    return Timeframe(name, "intraday", minutes, aliases, "timestamp", words, short)


TIMEFRAMES: dict[str, Timeframe] = {
    tf.name: tf
    for tf in (
        _intraday("1m", 1, ("1min",), N_("timeframe.1m"), N_("timeframe_short.1m")),
        _intraday("5m", 5, ("5min",), N_("timeframe.5m"), N_("timeframe_short.5m")),
        _intraday("15m", 15, ("15min",), N_("timeframe.15m"), N_("timeframe_short.15m")),
        _intraday("30m", 30, ("30min",), N_("timeframe.30m"), N_("timeframe_short.30m")),
        _intraday("1h", 60, ("60m", "60min"), N_("timeframe.1h"), N_("timeframe_short.1h")),
        _intraday("2h", 120, (), N_("timeframe.2h"), N_("timeframe_short.2h")),
        _intraday("4h", 240, (), N_("timeframe.4h"), N_("timeframe_short.4h")),
        Timeframe(
            "daily",
            "daily",
            None,
            ("1d", "d", "day"),
            "date",
            N_("timeframe.daily"),
            N_("timeframe_short.daily"),
        ),
        Timeframe(
            "weekly",
            "calendar",
            None,
            ("1w", "w", "week"),
            "week",
            N_("timeframe.weekly"),
            N_("timeframe_short.weekly"),
        ),
        Timeframe(
            "monthly",
            "calendar",
            None,
            ("month",),
            "month",
            N_("timeframe.monthly"),
            N_("timeframe_short.monthly"),
        ),
        Timeframe(
            "quarterly",
            "calendar",
            None,
            ("quarter",),
            "quarter",
            N_("timeframe.quarterly"),
            N_("timeframe_short.quarterly"),
        ),
        Timeframe(
            "yearly",
            "calendar",
            None,
            ("year",),
            "year",
            N_("timeframe.yearly"),
            N_("timeframe_short.yearly"),
        ),
    )
}


def timeframe_words(timeframe: Timeframe, lang: str) -> str:
    """How the plan names the bars of ``timeframe`` in ``lang``: "daily bars"."""
    return text("barb", timeframe.words, lang)


def timeframe_short(timeframe: Timeframe, lang: str) -> str:
    """The short name of ``timeframe`` in ``lang``: "daily", "1h"; "дневные", "1 ч"."""
    return text("barb", timeframe.short, lang)


_BY_SPELLING: dict[str, Timeframe] = {
    spelling: tf for tf in TIMEFRAMES.values() for spelling in (tf.name, *tf.aliases)
}

INTRADAY: tuple[str, ...] = tuple(name for name, tf in TIMEFRAMES.items() if tf.intraday)
DAILY_AND_LONGER: tuple[str, ...] = tuple(n for n, tf in TIMEFRAMES.items() if not tf.intraday)


def resolve_timeframe(text: str) -> Timeframe | None:
    """The timeframe a `from` value names, in any accepted spelling; None if none."""
    return _BY_SPELLING.get(text.strip().lower())


def case_ambiguity(text: str) -> str | None:
    """Why a `from` spelling whose case changes its meaning is refused, or None.

    Barb reads `from` in any case ("1H", "D", "W"), but an upper-case M means a month in
    TradingView and pandas, and "1M" for "monthly returns" gave 114,195 one-minute returns
    (p34c): "1M", "5M" and "60M" name no timeframe until it is said which.

    >>> print(case_ambiguity("1M"))
    '1M' is ambiguous: "1m" is 1-minute bars, "monthly" is one bar per month
    """
    written = text.strip()
    tf = resolve_timeframe(written)
    if tf is None or not tf.intraday or not written.endswith("M"):
        return None
    return (
        f"'{written}' is ambiguous: \"{written.lower()}\" is {tf.minutes}-minute bars, "
        '"monthly" is one bar per month'
    )


def timeframe(name: str) -> Timeframe:
    """A timeframe by its canonical name (the interpreter's and frame builder's lookup)."""
    return TIMEFRAMES[name]


def session_without_one(tf: Timeframe, default_session: str) -> str:
    """The session a query of ``tf`` bars that names none reads: intraday bars the whole
    trading day (ETH), daily and longer the instrument's default session. The plan shown
    before Run names it by this too: it said the default (RTH) over minute bars of ETH."""
    return "ETH" if tf.intraday else default_session


def finest_fit(step: int, offsets: Iterable[int]) -> str | None:
    """The longest intraday timeframe shorter than ``step`` (and dividing it) whose bars
    begin and end on every one of ``offsets`` (minutes from the session's open: a 13:15 close
    on a 09:30 open, 225, gives 15m); None when only 1m does."""
    edges = list(offsets)
    fits = [
        tf
        for tf in TIMEFRAMES.values()
        if tf.minutes is not None
        and 1 < tf.minutes < step
        and step % tf.minutes == 0
        and all(edge % tf.minutes == 0 for edge in edges)
    ]
    return max(fits, key=lambda tf: tf.minutes or 0).name if fits else None
