"""Grouped means whose highest and lowest groups differ by less than two standard errors of
the difference are said to be within noise: "the most volatile weekday" named Wednesday by
3.4 points, each weekday's mean known to about ±4.5. Expected values from numpy over the
sample's RTH minute bars, never through Barb."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask
from rth_bars import RTH_END, RTH_START, sample_rth_days

from barb import execute
from barb.charts import chart_headline
from barb.data.store import data_path

pytestmark = pytest.mark.slow

# Weekdays as the warnings name groups of text: quoted.
DAYS = ["'Mon'", "'Tue'", "'Wed'", "'Thu'", "'Fri'"]


@pytest.fixture(scope="module")
def rth_days(sample_settings) -> pd.DataFrame:
    daily = sample_rth_days(sample_settings)
    daily["range"] = daily["high"] - daily["low"]
    daily["pct"] = daily["range"] / daily["open"] * 100
    return daily


def _ends(values: pd.Series, keys: pd.Series) -> tuple[str, str, bool]:
    """ "'Wed' 140.64 ± 9.6", "'Mon' 137.21 ± 9.5" (``keys`` as the warning names them) and
    whether their gap is under two standard errors of the difference, with numpy."""
    stats = {}
    for key, group in values.groupby(keys):
        array = group.to_numpy(dtype=float)
        stats[key] = (array.mean(), array.std(ddof=1) / np.sqrt(len(array)))
    high = max(stats, key=lambda k: stats[k][0])
    low = min(stats, key=lambda k: stats[k][0])

    def text(key: str) -> str:
        mean, error = stats[key]
        return f"{key} {_quoted(mean)} ± {float(f'{2 * error:.2g}'):g}"

    gap = stats[high][0] - stats[low][0]
    noisy = gap < 2 * np.hypot(stats[high][1], stats[low][1])
    return text(high), text(low), bool(noisy)


def _welch_p(values: pd.Series, keys: pd.Series) -> float:
    """Welch's one-way ANOVA p-value of ``values`` across the groups of ``keys`` (Welch 1951,
    with scipy's F distribution)."""
    from scipy import stats

    groups = [group.to_numpy(dtype=float) for _, group in values.groupby(keys)]
    k = len(groups)
    n = np.array([len(g) for g in groups])
    means = np.array([g.mean() for g in groups])
    w = n / np.array([g.var(ddof=1) for g in groups])
    grand = (w * means).sum() / w.sum()
    tail = ((1 - w / w.sum()) ** 2 / (n - 1)).sum()
    f = ((w * (means - grand) ** 2).sum() / (k - 1)) / (1 + 2 * (k - 2) / (k * k - 1) * tail)
    return float(stats.f.sf(f, k - 1, (k * k - 1) / (3 * tail)))


def _quoted(value: float) -> str:
    """As the summary quotes a number: 2 decimals from 100 up, else 4 significant digits."""
    digits = 2 if abs(value) >= 100 else max(2, 3 - math.floor(math.log10(abs(value))))
    return f"{round(value, digits):.10g}"


def test_weekday_means_within_their_noise_name_no_winner(sample_settings, rth_days) -> None:
    weekday = pd.Series(
        [DAYS[d] for d in rth_days.index.dayofweek], index=rth_days.index, name="weekday"
    )
    high, low, noisy = _ends(rth_days["range"], weekday)
    pct_high, pct_low, _ = _ends(rth_days["pct"], weekday)
    # The case the warning is for: no more spread than noise (pct's extremes are just over
    # two standard errors apart since p41b cut two Wed/Thu days, but all five are not).
    assert noisy and _welch_p(rth_days["range"], weekday) >= 0.05
    pct_p = _welch_p(rth_days["pct"], weekday)
    assert pct_p >= 0.05
    result = ask(
        {
            "map": {"weekday": "dayname()", "rp": "range / open * 100"},
            "group_by": "weekday",
            "select": ["mean(range)", "mean(rp) as pct", "count()"],
        },
        sample_settings,
        **RTH_DAILY,
    )
    [said] = [w for w in result.metadata.warnings if "their noise" in w]
    assert f"mean_range (highest {high}, lowest {low}; Welch ANOVA p = " in said
    assert f"pct (highest {pct_high}, lowest {pct_low}; Welch ANOVA p = {pct_p:.2f})" in said
    assert result.metadata.even_groups == ["mean_range", "pct"]


