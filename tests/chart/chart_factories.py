"""Results built by hand, one per shape the chart draws, without running the engine.

The bars are a seeded random walk shaped like NQ (daily 2008–2026 around 1,800 → 21,000, or
5-minute bars), so the charts look like the real thing and tests stay fast and offline.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

import numpy as np
import pandas as pd

from barb.errors import UnknownColumn
from barb.result import Metadata, Result, Summary, summarize_grouped, summarize_table

Source = Literal["synthetic", "imported"]
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")


def make_bars(
    n: int,
    *,
    freq: str = "B",
    start: str = "2008-01-02",
    price: float = 1800.0,
    seed: int = 1,
) -> pd.DataFrame:
    """OHLCV bars on a log random walk with drift; ``range`` = high - low, as the engine has."""
    rng = np.random.default_rng(seed)
    daily = freq == "B"
    sigma = 0.014 if daily else 0.0012
    drift = np.log(21000 / price) / n if daily else 0.0
    close = price * np.exp(np.cumsum(rng.normal(drift, sigma, n)))
    open_ = np.concatenate(([price], close[:-1])) * np.exp(rng.normal(0, sigma / 3, n))
    spread = np.abs(rng.normal(0, sigma * 0.8, n)) * close
    high = np.maximum(open_, close) + spread * rng.uniform(0.2, 1.0, n)
    low = np.minimum(open_, close) - spread * rng.uniform(0.2, 1.0, n)
    stamps = pd.date_range(start, periods=n, freq=freq if daily else "5min")
    if daily:
        volume = rng.integers(200_000, 900_000, n)
    else:  # busy around the 9:30 open and the 16:00 close, quiet overnight
        hours = stamps.hour + stamps.minute / 60
        profile = 1 + 6 * np.exp(-((hours - 10) ** 2) / 2) + 3 * np.exp(-((hours - 15.5) ** 2))
        volume = (rng.integers(300, 900, n) * profile).astype(np.int64)
    return pd.DataFrame(
        {
            "timestamp": stamps.values.astype("datetime64[ns]"),
            "open": np.round(open_ * 4) / 4,
            "high": np.round(high * 4) / 4,
            "low": np.round(low * 4) / 4,
            "close": np.round(close * 4) / 4,
            "volume": volume,
        }
    ).assign(range=lambda f: f["high"] - f["low"])


def metadata(
    frame: pd.DataFrame,
    *,
    timeframe: str = "daily",
    session: str = "RTH",
    rows_scanned: int | None = None,
    source: Source = "synthetic",
) -> Metadata:
    dates = frame["timestamp"] if "timestamp" in frame.columns else pd.Series([], dtype="M8[ns]")
    return Metadata(
        instrument="NQ",
        session=session,
        timeframe=timeframe,
        period_requested="all",
        period_start=dates.min().date() if len(dates) else dt.date(2008, 1, 2),
        period_end=dates.max().date() if len(dates) else dt.date(2026, 1, 7),
        rows_scanned=rows_scanned if rows_scanned is not None else len(frame),
        rows_matched=len(frame),
        data_source=source,
        data_description="synthetic sample (seeded random walk)",
    )


def with_source(result: Result, source: Source) -> Result:
    """The same result, its data marked as coming from ``source``."""
    assert result.metadata is not None
    meta = result.metadata.model_copy(update={"data_source": source})
    return Result(
        query=result.query,
        summary=result.summary,
        table=result.table,
        source_rows=result.source_rows,
        metadata=meta,
        focus_columns=result.focus_columns,
    )


def daily_bars() -> pd.DataFrame:
    """Every business day from 2008-01-02 to 2026-01-07 (4,700 bars)."""
    return make_bars(len(pd.bdate_range("2008-01-02", "2026-01-07")))


def _grouped(
    table: pd.DataFrame, by: list[str], values: list[str], query: dict[str, Any], bars: pd.DataFrame
) -> Result:
    return Result(
        query=query,
        summary=summarize_grouped(table, by, values),
        table=table,
        metadata=metadata(bars),
        focus_columns=by + values,
    )


def grouped_weekdays() -> Result:
    bars = daily_bars()
    bars["weekday"] = bars["timestamp"].dt.strftime("%a")
    # Grouping sorts keys alphabetically (Fri, Mon, …), as pandas does.
    table = bars.groupby("weekday")["range"].mean().rename("mean_range").reset_index()
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"weekday": "dayname()"},
        "group_by": "weekday",
        "select": "mean(range)",
    }
    return _grouped(table, ["weekday"], ["mean_range"], query, bars)


def grouped_years() -> Result:
    bars = daily_bars()
    bars["year"] = bars["timestamp"].dt.year
    table = (
        bars.groupby("year")
        .agg(mean_range=("range", "mean"), count=("range", "size"))
        .reset_index()
    )
    table = table[table["year"] <= 2025].reset_index(drop=True)  # 18 years
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "year()",
        "select": ["mean(range)", "count()"],
    }
    return _grouped(table, ["year"], ["mean_range", "count"], query, bars)


def grouped_two_keys() -> Result:
    bars = daily_bars()
    bars = bars[bars["timestamp"].dt.year >= 2023].reset_index(drop=True)
    bars["year"] = bars["timestamp"].dt.year
    bars["weekday"] = bars["timestamp"].dt.strftime("%a")
    bars["gap"] = bars["open"] - bars["close"].shift()
    table = bars.groupby(["year", "weekday"])["gap"].mean().rename("mean_gap").reset_index()
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2023:2026",
        "map": {"gap": "open - prev(close)", "weekday": "dayname()"},
        "group_by": ["year()", "weekday"],
        "select": "mean(gap)",
    }
    return _grouped(table, ["year", "weekday"], ["mean_gap"], query, bars)


def grouped_hours() -> Result:
    bars = make_bars(20_000, freq="5min", start="2025-06-01 18:00", price=21000)
    bars["hour"] = bars["timestamp"].dt.hour
    table = bars.groupby("hour")["volume"].mean().rename("mean_volume").reset_index()
    query = {"from": "1h", "group_by": "hour()", "select": "mean(volume)"}
    result = _grouped(table, ["hour"], ["mean_volume"], query, bars)
    assert result.metadata is not None
    result.metadata = result.metadata.model_copy(update={"session": "ETH", "timeframe": "1h"})
    return result


def grouped_by_date() -> Result:
    """One group per trading day: thousands of groups, drawn as a line."""
    bars = daily_bars()
    bars["date"] = bars["timestamp"].dt.strftime("%Y-%m-%d")
    table = bars.groupby("date")["range"].max().rename("max_range").reset_index()
    query = {"session": "RTH", "from": "daily", "group_by": "date", "select": "max(range)"}
    return _grouped(table, ["date"], ["max_range"], query, bars)


def rsi(close: pd.Series, length: int = 14) -> pd.Series:
    change = close.diff()
    gain = change.clip(lower=0).ewm(alpha=1 / length, adjust=False).mean()
    loss = (-change.clip(upper=0)).ewm(alpha=1 / length, adjust=False).mean()
    return 100 - 100 / (1 + gain / loss)


def _table(table: pd.DataFrame, query: dict[str, Any], focus: list[str], meta: Metadata) -> Result:
    return Result(
        query=query,
        summary=summarize_table(table, focus, ["timestamp", *focus]),
        table=table,
        metadata=meta,
        focus_columns=focus,
    )


def table_with_indicator(rows: int = 4_500) -> Result:
    bars = daily_bars().tail(rows).reset_index(drop=True)
    bars["rsi"] = rsi(bars["close"])
    query = {"session": "RTH", "from": "daily", "map": {"rsi": "rsi(close, 14)"}}
    return _table(bars, query, ["rsi"], metadata(bars))


def table_candles_with_average() -> Result:
    bars = daily_bars()
    bars["sma20"] = bars["close"].rolling(20).mean()
    bars["chg_pct"] = bars["close"].pct_change() * 100
    bars = bars.tail(60).reset_index(drop=True)
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "last_60_days",
        "map": {"sma20": "sma(close, 20)", "chg_pct": "(close - prev(close)) / prev(close) * 100"},
    }
    return _table(bars, query, ["sma20", "chg_pct"], metadata(bars))


def table_top5() -> Result:
    bars = daily_bars()
    bars["chg"] = bars["close"].pct_change() * 100
    table = bars.sort_values("chg").head(5).reset_index(drop=True)
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"chg": "(close - prev(close)) / prev(close) * 100"},
        "sort": "chg asc",
        "limit": 5,
    }
    return _table(table, query, ["chg"], metadata(bars))


def table_one_row() -> Result:
    """The latest day with its all-time high and the days since it: one row, no history."""
    bars = daily_bars()
    bars["ath"] = bars["close"].cummax()
    since = np.arange(len(bars)) - np.flatnonzero(bars["close"] >= bars["ath"])[-1]
    table = bars.tail(1)[["timestamp", "close", "ath"]].assign(since=since[-1])
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"ath": "cummax(close)", "since": "bars_since(close >= ath)"},
        "sort": "timestamp desc",
        "limit": 1,
        "select": ["timestamp", "close", "ath", "since"],
    }
    return _table(table.reset_index(drop=True), query, ["close", "ath", "since"], metadata(bars))


def table_filtered_days() -> Result:
    bars = daily_bars()
    bars["change_pct"] = bars["close"].pct_change() * 100
    table = bars[bars["change_pct"] < -3.4].reset_index(drop=True)
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"change_pct": "(close - prev(close)) / prev(close) * 100"},
        "where": "change_pct < -3.4",
    }
    meta = metadata(bars).model_copy(update={"rows_matched": len(table)})
    return _table(table, query, ["change_pct"], meta)


def table_filtered_few() -> Result:
    """A handful of days picked by a where: listed one bar per day, in date order."""
    result = table_filtered_days()
    assert result.table is not None
    table = result.table[result.table["change_pct"] < -4.1].reset_index(drop=True)
    query = {**result.query, "where": "change_pct < -4.1"}
    assert result.metadata is not None
    return _table(table, query, ["change_pct"], result.metadata)


def table_with_events() -> Result:
    """A year of daily bars with FOMC days marked (join without a filter) and an average."""
    bars = daily_bars()
    bars["sma50"] = bars["close"].rolling(50).mean()
    bars = bars[bars["timestamp"].dt.year == 2025].reset_index(drop=True)
    bars["fomc"] = bars.index.isin(range(15, len(bars), 32))
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "join": [{"source": "fomc"}],
        "map": {"sma50": "sma(close, 50)"},
    }
    return _table(bars, query, ["sma50", "fomc"], metadata(bars))


def table_without_time() -> Result:
    """select of plain columns, without timestamp: the values' distribution."""
    bars = daily_bars()
    table = bars[["range"]]
    query = {"session": "RTH", "from": "daily", "select": "range"}
    return _table(table, query, ["range"], metadata(bars))


