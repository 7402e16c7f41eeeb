"""Groups that differ by no more than groups of pure noise would: no group "wins".

"The most volatile weekday" over 18 years of NQ: Wednesday's mean range 140.64 against
Monday's 137.21, each over about 900 days whose ranges spread about 130 points, so each mean
is known to about ±4.3 (one standard error) and the 3.4-point gap between the highest and
the lowest is noise; in percent of the price the order even changes. The model and the
chart's headline named Wednesday. So each select item that is a mean or a median by group is
tested for whether its groups differ at all, at the 5% level (``LEVEL``), and when they do
not, a warning says so with the test's p, and the result's metadata names the column
(``Metadata.even_groups``) for a chart to say "the differences are within noise" rather than
name a winner.

The test is one across all the groups, never the highest against the lowest: the ends of 12
noisy groups lie far apart (a two-group ±2 standard-error rule on the ends of 12 groups of
pure noise is silent 69% of the time; NQ's months, 18 years each, had September up 16 of 18
against a base of 0.61 with no word):

- a mean: Welch's one-way ANOVA (Welch 1951), an F test with the F distribution's own
  degrees of freedom, so 4 Thursdays are judged with t(3)'s 3.18, not 2. Welch's rather than
  the classic F because the groups compared here seldom share a size or a spread: 147 FOMC
  days against 4,509 others, and event days are wilder; the classic F takes the pooled spread
  for every group and reads the small wild group's noise as a difference. For two groups it
  is Welch's t-test, the standard-error-of-the-difference rule it replaces with t in place
  of 2. Groups whose values are all equal give no spread to weigh by: then the classic F.
- a share (the mean of a condition, every value 0 or 1): Pearson's χ² on the groups × (true,
  false) table; for two groups with a cell under 5 (3 CPI days down of 12), Fisher's exact
  test, as the χ² approximation is poor there; for more groups with an expected cell under
  5 (18 years of 2-3 windows), χ²'s p by Monte Carlo; p = 1 when every row or none is a hit.
  A share over few counted rows shows Wilson's interval, "1 (95%: 0.43–1)", not a ±.
- a median: Mood's median test, the same χ² (or Fisher) on how many of each group's values
  lie above the median of all of them: it asks of the medians exactly.

A group of fewer than ``FEW_ROWS`` rows is named as too few ("Mon: 1 day"): its mean is
drawn like the others' but rests on one FOMC Monday. A group of one row has no spread and is
left out of a mean's test.

A ranking names its first group even when the groups differ: "the quietest hour" of NQ's
ETH, sorted by mean % range, named 21:00 at 0.233% while seven other overnight hours lay
between 0.2343% and 0.2369%, each known to about ±0.002. So when a grouped result is sorted
by a mean and its second group is within ``NOISE_ERRORS`` standard errors of the difference
from the first, every group within that noise is counted and the first few named.

A second stage's count of the first stage's rows by an outcome they picked ("which weekday
makes the week's high": 53 weeks counted by the weekday arg_max named) is tested against
equal shares (``counted_noise``): Pearson's χ² goodness of fit across the groups, the exact
binomial test for two. When the groups do differ, the group a reader names (the highest, or
the sort's first) is tested against each other one by the exact binomial test of the two
counts (each row of theirs in either with chance 1/2): NQ's 2024 had Fri 17 and Mon 16 weeks
of 53 (p = 1) beside Thu 3 (χ² p = 0.0099), and "Friday" was named with no word. Only counts
by an outcome: a count by a calendar key (months per year, days per weekday) is the
calendar's, not chance's.

Unless a where picked the rows by their values: a first stage's count() by weekday, month or
hour under a where (NQ's RTH days down over 3%, Mon 33 … Tue 26; inside days 85/68/64/81/77)
counts the where's hits of each group's rows, and "Monday has the most" asks whether its
share stands apart. Those shares are tested (``_RateTests``), each group's hits over its own
rows before the where (``sizes_before``: Monday holidays leave fewer Mondays), not the counts
against equal ones: ``_share_test`` across the groups, those the where emptied at 0, and
``two_shares_p`` for a named end against each other group. Not under a where on the
calendar or a schedule alone (``picks_by_values``: "year() >= 2020", "not holiday()", FOMC
days): its counts are the calendar's; its calendar conjuncts ("chg < -3 and year() >= 2020")
bound the rows before it. Not of a key of more than ``MAX_KEY_VALUES`` values (dates).

No warning is not proof of an edge: at the 5% level one grouping of pure noise in 20 passes.

Rows whose values read overlapping windows ahead are not independent: NQ's days below and
above the SMA50, each read 40 days ahead (mean(next(close, 40) > close) by above), gave χ²
p < 0.001 over 1,739 and 2,821 days and no warning, where samples of every 40th day gave p
from 0.008 to 1.0 by their first day (p40a #17). When the stage's overlap warning is said of
a mean or median (``barb.caveats.overlapping_windows.GroupWindows``), its test and bands take
each group as the rows it holds with no two windows sharing a bar (78 and 95): a share's
events and a median's rows above scaled to that count, a mean's standard error over it.

Groups that are stretches of time (month of the year, quarter, week of the year, year:
``BLOCKS``, from the one group key's calendar part) hold days that share their level: NQ's
daily range % leans on the day before (autocorrelation 0.67, 0.52 at 20 days), so "July
2.106 %, October 1.639 %" read p = 1.1e-06 over single days and no warning, where one mean
per year's month (18 a month) finds no month effect (p46e M1). For such groups the
independent unit is the stretch, one value each (its mean, median or share; of a count under
a where, the share of the stretch's days it kept), for shares, means, medians and counts
alike, and:

- with ``MIN_STRETCHES`` stretches or more in every group (5 years of months) the groups are
  compared by a permutation of whole stretches (``_stretch_test``): the groups' labels
  shuffled across the stretches, which keeps each stretch's days, and so their
  autocorrelation, together. Welch's F over so few values per group is far too eager
  (p46w #2): on 12 groups of pure noise of 21 days a month it said "differ" in 33 % of
  draws at 2 years, 17 % at 3, 11 % at 4, 9 % at 5, 7 % at 8; the permutation said it in
  3.5-6.5 % at 2-18 years, for iid days, AR(1) days with φ = 0.6 and φ = 0.97 alike (600
  draws each; shuffling only within each year went to 8-12 % under φ = 0.97, the months
  of one year sharing its drift). The bands drawn are 2 standard errors of the stretches'
  values, which cover 88 % at 5 stretches (t with 4 degrees of freedom) and 70 % at 2: so
  5.
- with fewer in a group (one year's months; a 13-month period holds January twice and the
  other months once) no test can tell a month's effect from that stretch's own conditions:
  a sentence says so, nothing is tested or banded, and the chart names no noise either way.
  The single days' test overstates (the point above), and a stretch cut into pieces is no
  cure: adjacent weeks share their level as days do (p46w #8: "months differ" in 17 of 17
  single years of NQ's range %, where all years' months gave p = 0.84). Groups by year are
  one stretch each and are said nothing of: a year's value is its own conditions, which is
  what the question asks of it.

Weekdays and event days spread over every week and keep their rows. The warning gives the
single rows' p when it would have found a difference.

Cost: a permutation of whole stretches, 10-15 ms over NQ's 216-228 year-months, 60 ms over
1,000 year-weeks, whatever the bars; a count's stretches over 6.4 million minute bars 30 ms.
A first stage's count under a where, its groups' rows before it counted once: 1.4 ms a
daily query, 5-8 ms on 6.4 million minute bars by hour or weekday. Every group's spread in
one weighted bincount over the rows, only when a grouped mean is there to check (about 24 ms
on 6.4 million minute bars); a median's test one more median and count. scipy.special is
imported at the first test (scipy.stats would cost a process 1.2 s; the F, χ² and
hypergeometric tails are all it needs).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import overload

import numpy as np
import pandas as pd

from barb.caveats.groups import MAX_KEY_VALUES
from barb.caveats.overlapping_windows import GroupWindows, scaled_counts
from barb.frames import BAR_COLUMNS
from barb.lineage import nodes
from barb.planning import SelectItem
from barb.script import ast
from barb.script.bincount import bincount, bincount_squares
from barb.script.calendar_names import MONTHS
from barb.script.context import RowGroups
from barb.script.evaluator import SelectValue
from barb.script.library import lookup
from barb.script.query import SortKey
from barb.summary_text import group_name, listed_text, named_text, two_digits, value_text

# The test's level: groups whose test's p is at least this are said to be within noise.
LEVEL = 0.05
# Standard errors around each group's mean the warning shows, and of the difference between
# a ranking's first two groups below which their order is said to be noise: about the 95%
# band of a two-sided test.
NOISE_ERRORS = 2.0
# Groups of fewer rows than this are named as too few to compare.
FEW_ROWS = 5
# A 2 × 2 table with a cell under this many goes to Fisher's exact test, not χ².
FEW_EVENTS = 5
# Fisher's exact test sums the hypergeometric over every count the rows kept could have had:
# up to this many (a few ms); beyond, χ², which agrees with it to the two digits said there
# (100,000 rows a side: 0.0287 against 0.0289), where the sum over half of NQ's 6.4 million
# minute bars takes 0.7 s.
EXACT_COUNTS = 50_000
# A share's band: Wilson's score interval (Wilson 1927) at this z when its group's counted
# rows n hold under ``WALD_SPREAD`` of n·p·(1 − p); else the ± of ``NOISE_ERRORS`` standard
# errors (Wald's). Wilson's, not Agresti and Coull's: both cover about 95% where Wald's
# falls far short (Brown, Cai and DasGupta 2001), but Wilson's lies within [0, 1] by its
# form (Agresti-Coull's 3 of 3 runs to 1.05), holds the share itself for any n, and needs
# no whole count of hits (a share of 0.9806 counted over 3 rows is 2.94 of 3). Wald's is
# kept where n·p·(1 − p) reaches 5, the usual rule for the normal approximation: there
# the two differ by little and most bands read as before.
WILSON_Z = 1.96
WALD_SPREAD = 5.0
# A groups × (events, others) table with an expected cell under ``FEW_EVENTS`` and more
# than two groups is tested by Monte Carlo: this many tables drawn with its margins (a
# million cells at most, a thousand tables at least: 0.03 s for 18 groups).
DRAWS = 10_000
DRAWN_CELLS = 2_000_000
# Calendar parts whose groups are stretches of time (a month of the year holds one run of
# days a year), tested a stretch at a time, and how the warning names a stretch.
BLOCKS = {
    "month": "each year's month",
    "quarter": "each year's quarter",
    "weekofyear": "each year's week",
    "year": "each year",
}
# Stretches each group needs before the groups are compared across them (the module's
# text: below it, a 2-standard-error band over n values covers under 88 %).
MIN_STRETCHES = 5
# A permutation of whole stretches draws this many shuffles, of this many values at most.
STRETCH_DRAWS = 2_000
STRETCH_CELLS = 500_000
# What one group of a calendar part is called in the sentence on too few stretches.
_PART_NOUNS = {"month": "month", "quarter": "quarter", "weekofyear": "week of the year"}
# numpy draws such a table either row by row ("count": about 12 ns per row drawn, the fewer
# of the events and the others) or group by group ("marginals": a hypergeometric draw per
# group, about 100 ns each); rows are drawn while they are under this many per group.
_ROWS_PER_GROUP_DRAWN = 8
# The bars' values a where can keep rows by (``picks_by_values``).
BAR_VALUES = frozenset(BAR_COLUMNS) - {"timestamp", "trading_date"}
# Groups within the first one's noise named with their mean; the others are counted.
_NAMED_GROUPS = 5
# Groups an extreme is tested against one by one, the nearest first (``_Groups._pairs_p``).
MAX_PAIRS = 60
# A grouped mean's end is tested against each other group (``near_end``): Welch's t over all
# of them at once (NQ's 1m bars by time(), 450 or 1,380 groups: 1-6 ms), the shares' and the
# stretches' tests pair by pair, up to this many groups, a day's minutes (4,600 dates' shares
# took 0.3 s); beyond it the end is said untested.
MAX_PAIRED_GROUPS = 1440
# Too-few groups named; the others are counted.
_NAMED_FEW = 3


@dataclass(frozen=True)
class EvenGroups:
    """The warnings (none, or one sentence each), the columns whose groups differ by no
    more than noise, and the grouped means checked whose groups do differ, each with its
    ends' text ("highest fomc true 2.775 ± 0.3, lowest fomc false 2.239 ± 0.041"): a points
    column within noise over blended price levels can have its percent form beside it
    apart."""

    warnings: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    apart: dict[str, str] = field(default_factory=dict)
    few: FewGroups | None = None
    # Of a grouped mean whose groups do differ, its highest (lowest) group and those within
    # its noise, an end each, its group first, by column, as ``CountedNoise.near``.
    near: dict[str, list[list[dict[str, str]]]] = field(default_factory=dict)
    # The columns by a calendar part each of whose groups is one stretch of time or few
    # (``too_few_stretches_text``): nothing tested, so no group may be crowned (p48i 3).
    untested: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class FewGroup:
    """A group of fewer than ``FEW_ROWS`` rows: its name ("'Mon'"), its key values as text
    ({"year": "2026"}) and its rows."""

    name: str
    keys: dict[str, str]
    rows: int


@dataclass(frozen=True)
class FewGroups:
    """The groups of fewer than ``FEW_ROWS`` rows and the warning naming them (one of
    ``EvenGroups.warnings``)."""

    groups: list[FewGroup]
    rows: str
    text: str
    # The groups of the result (with a value), the few ones among them.
    of: int = 0

    def without(self, keys: Sequence[Mapping[str, str]]) -> str | None:
        """The warning without the groups of these ``keys`` (an unfinished year, which its
        own warning says holds 4 days); None when none is left."""
        left = [g for g in self.groups if not any(k.items() <= g.keys.items() for k in keys)]
        return _few_text(left, self.rows, self.of) if left else None


@dataclass(frozen=True)
class _Spread:
    """One group's mean and standard error, named as the warning writes it."""

    name: str
    mean: float
    error: float
    # A share over few counted rows: its Wilson interval (low, high), printed in place of
    # the ± band.
    interval: tuple[float, float] | None = None

    def value(self) -> str:
        """ "0.5248 ± 0.031"; a share over few rows "1 (95%: 0.43–1)", its interval's ends
        rounded outwards to two decimals so that it claims no more than it knows."""
        if self.interval is not None:
            return f"{value_text(self.mean)} ({interval_text(self.interval)})"
        band = NOISE_ERRORS * self.error
        # A share of 1 (every row true) has no spread; its error's rounding left 6.8e-09.
        if band <= 1e-6 * max(1.0, abs(self.mean)):
            band = 0.0
        return f"{value_text(self.mean)} ± {two_digits(band)}"

    def text(self) -> str:
        return f"{self.name} {self.value()}"


