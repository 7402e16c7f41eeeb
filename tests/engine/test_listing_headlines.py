"""A chart's title is what the person quotes: of a listing, its extremes named by their rows,
and of an hour × minute grid, its overall extremes named by the clock.

p40e: 89 FOMC days were headlined by the last one ("range = 751.25 points · move = 611.50
points (2025-12-10)") where the widest was 796.5 on 2021-04-28, and 216 monthly returns by
December's ("ret last: 11.3%"). Mean volume by ``hour()`` and ``minute()`` was headlined per
minute series and cut off ("vol: 0 ▲10:00 13,485 …; 15 ▲15:00 12,416 …"): "15:00" was the
15:15 bar, and the overall peak, 08:30, was in no part of it. Expected values are pandas'
over the hand-made minute bars.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import as_read

from barb import execute
from barb.charts import chart_headline
from barb.settings import EngineSettings


def _run(query: dict, settings: EngineSettings):
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


def test_an_hour_by_minute_grid_is_headlined_by_its_busiest_and_quietest_bar(
    engine_settings: EngineSettings, minutes: pd.DataFrame
) -> None:
    query = {
        "session": "ETH",
        "from": "15m",
        "group_by": ["hour()", "minute()"],
        "select": "mean(volume) as vol",
    }
    bars = minutes.groupby(minutes["timestamp"].dt.floor("15min"))["volume"].sum()
    slots = bars.groupby([bars.index.hour, bars.index.minute]).mean()
    (hour, minute), (low_hour, low_minute) = slots.idxmax(), slots.idxmin()
    assert minute or low_minute  # the premise: a quarter-hour's bar, once named by its hour
    # Whole contracts, as the bars write volumes in the thousands (p47d D8).
    high = f"{hour:02d}:{minute:02d} {round(slots.max()):,} contracts"
    low = f"{low_hour:02d}:{low_minute:02d} {round(slots.min()):,} contracts"
    result = _run(query, engine_settings)
    # Each end named with the slots within noise of it (96 groups of made-up volumes).
    headline = chart_headline(result)
    assert headline.startswith(f"vol: highest {high}")
    assert f", lowest {low}" in headline


def test_a_picked_listing_is_headlined_by_its_extremes_not_its_last_row(
    engine_settings: EngineSettings, minutes: pd.DataFrame
) -> None:
    """Up hours of RTH (more than a chart marks as events), range and move: the title names
    the widest and narrowest hour, each by its bar, where it gave the last hour's two values."""
    query = {
        "session": "RTH",
        "from": "1h",
        "where": "close > open",
        "select": ["range", "close - open as move"],
    }
    clock = minutes["timestamp"].dt.hour * 60 + minutes["timestamp"].dt.minute
    rth = minutes[(clock >= 570) & (clock < 1020)]
    start = (rth["timestamp"] - pd.Timedelta(minutes=30)).dt.floor("1h") + pd.Timedelta(minutes=30)
    hours = rth.groupby(start).agg(
        open=("open", "first"), high=("high", "max"), low=("low", "min"), close=("close", "last")
    )
    up = hours[hours["close"] > hours["open"]]
    ranges = up["high"] - up["low"]
    assert len(up) > 60 and ranges.iloc[-1] != ranges.max()
    widest = ranges[ranges == ranges.max()].index
    narrowest = ranges[ranges == ranges.min()].index

    def side(at: pd.DatetimeIndex, value: float) -> str:
        if len(at) == 1:
            return f"{at[0]:%Y-%m-%d %H:%M} {value:,.2f} points"
        return f"{value:,.2f} points ({len(at)} tied)"

    headline = chart_headline(_run(query, engine_settings))
    expected = (
        f"range: highest {side(widest, ranges.max())}, lowest {side(narrowest, ranges.min())}"
    )
    assert headline == expected


@pytest.mark.parametrize(
    "query",
    [
        # The last three down days: the newest first, their latest is the answer.
        {"sort": "timestamp desc", "limit": 3, "where": "close < open"},
        # "How did NQ do yesterday": bars counted back from the data's end.
        {"period": "last_2_bars"},
    ],
)
def test_a_listing_of_the_latest_rows_keeps_the_latest_row_s_values(
    engine_settings: EngineSettings, minutes: pd.DataFrame, query: dict
) -> None:
    full = {"session": "RTH", "from": "daily", "select": ["timestamp", "range"], **query}
    headline = chart_headline(_run(full, engine_settings))
    assert headline.startswith("range last: ") and "highest" not in headline


def _as_read(value: float) -> str:
    """A volume as the model's text gives it, with the thousands' commas: 1,234.98."""
    return f"{float(value):,.{len(as_read(value).partition('.')[2])}f}"


def test_a_listing_s_title_names_its_extremes_as_the_summary_does(
    engine_settings: EngineSettings, minutes: pd.DataFrame
) -> None:
    """A title had said "ret: highest 2020-10 24.0%" where the summary the model quoted said
    max=23.95 (2020-10): one number, read two ways. Daily returns of the hand-made RTH days,
    by pandas: the title writes each extreme as the bars do (p47d D8: "2.092%" over a bar's
    "2.09%"), a percent with two decimals at least, the summary's rounded."""
    from rth_bars import rth_daily

    from barb.summary_text import render_summary, value_text

    days = rth_daily(minutes)
    ret = (days["close"] / days["close"].shift() - 1) * 100
    high, low = ret.idxmax(), ret.idxmin()
    query = {"session": "RTH", "from": "daily", "map": {"ret": "(close / prev(close) - 1) * 100"}}
    result = _run({**query, "select": "ret"}, engine_settings)
    top, bottom = (value_text(float(v)) for v in (ret.max(), ret.min()))
    assert len(top.partition(".")[2]) > 1  # more digits than the bars' one precision
    assert f"max={top} ({high:%Y-%m-%d})" in render_summary(result)
    assert f"min={bottom} ({low:%Y-%m-%d})" in render_summary(result)
    decimals = max(2, 2 - int(np.floor(np.log10(ret.abs().max()))))  # 3 significant digits
    top, bottom = (f"{v:.{decimals}f}" for v in (ret.max(), ret.min()))
    minus = bottom.replace("-", "\u2212")
    assert chart_headline(result) == (
        f"ret: highest {high:%Y-%m-%d} {top}%, lowest {low:%Y-%m-%d} {minus}%"
    )
