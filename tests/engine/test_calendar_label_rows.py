"""A place in the calendar selected beside a value names its row; it is never the value
drawn. p43a Q2: weekly bars with ``"select": ["year()", "ret_pct", "rng_pct"]`` were drawn
as 18 equal bars reading "2,008" … "2,025", the returns left to "+ 2 more values in the
CSV". Expected returns are pandas' over the hand-made minute bars, never Barb's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.text import Text
from rth_bars import rth_daily

from barb import execute
from barb.charts import draw_chart
from barb.settings import EngineSettings
from barb.summary_text import render_summary, value_text

RTH = (570, 1020)  # NQ's RTH, 09:30-17:00, in minutes of the day


@pytest.fixture(scope="module")
def weeks(minutes: pd.DataFrame) -> pd.DataFrame:
    """The fixture's RTH weeks, labelled by their first trading date: close and the return
    from the week before, in percent."""
    stamps = minutes["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    rth = minutes[(minute >= RTH[0]) & (minute < RTH[1])]
    day = rth["timestamp"].dt.normalize()
    week = day - pd.to_timedelta(day.dt.dayofweek, unit="D")
    found = rth.groupby(week).agg(first=("timestamp", "min"), close=("close", "last"))
    found["ret"] = (found["close"] / found["close"].shift() - 1) * 100
    return found.set_index(found["first"].dt.normalize())


def _drawn(query: dict, settings: EngineSettings):
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    fig = draw_chart(result)
    assert fig is not None
    fig.canvas.draw()
    (ax,) = [a for a in fig.axes if a.collections]  # the one panel of bars
    texts = [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text()]
    return ax, texts


def _widths(ax) -> np.ndarray:
    (bars,) = [c for c in ax.collections if len(c.get_paths())]
    return np.array([p.vertices[2, 0] - p.vertices[0, 0] for p in bars.get_paths()])


def _query(key: str) -> dict:
    return {
        "session": "RTH",
        "from": "weekly",
        "map": {"ret": "(close / prev(close) - 1) * 100"},
        "where": "day() <= 7",  # each month's first week, by its first trading date
        "select": [key, "ret"],
    }


def test_the_month_selected_names_each_week_and_the_return_is_drawn(
    engine_settings: EngineSettings, weeks: pd.DataFrame
) -> None:
    picked = weeks[weeks.index.day <= 7]  # January's first week has no week before it
    assert len(picked) == 3 and picked.index.month.is_unique  # the premise: a week a month
    ax, texts = _drawn(_query("month()"), engine_settings)
    np.testing.assert_allclose(_widths(ax), picked["ret"].fillna(0).to_numpy(), rtol=1e-9)
    names = [t.get_text() for t in ax.get_yticklabels()]
    assert names == [f"{t:%b}" for t in picked.index]
    assert not any("more value" in t for t in texts)  # the month is no value left out


def test_a_year_shared_by_the_weeks_is_no_bar_and_never_written_as_a_number(
    engine_settings: EngineSettings, weeks: pd.DataFrame
) -> None:
    picked = weeks[weeks.index.day <= 7]
    ax, texts = _drawn(_query("year()"), engine_settings)
    np.testing.assert_allclose(_widths(ax), picked["ret"].fillna(0).to_numpy(), rtol=1e-9)
    assert ax.get_xlabel().startswith("ret")
    # One year for every week names none of them: they keep their dates.
    names = [t.get_text() for t in ax.get_yticklabels()]
    assert names == [f"{t:%Y-%m-%d}" for t in picked.index]
    assert not any("2,024" in t or "2\u00a0024" in t for t in texts)


@pytest.fixture(scope="module")
def months(minutes: pd.DataFrame) -> pd.DataFrame:
    """The fixture's RTH months: the return from the month before, in percent."""
    stamps = minutes["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    rth = minutes[(minute >= RTH[0]) & (minute < RTH[1])]
    month = rth["timestamp"].dt.to_period("M")
    found = rth.groupby(month).agg(open=("open", "first"), close=("close", "last"))
    before = found["close"].shift().fillna(found["open"])  # the first from its own open
    found["ret"] = (found["close"] / before - 1) * 100
    return found.iloc[:-1]  # the data's last month is not over: left out, as warned


def test_months_named_by_month_are_one_bar_each_not_a_histogram_of_their_numbers(
    engine_settings: EngineSettings, months: pd.DataFrame
) -> None:
    """p43f W2: monthly bars selecting ["month()", "ret"] lost their label to the month's
    number, and the chart was a histogram of 1 … 12 ("number of months", "median = 6.50")."""
    assert len(months) >= 2 and months.index.month.is_unique  # the premise: one year
    query = {
        "session": "RTH",
        "from": "monthly",
        "map": {"ret": "(close / coalesce(prev(close), open) - 1) * 100"},
        "select": ["month()", "ret"],
    }
    ax, texts = _drawn(query, engine_settings)
    np.testing.assert_allclose(_widths(ax), months["ret"].to_numpy(), rtol=1e-9)
    assert [t.get_text() for t in ax.get_yticklabels()] == [m.strftime("%b") for m in months.index]
    assert not any("median" in t or "number of" in t for t in texts)
    best = months["ret"].idxmax()
    assert any(
        t.startswith(f"ret: highest {best.strftime('%b')} ") for t in texts
    )  # not "highest 12"


@pytest.mark.parametrize("key", ["year()", "month()"])
def test_the_summary_takes_no_mean_of_a_selected_year_or_month(
    engine_settings: EngineSettings, weeks: pd.DataFrame, key: str
) -> None:
    """p43f W2: "mean: ret_pct=21.71, year=2016.5", a calendar key averaged as a value. The
    returns' mean stays, as pandas takes it."""
    result = execute(_query(key), "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    text = render_summary(result)
    (line,) = [s for s in text.splitlines() if s.startswith("mean:")]
    picked = weeks[weeks.index.day <= 7]
    assert line == f"mean: ret={value_text(picked['ret'].mean())}"


def test_a_place_in_the_month_selected_beside_a_value_keeps_its_numbers(
    engine_settings: EngineSettings, minutes: pd.DataFrame
) -> None:
    """p46a #2: the fix above took every time function's column for a label, and NQ's 71
    RTH days of 2024 up over 1% lost "td: min=1 (2024-02-01 and 2 more), max=22 …,
    mean=10.79": where in the month such days lie, a value the person asked for. The
    trading day of the month here is pandas' count of the fixture's RTH dates in each
    month (it has no bars on 2024-01-15, nor trades then)."""
    daily = rth_daily(minutes)
    dates = pd.DatetimeIndex(daily.index)
    td = pd.Series(dates.day, index=dates).groupby(dates.to_period("M")).rank().astype(int)
    chg = daily["close"] / daily["close"].shift() - 1
    picked = td[chg > -0.002]
    assert 50 < len(picked) < chg.count()  # a listing summarised, not every day
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"td": "trading_day()", "chg": "close / prev(close) - 1"},
        "where": "chg > -0.002",
        "select": ["td", "chg"],
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    lines = render_summary(result).splitlines()
    (line,) = [s for s in lines if s.startswith("td: ")]
    assert line.startswith(f"td: min={picked.min()} (")
    assert f"max={picked.max()} (" in line
    assert line.endswith(f"mean={value_text(picked.mean())}")
