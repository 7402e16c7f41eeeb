"""Bars an early close cut, among listed bars: the day after Thanksgiving closed at 13:15,
so its hourly RTH bar from 12:30 is 45 minutes and its 30-minute bar from 13:00 is 15, and
both were listed as normal bars with nothing said (p47e M2). A few hand-made days of NQ
minute bars: 2024-11-27 whole, Thanksgiving to 13:00, the day after to 13:15; each bar's
minutes counted with pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from nyse_holidays import NYSE_HOLIDAYS_2024
from small_bars import bars_from_closes

from barb import execute
from barb.data.store import DataMeta, data_path, write_bars
from barb.sessions import minutes_of_day, trading_dates
from barb.settings import EngineSettings

# Each trading date and the minute of the day its session stopped.
CLOSES = {"2024-11-26": 1020, "2024-11-27": 1020, "2024-11-28": 780, "2024-11-29": 795}


@pytest.fixture(scope="module")
def half_days(tmp_path_factory: pytest.TempPathFactory) -> tuple[EngineSettings, pd.DataFrame]:
    rng = np.random.default_rng(3)
    spans = [
        pd.date_range(
            pd.Timestamp(day) - pd.Timedelta(hours=6),
            pd.Timestamp(day) + pd.Timedelta(minutes=close),
            freq="1min",
            inclusive="left",
        )
        for day, close in CLOSES.items()
    ]
    stamps = spans[0].append(spans[1:])
    close = np.round((20000 + np.cumsum(rng.choice([-1.0, 1.0], len(stamps)))) * 4) / 4
    frame = bars_from_closes(stamps, close, rng.integers(1, 300, len(stamps)))
    frame["trading_date"] = trading_dates(frame["timestamp"], 18 * 60)
    frame["minute"] = minutes_of_day(frame["timestamp"])
    settings = EngineSettings(data_dir=tmp_path_factory.mktemp("half_days"))
    meta = DataMeta(
        instrument="NQ",
        timezone="America/New_York",
        source="synthetic",
        description="hand-made half days",
        first_date=pd.Timestamp("2024-11-26").date(),
        last_date=pd.Timestamp("2024-11-29").date(),
        rows=len(frame),
    )
    write_bars(frame, meta, data_path("NQ", settings))
    return settings, frame


def held(frame: pd.DataFrame, day: str, step: int) -> pd.Series:
    """Minutes each RTH bar of ``step`` held on ``day``, by its start (09:30 = 570)."""
    minute = frame["minute"].astype(int)
    rows = minute[(frame["trading_date"] == pd.Timestamp(day)) & (minute >= 570) & (minute < 1020)]
    return rows.groupby(570 + (rows - 570) // step * step).count()


def cut_warnings(result) -> list[str]:
    assert result.ok, result.to_dict()
    return [w for w in result.metadata.warnings if "early, at" in w]


@pytest.mark.parametrize(
    ("step", "frame_name", "start", "length"), [(60, "1h", 750, 45), (30, "30m", 780, 15)]
)
def test_the_cut_last_bar_of_a_half_day_is_said(half_days, step, frame_name, start, length) -> None:
    settings, frame = half_days
    bars = held(frame, "2024-11-29", step)
    assert bars.index[-1] == start and bars.iloc[-1] == length
    assert (bars.iloc[:-1] == step).all()
    query = {"session": "RTH", "from": frame_name, "period": "2024-11-29"}
    result = execute(query, "NQ", settings=settings)
    others = {60: "an hour", 30: "half an hour"}[step]
    label = f"{start // 60:02d}:{start % 60:02d}"
    assert cut_warnings(result) == [
        f"2024-11-29 closed early, at 13:15 ET: its {label} bar is {length} minutes "
        f"({label}-13:15), the others {others}."
    ]


def test_two_half_days_listed_are_each_named(half_days) -> None:
    settings, frame = half_days
    assert held(frame, "2024-11-28", 60).iloc[-1] == 30
    query = {"session": "RTH", "from": "1h", "period": "2024-11-27:2024-11-29"}
    result = execute(query, "NQ", settings=settings)
    assert cut_warnings(result) == [
        "2024-11-28 closed early, at 13:00 ET: its 12:30 bar is half an hour (12:30-13:00); "
        "2024-11-29 closed early, at 13:15 ET: its 12:30 bar is 45 minutes (12:30-13:15), the "
        "others an hour."
    ]


def test_whole_bars_of_a_half_day_or_a_full_day_say_nothing(half_days) -> None:
    settings, frame = half_days
    assert (held(frame, "2024-11-29", 15) == 15).all()  # 13:00-13:15 is whole
    for frame_name, period in (("15m", "2024-11-29"), ("1h", "2024-11-27")):
        query = {"session": "RTH", "from": frame_name, "period": period}
        assert cut_warnings(execute(query, "NQ", settings=settings)) == []


def test_a_holiday_s_full_session_is_said_halted_not_closed_early(half_days) -> None:
    """ETH's 4-hour bars from 18:00 over Thanksgiving and the day after: the 10:00 bar holds
    180 and 195 minutes (pandas). Thanksgiving's ETH session is the holiday's, the stock
    market shut, cut by the trading halt at 13:00; "closed early" is the half day's (the day
    after, 13:15), as RTH's 09:30-13:00 on the holiday is."""
    settings, frame = half_days
    assert "2024-11-28" in NYSE_HOLIDAYS_2024 and "2024-11-29" not in NYSE_HOLIDAYS_2024
    stamps = frame["timestamp"]
    since_open = (stamps - (stamps.dt.normalize() + pd.Timedelta(hours=18))) % pd.Timedelta(days=1)
    slot = since_open // pd.Timedelta(hours=4)
    minutes = frame.groupby([frame["trading_date"], slot]).size()
    held_10 = {
        day: int(minutes.loc[(pd.Timestamp(day), 4)]) for day in ("2024-11-28", "2024-11-29")
    }
    assert held_10 == {"2024-11-28": 180, "2024-11-29": 195}
    query = {"session": "ETH", "from": "4h", "period": "2024-11-28:2024-11-29"}
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    assert [w for w in result.metadata.warnings if "its 10:00 bar" in w] == [
        "2024-11-28 was a US holiday (stocks shut), trading halted at 13:00 ET: its 10:00 bar "
        "is 3 hours (10:00-13:00); 2024-11-29 closed early, at 13:15 ET: its 10:00 bar is 195 "
        "minutes (10:00-13:15), the others 4 hours."
    ]


