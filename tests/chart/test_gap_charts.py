"""Charts a gap/overnight tester found wrong: weekly bars counted in the year of their label,
times from the 18:00 open read on the clock, Russian names of the engine's keys, aggregates
past the panels named, and the half-hour last bar of an hourly RTH marked. Expected numbers
come from DuckDB or pandas over the same Parquet bars, never the engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_results import bar_heights, figure, run
from matplotlib.text import Text

from barb.charts import chart_headline
from barb.charts.short_bars import short_bar
from barb.charts.time_of_day import time_kind

pytestmark = pytest.mark.slow


def tick_texts(ax, axis: str = "x") -> list[str]:
    labels = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    return [t.get_text() for t in labels if t.get_text()]


# --- 1: a week is counted in the year of its label, its first trading date ---------------------


def test_weekly_bars_per_year_are_counted_by_the_weeks_first_date(sample_settings, days) -> None:
    """Counted by its last day, the week of 2025-12-29 was drawn as a 2026 bar of 1 and 2008
    held 52 weeks, where ``year()`` and the week's label say 53 and no 2026. The share is
    drawn per year, each bar counting the weeks that have a previous week's high."""
    query = {
        "session": "RTH",
        "from": "weekly",
        "map": {"pwh": "prev(high)"},
        "select": ["count()", "mean(high > pwh) as broke_pwh"],
    }
    result = run(query, sample_settings)
    dates = pd.DatetimeIndex(days.index)
    monday = dates - pd.to_timedelta(dates.dayofweek, unit="D")
    weeks = pd.DataFrame({"first": dates, "high": days["high"].to_numpy()}, index=monday)
    weeks = weeks.groupby(level=0).agg(first=("first", "min"), high=("high", "max"))
    assert dates[-1].dayofweek < 4  # the data ends mid-week: that week is left out
    weeks = weeks.iloc[:-1]
    broke = (weeks["high"] > weeks["high"].shift()).astype(float)
    broke = broke.where(weeks["high"].shift().notna())
    year = weeks["first"].dt.year
    assert year.iloc[-1] < dates[-1].year  # no week of the last year is over
    assert (year == 2008).sum() == 53  # by its first date, 2008 holds 53 weeks
    fig = figure(result)
    (ax,) = fig.axes
    np.testing.assert_allclose(bar_heights(ax), broke.groupby(year).mean(), rtol=1e-12)
    counted = [int(t.get_text().split()[0]) for t in ax.texts if t.get_text().endswith(" weeks")]
    assert counted == broke.groupby(year).count().tolist()  # 2008: 52, its first has no prev
    shown = [int(t) for t in tick_texts(ax)]
    assert max(shown) <= year.iloc[-1] and min(shown) >= year.iloc[0]


# --- 2: minutes counted from the 18:00 open are times of day, every statistic on the clock -----

FROM_OPEN = "if(hour() >= 18, hour() * 60 + minute() - 1440, hour() * 60 + minute())"


def clock(minutes: float) -> str:
    whole = round(minutes) % 1440
    return f"{whole // 60:02d}:{whole % 60:02d}"


@pytest.mark.parametrize(
    ("expr", "kind"),
    [
        (FROM_OPEN, "minute"),
        ("if(hour() >= 18, 60 * hour() + minute() - 1440, minute() + hour() * 60)", "minute"),
        ("hour() * 60 + minute() - if(hour() >= 18, 1440, 0)", "minute"),
        ("if(hour() >= 18, hour() * 60 + minute() - 1000, hour() * 60 + minute())", None),
        ("if(hour() >= 18, hour() * 60 + minute() - 1440, hour())", None),
        ("hour() * 60 + minute() - if(hour() >= 18, 1440, 5)", None),
    ],
)
def test_minutes_from_the_evening_open_are_a_time_of_day(expr: str, kind: str | None) -> None:
    query = {"map": {"tm": expr}, "select": "median(tm) as med"}
    assert time_kind("med", query) == kind


