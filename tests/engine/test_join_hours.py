"""Daily joins of two markets whose short days differ: ES closes at 13:15 on the Friday after
Thanksgiving, CL at 13:45; on July 3 and Christmas Eve CL trades its full day. Their daily
bars side by side then cover different hours, which the join said nothing of: ES and CL's
ETH return correlation of 2020-2025 is 0.2920 over all days, 0.2938 without those.

Checked against pandas over the raw minute files: bars and joins built here, not by Barb.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from asking import ask

from barb.data.store import data_path

pytestmark = pytest.mark.slow

PERIOD = ("2020-01-01", "2025-12-31")
HOURS = "different hours"


def _days(symbol: str, settings, window: tuple[int, int] | None = None) -> pd.DataFrame:
    """Each trading date's close and the wall-clock minute its last bar ended, from the minute
    file (ETH: every minute of the date; else the minutes of ``window``)."""
    bars = pd.read_parquet(data_path(symbol, settings), columns=["close", "trading_date", "minute"])
    if window is not None:
        bars = bars[(bars["minute"] >= window[0]) & (bars["minute"] < window[1])]
    days = bars.groupby("trading_date").agg(close=("close", "last"), end=("minute", "last"))
    days["end"] = (days["end"] + 1) % 1440
    return days


def _joined(settings, window: tuple[int, int] | None = None) -> pd.DataFrame:
    """ES and CL side by side on the dates both traded, with each one's return from its
    previous joined row (what prev() reads in the join), over the period."""
    both = _days("ES", settings, window).join(
        _days("CL", settings, window), how="inner", lsuffix="_es", rsuffix="_cl"
    )
    both["r_es"] = both["close_es"] / both["close_es"].shift() - 1
    both["r_cl"] = both["close_cl"] / both["close_cl"].shift() - 1
    return both.loc[PERIOD[0] : PERIOD[1]]


def _query(base: str, session: str, where: str | None = None) -> dict:
    other = "cl" if base == "ES" else "es"
    query = {
        "session": session,
        "from": "daily",
        "period": "2020:2025",
        "join": {"instrument": other.upper()},
        "map": {"a": "close / prev(close) - 1", "b": f"{other}_close / prev({other}_close) - 1"},
        "select": ["correlation(a, b) as corr", "count() as days"],
    }
    if where is not None:
        query["where"] = where
    return query


def _hours_warning(result) -> str | None:
    found = [w for w in result.metadata.warnings if HOURS in w]
    assert len(found) <= 1
    return found[0] if found else None


def _clock(minute: float) -> str:
    minute = int(minute)
    return f"{minute // 60 % 24:02d}:{minute % 60:02d}"


@pytest.mark.parametrize("base", ["ES", "CL"])
def test_eth_join_says_the_days_the_two_markets_closed_at_other_times(
    sample_settings, base: str
) -> None:
    both = _joined(sample_settings)
    apart = both[both["end_es"] != both["end_cl"]]
    assert len(apart) == 37  # the sample's holiday schedules: 36 short days and 2025-01-09
    result = ask(_query(base, "ETH"), sample_settings, instrument=base)
    assert result.summary.values["corr"] == pytest.approx(both["r_es"].corr(both["r_cl"]))
    warning = _hours_warning(result)
    assert warning is not None
    ours, theirs = ("es", "cl") if base == "ES" else ("cl", "es")
    other = theirs.upper()
    named = ", ".join(
        f"{day:%Y-%m-%d} ({base} until {_clock(row[f'end_{ours}'])}, "
        f"{other} {_clock(row[f'end_{theirs}'])})"
        for day, row in apart.iloc[:3].iterrows()
    )
    assert warning.startswith(
        f"On 37 of the {len(both):,} days kept {base}'s ETH bar and {other}'s cover different hours"
    )
    assert f": {named} and 34 more;" in warning

    # The where it gives leaves every one of them out, and the warning with them.
    where = re.search(r'"where": "(.+?)" leaves them out \(and (\d+) other short days', warning)
    assert where is not None
    again = ask(_query(base, "ETH", where.group(1)), sample_settings, instrument=base)
    assert _hours_warning(again) is None
    kept = again.source_rows if again.source_rows is not None else again.table
    kept_days = pd.to_datetime(kept["date"]).to_numpy()
    assert not np.isin(apart.index.to_numpy(), kept_days).any()
    # It drops the other short days too, as many as it says: ES's 13:00 holidays of 2020-21,
    # when CL's stopped at 13:00 as well.
    others = len(both) - len(apart) - again.summary.values["days"]
    assert others == int(where.group(2)) > 0
    left = both.drop(apart.index)
    assert others == np.count_nonzero(left["end_es"] != 17 * 60)


def test_a_window_with_the_same_clock_hours_says_its_own_short_days(sample_settings) -> None:
    """09:30-16:00 on both: ES's holiday stops at 13:00 (12:59 its last bar), CL's at 14:30
    since 2022; a CL full day where ES stopped at 13:15 ends at 16:00, the window's end."""
    both = _joined(sample_settings, (570, 960))
    apart = both[both["end_es"] != both["end_cl"]]
    result = ask(_query("ES", "09:30-16:00"), sample_settings, instrument="ES")
    assert result.summary.values["corr"] == pytest.approx(both["r_es"].corr(both["r_cl"]))
    warning = _hours_warning(result)
    assert warning is not None
    assert f"On {len(apart)} of the {len(both):,} days kept" in warning
    assert "2020-12-24 (ES until 13:15, CL 16:00)" in warning
    alike = both.drop(apart.index)
    others = np.count_nonzero(alike["end_es"] != 16 * 60)
    assert warning.endswith(
        '"where": "not holiday() and not early_close()" leaves them out (and '
        f"{others} other short days both closed alike)."
    )