def test_years_far_apart_are_not_called_noise(sample_settings, rth_days) -> None:
    _, _, noisy = _ends(rth_days["pct"], pd.Series(rth_days.index.year, index=rth_days.index))
    assert not noisy
    result = ask(
        {"map": {"rp": "range / open * 100"}, "group_by": "year()", "select": "mean(rp)"},
        sample_settings,
        **RTH_DAILY,
    )
    assert not [w for w in result.metadata.warnings if "their noise" in w]
    assert result.metadata.even_groups is None


def _ranking(values: pd.Series, keys: pd.Series, descending: bool) -> tuple[str, list[str]]:
    """The group a sort by the mean puts first, as "'21:00' 0.233 ± 0.004", and every other
    group within two standard errors of the difference from it ("'20:00' 0.2343"), in the
    sort's order, with numpy."""
    stats = {}
    for key, group in values.groupby(keys):
        array = group.to_numpy(dtype=float)
        stats[key] = (array.mean(), array.std(ddof=1) / np.sqrt(len(array)))
    ranked = sorted(stats, key=lambda k: -stats[k][0] if descending else stats[k][0])
    mean, error = stats[ranked[0]]
    close = [
        f"{_name(k)} {_quoted(stats[k][0])}"
        for k in ranked[1:]
        if abs(stats[k][0] - mean) < 2 * np.hypot(error, stats[k][1])
    ]
    return f"{_name(ranked[0])} ranks first at {_quoted(mean)} ± {_two(2 * error)}", close


def _name(key: object) -> str:
    """A group as the warnings name it: a text label quoted ('Wed' reads as a label, as
    'high first' must), a number after its key's name."""
    return f"'{key}'" if isinstance(key, str) else f"month {key}"


def _two(value: float) -> str:
    return f"{float(f'{value:.2g}'):g}"


def _ranking_warning(column: str, first: str, close: list[str]) -> str:
    listed = ", ".join(close[:5]) + (f" and {len(close) - 5} more" if len(close) > 5 else "")
    return (
        f"{column}: {first} (± 2 standard errors), but {len(close)} other groups are within "
        f"2 standard errors of the difference from it: {listed}; their order is noise."
    )


def _stretch_means(values: pd.Series, keys: pd.Series, pieces: int = 0) -> pd.Series:
    """One mean per stretch of consecutive rows of one key (a year's month of days), indexed
    by the key; ``pieces``: each stretch cut into that many by np.array_split, with pandas."""
    stretch = (keys != keys.shift()).cumsum()
    means = []
    for _, part in values.groupby(stretch, sort=False):
        key = keys[part.index[0]]
        parts = np.array_split(part.to_numpy(dtype=float), pieces) if pieces else [part]
        means += [(key, float(np.mean(p))) for p in parts if len(p)]
    return pd.Series([m for _, m in means], index=[k for k, _ in means])


def _permutation_p(means: pd.Series) -> float:
    """scipy's permutation test of the stretches' values (``means``, indexed by group)
    across their groups, the labels shuffled across the stretches, one-sided on the
    classic F (as Barb's ranks by the spread between the groups' means)."""
    from scipy import stats

    groups = [g.to_numpy() for _, g in means.groupby(level=0)]
    found = stats.permutation_test(
        groups,
        lambda *g, axis: stats.f_oneway(*g, axis=axis).statistic,
        permutation_type="independent",
        vectorized=True,  # 9,999 F statistics in one call each batch: seconds, not 10 s
        alternative="greater",
        n_resamples=9_999,
        random_state=1,
    )
    return float(found.pvalue)


def _said_p(text: str, test: str) -> float:
    return float(re.search(rf"{test} p = ([0-9.e-]+)", text).group(1))  # type: ignore[union-attr]


