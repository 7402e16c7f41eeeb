"""next() past the data's end: the rows kept whose later bar does not exist are named, with
what a mean or a share of it is over. Expected rows from pandas over RTH daily bars built
here from the minute file (the fixture's data ends on 2024-03-28)."""

from __future__ import annotations

import pandas as pd
import pytest
from asking import ask
from matplotlib.collections import PolyCollection
from matplotlib.text import Text
from rth_bars import RTH_END, RTH_START, rth_daily

from barb.charts import draw_chart


def _warnings(result) -> list[str]:
    return [w for w in result.metadata.warnings if w.startswith("next(")]


def _query(period: str, where: str = "close < prev(close)") -> dict:
    return {
        "session": "RTH",
        "from": "daily",
        "period": period,
        "map": {"ret3": "(next(close, 3) / close - 1) * 100"},
        "where": where,
        "select": ["count()", "mean(ret3 > 0) as up3", "mean(ret3) as avg3"],
    }


def test_rows_without_a_later_bar_are_counted_and_named(engine_settings, minutes) -> None:
    daily = rth_daily(minutes)
    daily["ret3"] = (daily["close"].shift(-3) / daily["close"] - 1) * 100
    kept = daily[daily["close"] < daily["close"].shift()].loc["2024-03-01":]
    empty = int(kept["ret3"].isna().sum())
    assert empty == 3  # the fixture's last three days are down days
    result = ask(_query("2024-03-01:"), engine_settings)
    values = result.summary.values
    assert values["count"] == len(kept)
    assert values["up3"] == pytest.approx((kept["ret3"].dropna() > 0).mean())
    assert values["avg3"] == pytest.approx(kept["ret3"].mean())
    assert _warnings(result) == [
        f"next(close, 3) is empty for {empty} of the {len(kept)} rows kept: the data ends on "
        f"{daily.index[-1]:%Y-%m-%d}; means and shares of it are over the other "
        f"{len(kept) - empty}, while count() counts all {len(kept)}."
    ]


def test_no_warning_when_later_bars_exist(engine_settings) -> None:
    """A period ending three days before the data does reads bars after it, all there."""
    result = ask(_query("2024-02-01:2024-03-22"), engine_settings)
    assert _warnings(result) == []


def test_no_warning_when_where_already_dropped_them(engine_settings) -> None:
    """An unknown condition is not kept by where: no kept row is empty."""
    result = ask(_query("2024-03-01:", where="next(close, 3) > close"), engine_settings)
    assert _warnings(result) == []


def test_intraday_names_the_last_bar(engine_settings, minutes) -> None:
    """RTH hours start at 09:30: the last one is the one holding the day's last RTH minute."""
    day = minutes[minutes["timestamp"].dt.normalize() == "2024-03-28"]["timestamp"]
    minute = day.dt.hour * 60 + day.dt.minute
    last = int(minute[(minute >= RTH_START) & (minute < RTH_END)].max())
    opens = RTH_START + (last - RTH_START) // 60 * 60
    last_bar = pd.Timestamp("2024-03-28") + pd.Timedelta(minutes=opens)
    result = ask(
        {
            "session": "RTH",
            "from": "1h",
            "period": "2024-03-28",
            "map": {"move": "next(close) - close"},
            "select": "mean(move)",
        },
        engine_settings,
    )
    (text,) = _warnings(result)
    assert text.startswith(
        f"next(close) is empty for 1 of the {result.metadata.rows_matched} rows kept: the data "
        f"ends with the {last_bar:%Y-%m-%d %H:%M} bar;"
    )


