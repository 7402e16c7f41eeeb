"""Asking the engine a query in a test: the answer must be ok, and its warnings are read by words.

Engine tests check what a query returns and what it warns about; a query that fails would
make every such check fail with a confusing message, so ``ask`` fails at once with the error.
"""

from __future__ import annotations

from typing import Any

from barb import execute
from barb.result import Result
from barb.settings import EngineSettings

# The defaults of the tests that ask about regular-session daily bars.
RTH_DAILY: dict[str, Any] = {"session": "RTH", "from": "daily"}


def ask(query: dict, settings: EngineSettings, instrument: str = "NQ", **defaults: Any) -> Result:
    """``query`` run on ``instrument``, with ``defaults`` for the keys the query leaves out.

    The query wins where both say a key. Fails with the result's dict when it is not ok.
    ``ask({"select": "count()"}, settings, **RTH_DAILY)`` counts the RTH days of NQ;
    ``ask(query, settings, "CL", session="ETH")`` asks CL with ETH unless the query says.
    """
    result = execute({**defaults, **query}, instrument, settings=settings)
    assert result.ok, result.to_dict()
    return result


def warnings_with(result: Result, words: str) -> list[str]:
    """The warnings of ``result`` that contain ``words``, in order.

    ``warnings_with(result, "has no value")`` is ``[]`` when no row lacked a value.
    """
    return [w for w in result.metadata.warnings if words in w]


def as_read(value: float, share: bool = False) -> str:
    """``value`` at the precision the model's summary gives it (``summary_text.value_text``:
    four significant digits, two decimals from 100 up), as a chart's title must name it:
    23.95 where a title had said 24.0; a share's as its percent (0.4455: 44.55)."""
    from barb.summary_text import value_text

    decimals = len(value_text(float(value)).partition(".")[2])
    if share:
        return f"{float(value) * 100:.{max(decimals - 2, 0)}f}"
    return f"{float(value):.{decimals}f}"
