"""Whether a running high or low cut at the period changes the answer.

cummax() and cummin() under a period start at its first bar, by definition: "the 2022
drawdown" is from 2022's own peak. Where the bars before the period went higher, the engine
used to say so whenever they did, though the answer often stands: ES's max drawdown of 2022
(-35.21%, trough 2022-11-08) is from the April peak 5481.25, above every earlier close
(4866 on 2021-12-23), so only the first weeks' running peak differed and the warning invited
a needless retry (p32f Q6). Under 2020 it is right: the 2019-12-31 close of 3230 was above
2020's peak of 3218.75 before the trough, and the drawdown is -50.19%, not -50.01% (Q15).

So the query whose first stage found such bars is run again with its running highs and lows
read from all history, and the warning (``EvalContext.history_beyond``) is said only when its
answer (the number, the table, the groups) is not the same. The answer is the last stage's:
the drawdown concept's episodes of 2022 differ in January (its closes under 4866 start no
episode when read from history), but its then.where keeps the falls of 10% or more, the April
episode alone either way, and the warning beside it said nothing true of it (p47g d3). The
rows behind a number are not the answer: January 2022's running peak there is its own, as
cummax() defines it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from barb.script.context import EvalContext
from barb.stage_output import StageOutput


@dataclasses.dataclass(frozen=True)
class FromHistory:
    """The first stage's warnings that the bars before its period went beyond a running high
    or low, and the query's answer run again with them read from all history."""

    pending: list[str]
    again: StageOutput | None


def run_from_history(ctx: EvalContext, rerun: Callable[[EvalContext], StageOutput]) -> FromHistory:
    """The first stage's warnings of bars beyond a running high or low before its period
    (``ctx.history_beyond``, then forgotten) and, when there are any, ``rerun``'s answer (the
    query's last stage, run on the context given) with them read from all history. Called
    before a then stage moves ``ctx``."""
    pending, ctx.history_beyond = ctx.history_beyond, []
    if not pending:
        return FromHistory([], None)
    again = rerun(
        dataclasses.replace(
            ctx, warnings=[], row_warnings=[], history_beyond=[], running_from_history=True
        )
    )
    return FromHistory(pending, again)


def history_beyond_caveat(found: FromHistory, answer: StageOutput) -> list[str]:
    """The warnings ``found``, when the ``answer`` (the query's last stage's output) is not
    the one read from all history; else none."""
    if found.again is None or _same_answer(answer, found.again):
        return []
    return found.pending


def _same_answer(one: StageOutput, other: StageOutput) -> bool:
    """Whether two runs of a stage give the same number, table and groups: what the model
    reads (the summary, rounded as it is told) and every row of the table a second stage or
    the chart reads."""
    if one.summary.model_dump_json() != other.summary.model_dump_json():
        return False
    if one.table is None or other.table is None:
        return one.table is None and other.table is None
    return one.table.equals(other.table)