@dataclass(frozen=True)
class _Test:
    """A test across the groups: its name, p, how many groups it took and their fewest and
    most rows."""

    name: str
    p: float
    groups: int
    sizes: tuple[int, int]
    # Groups whose rows read overlapping windows ahead: the window, and the fewest and most
    # rows before they were counted as the independent ones (``sizes``).
    window: int = 0
    rows: tuple[int, int] = (0, 0)
    # Groups that are stretches of time (``BLOCKS``): the calendar part whose stretches were
    # counted once each (``sizes``), and the p of the same test over the single rows.
    blocks: str = ""
    single_p: float | None = None
    # Groups of too few stretches left out of the test, said ("; left out, too few: …").
    left: str = ""
    # Groups of one row, which Welch's test leaves out (no spread to weigh them by), named.
    alone: str = ""


def even_groups(
    select: Sequence[SelectItem],
    answers: Mapping[str, SelectValue],
    sort: Sequence[SortKey] = (),
    rows: str = "rows",
    windows: Mapping[str, GroupWindows] | None = None,
    blocks: str | None = None,
) -> EvenGroups:
    """The select items that are means or medians by group whose groups differ by no more
    than noise (a test across all of them, p ≥ ``LEVEL``), the groups of fewer than
    ``FEW_ROWS`` ``rows`` ("days"), and the ranking a sort by a mean names first within the
    noise of those after it; read from the values each statistic was taken over (no
    evaluation again). ``windows``: the items whose rows read overlapping windows ahead,
    tested on the rows counted one at a time. ``blocks``: the calendar part the one group key
    is (``"month"``), whose groups are stretches of time tested a stretch at a time."""
    said: list[str] = []
    columns, ranked = [], []
    few: dict[str, FewGroup] = {}
    of = 0  # the groups there are
    apart: dict[str, str] = {}
    near: dict[str, list[list[dict[str, str]]]] = {}
    differ: list[str] = []  # the columns tested apart, with their test, said beside noise
    tested: list[tuple[_Groups, _Test]] = []
    unstretched: list[tuple[str, _Groups]] = []  # too few stretches a group to compare
    untested: list[str] = []
    ranking = sort[0].column if sort else None
    for item in select:
        groups = _Groups.of(item, answers[item.name], (windows or {}).get(item.name), blocks)
        if groups is None:
            continue
        few.update(groups.few())
        of = max(of, groups.valued())
        if groups.too_few():  # nothing tested, banded or ranked: see the module's text
            unstretched.append((item.name, groups))
            continue
        test = groups.test()
        ends = groups.ends(rows)
        if test is not None and ends is not None and test.p >= LEVEL:
            tested.append((groups, test))
            said.append(f"{item.name} ({ends}; {test.name} p = {two_digits(test.p)})")
            columns.append(item.name)
            continue
        if test is not None and ends is not None:
            differ.append(f"{item.name} ({test.name} p = {two_digits(test.p)})")
        if groups.median or ends is None:
            continue
        apart[item.name] = ends
        first_said = False
        if item.name == ranking:
            named = groups.ranked_first(descending=sort[0].descending, column=item.name)
            ranked += named
            first_said = bool(named)
        # Each end against every other group: the chart names the highest and the lowest.
        for lowest in (False, True):
            sentence, end = groups.near_end(item.name, lowest=lowest, rows=rows)
            if not sentence:
                continue
            if end:  # tested: the end and the groups within its noise, for the chart
                near.setdefault(item.name, []).append(end)
            said_first = first_said and lowest == (not sort[0].descending)
            if sentence and not said_first:  # the ranking's sentence names that end already
                ranked.append(sentence)
    warnings = ranked
    if said:
        first, test = tested[0]
        k, verb = test.groups, "differs" if len(said) == 1 else "differ"
        # A median's ends and a share's over few rows are shown without a ±: the band is
        # named only beside one shown so.
        band = any(" ± " in text for text in said)
        errors = f"; ± {NOISE_ERRORS:g} standard errors" if band else ""
        warnings = [
            f"The groups differ by less than their noise: across the {k} {first.keys()} "
            f"groups ({_sizes_text([t for _, t in tested], rows)}), {listed_text(said)} {verb} no "
            f"more than {k} groups of pure noise would (p ≥ {LEVEL:g}{errors})."
            + _single_rows_text([t for _, t in tested], rows)
            + _differ_text(differ),
            *ranked,
        ]
    if unstretched and blocks in _PART_NOUNS:  # a year's value is its own: nothing said
        first_groups = unstretched[0][1]
        stretched = first_groups.stretched()
        assert stretched is not None
        names = [name for name, _ in unstretched]
        if len(stretched):  # no group, a where kept no row ("open < open" by month): none
            warnings.append(
                too_few_stretches_text(names, blocks, first_groups.names(), stretched, rows)
            )
            untested = names
    if not few:
        return EvenGroups(warnings, columns, apart, near=near, untested=untested)
    small = FewGroups(list(few.values()), rows, _few_text(list(few.values()), rows, of), of)
    return EvenGroups([*warnings, small.text], columns, apart, small, near, untested)


