"""Groups of daily rows made mostly of short sessions, set beside groups of full days.

"Is Christmas Eve quiet?" is asked by grouping: NQ's RTH by "month() == 12 and day() == 24"
read mean range 1.396% and volume 166,644 on the 11 Dec 24 rows against 1.833% and 283,900
on the others, with only a noise warning, where all 11 closed at 13:15, half of RTH's hours;
over 09:30-13:15 on every day the gap mostly goes (Black Friday 1.42% against 1.37% on other
Fridays, p43a A). A where that keeps such days is told so over all of them
(``short_sessions.part_day_share_caveat``); a group of them among full ones was not, as its
days are a sliver of the rows.

Said per group when more than half of a group's days are short sessions (holidays, early
closes: ``barb.short_days``) and a statistic of it reads a size a part day makes small
(range, volume, high and low, a window's by session_*(): ``part_day_sources``), not a
close-to-close return nor a count of days. A group by weekday holds few of them: NQ's
Mondays are 9% holidays (83 of 930), Novembers 9% (36 of 384); its values are a day's. Named
with each group's count, kind and closes, and the window that reads the same hours every day
(not a where: it would leave the group empty). More than NAMED_GROUPS groups are said once:
short sessions by year() had repeated "all N days of group year Y (holidays and early
closes, the exchange closed at …)" 18 times, about 1,900 characters (p43f C1).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.caveats.kept_days import KeptDays
from barb.caveats.short_sessions import (
    cut_lengths,
    kept_patterns,
    part_day_sources,
    same_hours,
)
from barb.events.rules import us_market_closed
from barb.frames import equality_values
from barb.planning import Plan
from barb.short_days import close_clock, day_edges
from barb.summary_text import either_text, group_name, listed_text, named_text

# A group is a part day's when short sessions are more than this share of its days: the
# day after Thanksgiving (18 of 18) or CL's RTH holidays (88 of 119) but not Mondays (9%).
MOSTLY_SHORT = 0.5
# Groups named one by one; more are said together, with their sizes and the first few.
NAMED_GROUPS = 3


def short_group_caveat(
    plan: Plan,
    kept: pd.DataFrame | None,
    *,
    own_said: bool = False,
    kept_days: KeptDays | None = None,
) -> list[str]:
    """The groups of a grouped first stage over daily rows ``kept`` whose days are mostly
    short sessions, for each session whose size a statistic reads: the rows' own, or a
    window read by session_*() that an early close cut. ``own_said``: the rows' own short
    sessions are said already, as a where's picks (``barb.caveats.part_day_picks``).
    ``kept_days``: ``kept``'s dates and short sessions as the run read them once."""
    stage = plan.first
    if plan.timeframe.name != "daily" or stage.shape != "grouped" or plan.then is not None:
        return []
    keys = [name for name, _ in stage.group_keys]
    if kept is None or not len(kept) or "trading_date" not in kept.columns:
        return []
    if any(key not in kept.columns for key in keys):
        return []
    mapped = dict(stage.map_exprs) | dict(stage.hoisted)
    sources = part_day_sources(
        plan, [i for i in stage.select if i.aggregate], mapped, low_tail=False
    )
    read = kept_days if kept_days is not None and kept_days.of(kept) else None
    read = read or KeptDays(plan.dataset, kept)
    days = read.days
    said: list[str] = []
    groups: tuple[np.ndarray, np.ndarray, pd.Index] | None = None
    for window, items in sources.items():
        if window == plan.session and (own_said or kept_patterns(stage)):
            continue  # mother_bar_caveat or the where's picks name them
        short = read.short(window)
        if not short.any() or not _some_group_mostly(kept, keys, short):
            continue
        if groups is None:  # each row's group, the groups' sizes and keys
            grouped = kept.groupby(keys, sort=True, dropna=False, observed=True)
            codes = grouped.ngroup().to_numpy()
            groups = codes, np.bincount(codes), grouped.size().index
        codes, sizes, index = groups
        shorts = np.bincount(codes, weights=short, minlength=len(sizes)).astype(np.int64)
        mostly = np.flatnonzero(shorts > MOSTLY_SHORT * sizes)
        if not len(mostly):
            continue
        cut = days[np.isin(codes, mostly) & short]
        if len(mostly) > NAMED_GROUPS:
            named = [_groups_text(plan, window, index, mostly, shorts, sizes, cut)]
        else:
            named = [
                _group_text(
                    plan,
                    window,
                    group_name(index, int(g), text_alone=True),
                    days[(codes == g) & short],
                    int(sizes[g]),
                )
                for g in mostly
            ]
        one = len(mostly) == 1
        names = listed_text([item.name for item in items])
        what = "part day's" if window == plan.session else "part window's"
        said.append(
            f"Short sessions make up {listed_text(named)}, so {'its' if one else 'their'} "
            f"{names} {'is' if len(items) == 1 else 'are'} a {what}: against full days "
            f"compare the hours both trade, {same_hours(plan, window, cut)}."
        )
    return said