def test_the_months_of_a_persistent_measure_are_compared_across_years(
    sample_settings, rth_days
) -> None:
    """p46e M1: "the most volatile month" named July 2.106 % against October 1.639 % with no
    word, where a day's range % leans on the days before it (autocorrelation 0.67 at one
    day): over single days Welch's F reads p = 1.1e-06; across one mean per year's month
    (18-19 a month), shuffled as whole stretches, scipy's permutation test reads 0.98."""
    month = pd.Series(rth_days.index.month, index=rth_days.index)
    ranges = rth_days["pct"]
    assert np.corrcoef(ranges[:-1], ranges[1:])[0, 1] > 0.5  # the case: persistent
    means = _stretch_means(ranges, month)
    p = _permutation_p(means)
    single = _welch_p(ranges, month)
    assert p >= 0.05 > single
    sizes = means.groupby(level=0).size()
    result = ask(
        {"map": {"rp": "range / open * 100", "m": "month()"}, "group_by": "m",
         "select": "mean(rp) as p", "sort": "p desc"},
        sample_settings,
        **RTH_DAILY,
    )  # fmt: skip
    [said] = [w for w in result.metadata.warnings if "their noise" in w]
    days = month.value_counts()
    assert (
        f"(each year's month as one value: {sizes.min()}-{sizes.max()} each, of "
        f"{days.min()}-{days.max()} days)" in said
    )
    by_month = ranges.groupby(month).mean()
    high = by_month.idxmax()
    band = 2 * means[high].std(ddof=1) / np.sqrt(len(means[high]))
    named = f"m {high} ({pd.Timestamp(2024, high, 1):%b})"  # the month's name beside its number
    assert f"highest {named} {_quoted(by_month[high])} ± {_two(band)}, lowest" in said
    assert (
        abs(_said_p(said, "permutation test of whole stretches") - p) <= 0.03
    )  # 2,000 draws: ±0.011 at p = 0.5
    assert f"Over the single days the test reads p = {_two(single)}" in said
    assert result.metadata.even_groups == ["p"]
    assert not [w for w in result.metadata.warnings if "ranks first" in w]


def test_a_period_holding_one_month_twice_says_its_months_cannot_be_compared(
    sample_settings, rth_days
) -> None:
    """p46w #1: 2024-06-15:2025-06-20 holds June twice and every other month once; the
    months' stretch test dropped the groups of one stretch and said nothing, where the
    days' test had said "within noise". No test over those days can tell a month from its
    one stretch's conditions: that is said, and neither "differ" nor "within noise"."""
    days = rth_days.loc["2024-06-15":"2025-06-20"]
    month = pd.Series(days.index.month, index=days.index)
    stretches = month[month != month.shift()].value_counts()
    assert stretches[6] == 2 and (stretches.drop(6) == 1).all()  # the case
    result = ask(
        {"period": "2024-06-15:2025-06-20", "map": {"r": "(close - open) / open * 100"},
         "group_by": "month()", "select": "mean(r)"},
        sample_settings,
        **RTH_DAILY,
    )  # fmt: skip
    [said] = [w for w in result.metadata.warnings if "no test can tell" in w]
    assert said.startswith(
        "mean_r by month: each month appears once in these rows (month 6 (Jun) twice)"
    )
    assert not [w for w in result.metadata.warnings if "their noise" in w or "ranks" in w]
    assert not result.metadata.even_groups and not result.metadata.apart_groups


def test_a_count_under_a_where_by_month_is_tested_as_its_share_is(sample_settings) -> None:
    """p46w #3: NQ's RTH days down over 3 % by month, written as a count under a where, were
    tested day by day (χ² p = 0.029: no word, the chart in two camps), while mean(chg < -3)
    by month was tested across each year's month. Both are now one test over the same
    stretches' shares, scipy's permutation test agreeing."""
    days = sample_rth_days(sample_settings)
    chg = (days["close"] / days["close"].shift() - 1) * 100
    month = pd.Series(days.index.month, index=days.index)
    shares = _stretch_means((chg < -3).astype(float), month)
    p = _permutation_p(shares)
    query = {"map": {"chg": "(close / prev(close) - 1) * 100"}, "group_by": "month()"}
    counted = ask({**query, "where": "chg < -3", "select": "count()"}, sample_settings, **RTH_DAILY)
    share = ask({**query, "select": "mean(chg < -3)"}, sample_settings, **RTH_DAILY)
    [count_said] = [w for w in counted.metadata.warnings if "their noise" in w]
    [share_said] = [w for w in share.metadata.warnings if "their noise" in w]
    test = "permutation test of whole stretches"
    assert _said_p(count_said, test) == _said_p(share_said, test)
    assert abs(_said_p(count_said, test) - p) <= 0.03  # Barb's 2,000 draws
    assert counted.metadata.even_groups == ["count"]
    assert not counted.metadata.near_groups


