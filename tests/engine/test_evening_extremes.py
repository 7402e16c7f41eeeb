"""A full-day (ETH) daily extreme made on the evening before its trading date is said with
its calendar day and clock, and a one-day period is told that its own evening counts for the
next date (p47g q33/q34), against pandas over the hand-made minutes: a minute from 18:00 on
belongs to the next calendar day's trading date."""

from __future__ import annotations

import pandas as pd
import pytest
from asking import ask

from barb.result import Result

ETH_DAILY = {"session": "ETH", "from": "daily"}


@pytest.fixture(scope="module")
def tops(minutes: pd.DataFrame) -> pd.DataFrame:
    """Per trading date: its high, the first minute at it, and whether that minute is on the
    evening before the date."""
    bars = minutes.copy()
    bars["date"] = (bars["timestamp"] + pd.Timedelta(hours=6)).dt.normalize()
    top = bars.loc[bars.groupby("date")["high"].idxmax(), ["date", "timestamp", "high"]]
    top = top.set_index("date")
    top["evening"] = top["timestamp"].dt.normalize() < top.index
    return top


def _evening(result: Result) -> list[str]:
    return [w for w in result.metadata.warnings if "evening" in w]


def _said(day: pd.Timestamp, row: pd.Series) -> str:
    return (
        f"{row['high']:.10g} on {day:%Y-%m-%d} was made {row['timestamp']:%Y-%m-%d at %H:%M} "
        f"ET, the evening session that counts for {day:%Y-%m-%d}."
    )


def test_an_evening_high_is_said_with_its_calendar_day(engine_settings, tops) -> None:
    """A day higher than the one before whose high came the evening before: over the two,
    arg_max(date(), high), a ranking by high and the day's own listing each say the calendar
    day and clock."""
    higher = tops["high"] > tops["high"].shift()
    at = int(next(i for i in range(1, len(tops)) if higher.iloc[i] and tops["evening"].iloc[i]))
    day = tops.index[at]
    period = f"{tops.index[at - 1]:%Y-%m-%d}:{day:%Y-%m-%d}"
    said = [_said(day, tops.loc[day])]
    arg = ask(
        {"period": period, "select": ["max(high)", "arg_max(date(), high) as day"]},
        engine_settings,
        **ETH_DAILY,
    )
    assert pd.Timestamp(arg.summary.values["day"]) == day
    assert _evening(arg) == said
    ranked = ask(
        {"period": period, "sort": "high desc", "limit": 2, "select": ["date()", "high"]},
        engine_settings,
        **ETH_DAILY,
    )
    assert _evening(ranked) == said
    alone = ask({"period": f"{day:%Y-%m-%d}", "select": ["high"]}, engine_settings, **ETH_DAILY)
    assert _evening(alone) == said


def test_a_daytime_high_says_nothing(engine_settings, tops) -> None:
    day = tops.index[(~tops["evening"]).to_numpy()][0]
    alone = ask({"period": f"{day:%Y-%m-%d}", "select": ["high"]}, engine_settings, **ETH_DAILY)
    assert alone.table["high"].tolist() == [tops.loc[day, "high"]]
    assert not _evening(alone)


def test_a_calendar_days_evening_that_went_higher_is_pointed_to(
    engine_settings, minutes, tops
) -> None:
    """A one-day period is its trading date; the evening of that calendar day counts for the
    next one, and is named when it went higher than the day's listed high."""
    evening = minutes[minutes["timestamp"].dt.hour >= 18]
    nights = evening.groupby(evening["timestamp"].dt.normalize())["high"].agg(["max", "idxmax"])
    passed = [
        d for d in nights.index if d in tops.index and nights.loc[d, "max"] > tops.loc[d, "high"]
    ]
    day = passed[0]
    at = minutes.loc[nights.loc[day, "idxmax"], "timestamp"]
    after = tops.index[tops.index > day][0]
    result = ask({"period": f"{day:%Y-%m-%d}", "select": ["high"]}, engine_settings, **ETH_DAILY)
    assert result.table["high"].tolist() == [tops.loc[day, "high"]]
    assert [w for w in result.metadata.warnings if w.startswith("high is trading date")] == [
        f"high is trading date {day:%Y-%m-%d}'s, which began the evening before; the evening "
        f"of {day:%Y-%m-%d} from 18:00 counts for {after:%Y-%m-%d} and went higher, to "
        f'{nights.loc[day, "max"]:.10g} at {at:%H:%M} ET (that evening alone: "session": '
        f'"18:00-00:00", "period": "{after:%Y-%m-%d}").'
    ]
    quiet = [
        d for d in nights.index if d in tops.index and nights.loc[d, "max"] < tops.loc[d, "high"]
    ]
    calm = ask({"period": f"{quiet[0]:%Y-%m-%d}", "select": ["high"]}, engine_settings, **ETH_DAILY)
    assert not [w for w in calm.metadata.warnings if w.startswith("high is trading date")]
