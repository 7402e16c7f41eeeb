"""The eval set's answers, computed a second way: hand-written pandas and TA-Lib over the raw
minute bars (``minute_bars``), never through Barb's engine.

One function per question id. ``PYTHONPATH=tests:tests/eval python -m reference_answers`` (from
the repository's root: ``tests`` holds the shared ``nyse_holidays``) prints them all and ``…
-m reference_answers --write bot/eval/questions.yaml`` stores them in the question file (after
a question is added or the sample generator changes).
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import talib
from minute_bars import (
    calendar,
    daily,
    in_year,
    intraday,
    minutes,
    session,
    window_daily,
)
from nyse_holidays import NYSE_HOLIDAYS_2024
from pandas.tseries.holiday import USFederalHolidayCalendar
from supertrend_loop import supertrend

Answer = list[float]
ANSWERS: dict[str, Callable[[], Answer]] = {}

# Release dates, transcribed from the project's reference calendars (shared/reference/events,
# built from public sources independently of Barb's own data files).
FOMC_2024 = (
    "2024-01-31 2024-03-20 2024-05-01 2024-06-12 2024-07-31 2024-09-18 2024-11-07 2024-12-18"
)
FOMC_2025 = (
    "2025-01-29 2025-03-19 2025-05-07 2025-06-18 2025-07-30 2025-09-17 2025-10-29 2025-12-10"
)
NFP_2023 = (
    "2023-01-06 2023-02-03 2023-03-10 2023-04-07 2023-05-05 2023-06-02 2023-07-07 2023-08-04 "
    "2023-09-01 2023-10-06 2023-11-03 2023-12-08"
)
# 2009-2012 statements came at 14:15 ET, and at 12:30 on the days of a Chair press
# conference (from April 2011), not at today's 14:00.
FOMC_2009_2012 = (
    "2009-01-28 2009-03-18 2009-04-29 2009-06-24 2009-08-12 2009-09-23 2009-11-04 2009-12-16 "
    "2010-01-27 2010-03-16 2010-04-28 2010-06-23 2010-08-10 2010-09-21 2010-11-03 2010-12-14 "
    "2011-01-26 2011-03-15 2011-04-27 2011-06-22 2011-08-09 2011-09-21 2011-11-02 2011-12-13 "
    "2012-01-25 2012-03-13 2012-04-25 2012-06-20 2012-08-01 2012-09-13 2012-10-24 2012-12-12"
)
PRESS_CONFERENCES_2011_2012 = (
    "2011-04-27 2011-06-22 2011-11-02 2012-01-25 2012-04-25 2012-06-20 2012-09-13 2012-12-12"
)
CPI_2024 = (
    "2024-01-11 2024-02-13 2024-03-12 2024-04-10 2024-05-15 2024-06-12 2024-07-11 2024-08-14 "
    "2024-09-11 2024-10-10 2024-11-13 2024-12-11"
)


def answer(question_id: str) -> Callable[[Callable[[], Answer]], Callable[[], Answer]]:
    def register(fn: Callable[[], Answer]) -> Callable[[], Answer]:
        ANSWERS[question_id] = fn
        return fn

    return register


def dates(text: str) -> pd.DatetimeIndex:
    return pd.DatetimeIndex(text.split())


def on(frame: pd.DataFrame, days: pd.DatetimeIndex) -> pd.DataFrame:
    return frame[frame.index.isin(days)]


def arrays(frame: pd.DataFrame) -> tuple[np.ndarray, ...]:
    return tuple(frame[c].to_numpy(dtype=float) for c in ("high", "low", "close", "volume"))


def count(mask: pd.Series) -> Answer:
    return [float(mask.sum())]


# --- sessions and timeframes ----------------------------------------------------------------


@answer("nq_rth_mean_range")
def _() -> Answer:
    return [daily("NQ", "RTH")["range"].mean()]


@answer("nq_eth_mean_range_2024")
def _() -> Answer:
    return [in_year(daily("NQ", "ETH"), 2024)["range"].mean()]


@answer("nq_overnight_mean_range_2023")
def _() -> Answer:
    return [in_year(daily("NQ", "OVERNIGHT"), 2023)["range"].mean()]


@answer("es_rth_open_mean_range_2025")
def _() -> Answer:
    return [in_year(daily("ES", "RTH_OPEN"), 2025)["range"].mean()]


@answer("cl_rth_mean_range_2022")
def _() -> Answer:
    return [in_year(daily("CL", "RTH"), 2022)["range"].mean()]


@answer("nq_5m_max_range_day")
def _() -> Answer:
    bars = intraday("NQ", "RTH", 5)
    return [bars.loc[bars["tdate"] == "2024-03-15", "range"].max()]


@answer("es_15m_mean_range_2024")
def _() -> Answer:
    bars = intraday("ES", "RTH", 15)
    return [bars.loc[bars["tdate"].dt.year == 2024, "range"].mean()]


@answer("nq_first_30m_bar_range_2024")
def _() -> Answer:
    bars = intraday("NQ", "RTH", 30)
    first = (bars["timestamp"].dt.hour == 9) & (bars["timestamp"].dt.minute == 30)
    return [bars.loc[first & (bars["tdate"].dt.year == 2024), "range"].mean()]


@answer("nq_weekly_mean_range_2024")
def _() -> Answer:
    # Whole weeks only, Monday 2024-01-01 to Friday 2024-12-27: no week is cut by the period.
    days = daily("NQ", "RTH")
    return [calendar(days.loc["2024-01-01":"2024-12-27"], "W")["range"].mean()]


@answer("nq_monthly_max_range_2020")
def _() -> Answer:
    return [calendar(in_year(daily("NQ", "RTH"), 2020), "M")["range"].max()]


@answer("cl_yearly_range_2020")
def _() -> Answer:
    year = in_year(daily("CL", "RTH"), 2020)
    return [year["high"].max() - year["low"].min()]


@answer("es_rth_volume_median_2025")
def _() -> Answer:
    return [in_year(daily("ES", "RTH"), 2025)["volume"].median()]


# --- aggregates, groups, percentiles --------------------------------------------------------


@answer("nq_p90_range_2024")
def _() -> Answer:
    year = in_year(daily("NQ", "RTH"), 2024)
    return [float(len(year)), float(np.percentile(year["range"], 90))]


@answer("nq_p90_range_stock_days_2024")
def _() -> Answer:
    year = in_year(daily("NQ", "RTH"), 2024)
    year = year[year.index.isin(_nyse_days())]  # 252 days: no holiday sessions
    return [float(len(year)), float(np.percentile(year["range"], 90))]


@answer("nq_weekday_range_2024")
def _() -> Answer:
    year = in_year(daily("NQ", "RTH"), 2024)
    return year.groupby(year.index.weekday)["range"].mean().tolist()


@answer("nq_range_by_year_extremes")
def _() -> Answer:
    days = daily("NQ", "RTH")
    by_year = days.groupby(days.index.year)["range"].mean()
    return [by_year.max(), by_year.min()]


@answer("es_up_days_by_month_2024")
def _() -> Answer:
    year = in_year(daily("ES", "RTH"), 2024)
    up = year[year["close"] > year["open"]]
    return [float(up.groupby(up.index.month).size().max())]


@answer("nq_rth_open_to_close_2024")
def _() -> Answer:
    year = in_year(daily("NQ", "RTH"), 2024)
    return [(year["close"] - year["open"]).mean()]


@answer("es_up_days_by_month_stock_days_2024")
def _() -> Answer:
    year = in_year(daily("ES", "RTH"), 2024)
    up = year[(year["close"] > year["open"]) & year.index.isin(_nyse_days())]
    return [float(up.groupby(up.index.month).size().max())]


@answer("nq_cash_open_to_close_2024")
def _() -> Answer:
    # The 09:30 open to the 16:00 cash close, on the stock market's days only.
    year = in_year(daily("NQ", "CASH"), 2024)
    year = year[year.index.isin(_nyse_days())]
    return [(year["close"] - year["open"]).mean()]


@answer("nq_corr_volume_range_2024")
def _() -> Answer:
    year = in_year(daily("NQ", "RTH"), 2024)
    return [float(np.corrcoef(year["volume"].astype(float), year["range"])[0, 1])]


@answer("es_1h_range_by_hour_2024")
def _() -> Answer:
    # Full hours only: RTH's last hourly bar, 16:30-17:00, is half an hour of the thin
    # post-cash trade and would be the narrowest by construction.
    bars = intraday("ES", "RTH", 60)
    start = bars["timestamp"].dt.hour * 60 + bars["timestamp"].dt.minute
    full = (start + 60 <= 17 * 60) & (bars["tdate"].dt.year == 2024)
    by_bar = bars[full].groupby(start[full])["range"].mean()
    return [by_bar.max(), by_bar.min()]


@answer("nq_followup_rth_volume_2025")
def _() -> Answer:
    return [in_year(daily("NQ", "RTH"), 2025)["volume"].mean()]


@answer("nq_std_daily_change_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    change = days["close"].pct_change() * 100
    return [in_year(change.to_frame(), 2024)["close"].std(ddof=1)]


@answer("nq_skew_daily_returns_2024")
def _() -> Answer:
    """pandas' Series.skew(): the bias-corrected sample skewness (G1)."""
    close = daily("NQ", "RTH")["close"]
    return [(close / close.shift() - 1).loc["2024"].skew()]