def _groups_text(
    plan: Plan,
    window: str,
    index: pd.Index,
    mostly: np.ndarray,
    shorts: np.ndarray,
    sizes: np.ndarray,
    cut: np.ndarray,
) -> str:
    """The groups ``mostly`` said at once: 'all 151 days of every one of the 18 groups (7-10
    days each: holidays and early closes, the exchange closed at 11:30, 13:00 or 13:15)';
    of some of the groups, the first NAMED_GROUPS by name and how many more."""
    whole = bool((shorts[mostly] == sizes[mostly]).all())
    total = int(sizes[mostly].sum())
    count = f"all {total:,} days" if whole else f"{len(cut):,} of the {total:,} days"
    low, high = int(sizes[mostly].min()), int(sizes[mostly].max())
    each = f"{low} days each" if low == high else f"{low}-{high} days each"
    if len(mostly) == len(sizes):
        groups = f"every one of the {len(sizes)} groups"
    else:
        first = [group_name(index, int(g), text_alone=True) for g in mostly[:NAMED_GROUPS]]
        groups = f"{len(mostly)} of the {len(sizes)} groups ({named_text(first, len(mostly))})"
    return f"{count} of {groups} ({each}: {_cut_text(plan, window, cut)})"


def _some_group_mostly(kept: pd.DataFrame, keys: list[str], short: np.ndarray) -> bool:
    """Whether a group can be mostly short sessions, read from the short rows' keys alone: a
    group by weekday is ruled out by 5 comparisons, not a groupby of every row (1.3 ms on
    NQ's 4,647 days, most of "range by weekday"'s checks). True when it cannot tell (several
    keys, or keys with empty values): the groupby decides."""
    if len(keys) != 1:
        return True
    values = equality_values(kept[keys[0]])
    if values.dtype.kind in "biu" and len(values) and values.min() >= 0:
        # Small whole numbers (a category's codes, yes/no): every value's rows counted at
        # once, the same counts the comparisons below take one value at a time.
        numbers = values.astype(np.intp)
        if numbers.max() < len(values):
            sizes = np.bincount(numbers)
            shorts = np.bincount(numbers[short], minlength=len(sizes))
            return bool((shorts > MOSTLY_SHORT * sizes).any())
    try:
        found, counts = np.unique(values[short], return_counts=True)
    except TypeError:  # keys of mixed kinds (text and empty) do not sort
        return True
    # An empty key (NaN) equals no row: its group reads as size 0, so True, as it should.
    return any(
        count > MOSTLY_SHORT * np.count_nonzero(values == value)
        for value, count in zip(found, counts, strict=True)
    )


def _group_text(plan: Plan, window: str, label: str, cut: np.ndarray, size: int) -> str:
    """'all 11 days of group xmas_eve true (early closes, the exchange closed at 13:15)',
    '88 of the 119 days of group holiday true (holidays, the exchange closed at 13:00)'; of
    a window read by session_*(), how long it ran on them."""
    n = len(cut)
    count = (
        "the one day" if size == 1 else f"all {n} days" if n == size else f"{n} of the {size} days"
    )
    return f"{count} of group {label} ({_cut_text(plan, window, cut)})"


def _cut_text(plan: Plan, window: str, cut: np.ndarray) -> str:
    """'holidays and early closes, the exchange closed at 11:30 or 13:15' for short sessions
    ``cut``; of a window read by session_*(), how long it ran on them."""
    if window != plan.session:
        return f"{window} ran {cut_lengths(plan, window, cut)}"
    holiday = us_market_closed(cut)
    kinds = [
        kind
        for kind, some in (("holidays", holiday.any()), ("early closes", (~holiday).any()))
        if some
    ]
    _, closed = day_edges(plan.dataset, cut)
    closes = [close_clock(plan.dataset, int(m)) for m in np.unique(closed[closed >= 0])]
    return f"{' and '.join(kinds)}, the exchange closed at {either_text(closes)}"
