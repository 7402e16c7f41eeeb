"""Times of day ordered as text over a session that crosses midnight.

time() gives 'HH:MM', which orders 00:00 first. Over OVERNIGHT (18:00-09:30) a trading day
runs from 18:00 through midnight to 09:30, so "did the high come before the low" written as
``high_time < low_time`` (each day's ``arg_max(time(), high)`` and ``arg_min(time(), low)``)
read a 18:57 high as after a 07:33 low: Barb printed high_first 0.4517 with nothing said,
where the session's order gives 0.4903 (166 of 259 days read the other way). Sorting by such
a column lists 00:05 as the earliest high, before the day's 18:00 ones.

Reading them in the session's order instead would break the clock windows a query writes on
purpose (``time() >= '20:00' or time() < '02:00'``), so the text order stays and the
evaluator says where it disagrees with the session's, on the rows it was read over, and gives
the minutes counted from the open that the reference writes under TIME OF DAY AS A NUMBER.
Two bounds on the same time in one condition are such a window and are never said.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from barb.instruments import MINUTES_PER_DAY, format_clock
from barb.script import ast

if TYPE_CHECKING:
    from barb.script.query import SortKey

# A time of day as time() writes it: '09:30'.
CLOCK = re.compile(r"([01]\d|2[0-3]):([0-5]\d)")
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

    def counted(self, minute: int) -> int:
        """A minute of the day as ``expression`` counts it: 02:00 is 120, 19:00 is -300."""
        return minute - MINUTES_PER_DAY if minute // 60 >= self.open // 60 else minute

    def instead(self, literal: int | None = None) -> str:
        """What to compare instead (the second sentence of a warning)."""
        given = ""
        if literal is not None:
            given = f" ('{clock(literal)}' is {self.counted(literal)} there)"
        return (
            f"Count minutes from the {self.open_text} open instead (TIME OF DAY AS A NUMBER): "
            f"{self.expression} in place of time(){given}."
        )


def clock(minute: float) -> str:
    """A minute of the day (float, from an array) as the clock reads it: 1137.0 → 18:57."""
    return format_clock(int(minute) % MINUTES_PER_DAY)


@dataclass(frozen=True)
class Clocks:
    """Times of day as codes into their distinct minutes of the day: time()'s 1,440
    categories are read once, however many bars. A literal ('02:00') is one value, no codes."""

    values: np.ndarray  # each code's minute of the day (int64)
    codes: np.ndarray | None = None  # each row's code, -1 where missing

    def at(self, row: int) -> int:
        return int(self.values[0 if self.codes is None else self.codes[row]])


def clocks(value: Any) -> Clocks | None:
    """A 'HH:MM' text, or a column of them (time()'s categories, or text), as Clocks; None
    for anything else."""
    if isinstance(value, str):
        found = CLOCK.fullmatch(value)
        return Clocks(np.array([int(found[1]) * 60 + int(found[2])])) if found else None
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
        """The comparison when both sides are times of day and one at least a column."""
        if node.op not in ORDERING:
            return None
        a, b = clocks(left), clocks(right)
        if a is None or b is None or (a.codes is None and b.codes is None):
            return None
        op = ORDERING[node.op]

        def misread(x: np.ndarray, y: np.ndarray) -> np.ndarray:
            return op(x, y) != op(night.since_open(x), night.since_open(y))

        if a.codes is not None and b.codes is not None:
            known = (a.codes >= 0) & (b.codes >= 0)
            against = misread(a.values[a.codes], b.values[b.codes]) & known
        else:  # a column and a literal: each distinct time read once
            column = a if a.codes is not None else b
            assert column.codes is not None
            table = misread(a.values, b.values)  # one per distinct time, against the literal
            known = column.codes >= 0
            against = table[column.codes] & known
        return cls(night, node.to_text(), a, b, against, known)

    @property
    def literal(self) -> int | None:
        """The minute of the literal compared with, if one side is one."""
        for side in (self.left, self.right):
            if side.codes is None:
                return int(side.values[0])
        return None

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
            + self.night.instead(self.literal)
        )


def window_bounds(node: ast.Logical) -> set[int]:
    """The comparisons (by id) in a condition that bound one time by two clocks or more:
    ``time() >= '20:00' or time() < '02:00'`` is a window the query wrote as the clock reads
    it, each bound on its own side of midnight, and never said."""
    compared: dict[str, list[ast.Compare]] = {}
    pending: list[ast.Node] = [node]
    while pending:
        part = pending.pop()
        if isinstance(part, ast.Logical):
            pending += [part.left, part.right]
        elif isinstance(part, ast.Compare) and part.op in ORDERING:
            for side, other in ((part.left, part.right), (part.right, part.left)):
                if isinstance(other, ast.String) and CLOCK.fullmatch(other.value):
                    compared.setdefault(side.to_text(), []).append(part)
    return {id(c) for bounds in compared.values() if len(bounds) > 1 for c in bounds}


def sort_caveat(
    night: NightSession | None, table: pd.DataFrame | None, sort: Sequence[SortKey]
) -> list[str]:
    """The warning when a stage sorts by times of day as text and the session's order would
    list them otherwise: '"sort": "high_time asc" … 00:05 is listed before 18:00'."""
    if night is None or table is None or not sort or sort[0].column not in table.columns:
        return []
    key = sort[0]
    found = clocks(table[key.column])
    if found is None or found.codes is None:
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