def scalar_sum() -> Result:
    bars = daily_bars()
    bars = bars[bars["timestamp"].dt.year == 2025].reset_index(drop=True)
    bars["move"] = bars["close"] - bars["open"]
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "map": {"move": "close - open"},
        "select": "sum(move)",
    }
    return Result(
        query=query,
        summary=Summary(type="scalar", value=float(bars["move"].sum()), columns=["sum_move"]),
        source_rows=bars,
        metadata=metadata(bars),
        focus_columns=["move"],
    )


def table_intraday(rows: int = 50_000) -> Result:
    bars = make_bars(rows, freq="5min", start="2025-03-02 18:00", price=19500)
    bars["body"] = bars["close"] - bars["open"]
    query = {"session": "ETH", "from": "5m", "period": "2025", "map": {"body": "close - open"}}
    return _table(bars, query, ["body"], metadata(bars, timeframe="5m", session="ETH"))


def table_rth_intraday(days: int = 5) -> Result:
    """5-minute bars of the regular session only (09:30–16:00 on weekdays), with an average:
    the bars pause every night and every weekend."""
    bars = make_bars(days * 24 * 12, freq="5min", start="2025-03-03 09:30", price=19500)
    stamps = bars["timestamp"]
    minutes = stamps.dt.hour * 60 + stamps.dt.minute
    regular = (minutes >= 9 * 60 + 30) & (minutes < 16 * 60) & (stamps.dt.dayofweek < 5)
    bars = bars[regular].reset_index(drop=True)
    bars["sma20"] = bars["close"].rolling(20).mean()
    query = {"session": "RTH", "from": "5m", "map": {"sma20": "sma(close, 20)"}}
    return _table(bars, query, ["sma20"], metadata(bars, timeframe="5m"))


