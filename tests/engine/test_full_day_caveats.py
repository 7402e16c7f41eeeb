"""A part-day session's extreme price or volume statistic, said beside the full day's.

"When was the maximum?" as RTH daily max(high) answered the RTH high, while the full day
(ETH) had gone higher before the cash open; "average volume?" gave RTH's two thirds of the
day's volume. The full day's values are computed here with pandas from the hand-made minute
bars (their own trading date: a bar from 18:00 on counts for the next day), never through
Barb.
"""

from __future__ import annotations

import pandas as pd
import pytest
import talib
from asking import RTH_DAILY, ask

from barb.charts import draw_chart
from barb.result import Result, short_value

RTH = (570, 1020)  # 09:30-17:00, minutes of the day


@pytest.fixture(scope="module")
def days(minutes: pd.DataFrame) -> pd.DataFrame:
    """Per trading date: the full day's and RTH's high, low and volume, and the clock of the
    full day's first highest and lowest minute."""
    bars = minutes.copy()
    stamp = bars["timestamp"]
    bars["date"] = (stamp + pd.Timedelta(hours=6)).dt.normalize()
    minute = stamp.dt.hour * 60 + stamp.dt.minute
    full = bars.groupby("date").agg(
        high=("high", "max"), low=("low", "min"), volume=("volume", "sum")
    )
    full["high_at"] = bars.loc[bars.groupby("date")["high"].idxmax(), "timestamp"].to_numpy()
    full["low_at"] = bars.loc[bars.groupby("date")["low"].idxmin(), "timestamp"].to_numpy()
    rth = bars[(minute >= RTH[0]) & (minute < RTH[1])].groupby("date")
    part = rth.agg(rth_high=("high", "max"), rth_low=("low", "min"), rth_volume=("volume", "sum"))
    return full.join(part, how="inner")


def _full_day(result: Result) -> list[str]:
    return [w for w in result.metadata.warnings if "the full day (ETH)" in w]


def test_rth_high_is_said_beside_the_full_days_higher_one(engine_settings, days):
    result = ask(
        {"select": ["max(high)", "arg_max(date(), high) as date"]}, engine_settings, **RTH_DAILY
    )
    assert result.summary.values["max_high"] == days["rth_high"].max()
    top = days["high"].idxmax()
    assert days.loc[top, "high"] > days["rth_high"].max()  # the data has the case
    clock = days.loc[top, "high_at"].strftime("%H:%M")
    assert _full_day(result) == [
        "max_high and date are the highest high of RTH (09:30-17:00) only, a part of the "
        f"day: the full day (ETH) went to {days.loc[top, 'high']:.10g} on {top.date()} at "
        f'{clock}, outside RTH. The full day\'s: "session": "ETH".'
    ]


def test_rth_low_over_a_period_and_a_mapped_column(engine_settings, days):
    march = days.loc["2024-03"]
    result = ask(
        {"period": "2024-03", "map": {"lo": "low"}, "select": "min(lo) as bottom"},
        engine_settings,
        **RTH_DAILY,
    )
    assert result.summary.value == march["rth_low"].min()
    bottom = march["low"].idxmin()
    assert march.loc[bottom, "low"] < march["rth_low"].min()  # the data has the case
    clock = march.loc[bottom, "low_at"].strftime("%H:%M")
    assert _full_day(result) == [
        "bottom is the lowest low of RTH (09:30-17:00) only, a part of the day: the full "
        f"day (ETH) went to {march.loc[bottom, 'low']:.10g} on {bottom.date()} at {clock}, "
        'outside RTH. The full day\'s: "session": "ETH".'
    ]