def test_markets_with_one_calendar_or_a_join_read_for_its_dates_say_nothing(
    sample_settings,
) -> None:
    """NQ and ES keep the same short days; a query reading none of CL's columns compares no
    hours of it."""
    nq = _days("NQ", sample_settings).join(
        _days("ES", sample_settings), how="inner", lsuffix="_nq", rsuffix="_es"
    )
    nq = nq.loc[PERIOD[0] : PERIOD[1]]
    assert (nq["end_nq"] == nq["end_es"]).all()
    query = _query("NQ", "ETH") | {"join": {"instrument": "ES"}}
    query["map"] = {"a": "close / prev(close) - 1", "b": "es_close / prev(es_close) - 1"}
    assert _hours_warning(ask(query, sample_settings)) is None

    dates_only = {"session": "ETH", "from": "daily", "period": "2020:2025"}
    dates_only |= {"join": {"instrument": "CL"}, "select": "mean(range) as r"}
    assert _hours_warning(ask(dates_only, sample_settings, instrument="ES")) is None


def test_a_minute_without_trades_before_a_close_is_no_short_day(sample_settings, tmp_path) -> None:
    """Real minute files lack a bar where nothing traded: CL's last bar of an ordinary day
    may be 16:58. Only the calendars' short days are said (Black Friday), not such a day."""
    from barb.data.store import DataMeta, write_bars
    from barb.settings import EngineSettings

    settings = EngineSettings(data_dir=tmp_path)
    thin = pd.Timestamp("2024-11-20 16:59")
    for symbol in ("ES", "CL"):
        bars = pd.read_parquet(data_path(symbol, sample_settings))
        dates = bars["trading_date"]
        bars = bars[(dates >= "2024-11-01") & (dates <= "2024-11-30")]
        if symbol == "CL":
            assert (bars["timestamp"] == thin).sum() == 1
            bars = bars[bars["timestamp"] != thin]
        meta = DataMeta(
            instrument=symbol,
            timezone="America/New_York",
            source="synthetic",
            description="the sample's November 2024",
            first_date=bars["trading_date"].iloc[0].date(),
            last_date=bars["trading_date"].iloc[-1].date(),
            rows=len(bars),
        )
        write_bars(bars.reset_index(drop=True), meta, data_path(symbol, settings))
    query = _query("ES", "ETH") | {"period": "2024-11"}
    warning = _hours_warning(ask(query, settings, instrument="ES"))
    assert warning is not None
    assert warning.startswith("On 2 of the 21 days kept ES's ETH bar and CL's cover")
    assert "2024-11-28 (ES until 13:00, CL 14:30), 2024-11-29 (ES until 13:15, CL 13:45);" in (
        warning
    )
    assert "2024-11-20" not in warning