def scalar_count() -> Result:
    bars = daily_bars()
    bars["gap"] = bars["open"] - bars["close"].shift()
    rows = bars[bars["gap"] > 60].reset_index(drop=True)
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"gap": "open - prev(close)"},
        "where": "gap > 60",
        "select": "count()",
    }
    meta = metadata(bars).model_copy(update={"rows_matched": len(rows)})
    return Result(
        query=query,
        summary=Summary(type="scalar", value=len(rows), columns=["count"]),
        source_rows=rows,
        metadata=meta,
        focus_columns=["gap"],
    )


def scalar_count_short() -> Result:
    """A count in one quarter: too few months for bars per month, so each day is marked."""
    bars = daily_bars()
    bars = bars[bars["timestamp"].between("2025-10-01", "2025-11-28")].reset_index(drop=True)
    rows = bars[bars["close"] > bars["open"]].reset_index(drop=True)
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025-10-01:2025-11-28",
        "where": "close > open",
        "select": "count()",
    }
    meta = metadata(bars).model_copy(update={"rows_matched": len(rows)})
    return Result(
        query=query,
        summary=Summary(type="scalar", value=len(rows), columns=["count"]),
        source_rows=rows,
        metadata=meta,
    )


def scalar_count_intraday() -> Result:
    """5-minute bars counted over a few weeks: bars per trading day."""
    bars = make_bars(6_000, freq="5min", start="2025-11-02 18:00", price=21000)
    # Bars from 18:00 on belong to the next trading date, as CME counts them.
    bars["trading_date"] = (bars["timestamp"] + pd.Timedelta(hours=6)).dt.normalize()
    rows = bars[bars["volume"] > 2_500].reset_index(drop=True)
    query = {"from": "5m", "where": "volume > 2500", "select": "count()"}
    meta = metadata(bars, timeframe="5m", session="ETH")
    return Result(
        query=query,
        summary=Summary(type="scalar", value=len(rows), columns=["count"]),
        source_rows=rows,
        metadata=meta.model_copy(update={"rows_matched": len(rows)}),
    )


