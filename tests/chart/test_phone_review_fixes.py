"""What a chart review at phone width found: answers drawn with no chart, or drawn without
proving what the headline says. Expected values are pandas over the sample's RTH days
(DuckDB, ``conftest.py``), never Barb's engine."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from engine_results import RTH, bar_heights, bar_widths, figure, run, title
from matplotlib.collections import PolyCollection
from matplotlib.text import Text

pytestmark = pytest.mark.slow

RU_MONTHS = "янв фев мар апр май июн июл авг сен окт ноя дек"
NFP_FILE = Path(__file__).parents[2] / "barb" / "events" / "data" / "nfp.csv"


def texts(fig) -> str:
    shown = [t.get_text() for t in fig.findobj(Text) if t.get_visible()]
    return " ".join(t.replace("\n", " ") for t in shown)


def weeks_of(days: pd.DataFrame) -> pd.DataFrame:
    """Per week (by its Monday): its first open, last close and first day's change."""
    index = pd.DatetimeIndex(days.index)
    week = index - pd.to_timedelta(index.dayofweek, unit="D")
    frame = days.assign(mon=days["close"] - days["open"]).set_axis(index)
    return frame.groupby(week).agg(o=("open", "first"), c=("close", "last"), mon=("mon", "first"))


def test_a_then_share_over_weeks_draws_the_share_per_year_of_the_kept_weeks(
    sample_settings, days
) -> None:
    weeks = weeks_of(days)
    kept = weeks[weeks["mon"] < 0]
    assert 0 < len(kept) < len(weeks)
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "week()",
        "select": ["first(open) as o", "last(close) as c", "first(close - open) as mon"],
        "then": {"where": "mon < 0", "select": "mean(c > o)"},
    }
    result = run(query, sample_settings)
    up = (kept["c"] > kept["o"]).astype(float)
    assert result.summary.value == pytest.approx(up.mean())
    per_year = up.groupby(kept.index.year).mean()
    full = per_year.reindex(range(per_year.index.min(), per_year.index.max() + 1))
    for language in ("en", "ru"):
        fig = figure(result, language)
        (ax,) = fig.axes
        np.testing.assert_allclose(bar_heights(ax), full.fillna(0).to_numpy())
        (line,) = [x for x in ax.lines if x.get_ydata()[0] == pytest.approx(up.mean())]
        assert line is not None
    assert f"then {len(kept)} of {len(weeks)}" in texts(figure(result))


def test_a_then_count_draws_the_groups_it_counted(sample_settings, days) -> None:
    year = days[pd.DatetimeIndex(days.index).year == 2024]
    pts = (year["close"] - year["open"]).groupby(pd.DatetimeIndex(year.index).month).sum()
    negative = pts[pts < 0]
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024",
        "group_by": "month()",
        "select": "sum(close - open) as pts",
        "then": {"where": "pts < 0", "select": "count()"},
    }
    result = run(query, sample_settings)
    assert result.summary.value == len(negative)
    for language in ("en", "ru"):
        (ax,) = figure(result, language).axes
        np.testing.assert_allclose(bar_heights(ax), negative.to_numpy())


def drawdown(close: pd.Series) -> pd.Series:
    return close / close.cummax() - 1


def test_a_drawdown_axis_stops_at_zero_and_its_labels_stay_on_the_figure(
    sample_settings, con
) -> None:
    """5-minute bars of one day: ticks like "−0.0150" lost their sign off the left edge, and
    the axis ran up to +0.0025 that a drawdown never reaches."""
    closes = con.execute(
        f"""
        SELECT time_bucket(INTERVAL 5 MINUTE, timestamp) AS t, arg_max(close, timestamp) AS c
        FROM nq WHERE {RTH} AND trading_date = DATE '2024-08-05' GROUP BY 1 ORDER BY 1
        """
    ).df()["c"]
    deepest = drawdown(closes).min()
    query = {
        "session": "RTH",
        "from": "5m",
        "period": "2024-08-05",
        "map": {"dd": "close / cummax(close) - 1"},
        "select": "min(dd)",
    }
    result = run(query, sample_settings)
    assert result.summary.value == pytest.approx(deepest, rel=1e-3)
    for language in ("en", "ru"):
        fig = figure(result, language)
        (ax,) = fig.axes
        renderer = fig.canvas.get_renderer()
        for label in ax.get_yticklabels():
            if label.get_visible() and label.get_text():
                assert label.get_window_extent(renderer).x0 >= 0, label.get_text()
        lo, hi = ax.get_ylim()
        assert lo < deepest and 0 <= hi <= 0.05 * (hi - lo)


