"""Times of day ordered as text over a session that crosses midnight.

time() gives 'HH:MM', which orders 00:00 first. Over OVERNIGHT (18:00-09:30) a trading day
runs from 18:00 through midnight to 09:30, so "did the high come before the low" written as
``high_time < low_time`` (each day's ``arg_max(time(), high)`` and ``arg_min(time(), low)``)
read a 18:57 high as after a 07:33 low: Barb printed high_first 0.4517 with nothing said,
where the session's order gives 0.4903 (166 of 259 days read the other way). Sorting by such
a column lists 00:05 as the earliest high, before the day's 18:00 ones.

Reading them in the session's order instead would break the clock hours a query writes on
purpose (``time() >= '18:00'``, the evening of an ETH day; ``time() >= '20:00' or time() <
'02:00'``), so the text order stays, a clock written in the query is read as written, and
where two columns of times are compared or one is sorted the evaluator says where the text
order disagrees with the session's, on the rows it was read over, with the minutes counted
from the open that the reference writes under TIME OF DAY AS A NUMBER. max() and min() of
times of day, which no clock written in the query orders, read the session's order
(``in_session_order``): "the latest time the day's high was made" over ETH is 16:59.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from barb.instruments import MINUTES_PER_DAY, format_clock
from barb.script import ast

if TYPE_CHECKING:
    from barb.script.query import SortKey

ORDERING = {
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
}


@dataclass(frozen=True)
class NightSession:
    """Intraday bars of a session that crosses midnight: its name ('OVERNIGHT', or a window
    '20:00-02:00'), its hours and its open as a minute of the day (1080)."""

    name: str
    hours: str
    open: int

    @property
    def label(self) -> str:
        """``OVERNIGHT (18:00-09:30)``; a window is its own hours."""
        return self.name if self.name == self.hours else f"{self.name} ({self.hours})"

    @property
    def open_text(self) -> str:
        return clock(self.open)

    def since_open(self, minutes: Any) -> Any:
        """Minutes of the day as minutes after the open: the session's own order."""
        return np.mod(np.asarray(minutes, dtype="float64") - self.open, MINUTES_PER_DAY)

    @property
    def expression(self) -> str:
        """The reference's minutes counted from the open, negative before midnight."""
        hour = self.open // 60
        return f"if(hour() >= {hour}, hour() * 60 + minute() - 1440, hour() * 60 + minute())"

    def instead(self) -> str:
        """What to compare instead (the second sentence of a warning)."""
        return (
            f"Count minutes from the {self.open_text} open instead (TIME OF DAY AS A NUMBER): "
            f"{self.expression} in place of time()."
        )


def clock(minute: float) -> str:
    """A minute of the day (float, from an array) as the clock reads it: 1137.0 → 18:57."""
    return format_clock(int(minute) % MINUTES_PER_DAY)


@dataclass(frozen=True)
class Clocks:
    """Times of day as codes into their distinct minutes of the day: time()'s 1,440
    categories are read once, however many bars."""

    values: np.ndarray  # each code's minute of the day (int64)
    codes: np.ndarray  # each row's code, -1 where missing

    def at(self, row: int) -> int:
        return int(self.values[self.codes[row]])


def clocks(value: Any) -> Clocks | None:
    """A column of 'HH:MM' texts (time()'s categories, or text) as Clocks; None for anything
    else (a clock written in the query is read as written)."""
    if not isinstance(value, pd.Series) or not len(value):
        return None
    if isinstance(value.dtype, pd.CategoricalDtype):
        texts, codes = pd.Index(value.dtype.categories), value.cat.codes.to_numpy()
    elif value.dtype == object or isinstance(value.dtype, pd.StringDtype):
        codes, texts = pd.factorize(value)
        texts = pd.Index(texts)
    else:
        return None
    parts = texts.astype(str).str.extract(r"^([01]\d|2[0-3]):([0-5]\d)$")
    if not len(texts) or parts.isna().any(axis=None):
        return None
    minutes = (parts[0].astype(int) * 60 + parts[1].astype(int)).to_numpy(dtype=np.int64)
    return Clocks(minutes, codes.astype(np.int64))


