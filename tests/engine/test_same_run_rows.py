"""A ranking by a streak lists several rows of one run, and says so (p35c C3): NQ's "5
longest losing streaks", sorted by streak(close < prev(close)) and cut to 5, listed
2008-04-30 (10) beside 2008-05-01 (11), the same run a day earlier. The runs and their last
days are found with pandas over the hand-made bars' RTH days."""

from __future__ import annotations

import pandas as pd
import pytest
from asking import RTH_DAILY, ask, warnings_with
from rth_bars import rth_daily

SAID = "rows listed by run are"
LAST_ROW = "run > 0 and coalesce(next(run), 0) == 0"


def _runs(flags: pd.Series) -> pd.Series:
    """How many rows in a row ``flags`` has been true, ending at each row (0 when false)."""
    return flags.astype(int).groupby((~flags).cumsum()).cumsum()


@pytest.fixture(scope="module")
def closes(minutes: pd.DataFrame) -> pd.Series:
    return rth_daily(minutes)["close"]


def _query(condition: str, **more: object) -> dict:
    return {"map": {"run": f"streak({condition})"}, "select": ["date()", "run"], **more}


def test_a_top_list_of_streaks_counts_the_runs_it_lists(engine_settings, closes) -> None:
    runs = _runs(closes > closes.shift())
    top = runs.sort_values(ascending=False, kind="stable").head(5)
    starts = pd.Series(range(len(runs)), index=runs.index)[top.index] - top
    assert starts.nunique() == 1  # the hand-made days' longest up run is 9 days
    result = ask(
        _query("close > prev(close)", sort="run desc", limit=5), engine_settings, **RTH_DAILY
    )
    assert result.table["run"].tolist() == top.tolist() == [9, 8, 7, 6, 5]
    assert warnings_with(result, SAID) == [
        f"The 5 {SAID} 1 run, not 5: run counts a run's rows up to each one, so "
        "2024-02-26, 2024-02-27, 2024-02-28 and 2024-02-29 are earlier rows of the run at "
        f'2024-03-01 (9). Each run once, on its last row: "where": "{LAST_ROW}".'
    ]


@pytest.mark.parametrize("condition", ["close < prev(close)", "close > prev(close)"])
def test_the_where_it_gives_keeps_each_runs_last_day(engine_settings, closes, condition) -> None:
    """Every run once, on its last day, the one still going at the data's end too; its top
    list names no run twice."""
    flags = closes < closes.shift() if "<" in condition else closes > closes.shift()
    runs = _runs(flags)
    ends = runs[(runs > 0) & (runs.shift(-1).fillna(0) == 0)]
    result = ask(_query(condition, where=LAST_ROW), engine_settings, **RTH_DAILY)
    assert pd.to_datetime(result.table["date"]).tolist() == ends.index.tolist()
    assert result.table["run"].tolist() == ends.tolist()
    top = ask(
        _query(condition, where=LAST_ROW, sort="run desc", limit=5), engine_settings, **RTH_DAILY
    )
    assert top.table["run"].tolist() == ends.sort_values(ascending=False).head(5).tolist()
    assert not warnings_with(top, SAID)
    still = warnings_with(top, "is the data's last bar")
    if "<" not in condition:
        assert ends.index[-1] < closes.index[-1] and not still
        return
    # The hand-made days end in a down run of 3: kept, listed among the longest, and said
    # to be going on, as the data's end leaves it.
    assert ends.index[-1] == closes.index[-1] and ends.iloc[-1] == 3
    assert still == [
        "2024-03-28 (run = 3) is the data's last bar: its run is still going there, so 3 is "
        "its length so far, not a finished run's."
    ]
    before = {
        **_query(condition, where=LAST_ROW, sort="run desc", limit=5),
        "period": ":2024-03-27",
    }
    assert not warnings_with(ask(before, engine_settings, **RTH_DAILY), "the data's last bar")


def test_a_then_stages_rows_cut_through_a_tie_are_named_by_their_date(
    engine_settings, closes
) -> None:
    """A then stage's rows have no bar timestamp: the tie at its limit was named by one, and
    the query failed with an internal error. They are named by their first column."""
    query = {
        "select": ["date()", "close"],
        "then": {"map": {"up": "if(close > prev(close), 1, 0)"}, "sort": "up desc", "limit": 1},
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    up = closes[closes > closes.shift()]
    [said] = warnings_with(result, "cuts through a tie")
    named = ", ".join(f"{day:%Y-%m-%d}" for day in up.index[:3])
    assert f"{len(up)} rows have up = 1 ({named} and {len(up) - 3} more)" in said
