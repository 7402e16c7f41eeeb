"""Rows with no value because the data begins are said, with their dates: "days below the
200-day SMA in 2008" counted 60 with no word, though the mean had no value on 199 of 2008's
259 days (the sample starts 2008-01-02); the first yearly return has no close before it, and
a sort of years left the worst one out without a word. Here the hand-made bars start on
2024-01-02: a 20-day mean has no value on their first 19 days (TA-Lib's SMA says which), and
the first month no close before it (pandas)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import talib
from asking import RTH_DAILY, ask, warnings_with
from matplotlib.collections import PolyCollection
from matplotlib.text import Text
from rth_bars import rth_daily
from small_bars import write_minutes

from barb import render_summary
from barb.charts import chart_headline, draw_chart
from barb.settings import EngineSettings

SMA = {"sma20": "rolling_mean(close, 20)"}
RET = {"ret_pct": "(close / prev(close) - 1) * 100"}
BEGINS = "as it needs bars from before 2024-01-02, where the data begins"
RTH_WEEKLY = {"session": "RTH", "from": "weekly"}


@pytest.fixture(scope="module")
def days(minutes: pd.DataFrame) -> pd.DataFrame:
    """RTH days with TA-Lib's 20-day SMA (empty on the first 19) and its date as text."""
    daily = rth_daily(minutes)
    daily["sma20"] = talib.SMA(daily["close"].to_numpy(), 20)
    daily["day"] = daily.index.strftime("%Y-%m-%d")
    return daily


# Whole weeks from the data's first (the week of Monday 2024-01-01, a holiday) to the week
# of 2024-03-18: the last week of the data is not over (CME traded Good Friday 2024).
WEEKS = "2024-01-01:2024-03-22"


@pytest.fixture(scope="module")
def weeks(minutes: pd.DataFrame) -> pd.DataFrame:
    """Weekly RTH bars of ``WEEKS``, named by their first day, with their close-to-close
    return."""
    return _weekly(minutes)


def _weekly(minutes: pd.DataFrame) -> pd.DataFrame:
    daily = rth_daily(minutes).loc[:"2024-03-22"]
    week = daily.index.to_period("W-SUN")
    bars = daily.groupby(week).agg(open=("open", "first"), close=("close", "last"))
    bars.index = daily.index.to_series().groupby(week).first().dt.strftime("%Y-%m-%d")
    bars["ret_pct"] = (bars["close"] / bars["close"].shift() - 1) * 100
    return bars


def _unknown(days: pd.DataFrame) -> tuple[int, str, str]:
    """How many days have no SMA, the last of them and the first that has one."""
    empty = int(days["sma20"].isna().sum())
    return empty, days["day"].iloc[empty - 1], days["day"].iloc[empty]


def test_a_where_over_the_warm_up_says_the_rows_it_could_not_judge(engine_settings, days) -> None:
    """ "Days below the 20-day mean": the where dropped the first 19 days as unknown, and
    the days kept are of the days it could judge, not of all."""
    empty, last, first = _unknown(days)
    assert empty == 19
    below = int((days["close"] < days["sma20"]).sum())
    result = ask(
        {"map": SMA, "where": "close < sma20", "select": "count() as below"},
        engine_settings,
        **RTH_DAILY,
    )
    assert result.summary.value == below
    assert (
        f"The where dropped {empty} of the period's {len(days)} rows (2024-01-02 to {last}): "
        f"close < sma20 has no value there, {BEGINS}; it has one from {first} on. The {below} "
        f"rows kept are of the {len(days) - empty} it can judge."
    ) in result.metadata.warnings


