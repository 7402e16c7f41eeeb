"""The test across groups behind "the groups differ by less than their noise" (p34e #2, #10,
#22, #27b): the old rule compared only the highest and the lowest group with ±2 normal
standard errors, so it was silent on 12 groups of pure noise most of the time, on 4 days a
weekday, and on 3 CPI days down of 12. Expected p values from formulas written here with
numpy (Welch's F, Pearson's χ²) and from scipy's own tests, one worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask
from scipy import stats

from barb.caveats.group_noise import _median_test, _Sample, _share_test, _welch_anova
from barb.script.context import RowGroups
from barb.summary_text import value_text


def _old_rule_silent(groups: list[np.ndarray]) -> bool:
    """The rule replaced: the ends' gap under 2 normal standard errors of the difference."""
    means = [g.mean() for g in groups]
    errors = [g.std(ddof=1) / math.sqrt(len(g)) for g in groups]
    high, low = int(np.argmax(means)), int(np.argmin(means))
    return means[high] - means[low] >= 2 * math.hypot(errors[high], errors[low])


def _welch_p(groups: list[np.ndarray]) -> float:
    """Welch's (1951) F, written out: weights n / s², F on k - 1 and (k² - 1) / (3 λ)."""
    k = len(groups)
    n = np.array([len(g) for g in groups], dtype=float)
    m = np.array([g.mean() for g in groups])
    w = n / np.array([g.var(ddof=1) for g in groups])
    centre = (w * m).sum() / w.sum()
    lam = ((1 - w / w.sum()) ** 2 / (n - 1)).sum()
    f = (w * (m - centre) ** 2).sum() / (k - 1) / (1 + 2 * (k - 2) * lam / (k * k - 1))
    return float(stats.f.sf(f, k - 1, (k * k - 1) / (3 * lam)))


def _test_of(groups: list[np.ndarray]):
    counts = np.array([len(g) for g in groups])
    return _welch_anova(
        np.array([g.mean() for g in groups]), counts, np.array([g.var(ddof=1) for g in groups])
    )


def test_twelve_groups_of_noise_are_noise_where_the_old_rule_saw_a_difference() -> None:
    """12 groups of 18 normal draws (the months of 18 years): the old rule called the ends
    apart; Welch's F across all 12 says noise."""
    rng = np.random.default_rng(3)
    seeds = [rng.normal(0, 5, size=(12, 18)) for _ in range(40)]
    picked = next(s for s in seeds if _old_rule_silent(list(s)) and _welch_p(list(s)) >= 0.05)
    test = _test_of(list(picked))
    assert test is not None and test.name == "Welch ANOVA" and test.groups == 12
    assert test.p == pytest.approx(_welch_p(list(picked)), rel=1e-9)
    # Over the 40 groupings of pure noise the old rule was silent on most; the new test
    # flags about one in 20 (never more than a few).
    old = sum(_old_rule_silent(list(s)) for s in seeds)
    new = sum(_test_of(list(s)).p < 0.05 for s in seeds)
    assert old > 20 and new <= 6


def test_two_groups_are_welchs_t_test_and_a_real_difference_is_not_noise() -> None:
    """For 2 groups Welch's F is Welch's t squared: scipy's t-test gives the same p. A
    difference of one spread over 60 rows each is far from noise."""
    rng = np.random.default_rng(1)
    one, other = rng.normal(0, 1, 60), rng.normal(1, 1.5, 60)
    test = _test_of([one, other])
    assert test is not None
    assert test.p == pytest.approx(stats.ttest_ind(one, other, equal_var=False).pvalue)
    assert test.p < 0.01


def test_hand_worked_welch_f() -> None:
    """Groups (1, 2, 3) and (2, 4, 6): means 2 and 4, variances 1 and 4, weights 3 and 0.75;
    the weighted centre 2.4; F = (3 · 0.16 + 0.75 · 2.56) / 1 / 1 = 2.4 (k = 2: no λ term);
    λ = (0.2² + 0.8²) / 2 = 0.34, df = 3 / 1.02 = 2.941."""
    test = _test_of([np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 6.0])])
    assert test is not None
    assert test.p == pytest.approx(float(stats.f.sf(2.4, 1, 3 / 1.02)), rel=1e-9)