def test_weekdays_are_tested_over_their_days(sample_settings, rth_days) -> None:
    """Weekdays spread over every week: their rows stay the unit (no stretches)."""
    weekday = pd.Series(
        [DAYS[d] for d in rth_days.index.dayofweek], index=rth_days.index, name="weekday"
    )
    p = _welch_p(rth_days["pct"], weekday)
    result = ask(
        {"map": {"rp": "range / open * 100", "d": "dayname()"}, "group_by": "d",
         "select": "mean(rp)"},
        sample_settings,
        **RTH_DAILY,
    )  # fmt: skip
    [said] = [w for w in result.metadata.warnings if "their noise" in w]
    assert f"Welch ANOVA p = {_two(p)})" in said and "days each)" in said


def test_years_are_said_nothing_of(sample_settings, rth_days) -> None:
    """Each year is one stretch of time: no test across them exists, and one over their days
    or over pieces of them overstates (adjacent months share their level as days do: p46w
    #8). 2017, the quietest year, was said within the noise of its months' means of 2013;
    nothing is said now, nor a "within noise" drawn."""
    result = ask(
        {"map": {"rp": "range / open * 100"}, "group_by": "year()",
         "select": "mean(rp) as p", "sort": "p asc"},
        sample_settings,
        **RTH_DAILY,
    )  # fmt: skip
    assert result.table["year"].nunique() == rth_days.index.year.nunique()
    noted = [w for w in result.metadata.warnings if "noise" in w or "no test" in w]
    assert not noted and not result.metadata.even_groups


def test_the_quietest_hour_of_eth_is_one_of_eight(sample_settings) -> None:
    """p27d q07: NQ's ETH hourly bars by time, sorted by mean % range: 21:00 first, with the
    other overnight hours within its noise. Hourly bars from the minute bars (ETH opens at
    18:00, so each clock hour is one bar)."""
    columns = ["open", "high", "low", "trading_date", "minute"]
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=columns)
    bars["hour"] = bars["minute"] // 60
    hours = bars.groupby(["trading_date", "hour"], sort=True)
    hourly = pd.DataFrame(
        {"open": hours["open"].first(), "high": hours["high"].max(), "low": hours["low"].min()}
    ).reset_index()
    pct = (hourly["high"] - hourly["low"]) / hourly["open"] * 100
    clock = hourly["hour"].map(lambda h: f"{h:02d}:00")
    first, close = _ranking(pct, clock, descending=False)
    assert first.startswith("'21:00'") and len(close) == 7
    result = ask(
        {
            "session": "ETH",
            "from": "1h",
            "map": {"t": "time()", "r_pct": "range / open * 100"},
            "group_by": "t",
            "select": ["mean(r_pct) as avg_range_pct", "mean(range)"],
            "sort": "avg_range_pct asc",
        },
        sample_settings,
    )
    assert _ranking_warning("avg_range_pct", first, close) in result.metadata.warnings


@pytest.fixture(scope="module")
def nq_minutes(sample_settings) -> pd.DataFrame:
    columns = ["open", "high", "low", "close", "trading_date", "minute"]
    return pd.read_parquet(data_path("NQ", sample_settings), columns=columns)


