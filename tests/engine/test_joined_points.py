"""Points of two joined markets mixed as one scale: "NQ-ES spread on CPI days" written
``(close - open) - (es_close - es_open)`` gave -91.65 points over 2024's CPI days with no
word that NQ's prices are 3.5 times ES's. Checked against pandas over the raw minute files
and the reference event dates (/work/shared/reference is not read by Barb)."""

from __future__ import annotations

import pandas as pd
import pytest
from asking import ask

from barb.data.store import data_path

pytestmark = pytest.mark.slow

RTH = (570, 1020)  # 09:30-17:00, NQ's and ES's RTH
# 2024's CPI releases (BLS schedule), all at 08:30 on a trading day.
CPI_2024 = pd.to_datetime(
    [
        "2024-01-11", "2024-02-13", "2024-03-12", "2024-04-10", "2024-05-15", "2024-06-12",
        "2024-07-11", "2024-08-14", "2024-09-11", "2024-10-10", "2024-11-13", "2024-12-11",
    ]
)  # fmt: skip
WORDS = "mixes NQ's points with ES's"


def _rth(symbol: str, settings) -> pd.DataFrame:
    columns = ["open", "close", "trading_date", "minute"]
    bars = pd.read_parquet(data_path(symbol, settings), columns=columns)
    bars = bars[(bars["minute"] >= RTH[0]) & (bars["minute"] < RTH[1])]
    return bars.groupby("trading_date").agg(open=("open", "first"), close=("close", "last"))


@pytest.fixture(scope="module")
def cpi_days(sample_settings) -> pd.DataFrame:
    both = _rth("NQ", sample_settings).join(_rth("ES", sample_settings), rsuffix="_es")
    return both.loc[CPI_2024]


def _spread(spread: str, settings):
    return ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "join": [{"instrument": "ES"}, {"source": "cpi", "filter": "only"}],
            "map": {"spread": spread},
            "select": ["mean(spread) as spread", "count() as days"],
        },
        settings,
    )


def test_a_spread_of_two_markets_points_says_their_price_levels(sample_settings, cpi_days) -> None:
    result = _spread("(close - open) - (es_close - es_open)", sample_settings)
    points = (cpi_days["close"] - cpi_days["open"]) - (cpi_days["close_es"] - cpi_days["open_es"])
    assert result.summary.values["days"] == len(CPI_2024)
    assert result.summary.values["spread"] == pytest.approx(points.mean())
    nq, es = cpi_days["close"].mean(), cpi_days["close_es"].mean()
    [warning] = [w for w in result.metadata.warnings if WORDS in w]
    assert warning.startswith(
        f"close - open - (es_close - es_open) {WORDS}: over these rows NQ's close averaged "
        f"{nq:,.2f} and ES's {es:,.2f} ({nq / es:.2f} times as high)"
    )
    percent = "(close / open - 1) * 100 - (es_close / es_open - 1) * 100"
    assert warning.endswith(f"To compare the markets use percents: {percent}.")

    # The form it gives compares the moves, and is not warned of.
    again = _spread(percent, sample_settings)
    moves = (cpi_days["close"] / cpi_days["open"] - 1) - (
        cpi_days["close_es"] / cpi_days["open_es"] - 1
    )
    assert again.summary.values["spread"] == pytest.approx(moves.mean() * 100)
    assert not [w for w in again.metadata.warnings if "points with" in w]


def test_two_markets_prices_and_points_compared_in_a_where(sample_settings, cpi_days) -> None:
    prices = _spread("close - es_close", sample_settings)
    [warning] = [w for w in prices.metadata.warnings if "mixes NQ's prices with ES's" in w]
    assert warning.endswith("To compare the markets use their ratio, close / es_close.")

    counted = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "join": [{"instrument": "ES"}, {"source": "cpi", "filter": "only"}],
            "where": "close - open > es_close - es_open",
            "select": "count()",
        },
        sample_settings,
    )
    bigger = (cpi_days["close"] - cpi_days["open"]) > (cpi_days["close_es"] - cpi_days["open_es"])
    assert counted.summary.value == bigger.sum()
    assert [w for w in counted.metadata.warnings if "compares NQ's points with ES's" in w]
