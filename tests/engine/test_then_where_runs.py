"""A then stage's running functions against the trades its where keeps (p39a M1, p38b Q15).

then.map runs before then.where (map before where, in both stages), so a backtest that kept
its trades with then.where and counted them in then.map counted the days dropped too: "buy
the RTH open on gap-up days" read most losses in a row 6 and a total of 744.25 (all 517
days') for 7 and 391.75 over its 289 trades; the ORB's 110 days without a break (pnl =
close - entry < 0 there) made 6 losses in a row read 9. Nothing said so, and the form that
works did not: an empty pnl ended the losing run. Now streak() skips an unknown condition as
cumsum() skips an empty value, the stage says when its where would change the runs, and the
concepts empty pnl on the days without a trade. Each number is checked against a loop over
the trades, taken from the bars with pandas.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import ask, warnings_with
from orb_trades import orb_trades
from rth_bars import rth_daily, rth_minutes, sample_rth_days

from barb.data.store import data_path
from barb.instruments import load_instrument
from barb.session_concepts import session_concepts
from barb.session_times import SessionTimes

RAN_OVER = "in then.map ran over all"
GAP_UP_DAYS = {
    "session": "RTH",
    "from": "daily",
    "map": {"pnl": "close - open", "g": "if(open > prev(close), 1, 0)"},
    "select": ["date()", "pnl", "g"],
}
SELECT = ["count() as trades", "max(loss_run) as most_losses", "last(equity) as total"]


def _gap_up_backtest(runs: dict[str, str]) -> dict:
    return GAP_UP_DAYS | {"then": {"where": "g == 1", "map": runs, "select": SELECT}}


def _most_losses_in_a_row(pnl) -> int:
    """The longest run of losing trades, one trade at a time."""
    most = run = 0
    for value in pnl:
        run = run + 1 if value < 0 else 0
        most = max(most, run)
    return most


def _gap_up_trades(days: pd.DataFrame) -> pd.Series:
    """Each day that opened above the previous RTH close: its close - open, in time order."""
    pnl = days["close"] - days["open"]
    return pnl[days["open"] > days["close"].shift()]


def _check_gap_up_backtest(settings, trades: pd.Series, all_days: int) -> None:
    truth = {"most_losses": _most_losses_in_a_row(trades), "total": trades.sum()}
    naive = ask(
        _gap_up_backtest({"loss_run": "streak(pnl < 0)", "equity": "cumsum(pnl)"}), settings
    )
    got = naive.summary.values
    assert got["trades"] == len(trades)
    assert (got["most_losses"], got["total"]) != pytest.approx(tuple(truth.values()))
    said = warnings_with(naive, RAN_OVER)
    assert said == [
        f"streak(pnl < 0) and cumsum(pnl) {RAN_OVER} {all_days:,} rows; then.where keeps "
        f"{len(trades):,}: make their arguments empty on the rows the where drops "
        "(streak(if(g == 1, pnl, 0 / 0) < 0); cumsum(if(g == 1, pnl, 0 / 0))) so the runs "
        "skip them."
    ]
    # The form it gives: the trades' own run and total, and nothing more said.
    followed = {
        "loss_run": "streak(if(g == 1, pnl, 0 / 0) < 0)",
        "equity": "cumsum(if(g == 1, pnl, 0 / 0))",
    }
    result = ask(_gap_up_backtest(followed), settings)
    assert result.summary.values == pytest.approx({"trades": len(trades), **truth})
    assert not warnings_with(result, RAN_OVER)


def test_a_gap_up_backtest_counts_its_trades_runs(engine_settings, minutes) -> None:
    days = rth_daily(minutes)
    _check_gap_up_backtest(engine_settings, _gap_up_trades(days), len(days))


def test_an_empty_pnl_does_not_end_a_losing_run(engine_settings, minutes) -> None:
    """pnl empty on the days the where drops: streak() runs across them, as cumsum() does.
    It had ended the run there, which this data's trades tell apart."""
    trades = _gap_up_trades(rth_daily(minutes))
    days = rth_daily(minutes)
    gapped = (days["open"] > days["close"].shift()).to_numpy()
    pnl = (days["close"] - days["open"]).to_numpy()
    ended = _most_losses_in_a_row(np.where(gapped, pnl, 0.0))  # a day without a trade: 0
    assert ended != _most_losses_in_a_row(trades)
    runs = {"p": "if(g == 1, pnl, 0 / 0)", "loss_run": "streak(p < 0)", "equity": "cumsum(p)"}
    result = ask(_gap_up_backtest(runs), engine_settings)
    assert result.summary.values["most_losses"] == _most_losses_in_a_row(trades)
    assert result.summary.values["total"] == pytest.approx(trades.sum())
    assert not warnings_with(result, RAN_OVER)