def test_an_evening_extreme_is_said_on_its_calendar_day(engine_settings, days):
    """The full day's low of February came at 18:31 the evening before its trading date:
    said on that evening's calendar date with the trading date beside it, not the trading
    date with 18:31, an evening a day too late (p47c A)."""
    february = days.loc["2024-02"]
    result = ask({"period": "2024-02", "select": "min(low)"}, engine_settings, **RTH_DAILY)
    bottom = february["low"].idxmin()
    at = february.loc[bottom, "low_at"]
    assert february.loc[bottom, "low"] < february["rth_low"].min()  # the data has the case
    assert at.hour >= 18 and at.date() < bottom.date()  # the evening before its trading date
    assert _full_day(result) == [
        "min_low is the lowest low of RTH (09:30-17:00) only, a part of the day: the full "
        f"day (ETH) went to {february.loc[bottom, 'low']:.10g} on {at.date()} at "
        f"{at:%H:%M} (trading day {bottom.date()}), outside RTH. The full day's: "
        '"session": "ETH".'
    ]


def test_rth_volume_is_said_with_the_full_days_mean_and_median(engine_settings, days):
    result = ask(
        {"select": ["mean(volume)", "median(volume)", "count()"]}, engine_settings, **RTH_DAILY
    )
    assert result.summary.values["mean_volume"] == pytest.approx(days["rth_volume"].mean())
    share = days["rth_volume"].sum() / days["volume"].sum()
    assert _full_day(result) == [
        "mean_volume and median_volume are the volume of RTH (09:30-17:00) only, "
        f"{share:.0%} of the full day's: over the same {len(days)} days the full day (ETH) "
        f"averages {round(days['volume'].mean()):,} contracts, median "
        f"{round(days['volume'].median()):,}. The full day's (what the exchange publishes as "
        'daily volume): "session": "ETH".'
    ]


@pytest.mark.parametrize(
    ("session", "select"),
    [
        ("ETH", ["max(high)", "mean(volume)"]),  # the full day itself
        ("RTH_OPEN", ["max(high)", "mean(volume)"]),  # a part of the day asked as such
        ("RTH", ["max(low)", "max(volume)", "mean(range)"]),  # no extreme price, no mean volume
    ],
)
def test_nothing_is_said_where_nothing_is_left_out(engine_settings, session, select):
    assert (
        _full_day(ask({"select": select}, engine_settings, **RTH_DAILY | {"session": session}))
        == []
    )


def test_rows_listed_and_groups_are_not_looked_at(engine_settings):
    listed = ask(
        {"select": ["date()", "high"], "sort": "high desc", "limit": 1},
        engine_settings,
        **RTH_DAILY,
    )
    grouped = ask({"group_by": "month()", "select": "max(high)"}, engine_settings, **RTH_DAILY)
    assert _full_day(listed) == _full_day(grouped) == []


@pytest.mark.parametrize("month", ["2024-01", "2024-02", "2024-03"])
def test_a_date_alone_is_said_only_when_the_full_day_peaked_on_another(
    engine_settings, days, month
):
    """arg_max(date(), high) answers a date: the full day's higher high on that same date
    changes no answer (its price is not in the result)."""
    part = days.loc[month]
    result = ask(
        {"period": month, "select": "arg_max(date(), high) as d"}, engine_settings, **RTH_DAILY
    )
    assert pd.Timestamp(result.summary.value) == part["rth_high"].idxmax()
    said = _full_day(result)
    assert len(said) == int(part["high"].idxmax() != part["rth_high"].idxmax())
    assert all(str(part["high"].idxmax().date()) in text for text in said)


# --- weekly, monthly and yearly bars (p47b #11) ----------------------------------------------


def test_a_monthly_bar_s_rth_high_is_said_beside_the_full_days(engine_settings, days):
    """ "The high of March" as RTH's monthly bar read RTH's high with nothing said, where the
    same question over daily bars named the full day's higher one."""
    march = days.loc["2024-03"]
    result = ask(
        {"from": "monthly", "period": "2024-03", "select": ["high", "low"]},
        engine_settings,
        session="RTH",
    )
    assert result.table["high"].iloc[0] == march["rth_high"].max()
    top, bottom = march["high"].idxmax(), march["low"].idxmin()
    assert march.loc[top, "high"] > march["rth_high"].max()  # the data has the case
    assert march.loc[bottom, "low"] < march["rth_low"].min()
    assert _full_day(result) == [
        "high is the highest high of RTH (09:30-17:00) only, a part of the day: the full day "
        f"(ETH) went to {march.loc[top, 'high']:.10g} on {top.date()} at "
        f'{march.loc[top, "high_at"]:%H:%M}, outside RTH. The full day\'s: "session": "ETH".',
        "low is the lowest low of RTH (09:30-17:00) only, a part of the day: the full day "
        f"(ETH) went to {march.loc[bottom, 'low']:.10g} on {bottom.date()} at "
        f'{march.loc[bottom, "low_at"]:%H:%M}, outside RTH. The full day\'s: "session": "ETH".',
    ]