def in_session_order(value: pd.Series, night: NightSession | None) -> pd.Series:
    """Times of day ('HH:MM') as an ordered categorical in the session's order, for max()
    and min(): the latest of an ETH day's high times (18:00 open) is 16:59, not 23:59, and
    its earliest 18:05, not 00:30, as a trader reads "earliest" (first in the trading day).
    A session within one day keeps the clock's order. ``value`` must be times of day
    (``clocks``)."""
    found = clocks(value)
    assert found is not None
    start = 0 if night is None else night.open
    minutes = np.arange(MINUTES_PER_DAY)
    order = (minutes + start) % MINUTES_PER_DAY  # category i: the i-th minute after the open
    codes = np.where(found.codes >= 0, ((found.values - start) % MINUTES_PER_DAY)[found.codes], -1)
    texts = [format_clock(int(m)) for m in order]
    ordered = pd.Categorical.from_codes(codes, categories=texts, ordered=True)
    return pd.Series(ordered, index=value.index, name=value.name)


@dataclass(frozen=True)
class TextComparison:
    """``left op right`` of times of day, as text, over a session's rows: where it reads
    otherwise than the session's order does."""

    night: NightSession
    text: str  # the comparison as written: "high_time < low_time"
    left: Clocks
    right: Clocks
    against: np.ndarray  # rows where the text order and the session's differ
    known: np.ndarray  # rows with a time on both sides

    @classmethod
    def of(
        cls, night: NightSession, node: ast.Compare, left: Any, right: Any
    ) -> TextComparison | None:
        """The comparison when both sides are columns of times of day. A clock written in
        the query ("time() >= '18:00'", the evening of an ETH day) says which hours it means
        in the order it is written: split by it, the evening is the evening, and nothing is
        said (p31c W1: the Asian/European/US split of ETH was told to count minutes)."""
        if node.op not in ORDERING:
            return None
        a, b = clocks(left), clocks(right)
        if a is None or b is None:
            return None
        op = ORDERING[node.op]
        x, y = a.values[a.codes], b.values[b.codes]
        known = (a.codes >= 0) & (b.codes >= 0)
        against = (op(x, y) != op(night.since_open(x), night.since_open(y))) & known
        return cls(night, node.to_text(), a, b, against, known)

    def caveat(self, rows: np.ndarray | None = None) -> str | None:
        """The warning when some of ``rows`` (a mask; None: all) read against the session's
        order: how many, with the first such pair of times."""
        against = self.against if rows is None else self.against & rows
        if not against.any():
            return None
        counted = int(self.known.sum() if rows is None else (self.known & rows).sum())
        at = int(against.argmax())  # the first row said
        a, b = self.left.at(at), self.right.at(at)
        earlier = self.night.since_open(a) < self.night.since_open(b)
        before, after = ("before", "after") if earlier else ("after", "before")
        return (
            f'"{self.text}" compares times of day as text, 00:00 first, though '
            f"{self.night.label} opens at {self.night.open_text}: it reads "
            f"{int(against.sum()):,} of {counted:,} rows against the session's order "
            f"({clock(a)} comes {before} {clock(b)} in the session, {after} it as text). "
            + self.night.instead()
        )


def sort_caveat(
    night: NightSession | None, table: pd.DataFrame | None, sort: Sequence[SortKey]
) -> list[str]:
    """The warning when a stage sorts by times of day as text and the session's order would
    list them otherwise: '"sort": "high_time asc" … 00:05 is listed before 18:00'."""
    if night is None or table is None or not sort or sort[0].column not in table.columns:
        return []
    key = sort[0]
    found = clocks(table[key.column])
    if found is None:
        return []
    present = np.unique(found.values[found.codes[found.codes >= 0]])  # the text's order
    by_session = present[np.argsort(night.since_open(present), kind="stable")]
    if key.descending:
        present, by_session = present[::-1], by_session[::-1]
    differ = np.flatnonzero(present != by_session)
    if not len(differ):
        return []
    listed, due = present[differ[0]], by_session[differ[0]]
    way = "later" if key.descending else "earlier"
    return [
        f'"sort": "{key.to_text()}" orders times of day as text, 00:00 first, though '
        f"{night.label} opens at {night.open_text}: {clock(listed)} is listed before "
        f"{clock(due)}, which comes {way} in the session. " + night.instead()
    ]