def test_the_latest_rows_a_limit_lists_are_not_told_of_the_data_start(
    engine_settings, days
) -> None:
    """p48d C1: "SMA200 now" (sort by timestamp desc, limit 1) was told "sma200 has no value
    on 199 rows (2008-01-02 to 2008-10-07) … listed as n/a and left out of the mean" over one
    row of 2026 with a value, and "when did ES last close below its SMA50" of the 49 days
    the where could not judge in 2008. Neither row could be listed; the first rows listed,
    and the first day below the mean, still are told."""
    empty, last, first = _unknown(days)
    now = ask(
        {"map": SMA, "sort": "timestamp desc", "limit": 1, "select": ["close", "sma20"]},
        engine_settings,
        **RTH_DAILY,
    )
    assert now.table["sma20"].tolist() == pytest.approx([days["sma20"].iloc[-1]])
    assert not warnings_with(now, "has no value")
    earliest = ask(
        {"map": SMA, "limit": 3, "select": ["close", "sma20"]}, engine_settings, **RTH_DAILY
    )
    assert earliest.table["sma20"].isna().all()
    assert warnings_with(earliest, "has no value") == [
        f"sma20 has no value on {empty} rows (2024-01-02 to {last}), {BEGINS}: listed as n/a."
    ]

    below = days.index[days["close"] < days["sma20"]]
    query = {"map": SMA, "where": "close < sma20", "sort": "timestamp desc", "limit": 1}
    latest = ask(query, engine_settings, **RTH_DAILY)
    assert latest.table["date"].tolist() == [f"{below[-1]:%Y-%m-%d}"]
    assert not warnings_with(latest, "The where dropped")
    query["sort"] = "timestamp asc"
    first_below = ask(query, engine_settings, **RTH_DAILY)
    assert first_below.table["date"].tolist() == [f"{below[0]:%Y-%m-%d}"]
    assert warnings_with(first_below, "The where dropped") == [
        f"The where dropped {empty} of the period's {len(days)} rows (2024-01-02 to {last}): "
        f"close < sma20 has no value there, {BEGINS}; it has one from {first} on. The "
        f"{len(below)} rows kept are of the {len(days) - empty} it can judge."
    ]


def test_a_count_of_a_condition_says_the_rows_it_has_no_value_on(engine_settings, days) -> None:
    """count(cond) counts the true rows: unknown ones are not counted, and now said so,
    alone and as a share written with counts, with the rows it is over beside the value."""
    empty, last, first = _unknown(days)
    below = int((days["close"] < days["sma20"]).sum())
    clause = (
        f"close < sma20 has no value on {empty} of them (2024-01-02 to {last}), {BEGINS}; it "
        f"has one from {first} on."
    )
    result = ask(
        {"map": SMA, "select": "count(close < sma20) as below"}, engine_settings, **RTH_DAILY
    )
    assert result.summary.value == below
    assert result.summary.samples == {"below": len(days) - empty}
    said = f"below is over {len(days) - empty} of the {len(days)} rows kept: {clause}"
    assert said in result.metadata.warnings
    assert said in render_summary(result)
    share = ask(
        {"map": SMA, "select": "count(close < sma20) * 100 / count() as pct"},
        engine_settings,
        **RTH_DAILY,
    )
    assert share.summary.value == pytest.approx(below * 100 / len(days))
    assert f"pct is over {len(days) - empty} of the {len(days)} rows kept: {clause}" in (
        share.metadata.warnings
    )


def test_a_grouped_count_names_the_rows_with_no_value(engine_settings, days) -> None:
    empty, last, first = _unknown(days)
    month = days.index.month
    below = (days["close"] < days["sma20"]).groupby(month).sum()
    has = days["sma20"].notna().groupby(month)
    result = ask(
        {"map": SMA, "group_by": "month()", "select": "count(close < sma20) as below"},
        engine_settings,
        **RTH_DAILY,
    )
    assert result.table["below"].tolist() == below.tolist()
    assert (
        f"below is over the {len(days) - empty} of the {len(days)} rows kept that have a value "
        f"(the others are empty), in month 1 over {has.sum()[1]} of its {has.size()[1]} rows. "
        f"close < sma20 has no value on {empty} of them (2024-01-02 to {last}), {BEGINS}; it "
        f"has one from {first} on."
    ) in result.metadata.warnings
    # The months a limit shows hold none of them: nothing to say of a count.
    top = ask(
        {
            "map": SMA,
            "group_by": "month()",
            "select": "count(close < sma20) as below",
            "sort": "month desc",
            "limit": 2,
        },
        engine_settings,
        **RTH_DAILY,
    )
    assert top.table["month"].tolist() == [3, 2]
    assert not warnings_with(top, "has no value")


