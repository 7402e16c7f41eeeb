"""Weekly and longer bars of two joined instruments that end on different days: NQ's Globex
traded a morning session on seven Good Fridays that CL did not, so those weeks' NQ bar ends
on the Friday and CL's on the Thursday; the weekly returns side by side spanned different
days with nothing said. Expected weeks from pandas over the sample's raw minute bars."""

from __future__ import annotations

import pandas as pd
from asking import ask, warnings_with

from barb.data.sample import write_samples
from barb.settings import EngineSettings

WEEKLY = {
    "from": "weekly",
    "period": "2010:2025",
    "join": {"instrument": "CL"},
    "map": {"nq_ret": "close / prev(close) - 1", "cl_ret": "cl_close / prev(cl_close) - 1"},
    "select": ["correlation(nq_ret, cl_ret)", "count()"],
}
SAID = "end on different days"


def _week_ends(settings: EngineSettings, symbol: str, rth: bool) -> pd.Series:
    """Each ISO week's last trading date (of the RTH bars, 09:30-17:00, or of all)."""
    bars = pd.read_parquet(
        settings.data_dir / f"{symbol}.parquet", columns=["trading_date", "minute"]
    )
    if rth:
        bars = bars[(bars["minute"] >= 570) & (bars["minute"] < 1020)]
    days = pd.Series(bars["trading_date"].unique())
    weeks = days - pd.to_timedelta(days.dt.weekday, unit="D")
    return days.groupby(weeks.to_numpy()).max()


def test_weekly_nq_and_cl_name_the_good_friday_weeks(sample_settings) -> None:
    write_samples(["CL"], sample_settings)  # NQ and ES are in the default sample
    nq, cl = (_week_ends(sample_settings, s, rth=False) for s in ("NQ", "CL"))
    both = nq.index.intersection(cl.index)
    both = both[(both >= "2010-01-04") & (both <= "2025-12-22")]
    apart = both[nq[both].to_numpy() != cl[both].to_numpy()]
    assert len(apart) == 7 and all(nq[w].weekday() == 4 for w in apart)  # Fridays
    result = ask(WEEKLY, sample_settings, session="ETH")
    said = warnings_with(result, SAID)
    assert len(said) == 1
    pairs = ", ".join(
        f"{nq[w]:%Y-%m-%d} against {cl[w]:%Y-%m-%d} (Good Friday, CL closed)" for w in apart[:3]
    )
    assert said[0] == (
        f"In 7 of the {len(both)} weeks NQ's bar and CL's end on different days (NQ's first): "
        f"{pairs} and 4 more; their closes (and what prev() reads of them) are that far "
        "apart there."
    )


def test_weekly_rth_bars_that_end_together_say_nothing(sample_settings) -> None:
    """NQ's Good Friday sessions close at 09:15, before RTH: its RTH weeks end with CL's."""
    write_samples(["CL"], sample_settings)
    nq, cl = (_week_ends(sample_settings, s, rth=True) for s in ("NQ", "CL"))
    both = nq.index.intersection(cl.index)
    both = both[(both >= "2010-01-04") & (both <= "2025-12-22")]
    assert (nq[both].to_numpy() == cl[both].to_numpy()).all()
    result = ask(
        {**WEEKLY, "join": {"instrument": "CL", "session": "RTH"}}, sample_settings, session="RTH"
    )
    assert warnings_with(result, SAID) == []


def _week_starts(settings: EngineSettings, symbol: str) -> pd.Series:
    """Each ISO week's first trading date (of all the bars)."""
    bars = pd.read_parquet(settings.data_dir / f"{symbol}.parquet", columns=["trading_date"])
    days = pd.Series(bars["trading_date"].unique())
    weeks = days - pd.to_timedelta(days.dt.weekday, unit="D")
    return days.groupby(weeks.to_numpy()).min()


def test_weekly_nq_and_cl_name_the_weeks_cl_began_a_day_earlier(sample_settings) -> None:
    """CL traded the observed New Year's Mondays of 2012, 2017 and 2023, NQ did not: those
    weeks' CL bar opens on the Monday, NQ's on the Tuesday, and a weekly open-to-close or
    range side by side spanned different days with nothing said."""
    write_samples(["CL"], sample_settings)
    nq, cl = (_week_starts(sample_settings, s) for s in ("NQ", "CL"))
    both = nq.index.intersection(cl.index)
    both = both[(both >= "2010-01-04") & (both <= "2025-12-22")]
    apart = both[nq[both].to_numpy() != cl[both].to_numpy()]
    assert len(apart) == 3 and all(cl[w].weekday() == 0 for w in apart)  # Mondays
    query = {**WEEKLY, "map": {"nq": "close / open - 1", "cl": "cl_close / cl_open - 1"}}
    query["select"] = ["correlation(nq, cl)", "count()"]
    result = ask(query, sample_settings, session="ETH")
    said = warnings_with(result, "begin on different days")
    assert len(said) == 1
    pairs = ", ".join(
        f"{nq[w]:%Y-%m-%d} against {cl[w]:%Y-%m-%d} (New Years Day, NQ closed)" for w in apart
    )
    assert said[0] == (
        f"In 3 of the {len(both)} weeks NQ's bar and CL's begin on different days (NQ's "
        f"first): {pairs}; their opens (and the ranges and volumes over the day one lacks) "
        "are that far apart there."
    )