def test_a_trough_on_the_last_bar_is_drawn_whole(sample_settings, days) -> None:
    year = days[pd.DatetimeIndex(days.index).year == 2022]
    dd = drawdown(year["close"])
    assert dd.to_numpy().argmin() == len(dd) - 1  # the year ended at its low
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2022",
        "map": {"dd": "close / cummax(close) - 1"},
        "select": "min(dd)",
    }
    fig = figure(run(query, sample_settings), "ru")
    (ax,) = fig.axes
    (dot,) = [
        c for c in ax.collections if len(c.get_offsets()) == 1 and c.get_offsets()[0][1] < -0.1
    ]
    renderer = fig.canvas.get_renderer()
    assert dot.get_offsets()[0][1] == pytest.approx(dd.iloc[-1], rel=1e-6)
    centre = ax.transData.transform(dot.get_offsets()[0])[0]
    radius = np.sqrt(dot.get_sizes()[0]) / 2 * fig.dpi / 72
    assert centre + radius <= ax.get_window_extent(renderer).x1


def nfp_dates(start: str, end: str) -> pd.DatetimeIndex:
    """The release days of the BLS schedule, read from the events' file by hand."""
    frame = pd.read_csv(NFP_FILE, comment="#")
    dates = pd.DatetimeIndex(pd.to_datetime(frame.iloc[:, 0]))
    return dates[(dates >= start) & (dates <= end)]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_days_an_event_filter_picked_are_counted_like_a_where(
    sample_settings, days, language
) -> None:
    """NFP days with ``"filter": "only"`` were headlined "chg last: 473.8 points
    (2024-12-06)", December's change as if it were the answer; with ``"where": "nfp"`` the
    same days read "12 days"."""
    chg = days["close"].diff().set_axis(pd.DatetimeIndex(days.index))
    released = nfp_dates("2023-01-01", "2024-12-31")
    picked = chg[chg.index.isin(released)]
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2023:2024",
        "join": {"source": "nfp", "filter": "only"},
        "map": {"chg": "close - prev(close)"},
        "select": ["date()", "chg"],
    }
    fig = figure(run(query, sample_settings), language)
    word = {"en": "days", "ru": "дня"}[language]
    assert title(fig) == f"{len(picked)} {word}"
    (ax,) = fig.axes
    np.testing.assert_allclose(bar_widths(ax), picked.to_numpy())


@pytest.mark.parametrize(
    ("language", "words"), [("en", "{n} of {n} weeks matched"), ("ru", "подошло {n} из {n} недели")]
)
def test_weekly_bars_are_counted_as_weeks(sample_settings, days, language, words) -> None:
    index = pd.DatetimeIndex(days.index)
    monday = index - pd.to_timedelta(index.dayofweek, unit="D")
    spans = pd.Series(index, index=index).groupby(monday).agg(["min", "max"])
    # The weeks wholly in the period: 2014-12-29 and 2024-12-30 each reach into another year.
    weeks = int(((spans["min"].dt.year >= 2015) & (spans["max"].dt.year <= 2024)).sum())
    assert weeks % 10 == 1 and weeks % 100 != 11  # Russian's "one" form: "из 521 недели"
    query = {
        "session": "RTH",
        "from": "weekly",
        "period": "2015:2024",
        # A where that keeps every week: its footer says how many it kept (one with no
        # where counts the weeks alone, ``test_reply_words``).
        "where": "volume >= 0",
        "select": "mean(close > open)",
    }
    fig = figure(run(query, sample_settings), language)
    assert words.format(
        n=format(weeks, ",").replace(",", {"en": ",", "ru": "\xa0"}[language])
    ) in texts(fig)