def test_nothing_is_said_where_every_row_has_its_history(engine_settings, days) -> None:
    """A period after the warm-up is given its history: every day has the mean."""
    late = days.loc["2024-02-15":]
    assert late["sma20"].notna().all()
    period = {"period": "2024-02-15:2024-03-28", "map": SMA}
    counted = ask(
        {**period, "select": "count(close < sma20) as below"}, engine_settings, **RTH_DAILY
    )
    assert counted.summary.value == int((late["close"] < late["sma20"]).sum())
    kept = ask(
        {**period, "where": "close < sma20", "select": "count()"}, engine_settings, **RTH_DAILY
    )
    for result in (counted, kept):
        assert not warnings_with(result, "has no value")
        assert result.summary.samples in (None, {})
    # One empty day of 61, the first day's missing previous close, is no news.
    up = ask({"select": "count(close > prev(close)) as up"}, engine_settings, **RTH_DAILY)
    assert up.summary.value == int((days["close"] > days["close"].shift()).sum())
    assert not warnings_with(up, "has no value")


def test_the_first_bar_of_a_ranking_is_said_with_the_form_from_its_open(
    engine_settings, weeks
) -> None:
    """ "The worst week": the data's first has no close before it; the sort ranks it last,
    now said, with the form that measures it from its open (one row listed: no mean to
    leave it out of, which a listing of every week has)."""
    assert np.isnan(weeks["ret_pct"].iloc[0]) and weeks["ret_pct"].iloc[1:].notna().all()
    query = {
        "period": WEEKS,
        "map": RET,
        "select": ["ret_pct", "close"],
        "sort": "ret_pct asc",
        "limit": 1,
    }
    result = ask(query, engine_settings, **RTH_WEEKLY)
    assert result.table["ret_pct"].tolist() == pytest.approx([weeks["ret_pct"].min()])
    form = '"ret_pct": "(close / coalesce(prev(close), open) - 1) * 100"'
    assert (
        f"ret_pct has no value on 2024-01-02, {BEGINS}: ranked last. "
        f"From its own open on the first bar: {form}."
    ) in result.metadata.warnings
    # The form, as said: the first week from its open, the others as before.
    whole = ask(
        {**query, "map": {"ret_pct": "(close / coalesce(prev(close), open) - 1) * 100"}},
        engine_settings,
        **RTH_WEEKLY,
    )
    first = (weeks["close"].iloc[0] / weeks["open"].iloc[0] - 1) * 100
    opened = weeks["ret_pct"].fillna(first)
    assert whole.table["ret_pct"].tolist() == pytest.approx([opened.min()])
    assert not warnings_with(whole, "has no value")
    listed = ask({"period": WEEKS, "map": RET}, engine_settings, **RTH_WEEKLY)
    assert listed.table["ret_pct"].tolist() == pytest.approx(weeks["ret_pct"].tolist(), nan_ok=True)
    assert [w for w in listed.metadata.warnings if w.startswith("ret_pct has no value")] == [
        f"ret_pct has no value on 2024-01-02, {BEGINS}: listed as n/a and left out of the mean. "
        f"From its own open on the first bar: {form}."
    ]