@dataclass
class _Groups:
    """A grouped ``mean(x)`` or ``median(x)`` item: its values by group, the values they
    were taken over, the groups, and each group's count and spread once asked for."""

    values: np.ndarray
    over: pd.Series
    rows: RowGroups
    median: bool
    windows: GroupWindows | None = None
    # The calendar part (``BLOCKS``) the groups are stretches of time by; None: any other.
    blocks: str | None = None
    # The calendar part the one group key is ("month"), for the groups' names.
    part: str | None = None
    _sample: _Sample | None = None
    _units: _Sample | None = None

    @classmethod
    def of(
        cls,
        item: SelectItem,
        answer: SelectValue,
        windows: GroupWindows | None = None,
        blocks: str | None = None,
    ) -> _Groups | None:
        """None for any other item than a grouped mean or median of one argument."""
        expr = item.expr
        if not (
            isinstance(expr, ast.Call)
            and expr.name.lower() in ("mean", "median")
            and len(expr.args) == 1
        ):
            return None
        rows, args = answer.rows, answer.samples.get(expr)
        if not rows.grouped or not args or not isinstance(args[0], pd.Series):
            return None
        median = expr.name.lower() == "median"
        value = answer.value
        numbers = isinstance(value, pd.Series) and isinstance(value.dtype, np.dtype)
        if numbers and value.dtype.kind in "iuf":  # what to_numeric would give back as it is
            values_ = value.to_numpy(dtype=np.float64)
        else:
            values = pd.to_numeric(pd.Series(value), errors="coerce")
            values_ = values.to_numpy(dtype=np.float64)
        # Overlapping windows ahead are counted by their own rule (one window at a time).
        stretches = blocks if blocks in BLOCKS and windows is None else None
        return cls(values_, args[0], rows, median, windows, stretches, blocks)

    @property
    def sample(self) -> _Sample | None:
        if self._sample is None:
            means = None if self.median else self.values
            self._sample = _Sample.of(self.over, self.rows, means)
        return self._sample

    @property
    def units(self) -> _Sample | None:
        """The stretches of time the test counts once each (one value per year's month, by
        the group's statistic), when the groups are stretches (``blocks``); else None."""
        if self.blocks is None or self.sample is None:
            return None
        if self._units is None:
            self._units = self.sample.stretches(self.median)
        return self._units

    def stretched(self) -> np.ndarray | None:
        """Each group's stretches (``units``) of the groups with a value, when they are
        stretches of time; None for any other groups."""
        units, sample = self.units, self.sample
        if units is None or sample is None:
            return None
        return units.counts[sample.counts > 0]

    def too_few(self) -> bool:
        """Whether the groups are stretches of time too few of which hold ``MIN_STRETCHES``
        (``enough_stretches``)."""
        stretched = self.stretched()
        return stretched is not None and not enough_stretches(stretched)

    def names(self) -> list[str]:
        """The names of the groups with a value ("month 1"), in the result's order."""
        sample = self.sample
        assert sample is not None and self.rows.index is not None
        at = np.flatnonzero(sample.counts > 0)
        return [self.name(int(i)) for i in at]

    def name(self, at: int) -> str:
        """Group ``at`` as the warning names it: "'Wed'", "m 9 (Sep)" (a month of the year
        by its number, as the table lists it, with the name the chart gives it)."""
        assert self.rows.index is not None
        name = group_name(self.rows.index, at, text_alone=True)
        month = self.rows.index[at] if self.part == "month" else None
        if isinstance(month, int | np.integer) and 1 <= month <= len(MONTHS):
            return f"{name} ({MONTHS[int(month) - 1][:3]})"
        return name

    def keys(self) -> str:
        """ "weekday", "year × month": what the groups are by."""
        assert self.rows.index is not None
        return " × ".join(name or "group" for name in self.rows.index.names)

    def few(self) -> dict[str, FewGroup]:
        """The groups of fewer than ``FEW_ROWS`` rows with a value, by name."""
        sample = self.sample
        if sample is None:
            return {}
        index = self.rows.index
        assert index is not None
        found = {}
        for at in np.flatnonzero((sample.counts > 0) & (sample.counts < FEW_ROWS)):
            values = index[at] if isinstance(index, pd.MultiIndex) else (index[at],)
            keys = {str(k): value_text(v) for k, v in zip(index.names, values, strict=True)}
            name = group_name(index, int(at), text_alone=True)
            found[name] = FewGroup(name, keys, int(sample.counts[at]))
        return found

    def valued(self) -> int:
        """How many groups have a value."""
        sample = self.sample
        return 0 if sample is None else int(np.count_nonzero(sample.counts > 0))

    def test(self) -> _Test | None:
        """The test across the groups with a value; None when there is nothing to test
        (under two such groups, or no spread in any)."""
        sample = self.sample
        if sample is None:
            return None
        counts = self._independent(sample)
        if self.median:
            test = _median_test(sample, counts)
        elif sample.shares:
            test = _share_test(self._scaled(sample.sums(), sample, counts), counts)
        else:
            test = _welch_anova(self.values, counts, sample.variances)
            # A group of one row has no spread to weigh it by: Welch leaves it out, and the
            # sentence says so ("across the 3 d groups (2 days each)" beside 4 listed).
            single = np.flatnonzero((counts == 1) & np.isfinite(self.values))
            if test is not None and len(single):
                assert self.rows.index is not None
                alone = listed_text([self.name(int(at)) for at in single])
                test = replace(test, alone=alone)
        units = self.units
        if units is not None and self.blocks is not None:
            # A stretch's rows share its level: its mean (or median) is one value, and the
            # groups are compared across the stretches, when each has enough of them.
            single = test
            if self.too_few():
                return None
            # A group of under MIN_STRETCHES (a week 53 of one year in six) is left out, said.
            enough = units.counts >= MIN_STRETCHES
            short = np.flatnonzero(~enough & (sample.counts > 0))
            slots = self.rows.slots
            coded = np.flatnonzero(enough) if slots is None else slots[enough]
            tested = np.isin(units.codes, coded)
            test = _stretch_test(units.numbers[tested], units.codes[tested])
            if test is None:
                return None
            held = sample.counts[(sample.counts > 0) & enough]
            assert self.rows.index is not None
            left = [f"{self.name(int(at))} ({_times(int(units.counts[at]))})" for at in short]
            return replace(
                test,
                left=f"; left out, too few stretches: {listed_text(left)}" if left else "",
                blocks=self.blocks,
                rows=(int(held.min()), int(held.max())),
                single_p=None if single is None else single.p,
            )
        if test is None or self.windows is None:
            return test
        held = sample.counts[sample.counts > 0]
        rows = (int(held.min()), int(held.max())) if len(held) else (0, 0)
        return replace(test, window=self.windows.window, rows=rows)

    def _independent(self, sample: _Sample) -> np.ndarray:
        """Each group's rows as a test counts them: those with a value, or, read over
        overlapping windows ahead, as many as are taken so that no two share a bar."""
        if self.windows is None or len(self.windows.taken) != len(sample.counts):
            return sample.counts
        return np.minimum(self.windows.taken, sample.counts)

    def _scaled(self, events: np.ndarray, sample: _Sample, counts: np.ndarray) -> np.ndarray:
        """Each group's ``events`` in the share they hold of its rows, over ``counts``
        rows in place of all of them (rounded: Fisher's test counts whole rows)."""
        if counts is sample.counts:
            return events
        return scaled_counts(events, counts, sample.counts)

    def spread(self, at: int) -> _Spread | None:
        """Group ``at``'s mean and standard error; None under two rows with a value."""
        sample = self.sample
        if sample is None or sample.counts[at] < 2:
            return None
        count = float(self._independent(sample)[at])
        error = math.sqrt(float(sample.variances[at]) / count) if count else math.nan
        share, interval = float(self.values[at]), None
        units = self.units
        if units is not None:  # known to the spread of its stretches' values, when enough
            count = float(units.counts[at])
            enough = count >= MIN_STRETCHES
            error = math.sqrt(float(units.variances[at]) / count) if enough else math.nan
            # A share whose stretches are each one row (a month's bar a year) or all alike
            # (10 Septembers of 10 up) is a share of the stretches, Wilson's over their
            # count: their spread's "1 ± 0" read as certainty (p47c C).
            if sample.shares and enough and (units.shares or units.variances[at] == 0):
                interval = few_rows_interval(share, count)
        elif sample.shares and count:
            interval = few_rows_interval(share, count)
        if interval is not None:  # the error it implies for comparing groups
            error = (interval[1] - interval[0]) / (2 * WILSON_Z)
        if not math.isfinite(error):
            return None
        assert self.rows.index is not None
        name = self.name(at)
        return _Spread(name, share, error, interval)

    def ends(self, rows: str = "rows") -> str | None:
        """ "highest 'Thu' 475.56 ± 99, lowest 'Wed' 331.31 ± 63" (a median's without the
        ±); None under two groups with a value, or a mean's end group of fewer than two
        rows. A group too few to rank beyond an end is named beside it, in ``rows``."""
        finite = np.flatnonzero(np.isfinite(self.values))
        sample = self.sample
        skipped = finite[:0]
        if sample is not None:
            # A group too few to compare (the data's 4-day last year) is named as such, not
            # as the highest or lowest: "lowest year 2026 -0.24 ± 0.47" (p37a).
            enough = finite[sample.counts[finite] >= FEW_ROWS]
            if len(enough) >= 2:
                skipped, finite = np.setdiff1d(finite, enough), enough
        if len(finite) < 2:
            return None
        high = int(finite[np.argmax(self.values[finite])])
        low = int(finite[np.argmin(self.values[finite])])
        if high == low:
            return None
        beyond = self._beyond(skipped, high, 1.0, rows), self._beyond(skipped, low, -1.0, rows)
        if self.median:
            high_name, low_name = (self.name(at) for at in (high, low))
            return (
                f"highest {high_name} {value_text(self.values[high])}{beyond[0]}, "
                f"lowest {low_name} {value_text(self.values[low])}{beyond[1]}"
            )
        spreads = self.spread(high), self.spread(low)
        if spreads[0] is None or spreads[1] is None:
            return None
        return f"highest {spreads[0].text()}{beyond[0]}, lowest {spreads[1].text()}{beyond[1]}"

    def _beyond(self, skipped: np.ndarray, end: int, sign: float, rows: str) -> str:
        """ " (year 2026: 0.1987 over 4 days, too few to rank)" when a group left out of the
        ranking as too few lies beyond the ``end`` group (``sign`` 1: above the highest, -1:
        below the lowest); else "". NQ's mean daily return by year named "highest year 2020
        0.1891" while the listed 2026, 4 days of an unfinished year, read 0.1987."""
        if not len(skipped):
            return ""
        at = int(skipped[np.argmax(sign * self.values[skipped])])
        if sign * self.values[at] <= sign * self.values[end]:
            return ""
        sample = self.sample
        assert sample is not None and self.rows.index is not None
        name = self.name(at)
        held = _rows(int(sample.counts[at]), rows)
        return f" ({name}: {value_text(self.values[at])} over {held}, too few to rank)"

    def near_end(
        self, column: str, *, lowest: bool, rows: str = "rows"
    ) -> tuple[str, list[dict[str, str]]]:
        """A sentence when the group with the highest (``lowest``: the lowest) mean is within
        noise of others, each tested against it alone, and that group's keys and theirs
        (``CountedNoise.near``); ("", []) when it stands apart. The test across the groups
        can find them different while the end is one of several alike: NQ's ETH volume by
        hour of 2024 differs (15:00 62,497 against 5,148-5,217 overnight), but 00:00's
        "lowest" 5,148 lay within 70 contracts of seven other overnight hours, each known
        to about ±200 (00:00 against 23:00: p = 0.92), and the chart painted it.

        Each pair as the groups are tested (``_pair_p``), at ``LEVEL``, with no correction
        for the many pairs, as a count's ends are (``_first_count``): a correction would
        call more groups alike, and naming one too many beside the end is the safer
        error. Groups of fewer than ``FEW_ROWS`` rows are neither ends nor named. Of more
        than ``MAX_PAIRED_GROUPS`` groups (dates), the pair-by-pair tests (shares, stretches)
        are not run and the end is said untested: it was skipped silently beyond 31 groups,
        and NQ's minute bars of 2025 by time() crowned "lowest 16:49 5.064" of 450 minutes.
        """
        sample = self.sample
        if sample is None or self.median or self.rows.index is None:
            return "", []
        finite = np.flatnonzero(np.isfinite(self.values) & (sample.counts >= FEW_ROWS))
        if len(finite) < 3:  # of two groups the test across them is the pair's
            return "", []
        # Stable: of tied ends the first, as the summary's highest and lowest name it.
        keys = self.values[finite] if lowest else -self.values[finite]
        order = finite[np.argsort(keys, kind="stable")]
        end = int(order[0])
        paired = self.units is not None or sample.shares  # no test of all pairs at once
        if paired and len(finite) > MAX_PAIRED_GROUPS:  # both ends said once, with the highest
            if lowest:
                return "", []
            low = int(finite[np.argsort(self.values[finite], kind="stable")][0])
            high_name, low_name = (
                group_name(self.rows.index, at, text_alone=True) for at in (end, low)
            )
            return (
                f"{column}: the highest mean ({high_name}) and the lowest ({low_name}) of "
                f"{len(finite):,} groups were not tested against the others (too many to test "
                "pair by pair): groups beside them may be within noise of them.",
                [],
            )
        ps = self._pairs_p(end, order[1:])
        close = [(int(at), float(p)) for at, p in zip(order[1:], ps, strict=True) if p >= LEVEL]
        if not close:
            return "", []
        index = self.rows.index
        first = self.spread(end)
        name = group_name(index, end, text_alone=True)
        held = first.value() if first is not None else value_text(self.values[end])
        named = [
            f"{group_name(index, at, text_alone=True)} {value_text(self.values[at])} "
            f"(p = {two_digits(p)})"
            for at, p in close[:_NAMED_GROUPS]
        ]
        listed = named_text(named, len(close))
        others = "other group is" if len(close) == 1 else "other groups are"
        sentence = (
            f"{column}: {name} has the {'lowest' if lowest else 'highest'} mean ({held}), but "
            f"{len(close)} {others} within noise of it by {self._pair_test()}: {listed}; "
            "their order is noise."
        )
        return sentence, [_keys(index, at) for at in (end, *(at for at, _ in close))]

    def _pair_test(self) -> str:
        """How ``_pair_p`` compares two groups, as the sentence names it."""
        if self.units is not None:
            return "a permutation of the two groups' whole stretches"
        if self.sample is not None and self.sample.shares:
            return "Fisher's exact test of the two shares"
        return "Welch's t-test of the two means"

    def _pairs_p(self, end: int, others: np.ndarray) -> np.ndarray:
        """``_pair_p`` of group ``end`` against each of ``others`` (nearest first): Welch's t
        over every pair at once; the shares' and the stretches' tests pair by pair, for the
        nearest ``MAX_PAIRS`` (4,000 dates' groups would take seconds), the farther ones
        not within noise."""
        sample = self.sample
        assert sample is not None
        found = np.full(len(others), np.nan)
        if self.units is None and not sample.shares:
            from scipy import special  # here, not at start-up: a few tenths of a second

            n = self._independent(sample).astype(np.float64)
            errors = sample.variances / n  # each mean's squared standard error
            one, them = errors[end], errors[others]
            both = one + them
            with np.errstate(all="ignore"):
                t = (self.values[end] - self.values[others]) / np.sqrt(both)
                df = both**2 / (one**2 / (n[end] - 1) + them**2 / (n[others] - 1))
                found = 2 * special.stdtr(df, -np.abs(t))
            plain = np.isfinite(found) & (both > 0)
            for at in np.flatnonzero(~plain):  # no spread in one: the classic F, as the test
                found[at] = self._pair_p(end, int(others[at]))
            return found
        for at, other in enumerate(others[:MAX_PAIRS]):
            found[at] = self._pair_p(end, int(other))
        return found

    def _pair_p(self, one: int, other: int) -> float:
        """The p of group ``one`` against ``other`` by the test across the groups taken to
        the two: Welch's t (the two-group Welch ANOVA), the two shares' exact test, or the
        permutation of the two groups' whole stretches; NaN when they cannot be compared
        (too few stretches), which is never within noise."""
        sample = self.sample
        assert sample is not None
        pair = [one, other]
        units = self.units
        if units is not None:
            if min(units.counts[one], units.counts[other]) < MIN_STRETCHES:
                return math.nan
            slots = self.rows.slots
            codes = np.array(pair) if slots is None else slots[pair]
            both = np.isin(units.codes, codes)
            test = _stretch_test(units.numbers[both], units.codes[both])
            return 1.0 if test is None else test.p
        counts = self._independent(sample)
        if sample.shares:
            hits = np.rint(self._scaled(sample.sums(), sample, counts)).astype(np.int64)
            n = counts.astype(np.int64)
            return two_shares_p(int(hits[one]), int(n[one]), int(hits[other]), int(n[other]))[1]
        test = _welch_anova(self.values[pair], counts[pair], sample.variances[pair])
        return 1.0 if test is None else test.p

    def ranked_first(self, *, descending: bool, column: str) -> list[str]:
        """A sentence when the group the sort puts first is within noise of the next one,
        naming every group within its noise in the sort's order."""
        finite = np.flatnonzero(np.isfinite(self.values))
        keys = -self.values[finite] if descending else self.values[finite]
        order = finite[np.argsort(keys, kind="stable")]  # as the table's stable sort
        if len(order) < 2:
            return []
        first, second = self.spread(int(order[0])), self.spread(int(order[1]))
        if first is None or second is None or not _within_noise(first, second):
            return []  # a clear first, or no spread to tell: one group picked at most
        close = [
            spread
            for spread in (self.spread(int(at)) for at in order[1:])
            if spread is not None and _within_noise(first, spread)
        ]
        named = [f"{s.name} {value_text(s.mean)}" for s in close[:_NAMED_GROUPS]]
        listed = named_text(named, len(close))
        others = "other group is" if len(close) == 1 else "other groups are"
        errors = "" if first.interval else f" (± {NOISE_ERRORS:g} standard errors)"
        return [
            f"{column}: {first.name} ranks first at {first.value()}{errors}, but "
            f"{len(close)} {others} within {NOISE_ERRORS:g} standard "
            f"errors of the difference from it: {listed}; their order is noise."
        ]