def test_minute_bars_spreads_are_every_rows(sample_settings, nq_minutes) -> None:
    """All 6.4 million ETH minute bars by minute of the hour, sorted by mean range: the
    spreads come from every row in one pass of their squares about a common centre, equal
    to numpy's per-group std to the digits the warning prints."""
    minute = pd.Series(nq_minutes["minute"].to_numpy() % 60)
    ranges = pd.Series((nq_minutes["high"] - nq_minutes["low"]).to_numpy())
    first, close = _ranking(ranges, minute, descending=False)
    first, close = first.replace("month ", "m "), [c.replace("month ", "m ") for c in close]
    assert 1 < len(close) < 59
    result = ask(
        {
            "session": "ETH",
            "from": "1m",
            "map": {"m": "minute()"},
            "group_by": "m",
            "select": "mean(range) as r",
            "sort": "r asc",
        },
        sample_settings,
    )
    assert _ranking_warning("r", first, close) in result.metadata.warnings


def test_minute_bars_weekday_bodies_within_noise(sample_settings, nq_minutes) -> None:
    rth = nq_minutes[(nq_minutes["minute"] >= RTH_START) & (nq_minutes["minute"] < RTH_END)]
    body = (rth["close"] - rth["open"]).reset_index(drop=True)
    days = pd.DatetimeIndex(rth["trading_date"].to_numpy()).dayofweek
    weekday = pd.Series(np.array(DAYS)[days])
    high, low, noisy = _ends(body, weekday)
    assert noisy
    result = ask(
        {
            "session": "RTH",
            "from": "1m",
            "map": {"d": "dayname()"},
            "group_by": "d",
            "select": "mean(close - open) as body",
        },
        sample_settings,
    )
    said = f"body (highest {high}, lowest {low}; Welch ANOVA p = "
    assert any(said in w for w in result.metadata.warnings), result.metadata.warnings


REFERENCE_DIR = Path(
    os.environ.get(
        "BARB_REFERENCE_DIR", Path(__file__).resolve().parents[3] / "shared" / "reference"
    )
)


def test_a_points_mean_within_noise_over_blended_levels_says_its_percent_is_not(
    sample_settings,
) -> None:
    """p32b #1: NQ's ETH range on FOMC days against the others, 2008-2026, is within noise
    in points (201.85 ± 34 against 170.68 ± 5.4) because the points mix prices 13.7x apart,
    while in percent FOMC days are clearly wider (2.775 ± 0.3 against 2.244 ± 0.039). The
    price-level warning says the percent form beside it is apart, with its ends. FOMC days
    from the reference calendar (a release on a day without trading counts for the next),
    ETH days from pandas over the minute bars."""
    fomc_csv = REFERENCE_DIR / "events" / "fomc.csv"
    if not fomc_csv.is_file():
        pytest.skip(f"no reference lists in {REFERENCE_DIR}")
    columns = ["timestamp", "trading_date", "open", "high", "low"]
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=columns)
    assert bars["timestamp"].is_monotonic_increasing  # each day's first row is its open
    days = bars.groupby("trading_date")
    days = days.agg(open=("open", "first"), high=("high", "max"), low=("low", "min"))
    days["range"] = days["high"] - days["low"]
    days["pct"] = days["range"] / days["open"] * 100
    released = pd.read_csv(fomc_csv, parse_dates=["date"])["date"]
    seen = days.index[np.searchsorted(days.index, released[released <= days.index[-1]])]
    keys = pd.Series(np.where(days.index.isin(seen), "fomc true", "fomc false"), days.index)
    _, _, noisy = _ends(days["range"], keys)
    pct_high, pct_low, pct_noisy = _ends(days["pct"], keys)
    assert noisy and not pct_noisy  # the case: within noise in points only
    query = {"session": "ETH", "join": "fomc", "map": {"rp": "range / open * 100"},
             "group_by": "fomc", "select": ["mean(range)", "mean(rp) as pct"]}  # fmt: skip
    result = ask(query, sample_settings, **RTH_DAILY)
    assert result.metadata.even_groups == ["mean_range"]
    # The chart's headline leads with the value whose groups differ (p38b Q13).
    assert result.metadata.apart_groups == ["pct"]
    assert (chart_headline(result) or "").startswith("pct: fomc days ")  # compared, p47d D7
    [levels] = [w for w in result.metadata.warnings if "blends price levels" in w]
    assert levels.endswith(
        f"or a recent period. In percent the groups differ by more than their noise: pct "
        f"highest {pct_high}, lowest {pct_low}, though mean_range's are within it."
    )
    # A percent of another thing beside it (the close-to-close move, whose groups are apart
    # too) says nothing of the range's noise.
    other = {**query, "map": {"chg": "abs(close / prev(close) - 1) * 100"},
             "select": ["mean(range)", "mean(chg) as move"]}  # fmt: skip
    result = ask(other, sample_settings, **RTH_DAILY)
    assert "move" not in (result.metadata.even_groups or [])
    assert not [w for w in result.metadata.warnings if "In percent" in w]


