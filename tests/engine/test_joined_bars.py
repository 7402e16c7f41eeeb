"""Hourly bars of two joined markets on a day one of them closes inside a bar: on the Friday
after Thanksgiving ES's 13:00 bar is 13:00-13:15 and CL's 13:00-13:45, side by side in the
join with nothing said. Checked against hourly bars built here from the raw minute files."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from asking import ask

from barb.data.store import data_path

pytestmark = pytest.mark.slow

HOURS = "different minutes"


def _hours(symbol: str, settings) -> pd.DataFrame:
    """Each hourly bar's close, volume and the minutes that traded in it (2020-2025)."""
    bars = pd.read_parquet(
        data_path(symbol, settings), columns=["timestamp", "close", "volume", "trading_date"]
    )
    bars = bars[(bars["trading_date"] >= "2019-12-01") & (bars["trading_date"] <= "2025-12-31")]
    hours = bars.groupby(bars["timestamp"].dt.floor("h"))
    return hours.agg(
        close=("close", "last"),
        volume=("volume", "sum"),
        minutes=("close", "size"),
        date=("trading_date", "first"),
    )


def _thanksgiving_fridays() -> list[pd.Timestamp]:
    """The day after the fourth Thursday of November, 2020-2025."""
    days = []
    for year in range(2020, 2026):
        thursdays = pd.date_range(f"{year}-11-01", f"{year}-11-30", freq="W-THU")
        days.append(thursdays[3] + pd.Timedelta(days=1))
    return days


def test_an_hourly_join_says_the_bars_a_close_cuts_on_one_side_only(sample_settings) -> None:
    both = _hours("ES", sample_settings).join(
        _hours("CL", sample_settings), how="inner", lsuffix="_es", rsuffix="_cl"
    )
    both["r_es"] = both["close_es"] / both["close_es"].shift() - 1
    both["r_cl"] = both["close_cl"] / both["close_cl"].shift() - 1
    fridays = both[both["date_es"].isin(_thanksgiving_fridays())]
    apart = fridays[fridays["minutes_es"] != fridays["minutes_cl"]]
    assert len(apart) == 6
    assert (apart.index.strftime("%H:%M") == "13:00").all()
    assert set(zip(apart["minutes_es"], apart["minutes_cl"], strict=True)) == {(15, 45)}

    # "ES and CL hourly returns correlation on the days after Thanksgiving".
    query = {
        "session": "ETH",
        "from": "1h",
        "period": "2020:2025",
        "join": {"instrument": "CL"},
        "where": "early_close() and not holiday() and month() == 11",
        "map": {"a": "close / prev(close) - 1", "b": "cl_close / prev(cl_close) - 1"},
        "select": ["correlation(a, b) as corr", "count() as bars"],
    }
    result = ask(query, sample_settings, instrument="ES")
    assert result.summary.values["bars"] == len(fridays)
    assert result.summary.values["corr"] == pytest.approx(fridays["r_es"].corr(fridays["r_cl"]))
    said = [w for w in result.metadata.warnings if HOURS in w]
    assert len(said) == 1
    assert said[0].startswith(
        f"On 6 of the {len(fridays)} bars kept ES's 1h ETH bar and CL's hold different minutes"
    )
    day = apart.index[0]
    assert f"{day:%Y-%m-%d} 13:00 (ES 13:00-13:15, CL 13:00-13:45)" in said[0]
    assert 'On "from": "15m" no bar is cut.' in said[0]

    # The where it gives leaves exactly those bars out, and the warning with them.
    where = re.search(r'"where": "(.+?)" leaves them out', said[0])
    assert where is not None
    query["where"] = f"({query['where']}) and {where.group(1)}"
    again = ask(query, sample_settings, instrument="ES")
    assert not [w for w in again.metadata.warnings if HOURS in w]
    kept = fridays.drop(apart.index)
    assert again.summary.values["bars"] == len(kept)
    assert again.summary.values["corr"] == pytest.approx(kept["r_es"].corr(kept["r_cl"]))


def test_an_hourly_join_over_years_leaves_a_few_cut_bars_unsaid(sample_settings) -> None:
    """13 of 2020-2025's 35,424 joined hours: they move the correlation in its fifth digit."""
    query = {
        "session": "ETH",
        "from": "1h",
        "period": "2020:2025",
        "join": {"instrument": "CL"},
        "select": "correlation(volume, cl_volume) as vc",
    }
    result = ask(query, sample_settings, instrument="ES")
    assert not [w for w in result.metadata.warnings if HOURS in w]
