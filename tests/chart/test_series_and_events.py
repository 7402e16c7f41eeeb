"""Testers' chart findings: groups of two keys whose second is a few years are bars side by
side, a colour and a legend entry per year (the joined "09:30 · 2020" ticks named every
other bar); a few days a where picked are markers on the period's close, counted in the
headline (ten crosses joined by lines read as a price history, and "close last: 20,021" as
today's price); a weekly count by year draws no empty year the table does not have.
Expected numbers from DuckDB over the minute bars and pandas, never Barb's engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_results import RTH, figure, run
from matplotlib.collections import PathCollection, PolyCollection

from barb.charts import chart_headline

pytestmark = pytest.mark.slow


def test_two_years_by_month_are_bars_side_by_side(sample_settings, days) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2020:2024",
        "where": "year() in (2020, 2024)",
        "group_by": ["month()", "year()"],
        "select": "mean(high - low) as rng",
    }
    result = run(query, sample_settings)
    index = pd.DatetimeIndex(days.index)
    picked = days[index.year.isin([2020, 2024])]
    picked_index = pd.DatetimeIndex(picked.index)
    rng = (picked.high - picked.low).groupby([picked_index.month, picked_index.year]).mean()
    fig = figure(result)
    (ax,) = [a for a in fig.axes if a.collections]
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    paths = bars.get_paths()
    heights = np.array([p.vertices[2, 1] - p.vertices[0, 1] for p in paths])
    centres = np.array([p.vertices[:, 0].mean() for p in paths])
    np.testing.assert_allclose(heights, rng.to_numpy(), rtol=1e-9)
    # Each month one slot, 2020 left of 2024 in it, each year in its own colour.
    slot = np.repeat(np.arange(12), 2)
    assert (np.abs(centres - slot) < 0.5).all() and (centres[0::2] < centres[1::2]).all()
    faces = [tuple(f) for f in bars.get_facecolors()]
    assert faces[0::2] == [faces[0]] * 12 and faces[1::2] == [faces[1]] * 12
    assert faces[0] != faces[1]
    legend = ax.get_legend()
    assert legend is not None and [t.get_text() for t in legend.get_texts()] == ["2020", "2024"]
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert ticks and all("·" not in t and "2020" not in t for t in ticks)
    # Each year's own highest and lowest month, the year named.
    months = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    parts = []
    for year in (2020, 2024):
        mine = rng.xs(year, level=1)
        parts.append(
            f"{year} — highest {months[mine.idxmax() - 1]} {mine.max():,.2f} points, "
            f"lowest {months[mine.idxmin() - 1]} {mine.min():,.2f} points"
        )
    assert chart_headline(result) == "rng: " + "; ".join(parts)
    assert chart_headline(result, "ru").startswith("rng: 2020 — больше всего ")


def test_a_second_key_of_many_values_keeps_joined_labels(sample_settings) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2019:2024",
        "group_by": ["month()", "year()"],
        "select": "count() as days",
    }
    fig = figure(run(query, sample_settings))
    (ax,) = [a for a in fig.axes if a.collections]
    assert ax.get_legend() is None
    assert any("·" in t.get_text() for t in ax.get_xticklabels())


def test_crosses_are_markers_on_the_period_close(sample_settings, days) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2023",
        "map": {
            "f": "rolling_mean(close, 10)",
            "s": "rolling_mean(close, 40)",
            "up": "f > s and prev(f) <= prev(s)",
            "down": "f < s and prev(f) >= prev(s)",
        },
        "where": "up or down",
        "select": ["close", "f", "s", "up"],
    }
    result = run(query, sample_settings)
    close = days.close
    f, s = close.rolling(10).mean(), close.rolling(40).mean()
    up = (f > s) & (f.shift() <= s.shift())
    down = (f < s) & (f.shift() >= s.shift())
    in_2023 = pd.DatetimeIndex(days.index).year == 2023
    events = (up | down) & in_2023
    assert 2 <= events.sum() <= 60
    fig = figure(result)
    (ax,) = fig.axes
    # The line is every close of 2023, not the picked days joined.
    (line,) = ax.get_lines()
    np.testing.assert_allclose(np.sort(line.get_ydata()), np.sort(close[in_2023].to_numpy()))
    dots = [c for c in ax.collections if isinstance(c, PathCollection)]
    shown = np.sort(np.concatenate([d.get_offsets()[:, 1] for d in dots]))
    np.testing.assert_allclose(shown, np.sort(close[events].to_numpy()))
    n_up, n_down = int((up & in_2023).sum()), int((down & in_2023).sum())
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [f"up: yes ({n_up})", f"up: no ({n_down})"]
    assert chart_headline(result) == f"{n_up + n_down} days, up: yes {n_up}, no {n_down}"
    # Not «не up»: a Russian word glued to the query's English name.
    assert chart_headline(result, "ru").endswith(f", up: да {n_up}, нет {n_down}")
    (ax,) = figure(result, "ru").axes
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [f"up: да ({n_up})", f"up: нет ({n_down})"]


def test_weekly_counts_by_year_add_no_year_without_weeks(sample_settings, con) -> None:
    """The data ends in a partial week of 2026, which weekly bars leave out: the last week
    kept (from 2025-12-29) is 2025's, and the chart drew an empty hollow 2026."""
    query = {
        "session": "RTH",
        "from": "weekly",
        "period": "2020:",
        "group_by": "year()",
        "select": "count() as weeks",
    }
    result = run(query, sample_settings)
    last = con.execute("SELECT max(trading_date) FROM nq").fetchone()[0]
    assert pd.Timestamp(last).year == 2026
    fig = figure(result)
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert labels[-1] == "2025" and "2026" not in labels
    assert "2026" not in chart_headline(result)


