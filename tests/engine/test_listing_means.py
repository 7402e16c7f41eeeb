"""The mean line under a whole listing says only means that mean something. "Top 5 NQ days
in %" ended "mean: chg_pct=9.025, close=4069.45": the mean of a ranking's top rows is the
mean of a pick by that very value, and a mean of closes 12 years apart is no price at all
(p44a Q25, Q32). A listing in time order keeps its values' means, in the header's order.
Expected values from pandas over RTH bars built from the minute file."""

from __future__ import annotations

import pandas as pd
from asking import RTH_DAILY, ask
from rth_bars import rth_daily

from barb import render_summary
from barb.summary_text import value_text


def _lines(result) -> list[str]:
    return render_summary(result).splitlines()


def test_a_top_n_ranking_has_no_mean_line(engine_settings, minutes) -> None:
    result = ask(
        {
            "map": {"chg_pct": "(close / prev(close) - 1) * 100"},
            "sort": "chg_pct desc",
            "limit": 5,
            "select": ["chg_pct", "close"],
        },
        engine_settings,
        **RTH_DAILY,
    )
    daily = rth_daily(minutes)
    chg = ((daily["close"] / daily["close"].shift() - 1) * 100).nlargest(5)
    lines = _lines(result)
    assert lines[1] == "date,chg_pct,close"
    listed = [line.split(",")[0] for line in lines[2:7]]
    assert listed == list(chg.index.strftime("%Y-%m-%d"))
    assert not [line for line in lines if line.startswith("mean:")]


def test_the_last_days_keep_their_values_means_but_not_the_close(engine_settings, minutes) -> None:
    result = ask(
        {
            "period": "last_5_bars",
            "map": {"chg": "close - prev(close)"},
            "select": ["range", "chg", "close"],
        },
        engine_settings,
        **RTH_DAILY,
    )
    daily = rth_daily(minutes)
    daily["range"] = daily["high"] - daily["low"]
    daily["chg"] = daily["close"] - daily["close"].shift()
    last: pd.DataFrame = daily.iloc[-5:]
    lines = _lines(result)
    assert lines[1] == "date,range,chg,close"
    (means,) = [line for line in lines if line.startswith("mean:")]
    assert means == (
        f"mean: range={value_text(last['range'].mean())}, chg={value_text(last['chg'].mean())}"
    )


def test_a_ranking_summarised_by_column_gives_no_means(engine_settings, minutes) -> None:
    """The 40 worst days with 4 columns are summarised by column (160 cells, more than a
    listing read whole): each column's min and max with its day, no "mean=" (p45d #7: the
    40 worst days' "close: …, mean=15905.51")."""
    result = ask(
        {
            "map": {"chg": "close - prev(close)", "gap": "open - prev(close)"},
            "sort": "chg asc",
            "limit": 40,
            "select": ["chg", "gap", "range", "close"],
        },
        engine_settings,
        **RTH_DAILY,
    )
    daily = rth_daily(minutes)
    daily["chg"] = daily["close"] - daily["close"].shift()
    worst = daily.nsmallest(40, "chg")
    lines = _lines(result)
    (close,) = [line for line in lines if line.startswith("close: ")]
    low = worst["close"].idxmin()
    assert close.startswith(f"close: min={value_text(worst['close'].min())} ({low:%Y-%m-%d})")
    assert not [line for line in lines if "mean=" in line or line.startswith("mean:")]


def test_a_limits_rows_say_their_mean_is_theirs(engine_settings, minutes) -> None:
    """p48d C6: NQ's 3 latest gaps down over 1% ended "mean: gap_pct=-1.331" under "504
    matched", and read as the mean of all 504. The mean line of rows a limit cut says it is
    theirs, with how many there were; a period's own rows (last_5_bars) stay "mean:"."""
    daily = rth_daily(minutes)
    chg = (daily["close"] / daily["close"].shift() - 1) * 100
    down = chg[chg < 0]
    query = {
        "map": {"chg_pct": "(close / prev(close) - 1) * 100"},
        "where": "chg_pct < 0",
        "sort": "timestamp desc",
        "limit": 3,
        "select": ["chg_pct"],
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    assert result.table["chg_pct"].tolist() == down.iloc[::-1].iloc[:3].tolist()
    (means,) = [line for line in _lines(result) if line.startswith("mean")]
    assert means == (
        f"mean of the 3 rows listed, not of all {len(down)}: "
        f"chg_pct={value_text(down.iloc[-3:].mean())}"
    )
    # A limit that cuts nothing: the mean is of every row kept.
    whole = ask({**query, "limit": len(down)}, engine_settings, **RTH_DAILY)
    (means,) = [line for line in _lines(whole) if line.startswith("mean")]
    assert means == f"mean: chg_pct={value_text(down.mean())}"
