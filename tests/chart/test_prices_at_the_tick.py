"""Prices (and points between prices) are written at the instrument's tick on every chart,
as one-row cards already were: grouped bars' labels and their headline rounded NQ's
25,535.25 to "25,535", a ranked list's −1,336.75 points read "−1,337", a value "now" and a
scalar answer lost their cents the same way, and CL's mean close 75.99 read "76.0".
Returns, percents, volumes and counts keep their own formats. Expected values are DuckDB
over the sample's minute bars, written with plain Python formatting."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

import duckdb
import pandas as pd
import pytest
from engine_results import figure, run

from barb import execute
from barb.charts import chart_headline
from barb.data.sample import write_samples
from barb.data.store import data_path
from barb.settings import EngineSettings

pytestmark = pytest.mark.slow

CL_RTH = "minute >= 540 AND minute < 870"  # 09:00-14:30, CL's RTH
_NUMBER = re.compile(r"^[−\d][\d,.\u00a0]*$")


def cents(value: float) -> str:
    """``value`` at two decimals (NQ's 0.25 and CL's 0.01 tick), a half away from zero, with
    thousands separators and a true minus: what an English chart writes."""
    shown = Decimal(str(value)).quantize(Decimal("0.01"), ROUND_HALF_UP)
    return f"{shown:,}".replace("-", "\u2212")


def russian(text: str) -> str:
    """An English number as a Russian chart writes it: ``25 535,25``."""
    return text.replace(",", "\u00a0").replace(".", ",")


def value_labels(result: object, language: str = "en") -> list[str]:
    """The numbers written by the bars of the chart's first panel, left to right."""
    fig = figure(result, language)  # type: ignore[arg-type]
    return [t.get_text() for t in fig.axes[0].texts if _NUMBER.match(t.get_text())]


def test_grouped_prices_and_their_headline_keep_the_tick(sample_settings, days) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2020:2025",
        "group_by": "year()",
        "select": "max(high) as top",
    }
    years = pd.DatetimeIndex(days.index).year
    highs = days["high"][(years >= 2020) & (years <= 2025)]
    expected = highs.groupby(pd.DatetimeIndex(highs.index).year).max()
    texts = [cents(v) for v in expected]
    assert any(not t.endswith(".00") for t in texts)  # off the whole points, or no test
    result = run(query, sample_settings)
    assert value_labels(result) == texts
    assert value_labels(result, "ru") == [russian(t) for t in texts]
    high, low = int(expected.idxmax()), int(expected.idxmin())
    top, bottom = cents(expected.max()), cents(expected.min())
    assert chart_headline(result) == f"top: highest {high} {top}, lowest {low} {bottom}"
    ru = chart_headline(result, "ru") or ""
    assert f"{high} {russian(top)}" in ru and f"{low} {russian(bottom)}" in ru


def test_a_ranked_list_of_changes_keeps_the_tick(sample_settings, days) -> None:
    """Points between closes are on the tick: −1,336.75, not −1,337."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024",
        "map": {"chg": "close - prev(close)"},
        "sort": "chg asc",
        "limit": 5,
        "select": ["chg"],
    }
    chg = days["close"].diff()
    chg = chg[pd.DatetimeIndex(chg.index).year == 2024].sort_values(kind="stable").head(5)
    texts = [cents(v) for v in chg]
    result = run(query, sample_settings)
    fig = figure(result)
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.texts] == texts
    day = pd.Timestamp(chg.index[0]).strftime("%Y-%m-%d")
    assert chart_headline(result) == f"chg: lowest {day} {texts[0]} points"


def test_a_price_now_and_a_scalar_price_keep_the_tick(sample_settings, days) -> None:
    """A 20-day mean close "now", beside its series and in the headline; and a year's high."""
    in_2025 = days[pd.DatetimeIndex(days.index).year == 2025]
    mean = in_2025["close"].rolling(20).mean().iloc[-1]
    day = pd.Timestamp(in_2025.index[-1]).strftime("%Y-%m-%d")
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "map": {"sma": "rolling_mean(close, 20)"},
        "select": "last(sma) as sma_now",
    }
    result = run(query, sample_settings)
    # The period 2025 ended before the data (2026-01-07): its last value, not "now".
    assert chart_headline(result) == f"sma last: {cents(mean)} ({day})"
    assert chart_headline(result, "ru") == f"sma: последнее {russian(cents(mean))} ({day})"
    fig = figure(result)
    marked = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert f"last: {cents(mean)} ({day})" in marked

    high = days["high"][pd.DatetimeIndex(days.index).year == 2020].max()
    query = {"session": "RTH", "from": "daily", "period": "2020", "select": "max(high) as top"}
    assert chart_headline(run(query, sample_settings)) == f"top = {cents(high)}"


def test_cl_mean_closes_keep_its_cents(sample_settings: EngineSettings) -> None:
    """CL's monthly mean close: 75.99, not 76.0 (the chart's one decimal from 10 up)."""
    write_samples(["CL"], sample_settings)  # leaves an existing file alone
    con = duckdb.connect()
    try:
        closes = con.execute(
            f"""
            SELECT trading_date AS d, arg_max(close, timestamp) AS close
            FROM read_parquet('{data_path("CL", sample_settings)}')
            WHERE {CL_RTH} AND year(trading_date) = 2025 GROUP BY 1 ORDER BY 1
            """
        ).df()
    finally:
        con.close()
    means = closes.groupby(pd.DatetimeIndex(closes["d"]).month)["close"].mean()
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "group_by": "month()",
        "select": "mean(close) as avg_close",
    }
    result = execute(query, "CL", settings=sample_settings)
    texts = [cents(v) for v in means]
    assert value_labels(result) == texts
    # One year's months are one stretch each: the headline spans them, lowest to highest.
    head = chart_headline(result) or ""
    assert f" {cents(means.min())} to " in head and f" {cents(means.max())} (" in head


def test_returns_volumes_and_counts_keep_their_own_formats(sample_settings, days) -> None:
    """A mean volume and a count by weekday stay whole numbers; a mean return in percent keeps
    three significant digits, not the tick's two decimals. The weekdays' returns are within
    noise and their volumes are not: the volume leads (p38b Q13), on top."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"ret": "(close / prev(close) - 1) * 100", "weekday": "dayname()"},
        "group_by": "weekday",
        "select": ["mean(ret) as mean_ret", "mean(volume) as vol", "count() as n"],
    }
    result = run(query, sample_settings)
    fig = figure(result)
    assert result.metadata.even_groups == ["mean_ret"] and "vol" in result.metadata.apart_groups
    labels = [[t.get_text() for t in ax.texts if _NUMBER.match(t.get_text())] for ax in fig.axes]
    labels = [labels[1], labels[0], labels[2]]  # mean_ret, vol, n
    weekdays = pd.DatetimeIndex(days.index).dayofweek
    ret = (days["close"] / days["close"].shift() - 1) * 100
    volume = days["volume"].groupby(weekdays).mean()
    counts = days["close"].groupby(weekdays).size()
    assert labels[1] == [f"{round(v):,}" for v in volume]
    assert labels[2] == [f"{v:,}" for v in counts]
    top = ret.groupby(weekdays).mean().abs().max()
    assert 0.1 <= top < 1  # three significant digits: 0.169%
    assert all(re.fullmatch(r"−?0\.\d{3}%", t) for t in labels[0]), labels[0]
    head = chart_headline(result) or ""
    assert re.fullmatch(
        r"vol: highest \w+ [\d,.]+ contracts, lowest \w+ [\d,.]+ contracts", head
    ), head
