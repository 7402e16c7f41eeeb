"""A distance scaled by a number is no longer in the price's unit: ES's daily range times 50
(a contract's dollars) was labelled "avg_usd = 1,744.96 points" and CL's range over its tick
"avg_ticks = 15.18 dollars" (p28a F1). The name given to a scaled distance says what it is
(usd, pnl → dollars; ticks → ticks), else it has no unit. Values from pandas over the
minute bars, never through Barb."""

from __future__ import annotations

import pandas as pd
import pytest
from asking import ask

from barb.charts import chart_headline
from barb.column_units import column_unit
from barb.data.store import data_path

pytestmark = pytest.mark.slow

ES_TICK, ES_POINT_VALUE = 0.25, 50
CL_TICK, CL_POINT_VALUE = 0.01, 1000


def _daily_ranges(symbol: str, settings, year: int) -> pd.Series:
    """Each trading date's high minus low over all its minute bars (the ETH session)."""
    columns = ["high", "low", "trading_date"]
    minutes = pd.read_parquet(data_path(symbol, settings), columns=columns)
    minutes = minutes[pd.to_datetime(minutes["trading_date"]).dt.year == year]
    days = minutes.groupby("trading_date")
    return days["high"].max() - days["low"].min()


ES_MONEY = {
    "session": "ETH",
    "from": "daily",
    "period": "2025",
    "map": {"ticks": f"range / {ES_TICK}", "usd": f"range * {ES_POINT_VALUE}"},
    "select": [
        "mean(ticks) as avg_ticks",
        "mean(usd) as avg_usd",
        f"mean(range * {ES_POINT_VALUE}) as x",
        "mean(range) as avg_range",
    ],
}


def test_a_range_in_dollars_and_ticks_is_labelled_so(sample_settings) -> None:
    ranges = _daily_ranges("ES", sample_settings, 2025)
    result = ask(ES_MONEY, sample_settings, "ES")
    values = result.summary.values
    assert values["avg_usd"] == pytest.approx((ranges * ES_POINT_VALUE).mean())
    assert values["avg_ticks"] == pytest.approx((ranges / ES_TICK).mean())
    assert values["x"] == pytest.approx(values["avg_usd"])
    units = {name: column_unit(name, "daily", result.query) for name in values}
    assert units == {"avg_ticks": "ticks", "avg_usd": "dollars", "x": None, "avg_range": "points"}


@pytest.mark.parametrize(
    ("language", "usd", "ticks"),
    [("en", "{:,.2f} dollars", "ticks"), ("ru", "{:,.2f} долл.", "тик")],
)
def test_the_headline_gives_dollars_not_points(
    sample_settings, language: str, usd: str, ticks: str
) -> None:
    ranges = _daily_ranges("ES", sample_settings, 2025)
    query = {**ES_MONEY, "select": ["mean(usd) as avg_usd", "mean(ticks) as avg_ticks"]}
    head = chart_headline(ask(query, sample_settings, "ES"), language)
    assert head is not None
    expected = usd.format((ranges * ES_POINT_VALUE).mean())
    if language == "ru":
        expected = expected.replace(",", "\u00a0").replace(".", ",", 1)
    assert f"avg_usd = {expected}" in head, head
    assert ticks in head.split("avg_ticks = ")[1], head
    assert "points" not in head and "пункт" not in head


def test_cl_ticks_and_dollars_are_not_the_price_unit(sample_settings) -> None:
    """CL's price unit is dollars (a barrel's): its range over the tick is ticks, not
    dollars; its ATR times 1000 is a contract's dollars and over 1000 nothing named."""
    ranges = _daily_ranges("CL", sample_settings, 2025)
    query = {
        "session": "ETH",
        "from": "daily",
        "period": "2025",
        "map": {"t": f"range / {CL_TICK}"},
        "select": [
            "mean(t) as avg_ticks",
            f"mean(range * {CL_POINT_VALUE}) as pnl",
            "mean(range) as avg_range",
            "mean(range / 1000) as k",
        ],
    }
    result = ask(query, sample_settings, "CL")
    assert result.summary.values["avg_ticks"] == pytest.approx((ranges / CL_TICK).mean())
    units = {name: column_unit(name, "daily", result.query) for name in result.summary.values}
    assert units == {"avg_ticks": "ticks", "pnl": "dollars", "avg_range": "points", "k": None}
    head = chart_headline(result, "en")
    assert head is not None and "avg_ticks = " in head
    assert head.split("avg_ticks = ")[1].split(" · ")[0].endswith("ticks"), head
