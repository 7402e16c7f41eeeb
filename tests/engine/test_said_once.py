"""Each fact said once: the model reads every warning and repeats them, and one said twice (or
once per column) buries the one that matters (p44a). "% of green NQ days and the mean daily %"
said the data's first day, with no close before it, five times: after each of three values
and in two warnings; by month the coalesce advice twice word for word; "RSI < 30, 5 days
later" its overlapping windows three times. Expected values from pandas over RTH bars built
from the minute file, never through Barb.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask, warnings_with
from rth_bars import rth_daily
from windows_taken import one_at_a_time

from barb import render_summary

BEGINS = "bars from before 2024-01-02, where the data begins"
RET = "(close / prev(close) - 1) * 100"


@pytest.fixture(scope="module")
def days(minutes: pd.DataFrame) -> pd.DataFrame:
    daily = rth_daily(minutes)
    daily["ret"] = (daily["close"] / daily["close"].shift() - 1) * 100
    return daily


def test_one_empty_first_day_is_said_once_for_every_statistic(engine_settings, days) -> None:
    result = ask(
        {
            "map": {"ret": RET},
            "select": ["mean(ret > 0) as up_share", "mean(ret)", "std(ret)", "count()"],
        },
        engine_settings,
        **RTH_DAILY,
    )
    ret = days["ret"].dropna()
    n, size = len(days), len(ret)
    assert size == n - 1  # the data's first day has no close before it
    values = result.summary.values
    assert values["up_share"] == pytest.approx((ret > 0).mean(), abs=1e-4)
    assert values["mean_ret"] == pytest.approx(ret.mean(), rel=1e-3)
    assert values["std_ret"] == pytest.approx(ret.std(), rel=1e-3)
    first = render_summary(result).splitlines()[0]
    # The size once, after the last of the three values over the same rows.
    assert first.count("rows with a value") == 1
    assert first.endswith(f" (each over {size} rows with a value), count={n}")
    # One warning names all three and the one column they read (ret > 0 reads ret).
    assert warnings_with(result, "no value on") == [
        f"up_share, mean_ret and std_ret are over {size} of the {n} rows kept: ret has no value "
        f"on 2024-01-02, as it needs {BEGINS}."
    ]


def test_a_size_after_a_statistic_of_every_row_names_its_own(engine_settings, days) -> None:
    """p47c G: "count=259, above=0, share=0 (each over 60 rows with a value)" read as if
    count were over the 60 too: after count() the statistics over fewer rows are named."""
    result = ask(
        {
            "map": {"sma": "rolling_mean(close, 20)"},
            "select": ["count()", "count(close > sma) as above", "mean(close > sma) as share"],
        },
        engine_settings,
        **RTH_DAILY,
    )
    sma = days["close"].rolling(20).mean()
    above = (days["close"] > sma)[sma.notna()]
    first = render_summary(result).splitlines()[0]
    assert first == (
        f"Result: count={len(days)}, above={int(above.sum())}, share={above.mean():.4g} "
        f"(above and share over {len(above)} rows with a value)"
    )


def test_the_groups_statistics_share_one_line_naming_each_column(engine_settings, days) -> None:
    result = ask(
        {
            "map": {"up": "close > prev(close)", "ret_pct": RET},
            "group_by": "dayofweek()",
            "select": ["count()", "mean(up) as up_share", "mean(ret_pct)"],
        },
        engine_settings,
        **RTH_DAILY,
    )
    weekday = days.index.dayofweek
    rows = days.groupby(weekday).size()
    sizes = days["ret"].notna().groupby(weekday).sum()
    short = int(weekday[0])  # the data's first day's weekday: its group is one short
    assert (rows - sizes).to_dict() == {d: int(d == short) for d in rows.index}
    n = len(days)
    (said,) = warnings_with(result, "no value on")
    assert said == (
        f"up_share and mean_ret_pct are over the {n - 1} of the {n} rows kept that have a value "
        f"(the others are empty), in dayofweek {short} over {sizes[short]} of its {rows[short]} "
        "rows; count() counts all of them. up and ret_pct have no value on 2024-01-02, as they "
        f"need {BEGINS}."
    )


def test_the_first_bars_own_open_is_advised_once(engine_settings, minutes) -> None:
    """By month over weekly bars, the mean return and the share up read one column: the
    advice to measure the first week from its own open is given once."""
    result = ask(
        {
            "from": "weekly",
            "map": {"ret_pct": RET, "mon": "month()"},
            "group_by": "mon",
            "select": ["mean(ret_pct) as avg_ret", "mean(ret_pct > 0) as up_share", "count()"],
        },
        engine_settings,
        **RTH_DAILY,
    )
    daily = rth_daily(minutes).loc[:"2024-03-22"]  # the open last week is left out
    weeks = daily.groupby(daily.index.to_period("W-SUN")).agg(close=("close", "last"))
    ret = (weeks["close"] / weeks["close"].shift() - 1) * 100
    n = len(weeks)
    (said,) = warnings_with(result, "no value on")
    assert said.startswith(
        f"avg_ret and up_share are over the {ret.notna().sum()} of the {n} rows kept"
    )
    assert said.endswith(
        f"ret_pct has no value on 2024-01-02, as it needs {BEGINS}. From its own open on the "
        'first bar: "ret_pct": "(close / coalesce(prev(close), open) - 1) * 100".'
    )
    assert sum(w.count("From its own open") for w in result.metadata.warnings) == 1


def test_overlapping_windows_said_in_the_noise_lines_are_not_said_again(
    engine_settings, days
) -> None:
    result = ask(
        {
            "map": {"fwd5": "(next(close, 5) / close - 1) * 100"},
            "where": "close > open",
            "select": ["count()", "mean(fwd5) as avg_fwd5", "mean(fwd5 > 0) as up_share"],
        },
        engine_settings,
        **RTH_DAILY,
    )
    fwd5 = (days["close"].shift(-5) / days["close"] - 1) * 100
    picked = (days["close"] > days["open"]).to_numpy() & fwd5.notna().to_numpy()
    picks = np.flatnonzero(picked)
    assert np.count_nonzero(np.diff(picks) < 5) >= len(picks) / 4  # they do overlap
    counted = (
        f"{len(picks)} rows whose 5-day windows overlap, counted as the {one_at_a_time(picks, 5)} "
        "taken so that no two share a day"
    )
    # Both means over the same rows: one sentence names the count once.
    [noise] = warnings_with(result, counted)
    assert noise.startswith(f"Over the {counted} (bands of ")
    assert " avg_fwd5 " in noise and " up_share " in noise
    assert not warnings_with(result, "independent outcomes")
