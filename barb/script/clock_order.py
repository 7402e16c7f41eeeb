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

A column of times against one clock is said too (``ClockComparison``): "did the Globex high
come before the cash open", ``mean(hi < '09:30')`` over ES ETH 2020-2025, printed 0.2151
where the session's order gives 0.384, the 18:00-23:59 highs read as after 09:30; a lone
``"where": "time() < '09:30'"`` left those bars out. Not said where the clock is written on
purpose: two clocks on the same times (a window, ``time() >= '20:00' or time() < '02:00'``,
or the evening split from the morning, ``if(time() >= '18:00', 'eve', if(time() < '03:00',
…))``), a clock at the open or in hours the session does not trade (its order keeps all or
none there), and the bars' own hours from an evening clock on (``time() >= '20:00'``: the
evening to midnight, as the reference's ``time() >= '18:00'``). The time of an event from an
evening clock on is said (``hi >= '20:00'``, each day's high: "at or after 20:00 in the
session"), and a bar's own clock gives both readings, the clock hours it keeps and the
session's form (``time() < '03:00'``: midnight to 3 am, or the session to 03:00).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from barb.instruments import MINUTES_PER_DAY, format_clock, parse_clock
from barb.script import ast

if TYPE_CHECKING:
    from barb.script.query import SortKey

ORDERING = {
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
}
MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
# "if you meant before 03:00 in the session": each comparison's words.
_MEANT = {"<": "before", "<=": "up to", ">": "after", ">=": "from"}
# A clock as a query writes it: '09:30'.
_CLOCK_TEXT = r"^([01]\d|2[0-3]):([0-5]\d)$"


@dataclass(frozen=True)
class NightSession:
    """Intraday bars of a session that crosses midnight: its name ('OVERNIGHT', or a window
    '20:00-02:00'), its hours, its open as a minute of the day (1080) and its length in
    minutes (930)."""

    name: str
    hours: str
    open: int
    length: int

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


def minutes_form(night: NightSession | None) -> str:
    """A bar's time of day as a number to average or subtract (TIME OF DAY AS A NUMBER):
    minutes of the day, counted from the open over a session that crosses midnight."""
    return "hour() * 60 + minute()" if night is None else night.expression


def as_minutes_hint(night: NightSession | None, taken: str, zone: str | None = None) -> str:
    """Where times of day or bar times were given for a number: the minutes that are one,
    mapped over the bars and taken where ``taken`` ('time()', 'timestamp') was; of
    ``zone``'s clock where the times were time('MSK')'s."""
    form = minutes_form(night) if zone is None else f"hour('{zone}') * 60 + minute('{zone}')"
    return (
        f'count minutes instead (TIME OF DAY AS A NUMBER): map {{"t": "{form}"}} '
        f"over the bars and take t where {taken} was taken, e.g. arg_max(t, high)"
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
    if not isinstance(value, pd.Series):
        return None
    # time()'s categories say it holds times of day even with no row (a where that kept
    # none: "min(time())" was refused as text).
    if isinstance(value.dtype, pd.CategoricalDtype):
        texts, codes = pd.Index(value.dtype.categories), value.cat.codes.to_numpy()
    elif value.dtype == object or isinstance(value.dtype, pd.StringDtype):
        codes, texts = pd.factorize(value)
        texts = pd.Index(texts)
    else:
        return None
    parts = texts.astype(str).str.extract(_CLOCK_TEXT)
    if not len(texts) or parts.isna().any(axis=None):
        return None
    minutes = (parts[0].astype(int) * 60 + parts[1].astype(int)).to_numpy(dtype=np.int64)
    return Clocks(minutes, codes.astype(np.int64))


def bar_clocks(value: Any, frame: pd.DataFrame) -> bool:
    """Whether ``value`` (times of day) is each row's own bar's clock, time() over the bars
    as it is or mapped ({"t": "time()"}), rather than the time of an event: each day's
    ``arg_max(time(), high) as hi`` in a second stage, or one mapped from it. Read from the
    values, so a name does not decide: 'evening from 20:00' is an idiom for a bar, and a
    question of session order for the day's high."""
    found = clocks(value)
    if found is None or "minute_of_day" not in frame.columns:
        return False
    own = frame["minute_of_day"]
    if not value.index.equals(frame.index):
        own = own.reindex(value.index)
    known = found.codes >= 0
    if not known.any():
        return False
    return bool((found.values[found.codes[known]] == own.to_numpy()[known]).all())


def names_bar_clock(node: ast.Compare, columns: frozenset[str]) -> bool:
    """Whether the times compared in ``node`` (``t >= '20:00'``) are a column of
    ``columns``: each listed bar's own time(), in a second stage whose rows carry no minute
    of the day for ``bar_clocks`` to read."""
    times = node.right if isinstance(node.left, ast.String) else node.left
    return isinstance(times, ast.Column) and times.name in columns


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


def _written_clock(node: ast.Node) -> tuple[str, str, int] | None:
    """``times op 'HH:MM'`` as (the times' text, op with them on the left, the clock's minute
    of the day); None for any other node."""
    if not isinstance(node, ast.Compare) or node.op not in ORDERING:
        return None
    times, op, written = node.left, node.op, node.right
    if isinstance(times, ast.String):
        times, op, written = node.right, MIRRORED[node.op], node.left
    if not isinstance(written, ast.String) or isinstance(times, ast.String):
        return None
    if not re.match(_CLOCK_TEXT, written.value):
        return None
    return times.to_text(), op, parse_clock(written.value)


def clock_windows(expr: ast.Node) -> frozenset[str]:
    """The times an expression compares with two or more clocks: a window written on purpose
    (``time() >= '20:00' or time() < '02:00'``; ``if(time() >= '18:00', 'eve',
    if(time() < '03:00', 'night', 'early'))``, whose second clock reads only the rows the
    first left). ``frozenset({'time()'})`` for both."""
    written = [found[0] for found in map(_written_clock, ast.walk(expr)) if found is not None]
    return frozenset(times for times in written if written.count(times) > 1)


@dataclass(frozen=True)
class ClockComparison:
    """``times op 'HH:MM'``, a column of times of day against one clock, as text, over a
    session's rows: where it reads otherwise than the session's order does. Over ETH,
    ``hi < '09:30'`` reads an 18:57 high as after 09:30, though it came before it."""

    night: NightSession
    text: str  # the comparison as written: "hi < '09:30'"
    times: str  # the column's text: "hi"
    op: str  # with the times on the left
    clock: int  # the clock's minute of the day
    values: Clocks
    against: np.ndarray
    known: np.ndarray
    decides: bool  # the whole of a where: the rows against are left out or kept
    own: bool  # each row's own bar's clock (time() over the bars), not a time of an event

    @classmethod
    def of(
        cls,
        night: NightSession,
        node: ast.Compare,
        value: Any,
        windows: frozenset[str],
        *,
        decides: bool = False,
        own: Callable[[], bool] = lambda: False,
    ) -> ClockComparison | None:
        """The comparison when ``value`` (the times' side, evaluated) is times of day and the
        clock reads otherwise in the session's order, unless it is written on purpose (the
        module's docstring): None then. ``own`` (asked only past the idioms, as it reads
        every row): the times are each row's own bar's clock,
        whose evening from a clock on is an idiom (``time() >= '20:00'``); a time of an
        event (each day's ``arg_max(time(), high) as hi``) from an evening clock on is not:
        ``hi >= '20:00'`` over ETH is "the high came at or after 20:00 in the session" and
        kept 292 of NQ's 4,656 days, where the session's order gives 4,153 (p43f W1)."""
        written = _written_clock(node)
        if written is None or written[0] in windows:
            return None
        times, op, minute = written
        after = night.since_open(minute)
        if after == 0 or after >= night.length:  # the session's order keeps all or none
            return None
        bar_clock = own()
        if bar_clock and op in (">", ">=") and minute >= night.open:  # the evening to midnight
            return None
        found = clocks(value)
        if found is None:
            return None
        compare = ORDERING[op]
        differs = compare(found.values, minute) != compare(night.since_open(found.values), after)
        known = found.codes >= 0
        against = differs[found.codes] & known
        return cls(
            night, node.to_text(), times, op, minute, found, against, known, decides, bar_clock
        )

    @property
    def session_form(self) -> str:
        """The comparison in the session's order, as clocks: "hi >= '18:00' or hi < '09:30'"
        (from the open to 09:30); "hi > '09:30' and hi < '18:00'" (from 09:30 to the close);
        "hi >= '20:00' or hi < '17:00'" (from an evening clock through midnight to the
        close)."""
        open_, clock_ = f"'{self.night.open_text}'", f"'{clock(self.clock)}'"
        own = f"{self.times} {self.op} {clock_}"
        morning = self.clock < self.night.open  # after midnight: the text order wraps there
        if self.op in ("<", "<="):
            return f"{self.times} >= {open_} {'or' if morning else 'and'} {own}"
        if morning:
            return f"{own} and {self.times} < {open_}"
        return f"{own} or {self.times} < '{clock(self.night.open + self.night.length)}'"

    def caveat(self, rows: np.ndarray | None = None) -> str | None:
        """The warning when some of ``rows`` (a mask; None: all) read against the session's
        order: how many, at which times, and the form that reads the session's order."""
        against = self.against if rows is None else self.against & rows
        if not against.any():
            return None
        counted = int(self.known.sum() if rows is None else (self.known & rows).sum())
        read = self.values.values[np.unique(self.values.codes[against])]
        read = read[np.argsort(self.night.since_open(read), kind="stable")]
        at = clock(read[0]) if len(read) == 1 else f"{clock(read[0])}-{clock(read[-1])}"
        earlier = bool(self.night.since_open(read[0]) < self.night.since_open(self.clock))
        before, after = ("before", "after") if earlier else ("after", "before")
        n = int(against.sum())
        if self.decides:
            kept = ORDERING[self.op](read[0], self.clock)  # as the text reads them
            reads = f"it {'keeps' if kept else 'leaves out'} {n:,} of {counted:,} rows"
        else:
            reads = f"it reads {n:,} of {counted:,} rows against the session's order"
        if self.own:
            # A bar's own clock may mean the clock hours ("volume from midnight to 3 am",
            # time() < '03:00' over OVERNIGHT) as well as the session's: both readings are
            # given, neither steered to (p43f M4).
            verb = "keeps" if self.decides else "reads"
            return (
                f'"{self.text}" compares times of day as text, 00:00 first: it {verb} the '
                f"clock hours {self.clock_hours}, so {reads}, those at {at}, which come "
                f"{before} {clock(self.clock)} in {self.night.label}; if you meant "
                f"{_MEANT[self.op]} {clock(self.clock)} in the session, write "
                f"{self.session_form}."
            )
        return (
            f'"{self.text}" compares times of day as text, 00:00 first, though '
            f"{self.night.label} opens at {self.night.open_text}: {reads}, those at {at}, "
            f"which come {before} {clock(self.clock)} in the session ({after} it as text). "
            f"For the session's order write {self.session_form}."
        )

    @property
    def clock_hours(self) -> str:
        """The hours the comparison keeps on the clock: "00:00-02:59" for < '03:00'."""
        if self.op in ("<", "<="):
            return f"00:00-{clock(self.clock - (self.op == '<'))}"
        return f"{clock(self.clock + (self.op == '>'))}-23:59"


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
