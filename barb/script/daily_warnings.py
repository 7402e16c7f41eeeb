"""What daily() (weekly(), monthly()) says of the values it brings onto shorter rows.

Lag 0 is the date's own value, final only at its close: ``daily(high, 0)`` on the 09:30 bar
is the high the day has not made yet, so a rule reading it looks ahead, and the answer looked
normal (stop/target 22/19/218 at lag 0 against 23/21/215 at lag 1, p36b M2). So is
``weekly(high, 0)`` on a Monday: the high the week makes by Friday.

On a part of the day (RTH_OPEN, '09:30-10:00', OVERNIGHT) daily() reads that session's own
daily bars, whose ATR's true range runs from its close the date before: "first hour above half
the daily ATR" counted 139 NQ days of 2024 against 75 with the RTH ATR (p36b M1). The whole
session's is ``daily(atr(14), 1, 'RTH')``, said with both averages.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from barb.script import ast
from barb.script.context import PartOfDay
from barb.script.daily_calls import UNIT_WORDS
from barb.script.indicator_functions import READ_PREVIOUS_CLOSE
from barb.summary_text import listed_text, value_text


def known_from_first_bar(inner: ast.Expr, session: str | None) -> bool:
    """Whether ``inner`` on the query's own session's bars (``session`` None) is fixed by the
    unit's first bar: its open (weekly(open, 0), the "weekly open" a live rule reads). Every
    row of the date, week or month comes at or after that bar, so lag 0 sees nothing ahead
    and is no value "so far" either: monthly(open, 0) on CL was said to be both (p48f M1).
    Another session's open can lie ahead (RTH's 09:30 open on an 03:00 ETH bar)."""
    if session is not None:
        return False
    read = list(ast.walk(inner))
    columns = [node for node in read if isinstance(node, ast.Column)]
    calls = [node for node in read if isinstance(node, ast.Call)]
    return bool(columns) and not calls and all(node.name == "open" for node in columns)


class SameDayCalls:
    """daily(x, 0) (weekly(x, 0), monthly(x, 0)) calls of one unit, said in one sentence of
    the rows kept, as a row warning: weekly(high, 0) and weekly(low, 0) had been said in two
    near-identical sentences, and of the data's last day alone, whose week's value so far
    is all there is to see (p48f C1). ``ahead``: per row, whether the unit goes on past it
    (a Monday's week); any row on a bar made while the rows were other ones counts."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls: list[str] = []
        self.earlier: list[str] = []
        self.ahead: list[np.ndarray] = []

    def add(self, call: ast.Call, inner: ast.Expr, session: str | None, ahead: np.ndarray) -> None:
        text = call.to_text()
        if text not in self.calls:
            also = "" if session is None else f", 1, '{session}'"
            self.calls.append(text)
            self.earlier.append(f"{call.name}({inner.to_text()}{also})")
        self.ahead.append(ahead)

    def __call__(self, kept: np.ndarray) -> str | None:
        if not any(
            bool(ahead[kept].any()) if len(ahead) == len(kept) else bool(ahead.any())
            for ahead in self.ahead
        ):
            return None
        return same_day_warning(self.name, self.calls, self.earlier)

    @staticmethod
    def of(checks: list, name: str) -> SameDayCalls | None:
        """The one already among a context's row warnings ``checks`` for ``name``'s unit."""
        found = [c for c in checks if isinstance(c, SameDayCalls) and c.name == name]
        return found[0] if found else None


def same_day_warning(name: str, calls: list[str], earlier: list[str]) -> str:
    """daily(x, 0) on intraday bars: the date's final value, on every bar of the date (and
    weekly(x, 0) the week's, on every bar of the week)."""
    unit = UNIT_WORDS[name]
    one = len(calls) == 1
    return (
        f"{listed_text(calls)} {'is' if one else 'are'} each {unit}'s final value, known only "
        f"at its close: a rule reading {'it' if one else 'them'} at an earlier bar of the "
        f"{unit} sees the future. The previous {unit}'s, known at the open: "
        f"{listed_text(earlier)}."
    )


def part_of_day_warning(
    call: ast.Call,
    inner: ast.Expr,
    lag: int,
    part: PartOfDay,
    units: np.ndarray,
    own: np.ndarray | None,
    whole: np.ndarray | None,
) -> Callable[[np.ndarray], str | None]:
    """daily() without a session on a part of the day, as a row warning: ``own`` and
    ``whole`` are the rows' values from the part's and the whole session's bars (None for a
    condition, said without numbers), averaged over the dates (weeks, months: ``units``, each
    row's) of the rows kept."""
    unit = UNIT_WORDS[call.name]
    form = f"{call.name}({inner.to_text()}, {lag}, '{part.whole}')"
    said = f"{call.to_text()} on {part.named} bars reads that session's own {call.name} bars"
    if any(isinstance(n, ast.Call) and n.name in READ_PREVIOUS_CLOSE for n in ast.walk(inner)):
        said += f", whose true range reaches back to its close the {unit} before"

    def check(kept: np.ndarray) -> str | None:
        if own is None or whole is None:
            return f"{said}. The whole {part.whole} session's: {form}."
        if len(kept) != len(units):  # made on the rows kept (a select's): all of them
            kept = np.ones(len(units), dtype=bool)
        rows = pd.DataFrame({"unit": units[kept], "own": own[kept], "whole": whole[kept]})
        rows = rows.drop_duplicates("unit").dropna()
        if rows.empty:
            return f"{said}. The whole {part.whole} session's: {form}."
        n = len(rows)
        return (
            f"{said}: {value_text(rows['own'].mean())} on average over {n:,} "
            f"{unit}{'' if n == 1 else 's'}, where the whole {part.whole} session's, {form}, "
            f"is {value_text(rows['whole'].mean())}."
        )

    return check
