"""Charts of the p25 testers' queries: a year written as a label, a few picked weeks counted,
a list sorted by its date drawn in time order, and CL's moves in dollars. Expected values come
from DuckDB over the sample's minute bars (the ``days`` fixture), never from the engine."""

from __future__ import annotations

import io
import re

import duckdb
import numpy as np
import pandas as pd
import pytest
from engine_results import RTH, bar_heights, figure, run
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.text import Text

from barb import execute
from barb.charts import chart_headline
from barb.data.sample import write_samples
from barb.data.store import data_path
from barb.export import csv_bytes

pytestmark = pytest.mark.slow


def legend_texts(fig: Figure) -> list[str]:
    return [t.get_text() for legend in fig.findobj(Legend) for t in legend.get_texts()]


# --- A1: a year is a label, not a number with a thousands separator ------------------------


def test_the_year_of_the_widest_day_is_written_as_a_year(sample_settings, days) -> None:
    """``arg_max(year(), range)`` read "yr = 2,024" (Russian "2 024")."""
    query = {
        "session": "RTH",
        "from": "daily",
        "select": ["max(range) as widest", "arg_max(year(), range) as yr"],
    }
    result = run(query, sample_settings)
    ranges = days["high"] - days["low"]
    year = pd.Timestamp(ranges.idxmax()).year
    for language in ("en", "ru"):
        headline = chart_headline(result, language)
        assert headline is not None and headline.endswith(f" · yr = {year}")
    assert f"yr = {year}" in legend_texts(figure(result))