@dataclass(frozen=True)
class CountedNoise:
    """What ``counted_noise`` found: its warnings, the counts no further from equal shares
    than chance (``columns``, as ``EvenGroups.columns``), and of a count whose most or
    fewest counted group is within noise of others, that group's keys and theirs (``near``,
    by column, an end each; the end's group first): a chart names them together, as the
    warning does, not the first alone."""

    warnings: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    near: dict[str, list[list[dict[str, str]]]] = field(default_factory=dict)
    untested: list[str] = field(default_factory=list)  # as ``EvenGroups.untested``


def counted_noise(
    select: Sequence[SelectItem],
    answers: Mapping[str, SelectValue],
    sort: Sequence[SortKey],
    before: Callable[[], pd.Series | None] | None = None,
    rows: str = "rows",
    stretches: Callable[[], pd.Series | None] | None = None,
    blocks: str | None = None,
    listed: pd.Index | None = None,
) -> CountedNoise:
    """Warnings for the ``count()`` items of a stage whose groups are outcomes its rows
    fell in (see the module's text): their counts no further from equal shares than chance
    would put them, or the group a reader names within noise of others.

    ``before``: a first stage's count under a where, each group's ``rows`` before the where
    (every group of the period, those it emptied too; None: too many to test): the counts
    are then the where's hits of those rows, tested as shares of them (``_RateTests``), the
    groups it emptied among them at 0. ``stretches``: of groups that are stretches of time
    (``blocks``, the key's calendar part), each stretch's share of its rows the where kept,
    indexed by its group (``stretch_shares``): tested across the stretches, as a mean's.
    ``listed``: every group the table lists, those no row counted among them (the hours no
    day's low fell in, ``barb.outcome_groups``): tested at 0, the fewest end of them."""
    said: list[str] = []
    columns: list[str] = []
    untested: list[str] = []
    near: dict[str, list[list[dict[str, str]]]] = {}
    ranking = sort[0] if sort else None
    for item in select:
        expr = item.expr
        if not (isinstance(expr, ast.Call) and expr.name.lower() == "count" and not expr.args):
            continue
        counts = pd.to_numeric(pd.Series(answers[item.name].value), errors="coerce")
        positive = counts > 0
        if not positive.all():  # every group counted most often: no copy
            counts = counts[positive]
        if listed is not None and counts.index.isin(listed).all():
            counts = counts.reindex(listed, fill_value=0)
        if len(counts) < 2 or not isinstance(counts.index, pd.Index):
            continue
        if ranking is not None and ranking.column != item.name:
            continue  # a ranking by another column: its first is not this count's
        rates = None
        if before is not None:
            sizes = before()
            if sizes is None:
                continue
            if counts.index.isin(sizes.index).all():  # the groups the where emptied, at 0
                counts = counts.reindex(sizes.index, fill_value=0)
            shares = stretches() if stretches is not None and blocks in BLOCKS else None
            rates = _RateTests.of(counts, sizes, rows, shares)
            if rates is None:
                continue
        names = _GroupNames(counts.index)
        values = counts.to_numpy(dtype=np.int64)
        stretched = None if rates is None else rates.stretches
        if stretched is not None and not enough_stretches(stretched):  # nothing tested
            if blocks in _PART_NOUNS:  # a year's count is its own: nothing said
                said.append(too_few_stretches_text([item.name], blocks, names, stretched, rows))
                untested.append(item.name)
            continue
        test = _equal_shares(values) if rates is None else rates.test
        if test is not None and test.p >= LEVEL:
            high, low = int(np.argmax(values)), int(np.argmin(values))
            keys = _key_names(counts.index)
            if rates is None:
                said.append(
                    f"The counts differ by less than their noise: {item.name} over the "
                    f"{len(values)} {keys} groups (highest {names[high]} {values[high]}, "
                    f"lowest {names[low]} {values[low]} of {values.sum():,}) lie no further "
                    f"from equal shares than chance would put them ({test.name} p = "
                    f"{two_digits(test.p)})."
                )
            else:
                said.append(
                    f"The counts differ by less than their noise: {item.name} over the "
                    f"{rates.groups} {keys} groups, highest {rates.of_rows(names, high)} and "
                    f"lowest {rates.of_rows(names, low)}, are as shares of their groups' "
                    f"{rows} no further apart than chance would put them ({test.name} p = "
                    f"{two_digits(test.p)}{rates.left_text(names)})."
                )
            columns.append(item.name)
            continue
        lowest = ranking is not None and not ranking.descending
        sentences, close = _first_count(item.name, names, values, lowest, rates)
        said += sentences
        # The other end, which the chart names too: "least often Wed 137" stood alone beside
        # Thu 141 and Tue 142 (p = 0.81), and the model, told of the most counted end only,
        # named Wednesday. Not when the first end's groups name it already.
        other_said, other = _first_count(item.name, names, values, not lowest, rates)
        ends = [end for end in (close, other) if end]
        if len(ends) == 2 and set(other) <= set(close):
            ends = ends[:1]
        else:
            said += other_said
        if ends:
            near[item.name] = [[_keys(counts.index, at) for at in end] for end in ends]
    return CountedNoise(said, columns, near, untested)


