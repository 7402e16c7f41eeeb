"""Rows a condition picks whose forward windows overlap are not as many trades: "buy a
20-day closing low, hold 5 days" picked 477 NQ days, 355 of them within 5 days of the one
before, 186 trades taken one at a time, with no word (p39b Q16). A question with no trade
in it ("after 3 down days, how often is the next 5 days' return positive") is told of
outcomes, not trades. Counted here with pandas over the hand-made RTH days (a 10-day
closing high held 3 days), never through Barb."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask, warnings_with
from hypothesis import given, settings
from hypothesis import strategies as st
from rth_bars import rth_daily
from scipy import stats
from share_bands import wilson_band
from windows_taken import one_at_a_time

from barb.caveats.overlapping_windows import _by_group, independent_count
from barb.summary_text import two_digits, value_text

MAP = {
    "high10": "close >= rolling_max(close, 10)",
    "fwd3": "(next(close, 3) / close - 1) * 100",
}
OVERLAP = "so their windows overlap"


@pytest.fixture(scope="module")
def highs(minutes: pd.DataFrame) -> np.ndarray:
    """The positions of the days at a 10-day closing high, among the RTH days (pandas)."""
    daily = rth_daily(minutes)
    high = daily["close"].rolling(10).max()
    return np.flatnonzero((daily["close"] >= high).to_numpy())


def _sentence(names: str, rows: str, picks: np.ndarray, trades: bool = True) -> str:
    near = int((np.diff(picks) < 3).sum())
    what, how = (
        ("trades", "taken one at a time, none entered while one is held")
        if trades
        else ("outcomes", "taken so that no two windows share a day")
    )
    return (
        f"{names} fwd3 (next(close, 3): the 3 days after each row) on the {len(picks)} {rows}: "
        f"{near} of them start within 3 days of the one before, so their windows overlap and "
        f"they are not {len(picks)} independent {what} ({how}: {one_at_a_time(picks, 3)})."
    )


def _grouped_sentence(
    names: str, key: str, groups: dict[str, np.ndarray], trades: bool = True
) -> str:
    """The sentence for a grouped statistic of fwd3 whose rows by group are at ``groups``'
    positions: near and one at a time counted within each group."""
    rows = sum(len(picks) for picks in groups.values())
    near = sum(int((np.diff(picks) < 3).sum()) for picks in groups.values())
    what, how = (
        ("trades", "taken one at a time, none entered while one is held")
        if trades
        else ("outcomes", "taken so that no two windows share a day")
    )
    counts = ", ".join(f"{name}: {one_at_a_time(picks, 3)}" for name, picks in groups.items())
    return (
        f"{names} fwd3 (next(close, 3): the 3 days after each row) in each {key} group: {near} "
        f"of the {rows} days start within 3 days of the one before in their group, so their "
        f"windows overlap and they are not {rows} independent {what} ({how}: {counts})."
    )


def test_overlapping_holds_of_an_if_are_said(engine_settings, minutes, highs) -> None:
    """mean(if(high10, fwd3, 0 / 0)) by month: the highs' positions, how many start within 3
    days of the one before, and the trades taken one at a time; mean(fwd3) by month, every
    day of each month read 3 days ahead, each month's days apart."""
    assert (np.diff(highs) < 3).sum() >= len(highs) / 4  # a notable share overlaps
    query = {
        "map": MAP,
        "group_by": "month()",
        "select": [
            "count(high10) as signals",
            "mean(if(high10, fwd3 > 0, 0 / 0)) as win_rate",
            "mean(if(high10, fwd3, 0 / 0)) as avg_fwd3",
            "mean(fwd3) as all_days",
        ],
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    assert result.table["signals"].sum() == len(highs)
    days = rth_daily(minutes)
    months = days.index.month.to_numpy()[: len(days) - 3]  # the days fwd3 has a value
    by_month = {f"month {m}": np.flatnonzero(months == m) for m in (1, 2, 3)}
    assert warnings_with(result, OVERLAP) == [
        _grouped_sentence("all_days reads", "month", by_month),
        _sentence("win_rate and avg_fwd3 read", "days where high10 is true", highs),
    ]


@pytest.mark.parametrize(
    ("name", "trades"), [("p_up", False), ("hit_rate", False), ("win_rate", True), ("pnl", True)]
)
def test_overlapping_holds_of_a_where_are_said(engine_settings, highs, name, trades) -> None:
    """The rows are trades when the query's names say so (win_rate, pnl); "after a 10-day
    high, how often are the next 3 days up" (p_up) counts outcomes, as many taken so that
    no two windows share a day as the trades one at a time. Outcomes are counted so in
    their noise line, and not said of again (p44a Q07: three times in one answer)."""
    result = ask(
        {"map": MAP, "where": "high10", "select": ["count() as n", f"mean(fwd3 > 0) as {name}"]},
        engine_settings,
        **RTH_DAILY,
    )
    assert result.summary.values["n"] == len(highs)
    said = _sentence(f"{name} reads", "days kept", highs, trades)
    assert warnings_with(result, OVERLAP) == ([said] if trades else [])
    [noise] = [w for w in result.metadata.warnings if w.startswith(f"{name} is ")]
    assert f"{len(highs)} rows whose 3-day windows overlap, counted as the " in noise
    assert f"counted as the {one_at_a_time(highs, 3)} taken" in noise


def test_rows_without_a_window_are_no_outcome(engine_settings, minutes) -> None:
    """Every day but Wednesdays keeps the last days, whose 3 days ahead the data does not
    hold: they are no outcome, and the days one at a time are counted over the days with a
    value, as the noise test counts them. ES's 930 Mondays (4 with no 20-day window) read
    "not 930 independent outcomes (…: 226)" beside the noise test's "the 225 taken"."""
    daily = rth_daily(minutes)
    fwd3 = daily["close"].shift(-3) / daily["close"] - 1
    kept = np.asarray(daily.index.dayofweek != 2)
    picks = np.flatnonzero(kept & fwd3.notna().to_numpy())
    assert np.count_nonzero(kept) - len(picks) == 2  # 03-26 and 03-28 have no 3 days ahead
    result = ask(
        {"map": MAP, "where": "dayofweek() != 2", "select": "mean(fwd3 > 0) as p_up"},
        engine_settings,
        **RTH_DAILY,
    )
    # Said once, in the noise line, as the rows with a value one at a time.
    assert warnings_with(result, OVERLAP) == []
    [noise] = [w for w in result.metadata.warnings if w.startswith("p_up is ")]
    assert f"{len(picks)} rows whose 3-day windows overlap" in noise
    assert f"counted as the {one_at_a_time(picks, 3)} taken" in noise


@pytest.mark.parametrize(
    ("query", "why"),
    [
        ({"select": "mean(fwd3)"}, "every day, no condition picked them"),
        ({"where": "high10", "select": "mean(next(ret, 3))"}, "the 3rd day's move alone"),
        ({"where": "high10", "select": "mean(ret)"}, "no look ahead"),
        ({"where": "high10", "select": "max(fwd3)"}, "one row's value, not a sample"),
    ],
)
def test_no_overlap_said(engine_settings, query, why) -> None:
    mapped = {**MAP, "ret": "(close / prev(close) - 1) * 100"}
    result = ask({"map": mapped, **query}, engine_settings, **RTH_DAILY)
    assert warnings_with(result, OVERLAP) == [], why


@pytest.fixture(scope="module")
def by_high(minutes: pd.DataFrame) -> pd.DataFrame:
    """Each RTH day's place, whether it is at a 10-day closing high, and fwd3 > 0, on the
    days with both (pandas)."""
    daily = rth_daily(minutes)
    high = daily["close"].rolling(10).max()
    fwd3 = daily["close"].shift(-3) / daily["close"] - 1
    days = pd.DataFrame(
        {"at": np.arange(len(daily)), "high10": daily["close"] >= high, "up": fwd3 > 0}
    )
    return days[high.notna().to_numpy() & fwd3.notna().to_numpy()]


def test_a_grouped_statistic_read_ahead_is_said(engine_settings, by_high) -> None:
    """ "At a 10-day high or not, how often are the next 3 days up" by group had no word of
    the overlap the where form of the same question was told of (p40a #17): each group's
    days counted apart."""
    groups = {
        f"high10 {'true' if flag else 'false'}": by_high["at"].to_numpy()[by_high["high10"] == flag]
        for flag in (False, True)
    }
    result = ask(
        {"map": MAP, "group_by": "high10", "select": ["count() as n", "mean(fwd3 > 0) as p_up"]},
        engine_settings,
        **RTH_DAILY,
    )
    said = _grouped_sentence("p_up reads", "high10", groups, trades=False)
    assert warnings_with(result, OVERLAP) == [said]


def test_overlapping_groups_are_testedone_at_a_time(engine_settings, by_high) -> None:
    """The groups' test and bands take each group as its days taken so that no two 3-day
    windows share one, the ups in their share of those: scipy's Fisher (or χ²) over that
    table, not over every day as if each were independent (p40a #17: p < 0.001 over NQ's
    1,739 days below the SMA50, where samples of every 40th day gave 0.008 to 1.0)."""
    table, sizes, bands = [], [], []
    for flag in (False, True):
        group = by_high[by_high["high10"] == flag]
        n, ups = len(group), int(group["up"].sum())
        taken = one_at_a_time(group["at"].to_numpy(), 3)
        hits = round(ups * taken / n)
        table.append([hits, taken - hits])
        sizes.append((taken, n))
        share = ups / n
        band = 2 * np.sqrt(group["up"].astype(float).var(ddof=1) / taken)
        wald = f"{value_text(share)} ± {two_digits(band)}"
        # Few rows counted (n·p·(1 − p) under 5): Wilson's interval in place of the ±.
        shown = wilson_band(share, taken) if taken * share * (1 - share) < 5 else wald
        bands.append(f"high10 {str(flag).lower()} {shown}")
    if min(min(row) for row in table) < 5:
        test, p = "Fisher's exact test", stats.fisher_exact(table).pvalue
    else:
        test, p = "χ²", stats.chi2_contingency(table, correction=False).pvalue
    assert p >= 0.05  # within noise: the warning says so, with the counts it took
    result = ask(
        {"map": MAP, "group_by": "high10", "select": ["count() as n", "mean(fwd3 > 0) as p_up"]},
        engine_settings,
        **RTH_DAILY,
    )
    [said] = warnings_with(result, "differ by less than their noise")
    (low, low_rows), (high, high_rows) = sorted(sizes)
    assert (
        f"({low}-{high} days each as counted so that no two 3-day windows share a day; "
        f"{min(low_rows, high_rows)}-{max(low_rows, high_rows)} days with their windows "
        "overlapping)"
    ) in said
    assert f"{test} p = {two_digits(p)}" in said
    for band in bands:
        assert band in said


def test_counts_scale_to_the_rows_taken_one_at_a_time_alike_in_every_test() -> None:
    """setup_noise, group_noise and no_edge scale a side's hits to the rows taken one at a
    time with one function: exact, half to even (Python's Fraction). no_edge's own
    hits * (taken / rows) had put 11 of 22 rows counted as 15 at 7.499999999999999: 7, where
    the other two tests said 8."""
    from fractions import Fraction

    from barb.caveats.overlapping_windows import scaled_counts

    cases = [(h, t, r) for r in range(8, 40) for t in range(1, r) for h in range(r + 1)]
    events, taken, rows = (np.array(c) for c in zip(*cases, strict=True))
    expected = [round(Fraction(h * t, r)) for h, t, r in cases]
    assert scaled_counts(events, taken, rows).tolist() == expected
    assert int(scaled_counts(11, 15, 22)) == 8
    assert scaled_counts([3, 5], [2, 2], [0, 10]).tolist() == [0, 1]  # no rows: 0


@st.composite
def _clustered(draw: st.DrawFn) -> np.ndarray:
    """Row positions, distinct and ascending, as a condition or a group key picks them: runs
    of rows a fixed step apart (an hour's minute bars a day, every other day), some rows
    left out (a missing minute), and the runs a random gap apart."""
    at, picks = 0, []
    for _ in range(draw(st.integers(0, 12))):
        at += draw(st.integers(1, 80))
        step, length = draw(st.integers(1, 4)), draw(st.integers(1, 50))
        run = at + step * np.arange(length)
        dropped = draw(st.lists(st.integers(0, length - 1), max_size=3))
        picks.extend(np.delete(run, dropped).tolist())
        at = int(run[-1])
    return np.array(picks, dtype=np.int64)


@settings(max_examples=300, deadline=None)
@given(picks=_clustered(), window=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
def test_independent_count_is_the_count_taken_one_at_a_time(picks, window, seed) -> None:
    """The count the warning prints and the noise tests use is the loop's (a trade entered
    only when none is held), for any rows: in a group, its rows' own. Past 200,000 rows it
    had been the bars the windows cover over the window, 48% too many on an hour's minute
    bars a day (p43d #1)."""
    assert independent_count(picks, window) == one_at_a_time(picks, window)
    codes = np.random.default_rng(seed).integers(0, 3, size=len(picks))
    rows, _, taken = _by_group(picks, codes, 3, window)
    for code in range(3):
        assert rows[code] == np.count_nonzero(codes == code)
        assert taken[code] == one_at_a_time(picks[codes == code], window)


def test_many_clustered_rows_are_counted_one_at_a_time() -> None:
    """p43d #1's rows: the 60 minute bars of one ETH hour a day, days 1,380 bars apart,
    30-bar windows: 2 taken a day (0 and 30), at 4,600 days (276,000 rows) as at 3,000,
    where past 200,000 rows the count had been 13,646, 2.97 a day. By hour, the 23 hours of
    300 days (414,000 rows) are 600 each."""
    days = np.arange(4_600)[:, None] * 1_380
    picks = (days + np.arange(60)).ravel()
    assert one_at_a_time(picks, 30) == 9_200
    assert independent_count(picks, 30) == 9_200
    positions = np.arange(300 * 1_380)
    hours = (positions % 1_380) // 60
    rows, _, taken = _by_group(positions, hours, 23, 30)
    assert rows.tolist() == [18_000] * 23
    assert taken.tolist() == [one_at_a_time(positions[hours == 0], 30)] * 23 == [600] * 23
