"""Barb's engine: instruments, data, sessions, Barb Script and its interpreter.

``execute(query, instrument)`` is the one public entry point; it returns a ``Result``.
Imported lazily so that ``import barb.sessions`` does not pull in the whole engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