class _GroupNames(Sequence[str]):
    """Each group's name as a count's warning says it ("'Wed'", "year 2024"), made when
    first read: a sentence names two or three of the groups, and naming all 18 years of a
    count by year cost more than its test."""

    def __init__(self, index: pd.Index) -> None:
        self.index = index
        self.made: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self.index)

    @overload
    def __getitem__(self, at: int) -> str: ...

    @overload
    def __getitem__(self, at: slice) -> list[str]: ...

    def __getitem__(self, at: int | slice) -> str | list[str]:
        if isinstance(at, slice):
            return [self[i] for i in range(len(self))[at]]
        at = range(len(self))[at]  # a negative place counted from the end; IndexError past it
        if at not in self.made:
            self.made[at] = group_name(self.index, at, text_alone=True)
        return self.made[at]


def _keys(index: pd.Index, at: int) -> dict[str, str]:
    """Group ``at``'s key values as text by key ({"outcome": "low only"}), as
    ``FewGroup.keys``: a chart finds its row by them."""
    values = index[at] if isinstance(index, pd.MultiIndex) else (index[at],)
    return {str(k): value_text(v) for k, v in zip(index.names, values, strict=True)}


def _first_count(
    column: str,
    names: Sequence[str],
    values: np.ndarray,
    lowest: bool,
    rates: _RateTests | None = None,
) -> tuple[list[str], list[int]]:
    """A sentence when the group with the most (``lowest``: the fewest) rows is within
    noise of others: the exact binomial test of its count against each other one's (of
    ``rates``, its share of its group's rows against theirs); and the positions of that
    group and of those within its noise (none when it stands alone)."""
    first, found = _within_noise_of(values, lowest, rates)
    close = [(at, int(values[at]), p) for at, p in found]
    # Groups tied with it (the hours a where emptied, 0 of their bars each) are named with
    # it, not as within its noise: "hour 2 has the fewest (1 of 260 bars)" was said beside
    # six hours with none, and "'01:00' has the fewest (3 of 259)" beside '02:00' 3 and
    # '04:00' 3 (p48f C3).
    tied = [at for at, *_ in close if values[at] == values[first]]
    if rates is not None:
        share = rates.hits[first] / rates.sizes[first]
        tied = [at for at in tied if rates.hits[at] / rates.sizes[at] == share]
    close = [c for c in close if c[0] not in tied]
    if not close:
        return [], []
    named = [
        f"{names[at]} {values[at]} (p = {two_digits(p)})"
        if rates is None
        else rates.of_rows(names, at, f", p = {two_digits(p)}")
        for at, _, p in close[:_NAMED_GROUPS]
    ]
    listed = named_text(named, len(close))
    most = "fewest" if lowest else "most"
    others = "other group is" if len(close) == 1 else "other groups are"
    held = f"{values[first]} of {values.sum():,}"
    test = "the exact binomial test of the two counts"
    if rates is not None:
        held = rates.share_text(first)
        if rates.units is not None:
            test = "a permutation of the two groups' whole stretches"
        else:
            fisher = all(rates.pair(first, at)[0] == "Fisher" for at, *_ in close)
            name = "Fisher's exact test" if fisher else "the χ² test"
            test = f"{name} of the two groups' shares of their {rates.rows}"
    subject, it = f"{names[first]} has", "it"
    if tied:
        ends = [first, *tied]
        shown = [names[at] for at in ends[:_NAMED_GROUPS]]
        subject = listed_text(
            shown + ([f"{len(ends) - len(shown)} more"] if ends[len(shown) :] else [])
        )
        subject, it = f"{subject} have", "them"
        held = f"{values[first]:,} each of {values.sum():,}"
        if rates is not None:
            sized = rates.sizes[ends]
            of = (
                f"{sized.min():,}"
                if sized.min() == sized.max()
                else f"{sized.min():,}-{sized.max():,}"
            )
            held = f"{values[first]:,} of {of} {rates.rows} each"
    sentence = (
        f"{column}: {subject} the {most} ({held}), but {len(close)} {others} within "
        f"noise of {it} by {test}: {listed}; their order is noise."
    )
    return [sentence], [first, *tied, *(at for at, *_ in close)]


def _within_noise_of(
    values: np.ndarray, lowest: bool, rates: _RateTests | None = None
) -> tuple[int, list[tuple[int, float]]]:
    """The position of the group with the most (``lowest``: the fewest) rows, and of each
    other group within its noise by the exact binomial test of the two counts (of
    ``rates``, Fisher's of the two shares), with that test's p, the nearest count first."""
    first = int(np.argmin(values) if lowest else np.argmax(values))
    found = [
        (
            int(at),
            binomial_p(int(values[first]), int(values[at]))
            if rates is None
            else rates.pair(first, int(at))[1],
        )
        for at in np.argsort(values if lowest else -values, kind="stable")
        if at != first
    ]
    return first, [(at, p) for at, p in found if p >= LEVEL]


def picks_by_values(where: ast.Expr, mapped: Mapping[str, ast.Expr]) -> bool:
    """Whether ``where`` keeps rows by the bars' values (a price, the volume, an indicator or
    a session's value, through the map and the named patterns' definitions), not by the
    calendar or an event's schedule alone: "year() >= 2020" or "not holiday()" by month
    counts each month's days, and FOMC days by weekday the schedule, not chance."""
    pending: list[ast.Node] = [where]
    while pending:
        for node in nodes(pending.pop(), mapped):
            if isinstance(node, ast.Column) and node.name in BAR_VALUES:
                return True
            spec = lookup(node.name) if isinstance(node, ast.Call) else None
            if spec is None:
                continue
            if spec.category in ("indicator", "session"):
                return True
            if spec.body is not None:
                pending.append(spec.body)
    return False


def sizes_before(
    frame: pd.DataFrame,
    keys: Sequence[str],
    rows: np.ndarray,
    grouped: Callable[[], RowGroups] | None = None,
) -> pd.Series | None:
    """Each group's count of ``rows`` (a mask over ``frame``, which holds the group keys),
    indexed as the stage's groups are: the rows before the where, by weekday {Mon: 915, Tue:
    940, …}. None when a key has more than ``MAX_KEY_VALUES`` values there (a date's).
    ``grouped``: the rows' groups when already found (``RowGroups.by_keys``)."""
    every = bool(rows.all())
    column = frame[keys[0]]
    if len(keys) == 1 and isinstance(column.dtype, pd.CategoricalDtype):
        # dayname()'s codes as they are, a comparison per name: factorizing 6.4 million
        # minute bars took 40 ms, a bincount of their codes (cast to 8 bytes) 14-28 ms, five
        # comparisons of the 1-byte codes 5 ms.
        index: pd.Index = pd.Index(column.cat.categories, name=keys[0])
        if len(index) > MAX_KEY_VALUES:
            return None
        codes = column.cat.codes.to_numpy()
        codes = codes if every else codes[rows]
        counted = np.array([np.count_nonzero(codes == at) for at in range(len(index))])
    else:
        # Grouped over every row, then counted over those: no copy of millions of minute
        # bars' keys (the rows are most often all of them).
        groups = grouped() if grouped is not None else RowGroups.by_keys(frame, keys)
        assert groups.codes is not None and groups.index is not None
        index = groups.index
        if len(index) > MAX_KEY_VALUES and any(
            index.get_level_values(at).nunique() > MAX_KEY_VALUES for at in range(index.nlevels)
        ):
            return None
        if every and groups.sizes is not None:  # whole numbers: counted as they were coded
            counted = groups.sizes
        else:
            codes = groups.codes if every else groups.codes[rows]
            counted = bincount(codes[codes >= 0], minlength=groups.ncodes)
        if groups.slots is not None:
            counted = counted[groups.slots]
    found = pd.Series(np.asarray(counted, dtype=np.int64), index=index)
    return found[found > 0]  # groups of history rows only, before the period: not its


