"""Short sessions a where or a ranking by size picks out of proportion, said of a number.

"How many days had an RTH range below X" or "the average range of the 10 quietest days"
keep holidays and early closes well beyond their share of the period: their range is a part
day's. A table of those rows named them; a count or mean of them said nothing. Hand-made
minute bars from 2024-06-17 to 2024-07-31 (Juneteenth and July 4 close at 13:00, July 3 at
13:15), each day's RTH range set, the short days among the narrowest; expected values from
pandas over the same minute bars, short days read from the bars (RTH's last minute before
16:59), not from a calendar.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask, warnings_with
from small_bars import bars_from_closes, write_minutes

from barb.settings import EngineSettings

RTH_START, RTH_END = 570, 1020  # 09:30-17:00
CLOSES = {"2024-06-19": "13:00", "2024-07-03": "13:15", "2024-07-04": "13:00"}
# The full days as narrow as the short ones (ranges of 10 to 13); the others span 30 to 45.
NARROW_FULL = ("2024-06-25", "2024-07-10", "2024-07-17", "2024-07-24", "2024-07-30")
PICKED = "short sessions (holidays, early closes"
NARROW = 20


def _minutes(seed: int = 5) -> pd.DataFrame:
    """Every minute from 18:00 the evening before to 17:00 (or the early close), RTH a wave
    from the middle of the day's range that touches its low and its high once each."""
    rng = np.random.default_rng(seed)
    frames = []
    for day in pd.bdate_range("2024-06-17", "2024-07-31"):
        text = f"{day:%Y-%m-%d}"
        narrow = text in CLOSES or text in NARROW_FULL
        half = rng.uniform(5, 6.5) if narrow else rng.uniform(15, 22.5)
        mid = 100 + rng.uniform(-5, 5)
        ts = pd.date_range(
            day - pd.Timedelta(hours=6),
            day + pd.Timedelta(CLOSES.get(text, "17:00") + ":00"),
            freq="1min",
            inclusive="left",
        )
        minute = ts.hour * 60 + ts.minute
        rth = (minute >= RTH_START) & (minute < RTH_END)
        close = mid + 0.25 * half * rng.uniform(-1, 1, len(ts))
        close[rth] = mid + 0.9 * half * np.sin(np.linspace(0, 2 * np.pi, int(rth.sum())))
        close = np.round(close * 4) / 4
        frame = bars_from_closes(ts, close, rng.integers(1, 300, len(ts)), up=0.0, down=0.0)
        first = np.flatnonzero(rth)[0]
        frame.loc[first + 20, "high"] = np.round((mid + half) * 4) / 4
        frame.loc[first + 60, "low"] = np.round((mid - half) * 4) / 4
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def minutes() -> pd.DataFrame:
    return _minutes()


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory, minutes: pd.DataFrame) -> EngineSettings:
    data_dir: Path = tmp_path_factory.mktemp("part_day_picks")
    settings = EngineSettings(data_dir=data_dir)
    write_minutes(minutes, "NQ", settings, "hand-made bars around July 4")
    return settings


@pytest.fixture(scope="module")
def days(minutes: pd.DataFrame) -> pd.DataFrame:
    """Each date's RTH range and whether it is short (RTH stopped before 17:00)."""
    ts = minutes["timestamp"]
    minute = ts.dt.hour * 60 + ts.dt.minute
    rth = minutes[(minute >= RTH_START) & (minute < RTH_END)].copy()
    rth["date"] = rth["timestamp"].dt.strftime("%Y-%m-%d")
    out = rth.groupby("date").agg(high=("high", "max"), low=("low", "min"))
    out["range"] = out["high"] - out["low"]
    last = rth.groupby("date")["timestamp"].last() + pd.Timedelta(minutes=1)
    out["short"] = last.dt.strftime("%H:%M") != "17:00"
    return out


def _share(part: int, whole: int) -> str:
    share = 100 * part / whole
    return f"{share:.2g}%" if share < 10 else f"{share:.0f}%"


def test_a_count_of_narrow_days_says_the_short_sessions_it_holds(settings, days):
    picked = days[days["range"] < NARROW]
    short = picked[picked["short"]]
    assert len(short) == 3 and len(picked) == 8  # the data's own design
    result = ask(
        {"where": f"range < {NARROW}", "select": ["count()", "mean(range)"]}, settings, **RTH_DAILY
    )
    assert result.summary.values == {
        "count": 8,
        "mean_range": pytest.approx(picked["range"].mean()),
    }
    said = warnings_with(result, PICKED)
    assert len(said) == 1  # not again as a share of the mean's days
    full = picked[~picked["short"]]
    assert said[0].startswith(
        f"3 of the 8 days the where on range picked are {PICKED}: a part day's range and "
        f"volume), 38% of them against {_share(3, len(days))} of the period's {len(days)} days: "
        "2024-06-19 (holiday, closed 13:00), 2024-07-03 (early close, closed 13:15), "
        "2024-07-04 (holiday, closed 13:00). "
        f"Without them count is {len(full)}, mean_range is {round(full['range'].mean(), 2):g}."
    )
    assert said[0].endswith('"where": "… and not holiday() and not early_close()" leaves them out.')


def test_the_mean_of_the_narrowest_days_names_the_short_sessions(settings, days):
    quietest = days.sort_values("range", kind="stable")[:5]
    k = int(quietest["short"].sum())
    assert k >= 2  # the data's own design
    result = ask(
        {"sort": "range asc", "limit": 5, "then": {"select": "mean(range)"}},
        settings,
        **RTH_DAILY,
    )
    assert result.summary.value == pytest.approx(quietest["range"].mean())
    said = warnings_with(result, PICKED)
    assert len(said) == 1
    named = ", ".join(sorted(quietest.index[quietest["short"]]))
    assert said[0].startswith(
        f"{k} of the 5 days the sort by range picked are {PICKED}: a part day's range and "
        f"volume), {_share(k, 5)} of them against {_share(3, len(days))} of the period's "
        f"{len(days)} days: {named[:10]} ("
    )
    assert said[0].endswith(
        'The first stage\'s "where": "not holiday() and not early_close()" leaves them out.'
    )


@pytest.mark.parametrize(
    "query",
    [
        # A where on range that keeps the short sessions at their share: all days.
        {"where": "range > 0", "select": "count()"},
        # A where that keeps them beyond their share, but not by their size: a count of
        # Wednesdays and Thursdays (06-19, 07-03, 07-04 among them) is no part day's.
        {"where": "dayname() in ('Wed', 'Thu')", "select": "count()"},
        # No where: the period's own share.
        {"select": "mean(range)"},
        # The wide days.
        {"where": f"range >= {NARROW}", "select": ["count()", "mean(range)"]},
    ],
)
def test_nothing_is_said_where_nothing_picked_them(settings, days, query):
    assert not warnings_with(ask(query, settings, **RTH_DAILY), PICKED)