def test_the_year_a_second_stage_picks_from_year_groups_is_a_year(sample_settings, days) -> None:
    """``arg_max(year, n)`` over a first stage grouped by ``year()``: the tester's "in which
    year were there most such days" read "most_year = 2 025" on the chart and its legend."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"up": "close > open"},
        "group_by": "year()",
        "select": "count(up) as n",
        "then": {"select": ["max(n) as most", "arg_max(year, n) as most_year"]},
    }
    result = run(query, sample_settings)
    by_year = (days["close"] > days["open"]).groupby(pd.DatetimeIndex(days.index).year).sum()
    most = int(by_year.max())
    year = int(by_year.idxmax())  # the earliest of a tie, as arg_max takes it
    assert chart_headline(result) == f"most = {most:,} days · most_year = {year}"
    assert chart_headline(result, "ru").endswith(f" · most_year = {year}")
    assert f"most_year = {year}" in legend_texts(figure(result, "ru"))


# --- A2: a few weeks or months a where picked are counted, as a few days are --------------


def period_closes(days: pd.DataFrame, period: str) -> pd.Series:
    """Each week's (labelled by its Monday) or month's last RTH close."""
    dates = pd.DatetimeIndex(days.index)
    if period == "week":
        label = dates - pd.to_timedelta(dates.weekday, unit="D")
    else:
        label = dates.to_period("M").to_timestamp()
    return days["close"].groupby(label).last()


def test_a_few_weeks_a_where_picked_are_counted(sample_settings, days) -> None:
    """The weeks that moved over 1,000 points, up or down: "35 weeks: up 20, no up 15", not
    the last one's change (the tester's weekly MACD crosses read "hist last: 43.0 points")."""
    query = {
        "session": "RTH",
        "from": "weekly",
        "map": {"chg": "close - prev(close)", "up": "chg > 0"},
        "where": "abs(chg) > 1000",
        "select": ["chg", "up"],
    }
    result = run(query, sample_settings)
    chg = period_closes(days, "week").diff()
    picked = chg[chg.abs() > 1000]
    up, down = int((picked > 0).sum()), int((picked < 0).sum())
    assert 2 <= len(picked) <= 60 and up and down
    assert chart_headline(result) == f"{len(picked)} weeks, up: yes {up}, no {down}"
    ru = chart_headline(result, "ru")
    assert ru is not None and ru.startswith(f"{len(picked)} недел")


def test_a_few_months_a_where_picked_are_counted(sample_settings, days) -> None:
    query = {
        "session": "RTH",
        "from": "monthly",
        "map": {"chg": "close - prev(close)"},
        "where": "chg > 1500",
        "select": ["chg"],
    }
    result = run(query, sample_settings)
    chg = period_closes(days, "month").diff()
    count = int((chg > 1500).sum())
    assert 2 <= count <= 60
    assert chart_headline(result) == f"{count} months"
    assert chart_headline(result, "ru") == f"{count} месяцев"


# --- A3: a list sorted by its date is in time order, not a ranking -------------------------


def december_highs(con) -> pd.DataFrame:
    """Each RTH day of December 2025: its high and the first minute of the day that made it."""
    return con.execute(
        f"""
        WITH bars AS (SELECT * FROM nq WHERE {RTH} AND trading_date >= DATE '2025-12-01'
                      AND trading_date <= DATE '2025-12-31'),
             days AS (SELECT trading_date AS d, max(high) AS day_high FROM bars GROUP BY 1)
        SELECT d, day_high, min(minute) AS high_minute
        FROM days JOIN bars ON bars.trading_date = days.d AND bars.high = days.day_high
        GROUP BY d, day_high ORDER BY d
        """
    ).df()


def tick_texts(fig: Figure) -> list[str]:
    bottom = min(fig.axes, key=lambda ax: ax.get_position().y0)
    return [t.get_text() for t in bottom.get_xticklabels() if t.get_text()]


def test_days_sorted_newest_first_are_drawn_in_time_order_not_ranked(sample_settings, con):
    """The tester's "the last 10 days, date desc" was headlined "day_high: #1 2026-01-07"
    (RU "№1"), though another day's high was higher, and its dates numbered "1. … 10."."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025-12",
        "group_by": "date()",
        "select": ["max(high) as day_high"],
        "then": {"sort": "date desc", "limit": 10},
    }
    result = run(query, sample_settings)
    last = december_highs(con).tail(10).reset_index(drop=True)
    high, low = last["day_high"].idxmax(), last["day_high"].idxmin()
    assert last["day_high"].value_counts().max() == 1  # no tie to name
    day = [d.strftime("%Y-%m-%d") for d in pd.to_datetime(last["d"])]
    assert chart_headline(result) == (
        f"day_high: highest {day[high]} {last['day_high'][high]:,.2f}, "
        f"lowest {day[low]} {last['day_high'][low]:,.2f}"
    )
    assert "№" not in (chart_headline(result, "ru") or "")
    fig = figure(result)
    assert tick_texts(fig) == day  # oldest first, unnumbered
    np.testing.assert_allclose(bar_heights(fig.axes[0]), last["day_high"])


def test_the_time_of_each_days_high_is_drawn_on_a_clock(sample_settings, con) -> None:
    """``arg_max(time(), high)`` is text ('09:32'): it was left off the chart, which drew
    only the prices, though the time was what the person asked."""
    query = {
        "session": "RTH",
        "from": "1m",
        "period": "2025-12",
        "group_by": "date()",
        "select": ["arg_max(time(), high) as high_time", "max(high) as day_high"],
        "sort": "date asc",
    }
    result = run(query, sample_settings)
    days = december_highs(con)
    fig = figure(result, "ru")
    # The clock's panel is named with the exchange's zone: "high_time (ET)".
    clock = next(ax for ax in fig.axes if "high_time (ET)" in {t.get_text() for t in ax.texts})
    np.testing.assert_allclose(bar_heights(clock), days["high_minute"])
    ticks = [t.get_text() for t in clock.get_yticklabels() if t.get_text()]
    assert len(ticks) >= 2 and all(re.fullmatch(r"\d\d:00", t) for t in ticks)  # a clock


