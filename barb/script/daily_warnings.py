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
from barb.summary_text import value_text


def same_day_warning(call: ast.Call, inner: ast.Expr, session: str | None) -> str:
    """daily(x, 0) on intraday bars: the date's final value, on every bar of the date (and
    weekly(x, 0) the week's, on every bar of the week)."""
    unit = UNIT_WORDS[call.name]
    also = "" if session is None else f", 1, '{session}'"
    return (
        f"{call.to_text()} is each {unit}'s final value, known only at its close: a rule "
        f"reading it at an earlier bar of the {unit} sees the future. The previous {unit}'s, "
        f"known at the open: {call.name}({inner.to_text()}{also})."
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
