"""The data's unfinished last week or month, one rule for every N: last_N_bars is the last N
bars as they are, the unfinished one included and said; last_N_weeks on weekly bars
(last_N_months on monthly) is the last N whole ones; wtd, like mtd, is the week so far.

The fixture's bars end on Thursday 2024-03-28 and CME traded on Good Friday: the week of
2024-03-25 and March are not over. Expected bars are built here with pandas from the raw
minutes (``rth_bars``), never through Barb.
"""

from __future__ import annotations

import pandas as pd
import pytest
from asking import ask
from rth_bars import rth_daily

LAST = pd.Timestamp("2024-03-28")


def _bars(minutes: pd.DataFrame, freq: str) -> pd.DataFrame:
    """Weekly ("W-SUN") or monthly ("M") RTH bars from the raw minutes, the unfinished last
    one included, each named by its first trading date."""
    daily = rth_daily(minutes)
    groups = daily.groupby(daily.index.to_period(freq))
    bars = groups.agg(open=("open", "first"), close=("close", "last"))
    bars["first"] = groups.apply(lambda days: days.index[0])
    assert daily.index[-1] == LAST
    return bars


def _weeks(result) -> list[str]:
    return list(result.table["week"])


def _first_days(bars: pd.DataFrame) -> list[str]:
    return [day.strftime("%Y-%m-%d") for day in bars["first"]]


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_the_last_n_weekly_bars_include_the_unfinished_week(n, engine_settings, minutes) -> None:
    """Weekly last_1_bars kept the unfinished week and last_2_bars … last_4_bars dropped it:
    now every N keeps it, says what it covers and names the period of whole weeks."""
    result = ask({"from": "weekly", "period": f"last_{n}_bars"}, engine_settings, session="RTH")
    expected = _bars(minutes, "W-SUN").iloc[-n:]
    assert _weeks(result) == _first_days(expected)
    assert list(result.table["close"]) == list(expected["close"])
    whole = '"last_week"' if n == 1 else f'"last_{n}_weeks"'
    assert any(
        "The week 2024-03-25 is not over yet" in w
        and "covers only 2024-03-25 — 2024-03-28" in w
        and w.endswith(f'"period": {whole}.')
        for w in result.metadata.warnings
    ), result.metadata.warnings


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_the_last_n_weeks_are_n_whole_weeks(n, engine_settings, minutes) -> None:
    """last_1_weeks gave the unfinished week, last_2_weeks one whole week: now N whole
    weeks for every N, the unfinished one left out and said."""
    result = ask({"from": "weekly", "period": f"last_{n}_weeks"}, engine_settings, session="RTH")
    expected = _bars(minutes, "W-SUN").iloc[-n - 1 : -1]
    assert _weeks(result) == _first_days(expected)
    assert list(result.table["open"]) == list(expected["open"])
    assert list(result.table["close"]) == list(expected["close"])
    assert any(
        "The week 2024-03-25 is not over yet" in w and "left out" in w and w.endswith('"wtd".')
        for w in result.metadata.warnings
    ), result.metadata.warnings


def test_how_the_last_week_closed_is_the_last_whole_week(engine_settings, minutes) -> None:
    """ "How did NQ close last week?" The period the warnings point to gives the last whole
    week and its change from the week before, whether written last_week or last_1_weeks."""
    weeks = _bars(minutes, "W-SUN")
    change = (weeks["close"].iloc[-2] / weeks["close"].iloc[-3] - 1) * 100
    for period in ("last_week", "last_1_weeks"):
        result = ask(
            {
                "from": "weekly",
                "period": period,
                "map": {"chg_pct": "(close / prev(close) - 1) * 100"},
                "select": ["close", "chg_pct"],
            },
            engine_settings,
            session="RTH",
        )
        assert _weeks(result) == _first_days(weeks.iloc[[-2]])
        assert result.table["chg_pct"].iloc[0] == pytest.approx(change)


@pytest.mark.parametrize("n", [1, 2])
def test_monthly_bars_follow_the_same_rule(n, engine_settings, minutes) -> None:
    """Monthly last_1_bars kept March and last_2_bars dropped it; last_1_months gave March
    and last_2_months February alone."""
    months = _bars(minutes, "M")
    bars = ask({"from": "monthly", "period": f"last_{n}_bars"}, engine_settings, session="RTH")
    assert list(bars.table["close"]) == list(months["close"].iloc[-n:])
    assert any("The month 2024-03 is not over yet" in w for w in bars.metadata.warnings)
    whole = ask({"from": "monthly", "period": f"last_{n}_months"}, engine_settings, session="RTH")
    assert list(whole.table["month"]) == [str(p) for p in months.index[-n - 1 : -1]]
    assert list(whole.table["close"]) == list(months["close"].iloc[-n - 1 : -1])


def test_wtd_is_the_week_so_far(engine_settings, minutes) -> None:
    """ "This week so far": the week of the data's last date from its Monday, like mtd."""
    daily = rth_daily(minutes)
    week = daily[daily.index >= LAST - pd.Timedelta(days=LAST.weekday())]
    days = ask(
        {"from": "daily", "period": "wtd", "select": "count()"}, engine_settings, session="RTH"
    )
    assert days.summary.value == len(week) == 4
    bar = ask({"from": "weekly", "period": "wtd"}, engine_settings, session="RTH")
    assert _weeks(bar) == ["2024-03-25"]
    assert bar.table["open"].iloc[0] == week["open"].iloc[0]
    assert bar.table["close"].iloc[0] == week["close"].iloc[-1]
    assert any("The week 2024-03-25 is not over yet" in w for w in bar.metadata.warnings)


def test_qtd_is_the_quarter_so_far(engine_settings, minutes) -> None:
    """ "This quarter so far" (InvalidPeriod before): the quarter of the data's last date from
    its first day, like mtd; and "2024-Q1", the label Barb prints, names that quarter."""
    daily = rth_daily(minutes)
    quarter = daily[daily.index >= "2024-01-01"]
    days = ask(
        {"from": "daily", "period": "qtd", "select": "count()"}, engine_settings, session="RTH"
    )
    assert days.summary.value == len(quarter)
    bar = ask({"from": "quarterly", "period": "qtd"}, engine_settings, session="RTH")
    assert list(bar.table["quarter"]) == ["2024-Q1"]
    assert bar.table["open"].iloc[0] == quarter["open"].iloc[0]
    assert bar.table["close"].iloc[0] == quarter["close"].iloc[-1]
    assert any("The quarter 2024-Q1 is not over yet" in w for w in bar.metadata.warnings)
    named = ask(
        {"from": "daily", "period": "2024-Q1", "select": "count()"}, engine_settings, session="RTH"
    )
    assert named.summary.value == len(quarter)