@answer("nq_big_gaps_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    gap = days["open"] - days["close"].shift(1)
    return count((gap > 50) & (days.index.year == 2024))


@answer("nq_above_sma50_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    sma = days["close"].rolling(50).mean()
    return count((days["close"] > sma) & (days.index.year == 2024))


@answer("es_above_ema200_2022")
def _() -> Answer:
    days = daily("ES", "RTH")
    ema = talib.EMA(days["close"].to_numpy(dtype=float), 200)
    return count((days["close"] < ema) & (days.index.year == 2022))


@answer("nq_range_20d_high_2025")
def _() -> Answer:
    days = daily("NQ", "RTH")
    widest = days["range"].rolling(20).max()
    return count((days["range"] >= widest) & (days.index.year == 2025))


# --- indicators -----------------------------------------------------------------------------


def _with(days: pd.DataFrame, values: np.ndarray) -> pd.Series:
    return pd.Series(values, index=days.index)


@answer("nq_rsi_below_30_2024")
@answer("nq_rsi_below_30_period_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    rsi = _with(days, talib.RSI(days["close"].to_numpy(dtype=float), 14))
    return count((rsi < 30) & (days.index.year == 2024))


@answer("nq_mean_rsi_2025")
def _() -> Answer:
    days = daily("NQ", "RTH")
    rsi = _with(days, talib.RSI(days["close"].to_numpy(dtype=float), 14))
    return [rsi[days.index.year == 2025].mean()]


@answer("es_mean_atr_2024")
def _() -> Answer:
    days = daily("ES", "RTH")
    high, low, close, _ = arrays(days)
    atr = _with(days, talib.ATR(high, low, close, 14))
    return [atr[days.index.year == 2024].mean()]


@answer("cl_macd_positive_2023")
def _() -> Answer:
    days = daily("CL", "RTH")
    _, _, hist = talib.MACD(days["close"].to_numpy(dtype=float), 12, 26, 9)
    return count((_with(days, hist) > 0) & (days.index.year == 2023))


@answer("nq_above_bollinger_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    upper, _, _ = talib.BBANDS(days["close"].to_numpy(dtype=float), 20, 2, 2)
    return count((days["close"] > upper) & (days.index.year == 2024))


@answer("nq_mean_adx_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    high, low, close, _ = arrays(days)
    adx = _with(days, talib.ADX(high, low, close, 14))
    return [adx[days.index.year == 2024].mean()]


@answer("es_stoch_overbought_2025")
def _() -> Answer:
    days = daily("ES", "RTH")
    high, low, close, _ = arrays(days)
    slow_k, _ = talib.STOCH(high, low, close, 14, 3, 0, 3, 0)
    return count((_with(days, slow_k) > 80) & (days.index.year == 2025))


@answer("nq_max_cci_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    high, low, close, _ = arrays(days)
    cci = _with(days, talib.CCI(high, low, close, 20))
    return [cci[days.index.year == 2024].max()]


@answer("nq_mean_mfi_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    high, low, close, volume = arrays(days)
    mfi = _with(days, talib.MFI(high, low, close, volume, 14))
    return [mfi[days.index.year == 2024].mean()]


@answer("nq_above_sar_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    high, low, _, _ = arrays(days)
    psar = _with(days, talib.SAR(high, low, 0.02, 0.2))
    return count((days["close"] > psar) & (days.index.year == 2024))


def _supertrend(days: pd.DataFrame, n: int, mult: float) -> pd.Series:
    """TradingView's ta.supertrend(mult, n) as its Pine reference writes it, on TA-Lib's ATR."""
    high, low, close, _ = arrays(days)
    return _with(days, supertrend(high, low, close, talib.ATR(high, low, close, n), mult))


@answer("es_above_supertrend_2023")
def _() -> Answer:
    days = daily("ES", "RTH")
    return count((days["close"] > _supertrend(days, 10, 3.0)) & (days.index.year == 2023))


@answer("nq_above_kama_2025")
def _() -> Answer:
    days = daily("NQ", "RTH")
    kama = _with(days, talib.KAMA(days["close"].to_numpy(dtype=float), 10))
    return count((days["close"] > kama) & (days.index.year == 2025))


@answer("cl_above_wma_2024")
def _() -> Answer:
    days = daily("CL", "RTH")
    wma = _with(days, talib.WMA(days["close"].to_numpy(dtype=float), 20))
    return count((days["close"] > wma) & (days.index.year == 2024))


@answer("nq_hma_rising_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    close = days["close"].to_numpy(dtype=float)
    hull = _with(days, talib.WMA(2 * talib.WMA(close, 10) - talib.WMA(close, 20), 4))
    return count((hull > hull.shift()) & (days.index.year == 2024))


@answer("nq_green_heikin_ashi_run_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    o, h, lo, c = (days[k].tolist() for k in ("open", "high", "low", "close"))
    ha_open, ha_close, runs, run = [(o[0] + c[0]) / 2], [], [], 0
    for i in range(len(c)):
        ha_close.append((o[i] + h[i] + lo[i] + c[i]) / 4)
        if i:
            ha_open.append((ha_open[-1] + ha_close[-2]) / 2)
        run = run + 1 if ha_close[-1] > ha_open[-1] else 0
        runs.append(run)
    return [float(max(r for r, year in zip(runs, days.index.year, strict=True) if year == 2024))]


@answer("nq_above_last_wide_day_close_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    wide_close = days["close"].where(days["range"] > 450).ffill()
    return count((days["close"] > wide_close.shift()) & (days.index.year == 2024))


# --- events ---------------------------------------------------------------------------------


@answer("nq_fomc_range_2024")
def _() -> Answer:
    days = on(daily("NQ", "RTH"), dates(FOMC_2024))
    return [float(len(days)), days["range"].mean()]


@answer("es_nfp_range_2023")
def _() -> Answer:
    return [on(daily("ES", "RTH"), dates(NFP_2023))["range"].mean()]


@answer("nq_cpi_range_2024")
def _() -> Answer:
    return [on(daily("NQ", "RTH"), dates(CPI_2024))["range"].mean()]


@answer("nq_opex_range_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    chosen = []
    for month in range(1, 13):
        first = dt.date(2024, month, 1)
        friday = first + dt.timedelta(days=(4 - first.weekday()) % 7 + 14)
        # An exchange holiday on the Friday moves expiration to the trading day before.
        chosen.append(days.index[days.index <= pd.Timestamp(friday)][-1])
    return [days.loc[chosen, "range"].mean()]


@answer("cl_eia_range_2024")
def _() -> Answer:
    holidays = set(USFederalHolidayCalendar().holidays("2023-12-25", "2025-01-10").date)
    releases = []
    for wednesday in pd.date_range("2024-01-03", "2024-12-31", freq="7D").date:
        # A federal holiday on the Monday-Wednesday of the week delays it to Thursday.
        late = any(wednesday - dt.timedelta(days=k) in holidays for k in range(3))
        releases.append(wednesday + dt.timedelta(days=1) if late else wednesday)
    return [on(daily("CL", "RTH"), pd.DatetimeIndex(releases))["range"].mean()]


@answer("nq_fomc_hour_after_volume_2024")
def _() -> Answer:
    bars = minutes("NQ")
    # 2024 statements were released at 14:00 ET.
    hour_after = bars["tdate"].isin(dates(FOMC_2024)) & (bars["mod"] // 60 == 14)
    return [bars.loc[hour_after, "volume"].mean()]


# --- patterns -------------------------------------------------------------------------------


def _prev(days: pd.DataFrame) -> pd.DataFrame:
    return days.shift(1)


@answer("nq_inside_days_2024")
@answer("nq_inside_days_period_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    prev = _prev(days)
    inside = (days["high"] < prev["high"]) & (days["low"] > prev["low"])
    return count(inside & (days.index.year == 2024))


@answer("es_outside_days_2023")
def _() -> Answer:
    days = daily("ES", "RTH")
    prev = _prev(days)
    outside = (days["high"] > prev["high"]) & (days["low"] < prev["low"])
    return count(outside & (days.index.year == 2023))


@answer("nq_nr7_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    return count((days["range"] <= days["range"].rolling(7).min()) & (days.index.year == 2024))


@answer("cl_doji_2025")
def _() -> Answer:
    days = daily("CL", "RTH")
    body = (days["close"] - days["open"]).abs()
    doji = (body <= 0.1 * days["range"]) & (days["range"] > 0)
    return count(doji & (days.index.year == 2025))


@answer("nq_hammer_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    body = (days["close"] - days["open"]).abs()
    bottom = days[["open", "close"]].min(axis=1)
    top = days[["open", "close"]].max(axis=1)
    hammer = (
        (days["range"] > 0)
        & (bottom - days["low"] >= 2 * body)
        & (days["high"] - top <= 0.25 * days["range"])
    )
    return count(hammer & (days.index.year == 2024))


@answer("es_bullish_engulfing_2024")
def _() -> Answer:
    days = daily("ES", "RTH")
    prev = _prev(days)
    engulfing = (
        (prev["close"] < prev["open"])
        & (days["close"] > days["open"])
        & (days["open"] <= prev["close"])
        & (days["close"] >= prev["open"])
    )
    return count(engulfing & (days.index.year == 2024))


@answer("nq_gap_up_share_2025")
def _() -> Answer:
    days = daily("NQ", "RTH")
    up = days["open"] > days["close"].shift(1)
    return [up[days.index.year == 2025].mean() * 100]


# --- follow-ups -----------------------------------------------------------------------------


@answer("nq_followup_range_year")
def _() -> Answer:
    return [in_year(daily("NQ", "RTH"), 2023)["range"].mean()]


@answer("nq_followup_inside_days")
def _() -> Answer:
    days = daily("NQ", "RTH")
    prev = _prev(days)
    inside = (days["high"] < prev["high"]) & (days["low"] > prev["low"])
    return count(inside & (days.index.year == 2025))


@answer("es_followup_weekday_fomc")
def _() -> Answer:
    days = on(daily("ES", "RTH"), dates(FOMC_2025))
    return [float(len(days)), days["range"].mean()]


@answer("cl_followup_session")
def _() -> Answer:
    return [in_year(daily("CL", "ETH"), 2024)["range"].mean()]


# --- features being added -------------------------------------------------------------------


@answer("nq_first_open_last_close_2024")
def _() -> Answer:
    year = in_year(daily("NQ", "RTH"), 2024)
    return [year["open"].iloc[0], year["close"].iloc[-1]]


@answer("es_first_last_2025")
def _() -> Answer:
    year = in_year(daily("ES", "RTH"), 2025)
    return [year["close"].iloc[-1] - year["open"].iloc[0]]


@answer("nq_close_on_widest_day_2024")
def _() -> Answer:
    year = in_year(daily("NQ", "RTH"), 2024)
    widest = year["range"].idxmax()  # the first of equal maxima, as arg_max promises
    return [year.loc[widest, "close"], year["range"].max()]


@answer("es_range_on_quietest_day_2024")
def _() -> Answer:
    year = in_year(daily("ES", "RTH"), 2024)
    return [year.loc[year["volume"].idxmin(), "range"]]


@answer("nq_commonest_range_2025")
def _() -> Answer:
    ranges = in_year(daily("NQ", "RTH"), 2025)["range"]
    tens = np.floor(ranges / 10 + 0.5) * 10  # to the nearest 10, halves up (ranges are > 0)
    counts = tens.value_counts(sort=False)  # in the order first seen
    # The commonest; of equally common ones the first in time, as mode() promises.
    return [counts.index[int(np.argmax(counts.to_numpy()))]]


@answer("nq_last_30_bars_range")
def _() -> Answer:
    return [daily("NQ", "RTH")["range"].tail(30).mean()]


@answer("nq_last_12_5m_bars_volume")
def _() -> Answer:
    # The last hour into the 16:00 cash close (15:00-16:00), not RTH's post-cash hour.
    return [intraday("NQ", "CASH", 5)["volume"].tail(12).mean()]


@answer("es_range_asked_from_nq_chat")
def _() -> Answer:
    return [in_year(daily("ES", "RTH"), 2024)["range"].mean()]


@answer("cl_range_asked_from_nq_chat")
def _() -> Answer:
    return [in_year(daily("CL", "RTH"), 2025)["range"].mean()]


def _nq_with_es(year: int) -> pd.DataFrame:
    nq = in_year(daily("NQ", "RTH"), year)
    return nq.join(daily("ES", "RTH")[["close"]].rename(columns={"close": "es_close"}))


@answer("nq_es_close_correlation_2024")
def _() -> Answer:
    both = _nq_with_es(2024).dropna(subset=["es_close"])
    return [float(np.corrcoef(both["close"], both["es_close"])[0, 1])]


@answer("nq_es_ratio_2025")
def _() -> Answer:
    both = _nq_with_es(2025)
    return [(both["close"] / both["es_close"]).mean()]


@answer("cl_overnight_vs_nq_rth_2024")
def _() -> Answer:
    # CL's night (18:00 the evening before to 09:00) beside NQ's RTH day, on the dates both
    # traded.
    nq = in_year(daily("NQ", "RTH"), 2024)
    cl = window_daily("CL", "18:00", "09:00")
    both = nq.join(cl, rsuffix="_cl", how="inner")
    nq_move = both["close"] / both["open"] - 1
    cl_move = both["close_cl"] / both["open_cl"] - 1
    return [float(np.corrcoef(cl_move, nq_move)[0, 1])]


@answer("es_rth_after_cl_night_drop")
def _() -> Answer:
    cl = window_daily("CL", "18:00", "09:00")
    both = cl.join(daily("ES", "RTH"), rsuffix="_es", how="inner")
    drop = both[both["close"] / both["open"] - 1 < -0.02]
    return [float(len(drop)), ((drop["close_es"] / drop["open_es"] - 1) * 100).mean()]


@answer("nq_first_15_minutes_range_2024")
def _() -> Answer:
    return [in_year(window_daily("NQ", "09:30", "09:45"), 2024)["range"].mean()]


@answer("es_evening_window_range_2024")
def _() -> Answer:
    return [in_year(window_daily("ES", "20:00", "02:00"), 2024)["range"].mean()]


def _whole_years(days: pd.DataFrame) -> pd.DataFrame:
    """2008-2025: the data's 2026 is a few January days, no year yet."""
    return days[(days.index.year >= 2008) & (days.index.year <= 2025)]


@answer("nq_mean_yearly_high")
def _() -> Answer:
    days = _whole_years(daily("NQ", "RTH"))
    return [days.groupby(days.index.year)["close"].max().mean()]


@answer("nq_years_range_over_150")
def _() -> Answer:
    days = _whole_years(daily("NQ", "RTH"))
    by_year = days.groupby(days.index.year)["range"].mean()
    return [float((by_year > 150).sum())]


# --- running totals, ranks, unknown values and open bars -------------------------------------


@answer("nq_max_drawdown_2023")
def _() -> Answer:
    close = in_year(daily("NQ", "RTH"), 2023)["close"]
    peak = close.cummax()  # a 2023 high: the running maximum starts with the year
    return [((close / peak - 1) * 100).min()]


@answer("nq_top_decile_range_days_2025")
def _() -> Answer:
    ranges = in_year(daily("NQ", "RTH"), 2025)["range"].to_numpy()
    # A day's percentile rank: the share of the year's days whose range is at most its own.
    share_below = np.array([(ranges <= r).mean() * 100 for r in ranges])
    return [float((share_below >= 90).sum())]


@answer("es_share_above_sma50_2008")
def _() -> Answer:
    close = daily("ES", "RTH")["close"]
    sma = close.rolling(50).mean()
    days = (close.index.year == 2008) & sma.notna().to_numpy()  # days with no SMA yet: neither
    return [float((close[days] > sma[days]).mean())]


@answer("nq_hourly_bar_of_the_high_2025")
def _() -> Answer:
    bars = intraday("NQ", "RTH", 60)
    bars = bars[bars["tdate"].dt.year == 2025]
    # The earliest bar holding each day's high: idxmax gives the first of equal values.
    top = bars.loc[bars.groupby("tdate")["high"].idxmax(), "timestamp"].dt.strftime("%H:%M")
    return [float(top.value_counts().max())]


@answer("nq_mean_yearly_return_whole_years")
def _() -> Answer:
    days = daily("NQ", "RTH")
    closes = days.groupby(days.index.year)["close"].last()
    # The data's last year has a few January days: it is no year yet.
    assert days.index[-1].month == 1
    return [(closes.iloc[:-1].pct_change() * 100).mean()]


@answer("nq_weekday_of_the_weeks_high_2024")
def _() -> Answer:
    days = in_year(daily("NQ", "RTH"), 2024)
    monday = days.index - pd.to_timedelta(days.index.weekday, unit="D")
    # The earliest day holding each week's high: idxmax takes the first of equal values.
    top = days.groupby(monday)["high"].idxmax()
    return [float(pd.Series(top.dt.weekday).value_counts().max())]


@answer("nq_hour_after_cpi_2024")
def _() -> Answer:
    return [
        on(in_year(window_daily("NQ", "08:30", "09:30"), 2024), dates(CPI_2024))["range"].mean()
    ]


@answer("cl_opening_range_breakout")
def _() -> Answer:
    rth = daily("CL", "RTH")
    # CL's pit session opens at 09:00: its 15-minute opening range, one row per RTH day.
    opening = window_daily("CL", "09:00", "09:15").reindex(rth.index)
    known = opening["high"].notna()
    return [(rth["high"] > opening["high"])[known].mean()]


@answer("nq_followup_adx_over_40_per_year")
def _() -> Answer:
    days = daily("NQ", "RTH")
    high, low, close, _ = arrays(days)
    adx = _with(days, talib.ADX(high, low, close, 14))
    years = days.index.year
    inside = (years >= 2008) & (years <= 2025)
    # Every year counts, those without a day above 40 as 0.
    return [(adx > 40)[inside].groupby(years[inside]).sum().mean()]


@answer("nq_relative_volume_last_10_days")
def _() -> Answer:
    # Each day's volume over the mean of the 20 days before it: the first of the ten reads
    # 20 days before the period, as a map column built on another must.
    volume = daily("NQ", "RTH")["volume"].astype(float)
    relative = volume / volume.rolling(20).mean().shift()
    return [relative.iloc[-10:].mean()]


@answer("nq_half_hour_after_fomc_2009_2012")
def _() -> Answer:
    bars = minutes("NQ")
    stamps = bars["timestamp"].to_numpy(dtype="datetime64[ns]")
    press = set(dates(PRESS_CONFERENCES_2011_2012))
    ranges = []
    for day in dates(FOMC_2009_2012):
        start = day + pd.Timedelta("12:30:00" if day in press else "14:15:00")
        inside = (stamps >= start.to_datetime64()) & (
            stamps < (start + pd.Timedelta(minutes=30)).to_datetime64()
        )
        ranges.append(bars["high"][inside].max() - bars["low"][inside].min())
    return [float(np.mean(ranges))]


@answer("nq_drawdown_within_each_year")
def _() -> Answer:
    # Each year's worst close against the highest close so far that year, averaged.
    close = daily("NQ", "RTH")["close"]
    close = close[(close.index.year >= 2009) & (close.index.year <= 2025)]
    years = close.index.year
    drawdown = (close / close.groupby(years).cummax() - 1) * 100
    return [drawdown.groupby(years).min().mean()]


@answer("es_cagr_since_2010")
def _() -> Answer:
    # Compounded yearly over calendar days, from 2009's last close to the data's last close.
    close = daily("ES", "RTH")["close"]
    start = close[close.index.year <= 2009].iloc[-1:]
    years = (close.index[-1] - start.index[0]).days / 365.25
    return [((close.iloc[-1] / start.iloc[0]) ** (1 / years) - 1) * 100]


@answer("nq_holiday_sessions_2024")
def _() -> Answer:
    traded = set(daily("NQ", "ETH").index)
    return [sum(day in traded for day in pd.DatetimeIndex(NYSE_HOLIDAYS_2024))]


@answer("nq_turn_of_month_return")
def _() -> Answer:
    # Lakonishok and Smidt's window on the stock market's days (NYSE's calendar): a month's
    # last NYSE day and the next month's first three, 2010-2025. Each day's RTH close against
    # the previous NYSE day's: the futures' holiday sessions are neither counted nor used.
    close = daily("NQ", "RTH")["close"]
    close = close[close.index.isin(_nyse_days())]
    days = pd.Series(close.index)
    month = days.dt.to_period("M")
    number = days.groupby(month).cumcount() + 1
    left = days.groupby(month).cumcount(ascending=False)
    turn = ((number <= 3) | (left == 0)).to_numpy()
    returns = (close / close.shift() - 1) * 100
    years = close.index.year
    return [returns[turn & (years >= 2010) & (years <= 2025)].mean()]


def _nyse_days() -> pd.DatetimeIndex:
    """The days the NYSE was open, 2008 to the data's end, from pandas_market_calendars."""
    import pandas_market_calendars as mcal

    return mcal.get_calendar("NYSE").valid_days("2007-12-01", "2026-01-31").tz_localize(None)


def _return_before_holidays(session_name: str) -> Answer:
    # NYSE open days whose next weekday the NYSE was shut (Christmas Eve, the Friday before
    # MLK Day…); the session's close-to-close returns, 2010-2025.
    open_days = _nyse_days()
    shut = pd.bdate_range(open_days[0], open_days[-1]).difference(open_days)
    close = daily("NQ", session_name)["close"]
    returns = (close / close.shift() - 1) * 100
    days = returns.index
    eve = days.isin(open_days) & (days + pd.offsets.BDay(1)).isin(shut)
    # The day before each of them was a stock-market day too: no holiday session in between.
    assert close.index[np.flatnonzero(eve) - 1].isin(open_days).all()
    return [returns[eve & (days.year >= 2010) & (days.year <= 2025)].mean()]


@answer("nq_return_before_holidays")
def _() -> Answer:
    return _return_before_holidays("RTH")


@answer("nq_return_before_holidays_cash_close")
def _() -> Answer:
    return _return_before_holidays("CASH")


@answer("nq_beta_to_es_2024")
def _() -> Answer:
    both = pd.concat([daily("NQ", "RTH")["close"], daily("ES", "RTH")["close"]], axis=1).dropna()
    returns = (both / both.shift() - 1).loc["2024"]
    nq, es = returns.iloc[:, 0].to_numpy(), returns.iloc[:, 1].to_numpy()
    return [np.cov(nq, es, ddof=1)[0, 1] / np.var(es, ddof=1)]


@answer("nq_days_down_1_to_1_5_pct_2024")
def _() -> Answer:
    close = daily("NQ", "RTH")["close"]
    returns = ((close / close.shift() - 1) * 100).loc["2024"]
    return count((returns >= -1.5) & (returns < -1.0))


@answer("nq_most_common_return_bucket_share_2024")
def _() -> Answer:
    """Days per 1% bucket of the daily return; the largest bucket's share of all of them."""
    close = daily("NQ", "RTH")["close"]
    returns = ((close / close.shift() - 1) * 100).loc["2024"].dropna()
    days = pd.Series(np.floor(np.round(returns.to_numpy(), 9))).value_counts()
    return [days.max() / days.sum() * 100]


@answer("nq_last_whole_week_return")
def _() -> Answer:
    """The week before the one the data ends in (it ends midweek), close to close."""
    days = daily("NQ", "RTH")
    weeks = calendar(days, "W")["close"]
    last_day = days.index[-1]
    whole = weeks[weeks.index < last_day - pd.Timedelta(days=last_day.weekday())]
    return [(whole.iloc[-1] / whole.iloc[-2] - 1) * 100]


# --- daily values on intraday bars ----------------------------------------------------------


@answer("nq_daily_atr_stop_or_target_first_2025")
def _() -> Answer:
    # TA-Lib's ATR(14) over every RTH day, as of the day before; each 2025 RTH day's first
    # minute whose low reaches open - ATR (the stop) or whose high reaches open + ATR (the
    # target); a minute that reaches both counts as the stop.
    days = daily("NQ", "RTH")
    atr = pd.Series(
        talib.ATR(*(days[c].to_numpy(dtype=float) for c in ("high", "low", "close")), 14),
        index=days.index,
    ).shift(1)
    stops, targets, total = 0, 0, 0
    rth = session("NQ", "RTH")
    for day, bars in rth[rth["tdate"].dt.year == 2025].groupby("tdate", sort=True):
        opened, size = bars["open"].iloc[0], atr[day]
        stop = np.flatnonzero(bars["low"].to_numpy() <= opened - size)
        target = np.flatnonzero(bars["high"].to_numpy() >= opened + size)
        first_stop = stop[0] if len(stop) else np.inf
        first_target = target[0] if len(target) else np.inf
        stops += bool(len(stop)) and first_stop <= first_target
        targets += first_target < first_stop
        total += 1
    return [stops / total, targets / total]


# --- last week's levels on daily bars ------------------------------------------------------


@answer("nq_first_weekday_above_last_week_high_2021")
def _() -> Answer:
    # Each RTH week's high (weeks from Monday, by trading date), the week before's on each
    # day of 2021; per week the first day whose high is above it: Mondays, and weeks with none.
    days = daily("NQ", "RTH")
    monday = days.index - pd.to_timedelta(days.index.weekday, unit="D")
    last_week = calendar(days, "W")["high"].shift(1).reindex(monday).to_numpy()
    rows = pd.DataFrame(
        {"week": monday, "weekday": days.index.weekday, "above": days["high"] > last_week}
    )[days.index.year == 2021]
    first = rows[rows["above"]].groupby("week")["weekday"].first()
    return [float((first == 0).sum()), float(rows["week"].nunique() - len(first))]


# --- the trading day's structure -----------------------------------------------------------


@answer("nq_orb30_close_beyond")
def _() -> Answer:
    # The first 30 minutes' high and low against the RTH close (17:00), every RTH day.
    rth = daily("NQ", "RTH")
    opening = window_daily("NQ", "09:30", "10:00").reindex(rth.index)
    beyond = (rth["close"] > opening["high"]) | (rth["close"] < opening["low"])
    return [beyond.mean()]


@answer("nq_gap_up_filled_first_hour_2023")
def _() -> Answer:
    # Gap from the previous RTH close (the one before 2023-01-03 is 2022's last), filled when
    # the first hour (09:30-10:30) trades back down to it.
    rth = daily("NQ", "RTH")
    before = rth["close"].shift()
    first_hour = daily("NQ", "RTH_OPEN").reindex(rth.index)
    gap_up = ((rth["open"] - before) / before * 100 > 0.5) & (rth.index.year == 2023)
    filled = first_hour["low"] <= before
    return [float(gap_up.sum()), float((gap_up & filled).sum())]


@answer("es_high_after_15_full_days")
def _() -> Answer:
    # Full days: the trading date's last minute bar opens at 16:59 (an early close ends
    # before). The high's minute is its first, as the earliest of tied highs.
    bars = minutes("ES")
    last = bars.groupby("tdate")["mod"].last()
    full = last.index[last == 16 * 60 + 59]
    rth = session("ES", "RTH")
    rth = rth[rth["tdate"].isin(full)]
    at = rth.loc[rth.groupby("tdate")["high"].idxmax(), "mod"]
    return [(at >= 15 * 60).mean()]


@answer("cl_pit_share_of_day_volume")
def _() -> Answer:
    eth, pit = daily("CL", "ETH"), daily("CL", "RTH")
    return [pit["volume"].sum() / eth["volume"].sum() * 100]


# --- plain trader questions (gap fills by size, streaks, volume shares, limit-size moves) ---


@answer("nq_gap_fill_share_by_size")
def _() -> Answer:
    # The RTH open's gap from the previous RTH close, either way; filled when the session
    # trades back to that close (low for a gap up, high for a gap down).
    rth = daily("NQ", "RTH")
    before = rth["close"].shift()
    gap = (rth["open"] - before) / before * 100
    filled = np.where(gap > 0, rth["low"] <= before, rth["high"] >= before)
    size = gap.abs()
    small, big = (size >= 0.25) & (size < 0.5), size >= 1
    return [filled[small].mean() * 100, filled[big].mean() * 100]


@answer("nq_days_since_3pct_drop")
def _() -> Answer:
    # RTH closes; the last day down 3% or more from the previous close, counted in trading
    # days to the data's last.
    close = daily("NQ", "RTH")["close"]
    down = (close / close.shift() - 1) * 100 <= -3
    return [float(len(close) - 1 - np.flatnonzero(down.to_numpy())[-1])]


@answer("nq_after_three_up_closes")
def _() -> Answer:
    # Runs of closes above the previous close; days ending a run of exactly three, and the
    # share of them (with a next day) whose next close is higher.
    close = daily("NQ", "RTH")["close"]
    up = close > close.shift()
    run = up.groupby((~up).cumsum()).cumsum()
    third = run == 3
    next_up = (close.shift(-1) > close)[third & close.shift(-1).notna()]
    return [float(third.sum()), next_up.mean() * 100]


@answer("nq_first_hour_volume_share")
def _() -> Answer:
    rth, first = daily("NQ", "RTH"), daily("NQ", "RTH_OPEN")
    return [first["volume"].sum() / rth["volume"].sum() * 100]


@answer("nq_overnight_to_rth_range_median")
def _() -> Answer:
    rth = daily("NQ", "RTH")
    night = daily("NQ", "OVERNIGHT").reindex(rth.index)
    return [float((night["range"] / rth["range"]).median())]


@answer("nq_falls_7pct_below_cash_close")
def _() -> Answer:
    # Each ETH day's low against the 16:00 cash close one trading date earlier.
    eth = daily("NQ", "ETH")
    cash = daily("NQ", "CASH")["close"].reindex(eth.index).shift()
    return count((eth["low"] / cash - 1) * 100 <= -7)


# --- plain questions, round 5 ------------------------------------------------------------------

# CPI releases of 2008-2009 (08:30 ET), from BLS's news-release archive; the project's
# reference calendar starts in 2010. Checked one by one against the dated releases for
# 2008-03-14, 2008-04-16, 2008-06-13, 2008-07-16, 2008-10-16, 2009-01-16, 2009-03-18,
# 2009-06-17, 2009-10-15 and 2009-11-18.
CPI_2008_2009 = (
    "2008-01-16 2008-02-20 2008-03-14 2008-04-16 2008-05-14 2008-06-13 2008-07-16 2008-08-14 "
    "2008-09-16 2008-10-16 2008-11-19 2008-12-16 2009-01-16 2009-02-20 2009-03-18 2009-04-15 "
    "2009-05-15 2009-06-17 2009-07-15 2009-08-14 2009-09-16 2009-10-15 2009-11-18 2009-12-16"
)
NFP_2022 = (
    "2022-01-07 2022-02-04 2022-03-04 2022-04-01 2022-05-06 2022-06-03 2022-07-08 2022-08-05 "
    "2022-09-02 2022-10-07 2022-11-04 2022-12-02"
)


def runs(mask: pd.Series) -> pd.Series:
    """Consecutive true rows up to each row (0 on a false one), over all history."""
    return mask.groupby((~mask).cumsum()).cumsum()


def pct_change(close: pd.Series) -> pd.Series:
    return (close / close.shift() - 1) * 100


@answer("nq_five_up_closes_in_a_row_2023")
def _() -> Answer:
    close = daily("NQ", "RTH")["close"]
    run = runs(close > close.shift())
    return count((run == 5) & (run.index.year == 2023))


@answer("es_longest_down_run_2022")
def _() -> Answer:
    # A run already going on 2022-01-03 counts its December days too, as the bars show it.
    close = daily("ES", "RTH")["close"]
    return [float(in_year(runs(close < close.shift()).to_frame("run"), 2022)["run"].max())]


@answer("nq_quarterly_mean_range_2020_2024")
def _() -> Answer:
    quarters = calendar(daily("NQ", "RTH"), "Q")
    return [quarters.loc["2020":"2024", "range"].mean()]


@answer("nq_worst_quarter_2022")
def _() -> Answer:
    quarters = calendar(daily("NQ", "RTH"), "Q")
    return [pct_change(quarters["close"]).loc["2022"].min()]


@answer("es_best_year_2010_2025")
def _() -> Answer:
    years = calendar(daily("ES", "RTH"), "Y")
    ret = pct_change(years["close"]).loc["2010":"2025"]
    return [float(ret.idxmax().year), ret.max()]


@answer("nq_p95_range_2023")
def _() -> Answer:
    return [float(np.percentile(in_year(daily("NQ", "RTH"), 2023)["range"], 95))]


@answer("es_p10_daily_return_2022")
def _() -> Answer:
    days = daily("ES", "RTH")
    ret = pct_change(days["close"])  # 2022-01-03 reads 2021's last close
    return [float(np.percentile(ret[days.index.year == 2022], 10))]


@answer("nq_rsi_first_day_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")  # warmed up on every bar since 2008
    rsi = _with(days, talib.RSI(days["close"].to_numpy(dtype=float), 14))
    return [rsi.loc["2024-01-02"]]


@answer("cl_atr_last_day_2023")
def _() -> Answer:
    days = daily("CL", "RTH")
    high, low, close, _ = arrays(days)
    atr = _with(days, talib.ATR(high, low, close, 14))
    return [atr[days.index.year == 2023].iloc[-1]]


@answer("es_crosses_above_sma20_2023")
def _() -> Answer:
    close = daily("ES", "RTH")["close"]
    sma = close.rolling(20).mean()
    cross = (close > sma) & (close.shift() <= sma.shift())
    return count(cross & (close.index.year == 2023))


@answer("nq_last_cash_hour_range_2024")
def _() -> Answer:
    # Early closes have no bar in 15:00-16:00 and are no row.
    return [in_year(window_daily("NQ", "15:00", "16:00"), 2024)["range"].mean()]


@answer("nq_move_after_cash_close_2024")
def _() -> Answer:
    # Days with a post-cash hour only: holidays and early closes end before 16:00.
    post = window_daily("NQ", "16:00", "17:00")
    cash = daily("NQ", "CASH")["close"].reindex(post.index)
    return [in_year((post["close"] - cash).abs().to_frame("move"), 2024)["move"].mean()]


@answer("nq_cash_close_return_stock_days_2024")
def _() -> Answer:
    # From one stock-market close to the next: the futures' holiday sessions (NYSE shut) are
    # dropped before the change is taken, so the day after reads the last stock-day close.
    cash = daily("NQ", "CASH")
    stock_days = cash[~cash.index.isin(pd.DatetimeIndex(NYSE_HOLIDAYS_2024))]
    ret = pct_change(stock_days["close"])
    return [ret[ret.index.year == 2024].mean()]


@answer("es_up_nq_down_days_2024")
def _() -> Answer:
    nq, es = daily("NQ", "RTH"), daily("ES", "RTH")
    both = nq[["close"]].join(es[["close"]].add_prefix("es_"), how="inner")
    nq_chg, es_chg = both["close"].diff(), both["es_close"].diff()
    return count((es_chg > 0) & (nq_chg < 0) & (both.index.year == 2024))


@answer("cl_and_nq_range_pct_2023")
def _() -> Answer:
    # Each in its own RTH (NQ 09:30-17:00, CL 09:00-14:30), on the dates both traded.
    nq, cl = in_year(daily("NQ", "RTH"), 2023), in_year(daily("CL", "RTH"), 2023)
    cl = cl.reindex(nq.index).dropna()
    nq = nq.loc[cl.index]
    return [(nq["range"] / nq["open"]).mean() * 100, (cl["range"] / cl["open"]).mean() * 100]


@answer("nq_followup_gaps_down_half_pct")
def _() -> Answer:
    days = daily("NQ", "RTH")
    gap = (days["open"] / days["close"].shift() - 1) * 100
    return count((gap < -0.5) & (days.index.year == 2023))


@answer("nq_followup_first_hour_mondays_2024")
def _() -> Answer:
    first = in_year(daily("NQ", "RTH_OPEN"), 2024)
    return [first.loc[first.index.weekday == 0, "range"].mean()]


@answer("nq_mean_monthly_widest_day_2023")
def _() -> Answer:
    days = in_year(daily("NQ", "RTH"), 2023)
    return [days.groupby(days.index.month)["range"].max().mean()]


@answer("nq_month_most_inside_days_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    inside = (days["high"] < days["high"].shift()) & (days["low"] > days["low"].shift())
    per_month = inside[days.index.year == 2024].groupby(lambda d: d.month).sum()
    assert (per_month == per_month.max()).sum() == 1  # one month, no tie hidden by limit 1
    return [float(per_month.idxmax()), float(per_month.max())]


@answer("nq_cpi_range_2008_2009")
def _() -> Answer:
    days = on(daily("NQ", "RTH"), dates(CPI_2008_2009))
    return [float(len(days)), days["range"].mean()]


@answer("es_hour_after_nfp_2022")
def _() -> Answer:
    hour = on(window_daily("ES", "08:30", "09:30"), dates(NFP_2022))
    return [float(len(hour)), hour["range"].mean()]


@answer("nq_hour_after_emergency_cut_2008")
def _() -> Answer:
    # The Fed's intermeeting cut was announced at 08:20 ET on 2008-01-22 (a Tuesday, the day
    # after Martin Luther King Day): its first hour is 08:20-09:20.
    bars = minutes("NQ")
    hour = bars[
        (bars["tdate"] == "2008-01-22") & (bars["mod"] >= 8 * 60 + 20) & (bars["mod"] < 9 * 60 + 20)
    ]
    return [hour["high"].max() - hour["low"].min()]


@answer("nq_last_50_bars_high_low")
def _() -> Answer:
    last = daily("NQ", "RTH").iloc[-50:]
    return [last["high"].max(), last["low"].min()]


@answer("cl_outside_up_days_2024")
def _() -> Answer:
    days = daily("CL", "RTH")
    outside = (days["high"] > days["high"].shift()) & (days["low"] < days["low"].shift())
    return count(outside & (days["close"] > days["open"]) & (days.index.year == 2024))


@answer("es_up_weeks_share_2023")
def _() -> Answer:
    # Weeks keyed by their Monday; 2023's first (Jan 3-6) reads the last week of 2022.
    weeks = calendar(daily("ES", "RTH"), "W")
    up = (weeks["close"] > weeks["close"].shift())[weeks.index.year == 2023]
    return [up.mean() * 100, float(len(up))]


@answer("nq_monday_gap_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    gap = (days["open"] - days["close"].shift())[
        (days.index.year == 2024) & (days.index.weekday == 0)
    ]
    return [gap.mean(), float(len(gap))]


NFP_2024 = (
    "2024-01-05 2024-02-02 2024-03-08 2024-04-05 2024-05-03 2024-06-07 2024-07-05 2024-08-02 "
    "2024-09-06 2024-10-04 2024-11-01 2024-12-06"
)


# CPI releases 2015-2024 (120), from the reference calendar.
CPI_2015_2024 = (
    "2015-01-16 2015-02-26 2015-03-24 2015-04-17 2015-05-22 2015-06-18 2015-07-17 2015-08-19 "
    "2015-09-16 2015-10-15 2015-11-17 2015-12-15 2016-01-20 2016-02-19 2016-03-16 2016-04-14 "
    "2016-05-17 2016-06-16 2016-07-15 2016-08-16 2016-09-16 2016-10-18 2016-11-17 2016-12-15 "
    "2017-01-18 2017-02-15 2017-03-15 2017-04-14 2017-05-12 2017-06-14 2017-07-14 2017-08-11 "
    "2017-09-14 2017-10-13 2017-11-15 2017-12-13 2018-01-12 2018-02-14 2018-03-13 2018-04-11 "
    "2018-05-10 2018-06-12 2018-07-12 2018-08-10 2018-09-13 2018-10-11 2018-11-14 2018-12-12 "
    "2019-01-11 2019-02-13 2019-03-12 2019-04-10 2019-05-10 2019-06-12 2019-07-11 2019-08-13 "
    "2019-09-12 2019-10-10 2019-11-13 2019-12-11 2020-01-14 2020-02-13 2020-03-11 2020-04-10 "
    "2020-05-12 2020-06-10 2020-07-14 2020-08-12 2020-09-11 2020-10-13 2020-11-12 2020-12-10 "
    "2021-01-13 2021-02-10 2021-03-10 2021-04-13 2021-05-12 2021-06-10 2021-07-13 2021-08-11 "
    "2021-09-14 2021-10-13 2021-11-10 2021-12-10 2022-01-12 2022-02-10 2022-03-10 2022-04-12 "
    "2022-05-11 2022-06-10 2022-07-13 2022-08-10 2022-09-13 2022-10-13 2022-11-10 2022-12-13 "
    "2023-01-12 2023-02-14 2023-03-14 2023-04-12 2023-05-10 2023-06-13 2023-07-12 2023-08-10 "
    "2023-09-13 2023-10-12 2023-11-14 2023-12-12 2024-01-11 2024-02-13 2024-03-12 2024-04-10 "
    "2024-05-15 2024-06-12 2024-07-11 2024-08-14 2024-09-11 2024-10-10 2024-11-13 2024-12-11"
)
# FOMC statements 2015-2025, the unscheduled ones of March 2020 among them.
FOMC_2015_2025 = (
    "2015-01-28 2015-03-18 2015-04-29 2015-06-17 2015-07-29 2015-09-17 2015-10-28 2015-12-16 "
    "2016-01-27 2016-03-16 2016-04-27 2016-06-15 2016-07-27 2016-09-21 2016-11-02 2016-12-14 "
    "2017-02-01 2017-03-15 2017-05-03 2017-06-14 2017-07-26 2017-09-20 2017-11-01 2017-12-13 "
    "2018-01-31 2018-03-21 2018-05-02 2018-06-13 2018-08-01 2018-09-26 2018-11-08 2018-12-19 "
    "2019-01-30 2019-03-20 2019-05-01 2019-06-19 2019-07-31 2019-09-18 2019-10-30 2019-12-11 "
    "2020-01-29 2020-03-03 2020-03-15 2020-04-29 2020-06-10 2020-07-29 2020-09-16 2020-11-05 "
    "2020-12-16 2021-01-27 2021-03-17 2021-04-28 2021-06-16 2021-07-28 2021-09-22 2021-11-03 "
    "2021-12-15 2022-01-26 2022-03-16 2022-05-04 2022-06-15 2022-07-27 2022-09-21 2022-11-02 "
    "2022-12-14 2023-02-01 2023-03-22 2023-05-03 2023-06-14 2023-07-26 2023-09-20 2023-11-01 "
    "2023-12-13 2024-01-31 2024-03-20 2024-05-01 2024-06-12 2024-07-31 2024-09-18 2024-11-07 "
    "2024-12-18 2025-01-29 2025-03-19 2025-05-07 2025-06-18 2025-07-30 2025-09-17 2025-10-29 "
    "2025-12-10"
)


def _eia_2024() -> pd.DatetimeIndex:
    """2024's EIA petroleum status reports: Wednesdays, a day later after a federal holiday
    early in the week (as cl_eia_range_2024 reads them)."""
    holidays = set(USFederalHolidayCalendar().holidays("2023-12-25", "2025-01-10").date)
    releases = []
    for wednesday in pd.date_range("2024-01-03", "2024-12-31", freq="7D").date:
        late = any(wednesday - dt.timedelta(days=k) in holidays for k in range(3))
        releases.append(wednesday + dt.timedelta(days=1) if late else wednesday)
    return pd.DatetimeIndex(releases)


def _years(frame: pd.DataFrame, first: int, last: int) -> pd.DataFrame:
    return frame[(frame.index.year >= first) & (frame.index.year <= last)]


@answer("nq_monday_after_down_friday")
def _() -> Answer:
    days = daily("NQ", "RTH")
    ret = (days["close"] / days["close"].shift() - 1) * 100
    friday_down = (days["close"] < days["open"]).shift(fill_value=False)
    after_friday = pd.Series(days.index.weekday, index=days.index).shift() == 4
    mondays = (days.index.weekday == 0) & after_friday & friday_down
    picked = _years(ret[mondays].to_frame(), 2015, 2025)["close"]
    return [picked.mean(), float(len(picked))]


@answer("es_first_hour_share_of_day_range_2024")
def _() -> Answer:
    days = in_year(daily("ES", "RTH"), 2024)
    first_hour = window_daily("ES", "09:30", "10:30")["range"].reindex(days.index)
    return [(first_hour / days["range"] * 100).mean()]


@answer("cl_inventory_hour_range_by_weekday_2024")
def _() -> Answer:
    hour = in_year(window_daily("CL", "10:30", "11:30"), 2024)
    by_day = hour.groupby(hour.index.weekday)["range"].mean()
    return [by_day[2], by_day.drop(2).max()]


@answer("nq_month_of_year_returns")
def _() -> Answer:
    months = calendar(daily("NQ", "RTH"), "M")
    ret = (months["close"] / months["close"].shift() - 1) * 100
    by_month = _years(ret.to_frame(), 2008, 2025)["close"]
    means = by_month.groupby(by_month.index.month).mean()
    return [means.max(), means.min()]


@answer("es_nfp_day_volume_2024")
def _() -> Answer:
    volume = in_year(daily("ES", "RTH"), 2024)["volume"]
    released = volume.index.isin(dates(NFP_2024))
    return [volume[released].mean(), volume[~released].mean()]


@answer("nq_longest_up_streak_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    up = days["close"] > days["close"].shift()
    run = up.groupby((~up).cumsum()).cumsum()
    return [float(run[days.index.year == 2024].max())]


@answer("cl_high_in_first_hour_share_2024")
def _() -> Answer:
    days = in_year(daily("CL", "RTH"), 2024)
    first_hour = window_daily("CL", "09:00", "10:00")["high"].reindex(days.index)
    return [(first_hour == days["high"]).mean() * 100]


@answer("nq_up_day_after_up_first_hour_2024")
def _() -> Answer:
    days = in_year(daily("NQ", "RTH"), 2024)
    first_hour = window_daily("NQ", "09:30", "10:30")["close"].reindex(days.index)
    first_up = first_hour > days["open"]
    return [(days["close"] > days["open"])[first_up].mean() * 100, float(first_up.sum())]


@answer("nq_atr_pct_2022")
def _() -> Answer:
    days = daily("NQ", "RTH")
    atr = talib.ATR(days["high"].to_numpy(), days["low"].to_numpy(), days["close"].to_numpy(), 14)
    pct = pd.Series(atr, index=days.index) / days["close"] * 100
    return [pct[days.index.year == 2022].mean()]


@answer("es_close_near_high_2024")
def _() -> Answer:
    days = in_year(daily("ES", "RTH"), 2024)
    return [float((days["close"] >= days["high"] - 0.1 * days["range"]).sum())]


@answer("nq_last_cash_half_hour_move_2024")
def _() -> Answer:
    last = in_year(window_daily("NQ", "15:30", "16:00"), 2024)
    return [(last["close"] - last["open"]).abs().mean()]


@answer("cl_range_by_month_of_year_2015_2024")
def _() -> Answer:
    days = _years(daily("CL", "RTH"), 2015, 2024)
    means = days.groupby(days.index.month)["range"].mean()
    return [means.max(), means.min()]


@answer("es_monday_makes_the_weeks_high")
def _() -> Answer:
    days = _years(daily("ES", "RTH"), 2020, 2024)
    monday = days.index - pd.to_timedelta(days.index.weekday, unit="D")
    highest = days["high"].groupby(monday).idxmax()  # the earliest of tied days
    return [(highest.dt.weekday == 0).mean() * 100]


@answer("cl_eia_wednesday_hour_range_2024")
def _() -> Answer:
    hour = in_year(window_daily("CL", "10:30", "11:30"), 2024)
    picked = hour[hour.index.isin(_eia_2024()) & (hour.index.weekday == 2)]
    return [picked["range"].mean(), float(len(picked))]


@answer("nq_first_trading_day_of_month_return")
def _() -> Answer:
    days = daily("NQ", "ETH")
    ret = (days["close"] / days["close"].shift() - 1) * 100
    dates_ = days.index.to_series()
    first = dates_.groupby(days.index.to_period("M")).transform("min") == dates_
    picked = _years(ret[first].to_frame(), 2015, 2025)["close"]
    return [picked.mean(), float(len(picked))]


def _next_trading(days: pd.DataFrame, released: str) -> pd.DatetimeIndex:
    """The trading dates of ``days`` the releases fall on, one on a day without trading
    counted for the next trading date (FOMC's Sunday 2020-03-15 for Monday 2020-03-16)."""
    stamps = dates(released)
    at = np.searchsorted(days.index.to_numpy(), stamps.to_numpy())
    return pd.DatetimeIndex(days.index[at[at < len(days)]]).unique()


def _returns(first: pd.Series, second: pd.Series) -> pd.DataFrame:
    """Two instruments' close-to-close returns over the dates both traded."""
    both = pd.concat([first.rename("a"), second.rename("b")], axis=1, join="inner")
    return both / both.shift() - 1


def _yearly_correlation(returns: pd.DataFrame, first: int, last: int) -> Answer:
    picked = _years(returns, first, last)
    by_year = picked.groupby(picked.index.year)
    return [float(g["a"].corr(g["b"])) for _, g in by_year]


@answer("nq_es_return_correlation_by_year")
def _() -> Answer:
    returns = _returns(daily("NQ", "RTH")["close"], daily("ES", "RTH")["close"])
    return _yearly_correlation(returns, 2020, 2024)


@answer("es_cl_return_correlation_by_year")
def _() -> Answer:
    returns = _returns(daily("ES", "RTH")["close"], daily("CL", "RTH")["close"])
    return _yearly_correlation(returns, 2018, 2022)


@answer("nq_fomc_day_eth_range_2015_2024")
def _() -> Answer:
    days = daily("NQ", "ETH")
    picked = _years(days, 2015, 2024)
    fomc = picked.index.isin(_next_trading(days, FOMC_2015_2025))
    return [picked["range"][~fomc].mean(), picked["range"][fomc].mean(), float(fomc.sum())]


@answer("nq_five_days_after_cpi_2015_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")
    ahead = (days["close"].shift(-5) / days["close"] - 1) * 100
    picked = ahead[ahead.index.isin(_next_trading(days, CPI_2015_2024))]
    picked = _years(picked.to_frame(), 2015, 2024)["close"]
    return [picked.mean(), (picked > 0).mean() * 100, float(len(picked))]


@answer("nq_pre_open_hour_cpi_2024")
def _() -> Answer:
    hours = window_daily("NQ", "08:00", "09:00")
    released = hours.index.isin(_next_trading(hours, CPI_2015_2024))
    year = hours.index.year == 2024
    return [hours["range"][year & ~released].mean(), hours["range"][year & released].mean()]


@answer("es_day_after_fomc_2015_2025")
def _() -> Answer:
    days = daily("ES", "RTH")
    after = (days["close"].shift(-1) / days["close"] - 1) * 100
    picked = after[after.index.isin(_next_trading(days, FOMC_2015_2025))]
    picked = _years(picked.to_frame(), 2015, 2025)["close"]
    return [picked.mean(), float(len(picked))]


def _week_monday(index: pd.DatetimeIndex) -> pd.DatetimeIndex:
    return index - pd.to_timedelta(index.weekday, unit="D")


@answer("nq_week_of_new_year_2024")
def _() -> Answer:
    # The week of closed Monday 2024-01-01: its four days, 2024-01-02 to 2024-01-05.
    days = daily("NQ", "RTH").loc["2024-01-01":"2024-01-07"]
    assert len(days) == 4
    return [days["volume"].sum(), days["high"].max() - days["low"].min()]


@answer("nq_es_both_up_2024")
def _() -> Answer:
    both = pd.concat({"nq": daily("NQ", "RTH")["close"], "es": daily("ES", "RTH")["close"]}, axis=1)
    both = both.dropna()
    ret = (both / both.shift() - 1) * 100
    picked = ret[(ret["nq"] > 1) & (ret["es"] > 1) & (ret.index.year == 2024)]
    return [float(len(picked)), (picked["nq"] - picked["es"]).mean()]


@answer("nq_evening_window_by_weekday_2024")
def _() -> Answer:
    # 20:00-02:00 crosses midnight: each evening counts for the next trading date.
    nights = in_year(window_daily("NQ", "20:00", "02:00"), 2024)
    by_day = nights["range"].groupby(nights.index.dayofweek)
    means = by_day.mean()
    return [means.max(), means.min(), float(by_day.count()[0])]


@answer("nq_all_up_weeks_2024")
def _() -> Answer:
    days = in_year(daily("NQ", "RTH"), 2024)
    up = (days["close"] > days["open"]).groupby(_week_monday(days.index))
    return [float((up.sum() == up.count()).sum())]


@answer("nq_last_20_days_up")
def _() -> Answer:
    days = daily("NQ", "RTH").tail(20)
    gain = (days["close"] - days["open"])[days["close"] > days["open"]]
    return [float(len(gain)), gain.mean()]


@answer("nq_first_up_day_close_weekly_jan_2024")
def _() -> Answer:
    days = daily("NQ", "RTH").loc["2024-01-01":"2024-01-31"]
    up = days[days["close"] > days["open"]]
    return [float(c) for c in up["close"].groupby(_week_monday(up.index)).first()]


@answer("nq_fomc_rsi_2024")
def _() -> Answer:
    days = daily("NQ", "RTH")  # RSI warms up over all history, not from January 2024
    rsi = pd.Series(talib.RSI(days["close"].to_numpy(dtype=float), 14), index=days.index)
    picked = on(rsi.to_frame("rsi"), dates(FOMC_2024))["rsi"]
    return [picked.mean(), float(len(picked))]


@answer("nq_short_day_hours_2024_07_03")
def _() -> Answer:
    # RTH closed at 13:15 that day: four hourly bars from 09:30, the last 12:30-13:15.
    bars = intraday("NQ", "RTH", 60)
    day = bars[bars["tdate"] == pd.Timestamp("2024-07-03")]
    assert len(day) == 4
    return [float(r) for r in day["range"]]


@answer("nq_then_es_weekly_range_2024")
def _() -> Answer:
    days = daily("ES", "RTH")
    monday = _week_monday(days.index)
    weeks = days.groupby(monday).agg(high=("high", "max"), low=("low", "min"))
    # Weekly bars wholly inside 2024: the week of 2024-12-30 runs into 2025.
    inside = (weeks.index >= "2024-01-01") & (weeks.index + pd.Timedelta(days=6) <= "2024-12-31")
    ranges = (weeks["high"] - weeks["low"])[inside]
    return [ranges.mean(), float(len(ranges))]


def stored(value: float) -> float | int:
    """How an expected number is written into the question file: 7 significant digits."""
    rounded = float(f"{float(value):.7g}")
    return int(rounded) if rounded.is_integer() else rounded


def write_expected(path: Path) -> None:
    """Rewrite each question's ``expected:`` line in ``path`` from the answers above."""
    lines = path.read_text(encoding="utf-8").split("\n")
    current = None
    for number, line in enumerate(lines):
        if line.startswith("- id: "):
            current = line.removeprefix("- id: ").strip()
        elif line.startswith("  expected: ") and current in ANSWERS:
            values = ", ".join(str(stored(v)) for v in ANSWERS[current]())
            lines[number] = f"  expected: [{values}]"
    path.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--write"]:
        write_expected(Path(sys.argv[2]))
    else:
        for question_id, compute in ANSWERS.items():
            print(question_id, [stored(v) for v in compute()])
