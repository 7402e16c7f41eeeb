"""The parabolic SAR, Supertrend, KAMA, HMA, Heikin-Ashi and ffill asked the way a trader asks
them over a period, against TA-Lib or a loop written here over ALL history of daily bars
built by DuckDB from the minute file (not by Barb), then restricted to the period: a period
selects rows, it never cuts the path a stop or an adaptive average has run since the data's
first bar."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import talib
from asking import ask
from supertrend_loop import supertrend

pytestmark = pytest.mark.slow

RTH = "minute >= 570 AND minute < 1020"


@pytest.fixture(scope="module")
def daily(con) -> pd.DataFrame:
    """NQ's RTH daily bars over all history, indexed by trading date."""
    frame = con.execute(
        f"""
        SELECT trading_date AS d, arg_min(open, timestamp) AS open, max(high) AS high,
               min(low) AS low, arg_max(close, timestamp) AS close
        FROM nq WHERE {RTH} GROUP BY 1 ORDER BY 1
        """
    ).df()
    return frame.set_index("d")


def _in(daily: pd.DataFrame, values: np.ndarray, period: str) -> pd.Series:
    return pd.Series(values, index=daily.index).loc[period]


def test_days_of_2024_closing_above_the_parabolic_sar(sample_settings, daily) -> None:
    """ "How many days in 2024 did NQ close above the parabolic SAR?" """
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "where": "close > sar(0.02, 0.2)",
            "select": "count()",
        },
        sample_settings,
    )
    ref = talib.SAR(daily["high"].to_numpy(), daily["low"].to_numpy(), 0.02, 0.2)
    above = daily["close"] > pd.Series(ref, index=daily.index)
    expected = int(above.loc["2024"].sum())
    assert result.summary.value == expected
    # Not every day nor none: the stop flipped inside the year.
    assert 0 < expected < len(daily.loc["2024"])


def test_sar_and_kama_values_in_a_month_are_those_of_all_history(sample_settings, daily) -> None:
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024-03",
            "map": {"s": "sar()", "k": "kama(close, 10)", "w": "wma(close, 20)"},
            "select": ["timestamp", "s", "k", "w"],
        },
        sample_settings,
    )
    high, low, close = (daily[c].to_numpy() for c in ("high", "low", "close"))
    for column, ref in (
        ("s", talib.SAR(high, low)),
        ("k", talib.KAMA(close, 10)),
        ("w", talib.WMA(close, 20)),
    ):
        expected = _in(daily, ref, "2024-03").to_numpy()
        np.testing.assert_allclose(result.table[column].to_numpy(), expected, rtol=0, atol=1e-6)


def _supertrend(daily: pd.DataFrame, n: int, mult: float) -> np.ndarray:
    """TradingView's ta.supertrend(mult, n) on TA-Lib's ATR (Wilder's), as Pine writes it."""
    high, low, close = (daily[c].to_numpy() for c in ("high", "low", "close"))
    return supertrend(high, low, close, talib.ATR(high, low, close, n), mult)


def test_supertrend_uptrend_days_in_2023(sample_settings, daily) -> None:
    """ "Сколько дней в 2023 году NQ был выше Supertrend (10, 3)?" """
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2023",
            "where": "close > supertrend(10, 3)",
            "select": "count()",
        },
        sample_settings,
    )
    line = pd.Series(_supertrend(daily, 10, 3.0), index=daily.index)
    expected = int((daily["close"] > line).loc["2023"].sum())
    assert result.summary.value == expected
    assert 0 < expected < len(daily.loc["2023"])


def test_longest_run_of_green_heikin_ashi_days_in_2024(sample_settings, daily) -> None:
    """ "How many green Heikin-Ashi days in a row at most in 2024?" A run that began in 2023
    counts its 2023 days, as streak() does."""
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "map": {"run": "streak(ha_close() > ha_open())"},
            "select": "max(run)",
        },
        sample_settings,
    )
    o, h, lo, c = (daily[k].tolist() for k in ("open", "high", "low", "close"))
    ha_open, ha_close, runs, run = [], [], [], 0
    for i in range(len(c)):
        ha_close.append((o[i] + h[i] + lo[i] + c[i]) / 4)
        ha_open.append((o[0] + c[0]) / 2 if i == 0 else (ha_open[-1] + ha_close[-2]) / 2)
        run = run + 1 if ha_close[-1] > ha_open[-1] else 0
        runs.append(run)
    expected = pd.Series(runs, index=daily.index).loc["2024"].max()
    assert result.summary.value == expected
    assert expected >= 3


def test_hma_values_in_a_period_are_those_of_all_history(sample_settings, daily) -> None:
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2025-01",
            "map": {"h": "hma(close, 20)"},
            "select": ["timestamp", "h"],
        },
        sample_settings,
    )
    close = daily["close"].to_numpy()
    raw = 2 * talib.WMA(close, 10) - talib.WMA(close, 20)
    expected = _in(daily, talib.WMA(raw, 4), "2025-01").to_numpy()
    np.testing.assert_allclose(result.table["h"].to_numpy(), expected, rtol=0, atol=1e-6)


def test_ffill_carries_a_value_from_before_the_period(sample_settings, daily) -> None:
    """ "The close of the last day with a range over 450 points, on each day of 2024-01":
    the first days of January read one from 2023."""
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024-01",
            "map": {"wide_close": "ffill(if(high - low > 450, close, 0 / 0))"},
            "select": ["timestamp", "wide_close"],
        },
        sample_settings,
    )
    wide = daily["high"] - daily["low"] > 450
    expected = daily["close"].where(wide).ffill().loc["2024-01"]
    np.testing.assert_array_equal(result.table["wide_close"].to_numpy(), expected.to_numpy())
    # The first day of the period was not wide: its value is a 2023 close.
    assert not wide.loc["2024-01-02"] and not np.isnan(expected.iloc[0])


def test_sar_on_5_minute_bars_of_one_day_reads_every_day_before(sample_settings, con) -> None:
    """ "How many 5-minute bars of 2024-03-15's session closed above the SAR?" The stop runs
    over the session's 5m bars chained across all the days before, as on a chart of RTH."""
    result = ask(
        {
            "session": "RTH",
            "from": "5m",
            "period": "2024-03-15",
            "map": {"psar": "sar()"},
            "where": "close > psar",
            "select": "count()",
        },
        sample_settings,
    )
    bars = con.execute(
        f"""
        SELECT trading_date AS d, (minute - 570) // 5 AS slot, max(high) AS high,
               min(low) AS low, arg_max(close, timestamp) AS close
        FROM nq WHERE {RTH} GROUP BY 1, 2 ORDER BY 1, 2
        """
    ).df()
    psar = talib.SAR(bars["high"].to_numpy(), bars["low"].to_numpy(), 0.02, 0.2)
    day = (bars["d"] == pd.Timestamp("2024-03-15")).to_numpy()
    expected = int(((bars["close"].to_numpy() > psar) & day).sum())
    assert result.summary.value == expected
    assert 0 < expected < day.sum() == 90