def test_three_cpi_days_down_of_twelve_go_to_fishers_exact_test() -> None:
    """NQ 2022: CPI days 3 down of 12, the others 130 of 246. The old rule: 0.2785 apart
    against 2 · hypot(0.13, 0.032) = 0.269, so silent. Fisher's exact p = 0.077."""
    old_gap = 130 / 246 - 3 / 12
    errors = [np.std([1] * 3 + [0] * 9, ddof=1) / math.sqrt(12)]
    errors.append(np.std([1] * 130 + [0] * 116, ddof=1) / math.sqrt(246))
    assert old_gap >= 2 * math.hypot(*errors)  # the old rule said apart
    test = _share_test(np.array([3, 130]), np.array([12, 246]))
    assert test is not None and test.name == "Fisher's exact test"
    assert test.p == pytest.approx(stats.fisher_exact([[3, 9], [130, 116]])[1])
    assert round(test.p, 3) == 0.077


def test_shares_of_many_groups_take_pearsons_chi2() -> None:
    """k × 2 table of events: Pearson's χ² without continuity correction, as scipy's."""
    events, counts = np.array([16, 14, 6, 11]), np.array([18, 18, 17, 18])
    test = _share_test(events, counts)
    table = np.column_stack([events, counts - events])
    _, p, _, _ = stats.chi2_contingency(table, correction=False)
    assert test is not None and test.name == "χ²" and test.p == pytest.approx(p)


def test_moods_median_test_is_scipys() -> None:
    """Groups of 11 to 16 (expected cells of 5.5 up: Pearson's χ², as scipy's; under 5 the
    p is drawn, test_few_windows_noise)."""
    rng = np.random.default_rng(5)
    groups = [rng.normal(0, 1, n) for n in (11, 13, 16)]
    values = pd.Series(np.concatenate(groups))
    codes = np.repeat(np.arange(3), [11, 13, 16])
    rows = RowGroups(len(values), codes, pd.Index(["a", "b", "c"], name="g"))
    sample = _Sample.of(values, rows, None)
    assert sample is not None
    test = _median_test(sample)
    _, p, _, _ = stats.median_test(*groups, correction=False)
    assert test is not None and test.p == pytest.approx(p)


@pytest.fixture(scope="module")
def march(minutes) -> pd.DataFrame:
    """The hand-made bars' RTH days of March 2024 (09:30-17:00 by the clock), with pandas."""
    ts = pd.DatetimeIndex(minutes["timestamp"])
    clock = ts.hour * 60 + ts.minute
    rth = minutes[(clock >= 570) & (clock < 1020) & (ts.month == 3)].copy()
    rth["date"] = pd.DatetimeIndex(rth["timestamp"]).normalize()
    days = rth.groupby("date").agg(high=("high", "max"), low=("low", "min"))
    days["range"] = days["high"] - days["low"]
    days["weekday"] = days.index.strftime("%a")
    return days


def test_four_days_a_weekday_are_tested_with_f_and_named_too_few(engine_settings, march):
    groups = [g.to_numpy() for _, g in march.groupby("weekday")["range"]]
    p = _welch_p(groups)
    query = {"period": "2024-03", "map": {"weekday": "dayname()"}, "group_by": "weekday",
             "select": ["count()", "mean(range)"]}  # fmt: skip
    result = ask(query, engine_settings, **RTH_DAILY)
    [said] = [w for w in result.metadata.warnings if "their noise" in w] or [None]
    if p >= 0.05:
        assert said is not None and f"Welch ANOVA p = {float(f'{p:.2g}'):g})" in said
        assert "across the 5 weekday groups (4 days each)" in said
        assert result.metadata.even_groups == ["mean_range"]
    else:
        assert said is None
    sizes = march["weekday"].value_counts()
    assert sizes.max() < 5
    assert any(w.startswith("Groups of under 5 days are too few") for w in result.metadata.warnings)