def _bars_since_loss(pnl) -> list[float]:
    """Rows since the last losing one (0 on a loss; empty before the first), a row at a
    time."""
    out, last = [], None
    for i, value in enumerate(pnl):
        if value < 0:
            last = i
        out.append(np.nan if last is None else i - last)
    return out


def test_bars_since_over_the_rows_a_where_drops_is_said_with_a_form_that_fixes_it(
    engine_settings, minutes
) -> None:
    """ "Trades since the last losing trade" as bars_since(pnl < 0) in then.map counted every
    day since the last losing day, kept or not, and nothing was said: emptying its argument
    changes nothing (it counts rows, empty or not). The form it is given, a streak of the
    condition being false over the kept rows, counts the trades."""
    days = rth_daily(minutes)
    trades = _gap_up_trades(days)
    pnl = days["close"] - days["open"]
    every_day = pd.Series(_bars_since_loss(pnl), index=days.index)[trades.index]
    own = np.array(_bars_since_loss(trades))
    assert not np.array_equal(every_day.to_numpy(), own, equal_nan=True)  # the case
    then = {"where": "g == 1", "map": {"since": "bars_since(pnl < 0)"}, "select": ["since"]}
    naive = ask(GAP_UP_DAYS | {"then": then}, engine_settings)
    np.testing.assert_array_equal(naive.table["since"].to_numpy(), every_day.to_numpy())
    assert warnings_with(naive, RAN_OVER) == [
        f"bars_since(pnl < 0) {RAN_OVER} {len(days):,} rows; then.where keeps "
        f"{len(trades):,}, and bars_since counts rows, empty or not: over the rows kept write "
        "streak(if(g == 1, pnl < 0, 0 / 0) == 0) (from the first row on; bars_since is empty "
        "until its condition is first true). Over all rows it counts the days (rows) since, "
        "right for a question of time."
    ]
    form = {"since": "streak(if(g == 1, pnl < 0, 0 / 0) == 0)"}
    fixed = ask(GAP_UP_DAYS | {"then": then | {"map": form}}, engine_settings)
    got = fixed.table["since"].to_numpy(dtype=np.float64)
    assert not np.isnan(own).any()  # the first trade lost: no row before the first loss
    np.testing.assert_array_equal(got, own)
    assert not warnings_with(fixed, RAN_OVER)


def test_a_streak_of_a_true_false_column_is_given_a_form_that_runs(
    engine_settings, minutes
) -> None:
    """streak(down) of a first-stage true/false column: the form it is given had been
    streak(if(g == 1, down, 0 / 0)), a number, which streak() refused ("needs a
    condition"). Compared with 1 again it runs, and counts the losing trades in a row."""
    days = rth_daily(minutes)
    trades = _gap_up_trades(days)
    truth = _most_losses_in_a_row(trades)
    down = (days["close"] < days["open"]).to_numpy()
    runs = np.zeros(len(down), dtype=int)  # down days in a row, over every day
    for i, is_down in enumerate(down):
        runs[i] = (runs[i - 1] + 1 if i else 1) if is_down else 0
    every_day = pd.Series(runs, index=days.index)[trades.index].max()
    first = GAP_UP_DAYS | {
        "map": {**GAP_UP_DAYS["map"], "down": "close < open"},
        "select": ["date()", "pnl", "g", "down"],
    }
    then = {"where": "g == 1", "map": {"run": "streak(down)"}, "select": "max(run)"}
    naive = ask(first | {"then": then}, engine_settings)
    assert naive.summary.value == every_day != truth  # the case
    form = "streak(if(g == 1, down, 0 / 0) == 1)"
    (said,) = warnings_with(naive, RAN_OVER)
    assert f"({form})" in said
    fixed = ask(first | {"then": then | {"map": {"run": form}}}, engine_settings)
    assert fixed.summary.value == truth
    assert not warnings_with(fixed, RAN_OVER)


