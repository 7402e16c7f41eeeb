"""Shares read over few windows taken one at a time (p43d #3, #4, #5, #7): NQ's share of
days up 120 days ahead by year is 3 windows a year. The band of 3 of 3 read "1 ± 0.34" (as
if [0.66, 1]) and 0.6124 of 3 "± 0.56" (past 1); 0.9806 and 1 of 3, both 3 of 3 in whole
rows, gave no noise warning at all; 18 years of 2-3 windows were tested by Pearson's χ² with
expected cells under 1. Expected values here from scipy (binomtest's Wilson interval,
Fisher's test, the multivariate hypergeometric enumerated) and pandas over the hand-made
RTH days, never through Barb."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask, warnings_with
from rth_bars import rth_daily, rth_minutes
from scipy import stats
from share_bands import wilson, wilson_band
from windows_taken import one_at_a_time

from barb.caveats.group_noise import _draw_method, _share_test, wilson_interval
from barb.caveats.overlapping_windows import scaled_counts
from barb.summary_text import two_digits

NOISE = "differ by less than their noise"


def test_wilsons_interval_is_scipys_and_stays_within_0_and_1() -> None:
    for hits, n in [(3, 3), (0, 3), (2, 3), (1, 12), (40, 41)]:
        expected = stats.binomtest(hits, n).proportion_ci(method="wilson")
        got = wilson_interval(hits / n, n)
        assert got == pytest.approx((expected.low, expected.high), abs=2e-4)
    assert wilson_interval(1.0, 3) == pytest.approx((0.4385, 1.0), abs=1e-4)
    for share, n in [(0.9806, 3), (0.6124, 3), (0.02, 1.5)]:  # rows counted: n not whole
        assert wilson_interval(share, n) == pytest.approx(wilson(share, n), abs=2e-4)
        assert 0 <= wilson_interval(share, n)[0] <= share <= wilson_interval(share, n)[1] <= 1


def test_a_table_of_all_hits_cannot_tell_its_groups_apart() -> None:
    """0.9806 and 1 of 3 windows each are 3 of 3 and 3 of 3 in whole rows: Fisher's p is 1
    (scipy's), where the old test returned None and nothing was said."""
    test = _share_test(np.array([3.0, 3.0]), np.array([3, 3]))
    assert test is not None and test.name == "Fisher's exact test"
    assert test.p == stats.fisher_exact([[3, 0], [3, 0]]).pvalue == 1.0
    none = _share_test(np.array([0.0, 0.0, 0.0]), np.array([2, 3, 3]))
    assert none is not None and none.p == 1.0


def _exact_chi2_p(events: list[int], counts: list[int]) -> float:
    """χ²'s p by enumerating every table with the margins, each weighed by scipy's
    multivariate hypergeometric."""
    total, rows = sum(events), sum(counts)

    def chi2(hits: tuple[int, ...]) -> float:
        share = total / rows
        return sum(
            (h - n * share) ** 2 / (n * share) + (h - n * share) ** 2 / (n * (1 - share))
            for h, n in zip(hits, counts, strict=True)
        )

    seen, p = chi2(tuple(events)), 0.0
    for hits in itertools.product(*(range(n + 1) for n in counts)):
        if sum(hits) == total and chi2(hits) >= seen - 1e-9:
            p += stats.multivariate_hypergeom.pmf(list(hits), m=counts, n=total)
    return float(p)


def test_small_tables_of_many_groups_take_chi2s_p_by_monte_carlo() -> None:
    """Six groups of 3 windows: expected cells under 5, where Pearson's χ² distribution is
    poor: p = 0.035 here, "apart", against the exact 0.059, noise. The drawn p is the exact
    one within its error (10,000 draws: ± 0.0024 there) and on the same side of 0.05."""
    events, counts = [3, 3, 3, 1, 0, 2], [3, 3, 3, 3, 3, 3]
    exact = _exact_chi2_p(events, counts)
    table = np.column_stack([events, np.subtract(counts, events)])
    pearson = stats.chi2_contingency(table, correction=False).pvalue
    assert pearson < 0.05 <= exact  # the old p called the groups apart
    test = _share_test(np.array(events, dtype=float), np.array(counts))
    assert test is not None and test.name == "Monte Carlo χ²"
    assert test.p == pytest.approx(exact, abs=0.008) and test.p >= 0.05
    again = _share_test(np.array(events, dtype=float), np.array(counts))
    assert again is not None and again.p == test.p  # a fixed seed: the same p each time


def test_a_table_of_many_rows_in_few_groups_is_drawn_group_by_group() -> None:
    """NQ's ETH 1-minute bars of 2024 by range bucket: 355,980 bars in 28 groups, some of
    1-5 bars, so χ²'s p by Monte Carlo. Each of the 10,000 tables was drawn row by row and
    the query timed out (21 s); drawn group by group it costs the groups, not the rows
    (0.02 s), while 4,647 groups of 1 day are still drawn row by row (cheaper there). The
    p is the exact one: the small groups enumerated, each table weighed by scipy's
    multivariate hypergeometric, the large group's events the rest."""
    assert _draw_method(np.array([220_840, 40_000, 95_136, 1, 3]), 174_303) == "marginals"
    assert _draw_method(np.ones(4_647, dtype=np.int64), 2_379) == "count"
    events, counts = [150_000, 3, 2, 0], [300_000, 3, 3, 2]
    total, rows = sum(events), sum(counts)
    assert _draw_method(np.array(counts), total) == "marginals"

    def chi2(hits: tuple[int, ...]) -> float:
        share = total / rows
        return sum(
            (h - n * share) ** 2 / (n * share) + (h - n * share) ** 2 / (n * (1 - share))
            for h, n in zip(hits, counts, strict=True)
        )

    seen, exact = chi2(tuple(events)), 0.0
    for small in itertools.product(*(range(n + 1) for n in counts[1:])):
        hits = (total - sum(small), *small)
        if chi2(hits) >= seen - 1e-9:
            exact += stats.multivariate_hypergeom.pmf(list(hits), m=counts, n=total)
    test = _share_test(np.array(events, dtype=float), np.array(counts))
    assert test is not None and test.name == "Monte Carlo χ²"
    assert test.p == pytest.approx(exact, abs=0.013)  # 0.25 exact; Pearson's 0.149


@pytest.fixture(scope="module")
def days(minutes: pd.DataFrame) -> pd.DataFrame:
    """The hand-made RTH days: their place, month and whether the close 20 and 10 days on
    is higher (pandas)."""
    daily = rth_daily(minutes)
    close = daily["close"]
    return pd.DataFrame(
        {
            "at": np.arange(len(daily)),
            "month": pd.DatetimeIndex(daily.index).month,
            "up20": (close.shift(-20) > close).where(close.shift(-20).notna()),
            "up10": (close.shift(-10) > close).where(close.shift(-10).notna()),
        }
    )


def _groups(days: pd.DataFrame, column: str, window: int) -> pd.DataFrame:
    """Each month's share, its days, its days taken one at a time and its ups in their
    share of those (rounded half to even, as whole rows)."""
    rows = []
    for month, group in days.dropna(subset=[column]).groupby("month"):
        ups, n = int(group[column].sum()), len(group)
        taken = one_at_a_time(group["at"].to_numpy(), window)
        rows.append((month, ups / n, n, taken, round(ups * taken / n)))
    return pd.DataFrame(rows, columns=["month", "share", "n", "taken", "hits"])


def test_shares_over_few_windows_read_wilsons_interval_and_are_said_within_noise(
    engine_settings, days
) -> None:
    """Months of the hand-made days up 20 days ahead: 2 windows each, 0.8571 and 1, both 2
    of 2 in whole rows. The warning was silent; now it gives each share's Wilson interval
    and Fisher's p = 1."""
    groups = _groups(days, "up20", 20)
    assert (groups["hits"] == groups["taken"]).all()  # all hits: the case the test lost
    assert groups["share"].nunique() == 2
    result = ask(
        {
            "map": {"up": "next(close, 20) > close"},
            "group_by": "month()",
            "select": "mean(up) as p",
        },
        engine_settings,
        **RTH_DAILY,
    )
    [said] = warnings_with(result, NOISE)
    high, low = groups.loc[groups["share"].idxmax()], groups.loc[groups["share"].idxmin()]
    table = [[int(g["hits"]), int(g["taken"] - g["hits"])] for _, g in groups.iterrows()]
    p = stats.fisher_exact(table).pvalue
    assert (
        f"highest {_month(high['month'])} {wilson_band(high['share'], high['taken'])}, lowest "
        f"{_month(low['month'])} {wilson_band(low['share'], low['taken'])}; Fisher's exact test "
        f"p = {two_digits(p)})"
    ) in said
    assert " ± " not in said  # no band printed so: no "± 2 standard errors" named


def test_three_months_of_few_windows_take_the_monte_carlo_p(engine_settings, days) -> None:
    """Months up 10 days ahead: 1-3 windows each; the p is the exact χ² p of the counted
    table (enumerated), not Pearson's."""
    groups = _groups(days, "up10", 10)
    hits = scaled_counts(
        (groups["share"] * groups["n"]).round().to_numpy(), groups["taken"], groups["n"]
    )
    assert hits.tolist() == groups["hits"].tolist()
    exact = _exact_chi2_p(groups["hits"].tolist(), groups["taken"].tolist())
    result = ask(
        {
            "map": {"up": "next(close, 10) > close"},
            "group_by": "month()",
            "select": "mean(up) as p",
        },
        engine_settings,
        **RTH_DAILY,
    )
    [said] = warnings_with(result, NOISE)
    p = float(said.split("Monte Carlo χ² p = ")[1].split(")")[0])
    assert p == pytest.approx(exact, abs=0.012)
    for _, group in groups.iterrows():
        if group["share"] in (groups["share"].max(), groups["share"].min()):
            assert f"{_month(group['month'])} {wilson_band(group['share'], group['taken'])}" in said


def _month(month: float) -> str:
    """ "month 2 (Feb)": a month group as the warnings name it, its name beside its number."""
    return f"month {int(month)} ({pd.Timestamp(2024, int(month), 1):%b})"


def test_counts_over_a_thousand_read_with_the_separator(engine_settings, minutes) -> None:
    """RTH minutes by hour: "1,860-3,720 bars each", as the counts beside them (was
    "1860-3720")."""
    sizes = pd.DatetimeIndex(rth_minutes(minutes)["timestamp"]).hour.value_counts()
    result = ask(
        {"session": "RTH", "from": "1m", "group_by": "hour()", "select": "mean(close > open) as p"},
        engine_settings,
    )
    [said] = warnings_with(result, NOISE)
    assert f"({sizes.min():,}-{sizes.max():,} bars each)" in said
