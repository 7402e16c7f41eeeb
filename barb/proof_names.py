"""A query's ``select`` and ``group_by`` as lists, whichever way the query wrote them.

(The proof files' names are in the person's words: ``barb.charts.file_names``.)
"""

from __future__ import annotations

from typing import Any


def as_list(value: Any) -> list[str]:
    """``select`` and ``group_by`` come as one string or a list in the canonical query."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]