def test_bars_since_that_the_where_cannot_change_is_not_said(engine_settings) -> None:
    """Days since the last gap up, on the gap-up days: 0 on each, however counted."""
    then = {"where": "g == 1", "map": {"since": "bars_since(g == 1)"}, "select": "max(since)"}
    result = ask(GAP_UP_DAYS | {"then": then}, engine_settings)
    assert result.summary.value == 0
    assert not warnings_with(result, RAN_OVER)


def test_a_where_that_cannot_change_the_answer_is_not_said(engine_settings, minutes) -> None:
    """A total over days whose pnl is 0 off the trades is the trades' own: nothing to say.
    Nor of a where on the run's own value, which keeps rows by it as it asks."""
    trades = _gap_up_trades(rth_daily(minutes))
    zero = {"p": "if(g == 1, pnl, 0)", "equity": "cumsum(p)"}
    query = GAP_UP_DAYS | {"then": {"where": "g == 1", "map": zero, "select": "last(equity)"}}
    result = ask(query, engine_settings)
    assert result.summary.value == pytest.approx(trades.sum())
    assert not warnings_with(result, RAN_OVER)
    on_the_run = {"where": "loss_run >= 2", "map": {"loss_run": "streak(pnl < 0)"}}
    query = GAP_UP_DAYS | {"then": on_the_run | {"select": "count()"}}
    assert not warnings_with(ask(query, engine_settings), RAN_OVER)


def test_a_run_read_on_its_own_last_rows_is_not_said(engine_settings, minutes) -> None:
    """then.where keeping each run's last day by the streak's own condition: the streak over
    every row is the run's length, as asked (p39b Q23's form in then)."""
    days = rth_daily(minutes)
    up = (days["close"] > days["open"]).tolist()
    lengths, run = [], 0
    for i, value in enumerate(up):
        run = run + 1 if value else 0
        if value and i + 1 < len(up) and not up[i + 1]:  # the last day has no next()
            lengths.append(run)
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"up": "close > open"},
        "select": ["date()", "up"],
        "then": {
            "map": {"run": "streak(up)", "run_end": "up and not next(up)"},
            "where": "run_end",
            "select": ["count() as runs", "max(run) as longest"],
        },
    }
    result = ask(query, engine_settings)
    assert result.summary.values == {"runs": len(lengths), "longest": max(lengths)}
    assert not warnings_with(result, RAN_OVER)


def test_a_first_stage_run_of_an_emptied_argument_is_the_kept_rows_own(
    engine_settings, minutes
) -> None:
    """The same form in the first stage: the run over every bar skips the bars the where
    drops, so it is not said to be every bar's."""
    trades = _gap_up_trades(rth_daily(minutes))
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {
            "g": "open > prev(close)",
            "p": "if(g, close - open, 0 / 0)",
            "loss_run": "streak(p < 0)",
            "equity": "cumsum(p)",
        },
        "where": "g",
        "select": SELECT,
    }
    result = ask(query, engine_settings)
    assert result.summary.values == pytest.approx(
        {"trades": len(trades), "most_losses": _most_losses_in_a_row(trades), "total": trades.sum()}
    )
    assert not warnings_with(result, "ran over every bar")


def _concept(name: str, session: str = "RTH") -> dict:
    query = session_concepts()[name].text_for(SessionTimes(load_instrument("NQ"))).query
    return query | {"session": session}


def _orb_pnl(bars: pd.DataFrame, close_minute: int) -> pd.Series:
    """Each ORB trade's P&L by its day (``orb_trades``)."""
    return orb_trades(bars, close_minute).set_index("day")["pnl"].sort_index()