def test_the_first_day_of_a_daily_return_is_only_said_to_be_left_out(engine_settings, days) -> None:
    """p35b #12 "the first trading day of each year": the data's first day has no close
    before it. Its open-to-close is another measure (it leaves out the gap from the close
    before), and the form from its open moved the mean from -0.434% to -0.199%: on daily
    bars the day is said to be left out, with no form that stands its open in."""
    ret = (days["close"] / days["close"].shift() - 1) * 100
    first = ret.groupby(days.index.to_period("M")).head(1)
    assert len(first) == 3 and np.isnan(first.iloc[0])
    result = ask(
        {"map": RET, "where": "trading_day('month') == 1", "select": "mean(ret_pct) as m"},
        engine_settings,
        **RTH_DAILY,
    )
    assert result.summary.value == pytest.approx(first.mean())
    assert (
        f"m is over 2 of the 3 rows kept: ret_pct has no value on 2024-01-02, {BEGINS}."
    ) in result.metadata.warnings
    assert not warnings_with(result, "coalesce")
    listed = ask({"map": RET, "sort": "ret_pct asc"}, engine_settings, **RTH_DAILY)
    assert listed.table["ret_pct"].tolist() == pytest.approx(
        ret.sort_values(na_position="last").tolist(), nan_ok=True
    )
    assert not warnings_with(listed, "coalesce")


def test_the_first_week_of_a_count_of_rises_is_said(engine_settings, weeks) -> None:
    """ "How many weeks rose": the first has no previous close to rise from."""
    rose = int((weeks["close"] > weeks["close"].shift()).sum())
    n = len(weeks)
    query = {"period": WEEKS, "select": "count(close > prev(close)) as up"}
    result = ask(query, engine_settings, **RTH_WEEKLY)
    assert result.summary.value == rose
    assert (
        f"up is over {n - 1} of the {n} rows kept: close > prev(close) has no value on "
        f"2024-01-02, {BEGINS}. From its own open on the first bar: count(close > "
        "coalesce(prev(close), open))."
    ) in result.metadata.warnings
    where = {"period": WEEKS, "where": "close > prev(close)", "select": "count()"}
    kept = ask(where, engine_settings, **RTH_WEEKLY)
    assert kept.summary.value == rose
    assert (
        f"The where dropped 1 of the period's {n} rows (2024-01-02): close > prev(close) has "
        f"no value there, {BEGINS}. The {rose} rows kept are of the {n - 1} it can judge. "
        'From its own open on the first bar: "where": "close > coalesce(prev(close), open)".'
    ) in kept.metadata.warnings


def test_the_chart_tells_a_bar_with_no_value_from_a_flat_one(engine_settings, weeks) -> None:
    """ES's yearly returns drew 2008 (no close before it) as an empty slot, the same as flat
    2011: a bar with no value now says n/a, and a zero is a stub on the base."""
    # Flat on the weeks that closed up (after the first, which has no close before it).
    flat = "if(close > open and prev(close) > 0, 0, (close / prev(close) - 1) * 100)"
    result = ask({"period": WEEKS, "map": {"ret_pct": flat}}, engine_settings, **RTH_WEEKLY)
    up = (weeks["close"] > weeks["open"]) & weeks["close"].shift().notna()
    values = weeks["ret_pct"].mask(up, 0.0)
    assert result.table["ret_pct"].tolist() == pytest.approx(values.tolist(), nan_ok=True)
    assert values.isna().sum() == 1
    fig = draw_chart(result)
    assert fig is not None
    fig.canvas.draw()
    panel = fig.axes[-1]
    marked = [t for t in panel.texts if t.get_text() == "n/a"]
    stubs = [line for line in panel.lines if list(line.get_ydata()) == [0, 0]]
    assert len(marked) == int(values.isna().sum())
    assert len(stubs) == int((values == 0).sum()) > 0


def test_an_if_empty_by_design_is_said_only_where_its_indicator_is(engine_settings, days) -> None:
    """``mean(if(x, ret, 0 / 0))``, the form Barb's own hint gives for "the return after a
    signal", is empty wherever x is false. RSI(5) reaches 129 bars back (its seed's weight
    decays), past all 61 of these days, and the warning had said every day without a signal
    was empty "as it needs bars from before 2024-01-02", and that it had a value from the
    first signal on (p34f #20, NQ 2008-2009: 378 rows). Only the first 5 days, where RSI has
    no value (TA-Lib's), are empty for that reason."""
    rsi = pd.Series(talib.RSI(days["close"].to_numpy(), 5), index=days.index)
    ret = (days["close"].shift(-1) / days["close"] - 1) * 100
    signal = rsi > 50
    empty = int(rsi.isna().sum())
    assert empty == 5 and (~signal & rsi.notna()).sum() > empty  # days without one, too
    result = ask(
        {
            "map": {"r": "rsi(close, 5)", "x": "r > 50", "ret": "(next(close) / close - 1) * 100"},
            "select": "mean(if(x, ret, 0 / 0)) as after",
        },
        engine_settings,
        **RTH_DAILY,
    )
    assert result.summary.value == pytest.approx(ret[signal].mean())
    last = days["day"].iloc[empty - 1]
    kept = int(ret[signal].notna().sum())
    assert warnings_with(result, "has no value") == [
        f"after is over {kept} of the {len(days)} rows kept: if(x, ret, 0 / 0) has no value "
        f"on {empty} of them (2024-01-02 to {last}), {BEGINS}."
    ]