def stretch_shares(groups: RowGroups, rows: np.ndarray, hits: np.ndarray) -> pd.Series | None:
    """Of each stretch of consecutive ``rows`` (a mask over the rows ``groups`` holds, in
    time order) of one group, the share ``hits`` marks (the rows the where kept), indexed by
    the group's keys as ``sizes_before``: NQ's RTH days down over 3 % by month, one share
    per year's month (2008-01: 2 of 21 days). ``groups``: ``RowGroups.by_keys``, as
    ``sizes_before`` found them. None when no row is grouped."""
    assert groups.codes is not None and groups.index is not None
    every = bool(rows.all())  # most often: no copy of millions of codes
    codes, kept = (groups.codes, hits) if every else (groups.codes[rows], hits[rows])
    keyed = codes >= 0
    if not keyed.all():  # a row with no key
        codes, kept = codes[keyed], kept[keyed]
    n = len(codes)
    if not n:
        return None
    starts = np.r_[0, np.flatnonzero(codes[1:] != codes[:-1]) + 1]
    lengths = np.diff(np.r_[starts, n])
    shares = np.add.reduceat(kept.astype(np.float64), starts) / lengths
    at = codes[starts]
    if groups.slots is not None:  # sparse codes: the index holds their slots' groups
        position = np.full(groups.ncodes, -1)
        position[groups.slots] = np.arange(len(groups.slots))
        at = position[at]
    return pd.Series(shares, index=groups.index[at])


@dataclass(frozen=True)
class _RateTests:
    """A first stage's counts under a where, read as shares of their groups' rows before it:
    NQ's RTH days down over 3% by weekday, Mon 33 … Tue 26, are 33 of Monday's 915 days and
    26 of Tuesday's 940 (Monday holidays make the weekdays' days differ), and "Monday has
    the most" asks whether 3.6% stands apart from 2.8%. Across the groups, Pearson's χ² on
    the groups × (hits, others) table (``_share_test``: Fisher's for two groups with a cell
    under 5, Monte Carlo for an expected cell under 5), the groups the where emptied with
    0 hits among them; a named end against each other group, ``two_shares_p``."""

    hits: np.ndarray  # of the groups counted, in the result's order
    sizes: np.ndarray
    test: _Test | None
    groups: int  # the groups tested: those counted and those the where emptied
    rows: str
    # Groups that are stretches of time: each stretch's share and group (a position in
    # ``hits``), and each group's stretches; None: any other groups.
    units: tuple[np.ndarray, np.ndarray] | None = None
    stretches: np.ndarray | None = None

    @classmethod
    def of(
        cls,
        counts: pd.Series,
        before: pd.Series | None,
        rows: str,
        shares: pd.Series | None = None,
    ) -> _RateTests | None:
        """None when the groups are not known before the where (too many), or the where
        kept every row of them: the counts are then the calendar's, not chance's.
        ``shares``: each stretch's share of its rows the where kept, by group, when the
        groups are stretches of time: then tested across the stretches (``_stretch_test``),
        and, under ``MIN_STRETCHES`` a group, not at all."""
        if before is None:
            return None
        # The same groups most often (the counts are put on before's groups): read as they are.
        same = before.index.equals(counts.index)
        sizes = (before if same else before.reindex(counts.index)).to_numpy(
            dtype=np.float64, na_value=np.nan
        )
        if np.isnan(sizes).any():
            return None  # a group the rows before the where do not hold: not comparable
        hits = counts.to_numpy(dtype=np.int64)
        every = before.to_numpy(dtype=np.int64)
        if hits.sum() >= every.sum():
            return None
        events = np.zeros(len(every), dtype=np.int64)
        events[before.index.get_indexer(counts.index)] = hits
        groups = int(np.count_nonzero(every))
        if shares is not None:
            at = counts.index.get_indexer(shares.index)
            if (at < 0).any():
                return None  # a stretch of a group not counted: not comparable
            units = (shares.to_numpy(dtype=np.float64), at)
            stretched = np.bincount(at, minlength=len(counts))
            tested = (stretched >= MIN_STRETCHES)[at]
            enough = enough_stretches(stretched[sizes > 0])
            test = _stretch_test(units[0][tested], at[tested]) if enough else None
            sized = sizes.astype(np.int64)
            return cls(hits, sized, test, groups, rows, units, stretched)
        test = _share_test(events, every)
        return cls(hits, sizes.astype(np.int64), test, groups, rows)

    def pair(self, one: int, other: int) -> tuple[str, float]:
        """The test of group ``one``'s share against ``other``'s and its p (``two_shares_p``).
        A pair far apart by χ² (p under ``LEVEL`` / 100, every cell 5 or more) is not summed
        exactly: its verdict stands either way, and the exact sums over NQ's minute bars by
        hour (279,360 each, up to 30,000 hits) took 30 ms."""
        if self.units is not None:  # across the two groups' stretches
            values, at = self.units
            assert self.stretches is not None
            if min(self.stretches[one], self.stretches[other]) < MIN_STRETCHES:
                return "permutation", math.nan  # too few to compare: neither said nor near
            both = (at == one) | (at == other)
            test = _stretch_test(values[both], at[both])
            return ("permutation", 1.0) if test is None else (test.name, test.p)
        hits, sizes = self.hits[[one, other]], self.sizes[[one, other]]
        if min(hits.min(), (sizes - hits).min()) >= FEW_EVENTS:
            test = _share_test(hits, sizes)
            if test is not None and test.p < LEVEL / 100:
                return test.name, test.p
        return two_shares_p(int(hits[0]), int(sizes[0]), int(hits[1]), int(sizes[1]))

    def left_text(self, names: Sequence[str]) -> str:
        """ "; left out, too few stretches: month 4 (twice)": the groups of under
        ``MIN_STRETCHES`` stretches the test across the stretches left out; else ""."""
        if self.stretches is None:
            return ""
        short = np.flatnonzero(self.stretches < MIN_STRETCHES)
        left = [f"{names[at]} ({_times(int(self.stretches[at]))})" for at in short]
        return f"; left out, too few stretches: {listed_text(left)}" if left else ""

    def of_rows(self, names: Sequence[str], at: int, more: str = "") -> str:
        """ "'Mon' 33 of its 915 days (3.6%)"; with ``more`` ", p = 0.36": "(3.6%, p =
        0.36)". "Its": the group's own rows, which a count named for what it counts
        ("weeks": 'Fri' 12 of 31 days) did not say (p48f C5)."""
        share = two_digits(100 * self.hits[at] / self.sizes[at])
        return (
            f"{names[at]} {self.hits[at]:,} of its {self.sizes[at]:,} {self.rows} ({share}%{more})"
        )

    def share_text(self, at: int) -> str:
        """ "33 of its 915 days, 3.6%"."""
        share = two_digits(100 * self.hits[at] / self.sizes[at])
        return f"{self.hits[at]:,} of its {self.sizes[at]:,} {self.rows}, {share}%"


def binomial_p(one: int, other: int) -> float:
    """Two-sided p of the exact binomial test of ``one`` against ``other`` rows, each row
    of theirs in either with chance 1/2 (the distribution is symmetric: twice the smaller
    tail)."""
    from scipy import special  # here, not at start-up: a few tenths of a second

    n = one + other
    if n == 0 or one == other:
        return 1.0
    return float(min(1.0, 2 * special.bdtr(min(one, other), n, 0.5)))


def _equal_shares(counts: np.ndarray) -> _Test | None:
    """The test of ``counts`` against equal shares: the exact binomial test for two
    groups; Pearson's χ² goodness of fit for more, when each group expects at least
    ``FEW_EVENTS`` rows (else None: the approximation is poor there)."""
    from scipy import special  # here, not at start-up: a few tenths of a second

    k, total = len(counts), int(counts.sum())
    sizes = (int(counts.min()), int(counts.max()))
    if k == 2:
        return _Test("exact binomial test", binomial_p(*map(int, counts)), k, sizes)
    expected = total / k
    if expected < FEW_EVENTS:
        return None
    chi2 = float(((counts - expected) ** 2).sum() / expected)
    return _Test("χ² against equal shares", float(special.chdtrc(k - 1, chi2)), k, sizes)


def _key_names(index: pd.Index) -> str:
    """ "day", "year × month": what the groups are by."""
    return " × ".join(name or "group" for name in index.names)


def wilson_interval(share: float, n: float, z: float = WILSON_Z) -> tuple[float, float]:
    """Wilson's score interval of a ``share`` over ``n`` rows (n need not be whole: rows
    counted one at a time): the shares p whose |share − p| is within z of its standard
    error √(p (1 − p) / n). 3 of 3: (0.4385, 1); always within [0, 1]."""
    share = min(max(share, 0.0), 1.0)
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def few_rows_interval(share: float, n: float) -> tuple[float, float] | None:
    """Wilson's interval of a ``share`` over ``n`` counted rows too few for Wald's band
    (n·p·(1 − p) under ``WALD_SPREAD``), else None. Wald's fails there: a share of 1 has
    none (5 of 5 years up is no certainty), 0.6124 of 3 ran to 1.17, 1 of 2 "0.5 ± 6.4"
    with t(1)'s 12.7 standard errors. 1 of 2: (0.0945, 0.9055)."""
    if n * share * (1 - share) >= WALD_SPREAD:
        return None
    return wilson_interval(share, n)


def interval_text(interval: tuple[float, float]) -> str:
    """ "95%: 0.09–0.91": the interval's ends rounded outwards to two decimals, so that it
    claims no more than it knows."""
    low = math.floor(interval[0] * 100 + 1e-9) / 100
    high = math.ceil(interval[1] * 100 - 1e-9) / 100
    return f"95%: {low:g}–{high:g}"


def _within_noise(one: _Spread, other: _Spread) -> bool:
    return abs(one.mean - other.mean) < NOISE_ERRORS * math.hypot(one.error, other.error)