def test_times_on_moscow_s_clock_reach_the_csv_and_the_chart_as_times(sample_settings, con):
    """ "At what time Moscow is each day's high": the model read "1207 (20:07 MSK)", while the
    CSV held 1207 and the chart drew bars of 1,207 on an axis of numbers. The times are
    pandas' own tz conversion of the first minute of each day's high."""
    query = {
        "session": "RTH",
        "from": "1m",
        "period": "2025-12",
        "map": {"m": "hour('MSK') * 60 + minute('MSK')"},
        "group_by": "date()",
        "select": ["arg_max(m, high) as high_at", "max(high) as day_high"],
        "sort": "date asc",
    }
    result = run(query, sample_settings)
    days = december_highs(con)
    stamps = pd.to_datetime(days["d"]) + pd.to_timedelta(days["high_minute"], unit="min")
    moscow = stamps.dt.tz_localize("America/New_York").dt.tz_convert("Europe/Moscow")
    assert (moscow.dt.date != pd.to_datetime(days["d"]).dt.date).any()  # some past midnight
    expected = list(moscow.dt.strftime("%H:%M"))
    frame = pd.read_csv(io.BytesIO(csv_bytes(result)), dtype=str)
    assert list(frame["high_at_msk"]) == expected  # named with its clock, as the answer
    fig = figure(result, "ru")
    clock = next(ax for ax in fig.axes if "high_at (MSK)" in {t.get_text() for t in ax.texts})
    np.testing.assert_allclose(bar_heights(clock), moscow.dt.hour * 60 + moscow.dt.minute)
    ticks = [t.get_text() for t in clock.get_yticklabels() if t.get_text()]
    assert len(ticks) >= 2 and all(re.fullmatch(r"\d\d:00", t) for t in ticks)  # a clock
    # Their median, as the chart's headline writes it: on Moscow's clock, named so.
    median = {**query, "select": "arg_max(m, high) as high_at", "sort": None}
    median = {k: v for k, v in median.items() if v is not None}
    median["then"] = {"select": "median(high_at) as typical"}
    middle = round(float(np.median(moscow.dt.hour * 60 + moscow.dt.minute)))
    assert chart_headline(run(median, sample_settings)) == (
        f"typical = {middle // 60:02d}:{middle % 60:02d} MSK"
    )


def moscow_high_hours(settings) -> pd.Series:
    """How many 2024 RTH days made their high in each hour (from 09:30), by the hour's start
    on Moscow's clock ('17:30'), most first: pandas over the minute bars, the start converted
    with the tz database."""
    bars = pd.read_parquet(data_path("NQ", settings), columns=["timestamp", "high"])
    bars = bars[bars["timestamp"].dt.year == 2024]
    minute = bars["timestamp"].dt.hour * 60 + bars["timestamp"].dt.minute
    rth = bars[(minute >= 570) & (minute < 1020)]
    start = rth["timestamp"].dt.normalize() + pd.to_timedelta(
        570 + (minute[rth.index] - 570) // 60 * 60, unit="min"
    )
    hours = rth.assign(day=rth["timestamp"].dt.date, start=start)
    hours = hours.groupby(["day", "start"])["high"].max().reset_index()
    tops = hours.loc[hours.groupby("day")["high"].idxmax(), "start"]
    moscow = tops.dt.tz_localize("America/New_York").dt.tz_convert("Europe/Moscow")
    return moscow.dt.strftime("%H:%M").value_counts()


def high_hours_query(clock: str) -> dict:
    return {
        "session": "RTH",
        "from": "1h",
        "period": "2024",
        "group_by": "date()",
        "select": f"arg_max({clock}, high) as high_time",
        "then": {"group_by": "high_time", "select": "count() as days", "sort": "days desc"},
    }


def test_times_read_with_time_moscow_are_named_moscow_s_not_the_exchange_s(
    sample_settings,
) -> None:
    """ "Во сколько обычно хай дня по Москве": ``arg_max(time('Moscow'), high)`` by day, then
    counted by time. The chart's axis said «high_time (ET)» under 17:30 and 16:30, Moscow's
    times, and the CSV's header named no clock."""
    expected = moscow_high_hours(sample_settings)
    result = run(high_hours_query("time('Moscow')"), sample_settings)
    frame = pd.read_csv(io.BytesIO(csv_bytes(result)), dtype=str)
    assert "high_time_moscow" in frame.columns
    counted = dict(zip(frame["high_time_moscow"], frame["days"].astype(int), strict=True))
    assert counted == expected.to_dict()
    fig = figure(result, "ru")
    labels = {ax.get_xlabel() for ax in fig.axes}
    assert "high_time (Moscow)" in labels and "high_time (ET)" not in labels