def test_a_running_total_from_the_datas_first_day_says_it_leaves_that_day_out(
    engine_settings, days
) -> None:
    """ "NQ's return in 2008" as last((cumprod(1 + r) - 1) * 100) ran from the close of the
    data's first day, with no word (p35d #23): its open-to-close move was left out, while
    the mean of r said so. Said now, with the form from its open, which gives pandas'
    return from the first open; a running total from a later period's start is not."""
    r = days["close"] / days["close"].shift() - 1
    january = days.index.month == 1
    from_close = days["close"][january].iloc[-1] / days["close"].iloc[0] - 1
    from_open = days["close"][january].iloc[-1] / days["open"].iloc[0] - 1
    assert np.prod(1 + r[january].dropna()) - 1 == pytest.approx(from_close)  # the case
    assert round(from_close * 100, 2) != round(from_open * 100, 2)
    query = {
        "period": "2024-01",
        "map": {"r": "close / prev(close) - 1", "cum": "(cumprod(1 + r) - 1) * 100"},
        "select": "last(cum) as ret",
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    assert result.summary.value == pytest.approx(from_close * 100)
    second = days.index[1].strftime("%Y-%m-%d")
    assert warnings_with(result, "has no value") == [
        f"r has no value on 2024-01-02, {BEGINS}: cumprod(1 + r) leaves it out, running "
        f'from {second}. From its own open on the first bar: "r": "close / '
        'coalesce(prev(close), open) - 1".'
    ]
    opened = {**query["map"], "r": "close / coalesce(prev(close), open) - 1"}
    whole = ask({**query, "map": opened}, engine_settings, **RTH_DAILY)
    assert whole.summary.value == pytest.approx(from_open * 100)
    assert not warnings_with(whole, "has no value")
    summed = {"cum": "cumsum(close - prev(close), 'month')"}
    points = ask({**query, "map": summed}, engine_settings, **RTH_DAILY)
    assert points.summary.value == pytest.approx(days["close"][january].diff().sum())
    assert warnings_with(points, "cumsum(close - prev(close), 'month') leaves it out")
    later = ask({**query, "period": "2024-02"}, engine_settings, **RTH_DAILY)
    assert np.prod(1 + r[days.index.month == 2]) - 1 == pytest.approx(later.summary.value / 100)
    assert not warnings_with(later, "has no value")


def test_a_first_pick_empty_at_the_datas_start_says_why_and_the_form_from_the_open(
    engine_settings, days
) -> None:
    """ "NQ's 2008 return" on daily bars, last(close) / first(before) with before =
    prev(close), read start=n/a, ret_pct=n/a with no word, where yearly bars said why and
    gave the form from the first open (p47a Q22). Said now, ungrouped and for the first
    group, with that form, which gives pandas' return from the first open; nothing from a
    later period's start."""
    january = days.index.month == 1
    from_open = (days["close"][january].iloc[-1] / days["open"].iloc[0] - 1) * 100
    select = ["first(before) as start", "(last(close) / first(before) - 1) * 100 as ret_pct"]
    query = {"period": "2024-01", "map": {"before": "prev(close)"}, "select": select}
    result = ask(query, engine_settings, **RTH_DAILY)
    assert all(np.isnan(v) for v in result.summary.values.values())
    said = (
        f"are n/a: before has no value on 2024-01-02, the period's first row, {BEGINS}; "
        'first(before) takes it from there. From its own open on the first bar: "before": '
        '"coalesce(prev(close), open)".'
    )
    assert warnings_with(result, "n/a:") == [f"start and ret_pct {said}"]
    opened = ask(
        {**query, "map": {"before": "coalesce(prev(close), open)"}}, engine_settings, **RTH_DAILY
    )
    assert opened.summary.values["ret_pct"] == pytest.approx(from_open)
    assert not warnings_with(opened, "n/a:")
    by_month = {**query, "period": "2024-01:2024-02", "group_by": "month()"}
    grouped = ask(by_month, engine_settings, **RTH_DAILY)
    assert grouped.table["ret_pct"].isna().tolist() == [True, False]
    assert warnings_with(grouped, "n/a:") == [f"start and ret_pct of month 1 {said}"]
    inline = {"period": "2024-01", "select": "(last(close) / first(prev(close)) - 1) * 100 as r"}
    assert warnings_with(ask(inline, engine_settings, **RTH_DAILY), "n/a:") == [
        "r is n/a: prev(close) has no value on 2024-01-02, the period's first row, "
        f"{BEGINS}; first(prev(close)) takes it from there. From its own open on the first "
        "bar: coalesce(prev(close), open)."
    ]
    later = ask({**query, "period": "2024-02"}, engine_settings, **RTH_DAILY)
    assert later.summary.values["start"] == days["close"][january].iloc[-1]
    assert not warnings_with(later, "n/a:")


def test_records_against_a_running_high_from_the_datas_first_bar_say_so(
    engine_settings, days
) -> None:
    """ "New all-time highs per year" counted 11 in NQ's 2008, highs over the data's first
    close (2008-01-02), with nothing said (p46t E). Said now with pandas' count of them in
    the data's first year; not of a period starting later (the running high starts there),
    nor of a drawdown from the running high (no record counted)."""
    close = days["close"]
    highs = int((close > close.cummax().shift()).sum())
    assert highs > 0
    query = {"map": {"ath": "close > prev(cummax(close))"}, "select": "count(ath) as new_highs"}
    result = ask(query, engine_settings, **RTH_DAILY)
    assert result.summary.value == highs
    assert warnings_with(result, "runs from the data's first bar") == [
        f"cummax(close) runs from the data's first bar (2024-01-02): the {highs} rows where "
        "close > prev(cummax(close)) holds in 2024, the data's first year, are highs since "
        "then, not of all time; the prices before the data are not in it."
    ]
    later = ask({**query, "period": "2024-02:"}, engine_settings, **RTH_DAILY)
    assert not warnings_with(later, "runs from the data's first bar")
    drawdown = {"map": {"dd": "close / cummax(close) - 1"}, "select": "min(dd)"}
    deepest = ask(drawdown, engine_settings, **RTH_DAILY)
    assert deepest.summary.value == pytest.approx((close / close.cummax() - 1).min())
    assert not warnings_with(deepest, "runs from the data's first bar")


def test_the_first_years_records_are_not_said_of_rows_a_then_stage_drops(
    engine_settings, days
) -> None:
    """ES's 2022 fall kept by then.where from all history's drawdown episodes was told of
    the 7 highs in 2008, the data's first year, which no row listed (p47g d5). The days
    listed, kept by then.where: a span holding none of pandas' new highs says nothing, one
    holding some keeps the warning."""
    close = days["close"]
    new_high = close > close.cummax().shift()
    quiet = (days.index >= "2024-01-10") & (days.index <= "2024-02-20")
    assert not new_high[quiet].any() and new_high[days.index <= "2024-01-05"].any()
    query = {
        "map": {"ath": "close > prev(cummax(close))"},
        "select": ["date()", "close", "ath"],
        "then": {"where": "date >= '2024-01-10' and date <= '2024-02-20'"},
    }
    said = "runs from the data's first bar"
    quiet_rows = ask(query, engine_settings, **RTH_DAILY)
    assert len(quiet_rows.table) == int(quiet.sum())
    assert not quiet_rows.table["ath"].astype(bool).any()
    assert not warnings_with(quiet_rows, said)
    early = {**query, "then": {"where": "date <= '2024-01-05'"}}
    assert len(warnings_with(ask(early, engine_settings, **RTH_DAILY), said)) == 1


def test_a_group_the_warm_up_leaves_half_empty_is_hollow_and_unranked(
    engine_settings, days
) -> None:
    """The share of days above the 200-day mean by year drew 2008 (60 of its 259 days)
    solid, headlined "lowest 2008 0.0%". Here January holds the 20-day mean on 1 of its 20
    days: hollow, named in a note with those counts, never the headline's."""
    month = days.index.month
    has = days["sma20"].notna().groupby(month)
    valued = days[days["sma20"].notna()]
    share = (valued["close"] > valued["sma20"]).groupby(valued.index.month).mean()
    assert has.sum()[1] <= has.size()[1] / 2 and (has.sum()[[2, 3]] == has.size()[[2, 3]]).all()
    result = ask(
        {"map": SMA, "group_by": "month()", "select": "mean(close > sma20) as share"},
        engine_settings,
        **RTH_DAILY,
    )
    assert result.table["share"].tolist() == pytest.approx(share.tolist())
    fig = draw_chart(result)
    assert fig is not None
    fig.canvas.draw()
    (bars,) = [c for c in fig.axes[-1].collections if isinstance(c, PolyCollection)]
    faces = [tuple(face[:3]) == (1.0, 1.0, 1.0) for face in bars.get_facecolors()]
    assert faces == [True, False, False]
    texts = " ".join(t.get_text() for t in fig.findobj(Text))
    assert f"Jan: value over {has.sum()[1]} of its {has.size()[1]} rows" in texts
    head = chart_headline(result) or ""
    named = {"Feb": share[2], "Mar": share[3]}
    high, low = max(named, key=named.get), min(named, key=named.get)
    # One year of months, each one stretch no test can compare, is spanned, not crowned
    # (p48i 3): "share: Mar 85.0% to Feb 85.7% (too few years to compare)".
    assert head.index(low) < head.index(high) and "too few years" in head, head
    assert "Jan" not in head and "highest" not in head, head


@pytest.fixture(scope="module")
def with_es(tmp_path_factory: pytest.TempPathFactory, minutes: pd.DataFrame) -> tuple:
    """The hand-made NQ bars and an "ES" of their prices a quarter as high, tilted up bar by
    bar (so the two returns differ), in one data directory."""
    settings = EngineSettings(data_dir=tmp_path_factory.mktemp("nq_es"))
    write_minutes(minutes, "NQ", settings, "hand-made NQ")
    es = minutes.copy()
    tilt = 0.25 * (1 + 0.00002 * np.arange(len(es)))
    for column in ("open", "high", "low", "close"):
        es[column] = es[column] * tilt
    write_minutes(es, "ES", settings, "hand-made ES")
    return settings, es


def test_a_joined_return_from_the_first_bar_gets_its_own_open_form(minutes, with_es) -> None:
    """NQ's and ES's weekly returns from the data's first week: the form from the first
    open was given for NQ's (prev(close)) alone, so the query the model ran again still left
    the week out and got the same hint (p37a Q17). Both are given; run, they leave no week
    out, and the mean of NQ's minus ES's returns is pandas', the first week's from its opens."""
    settings, es = with_es
    maps = {
        "nq_ret": "close / prev(close) - 1",
        "es_ret": "es_close / prev(es_close) - 1",
        "rel": "nq_ret - es_ret",
    }
    query = {**RTH_WEEKLY, "period": WEEKS, "join": {"instrument": "ES"}, "select": "mean(rel)"}
    said = warnings_with(ask({**query, "map": maps}, settings), "From its own open")
    nq_form = "close / coalesce(prev(close), open) - 1"
    es_form = "es_close / coalesce(prev(es_close), es_open) - 1"
    assert len(said) == 1
    assert f'"nq_ret": "{nq_form}", "es_ret": "{es_form}".' in said[0]
    again = ask({**query, "map": {**maps, "nq_ret": nq_form, "es_ret": es_form}}, settings)
    assert not warnings_with(again, "has no value")
    nq, es_weeks = _weekly(minutes), _weekly(es)

    def returns(bars: pd.DataFrame) -> pd.Series:
        before = bars["close"].shift().fillna(bars["open"])
        return bars["close"] / before - 1

    assert again.summary.value == pytest.approx((returns(nq) - returns(es_weeks)).mean())


JOINED = {
    "join": {"instrument": "ES"},
    "map": {"nq_ret": "close / prev(close) - 1", "es_ret": "es_close / prev(es_close) - 1"},
}
FIRST_DAYS = "2024-01-02:2024-01-12"


def test_a_joined_pair_empty_on_the_first_day_is_said_of_both(minutes, with_es) -> None:
    """Correlating NQ's and ES's daily returns from the data's first day: both have no
    close before it, and the warning named nq_ret alone, so es_ret read as over every row
    (p45d #6). Each column is named once, where pandas finds both empty; the value is
    pandas' correlation over the days with both."""
    settings, es = with_es
    nq_days, es_days = rth_daily(minutes).loc[:"2024-01-12"], rth_daily(es).loc[:"2024-01-12"]
    nq_ret, es_ret = nq_days["close"].pct_change(), es_days["close"].pct_change()
    assert nq_ret.isna().tolist() == es_ret.isna().tolist() == [True] + [False] * 8
    query = {**RTH_DAILY, **JOINED, "period": FIRST_DAYS}
    result = ask({**query, "select": "correlation(nq_ret, es_ret) as r"}, settings)
    assert result.summary.value == pytest.approx(nq_ret.corr(es_ret))
    assert warnings_with(result, "has no value") + warnings_with(result, "have no value") == [
        "r is over 8 of the 9 rows kept: nq_ret and es_ret have no value on 2024-01-02, "
        "as they need bars from before 2024-01-02, where the data begins."
    ]
    listed = ask({**query, "select": ["nq_ret", "es_ret"]}, settings)
    assert listed.table["es_ret"].tolist() == pytest.approx(es_ret.tolist(), nan_ok=True)
    assert warnings_with(listed, "have no value") == [
        "nq_ret and es_ret have no value on 2024-01-02, as they need bars from before "
        "2024-01-02, where the data begins: listed as n/a and left out of their means."
    ]


def test_joined_returns_from_the_first_week_give_both_open_forms_once(minutes, with_es) -> None:
    """Weekly means and compounded returns of NQ and ES from the data's first week: the
    means' warning said "From its own open on the first bar" twice, once a form, and the
    running products named NQ's alone. One sentence now gives both forms, and both runs are
    named, running from the second week as pandas' returns do."""
    settings, _ = with_es
    nq_form = '"nq_ret": "close / coalesce(prev(close), open) - 1"'
    es_form = '"es_ret": "es_close / coalesce(prev(es_close), es_open) - 1"'
    opened = f" From its own open on the first bar: {nq_form}, {es_form}."
    query = {**RTH_WEEKLY, **JOINED, "period": WEEKS}
    means = ask({**query, "select": ["mean(nq_ret) as nq", "mean(es_ret) as es"]}, settings)
    (said,) = warnings_with(means, "From its own open")
    assert said.count("From its own open") == 1 and said.endswith(opened)
    second = _weekly(minutes).index[1]
    runs = ask(
        {**query, "select": ["last(cumprod(1 + nq_ret)) as nq", "last(cumprod(1 + es_ret)) as es"]},
        settings,
    )
    assert warnings_with(runs, "leave them out") == [
        "nq_ret and es_ret have no value on 2024-01-02, as they need bars from before "
        f"2024-01-02, where the data begins: cumprod(1 + nq_ret) and cumprod(1 + es_ret) "
        f"leave them out, running from {second}.{opened}"
    ]
