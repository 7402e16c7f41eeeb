"""A limit that cuts through a tie: "which hour most often makes the high", sorted by days
and cut to 1, named 09:30 with 6 days where 15:30 had 6 too. The row kept is only the first
in the order the rows were in; the answer has to say that others tie with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from barb.notes import LIMIT_TIE, Note
from barb.summary_text import named_text, value_text

# Rows named in the warning; more are counted.
NAMED_ROWS = 3

# The sort keys of the row at a position in sort order.
KeysAt = Callable[[int], Sequence[object]]


def tie_at_limit(
    keys_at: KeysAt,
    names: Sequence[str],
    rows: int,
    limit: int | None,
    name: Callable[[int], str] | None = None,
) -> list[str]:
    """``keys_at`` gives the sort keys (named ``names``) of the row at a position in sort
    order, of ``rows`` in all before the cut; ``name`` names that row (by its group keys,
    its bar label). Equal keys are next to each other in sort order: only the rows around
    the cut are read."""
    found = cut_tie(keys_at, rows, limit)
    if found is None or limit is None:
        return []
    first, last = found
    edge = tuple(keys_at(first))
    tied = last - first + 1
    kept = limit - first
    value = ", ".join(f"{n} = {value_text(v)}" for n, v in zip(names, edge, strict=True))
    if name is not None:
        value += f" ({_names(name, first, last)})"
    return [
        Note.of(
            LIMIT_TIE,
            limit=str(limit),
            tied=str(tied),
            value=value,
            kept=str(kept),
            next=str(last + 1),
        )
    ]


def cut_tie(keys_at: KeysAt, rows: int, limit: int | None) -> tuple[int, int] | None:
    """The first and last positions (in sort order) of the rows that tie with the last one
    the limit keeps, when the limit cuts through them; else None."""
    if limit is None or limit <= 0 or rows <= limit:
        return None
    edge = tuple(keys_at(limit - 1))
    if any(_missing(v) for v in edge) or tuple(keys_at(limit)) != edge:
        return None
    first, last = limit - 1, limit
    while first > 0 and tuple(keys_at(first - 1)) == edge:
        first -= 1
    while last + 1 < rows and tuple(keys_at(last + 1)) == edge:
        last += 1
    return first, last


def _missing(value: object) -> bool:
    return value is None or value != value  # NaN is not equal to itself


def _names(name: Callable[[int], str], first: int, last: int) -> str:
    named = [name(at) for at in range(first, min(last, first + NAMED_ROWS - 1) + 1)]
    return named_text(named, last - first + 1)