def test_minutes_on_moscow_s_clock_as_a_key_are_drawn_as_times(sample_settings) -> None:
    """The same question with ``hour('MSK') * 60 + minute('MSK')``: the CSV wrote 16:30,
    but the chart's bars were labelled 990, 1050, … under "high_time", and the headline read
    «чаще всего high_time 990 (67 дней)»."""
    expected = moscow_high_hours(sample_settings)
    result = run(high_hours_query("hour('MSK') * 60 + minute('MSK')"), sample_settings)
    fig = figure(result, "ru")
    [axis] = [ax for ax in fig.axes if ax.get_xlabel()]
    assert axis.get_xlabel() == "high_time (MSK)"
    ticks = [t.get_text() for t in axis.get_xticklabels()]
    assert ticks == list(expected.index)  # most first, as sorted
    np.testing.assert_array_equal(bar_heights(axis), expected.to_numpy())
    top, bottom = expected.index[0], expected.index[-1]
    assert chart_headline(result, language="ru").startswith(
        f"дни: чаще всего {top} (MSK) {expected.iloc[0]} дней, реже всего {bottom} (MSK) "
    )  # the clock named as the axis names it


def test_an_hour_on_moscow_s_clock_as_the_key_is_drawn_as_clock_hours(sample_settings) -> None:
    """ "Average hourly range by Moscow hour": hour('MSK') alone as the key drew a number
    axis (0, 4, 8 …) under «hour("MSK")» and the headline read "hour_msk 22", where hour()
    gets "18:00" ticks under "hour (ET)". The means are pandas' over the minute bars, each
    hour's start converted with the tz database."""
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=["timestamp", "high", "low"])
    bars = bars[bars["timestamp"].dt.year == 2024]
    hours = bars.groupby(bars["timestamp"].dt.floor("h")).agg(
        high=("high", "max"), low=("low", "min")
    )
    moscow = hours.index.tz_localize("America/New_York").tz_convert("Europe/Moscow").hour
    expected = (hours["high"] - hours["low"]).groupby(moscow).mean()
    query = {"session": "ETH", "from": "1h", "period": "2024-01-02:2024-12-31"}
    result = run({**query, "group_by": "hour('MSK')", "select": "mean(range)"}, sample_settings)
    fig = figure(result, "ru")
    [axis] = [ax for ax in fig.axes if ax.get_xlabel()]
    assert axis.get_xlabel() == "час (MSK)"
    ticks = [t.get_text() for t in axis.get_xticklabels() if t.get_text()]
    assert ticks and all(re.fullmatch(r"\d\d:00", t) for t in ticks)
    np.testing.assert_allclose(bar_heights(axis), expected.to_numpy(), rtol=1e-9)
    top = f"{expected.idxmax():02d}:00"
    assert chart_headline(result).startswith(f"average range: highest {top} (MSK) ")


@pytest.mark.parametrize("clock", ["hour('MSK') * 60 + minute('MSK')", "hour() * 60 + minute()"])
def test_query_s_table_writes_minute_keys_as_the_chart_does(sample_settings, clock: str) -> None:
    """/query's table under the chart read 570 and «1 050» (990 on Moscow's clock) beside
    the headline's 09:30: the keys are written as times, on the clock the query read."""
    from barb.charts.grouped import key_words
    from barb.charts.words import words_for

    expected = moscow_high_hours(sample_settings)
    result = run(high_hours_query(clock), sample_settings)
    said = key_words(result, words_for("ru"))["high_time"]
    assert result.table is not None
    written = [said[str(int(v))] for v in result.table["high_time"]]
    if "MSK" in clock:
        assert written == list(expected.index)
    else:  # 09:30 ET is 16:30 or 17:30 in Moscow: the exchange's clock has one 09:30
        assert written[0] == "09:30" and set(written) == {f"{h:02d}:30" for h in range(9, 17)}