@dataclass(frozen=True)
class _Sample:
    """The rows with a value, by group: each row's code and number, and per group (in the
    result's order) the count, the variance (ddof 1, NaN under two rows), and whether every
    value is 0 or 1 (a share)."""

    codes: np.ndarray
    numbers: np.ndarray
    counts: np.ndarray
    variances: np.ndarray
    shares: bool
    rows: RowGroups

    @classmethod
    def of(cls, values: pd.Series, rows: RowGroups, means: np.ndarray | None) -> _Sample | None:
        """None for values that are not numbers.

        The variances come from one pass of the squares about a common centre: a group's
        sum of squares about its own mean is that less n (mean - centre)², with the
        ``means`` select took (a median's groups' means, None, are taken here). Whole
        numbers (volume) are never missing and are read as they are."""
        assert rows.codes is not None
        codes, counts = rows.codes, rows.sizes
        if values.dtype.kind in "iu":
            numbers = values.to_numpy()
        else:
            try:
                numbers = values.to_numpy(dtype=np.float64, na_value=np.nan)
            except (TypeError, ValueError):  # not numbers: a spread means nothing
                return None
            missing = np.isnan(numbers)
            if missing.any():
                counts = None
                codes, numbers = codes[~missing], numbers[~missing]
        if rows.sizes is None and (codes < 0).any():  # rows in no group
            counts = None
            numbers, codes = numbers[codes >= 0], codes[codes >= 0]
        if counts is None:
            counts = bincount(codes, minlength=rows.ncodes)
        n = counts.astype(np.float64)
        slots = rows.slots if rows.slots is not None else np.arange(rows.ngroups)
        by_code = np.full(rows.ncodes, np.nan)
        if means is None:
            with np.errstate(all="ignore"):
                by_code = bincount(codes, numbers.astype(np.float64), minlength=rows.ncodes) / n
        else:
            by_code[slots] = means
        finite = by_code[np.isfinite(by_code)]
        centre = float(np.median(finite)) if len(finite) else 0.0
        squares = bincount_squares(codes, numbers, centre, minlength=rows.ncodes)
        with np.errstate(all="ignore"):
            own = np.maximum(squares - n * (by_code - centre) ** 2, 0.0)
            variances = own / (n - 1)
        variances[n < 2] = np.nan
        # A share's groups' means lie in [0, 1]: only then are its values read for 0 or 1.
        within = np.all((by_code[n > 0] >= 0) & (by_code[n > 0] <= 1))
        shares = values.dtype.kind == "b" or bool(within and np.isin(numbers, (0, 1)).all())
        return cls(codes, numbers, counts[slots], variances[slots], shares, rows)

    def stretches(self, median: bool) -> _Sample:
        """One value per stretch of consecutive rows of one group, the mean (``median``:
        the median) of its rows, as a sample of its own: a month-of-year group of 4,647 NQ
        days in time order holds 18-19 stretches, one per year; one year's months, one each."""
        codes, numbers, n = self.codes, self.numbers, len(self.codes)
        # Where each stretch starts: at the first row and wherever the group changes (216
        # year-months of NQ's 6.4 million minute bars; no array a row long but the test).
        starts = np.r_[0, np.flatnonzero(codes[1:] != codes[:-1]) + 1] if n else codes[:0]
        ends = np.append(starts[1:], n) if n else starts
        if median:
            values = np.array([np.median(numbers[a:b]) for a, b in zip(starts, ends, strict=True)])
        else:
            values = np.add.reduceat(numbers, starts, dtype=np.float64) / (ends - starts)
        unit_codes = codes[starts]
        sizes = bincount(unit_codes, minlength=self.rows.ncodes)
        rows = RowGroups(len(values), unit_codes, self.rows.index, sizes, self.rows.slots)
        stretched = _Sample.of(pd.Series(values, dtype=np.float64), rows, None)
        assert stretched is not None  # numbers, never missing
        return stretched

    def sums(self) -> np.ndarray:
        """Each group's sum of its values (of a share, its events), in the result's order."""
        summed = bincount(self.codes, self.numbers.astype(np.float64), minlength=self.rows.ncodes)
        return summed if self.rows.slots is None else summed[self.rows.slots]

    def above(self, level: float) -> np.ndarray:
        """Each group's count of values above ``level``, in the result's order."""
        counted = bincount(self.codes[self.numbers > level], minlength=self.rows.ncodes)
        return counted if self.rows.slots is None else counted[self.rows.slots]


def _welch_anova(means: np.ndarray, counts: np.ndarray, variances: np.ndarray) -> _Test | None:
    """Welch's F across the groups of two rows or more; the classic F when a group's
    values are all equal (no spread to weigh it by); None under two such groups or no
    spread at all.

    With w = n / s², W = Σw and m = Σ w·mean / W: F = Σ w (mean − m)² / (k − 1) / (1 + 2 (k
    − 2) λ / (k² − 1)) with λ = Σ (1 − w / W)² / (n − 1), on k − 1 and (k² − 1) / (3 λ)
    degrees of freedom."""
    from scipy import special  # here, not at start-up: a few tenths of a second

    keep = (counts >= 2) & np.isfinite(means) & np.isfinite(variances)
    n, mean, var = counts[keep].astype(np.float64), means[keep], variances[keep]
    k = len(n)
    if k < 2:
        return None
    if (var <= 0).any():
        within = float(((n - 1) * var).sum())
        if within <= 0:
            return None  # every group constant: nothing to call noise
        grand = float((n * mean).sum() / n.sum())
        between = float((n * (mean - grand) ** 2).sum())
        f = between / (k - 1) / (within / (n.sum() - k))
        p = float(special.fdtrc(k - 1, n.sum() - k, f))
        return _Test("one-way ANOVA", p, k, (int(n.min()), int(n.max())))
    w = n / var
    total = w.sum()
    centre = (w * mean).sum() / total
    lam = float(((1 - w / total) ** 2 / (n - 1)).sum())
    f = (w * (mean - centre) ** 2).sum() / (k - 1) / (1 + 2 * (k - 2) * lam / (k**2 - 1))
    p = float(special.fdtrc(k - 1, (k**2 - 1) / (3 * lam), f))
    return _Test("Welch ANOVA", p, k, (int(n.min()), int(n.max())))


