"""Barb's engine: instruments, data, sessions, Barb Script and its interpreter.

``execute(query, instrument)`` is the one public entry point; it returns a ``Result``.
Imported lazily so that ``import barb.sessions`` does not pull in the whole engine.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from barb.process_memory import ARROW_POOL, ARROW_POOL_VARIABLE

# Before any Barb module loads pandas, which loads pyarrow, which reads this once: Arrow
# allocates with malloc, as numpy does, so that a worker's memory ceiling counts what it
# holds (``barb.process_memory``).
os.environ.setdefault(ARROW_POOL_VARIABLE, ARROW_POOL)

if TYPE_CHECKING:
    from barb.interpreter import execute
    from barb.result import Result
    from barb.summary_text import render_summary

__all__ = ["Result", "execute", "render_summary"]


def __getattr__(name: str) -> Any:
    if name == "execute":
        from barb.interpreter import execute

        return execute
    if name == "Result":
        from barb.result import Result

        return Result
    if name == "render_summary":
        from barb.summary_text import render_summary

        return render_summary
    raise AttributeError(f"module 'barb' has no attribute {name!r}")