def test_weekly_bars_count_the_weeks_the_full_day_went_further(engine_settings, days):
    result = ask(
        {"from": "weekly", "period": "2024-02-05:2024-03-01", "select": ["open", "high"]},
        engine_settings,
        session="RTH",
    )
    span = days.loc["2024-02-05":"2024-03-01"]
    week = span.index.to_period("W")
    weeks = span.groupby(week).agg(high=("high", "max"), rth_high=("rth_high", "max"))
    assert result.table["high"].tolist() == weeks["rth_high"].tolist()
    further = weeks[weeks["high"] > weeks["rth_high"]]
    assert 0 < len(further) < len(weeks)  # the data has both
    # The week it went furthest on is named (p47g q25: the first one's was the smallest).
    gaps = further["high"] - further["rth_high"]
    widest = gaps.idxmax()
    assert (gaps < gaps.max()).any() and widest != further.index[0]  # the data has the case
    first = span[week == widest]["high"].idxmax()
    at = pd.Timestamp(span.loc[first, "high_at"])  # an evening bar: the day before its date
    when = f"{at:%Y-%m-%d} at {at:%H:%M}"
    if at.date() != first.date():
        when += f" (trading day {first.date()})"
    assert _full_day(result) == [
        "high is the highest high of RTH (09:30-17:00) only, a part of the day: the full day "
        f"(ETH) went further on {len(further)} of the {len(weeks)} bars, the most to "
        f"{span.loc[first, 'high']:.10g} on {when} ({gaps.max():.10g} past its "
        f"{further.loc[widest, 'rth_high']:.10g}), outside RTH. "
        'The full day\'s: "session": "ETH".'
    ]


def test_a_listing_of_highs_and_lows_draws_both(engine_settings, days):
    """RTH's monthly high and low, asked together, drew the high alone (p47g q25): each is a
    line of pandas' RTH values per week."""
    result = ask(
        {"from": "weekly", "period": "2024-02-05:2024-03-01", "select": ["high", "low"]},
        engine_settings,
        session="RTH",
    )
    span = days.loc["2024-02-05":"2024-03-01"]
    weeks = span.groupby(span.index.to_period("W")).agg(
        high=("rth_high", "max"), low=("rth_low", "min")
    )
    fig = draw_chart(result, language="en")
    assert fig is not None
    drawn = {
        line.get_label(): list(line.get_ydata())
        for ax in fig.axes
        for line in ax.get_lines()
        if line.get_label() in ("high", "low")
    }
    assert drawn == {"high": weeks["high"].tolist(), "low": weeks["low"].tolist()}


def test_full_session_and_price_free_long_bars_say_nothing(engine_settings):
    eth = ask({"from": "monthly", "period": "2024-03"}, engine_settings, session="ETH")
    rth = ask(
        {"from": "monthly", "period": "2024-03", "select": ["open", "close"]},
        engine_settings,
        session="RTH",
    )
    assert _full_day(eth) == [] and _full_day(rth) == []