def test_a_group_too_few_to_compare_is_not_named_the_highest(sample_settings, rth_days) -> None:
    """Oct 2024 to Jan 3 2025 by month: January holds 2 days and the highest mean, and the
    noise warning named it "highest month 1 2.43 ± 1.2" (p37a: the data's 4-day last year
    was named highest or lowest). It is named among the too few, and no month is named an
    end: each is one stretch of days here, which no test can compare."""
    days = rth_days.loc["2024-10-01":"2025-01-03"]
    by_month = days["pct"].groupby(days.index.month).agg(["mean", "size"])
    assert by_month["mean"].idxmax() == 1 and by_month.loc[1, "size"] < 5  # the case
    whole = by_month[by_month["size"] >= 5]["mean"]
    result = ask(
        {
            "period": "2024-10-01:2025-01-03",
            "map": {"rp": "range / open * 100"},
            "group_by": "month()",
            "select": ["mean(rp) as pct", "count()"],
        },
        sample_settings,
        **RTH_DAILY,
    )
    assert len(whole) == 3
    [said] = [w for w in result.metadata.warnings if "no test can tell" in w]
    assert "each month appears once in these rows" in said
    assert not [w for w in result.metadata.warnings if "highest" in w]
    assert any("month 1: 2 days" in w for w in result.metadata.warnings)


def test_a_group_whose_share_is_one_has_wilsons_interval(sample_settings, rth_days) -> None:
    """NQ closed higher 120 days later on every RTH day of 2013: 3 windows that share no
    day, which is no certainty. Its band is Wilson's interval (scipy's), not the 6.8e-09 its
    error's rounding left, nor 0, nor "1 ± 0.34" (Agresti-Coull's error about the raw 1,
    claiming [0.66, 1]) (p43d #3)."""
    from scipy import stats

    closes = rth_days["close"]
    ahead = closes.shift(-120)
    later = (ahead > closes)[ahead.notna()]
    shares = later.groupby(later.index.year).mean()
    assert shares[2013] == 1
    result = ask(
        {"map": {"fwd": "next(close, 120) > close"}, "group_by": "year()", "select": "mean(fwd)"},
        sample_settings,
        **RTH_DAILY,
    )
    said = " ".join(result.metadata.warnings)
    windows = len(range(0, int((later.index.year == 2013).sum()), 120))  # one at a time
    low = stats.binomtest(windows, windows).proportion_ci(method="wilson").low
    assert f"year 2013 1 (95%: {math.floor(low * 100) / 100:g}–1)," in said
    assert "e-0" not in said


@pytest.fixture(scope="module")
def monthly_returns(rth_days) -> pd.Series:
    """NQ's RTH month-over-month close change in %, by month, the open last month left out."""
    closes = rth_days["close"].groupby(rth_days.index.to_period("M")).last()
    closes = closes[closes.index < closes.index.max()]
    return ((closes / closes.shift() - 1) * 100).dropna()


MONTHLY_UP = {
    "session": "RTH",
    "from": "monthly",
    "map": {"ret": "(close / prev(close) - 1) * 100", "m": "month()"},
    "group_by": "m",
}