def test_a_scope_too_wide_for_a_phone_breaks_between_its_parts(sample_settings) -> None:
    """ "10:00-11:00 Moscow" by weekday in Russian: the scope line ran off the chart at
    «2024-01-02 — 2024-», the period's end lost. Every text stays inside the figure, and
    the period is whole on a line of its own."""
    query = {
        "session": "10:00-11:00 Moscow",
        "from": "daily",
        "period": "2024",
        "map": {"weekday": "dayname()"},
        "group_by": "weekday",
        "select": "mean(range)",
    }
    fig = figure(run(query, sample_settings), "ru")
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    width = fig.get_figwidth() * fig.dpi
    texts = [t for t in fig.texts if t.get_visible() and t.get_text().strip()]
    for text in texts:
        assert text.get_window_extent(renderer).x1 <= width, text.get_text()
    lines = [t.get_text() for t in texts]
    assert "2024-01-02 — 2024-12-31" in lines
    assert "NQ · 10:00-11:00 Europe/Moscow · дневные" in lines


def test_a_filtered_list_sorted_newest_first_is_not_numbered(sample_settings, days) -> None:
    """The wide days of 2025, newest first: a list in time order, whose "1." is no rank."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "where": "range > 400",
        "select": ["range"],
        "sort": "timestamp desc",
        "limit": 8,
    }
    result = run(query, sample_settings)
    year = days.loc["2025-01-01":"2025-12-31"]
    wide = (year["high"] - year["low"])[lambda r: r > 400].iloc[::-1].head(8)
    fig = figure(result)
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert [label.split()[-1] for label in labels] == [
        pd.Timestamp(d).strftime("%Y-%m-%d") for d in wide.index
    ]
    assert not [label for label in labels if re.match(r"\d+\. ", label)]


# --- A4: CL's moves are in dollars, NQ's in points ------------------------------------------

CL_RTH = "minute >= 540 AND minute < 870"  # 09:00-14:30, CL's RTH


def test_cl_moves_are_written_in_dollars(sample_settings) -> None:
    """CL's mean range and close-to-close spread read "1,52 пункта" ("points"): a barrel's
    price moves in dollars."""
    write_samples(["CL"], sample_settings)  # leaves an existing file alone
    con = duckdb.connect()
    try:
        days = con.execute(
            f"""
            SELECT trading_date AS d, max(high) - min(low) AS range,
                   arg_max(close, timestamp) AS close
            FROM read_parquet('{data_path("CL", sample_settings)}')
            WHERE {CL_RTH} AND year(trading_date) = 2025 GROUP BY 1 ORDER BY 1
            """
        ).df()
    finally:
        con.close()
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "map": {"cc": "close - prev(close)"},
        "select": ["mean(range) as avg_range", "std(cc) as sd_cc"],
    }
    result = execute(query, "CL", settings=sample_settings)
    avg = f"{days['range'].mean():.2f}"  # CL's tick: cents
    # The first close-to-close change of 2025 is from 2024's last close, not in this frame.
    assert chart_headline(result).startswith(f"avg_range = {avg} dollars · sd_cc = ")
    ru = chart_headline(result, "ru")
    assert ru.startswith(f"avg_range = {avg.replace('.', ',')} долл. · sd_cc = ")
    assert ru.endswith(" долл.") and "пункт" not in ru
    fig = figure(result, "ru")
    texts = " ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible())
    assert "(доллары)" in texts and "пункт" not in texts
    nq = {"session": "RTH", "from": "daily", "period": "2025", "select": "mean(range) as r"}
    assert chart_headline(run(nq, sample_settings)).endswith(" points")