def test_the_stop_and_target_concept_counts_its_trades_losses_in_a_row(
    engine_settings, minutes
) -> None:
    rth = rth_minutes(minutes)
    rth["minute"] = rth["timestamp"].dt.hour * 60 + rth["timestamp"].dt.minute
    trades = _orb_pnl(rth, 1020)
    query = _concept("stop_and_target")
    got = ask(query, engine_settings).summary.values
    assert got["trades"] == len(trades)
    assert got["most_losses_in_a_row"] == _most_losses_in_a_row(trades)
    # pnl not emptied: the 5 days without a break run as losses, but inside no longer run
    # than the longest: the answer stands, and nothing is said.
    naive = ask(_unemptied(query), engine_settings)
    assert len(trades) < naive.metadata.then_rows[1]
    assert naive.summary.values["most_losses_in_a_row"] == _most_losses_in_a_row(trades)
    assert not warnings_with(naive, RAN_OVER)


def _unemptied(query: dict) -> dict:
    """The stop_and_target query as the play test ran it: pnl not emptied off the trades."""
    mapped = dict(query["then"]["map"])
    mapped["pnl"] = "if(stopped, stop - entry, if(won, target - entry, close - entry))"
    return query | {"then": query["then"] | {"map": mapped}}


def test_the_volume_profile_s_where_on_its_running_share_is_not_said(engine_settings) -> None:
    query = _concept("volume_profile") | {"period": "2024-02-06"}
    assert not warnings_with(ask(query, engine_settings), RAN_OVER)


# --- the play test's questions over the full sample ---------------------------------------


@pytest.mark.slow
def test_the_gap_up_backtest_of_2024_25_is_7_losses_and_488_5(sample_settings) -> None:
    """p39a Q26: Barb read 6 and 841 (all 516 days'), with nothing said. (7 and 391.75
    against 6 and 744.25 over 517 days before p41b closed 2025-01-09 at 09:30, no RTH bar.)"""
    days = sample_rth_days(sample_settings)
    trades = _gap_up_trades(days)  # the first day reads 2023's last close
    dates = pd.to_datetime(trades.index)
    in_period = (dates >= "2024-01-01") & (dates <= "2025-12-31")
    trades = trades[in_period]
    assert (_most_losses_in_a_row(trades), round(trades.sum(), 2)) == (7, 488.5)
    period = pd.to_datetime(days.index)
    all_days = int(((period >= "2024-01-01") & (period <= "2025-12-31")).sum())

    def backtest(runs: dict[str, str]) -> dict:
        return _gap_up_backtest(runs) | {"period": "2024:2025"}

    naive = ask(backtest({"loss_run": "streak(pnl < 0)", "equity": "cumsum(pnl)"}), sample_settings)
    assert naive.summary.values["most_losses"] == 6
    assert naive.summary.values["total"] == pytest.approx(841.0)
    assert warnings_with(naive, f"{RAN_OVER} {all_days} rows; then.where keeps {len(trades)}")
    followed = {
        "loss_run": "streak(if(g == 1, pnl, 0 / 0) < 0)",
        "equity": "cumsum(if(g == 1, pnl, 0 / 0))",
    }
    fixed = ask(backtest(followed), sample_settings).summary.values
    assert (fixed["most_losses"], fixed["total"]) == (7, pytest.approx(488.5))


@pytest.mark.slow
def test_the_cash_orb_of_2024_25_is_6_losses_in_a_row(sample_settings) -> None:
    """p39a Q3: the stop_and_target concept with backtest_basics' streak read 9 over the
    CASH session, its 110 days without a break counted as losses; its trades give 6."""
    columns = ["timestamp", "open", "high", "low", "close", "trading_date", "minute"]
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=columns)
    dates = pd.to_datetime(bars["trading_date"])
    bars = bars[(dates >= "2024-01-01") & (dates <= "2025-12-31") & (bars["minute"] >= 570)]
    bars = bars.assign(day=bars["trading_date"])
    trades = _orb_pnl(bars, 960)  # CASH: 09:30-16:00
    assert _most_losses_in_a_row(trades) == 6
    query = _concept("stop_and_target", "CASH")
    got = ask(query, sample_settings).summary.values
    assert (got["trades"], got["most_losses_in_a_row"]) == (len(trades), 6)
    naive = ask(_unemptied(query), sample_settings)
    assert naive.summary.values["most_losses_in_a_row"] == 9
    assert warnings_with(naive, '("pnl": "if(traded == 1, …, 0 / 0)") so the run skips them.')
