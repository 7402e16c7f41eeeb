"""What an early close or a closure does to a read across it: the ETH gap "across the 17:00-18:00
break" after July 3's 13:15 close or Christmas Day spans hours or a day, and the RTH close less
the CASH close is 0 on a day with no post-cash hour. Hand-made minute bars around July 4 and
the year's end (July 3 and Christmas Eve close at 13:15, July 4 at 13:00, no bars on Christmas
Day or New Year's Day; they end before the Carter closure of 2025-01-09, after which
post_holiday() would drop a one-hour break too); expected values from pandas over the same bars."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from asking import ask, warnings_with
from small_bars import bars_from_closes, write_minutes

from barb.sessions import minutes_of_day, trading_dates
from barb.settings import EngineSettings

# The last bar's end on the short days; every other weekday runs 18:00 the evening before
# to 17:00, and the closures have no bar.
CLOSES = {
    dt.date(2024, 7, 3): "13:15",
    dt.date(2024, 7, 4): "13:00",
    dt.date(2024, 12, 24): "13:15",
}
CLOSED = {dt.date(2024, 12, 25), dt.date(2025, 1, 1)}
DAILY = {"from": "daily"}
SPANS = [("2024-06-24", "2024-07-12"), ("2024-12-16", "2025-01-08")]
GAP = {
    "gap": "open - prev(close)",
    "same_week": "week() == prev(week())",
}
GAP_SELECT = ["count() as days", "mean(abs(gap)) as mean_abs_gap", "max(abs(gap)) as max_gap"]
LEAVE_OUT = "not prev(early_close()) and not post_holiday()"
POST_CASH = {
    "cash_close": "session_close('CASH')",
    "cash_move": "cash_close - open",
    "after_cash": "close - cash_close",
    "reversal": "sign(after_cash) == -sign(cash_move)",
}
POST_CASH_SELECT = [
    "count() as days",
    "mean(reversal) as reversal_share",
    "mean(abs(after_cash)) as mean_abs_after",
]


def _minutes(seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    stamps = []
    for first, last in SPANS:
        for day in pd.bdate_range(first, last):
            if day.date() in CLOSED:
                continue
            end = pd.Timedelta(CLOSES.get(day.date(), "17:00") + ":00")
            stamps.append(
                pd.date_range(day - pd.Timedelta(hours=6), day + end, freq="1min", inclusive="left")
            )
    ts = stamps[0].append(stamps[1:])
    n = len(ts)
    close = (
        np.round(
            (20000 + np.cumsum(rng.choice([-1.0, 0.0, 1.0], n) * rng.integers(1, 9, n) * 0.25)) * 4
        )
        / 4
    )
    open_ = np.concatenate(([close[0]], close[:-1])) + 0.25 * rng.integers(-2, 3, n)
    return bars_from_closes(ts, close, rng.integers(1, 300, n), open_=open_)


@pytest.fixture(scope="module")
def bars() -> pd.DataFrame:
    frame = _minutes()
    frame["trading_date"] = trading_dates(frame["timestamp"], 18 * 60)
    frame["minute"] = minutes_of_day(frame["timestamp"])
    return frame


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory, bars: pd.DataFrame) -> EngineSettings:
    data_dir: Path = tmp_path_factory.mktemp("early_close_breaks")
    settings = EngineSettings(data_dir=data_dir)
    write_minutes(bars, "NQ", settings, "hand-made bars around July 4 and the year's end")
    return settings


@pytest.fixture(scope="module")
def eth_gaps(bars) -> pd.DataFrame:
    """Each Globex date's gap from the close before, the hours between them, and whether the
    date before is in its ISO week (the tester's "not weekends")."""
    days = bars.groupby("trading_date").agg(
        open=("open", "first"),
        close=("close", "last"),
        first=("timestamp", "first"),
        last=("timestamp", "last"),
    )
    week = pd.DatetimeIndex(days.index).isocalendar().week.to_numpy()
    return pd.DataFrame(
        {
            "gap": (days["open"] - days["close"].shift()).abs(),
            "minutes": (days["first"] - days["last"].shift()).dt.total_seconds() / 60 - 1,
            "same_week": np.concatenate(([False], week[1:] == week[:-1])),
        },
        index=days.index,
    )


def test_a_gap_across_an_early_close_or_a_closure_is_said(settings, eth_gaps) -> None:
    """July 4 (after July 3's 13:15 close), July 5 (after July 4's 13:00), Dec 26 (after
    Christmas Eve's 13:15 close and Christmas Day, 29 hours) and Jan 2 (after New Year's Day)
    are in their weeks but not after the usual hour: counted, with the values without them."""
    result = ask(
        {"session": "ETH", "map": GAP, "where": "same_week", "select": GAP_SELECT},
        settings,
        **DAILY,
    )
    kept = eth_gaps[eth_gaps["same_week"]]
    long = kept["minutes"] > 60
    assert result.summary.values["days"] == len(kept)
    assert [d.date() for d in kept.index[long]] == [
        dt.date(2024, 7, 4),
        dt.date(2024, 7, 5),
        dt.date(2024, 12, 26),
        dt.date(2025, 1, 2),
    ]
    full = kept[~long]
    said = warnings_with(result, "follow an early close or a closure")
    assert len(said) == 1, result.metadata.warnings
    text = said[0]
    assert f"{int(long.sum())} of the {len(kept)} rows kept" in text
    assert "2024-12-26 from 2024-12-24's 13:15 close, 29 hours" in text
    assert f"days is {len(full)}" in text
    assert f"max_gap is {full['gap'].max():g}" in text
    assert f'"where": "{LEAVE_OUT}"' in text
    # The form it gives leaves out exactly those rows, and is not warned about again.
    fixed = ask(
        {"session": "ETH", "map": GAP, "where": f"same_week and {LEAVE_OUT}", "select": GAP_SELECT},
        settings,
        **DAILY,
    )
    assert fixed.summary.values["days"] == len(full)
    assert fixed.summary.values["mean_abs_gap"] == pytest.approx(full["gap"].mean())
    assert fixed.summary.values["max_gap"] == pytest.approx(full["gap"].max())
    assert not warnings_with(fixed, "follow an early close or a closure")


def test_gaps_with_the_weekends_are_not_warned_about(settings) -> None:
    """Kept with the Mondays' weekend gaps, a holiday's is one more of the longer gaps."""
    result = ask({"session": "ETH", "map": GAP, "select": GAP_SELECT}, settings, **DAILY)
    assert not warnings_with(result, "follow an early close or a closure")


@pytest.fixture(scope="module")
def post_cash(bars) -> pd.DataFrame:
    """RTH's close, CASH's, and the 16:00-17:00 hour's (NaN where it has no bar), by date."""
    minute = bars["minute"]
    rth = bars[(minute >= 570) & (minute < 1020)].groupby("trading_date")
    cash = bars[(minute >= 570) & (minute < 960)].groupby("trading_date")["close"].last()
    hour = bars[(minute >= 960) & (minute < 1020)].groupby("trading_date")["close"].last()
    frame = pd.DataFrame({"open": rth["open"].first(), "close": rth["close"].last(), "cash": cash})
    frame["hour"] = hour.reindex(frame.index)
    return frame


def test_the_post_cash_move_on_days_without_a_post_cash_hour_is_said(settings, post_cash) -> None:
    """On July 3, July 4 and Christmas Eve RTH ended at the cash close or before it: close -
    session_close('CASH') is 0 there, counted as no reversal. Said with the values over the
    days that have the hour, which session_close('RTH_CLOSE') - cash_close reads as n/a."""
    result = ask(
        {"session": "RTH", "map": POST_CASH, "select": POST_CASH_SELECT}, settings, **DAILY
    )
    after = post_cash["close"] - post_cash["cash"]
    move = post_cash["cash"] - post_cash["open"]
    reversal = np.sign(after) == -np.sign(move)
    assert result.summary.values["reversal_share"] == pytest.approx(reversal.mean())
    has_hour = post_cash["hour"].notna()
    assert [d.date() for d in post_cash.index[~has_hour]] == sorted(CLOSES)
    assert (after[~has_hour] == 0).all()
    said = warnings_with(result, "close - session_close('CASH') is 0 there")
    assert len(said) == 1, result.metadata.warnings
    text = said[0]
    assert f"On 3 of the {len(post_cash)} days RTH ended by CASH's 16:00 close" in text
    assert "13:00 or 13:15" in text
    assert f"reversal_share is {reversal[has_hour].mean():.4g}" in text
    assert f"mean_abs_after is {after[has_hour].abs().mean():.4g}" in text
    # The form it names is n/a on them: the same values, over the days with the hour.
    fixed = dict(POST_CASH, after_cash="session_close('RTH_CLOSE') - cash_close")
    right = ask({"session": "RTH", "map": fixed, "select": POST_CASH_SELECT}, settings, **DAILY)
    assert right.summary.values["reversal_share"] == pytest.approx(reversal[has_hour].mean())
    assert right.summary.values["mean_abs_after"] == pytest.approx(after[has_hour].abs().mean())
    assert not warnings_with(right, "is 0 there")


def test_the_post_cash_move_over_full_days_only_is_not_warned_about(settings) -> None:
    result = ask(
        {
            "session": "RTH",
            "map": POST_CASH,
            "where": "not early_close()",
            "select": POST_CASH_SELECT,
        },
        settings,
        **DAILY,
    )
    assert not warnings_with(result, "is 0 there")