def test_hourly_signals_are_markers_on_the_periods_hourly_closes(sample_settings, con) -> None:
    """Eleven hourly Keltner breakouts had been drawn as a line joining them over two months,
    headlined "close last: 19,006.00 (2025-02-25 10:30)" as if it were the price now: hourly
    bars a where picked are markers on every hourly close of the period, as days are."""
    hours = con.execute(
        f"""
        SELECT trading_date, (minute - 570) // 60 AS slot,
               arg_max(close, timestamp) AS close, max(high) - min(low) AS range
        FROM nq WHERE {RTH} AND trading_date BETWEEN '2025-01-01' AND '2025-02-28'
        GROUP BY 1, 2 ORDER BY 1, 2
        """
    ).df()
    picked = hours[hours["range"] > 280]
    assert 2 <= len(picked) <= 25
    query = {
        "session": "RTH",
        "from": "1h",
        "period": "2025-01:2025-02",
        "where": "range > 280",
        "select": ["timestamp", "close"],
    }
    result = run(query, sample_settings)
    fig = figure(result)
    (ax,) = fig.axes
    (line,) = ax.get_lines()
    np.testing.assert_allclose(np.sort(line.get_ydata()), np.sort(hours["close"].to_numpy()))
    dots = [c for c in ax.collections if isinstance(c, PathCollection)]
    shown = np.sort(np.concatenate([d.get_offsets()[:, 1] for d in dots]))
    np.testing.assert_allclose(shown, np.sort(picked["close"].to_numpy()))
    assert chart_headline(result) == f"{len(picked)} bars"
    assert chart_headline(result, "ru").startswith(f"{len(picked)} бар")


def test_picked_months_each_have_their_marker(sample_settings, days) -> None:
    """A month is labelled by its 1st, its bar by its first trading date: a month whose 1st
    was a weekend (CL's RSI above 70 in 2022-05, from 2022-05-02) lost its marker."""
    month_end = days["close"].groupby(pd.DatetimeIndex(days.index).to_period("M")).last()
    change = month_end / month_end.shift() - 1
    picked = month_end[change > 0.1]
    assert 2 <= len(picked) <= 25
    assert any(pd.Timestamp(m.start_time).dayofweek >= 5 for m in picked.index)
    query = {
        "session": "RTH",
        "from": "monthly",
        "map": {"up": "close / prev(close) - 1 > 0.1"},
        "where": "up",
        "select": ["close"],
    }
    result = run(query, sample_settings)
    (ax,) = figure(result).axes
    dots = [c for c in ax.collections if isinstance(c, PathCollection)]
    shown = np.sort(np.concatenate([d.get_offsets()[:, 1] for d in dots]))
    np.testing.assert_allclose(shown, np.sort(picked.to_numpy()))
    assert chart_headline(result) == f"{len(picked)} months"