def test_a_share_apart_beside_a_mean_within_noise_gets_its_verdict(
    sample_settings, monthly_returns
) -> None:
    """p47c B: "in which month does NQ rise most often?" with up_share and mean(ret) named
    only mean_ret as within noise; up_share, the question's, got no word, read as tested
    alike or not at all. Each is said with its own verdict: scipy's permutation test over
    the years' months reads p = 0.044 for the up share, 0.26 for the mean."""
    month = pd.Series(monthly_returns.index.month, index=monthly_returns.index)
    up = (monthly_returns > 0).astype(float)
    up_p, mean_p = (
        _permutation_p(_stretch_means(up, month)),
        _permutation_p(_stretch_means(monthly_returns, month)),
    )
    assert up_p < 0.05 <= mean_p  # the case: one column apart, one within noise
    result = execute(
        {**MONTHLY_UP, "select": ["mean(ret > 0) as up_share", "mean(ret)", "count()"]},
        "NQ",
        settings=sample_settings,
    )
    [said] = [w for w in result.metadata.warnings if "their noise" in w]
    assert "), mean_ret (highest m 9 (Sep) " in said
    assert abs(_said_p(said, "mean_ret .*?permutation test of whole stretches") - mean_p) <= 0.03
    found = re.search(
        r" up_share \(permutation test of whole stretches p = ([0-9.]+)\) does differ by more "
        r"than noise\.$",
        said,
    )
    assert found is not None and abs(float(found.group(1)) - up_p) <= 0.02
    assert result.metadata.even_groups == ["mean_ret"]


def test_a_share_of_every_stretch_has_wilsons_interval(sample_settings, monthly_returns) -> None:
    """p47c C: NQ's Septembers of 2016-2025 all closed up, said "highest m 9 1 ± 0", a
    certainty; one monthly bar a year is a share of 10 Septembers, Wilson's (scipy's)
    [0.72, 1], and the month is named as the chart names it."""
    from scipy import stats

    ret = monthly_returns[
        (monthly_returns.index.year >= 2016) & (monthly_returns.index.year <= 2025)
    ]
    ups = (ret > 0).groupby(ret.index.month).agg(["sum", "count"])
    shares = ups["sum"] / ups["count"]
    assert shares[9] == 1 and shares.idxmin() == 1  # the case
    result = execute(
        {**MONTHLY_UP, "period": "2016:2025", "select": ["mean(ret > 0) as up_share", "count()"]},
        "NQ",
        settings=sample_settings,
    )
    said = " ".join(result.metadata.warnings)

    def wilson(month: int) -> str:
        found = stats.binomtest(int(ups["sum"][month]), int(ups["count"][month]))
        ci = found.proportion_ci(method="wilson")
        low, high = math.floor(ci.low * 100) / 100, math.ceil(ci.high * 100) / 100
        return f"95%: {low:g}–{high:g}"

    assert (
        f"highest m 9 (Sep) 1 ({wilson(9)}), lowest m 1 (Jan) {_quoted(shares[1])} ({wilson(1)})"
        in said
    )
    assert "± 0," not in said


def test_a_group_of_one_day_is_said_left_out_of_the_test(sample_settings, rth_days) -> None:
    """The last 7 trading days by weekday: one Friday among pairs of the other days. Welch
    weighs each group by its spread, which one day has none of: the test ran over the others
    and read "across the 3 d groups (2 days each)" under 4 groups listed (f49c)."""
    days = rth_days.iloc[-7:]
    weekday = pd.Series([DAYS[d] for d in days.index.dayofweek], index=days.index, name="d")
    sizes = weekday.value_counts()
    alone = sorted(sizes[sizes == 1].index)
    kept = weekday[weekday.map(sizes) >= 2]
    assert alone and kept.nunique() >= 2  # the case
    p = _welch_p(days["range"][kept.index], kept)
    period = f"{days.index[0]:%Y-%m-%d}:{days.index[-1]:%Y-%m-%d}"
    result = ask(
        {"period": period, "map": {"d": "dayname()"}, "group_by": "d", "select": "mean(range)"},
        sample_settings,
        **RTH_DAILY,
    )
    said = [w for w in result.metadata.warnings if "their noise" in w or "Welch" in w]
    names = ", ".join(alone)  # DAYS are quoted as the warning names them
    assert said and f"across the {kept.nunique()} d groups" in said[0]
    assert f"left out, one day only: {names}" in said[0]
    assert f"p = {p:.2f}" in said[0]
