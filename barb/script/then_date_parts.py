"""A calendar part (year(), month()) asked of a second stage's rows, which are the first
stage's table, not bars: the hint gives the form that works in one step.

"How many of the top-50 volume days fell in each year" wrote "then": {"group_by": "year"}
and was told year is a function, call it year(); that said year() needs the timestamp and
to put it in the first stage's group_by, a hint for grouped first stages: the first stage
listed rows (p40e Q19). A first stage's rows take the part as a map column it selects; its
groups, as a key.
"""

from __future__ import annotations

from barb.script.functions import FUNCTIONS


def is_date_part(function: str) -> bool:
    """Whether ``function()`` is a calendar or clock part, a group key as it is (year(),
    hour()), not a function of other arguments (session_high('RTH'))."""
    spec = FUNCTIONS.get(function.lower())
    return spec is not None and spec.category == "time" and not any(p.required for p in spec.params)


def then_date_part_hint(function: str, grouped: bool) -> str:
    """Where a second stage's ``function()`` is made: as a key of the first stage's groups
    (``grouped``), else as a column of its rows: for year of listed rows, '… make year there,
    "map": {"year": "year()"} with "year" in its "select", and use "year" here'."""
    name = function.lower()
    if grouped:
        return (
            f"a second stage's rows are the first stage's groups: put {name}() in the first "
            f'stage (e.g. "group_by": ["{name}()", "date()"]) and use its column "{name}" here'
        )
    return (
        f"a second stage's rows are the first stage's rows, holding only its select: make "
        f'{name} there, "map": {{"{name}": "{name}()"}} with "{name}" in its "select", and use '
        f'"{name}" here'
    )
