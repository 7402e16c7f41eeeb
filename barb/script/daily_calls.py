"""The calls whose argument is an expression over the session's daily bars, by position.

``daily(atr(14))`` reads atr(14) on daily bars, not on the rows: the parser seals that
argument off (``ast.OnDailyBars``) so the walks over the rows' tree (warm-up, hoisting,
caveats) do not enter it. The parser needs to know which calls do this before any function
is registered (the registry's modules import the parser), so it is this table, a leaf both
read; registering a ``daily`` parameter anywhere else fails.
"""

from __future__ import annotations

# Function name -> the position of its daily-bars argument.
DAILY_ARGUMENTS: dict[str, int] = {"daily": 0}