def test_equal_few_groups_among_others_are_named_not_all(engine_settings, minutes) -> None:
    """February 2024's Mondays, Tuesdays, Wednesdays and Fridays hold 4 days each, its
    Thursdays 5 (pandas): the four were said as "all 4 groups, 4 days each" beside a fifth
    group (p35d #32: "all 2 groups" of 5 weeks). They are named; "all" only when every
    group is few (March's, the data ending on Thursday the 28th)."""
    ts = pd.DatetimeIndex(minutes["timestamp"])
    clock = ts.hour * 60 + ts.minute
    days = ts[(clock >= 570) & (clock < 1020)].normalize().unique()
    sizes = pd.Series(days[days.month == 2].strftime("%a")).value_counts()
    query = {"period": "2024-02", "map": {"weekday": "dayname()"}, "group_by": "weekday",
             "select": "mean(range)"}  # fmt: skip
    result = ask(query, engine_settings, **RTH_DAILY)
    order = list(result.table["weekday"])
    few = [day for day in order if sizes[day] < 5]
    assert len(few) == 4 and len(order) == 5 and {sizes[d] for d in few} == {4}  # the case
    [said] = [w for w in result.metadata.warnings if "too few" in w]
    assert said.startswith(
        f"Groups of under 5 days are too few to compare: '{few[0]}', '{few[1]}', '{few[2]}' and "
        "1 more: 4 days each;"
    )
    march = pd.Series(days[days.month == 3].strftime("%a")).value_counts()
    assert set(march) == {4}
    every = ask({**query, "period": "2024-03"}, engine_settings, **RTH_DAILY)
    [said] = [w for w in every.metadata.warnings if "too few" in w]
    assert "too few to compare: all 5 groups, 4 days each;" in said


def test_a_group_of_one_day_is_named(engine_settings, march) -> None:
    """Mondays of March 2024 but the 25th left out: "'Mon': 1 day"."""
    mondays = march.index[march["weekday"] == "Mon"]
    where = " and ".join(f'date() != "{d.date()}"' for d in mondays[:-1])
    query = {"period": "2024-03", "map": {"weekday": "dayname()"}, "where": where,
             "group_by": "weekday", "select": "mean(range)"}  # fmt: skip
    result = ask(query, engine_settings, **RTH_DAILY)
    [few] = [w for w in result.metadata.warnings if "too few" in w]
    assert few.startswith("Groups of under 5 days are too few to compare: 'Mon': 1 day,")


def test_a_medians_warning_names_no_band_it_does_not_show(engine_settings, minutes) -> None:
    """Medians are shown without a ±, so their warning names no "± 2 standard errors"
    (p36a Q41); beside a mean, whose ends carry it, it does."""
    ts = pd.DatetimeIndex(minutes["timestamp"])
    clock = ts.hour * 60 + ts.minute
    rth = minutes[(clock >= 570) & (clock < 1020)].copy()
    rth["date"] = pd.DatetimeIndex(rth["timestamp"]).normalize()
    days = rth.groupby("date").agg(high=("high", "max"), low=("low", "min"))
    days["range"] = days["high"] - days["low"]
    groups = [g.to_numpy() for _, g in days.groupby(days.index.strftime("%a"))["range"]]
    _, p, _, _ = stats.median_test(*groups, correction=False)
    assert p >= 0.05 and _welch_p(groups) >= 0.05  # the case: both within noise
    query = {"map": {"weekday": "dayname()"}, "group_by": "weekday", "select": "median(range)"}
    [said] = [w for w in ask(query, engine_settings, **RTH_DAILY).metadata.warnings
              if "their noise" in w]  # fmt: skip
    assert f"Mood's median test, χ² p = {float(f'{p:.2g}'):g})" in said
    assert said.endswith("groups of pure noise would (p ≥ 0.05).") and "±" not in said
    both = {**query, "select": ["median(range)", "mean(range)"]}
    [said] = [w for w in ask(both, engine_settings, **RTH_DAILY).metadata.warnings
              if "their noise" in w]  # fmt: skip
    assert said.endswith("(p ≥ 0.05; ± 2 standard errors).")