@pytest.mark.parametrize("kept", [50_000, 12])
def test_cut_bars_not_among_the_rows_shown_are_counted_as_such(half_days, kept) -> None:
    """The 4 days' hourly RTH bars by their open: 24 rows of 5 values, of which the model is
    shown the first and the last five. The note named the half days' 12:30 bars as listed
    though the model was shown at most one (pandas); it says how many of them it was shown.
    With only the first 12 rows kept for display (ES's ETH hours: 106,422 rows, 50,000
    kept), the last five shown and the cut bars past row 12 are counted still: it had said
    nothing here, none being among the first 12 (r48c #4)."""
    settings, frame = half_days
    settings = EngineSettings(data_dir=settings.data_dir, max_table_rows=kept)
    minute = frame["minute"].astype(int)
    rth = frame[(minute >= 570) & (minute < 1020)].assign(slot=(minute - 570) // 60)
    bars = rth.groupby(["trading_date", "slot"]).agg(open=("open", "first"), held=("slot", "size"))
    ranked = bars.sort_values("open", ascending=False, kind="stable").reset_index()
    shown = np.zeros(len(ranked), dtype=bool)
    shown[:5] = shown[-5:] = True
    cut = ranked["held"].lt(60) & ranked["slot"].lt(7)  # the 16:30 bar is half an hour always
    assert len(ranked) == 24 and cut.sum() == 2
    seen = int((cut & shown).sum())
    assert seen < 2
    query = {
        "session": "RTH",
        "from": "1h",
        "period": "2024-11-26:2024-11-29",
        "map": {"o": "open", "h": "high", "l": "low", "c": "close", "v": "volume"},
        "sort": "o desc",
    }
    result = execute(query, "NQ", settings=settings)
    assert not result.summary.whole
    assert result.metadata.truncated == (kept < 24)
    (said,) = cut_warnings(result)
    assert said.endswith(
        f"the others an hour. {seen or 'None'} of these 2 bars is among the 10 rows shown, of 24."
    ), said
