"""Weekly and monthly bars at their edges: the data's unfinished last bar feeds nothing a
whole bar reads (next() of the last whole month is empty), and joins match two markets' bars
on the week or month they stand for, though one market closes a day earlier (Good Friday).

Checked against pandas over the raw minute files: bars built here, not by Barb.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import ask

from barb.data.store import data_path
from barb.period_rows import UNMATCHED_NAMED

pytestmark = pytest.mark.slow

RTH = (570, 1020)  # NQ's RTH, 09:30-17:00, in minutes of the day


def _daily(symbol: str, settings, minutes: tuple[int, int] | None = None) -> pd.DataFrame:
    """Daily bars from the minute file (all of each trading date's minutes: ETH, or RTH)."""
    bars = pd.read_parquet(data_path(symbol, settings))
    if minutes is not None:
        bars = bars[(bars["minute"] >= minutes[0]) & (bars["minute"] < minutes[1])]
    return bars.groupby("trading_date").agg(open=("open", "first"), close=("close", "last"))


def _calendar(daily: pd.DataFrame, freq: str) -> pd.DataFrame:
    """Weekly ("W-SUN") or monthly ("M") bars of whole periods: the data's last period is
    dropped when the exchange trades again before it ends (its last weekday is later)."""
    periods = daily.index.to_period(freq)
    bars = daily.groupby(periods).agg(open=("open", "first"), close=("close", "last"))
    last_weekday = periods[-1].end_time.normalize()
    while last_weekday.weekday() > 4:
        last_weekday -= pd.Timedelta(days=1)
    assert daily.index[-1] < last_weekday  # the sample ends inside a week and a month
    return bars.iloc[:-1]


# --- the unfinished last bar ----------------------------------------------------------------


def test_after_an_up_month_the_next_month_is_whole(sample_settings) -> None:
    """ "After an up month, how often is the next month up?" The last whole month has no
    whole month after it: January's first days are no month's change."""
    result = ask(
        {
            "session": "RTH",
            "from": "monthly",
            "map": {"chg": "close - open", "next_chg": "next(close) - next(open)"},
            "where": "chg > 0",
            "select": ["mean(next_chg > 0) as next_up", "count()", "count(next_chg) as known"],
        },
        sample_settings,
    )
    months = _calendar(_daily("NQ", sample_settings, RTH), "M")
    chg = months["close"] - months["open"]
    next_chg = chg.shift(-1)
    up = chg > 0
    assert up.iloc[-1]  # the last whole month is up: the case the unfinished month misled
    known = next_chg[up].dropna()
    values = result.summary.values
    assert values["count"] == int(up.sum())
    assert values["known"] == len(known) == int(up.sum()) - 1
    assert values["next_up"] == pytest.approx((known > 0).mean())
    last = months.index[-1].strftime("%Y-%m")
    assert any(
        f"next() reads no month after {last}, the last whole one" in w
        for w in result.metadata.warnings
    )


def test_next_of_the_last_whole_week_is_empty(sample_settings) -> None:
    result = ask(
        {
            "session": "RTH",
            "from": "weekly",
            "period": "2025-12-01:",
            "map": {"next_chg": "next(close) - close"},
            "select": ["close", "next_chg"],
        },
        sample_settings,
    )
    weeks = _calendar(_daily("NQ", sample_settings, RTH), "W-SUN").loc["2025-12-01":]
    expected = weeks["close"].shift(-1) - weeks["close"]
    assert list(result.table["close"]) == list(weeks["close"])
    np.testing.assert_array_equal(result.table["next_chg"].to_numpy(float), expected.to_numpy())
    assert np.isnan(result.table["next_chg"].iloc[-1])


@pytest.mark.parametrize(
    ("timeframe", "freq", "period"),
    [("monthly", "M", "2008:2025"), ("quarterly", "Q", "2025"), ("monthly", "M", "last_year")],
)
def test_a_period_ending_before_the_unfinished_bar_gives_next_nothing_of_it(
    sample_settings, timeframe: str, freq: str, period: str
) -> None:
    """ "After a month up more than 10%, how often was the next month up?" over 2008:2025:
    December 2025's next month is no month yet (January 2026's four days). A period that
    ends before the data does must not let next() read them, as no period does."""
    result = ask(
        {
            "session": "RTH",
            "from": timeframe,
            "period": period,
            "map": {"ret": "close / prev(close) - 1", "next_ret": "next(close) / close - 1"},
            "select": ["ret", "next_ret"],
        },
        sample_settings,
    )
    bars = _calendar(_daily("NQ", sample_settings, RTH), freq)
    first = "2025" if period != "2008:2025" else "2008"
    bars = bars.loc[first:"2025"]  # _calendar already left the unfinished bar out
    ret = bars["close"].pct_change()
    whole = _calendar(_daily("NQ", sample_settings, RTH), freq)["close"]
    expected_next = (whole.shift(-1) / whole - 1).loc[bars.index]
    assert len(result.table) == len(bars)
    np.testing.assert_allclose(result.table["ret"].to_numpy(float)[1:], ret.to_numpy()[1:])
    np.testing.assert_allclose(
        result.table["next_ret"].to_numpy(float), expected_next.to_numpy(), equal_nan=True
    )
    assert np.isnan(result.table["next_ret"].iloc[-1])
    unit = "quarter" if freq == "Q" else "month"
    assert any(
        w.startswith(f"next() reads no {unit} after") and "is not over yet" in w
        for w in result.metadata.warnings
    ), result.metadata.warnings


def test_next_still_reads_a_whole_bar_after_the_period(sample_settings) -> None:
    """The period selects rows; the whole month after it is history next() may read."""
    result = ask(
        {
            "session": "RTH",
            "from": "monthly",
            "period": "2025-11",
            "map": {"after": "next(close)"},
            "select": "after",
        },
        sample_settings,
    )
    months = _calendar(_daily("NQ", sample_settings, RTH), "M")
    assert list(result.table["after"]) == [months.loc["2025-12", "close"]]
    assert not any("next()" in w for w in result.metadata.warnings)


# --- joins of weekly and monthly bars ---------------------------------------------------------


def test_monthly_cl_and_es_returns_keep_the_good_friday_month(sample_settings) -> None:
    """CL has no Good Friday session, ES a short one: CL's March 2024 ends on the 28th, ES's
    on the 29th. Still the same month, so March is there and April is one month's return."""
    result = ask(
        {
            "instrument": "CL",
            "session": "ETH",
            "from": "monthly",
            "period": "2024",
            "join": {"instrument": "ES"},
            "map": {
                "cl_ret": "(close / prev(close) - 1) * 100",
                "es_ret": "(es_close / prev(es_close) - 1) * 100",
            },
            "select": ["cl_ret", "es_ret"],
        },
        sample_settings,
        instrument="CL",
    )
    cl = _daily("CL", sample_settings)
    es = _daily("ES", sample_settings)
    assert cl.index[cl.index.to_period("M") == "2024-03"][-1] == pd.Timestamp("2024-03-28")
    assert es.index[es.index.to_period("M") == "2024-03"][-1] == pd.Timestamp("2024-03-29")

    def returns(daily: pd.DataFrame) -> pd.Series:
        months = daily["close"].groupby(daily.index.to_period("M")).last()
        return (months.pct_change() * 100).loc["2024"]

    assert list(result.table["month"]) == [f"2024-{m:02d}" for m in range(1, 13)]
    np.testing.assert_allclose(result.table["cl_ret"], returns(cl), rtol=1e-12)
    np.testing.assert_allclose(result.table["es_ret"], returns(es), rtol=1e-12)
    assert result.table["cl_ret"].iloc[2] == pytest.approx(5.08, abs=0.005)
    assert not any("without a matching" in w for w in result.metadata.warnings)


def test_weekly_cl_nq_join_keeps_every_week_both_have(sample_settings) -> None:
    result = ask(
        {
            "session": "ETH",
            "from": "weekly",
            "join": {"instrument": "NQ"},
            "select": ["close", "nq_close"],
        },
        sample_settings,
        instrument="CL",
    )
    cl = _calendar(_daily("CL", sample_settings), "W-SUN")
    nq = _calendar(_daily("NQ", sample_settings), "W-SUN")
    both = cl.join(nq, how="inner", lsuffix="_cl", rsuffix="_nq")
    # The data's first week began before it (Wednesday 2008-01-02; Monday 2007-12-31
    # traded): a part week, left out like one a period's start cuts.
    assert str(both.index[0].start_time.date()) == "2007-12-31"
    both = both.iloc[1:]
    assert len(result.table) == len(both)
    assert list(result.table["close"]) == list(both["close_cl"])
    assert list(result.table["nq_close"]) == list(both["close_nq"])
    assert not any("without a matching" in w for w in result.metadata.warnings)


def test_a_join_names_the_bars_the_other_market_lacks(sample_settings) -> None:
    """ES trades a short Good Friday session, CL none: those ES days have no CL bar."""
    result = ask(
        {"session": "ETH", "from": "daily", "join": {"instrument": "CL"}, "select": "count()"},
        sample_settings,
        instrument="ES",
    )
    es = _daily("ES", sample_settings).index
    cl = _daily("CL", sample_settings).index
    missing = es.difference(cl)
    # Every one of them named (p32a Q18: "and 4 more" kept the model from naming all 7).
    assert 3 < len(missing) <= UNMATCHED_NAMED
    named = ", ".join(d.strftime("%Y-%m-%d") for d in missing)
    after, before = _around(es.intersection(cl), missing[0])
    expected = (
        f"{len(missing)} ES bars without a matching CL bar left out: {named}. ES's own prev() "
        f"on {after} reads its bar of {before}, not the {missing[0]:%Y-%m-%d} left out."
    )
    assert expected in result.metadata.warnings
    assert result.summary.value == len(es) - len(missing)


def _around(joined: pd.DatetimeIndex, left_out: pd.Timestamp) -> tuple[str, str]:
    """The joined dates after and before a date the join left out, as the warning names
    them: the row whose prev() skips it, and the row it reads."""
    after = joined[joined > left_out][0]
    before = joined[joined < left_out][-1]
    return f"{after:%Y-%m-%d}", f"{before:%Y-%m-%d}"


@pytest.mark.parametrize("period", [None, "2012", "2015-04"])
def test_a_join_names_the_joined_markets_bars_it_left_out(
    sample_settings, period: str | None
) -> None:
    """ES trades a short Good Friday session, CL none: CL's rows never see those ES bars, so
    prev(es_close) on the Monday after reads Thursday's ES close. Said from either side."""
    query = {"session": "ETH", "from": "daily", "join": {"instrument": "ES"}, "select": "count()"}
    if period:
        query["period"] = period
    result = ask(query, sample_settings, instrument="CL")
    es = _daily("ES", sample_settings).index
    cl = _daily("CL", sample_settings).index
    alone = es.difference(cl)
    if period:
        alone = alone[alone.strftime("%Y-%m-%d").str.startswith(period)]
    assert len(alone) >= 1
    named = ", ".join(d.strftime("%Y-%m-%d") for d in alone[:UNMATCHED_NAMED])
    more = f" and {len(alone) - UNMATCHED_NAMED} more" if len(alone) > UNMATCHED_NAMED else ""
    bars = "bar" if len(alone) == 1 else "bars"
    after, before = _around(es.intersection(cl), alone[0])
    expected = (
        f"{len(alone)} ES {bars} without a matching CL bar left out: {named}{more}. "
        f"prev(es_close) on {after} reads the ES bar of {before}, not the "
        f"{alone[0]:%Y-%m-%d} left out."
    )
    assert expected in result.metadata.warnings


def test_a_join_says_what_the_base_s_own_prev_reads_and_no_holiday_it_skipped(
    sample_settings,
) -> None:
    """p28g F1: CL trades RTH on 2023-01-02, NQ does not; joined with NQ, CL's own
    prev(close) on 2023-01-03 reads 2022-12-30 (a 3.62% day where CL's own series gives
    2.69%), and the holiday warning said it read the holiday's close. The join warning names
    the row and what it reads; the holiday warning is silent."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2023-01",
        "join": {"instrument": "NQ"},
        "map": {"ret": "close / prev(close) - 1"},
        "select": "count()",
    }
    result = ask(query, sample_settings, instrument="CL")
    cl = _daily("CL", sample_settings, (540, 870)).index  # CL's RTH, 09:00-14:30
    nq = _daily("NQ", sample_settings, (570, 1020)).index  # NQ's, 09:30-17:00
    alone = cl.difference(nq)
    alone = alone[alone.strftime("%Y-%m") == "2023-01"]
    assert len(alone) == 1
    after, before = _around(cl.intersection(nq), alone[0])
    assert (
        f"1 CL bar without a matching NQ bar left out: {alone[0]:%Y-%m-%d}. CL's own prev() "
        f"on {after} reads its bar of {before}, not the {alone[0]:%Y-%m-%d} left out."
    ) in result.metadata.warnings
    assert not [w for w in result.metadata.warnings if "US holiday session" in w]