@pytest.mark.parametrize(
    ("language", "words"), [("en", "then {k} of 12 months"), ("ru", "затем {k} из 12 месяцев")]
)
def test_a_then_over_months_counts_months(sample_settings, days, language, words) -> None:
    year = days[pd.DatetimeIndex(days.index).year == 2024]
    pts = (year["close"] - year["open"]).groupby(pd.DatetimeIndex(year.index).month).sum()
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024",
        "group_by": "month()",
        "select": "sum(close - open) as pts",
        "then": {"where": "pts < 0", "select": "mean(pts)"},
    }
    fig = figure(run(query, sample_settings), language)
    assert words.format(k=int((pts < 0).sum())) in texts(fig)


def tick_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.get_xticklabels() if t.get_visible() and t.get_text()]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_thinned_month_ticks_keep_the_highest_and_lowest(sample_settings, days, language) -> None:
    """12 months at phone width were labelled every other one: August, the lowest, had none.
    Then the named months were added and the labels stepped unevenly (Jan, Mar, May, Aug,
    Oct: p46e): every month is labelled, in a smaller font."""
    year = days[pd.DatetimeIndex(days.index).year == 2024]
    share = (year["close"] > year["open"]).groupby(pd.DatetimeIndex(year.index).month).mean()
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024",
        "group_by": "month()",
        "select": "mean(close > open)",
    }
    fig = figure(run(query, sample_settings), language)
    (ax,) = fig.axes
    names = {"en": "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec", "ru": RU_MONTHS}[language]
    months = names.split()
    shown = tick_texts(ax)
    assert shown == months
    for month in (share.idxmax(), share.idxmin()):
        assert months[month - 1] in shown


def test_thinned_hour_ticks_keep_the_highest_hour(sample_settings, con) -> None:
    hours = con.execute(
        f"""
        SELECT (minute - 570) // 60 AS h, avg(v) AS v FROM (
            SELECT trading_date, (minute - 570) // 60 * 60 + 570 AS minute, sum(volume) AS v
            FROM nq WHERE {RTH} GROUP BY 1, 2
        ) GROUP BY 1 ORDER BY 1
        """
    ).df()
    top = int(hours["h"].iloc[hours["v"].to_numpy().argmax()])
    label = f"{9 + (30 + top * 60) // 60:02d}:30"
    query = {"session": "RTH", "from": "1h", "group_by": "hour()", "select": "mean(volume)"}
    (ax,) = figure(run(query, sample_settings)).axes
    shown = tick_texts(ax)
    assert len(shown) == len(hours) and label in shown  # each hour: none stepped over


def test_eth_hours_by_year_run_from_the_open(sample_settings, con) -> None:
    """Side by side by year, ETH's hours ran 00:00 … 23:00, the 18:00 open in the middle of
    the evening; the one-key chart already ran from 18:00."""
    hours = con.execute(
        """
        SELECT h, y, avg(v) AS v FROM (
            SELECT trading_date, year(trading_date) AS y, hour(timestamp) AS h,
                   sum(volume) AS v
            FROM nq
            WHERE year(trading_date) IN (2020, 2024) AND NOT (minute >= 1020 AND minute < 1080)
            GROUP BY 1, 2, 3
        ) GROUP BY 1, 2
        """
    ).df()
    since_open = (hours["h"] - 18) % 24
    hours = hours.assign(o=since_open).sort_values(["o", "y"])
    query = {
        "session": "ETH",
        "from": "1h",
        "where": "year() in (2020, 2024)",
        "group_by": ["hour()", "year()"],
        "select": "mean(volume)",
    }
    (ax,) = figure(run(query, sample_settings)).axes
    assert tick_texts(ax)[0] == "18:00"
    np.testing.assert_allclose(bar_heights(ax), hours["v"].to_numpy(), rtol=1e-9)


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_share_per_week_shows_every_week_its_count_and_day_first_dates(
    sample_settings, days, language
) -> None:
    """March 2024's weeks: the 0% week lost its "5 days" and was no bar at all, the axis ran
    to 120%, and Russian dates read "фев 26" for 26 February."""
    month = days[
        (pd.DatetimeIndex(days.index) >= "2024-03-01")
        & (pd.DatetimeIndex(days.index) < "2024-04-01")
    ]
    index = pd.DatetimeIndex(month.index)
    monday = index - pd.to_timedelta(index.dayofweek, unit="D")
    up = (month["close"] > month["open"]).groupby(monday)
    shares, counts = up.mean(), up.size()
    assert (shares == 0).any()  # the case that matters
    query = {"session": "RTH", "from": "daily", "period": "2024-03", "select": "mean(close > open)"}
    fig = figure(run(query, sample_settings), language)
    (ax,) = fig.axes
    np.testing.assert_allclose(bar_heights(ax), shares.to_numpy())
    word = {"en": ("day", "days"), "ru": ("день", "дня", "дней")}[language]
    written = [t.get_text() for t in ax.texts if t.get_text().split(" ")[-1] in word]
    assert [int(t.split()[0]) for t in written] == counts.tolist()
    assert max(ax.get_yticks()) <= 1.0
    # The 0% week is marked on the base in the bars' colour.
    zero = [x for x in ax.lines if list(x.get_ydata()) == [0, 0]]
    assert len(zero) == int((shares == 0).sum())
    months = {"en": "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec", "ru": RU_MONTHS}[language]
    names = months.split()
    expected = [
        f"{names[d.month - 1]} {d.day:02d}"
        if language == "en"
        else f"{d.day:02d} {names[d.month - 1]}"
        for d in shares.index
    ]
    assert tick_texts(ax) == expected