def _weeks(days: pd.DataFrame) -> pd.DataFrame:
    """Each week's (Monday's) close, its last trading date and the minute that date ended."""
    dates = pd.DatetimeIndex(days.index)
    weeks = days.assign(last=dates).groupby(dates - pd.to_timedelta(dates.weekday, unit="D"))
    return weeks.agg(close=("close", "last"), end=("end", "last"), last=("last", "last"))


def test_weekly_join_says_the_weeks_whose_last_day_closed_at_other_times(sample_settings) -> None:
    """ES's week after Thanksgiving closes at 13:15, CL's at 13:45; the week of Christmas Eve
    2020 CL trades to 17:00: weekly returns side by side are of different hours there."""
    weeks = _weeks(_days("ES", sample_settings)).join(
        _weeks(_days("CL", sample_settings)), how="inner", lsuffix="_es", rsuffix="_cl"
    )
    weeks["r_es"] = weeks["close_es"] / weeks["close_es"].shift() - 1
    weeks["r_cl"] = weeks["close_cl"] / weeks["close_cl"].shift() - 1
    both = weeks.loc["2020-01-06":"2025-12-22"]  # the whole weeks of 2020:2025
    same_day = both["last_es"] == both["last_cl"]
    apart = both[same_day & (both["end_es"] != both["end_cl"])]
    assert len(apart) == 8
    query = _query("ES", "ETH") | {"from": "weekly"}
    result = ask(query, sample_settings, instrument="ES")
    assert result.summary.values["corr"] == pytest.approx(both["r_es"].corr(both["r_cl"]))
    warning = _hours_warning(result)
    assert warning is not None
    first = apart.iloc[0]
    assert warning.startswith(
        f"In 8 of the {len(both)} weeks kept ES's ETH bar and CL's close on the same day at "
        f"different hours"
    )
    assert (
        f"the week {apart.index[0]:%Y-%m-%d} ({first['last_es']:%Y-%m-%d}: ES until "
        f"{_clock(first['end_es'])}, CL {_clock(first['end_cl'])})"
    ) in warning

    # The where it gives leaves exactly those weeks out, and the warning with them.
    where = re.search(r'"where": "(.+?)" leaves them out', warning)
    assert where is not None
    again = ask(query | {"where": where.group(1)}, sample_settings, instrument="ES")
    assert _hours_warning(again) is None
    kept = both.drop(apart.index)
    assert again.summary.values["days"] == len(kept)
    assert again.summary.values["corr"] == pytest.approx(kept["r_es"].corr(kept["r_cl"]))


def _minutes(symbol: str, settings) -> pd.DataFrame:
    """The ETH minute bars of 2020-2025, with each one's minute since the 18:00 open."""
    bars = pd.read_parquet(
        data_path(symbol, settings), columns=["trading_date", "minute", "high", "low", "volume"]
    )
    bars = bars[(bars["trading_date"] >= PERIOD[0]) & (bars["trading_date"] <= PERIOD[1])]
    return bars.assign(m=(bars["minute"] - 1080) % 1440)