@pytest.fixture(scope="module")
def session_bars(minutes: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Daily open, high, low, close per trading date of the full day and of RTH."""
    bars = minutes.copy()
    stamp = bars["timestamp"]
    bars["date"] = (stamp + pd.Timedelta(hours=6)).dt.normalize()
    minute = stamp.dt.hour * 60 + stamp.dt.minute
    rth = bars[(minute >= RTH[0]) & (minute < RTH[1])]
    ohlc = {"open": "first", "high": "max", "low": "min", "close": "last"}
    return {
        "ETH": bars.groupby("date").agg(ohlc),
        "RTH": rth.groupby("date").agg(ohlc),
    }


def test_rth_atr_is_said_beside_the_full_days(engine_settings, session_bars):
    """ATR(14) "now" on RTH's daily bars read RTH's highs and lows only; the full day's bars
    (TA-Lib over them) give another value, said with the form that reads it (p48d M2)."""
    atr = {name: talib.ATR(d["high"], d["low"], d["close"], 14) for name, d in session_bars.items()}
    day = atr["RTH"].index[-1]
    part, whole = atr["RTH"].iloc[-1], atr["ETH"].loc[day]
    assert abs(whole / part - 1) >= 0.05  # the data has the case
    query = {"map": {"atr14": "atr(14)"}, "sort": "timestamp desc", "limit": 1}
    result = ask(query | {"select": ["close", "atr14"]}, engine_settings, **RTH_DAILY)
    said = [w for w in result.metadata.warnings if w.startswith("atr14 is read")]
    assert said == [
        "atr14 is read from RTH (09:30-17:00) bars only, a part of the day: on full-day (ETH) "
        f"bars, what a daily chart shows, it is {short_value(whole):.10g} on {day.date()}, "
        f'{abs(whole / part - 1):.0%} more. The full day\'s: "session": "ETH".'
    ]
    # A map column read through another: ATR in % of the close (TA-Lib's NATR).
    chained = {"atr14": "atr(14)", "natr": "atr14 / close * 100"}
    natr = ask(query | {"map": chained, "select": ["natr"]}, engine_settings, **RTH_DAILY)
    eth = session_bars["ETH"]
    full = talib.NATR(eth["high"], eth["low"], eth["close"], 14).loc[day]
    [said] = [w for w in natr.metadata.warnings if w.startswith("natr is read")]
    assert f"it is {short_value(full):.10g} on {day.date()}" in said
    mean = ask({"select": "mean(atr(14)) as m"}, engine_settings, **RTH_DAILY)
    assert mean.summary.value == pytest.approx(atr["RTH"].mean())
    shift = atr["ETH"].loc[atr["RTH"].index].mean() / atr["RTH"].mean() - 1
    assert [w for w in mean.metadata.warnings if w.startswith("m is read")] == [
        "m is read from RTH (09:30-17:00) bars only, a part of the day: on full-day (ETH) "
        f"bars, what a daily chart shows, over the same {len(atr['RTH'])} days it is "
        f"{short_value(atr['ETH'].loc[atr['RTH'].index].mean()):.10g}, {shift:.0%} more. The "
        'full day\'s: "session": "ETH".'
    ]


@pytest.mark.parametrize(
    ("session", "column"),
    [
        ("ETH", "atr(14)"),  # the full day itself
        ("RTH", "rsi(close, 14)"),  # a line of the close, which RTH shares with the full day
    ],
)
def test_no_full_day_indicator_where_the_bars_are_the_days(engine_settings, session, column):
    query = {"map": {"x": column}, "sort": "timestamp desc", "limit": 1, "select": ["close", "x"]}
    result = ask(query, engine_settings, **RTH_DAILY | {"session": session})
    assert [w for w in result.metadata.warnings if w.startswith("x is read")] == []


def _atr_by_day(session_bars: dict[str, pd.DataFrame]) -> dict[str, pd.Series]:
    return {n: talib.ATR(d["high"], d["low"], d["close"], 14) for n, d in session_bars.items()}


@pytest.mark.parametrize(
    "period",
    [
        "2024-02-01:2024-03-15",  # ETH ranks 46.88 in the period, 38.46 over all history
        "2024-03-01:2024-03-15",  # ETH's rank is RTH's (54.55): nothing to say of it
        "last_20_bars",  # the last 20 RTH days: from 2024-03-01, where ETH's ranks 90
    ],
)
def test_a_rank_of_the_atr_is_the_full_days_rank_in_the_period(
    engine_settings, session_bars, period
):
    """rank(atr14) over "the last year" was said on the full day's bars as all history's
    rank, in percent of itself: "89.62 … 34% more" where ETH over that year ranks 64.48
    (p48f W1). Ranked with pandas among the period's ETH days, said as a rank."""
    atr = _atr_by_day(session_bars)
    query = {
        "period": period,
        "map": {"atr14": "atr(14)", "atr_rank": "rank(atr14)"},
        "sort": "timestamp desc",
        "limit": 1,
        "select": ["atr14", "atr_rank"],
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    [row] = result.table.to_dict("records")
    day = pd.Timestamp(row["date"])
    first = result.metadata.period_start  # the period's first RTH day
    ranks = {
        name: line.loc[pd.Timestamp(first) : day].rank(method="max", pct=True).loc[day] * 100
        for name, line in atr.items()
    }
    assert row["atr_rank"] == pytest.approx(ranks["RTH"])
    said = [w for w in result.metadata.warnings if w.startswith("atr_rank is read")]
    if abs(ranks["ETH"] - ranks["RTH"]) < 5:  # 5 percentile points: not worth a word
        assert said == []
        return
    assert said == [
        "atr_rank is read from RTH (09:30-17:00) bars only, a part of the day: on full-day "
        f"(ETH) bars, what a daily chart shows, it is {short_value(ranks['ETH']):.10g} on "
        f"{day.date()}, against {short_value(ranks['RTH']):.10g}. The full day's: "
        '"session": "ETH".'
    ]


def test_grouped_atr_percent_is_said_beside_the_full_days(engine_settings, session_bars):
    """ATR in percent of the close by month (the form the reference recommends across
    years) said nothing, though the full day's is higher in every group (p48f M7): one
    sentence with the range of the months' differences, from TA-Lib's NATR."""
    query = {
        "map": {"atr14": "atr(14)"},
        "group_by": "month()",
        "select": "mean(atr14 / close * 100) as atr_pct",
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    natr = {
        name: talib.NATR(d["high"], d["low"], d["close"], 14) for name, d in session_bars.items()
    }
    rth = natr["RTH"].dropna()
    part = rth.groupby(rth.index.month).mean()
    whole = natr["ETH"].loc[rth.index].groupby(rth.index.month).mean()
    assert result.table["atr_pct"].to_numpy() == pytest.approx(part.to_numpy())
    shift = whole / part - 1
    assert shift.median() >= 0.05  # the data has the case
    lo, hi = shift.min(), shift.max()
    said = (
        f"{lo:.0%} to {hi:.0%} more by month"
        if f"{lo:.0%}" != f"{hi:.0%}"
        else (f"{lo:.0%} more in each month")
    )
    assert [w for w in result.metadata.warnings if w.startswith("atr_pct is read")] == [
        "atr_pct is read from RTH (09:30-17:00) bars only, a part of the day: on full-day "
        f"(ETH) bars, what a daily chart shows, over the same days it is {said} (3: "
        f"{short_value(whole.iloc[-1]):.10g} against {short_value(part.iloc[-1]):.10g}). The "
        'full day\'s: "session": "ETH".'
    ]


def test_a_share_of_days_by_the_atr_is_said_as_a_share(engine_settings, session_bars):
    """The share of days whose ATR is above a level, a condition of the line: said beside
    the full day's share over the same days (pandas over TA-Lib's ATR), not as "% more";
    the full day's condition had been read as text and said nothing."""
    atr = {n: line.dropna() for n, line in _atr_by_day(session_bars).items()}
    level = round(float(atr["RTH"].median()), 2)
    query = {"map": {"atr14": "atr(14)", "hi": f"atr14 > {level}"}, "select": "mean(hi) as s"}
    result = ask(query, engine_settings, **RTH_DAILY)
    part = float((atr["RTH"] > level).mean())
    whole = float((atr["ETH"].loc[atr["RTH"].index] > level).mean())
    assert result.summary.value == pytest.approx(part)
    assert abs(whole - part) >= 0.05  # the data has the case
    assert [w for w in result.metadata.warnings if w.startswith("s is read")] == [
        "s is read from RTH (09:30-17:00) bars only, a part of the day: on full-day (ETH) "
        f"bars, what a daily chart shows, over the same {len(session_bars['RTH'])} days it "
        f"is {short_value(whole):.10g}, against {short_value(part):.10g}. The full day's: "
        '"session": "ETH".'
    ]