def test_times_from_the_open_read_on_the_clock_with_the_mean_beside_them(
    sample_settings, con
) -> None:
    """``med_high_t = −103`` for 22:17; and beside a median of 09:53 the mean read "651,1"."""
    query = {
        "session": "ASIAN",
        "from": "1m",
        "period": "2024-01",
        "map": {"tm": FROM_OPEN},
        "group_by": "date()",
        "select": "arg_max(tm, high) as high_t",
        "then": {"select": ["median(high_t) as med_high_t", "count() as days"]},
    }
    result = run(query, sample_settings)
    # The high's first minute each trading day, 18:00 to 03:00, from the evening's 18:00.
    per_day = con.execute(
        """
        SELECT trading_date, arg_min(tm, (-high, timestamp)) AS high_t FROM (
            SELECT *, CASE WHEN minute >= 1080 THEN minute - 1440 ELSE minute END AS tm
            FROM nq WHERE (minute >= 1080 OR minute < 180)
              AND trading_date >= DATE '2024-01-01' AND trading_date < DATE '2024-02-01')
        GROUP BY 1
        """
    ).df()["high_t"]
    assert (per_day < 0).any()  # highs before midnight: the case that read raw
    fig = figure(result, "ru")
    (ax,) = fig.axes
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    median, mean = per_day.median(), per_day.mean()
    assert f"med_high_t = {clock(median)}" in texts, texts
    assert f"среднее = {clock(mean)}" in texts, texts
    ticks = tick_texts(ax)
    assert ticks and all(len(t) == 5 and t[2] == ":" for t in ticks), ticks
    assert f"med_high_t = {clock(median)}" in (chart_headline(result, "ru") or "")


# --- 3: a Russian chart names the timeframe and the engine's keys in Russian -------------------


def scope_line(fig) -> str:
    (line,) = [t.get_text() for t in fig.texts if t.get_text().startswith("NQ · RTH · ")]
    return line


@pytest.mark.parametrize(
    ("group_by", "query_map", "label", "english"),
    [
        ("year()", {}, "год", "year"),
        ("dayname()", {}, "день недели", "weekday"),
        (["year()", "month()"], {}, "год · месяц", "year · month"),
        # A key the query named for a call is named by the call (p38c: "weekday" in Russian).
        ("weekday", {"weekday": "dayname()"}, "день недели", "weekday"),
        ("wd", {"wd": "dayname()"}, "день недели", "weekday"),
        ("hl", {"hl": "high > 3000"}, "hl", "hl"),  # any other name as written
    ],
)
def test_a_russian_chart_names_the_timeframe_and_the_engines_keys_in_russian(
    sample_settings, group_by, query_map: dict, label: str, english: str
) -> None:
    """ "NQ · RTH · daily" and an axis "year" in a Russian chart."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2020:2023",
        "map": query_map,
        "group_by": group_by,
        "select": "mean(range) as rng",
    }
    result = run(query, sample_settings)
    fig = figure(result, "ru")
    assert scope_line(fig).startswith("NQ · RTH · дневные · ")
    assert fig.axes[-1].get_xlabel() == label
    en = figure(result, "en")
    assert scope_line(en).startswith("NQ · RTH · daily · ")
    assert en.axes[-1].get_xlabel() == english


# --- 4: the values past the four panels are named under the chart ------------------------------


def figure_texts(fig) -> list:
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


@pytest.mark.parametrize(
    ("language", "note"),
    [
        ("en", "+ 2 more values in the CSV: p90, top"),
        ("ru", "+ ещё 2 значения в CSV: p90, top"),
    ],
)
def test_values_past_the_panels_are_named_not_dropped(
    sample_settings, days, language: str, note: str
) -> None:
    """Five or more aggregates drew four panels, and the rest vanished without a word."""
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "year()",
        "select": [
            "mean(range) as rng",
            "median(range) as med",
            "percentile(range, 10) as p10",
            "percentile(range, 75) as p75",
            "percentile(range, 90) as p90",
            "max(range) as top",
        ],
    }
    result = run(query, sample_settings)
    fig = figure(result, language)
    assert len(fig.axes) == 4
    ranges = days["high"] - days["low"]
    expected = ranges.groupby(pd.DatetimeIndex(days.index).year).mean()
    np.testing.assert_allclose(bar_heights(fig.axes[0]), expected.to_numpy(), rtol=1e-9)
    (shown,) = [t for t in figure_texts(fig) if note in t.get_text().split("\n")]
    renderer = fig.canvas.get_renderer()
    box = shown.get_window_extent(renderer)
    label = fig.axes[-1].xaxis.label.get_window_extent(renderer)
    footer = [t for t in fig.texts if t.get_position()[1] < 0.05]  # the footer and badge
    assert footer
    assert box.y1 <= label.y0 and all(box.y0 > t.get_window_extent(renderer).y1 for t in footer)
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width


def test_four_values_have_no_note(sample_settings) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "year()",
        "select": ["mean(range) as rng", "median(range) as med", "max(range) as top", "count()"],
    }
    fig = figure(run(query, sample_settings))
    assert not [t for t in figure_texts(fig) if "CSV" in t.get_text()]


# --- 5: the session's half-hour last bar is marked where it is ranked against full hours -------


def test_the_half_hour_last_bar_is_marked_in_an_hourly_group_chart(sample_settings, con) -> None:
    """NQ's hourly RTH bars end with 16:30-17:00; its mean range was "lowest" unmarked."""
    query = {
        "session": "RTH",
        "from": "1h",
        "period": "2024-01",
        "group_by": "time()",
        "select": "mean(range) as rng",
    }
    result = run(query, sample_settings)
    # Hourly buckets from the 09:30 open, each bar's high - low, averaged per bucket.
    expected = (
        con.execute(
            """
            SELECT start, avg(hi - lo) AS rng FROM (
                SELECT trading_date, 570 + (minute - 570) // 60 * 60 AS start,
                       max(high) AS hi, min(low) AS lo
                FROM nq WHERE minute >= 570 AND minute < 1020
                  AND trading_date >= DATE '2024-01-01' AND trading_date < DATE '2024-02-01'
                GROUP BY 1, 2)
            GROUP BY 1 ORDER BY 1
            """
        )
        .df()
        .set_index("start")["rng"]
    )
    assert expected.index[-1] == 990  # 16:30, the half hour
    fig = figure(result)
    np.testing.assert_allclose(bar_heights(fig.axes[0]), expected.to_numpy(), rtol=1e-9)
    notes = [t.get_text() for t in fig.axes[0].texts]
    assert "16:30: a 30-minute bar (the session ends at 17:00)" in notes
    head = chart_headline(result, "en") or ""
    lowest = expected.idxmin()
    assert lowest == 990 and "lowest 16:30 (30 min) " in head, head
    ru = figure(result, "ru")
    assert "16:30: бар в 30 мин (сессия заканчивается в 17:00)" in [
        t.get_text() for t in ru.axes[0].texts
    ]