def test_a_group_key_past_the_end_is_said_once(engine_settings) -> None:
    """ "After a down day, was the next day up or down?" grouped by if(next(close) > close …):
    the last day is in no group, which keyless_rows says; the next() warning said "count()
    counts all 5" though the groups held 4."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "last_6_bars",
        "map": {"dir": "if(next(close) > close, 'up', 'down')"},
        "group_by": "dir",
        "select": "count()",
    }
    result = ask(query, engine_settings)
    assert sum(result.table["count"]) == 5
    assert _warnings(result) == []
    said = "has no value for dir (n/a) and is left out: it is in no group."
    assert any(w.startswith("The day 2024-03-28 ") and said in w for w in result.metadata.warnings)


def test_weekly_bars_leave_the_data_s_end_to_the_open_week_s_warning(engine_settings) -> None:
    query = {"session": "RTH", "from": "weekly", "period": "last_4_bars",
             "map": {"nxt": "next(close)"}, "select": "mean(nxt)"}  # fmt: skip
    assert _warnings(ask(query, engine_settings)) == []


def _follow_through(sort: str, limit: int) -> dict:
    return {
        "session": "RTH",
        "from": "daily",
        "map": {
            "ret": "(close / prev(close) - 1) * 100",
            "ret3": "(next(close, 3) / close - 1) * 100",
        },
        "sort": sort,
        "limit": limit,
        "select": ["ret", "ret3"],
    }


def test_no_warning_under_listed_rows_that_all_have_a_later_bar(engine_settings, minutes) -> None:
    """p29f: under the 5 best days of all history (none of them near the data's end) the
    warning said "empty for 3 of the 62 rows kept … means and shares of it are over the
    other 59", read as if the printed mean of the 5 days were over 59 of them."""
    daily = rth_daily(minutes)
    daily["ret"] = daily["close"].pct_change() * 100
    daily["ret3"] = (daily["close"].shift(-3) / daily["close"] - 1) * 100
    best = daily.sort_values("ret", ascending=False).head(5)
    assert daily["ret3"].isna().sum() == 3 and best["ret3"].notna().all()
    result = ask(_follow_through("ret desc", 5), engine_settings)
    assert list(result.table["ret3"]) == pytest.approx(list(best["ret3"]))
    assert _warnings(result) == []


def test_listed_rows_without_a_later_bar_are_counted_among_them(engine_settings, minutes) -> None:
    """The last 5 days: 3 have no third day after them. The warning counts them among the 5
    rows the table holds, and its mean of ret3 is over the 2 others."""
    daily = rth_daily(minutes)
    daily["ret3"] = (daily["close"].shift(-3) / daily["close"] - 1) * 100
    last = daily.tail(5)
    assert last["ret3"].isna().sum() == 3
    result = ask(_follow_through("timestamp desc", 5), engine_settings)
    assert result.summary.stats["ret3"].mean == pytest.approx(last["ret3"].mean(), abs=1e-3)
    assert _warnings(result) == [
        f"next(close, 3) is empty for 3 of the 5 rows the table holds: the data ends on "
        f"{daily.index[-1]:%Y-%m-%d}; a mean of it over them averages the other 2 only."
    ]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_chart_names_the_last_whole_week_the_where_could_not_judge(
    engine_settings, minutes, language
) -> None:
    """p48c Q13: "the last week of the year, by year" listed 2008 to 2024, and 2025-12-29
    was left out because next() reads no bar after the last whole week; the text warned,
    the chart (its header running to 2026-01-02) did not. Weeks followed by a higher close,
    from pandas: the fixture's last whole week (its next one not over) is named under the
    chart; a where that reads no later bar names none."""
    days = rth_daily(minutes)
    monday = days.index - pd.to_timedelta(days.index.dayofweek, unit="D")
    weeks = days.groupby(monday).agg(label=("close", lambda c: c.index[0]), close=("close", "last"))
    weeks = weeks.iloc[:-1]  # the week of 2024-03-25 is not over (to Thursday the 28th)
    rises = weeks[weeks["close"].shift(-1) > weeks["close"]]
    last = f"{weeks['label'].iloc[-1]:%Y-%m-%d}"
    query = {"session": "RTH", "from": "weekly", "map": {"rise": "next(close) > close"},
             "where": "rise", "select": ["timestamp", "close"]}  # fmt: skip
    result = ask(query, engine_settings)
    assert result.table["close"].tolist() == rises["close"].tolist()
    assert result.metadata.unjudged_last == last == "2024-03-18"
    fig = draw_chart(result, language=language)
    shown = " ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible())
    note = {
        "en": f"{last} left out: next() has no whole bar after it yet",
        "ru": f"{last} не учтён: для «next()» после него ещё нет полного бара",
    }[language]
    assert note in shown.replace("\n", " "), shown
    earlier = {**query, "map": {"rise": "close > prev(close)"}}
    assert ask(earlier, engine_settings).metadata.unjudged_last is None


def test_each_next_call_left_empty_is_named_with_its_count(engine_settings, minutes) -> None:
    """The last 5 days listed with next(close, 3) and next(high): pandas leaves 3 and 1 of
    them empty. The warning named next(close, 3) alone, and next(high)'s n/a on the last
    row read as a value it did not concern."""
    daily = rth_daily(minutes)
    last = pd.DataFrame(
        {
            "ret3": (daily["close"].shift(-3) / daily["close"] - 1) * 100,
            "reach": daily["high"].shift(-1) - daily["close"],
        }
    ).tail(5)
    empty = last.isna().sum()
    assert (empty["ret3"], empty["reach"]) == (3, 1)
    query = _follow_through("timestamp desc", 5)
    query["map"]["reach"] = "next(high) - close"
    query["select"] = ["ret3", "reach"]
    result = ask(query, engine_settings)
    assert list(result.table["reach"].isna()) == list(last["reach"].isna()[::-1])
    assert _warnings(result) == [
        f"next(close, 3) is empty for {empty['ret3']} of the 5 rows the table holds "
        f"(next(high) for {empty['reach']}): the data ends on {daily.index[-1]:%Y-%m-%d}; a "
        f"mean of them over these rows averages only the rows with a value (the other "
        f"{5 - empty['ret3']} for next(close, 3))."
    ]


@pytest.mark.parametrize("ahead", [1, 3])
def test_a_where_reading_past_the_data_s_last_day_names_the_days_it_left_out(
    engine_settings, minutes, ahead
) -> None:
    """p48i 2: "Wednesdays over the last 30 days" (next_ret < 5) read 4 days under a period
    to 2026-01-07, a Wednesday, and neither the chart nor the text said the where could not
    judge that day: the note came only when the data ended in an unfinished week. The days
    pandas' shift leaves empty at the data's end are named, to the model and on the chart
    (a count's too, whose chart lists no rows)."""
    daily = rth_daily(minutes)
    later = daily["close"].shift(-ahead) - daily["close"]
    empty = daily.index[later.isna()]
    assert len(empty) == ahead and empty[-1] == daily.index[-1]
    days = [f"{d:%Y-%m-%d}" for d in empty]
    label = days[0] if ahead == 1 else f"{days[0]} — {days[-1]}"
    query = {"session": "RTH", "from": "daily", "period": "2024-03-01:",
             "map": {"later": f"next(close, {ahead}) - close"}, "where": "later > 0"}  # fmt: skip
    for select in (["timestamp", "later"], "count()"):
        result = ask({**query, "select": select}, engine_settings)
        kept = later.loc["2024-03-01":] > 0
        rows = len(result.table) if select != "count()" else result.summary.value
        assert rows == int(kept.sum())
        assert (result.metadata.unjudged_last, result.metadata.unjudged_rows) == (label, ahead)
        said = [w for w in result.metadata.warnings if label in w and "left out" in w]
        assert len(said) == 1, result.metadata.warnings
        for language, note in (
            ("en", f"{label} left out"),
            ("ru", f"{label} не учт"),
        ):
            fig = draw_chart(result, language=language)
            shown = " ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible())
            assert note in shown.replace("\n", " "), shown
    judged = {**query, "map": {"later": f"close - prev(close, {ahead})"}, "select": "count()"}
    plain = ask(judged, engine_settings)
    assert plain.metadata.unjudged_last is None
    assert not [w for w in plain.metadata.warnings if "left out: the where" in w]


def test_a_picked_days_list_draws_the_value_asked_not_the_where_s(engine_settings, minutes) -> None:
    """p48i 6: "next-day return after each day with range > 600" (select date, range,
    next_ret) drew range, the where's column, and next_ret was only named under the axis.
    The widest three days by pandas: their bars are the next day's change, as pandas
    computes it, and range is the value left to the CSV."""
    daily = rth_daily(minutes)
    daily["range"] = daily["high"] - daily["low"]
    daily["nxt"] = daily["close"].shift(-1) - daily["close"]
    level = float(daily["range"].iloc[:-1].nlargest(4).iloc[-1])
    picked = daily[daily["range"] > level]
    assert len(picked) == 3 and picked["nxt"].notna().all()  # the case
    query = {"session": "RTH", "from": "daily", "map": {"nxt": "next(close) - close"},
             "where": f"range > {level}", "select": ["date()", "range", "nxt"]}  # fmt: skip
    result = ask(query, engine_settings)
    fig = draw_chart(result, language="en")
    fig.canvas.draw()
    (bars,) = [c for ax in fig.axes for c in ax.collections if isinstance(c, PolyCollection)]
    ends = [path.vertices[:, 0] for path in bars.get_paths()]  # each bar from 0 to its value
    drawn = [x.min() if abs(x.min()) > abs(x.max()) else x.max() for x in ends]
    assert sorted(drawn) == pytest.approx(sorted(picked["nxt"]))
    shown = " ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible())
    assert "+ 1 more value in the CSV: range" in shown, shown