def _inside_days(settings) -> pd.DataFrame:
    """ES and CL's ETH days of 2020-2025, before their week's last joined day, on which the
    two traded different hours, with what CL's bars in the hours ES had none of hold of
    CL's week: its high or low (``extreme``), and their share of its volume (``share``)."""
    es, cl = _minutes("ES", settings), _minutes("CL", settings)
    edges = (
        es.groupby("trading_date")["m"]
        .agg(["min", "max"])
        .join(cl.groupby("trading_date")["m"].agg(["min", "max"]), how="inner", rsuffix="_cl")
    )
    dates = pd.DatetimeIndex(edges.index)
    monday = dates - pd.to_timedelta(dates.weekday, unit="D")
    last = pd.Series(dates, index=dates).groupby(monday).transform("max").to_numpy()
    apart = (edges["min"] != edges["min_cl"]) | (edges["max"] != edges["max_cl"])
    inside = edges[(dates != last) & apart.to_numpy()].copy()
    cl_week = cl.assign(
        week=cl["trading_date"] - pd.to_timedelta(cl["trading_date"].dt.weekday, unit="D")
    )
    for day, row in inside.iterrows():
        week = cl_week[cl_week["week"] == day - pd.Timedelta(days=day.weekday())]
        on_day = week[week["trading_date"] == day]
        shared = (on_day["m"] >= max(row["min"], row["min_cl"])) & (
            on_day["m"] <= min(row["max"], row["max_cl"])
        )
        extra = on_day[~shared]
        inside.loc[day, "extreme"] = bool(
            extra["high"].max() >= week["high"].max() or extra["low"].min() <= week["low"].min()
        )
        inside.loc[day, "share"] = extra["volume"].sum() / week["volume"].sum()
    return inside


def test_weekly_join_says_a_short_day_inside_the_week_only_where_it_moves_the_sizes(
    sample_settings,
) -> None:
    """Thanksgiving Thursday ES stops at 13:00 and CL at 14:30: CL's week holds 90 minutes
    of that day ES's has none of. Said on 27 of 2020-2025's 312 weeks (mostly holiday
    Mondays) whatever those minutes held; now only on the weeks where they hold CL's high or
    low of the week, to a query reading highs and lows (4 weeks: 2023-07-04, 2024-01-15,
    2025-06-19, 2025-12-24), and not to one reading volumes, whose share there (2-7 % of
    the week's) is under the week-to-week spread. Not on Thanksgiving 2024 either way."""
    inside = _inside_days(sample_settings)
    weeks = {d - pd.Timedelta(days=d.weekday()) for d in inside.index}
    assert len(weeks) == 27
    moved = inside[inside["extreme"].astype(bool)]
    assert len(moved) == 4 and pd.Timestamp("2024-11-28") not in moved.index
    assert inside["share"].max() < 0.10 < 1  # no volume answer moved by a tenth
    base = {"session": "ETH", "from": "weekly", "period": "2020:2025", "join": {"instrument": "CL"}}
    said = "a short day before the week's last"
    sizes = ask(base | {"select": ["mean(range)", "mean(cl_high - cl_low)"]}, sample_settings, "ES")
    [text] = [w for w in sizes.metadata.warnings if said in w]
    assert text.startswith(f"In {len(moved)} of the 312 weeks kept {said} closed ES's ETH bar")
    first = moved.index[0]
    assert f"({first:%Y-%m-%d}: ES until 13:00, CL 14:30)" in text
    listed = re.search(r"date\(\) not in \(([^)]*)\)", text)
    assert listed is not None
    named = {pd.Timestamp(d.strip(" '")) for d in listed[1].split(",")}
    assert {d - pd.Timedelta(days=d.weekday()) for d in named} == {
        d - pd.Timedelta(days=d.weekday()) for d in moved.index
    }
    for select in (["mean(volume)", "mean(cl_volume)"], ["close", "cl_close"]):
        quiet = ask(base | {"select": select}, sample_settings, "ES")
        assert not [w for w in quiet.metadata.warnings if said in w], select
