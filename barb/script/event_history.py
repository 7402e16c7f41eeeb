"""The history a count since an event reads: back to its event's last row before the period.

streak(), bars_since() and ffill() read every bar before their own (their reach is all
history: a streak running at the period's start counts from before it), so a question
over one month of 1-minute bars evaluated its whole stage over every bar since 2008 (1.1-1.4
s of CPU for a streak on NQ's ETH bars). Yet each forgets everything before the last row
its event holds on (``FunctionSpec.forgets``): a streak's false row (or its restart), a
true row of bars_since()'s condition, a value ffill() carries. From that row on, its values
are those over all history.

So the first stage is run on rows reaching back ``first`` more bars than the rest of the
query reads (``Plan.event_reach``: those calls read as their own row alone), and each such
call checks (``settled``) that its event holds on a row before the period that both its
argument and whatever reads it see whole: at least ``event_reach.back`` rows after the
rows' first, and as many before the period's first. When one does not, it raises
``ShortHistory`` and the stage is run again reaching back four times as far, up to the
data's first bar, where nothing is checked. The answer is the one over all history, bar
for bar; a where, a caveat or a chart never sees a row the narrower run would not have.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from barb.script.warmup import Reach

if TYPE_CHECKING:
    from barb.script.context import EvalContext

# Bars read back beyond the rest of the query's reach at first, then four times as many
# each time an event is not found among them: a 1-minute streak of close > open breaks
# within a few bars, and a daily one within a month; 4 ** 7 times this is all of NQ.
FIRST_BARS = 1024
GROWTH = 4


class ShortHistory(Exception):
    """A count since an event found no event before the period among the rows it was
    given: the stage is run again over more history (never seen outside ``barb.interpreter``)."""


@dataclass(frozen=True)
class HistoryCut:
    """Rows that begin after the data's first bar: ``period`` (the very mask the first stage
    is run with) and the rows ``first`` to ``last`` (inclusive) one of which must hold each
    call's event."""

    period: np.ndarray
    first: int
    last: int


def reaches(back: int) -> Iterator[int]:
    """How many bars before the period each run reads: ``back`` (``Plan.event_reach``'s)
    twice, then ``FIRST_BARS`` more, then ever more. Twice: ``back`` rows for the argument's
    own warm-up before the event's row, ``back`` after it for what reads the call."""
    extra = FIRST_BARS
    while True:
        yield 2 * back + extra
        extra *= GROWTH


def history_cut(in_period: np.ndarray, earlier: bool, back: int) -> HistoryCut | None:
    """What each call checks over rows marked ``in_period`` (``earlier``: the data holds bars
    before them); None when they begin at the data's first bar (nothing to check)."""
    if not earlier:
        return None
    at = np.flatnonzero(in_period)
    # No period row: no event can be "before" it; checked, and so read from the first bar.
    first_row = int(at[0]) if len(at) else -1
    return HistoryCut(in_period, back, first_row - back)


def with_back(reach: Reach, back: int) -> Reach:
    return replace(reach, back=back)


def settled(ctx: EvalContext, events: np.ndarray) -> None:
    """Raise ``ShortHistory`` when ``ctx`` holds the first stage's rows cut short of the
    data's first bar (``EvalContext.history_cut``) and no row of ``events`` (over its rows)
    lies where the cut needs one."""
    cut = ctx.history_cut
    if cut is None or ctx.period is not cut.period:  # another frame (a caveat's): not cut
        return
    if cut.last < cut.first or not events[cut.first : cut.last + 1].any():
        raise ShortHistory
