"""A streak record's CSV holds its longest run, not every day (p47d q09): "the longest run of
up days" (14 on NQ) came with all 4,647 RTH days. The runs are found with pandas over the
hand-made bars' RTH days."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest
from asking import RTH_DAILY, ask
from rth_bars import rth_daily

from barb.charts import chart_headline
from barb.export import csv_bytes, csv_rows, whole_rows
from barb.summary_text import render_summary

RECORD = {"map": {"run": "streak(close > prev(close))"}}


def _runs(flags: pd.Series) -> pd.Series:
    """How many rows in a row ``flags`` has been true, ending at each row (0 when false)."""
    return flags.astype(int).groupby((~flags).cumsum()).cumsum()


def _rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))


def _around_longest(runs: pd.Series) -> pd.Series:
    """Each longest run of ``runs`` with the row before and the row after it."""
    best = runs.max()
    keep: set[int] = set()
    for end in [i for i, v in enumerate(runs) if v == best]:
        keep.update(range(max(end - best, 0), min(end + 2, len(runs))))
    return runs.iloc[sorted(keep)]


@pytest.fixture(scope="module")
def days(minutes: pd.DataFrame) -> pd.DataFrame:
    daily = rth_daily(minutes)
    return daily.assign(up=_runs(daily["close"] > daily["close"].shift()))


@pytest.mark.parametrize("select", [["max(run)", "arg_max(date(), run) as ended"], "max(run)"])
def test_the_longest_up_run_is_the_file_with_the_days_either_side(
    engine_settings, days, select
) -> None:
    result = ask({**RECORD, "select": select}, engine_settings, **RTH_DAILY)
    expected = _around_longest(days["up"])
    assert expected.tolist() == [0, *range(1, 10), 0]  # the hand-made days' longest: 9
    written = _rows(csv_bytes(result))
    assert [row["date"] for row in written] == [f"{d:%Y-%m-%d}" for d in expected.index]
    assert [int(row["run"]) for row in written] == expected.tolist()
    assert [float(row["close"]) for row in written] == days["close"][expected.index].tolist()
    # The bot's button and caption count the file's rows, none cut.
    assert csv_rows(result) == whole_rows(result) == len(expected) < len(days)


def test_a_record_past_the_rows_kept_for_display_is_found(engine_settings, days) -> None:
    """Rows behind a number are cut to their first max_table_rows (50,000 minute bars): the
    run is looked for among all of them."""
    few = engine_settings.model_copy(update={"max_table_rows": 10})
    result = ask({**RECORD, "select": "max(run)"}, few, **RTH_DAILY)
    assert result.metadata.truncated
    expected = _around_longest(days["up"])
    assert days.index.get_loc(expected.index[0]) > 10
    written = _rows(csv_bytes(result))
    assert [row["date"] for row in written] == [f"{d:%Y-%m-%d}" for d in expected.index]
    assert csv_rows(result) == whole_rows(result) == len(expected)


def test_tied_losing_runs_of_a_then_stage_are_all_in_the_file(engine_settings, days) -> None:
    """Most losses in a row, streak(pnl < 0) in then.map (the backtest concept's form):
    every run of the longest length, each with its neighbours."""
    pnl = days["close"] - days["close"].shift()
    losses = _runs(pnl < 0)
    expected = _around_longest(losses)
    query = {
        "map": {"pnl": "close - prev(close)"},
        "select": ["date()", "pnl"],
        "then": {"map": {"loss_run": "streak(pnl < 0)"}, "select": "max(loss_run)"},
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    assert result.summary.value == losses.max()
    written = _rows(csv_bytes(result))
    assert [row["date"] for row in written] == [f"{d:%Y-%m-%d}" for d in expected.index]
    assert [int(row["loss_run"]) for row in written] == expected.tolist()
    assert (losses == losses.max()).sum() == 3  # a tie: the three runs are there


def test_other_numbers_keep_every_row_behind_them(engine_settings, days) -> None:
    """A mean of the streak, a max of something else: the rows behind the number, all."""
    for select in ["mean(run)", "max(close)"]:
        result = ask({**RECORD, "select": select}, engine_settings, **RTH_DAILY)
        assert len(_rows(csv_bytes(result))) == len(days)


def test_a_record_beside_other_statistics_keeps_every_row(engine_settings, days) -> None:
    """r48b bug 1: "longest up streak, average range and number of days" held only the runs
    (11 of 62 days) while its mean and count are over every day; a backtest's trades, win
    rate and total beside max(loss_run) held the longest losing runs alone."""
    query = {**RECORD, "select": ["max(run)", "mean(range)", "count()"]}
    result = ask(query, engine_settings, **RTH_DAILY)
    written = pd.DataFrame(_rows(csv_bytes(result)))
    assert result.summary.values["count"] == len(days) == len(written)
    assert written["range"].astype(float).mean() == pytest.approx(
        (days["high"] - days["low"]).mean()
    )
    assert csv_rows(result) == whole_rows(result) == len(days)

    backtest = {
        "map": {"pnl": "close - prev(close)"},
        "select": ["date()", "pnl"],
        "then": {
            "map": {"loss_run": "streak(pnl < 0)"},
            "select": ["count() as trades", "sum(pnl) as total", "max(loss_run)"],
        },
    }
    result = ask(backtest, engine_settings, **RTH_DAILY)
    trades = pd.DataFrame(_rows(csv_bytes(result)))
    pnl = (days["close"] - days["close"].shift()).dropna()
    assert result.summary.values["trades"] == len(trades) == len(days)
    assert pd.to_numeric(trades["pnl"]).sum() == pytest.approx(pnl.sum())


def test_the_note_of_a_record_past_the_rows_kept_says_no_cut(engine_settings, days) -> None:
    """r48b bug 2: the engine told the model "the CSV holds the first 10 of them" of a file
    holding the run's 11 rows, whole; another number over the same rows keeps the note."""
    few = engine_settings.model_copy(update={"max_table_rows": 10})
    cut = "the CSV holds the first 10 of them"
    record = ask({**RECORD, "select": "max(run)"}, few, **RTH_DAILY)
    assert csv_rows(record) == whole_rows(record) == len(_around_longest(days["up"]))
    assert not [w for w in record.metadata.warnings if cut in w]
    other = ask({**RECORD, "select": ["max(run)", "count()"]}, few, **RTH_DAILY)
    assert [w for w in other.metadata.warnings if cut in w]
    assert csv_rows(other) == 10 < whole_rows(other) == len(days)


def test_a_where_that_dropped_the_days_either_side_keeps_every_row(engine_settings, days) -> None:
    """r48b risk 3: with where run > 0 the days the run began after and broke on are not
    among the rows; the file had shown the neighbouring kept rows (3, 1 … 9, 1) as its
    edges. Now every kept row; a where that keeps them (close > 0) keeps the runs' file."""
    dropped = ask(
        {**RECORD, "where": "run > 0", "select": "max(run)"}, engine_settings, **RTH_DAILY
    )
    written = _rows(csv_bytes(dropped))
    kept = days[days["up"] > 0]
    assert [row["date"] for row in written] == [f"{d:%Y-%m-%d}" for d in kept.index]
    whole = ask(
        {**RECORD, "where": "close > 0", "select": "max(run)"}, engine_settings, **RTH_DAILY
    )
    assert [int(row["run"]) for row in _rows(csv_bytes(whole))] == [0, *range(1, 10), 0]


def test_unknown_days_before_a_run_are_passed_to_the_day_it_began_after(
    engine_settings, days
) -> None:
    """r48b nit 4: streak() passes over an unknown day, and the row before a run begun
    after one was that unknown day, not the day the run began after (0). The days before
    the longest up run back to the last down day before it are made unknown here: the file
    is every day from that down day to the day the run broke on."""
    up = days["up"]
    best = up.max()
    first = up.index.get_loc(up.index[up == best][0]) - best + 1
    down = [i for i in range(first - 1) if up.iloc[i] == 0][-1]  # before the day before
    blank = up.index[down + 1 : first]
    runs = up.copy().astype(float)
    runs.iloc[down + 1 : first] = float("nan")
    expected = runs.iloc[down : first + best + 1]
    assert expected.iloc[0] == expected.iloc[-1] == 0 and expected.isna().iloc[1]
    span = f"date() >= '{blank[0]:%Y-%m-%d}' and date() <= '{blank[-1]:%Y-%m-%d}'"
    query = {
        "map": {"run": f"streak(if({span}, 0/0, close - prev(close)) > 0)"},
        "select": ["max(run)", "arg_max(date(), run) as ended"],
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    assert result.summary.values["max_run"] == best
    written = _rows(csv_bytes(result))
    assert [row["date"] for row in written] == [f"{d:%Y-%m-%d}" for d in expected.index]
    assert [row["run"] for row in written] == ["" if pd.isna(v) else str(int(v)) for v in expected]


@pytest.mark.parametrize("condition", ["close > prev(close)", "close < prev(close)"])
def test_the_record_runs_dates_are_in_the_text_the_model_reads(
    engine_settings, days, condition
) -> None:
    """max(run) = 14 came with January 2008's rows, and the model could not say when the
    record was (p48f C2): one line names each longest run's last and first day (every one
    of a tie), from pandas over the RTH days."""
    close = days["close"]
    flags = close > close.shift() if ">" in condition else close < close.shift()
    runs = _runs(flags)
    best = int(runs.max())
    ends = [i for i, v in enumerate(runs) if v == best]
    spans = [(f"{runs.index[e]:%Y-%m-%d}", f"{runs.index[e - best + 1]:%Y-%m-%d}") for e in ends]
    result = ask(
        {"map": {"run": f"streak({condition})"}, "select": "max(run)"}, engine_settings, **RTH_DAILY
    )
    assert result.summary.value == best
    if len(spans) == 1:
        [(ended, began)] = spans
        said = f"the run of {best} (run) ended {ended}, began {began}"
    else:
        dates = [f"{ended} (began {began})" for ended, began in spans]
        said = f"the {len(spans)} runs of {best} (run) ended " + (
            f"{', '.join(dates[:-1])} and {dates[-1]}"
        )
    assert f"\nRecord: {said}.\n" in render_summary(result)


def test_a_record_begun_before_the_period_is_proved_with_its_rows_there(engine_settings, days):
    """p48i item 4: "max_run = 7" over 2025 had a file of 2 rows, 2025-01-02 (7) and
    2025-01-03 (0), the run's 6 days of 2024 not among them. A period opening inside the
    hand-made days' longest up run: the file holds the whole run from the day before it,
    its rows before the period noted, and the caption says where it began."""
    up = days["up"]
    best = int(up.max())
    end = up.index.get_loc(up.index[up == best][0])
    start = up.index[end - best + 4]  # the run's 4th day opens the period: 3 before it
    expected = up.iloc[end - best : end + 2]
    assert expected.tolist() == [0, *range(1, best + 1), 0]
    period = f"{start:%Y-%m-%d}:{up.index[-1]:%Y-%m-%d}"
    result = ask({**RECORD, "period": period, "select": "max(run)"}, engine_settings, **RTH_DAILY)
    assert result.summary.value == best
    written = _rows(csv_bytes(result))
    assert [row["date"] for row in written] == [f"{d:%Y-%m-%d}" for d in expected.index]
    assert [int(row["run"]) for row in written] == expected.tolist()
    before = [row["note"] == "before the period" for row in written]
    assert before == [d < start for d in expected.index] and sum(before) == 4
    assert all(row["note"] == "" for row in written if row["date"] >= f"{start:%Y-%m-%d}")
    ru = list(
        csv.DictReader(io.StringIO(csv_bytes(result, "ru").decode("utf-8-sig")), delimiter=";")
    )
    assert [row["примечание"] for row in ru][:4] == ["до периода"] * 4
    assert csv_rows(result) == whole_rows(result) == len(expected)
    # The caption: the period's own longest run, counted from its first day, and its end.
    own = _runs((days["close"] > days["close"].shift())[days.index >= start])
    began = f"{up.index[end - best + 1]:%Y-%m-%d}"
    note = (
        f"(run began {began}, before the period; within it: {own.max()}, to "
        f"{own.idxmax():%Y-%m-%d})"
    )
    assert chart_headline(result, "en") == f"maximum run = {best} days {note}"
    # A period the run lies inside: no note, no rows before it.
    inside = ask({**RECORD, "select": "max(run)"}, engine_settings, **RTH_DAILY)
    assert "note" not in _rows(csv_bytes(inside))[0]
    assert "before the period" not in chart_headline(inside, "en")