def _stretch_test(values: np.ndarray, groups: np.ndarray, seed: int = 0) -> _Test | None:
    """A permutation of whole stretches: ``values`` one per stretch (its mean, median or
    share), ``groups`` each one's group (any whole numbers); p is the share of the draws,
    each the groups' labels shuffled across the stretches, whose spread between the groups'
    means (Σ n·mean², the classic F's ranking, as the total is the same in every draw)
    reaches the one seen, counting it (as ``_drawn_p``). Exact when the stretches'
    values are exchangeable: a stretch keeps its days, and their autocorrelation, whole. None
    under two groups. NQ's RTH days down over 3 % by month, 18-19 years' months each: p =
    0.72, scipy's permutation_test 0.72 (the days' χ² read 0.029).

    The draws: ``STRETCH_DRAWS`` (p within ±0.01 around 0.05), fewer over more than
    ``STRETCH_CELLS`` values (1,000 over 1,000 stretches of weeks), a fixed seed: 10 ms over
    NQ's 228 year-months, where 10,000 draws took 140 ms."""
    present, codes = np.unique(groups, return_inverse=True)
    k, n = len(present), len(values)
    if k < 2:
        return None
    counts = np.bincount(codes, minlength=k).astype(np.float64)
    centred = values - values.mean()  # the same ranking, sums of a smaller size
    seen = float((np.bincount(codes, centred, minlength=k) ** 2 / counts).sum())
    sizes = (int(counts.min()), int(counts.max()))
    if float((centred**2).sum()) <= 1e-12 * max(1.0, float((values**2).sum())):
        return _Test("permutation test of whole stretches", 1.0, k, sizes)  # all alike
    draws = int(np.clip(STRETCH_CELLS // n, 1_000, STRETCH_DRAWS))
    # Each draw's order by random keys (float32: half the sort of numpy's permuted).
    keys = np.random.default_rng(seed).random((draws, n), dtype=np.float32)
    shuffled = codes[np.argsort(keys, axis=1)]
    offsets = (np.arange(draws) * k)[:, None]
    sums = np.bincount((shuffled + offsets).ravel(), np.tile(centred, draws), draws * k)
    spreads = (sums.reshape(draws, k) ** 2 / counts).sum(axis=1)
    reached = int(np.count_nonzero(spreads >= seen * (1 - 1e-9)))
    return _Test("permutation test of whole stretches", (reached + 1) / (draws + 1), k, sizes)


def enough_stretches(stretches: np.ndarray) -> bool:
    """Whether groups of these ``stretches`` each are compared across them: two groups or
    more of ``MIN_STRETCHES``, and at least half of them (a week 53 of one year in six is
    left out and said; a 13-month period's months, once each and January twice, are not
    compared)."""
    enough = int(np.count_nonzero(stretches >= MIN_STRETCHES))
    return enough >= 2 and 2 * enough >= len(stretches)


def _times(count: int) -> str:
    """ "once", "twice", "3 times"."""
    return {1: "once", 2: "twice"}.get(count, f"{count} times")


def too_few_stretches_text(
    columns: Sequence[str],
    part: str,
    names: Sequence[str],
    stretches: np.ndarray,
    rows: str = "rows",
) -> str:
    """The sentence for groups of a calendar part some of which hold under ``MIN_STRETCHES``
    stretches: "mean_r by month: each month appears once in these rows (month 1 twice): a
    stretch's days share their level, so no test can tell a month's effect from that
    stretch's own conditions; with 5 stretches or more each (5 years of months) they are
    compared across them." ``names``: the groups', ``stretches``: each one's count."""
    noun = _PART_NOUNS[part]
    values, seen = np.unique(stretches, return_counts=True)
    usual = int(values[np.argmax(seen)])
    others = [(n, int(c)) for n, c in zip(names, stretches, strict=True) if c != usual]
    if len(others) <= _NAMED_FEW:
        how = f"each {noun} appears {_times(usual)} in these rows"
        if others:
            how += f" ({', '.join(f'{n} {_times(c)}' for n, c in others)})"
    else:
        how = f"the {noun} groups appear {int(stretches.min())}-{int(stretches.max())} times"
        how += " each in these rows"
    return (
        f"{listed_text(list(columns))} by {noun}: {how}, as one stretch of {rows} that share "
        f"their level, so no test can tell a {noun}'s effect from that stretch's own "
        f"conditions; with {MIN_STRETCHES} or more stretches each ({MIN_STRETCHES} years) "
        f"the groups are compared across them."
    )


def _share_test(events: np.ndarray, counts: np.ndarray, what: str = "") -> _Test | None:
    """Pearson's χ² on the groups × (events, others) table; Fisher's exact test for two
    groups with a cell under ``FEW_EVENTS``, χ²'s p by Monte Carlo (``_drawn_p``) for more
    groups with an expected cell under it; None under two groups.

    When every row is an event or none is (the counted table of NQ's 2012 and 2013 up 120
    days ahead: 0.9806 and 1 of 3 rows each, both 3 of 3 in whole rows), p = 1: with those
    margins no other table could have been drawn, so the exact test's p is 1 and the groups
    cannot be told apart. That is said (the sentence's ends show the shares and their
    bands), not left unsaid: it was None, and the warning was silent exactly where 3
    windows stood against 3. (Testing unrounded counts instead would be no exact test and
    give χ² cells of 0.06.)"""
    from scipy import special  # here, not at start-up: a few tenths of a second

    keep = counts > 0
    events, counts = events[keep].astype(np.float64), counts[keep].astype(np.float64)
    k, total = len(counts), float(events.sum())
    if k < 2:
        return None
    sizes = (int(counts.min()), int(counts.max()))
    table = np.column_stack([events, counts - events])
    if total <= 0 or total >= counts.sum():
        name = "Fisher's exact test" if k == 2 else "exact test"
        return _Test(f"{what}{name}", 1.0, k, sizes)
    if k == 2 and table.min() < FEW_EVENTS:
        p = fisher_p(int(events[0]), int(counts[0]), int(events[1]), int(counts[1]))
        return _Test(f"{what}Fisher's exact test", p, k, sizes)
    expected = np.outer(counts, table.sum(axis=0)) / counts.sum()
    chi2 = float(((table - expected) ** 2 / expected).sum())
    if expected.min() < FEW_EVENTS:
        return _Test(f"{what}Monte Carlo χ²", _drawn_p(events, counts, chi2), k, sizes)
    return _Test(f"{what}χ²", float(special.chdtrc(k - 1, chi2)), k, sizes)


def _drawn_p(events: np.ndarray, counts: np.ndarray, chi2: float) -> float:
    """χ²'s p over the groups × (events, others) table by Monte Carlo: the share of tables
    with its margins (each group's rows, the events in all; the multivariate
    hypergeometric, as Fisher's test conditions) whose χ² reaches ``chi2``, counting the
    table seen (Hope 1968; R's chisq.test(simulate.p.value = TRUE)).

    Pearson's χ² distribution is poor with expected cells under 5: NQ's up 120 days ahead
    by year, 18 years of 2-3 windows counted, read χ² p = 0.4. Exact enumeration of every
    table grows as the product of the groups' sizes; drawing 10,000 tables gives p within
    ±0.005 around 0.05, and a fixed seed gives the same query the same p."""
    k = len(counts)
    sizes, hits = counts.astype(np.int64), round(float(events.sum()))
    draws = int(np.clip(DRAWN_CELLS // k, 1_000, DRAWS))
    drawn = np.random.default_rng(0).multivariate_hypergeometric(
        sizes, hits, size=draws, method=_draw_method(sizes, hits)
    )
    share = hits / float(sizes.sum())
    expected_events, expected_others = sizes * share, sizes * (1 - share)
    stats = ((drawn - expected_events) ** 2 / expected_events).sum(axis=1) + (
        (sizes - drawn - expected_others) ** 2 / expected_others
    ).sum(axis=1)
    reached = int(np.count_nonzero(stats >= chi2 * (1 - 1e-9)))
    return (reached + 1) / (draws + 1)


def _draw_method(sizes: np.ndarray, hits: int) -> str:
    """numpy's way to draw tables of groups of ``sizes`` rows holding ``hits`` events: the
    cheaper for the shape, as both draw the same distribution. "count" draws the rows one
    at a time (the fewer of the events and the others, each table) from a copy of every
    row; "marginals" draws each group's events from the rows left (one hypergeometric per
    group). NQ's ETH 1-minute bars of 2024 in 28 range buckets, 174,303 of 355,980 up:
    "marginals" (0.02 s for 10,000 tables, where "count" took 21 s); 4,647 groups of 1
    day: "count" (0.1 s, where "marginals" took 0.4 s)."""
    rows = int(sizes.sum())
    drawn = min(hits, rows - hits)
    fits = rows <= 1_000_000  # the copy of every row "count" draws from
    return "count" if fits and drawn < _ROWS_PER_GROUP_DRAWN * len(sizes) else "marginals"


def two_shares_p(hits: int, n: int, other_hits: int, m: int) -> tuple[str, float]:
    """The test's name and two-sided p of ``hits`` of ``n`` against ``other_hits`` of
    ``m``: Fisher's exact test, or χ² when it would sum over more than ``EXACT_COUNTS``
    counts. ("Fisher", 0.0015) for CL's 1,225 up days of 2,379 after a close above the
    20-day mean against 1,064 of the other 2,272."""
    total = hits + other_hits
    counts = min(n, total) - max(0, total - m) + 1
    if counts > EXACT_COUNTS and min(hits, n - hits, other_hits, m - other_hits) >= FEW_EVENTS:
        test = _share_test(np.array([hits, other_hits]), np.array([n, m]))
        if test is not None:
            return test.name, test.p
    return "Fisher", fisher_p(hits, n, other_hits, m)


def fisher_p(hits: int, n: int, other_hits: int, m: int) -> float:
    """Two-sided p of Fisher's exact test of ``hits`` of ``n`` against ``other_hits`` of
    ``m``: the chance, with the margins fixed, of a table no likelier than this one (the
    hypergeometric over every count the rows kept could have had, in logs)."""
    from scipy.special import gammaln

    total, rows = hits + other_hits, n + m
    counts = np.arange(max(0, n - (rows - total)), min(n, total) + 1)

    def log_choose(a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
        return gammaln(np.add(a, 1)) - gammaln(np.add(b, 1)) - gammaln(np.subtract(a, b) + 1)

    logs = log_choose(total, counts) + log_choose(rows - total, n - counts)
    logs -= log_choose(rows, n)
    seen = logs[hits - counts[0]]
    return float(min(1.0, np.exp(logs[logs <= seen + 1e-7]).sum()))


def _median_test(sample: _Sample, counts: np.ndarray | None = None) -> _Test | None:
    """Mood's median test: ``_share_test`` on each group's count of values above the
    median of all of them (values equal to it count as below, as scipy's median_test);
    over ``counts`` rows a group (its rows counted one at a time), the counts above in
    their share."""
    if not len(sample.numbers):
        return None
    level = float(np.median(sample.numbers))
    above = sample.above(level)
    if counts is not None and counts is not sample.counts:
        above = scaled_counts(above, counts, sample.counts)
    else:
        counts = sample.counts
    return _share_test(above, counts, "Mood's median test, ")


def _sizes_text(tested: Sequence[_Test], rows: str) -> str:
    """ "4 days each", "17-18 months each": the rows with a value per group tested; of rows
    read over overlapping windows, "78-95 days each as counted so that no two 40-day windows
    share a day; 1,739-2,821 days with their windows overlapping"."""
    low, high = min(t.sizes[0] for t in tested), max(t.sizes[1] for t in tested)
    blocked = [t for t in tested if t.blocks]
    if blocked:
        held = min(t.rows[0] for t in blocked), max(t.rows[1] for t in blocked)
        count = f"{low:,}" if low == high else f"{low:,}-{high:,}"
        days = _rows(held[0], rows) if held[0] == held[1] else f"{held[0]:,}-{held[1]:,} {rows}"
        left = "".join(t.left for t in blocked[:1])
        return f"{BLOCKS[blocked[0].blocks]} as one value: {count} each, of {days}{left}"
    text = f"{_rows(low, rows)} each" if low == high else f"{low:,}-{_rows(high, rows)} each"
    alone = next((t.alone for t in tested if t.alone), "")
    if alone:
        text += f"; left out, one {rows[:-1] if rows.endswith('s') else rows} only: {alone}"
    overlapping = [t for t in tested if t.window]
    if not overlapping:
        return text
    one = rows[:-1] if rows.endswith("s") else rows
    low, high = min(t.rows[0] for t in overlapping), max(t.rows[1] for t in overlapping)
    held = f"{low:,} {rows}" if low == high else f"{low:,}-{high:,} {rows}"
    return (
        f"{text} as counted so that no two {overlapping[0].window}-{one} windows share a "
        f"{one}; {held} with their windows overlapping"
    )


def _single_rows_text(tested: Sequence[_Test], rows: str) -> str:
    """ " Over the single days the test reads p = 6.1e-08, …" when a test over stretches
    found noise where one over their rows would not: why the rows were not counted."""
    single = [t.single_p for t in tested if t.blocks and t.single_p is not None]
    if not single or min(single) >= LEVEL:
        return ""
    return (
        f" Over the single {rows} the test reads p = {two_digits(min(single))}, but {rows} "
        "next to each other share their level, so that overstates the differences."
    )


def _differ_text(differ: Sequence[str]) -> str:
    """ " up_share (χ² p = 0.031) does differ by more than noise." for the columns tested
    apart beside those within noise: "in which month does NQ rise most often?" with up_share
    and mean(ret) named only mean_ret as within noise, and up_share, the question's, read
    as tested alike or untested (p47c B)."""
    if not differ:
        return ""
    verb = "does" if len(differ) == 1 else "do"
    return f" {listed_text(differ)} {verb} differ by more than noise."


def _few_text(few: Sequence[FewGroup], rows: str, of: int) -> str:
    """ "Groups of under 5 days are too few to compare: Mon: 1 day, Tue: 4 days; …"; of
    equal ones, "all 5 groups, 4 days each" when they are all ``of`` the result's groups,
    else named: "Mon, Tue, Wed and 1 more: 4 days each". Of 5 weeks 4 held under 5 days, 2
    of them said apart (unfinished, cut by the period's start), and "all 2 groups, 4 days
    each" read as every group."""
    worst = sorted(few, key=lambda group: group.rows)
    shown = worst[:_NAMED_FEW]
    more = len(worst) - len(shown)
    if len(worst) > 1 and len(worst) == of and worst[0].rows == worst[-1].rows:
        listed = f"all {len(worst)} groups, {_rows(worst[0].rows, rows)} each"
    elif len(worst) > 1 and worst[0].rows == worst[-1].rows:
        names = [g.name for g in shown] + ([f"{more} more"] if more else [])
        listed = f"{listed_text(names)}: {_rows(worst[0].rows, rows)} each"
    else:
        named = [f"{g.name}: {_rows(g.rows, rows)}" for g in shown]
        listed = named_text(named, len(worst))
    return (
        f"Groups of under {FEW_ROWS} {rows} are too few to compare: {listed}; each value "
        "is drawn like the others' but says little of what such a group usually does."
    )


def _rows(count: int, rows: str) -> str:
    """ "1 day", "4 days", "13,337 bars" (with the separator the counts beside it have)."""
    return f"{count:,} {rows[:-1] if count == 1 and rows.endswith('s') else rows}"
