"""The calls whose argument is an expression over the session's daily, weekly or monthly
bars, by position.

``daily(atr(14))`` reads atr(14) on daily bars, not on the rows: the parser seals that
argument off (``ast.OnDailyBars``) so the walks over the rows' tree (warm-up, hoisting,
caveats) do not enter it. The parser needs to know which calls do this before any function
is registered (the registry's modules import the parser), so it is this table, a leaf both
read; registering a ``daily`` parameter anywhere else fails.

The three are one family: each call's name is the timeframe (``barb.timeframes``) its
expression runs on, and each row gets the value of its own date's day, week or month, ``lag``
of them back: ``weekly(high)`` on daily bars is last week's high.
"""

from __future__ import annotations

# Function name -> the position of its bars' argument; the name is their timeframe.
DAILY_ARGUMENTS: dict[str, int] = {"daily": 0, "weekly": 0, "monthly": 0}

# What one bar of each is called where a person reads it ("each week's final value").
UNIT_WORDS: dict[str, str] = {"daily": "date", "weekly": "week", "monthly": "month"}