def scalar_mean() -> Result:
    bars = daily_bars()
    bars = bars[bars["timestamp"] >= "2020-01-01"].reset_index(drop=True)
    query = {"session": "RTH", "from": "daily", "period": "2020:2026", "select": "mean(range)"}
    return Result(
        query=query,
        summary=Summary(type="scalar", value=float(bars["range"].mean()), columns=["mean_range"]),
        source_rows=bars,
        metadata=metadata(bars),
    )


def dict_result() -> Result:
    bars = daily_bars()
    bars["gap"] = bars["open"] - bars["close"].shift()
    rows = bars[bars["gap"] > 0].reset_index(drop=True)
    values = {
        "count": len(rows),
        "mean_gap": float(rows["gap"].mean()),
        "p90": float(rows["gap"].quantile(0.9)),
    }
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"gap": "open - prev(close)"},
        "where": "gap > 0",
        "select": ["count()", "mean(gap)", "percentile(gap, 90) as p90"],
    }
    meta = metadata(bars).model_copy(update={"rows_matched": len(rows)})
    return Result(
        query=query,
        summary=Summary(type="dict", values=values),
        source_rows=rows,
        metadata=meta,
        focus_columns=["gap"],
    )


def scalar_correlation() -> Result:
    """correlation(on_range, range): the overnight range drives the day's, with noise."""
    bars = daily_bars()
    rng = np.random.default_rng(5)
    bars["on_range"] = (0.6 * bars["range"] + rng.normal(0, 12, len(bars))).round(2)
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"on_range": "session_high('OVERNIGHT') - session_low('OVERNIGHT')"},
        "select": "correlation(on_range, range)",
    }
    value = float(bars["on_range"].corr(bars["range"]))
    return Result(
        query=query,
        summary=Summary(type="scalar", value=value, columns=["correlation_on_range_range"]),
        source_rows=bars,
        metadata=metadata(bars),
        focus_columns=["on_range"],
    )


def scalar_last_rsi() -> Result:
    """ "RSI now": last(rsi14) over the bars behind it."""
    bars = daily_bars().tail(700).reset_index(drop=True)
    bars["rsi14"] = rsi(bars["close"])
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"rsi14": "rsi(close, 14)"},
        "select": "last(rsi14)",
    }
    value = float(bars["rsi14"].iloc[-1])
    return Result(
        query=query,
        summary=Summary(type="scalar", value=value, columns=["last_rsi14"]),
        source_rows=bars,
        metadata=metadata(bars),
        focus_columns=["rsi14"],
    )