def test_the_answer_line_passes_behind_the_share_labels_and_the_open_year_is_hollow(
    sample_settings, days
) -> None:
    years = pd.DatetimeIndex(days.index).year
    up = (days["close"] > days["open"]).groupby(years)
    assert up.size().iloc[-1] < 10  # the data's last year has begun only
    query = {"session": "RTH", "from": "daily", "select": "mean(close > open)"}
    fig = figure(run(query, sample_settings))
    (ax,) = fig.axes
    np.testing.assert_allclose(bar_heights(ax), up.mean().to_numpy())
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    faces = bars.get_facecolors()
    assert tuple(faces[-1][:3]) == (1.0, 1.0, 1.0) and tuple(faces[0][:3]) != (1.0, 1.0, 1.0)
    renderer = fig.canvas.get_renderer()
    (line,) = [x for x in ax.lines if x.get_ydata()[0] == pytest.approx(up.mean().mean(), abs=0.05)]
    line_y = ax.transData.transform((0, line.get_ydata()[0]))[1]
    labels = [t for t in ax.texts if t.get_text().endswith("%")]
    assert len(labels) == len(up.size())  # every year's share is written, none dropped
    for text in labels:
        box = text.get_window_extent(renderer)
        if box.y0 <= line_y <= box.y1:  # moved into its bar, or on white over the line
            patch = text.get_bbox_patch()
            assert patch is not None and tuple(patch.get_facecolor()[:3]) == (1.0, 1.0, 1.0)
            assert text.get_zorder() > line.get_zorder()


@pytest.mark.parametrize(("language", "tie"), [("en", "tie: Mon, Tue"), ("ru", "равны: Пн, Вт")])
def test_groups_that_read_the_same_are_tied(sample_settings, days, language, tie) -> None:
    """Gap-up days by weekday: Monday 0.498925 and Tuesday 0.498932 both read 49.9%, and the
    headline named Monday alone the lowest."""
    prev = days["close"].shift()
    known = prev.notna()
    gap_up = (days["open"] > prev)[known]
    weekday = pd.DatetimeIndex(days.index[known]).dayofweek
    shares = gap_up.groupby(weekday).mean()
    written = [f"{v * 100:.1f}" for v in shares]
    lowest = shares.idxmin()
    alike = [d for d in shares.index if written[d] == written[lowest]]
    assert len(alike) == 2 and shares[alike[0]] != shares[alike[1]]  # the case that matters
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"gapup": "open > prev(close)"},
        "group_by": "dayname()",
        "select": "mean(gapup)",
    }
    result = run(query, sample_settings)
    fig = figure(result, language)
    (ax,) = fig.axes
    np.testing.assert_allclose(bar_heights(ax), shares.to_numpy(), rtol=1e-12)
    assert tie in texts(fig)  # the headline, over its two lines
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    faces = [tuple(f) for f in bars.get_facecolors()]
    assert faces[alike[0]] == faces[alike[1]]
    # Weekdays within noise of each other single out no bar: the highest is grey too.
    even = "mean_gapup" in (result.metadata.even_groups or [])
    assert (faces[alike[0]] == faces[shares.idxmax()]) == even
