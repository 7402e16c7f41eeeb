"""Weekday and month names written as bare names, where the language reads a column.

``dayofweek() == Mon`` read "Column 'Mon' does not exist" with the hint to add it by map as
"high - low" (p34c C1), and ``dayname() in (Mon, Fri)`` "use 'and' / 'or' to combine
conditions". A weekday is text in quotes to dayname() ('Mon' … 'Sun') and a number to
dayofweek() (0 = Monday … 6 = Sunday); a month is a number to month() (1 = January): the
hint writes the comparison the way its function reads it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from barb.script import ast

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
# Shorter than this, a name is no weekday's or month's abbreviation ("ma", "ju").
_SHORTEST = 3


@dataclass(frozen=True)
class CalendarName:
    """A weekday or month a bare name spells: Mon, Tues, Thursday, Sept, december."""

    kind: Literal["weekday", "month"]
    full: str
    # What dayofweek() (0 = Monday) or month() (1 = January) returns for it.
    number: int

    @property
    def text(self) -> str:
        """dayname()'s text for a weekday: 'Mon'."""
        return self.full[:3]


def calendar_name(name: str) -> CalendarName | None:
    """The weekday or month ``name`` abbreviates or spells out, in any case; None otherwise.

    >>> calendar_name("Tues")
    CalendarName(kind='weekday', full='Tuesday', number=1)
    >>> calendar_name("jan").number, calendar_name("month")
    (1, None)
    """
    key = name.lower()
    if len(key) < _SHORTEST:
        return None
    for number, day in enumerate(WEEKDAYS):
        if day.lower().startswith(key):
            return CalendarName("weekday", day, number)
    for number, month in enumerate(MONTHS, start=1):
        if month.lower().startswith(key):
            return CalendarName("month", month, number)
    return None


def calendar_name_hint(name: str, compared: ast.Node | None = None) -> str | None:
    """How to write the weekday or month ``name`` names, as the comparison ``compared``
    (the one it stands in, if any) would read it; None when ``name`` names neither.

    >>> from barb.script.parser import parse_expression
    >>> calendar_name_hint("Mon", parse_expression("dayofweek() == Mon"))
    'weekdays are numbers to dayofweek() (0 = Monday … 6 = Sunday): dayofweek() == 0'
    >>> calendar_name_hint("Jan")
    'months are numbers to month() (1 = January … 12 = December): month() == 1'
    """
    found = calendar_name(name)
    if found is None:
        return None
    partner = _partner(name, compared)
    if found.kind == "month":
        written = _rewritten(compared, name, ast.Number(found.number), partner, "month")
        return (
            "months are numbers to month() (1 = January … 12 = December): "
            f"{written or f'month() == {found.number}'}"
        )
    if partner == "dayofweek":
        written = _rewritten(compared, name, ast.Number(found.number), partner, "dayofweek")
        return f"weekdays are numbers to dayofweek() (0 = Monday … 6 = Sunday): {written}"
    written = _rewritten(compared, name, ast.String(found.text), partner, "dayname")
    if written is not None:
        return f"a weekday is text in quotes to dayname(): {written}"
    return (
        f"a weekday is text in quotes, dayname() == '{found.text}', or a number to "
        f"dayofweek(), dayofweek() == {found.number} (0 = Monday … 6 = Sunday)"
    )


def _partner(name: str, compared: ast.Node | None) -> str | None:
    """The function ``name`` is compared with in ``compared``: "dayofweek" for
    dayofweek() == Mon."""
    if not isinstance(compared, ast.Compare):
        return None
    for side, other in ((compared.left, compared.right), (compared.right, compared.left)):
        if side == ast.Column(name) and isinstance(other, ast.Call):
            return other.name.lower()
    return None


def _rewritten(
    compared: ast.Node | None, name: str, value: ast.Expr, partner: str | None, function: str
) -> str | None:
    """``compared`` with ``value`` in place of the bare name, when it compares ``function``
    with it; None otherwise."""
    if partner != function or not isinstance(compared, ast.Compare):
        return None
    left, right = compared.left, compared.right
    if left == ast.Column(name):
        left = value
    if right == ast.Column(name):
        right = value
    return dataclasses.replace(compared, left=left, right=right).to_text()