def test_a_group_too_few_to_rank_beyond_an_end_is_named_beside_it(engine_settings, minutes):
    """March 2024 in thirds by day of the month: its last 4 days (25th-28th) are too few to
    rank and have the highest mean body, above the 9 days of the first third. The warning
    named "highest 'early'" alone, as NQ's mean return by year named "highest year 2020
    0.1891" where the listed 2026, 4 days of an unfinished year, read 0.1987 (p42a F2); the
    group is now named beside the end it lies beyond. Means and sizes from pandas."""
    ts = pd.DatetimeIndex(minutes["timestamp"])
    clock = ts.hour * 60 + ts.minute
    rth = minutes[(clock >= 570) & (clock < 1020) & (ts.month == 3)]
    days = rth.groupby(pd.DatetimeIndex(rth["timestamp"]).normalize())
    body = days["close"].last() - days["open"].first()
    day = body.index.day
    part = np.select([day >= 25, day >= 14], ["late", "mid"], "early")
    groups = body.groupby(pd.Series(part, body.index))
    means, sizes = groups.mean(), groups.size()
    ranked = means.drop("late")
    assert sizes["late"] < 5 <= sizes[ranked.index].min()  # too few to rank: the case
    assert means["late"] > ranked.max()
    query = {
        "period": "2024-03",
        "map": {"part": "if(day() >= 25, 'late', if(day() >= 14, 'mid', 'early'))"},
        "group_by": "part",
        "select": "mean(close - open) as body",
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    [said] = [w for w in result.metadata.warnings if "their noise" in w]
    high, low = ranked.idxmax(), ranked.idxmin()
    late = f"'late': {value_text(means['late'])} over {sizes['late']} days, too few to rank"
    assert f"highest '{high}' {value_text(means[high])} ± " in said
    assert f"({late}), lowest '{low}' {value_text(means[low])} ± " in said


@pytest.fixture(scope="module")
def rth_days(minutes) -> pd.DataFrame:
    """The hand-made bars' RTH days (09:30-17:00 by the clock), January to March 2024."""
    ts = pd.DatetimeIndex(minutes["timestamp"])
    clock = ts.hour * 60 + ts.minute
    rth = minutes[(clock >= 570) & (clock < 1020)].copy()
    rth["date"] = pd.DatetimeIndex(rth["timestamp"]).normalize()
    days = rth.groupby("date").agg(high=("high", "max"), low=("low", "min"))
    days["range"] = days["high"] - days["low"]
    return days


def test_the_months_of_one_year_are_not_compared(engine_settings, rth_days) -> None:
    """Month-of-year groups are stretches of time whose days share their level (p46e M1),
    and here each is one stretch (January to March of one year): no test can tell a month
    from its stretch's conditions. The stretch was cut into 4 pieces of equal days and
    Welch's F taken across them, which said "differ" for 12 % of pure-noise draws and in
    17 of 17 single years of NQ's range % (adjacent weeks share their level too: p46w #2,
    #8). That is said; no "within noise", no band, no end named."""
    month = pd.Series(rth_days.index.month, index=rth_days.index)
    assert (month != month.shift()).sum() == 3  # the case: one stretch a month
    result = ask({"group_by": "month()", "select": "mean(range)"}, engine_settings, **RTH_DAILY)
    assert result.metadata.warnings == [
        "mean_range by month: each month appears once in these rows, as one stretch of days "
        "that share their level, so no test can tell a month's effect from that stretch's "
        "own conditions; with 5 or more stretches each (5 years) the groups are compared "
        "across them."
    ]
    assert not result.metadata.even_groups and not result.metadata.apart_groups


def test_a_count_under_a_where_by_month_of_one_year_is_not_compared(
    engine_settings, rth_days
) -> None:
    """p46w #3: a count under a where by month was tested day by day (χ²), the form
    mean(range > 25) by month across its stretches: both now say the same sentence."""
    query = {"group_by": "month()", "where": "range > 25", "select": "count()"}
    counted = ask(query, engine_settings, **RTH_DAILY)
    assert counted.table["count"].tolist() == (
        (rth_days["range"] > 25).groupby(rth_days.index.month).sum().tolist()
    )
    [said] = counted.metadata.warnings
    assert said.startswith("count by month: each month appears once in these rows, as one")
    assert not counted.metadata.even_groups and not counted.metadata.near_groups
    share = ask({"group_by": "month()", "select": "mean(range > 25)"}, engine_settings, **RTH_DAILY)
    assert share.metadata.warnings == [said.replace("count by", "mean_range_gt_25 by")]


def test_the_stretch_test_is_scipys_permutation_test() -> None:
    """Barb's permutation of whole stretches against scipy's permutation_test of the same
    values across the same groups (one-sided on the classic F, which ranks the draws as
    Barb's spread between the groups' means does), to Monte Carlo error: Barb draws 2,000
    shuffles (±0.011 at p = 0.5), scipy 9,999."""
    from barb.caveats.group_noise import _stretch_test

    rng = np.random.default_rng(3)
    groups = np.repeat(np.arange(6), [7, 7, 6, 8, 7, 7])
    values = rng.normal(size=len(groups)) + 0.35 * (groups == 2)
    split = [values[groups == g] for g in range(6)]
    expected = stats.permutation_test(
        split,
        lambda *g, axis: stats.f_oneway(*g, axis=axis).statistic,
        permutation_type="independent",
        vectorized=True,  # 9,999 F statistics in one call each batch: seconds, not 10 s
        alternative="greater",
        n_resamples=9_999,
        random_state=1,
    ).pvalue
    test = _stretch_test(values, groups)
    assert test is not None and test.groups == 6 and test.sizes == (6, 8)
    assert abs(test.p - expected) <= 0.03
