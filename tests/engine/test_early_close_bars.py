"""A holiday's or early close's last bar, cut short, in the group of full bars at its time
of day: NQ's hourly RTH bar from 12:30 lasts 30 minutes on a 13:00 close, 45 on a 13:15 one.
Said when leaving those bars out moves the group's mean volume or range by over 1%.
Expected values from pandas over the raw minute bars: the short days are those whose RTH
minutes stop before 16:59, read from the bars, not from a calendar."""

from __future__ import annotations

import pandas as pd
import pytest

from barb import execute
from barb.data.store import data_path

pytestmark = pytest.mark.slow

YEAR = 2024
RTH_START, RTH_END = 570, 1020  # 09:30-17:00


def clock(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


def session_bars(settings, step: int) -> pd.DataFrame:
    """A year of NQ's RTH bars of ``step`` minutes from the 09:30 open: volume, range, the
    minutes each holds, and whether its day closed early (a bar cut by that close holds
    fewer minutes than ``step`` and is not the session's own last bar)."""
    frame = pd.read_parquet(
        data_path("NQ", settings),
        columns=["trading_date", "minute", "high", "low", "volume"],
        filters=[
            ("trading_date", ">=", pd.Timestamp(f"{YEAR}-01-01")),
            ("trading_date", "<", pd.Timestamp(f"{YEAR + 1}-01-01")),
        ],
    )
    frame = frame[(frame["minute"] >= RTH_START) & (frame["minute"] < RTH_END)].copy()
    frame["bucket"] = RTH_START + (frame["minute"] - RTH_START) // step * step
    bars = (
        frame.groupby(["trading_date", "bucket"])
        .agg(
            high=("high", "max"),
            low=("low", "min"),
            volume=("volume", "sum"),
            held=("minute", "count"),
            last=("minute", "max"),
        )
        .reset_index()
    )
    bars["range"] = bars["high"] - bars["low"]
    day_last = frame.groupby("trading_date")["minute"].max()
    closed = bars["trading_date"].map(day_last) + 1
    full = (bars["bucket"] + step).clip(upper=RTH_END) - bars["bucket"]
    bars["cut"] = (closed < RTH_END) & (bars["held"] < full) & (bars["last"] + 1 == closed)
    bars["closed"] = closed
    return bars


def early_close_warnings(result) -> list[str]:
    assert result.ok, result.to_dict()
    return [w for w in result.metadata.warnings if "early close cut short" in w]


def test_an_hourly_group_with_early_closes_cut_bars_says_how_much_they_move_it(
    sample_settings,
) -> None:
    bars = session_bars(sample_settings, 60)
    touched = bars.loc[bars["cut"], "bucket"].unique()
    assert list(touched) == [750]  # 12:30: a 13:00 or 13:15 close falls inside it
    group = bars[bars["bucket"] == 750]
    cut = group[group["cut"]]
    shifts = {
        m: group.loc[~group["cut"], m].mean() / group[m].mean() - 1 for m in ("volume", "range")
    }
    assert max(abs(s) for s in shifts.values()) > 0.01
    query = {
        "session": "RTH",
        "from": "1h",
        "period": str(YEAR),
        "group_by": "time()",
        "select": "mean(volume) as vol",
    }
    result = execute(query, "NQ", settings=sample_settings)
    first = cut.iloc[0]
    assert early_close_warnings(result) == [
        f"The 12:30 group holds {len(cut)} bars that a holiday or early close cut short (e.g. "
        f"{first['trading_date']:%Y-%m-%d}, closed at {clock(int(first['closed']))}) among its "
        f"{len(group)}: without them its mean volume {shifts['volume'] * 100:+.1f}%, its mean "
        f"range {shifts['range'] * 100:+.1f}%. "
        '"where": "not holiday() and not early_close()" leaves those days out.'
    ]
    assert result.table.set_index("time").loc["12:30", "vol"] == pytest.approx(
        group["volume"].mean()
    )


def test_bars_an_early_close_ends_on_their_edge_say_nothing(sample_settings) -> None:
    """5-minute bars end at 13:00 and 13:15: none is cut, nothing is said."""
    assert not session_bars(sample_settings, 5)["cut"].any()
    query = {"session": "RTH", "from": "5m", "period": str(YEAR), "group_by": "time()"}
    result = execute({**query, "select": "mean(volume)"}, "NQ", settings=sample_settings)
    assert early_close_warnings(result) == []