def test_bars_that_fill_the_session_are_not_marked(sample_settings) -> None:
    query = {
        "session": "RTH",
        "from": "30m",
        "period": "2024-01",
        "group_by": "time()",
        "select": "mean(range) as rng",
    }
    result = run(query, sample_settings)
    fig = figure(result)
    assert not any("bar (" in t.get_text() for t in fig.axes[0].texts)
    assert "min)" not in (chart_headline(result, "en") or "")


@pytest.mark.parametrize(
    ("hours", "keys", "at"),
    [
        ("09:00-14:30", ["09:00", "10:00", "11:00", "12:00", "13:00", "14:00"], 5),  # CL's RTH
        ("09:30-17:00", ["09:30", "10:30", "16:30"], 2),
        ("09:30-16:30", ["09:30", "10:30", "15:30"], None),  # whole hours
    ],
)
def test_which_group_is_the_short_last_bar(
    sample_settings, hours: str, keys: list[str], at: int | None
) -> None:
    query = {"session": "RTH", "from": "1h", "period": "2024-01-02", "group_by": "time()"}
    result = run({**query, "select": "count()"}, sample_settings)
    assert result.metadata is not None
    result.metadata = result.metadata.model_copy(update={"session_hours": hours})
    found = short_bar(result, pd.DataFrame({"time": keys}), ["time"])
    assert (found.at if found else None) == at
    if found is not None:
        assert found.minutes == 30 and found.end == hours.split("-")[1]


def _months_word(count: int, language: str) -> str:
    if language == "en":
        return "month" if count == 1 else "months"
    if count % 10 == 1 and count % 100 != 11:
        return "месяц"
    if count % 10 in (2, 3, 4) and count % 100 not in (12, 13, 14):
        return "месяца"
    return "месяцев"


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_count_of_monthly_bars_is_in_months(sample_settings, days, language) -> None:
    """ "months_ob = 12 баров": a count of monthly bars counts months."""
    from barb.charts import chart_headline

    query = {"session": "RTH", "from": "monthly", "period": "2024", "where": "close > open"}
    result = run({**query, "select": "count() as up_months"}, sample_settings)
    year = days[pd.DatetimeIndex(days.index).year == 2024]
    month = pd.DatetimeIndex(year.index).to_period("M")
    bars = year.groupby(month).agg(open=("open", "first"), close=("close", "last"))
    up = int((bars["close"] > bars["open"]).sum())
    expected = f"up_months = {up} {_months_word(up, language)}"
    assert chart_headline(result, language=language) == expected