def true_range_atr(bars: pd.DataFrame, length: int = 14) -> pd.Series:
    prev_close = bars["close"].shift()
    tr = pd.concat(
        [
            bars["high"] - bars["low"],
            (bars["high"] - prev_close).abs(),
            (bars["low"] - prev_close).abs(),
        ],
        axis=1,
    ).max(axis=1)
    return tr.ewm(alpha=1 / length, adjust=False).mean()


def table_latest_atr() -> Result:
    """ "ATR now" as the example query asks it: the latest bar first, one row, with the bars
    it is the latest of behind it."""
    bars = daily_bars().tail(500).reset_index(drop=True)
    bars["atr14"] = true_range_atr(bars)
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "last_2_years",
        "map": {"atr14": "atr(14)"},
        "sort": "timestamp desc",
        "limit": 1,
    }
    table = bars.iloc[::-1].head(1).reset_index(drop=True)
    result = _table(table, query, ["atr14"], metadata(bars))
    result.source_rows = bars
    return result


def grouped_count_with_empty_years() -> Result:
    """Days with a gap over 120 per year: some years have none, and the table skips them."""
    bars = daily_bars()
    bars["year"] = bars["timestamp"].dt.year
    bars["gap"] = bars["open"] - bars["close"].shift()
    picked = bars[(bars["gap"] > 60) & ~bars["year"].isin([2009, 2010, 2017])]
    table = picked.groupby("year").size().rename("count").reset_index()
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"gap": "open - prev(close)"},
        "where": "gap > 60",
        "group_by": "year()",
        "select": "count()",
    }
    return _grouped(table, ["year"], ["count"], query, bars)


def grouped_time_of_day() -> Result:
    """Mean range by time of day, the key made as minutes of the day (570 = 09:30)."""
    result = table_rth_intraday(days=20)
    assert result.table is not None
    bars = result.table.copy()
    bars["tod"] = bars["timestamp"].dt.hour * 60 + bars["timestamp"].dt.minute
    table = bars.groupby("tod")["range"].mean().rename("mean_range").reset_index()
    query = {
        "session": "RTH",
        "from": "5m",
        "map": {"tod": "hour() * 60 + minute()"},
        "group_by": "tod",
        "select": "mean(range)",
    }
    grouped = _grouped(table, ["tod"], ["mean_range"], query, bars)
    assert grouped.metadata is not None
    grouped.metadata = grouped.metadata.model_copy(update={"timeframe": "5m"})
    return grouped


def error_result() -> Result:
    return Result(
        query={"select": "mean(rnage)"},
        error=UnknownColumn("Unknown column 'rnage'.", step="select", hint="Did you mean 'range'?"),
    )


def empty_table() -> Result:
    bars = daily_bars()
    table = bars.iloc[0:0]
    query = {"session": "RTH", "from": "daily", "where": "range > 100000"}
    meta = metadata(bars).model_copy(update={"rows_matched": 0})
    return _table(table, query, [], meta)


ALL_SHAPES = {
    "grouped_weekdays": grouped_weekdays,
    "grouped_years": grouped_years,
    "grouped_two_keys": grouped_two_keys,
    "grouped_hours": grouped_hours,
    "grouped_by_date": grouped_by_date,
    "table_indicator": table_with_indicator,
    "table_candles": table_candles_with_average,
    "table_top5": table_top5,
    "table_one_row": table_one_row,
    "table_filtered": table_filtered_days,
    "table_filtered_few": table_filtered_few,
    "table_events": table_with_events,
    "table_without_time": table_without_time,
    "table_intraday": table_intraday,
    "table_rth_intraday": table_rth_intraday,
    "scalar_count": scalar_count,
    "scalar_count_short": scalar_count_short,
    "scalar_count_intraday": scalar_count_intraday,
    "scalar_mean": scalar_mean,
    "scalar_sum": scalar_sum,
    "dict": dict_result,
    "scalar_correlation": scalar_correlation,
    "scalar_last": scalar_last_rsi,
    "table_latest": table_latest_atr,
    "grouped_count_gaps": grouped_count_with_empty_years,
    "grouped_time_of_day": grouped_time_of_day,
}
