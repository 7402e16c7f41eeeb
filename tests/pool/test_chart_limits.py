"""A chart never costs the answer: groups too many to draw get a one-line note instead of a
chart, and a chart slower than its budget is left out, the numbers and the CSV whole.

The minute groups of all history (6,382,050) took the chart 170 s after a 5 s query, and
the worker was killed at the 20 s limit with the answer. Here the same shapes on the ten
days of minute bars (``small_bars``), the limits lowered to fit them; the counts and the
CSV are checked against the bars themselves.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from celery.exceptions import SoftTimeLimitExceeded
from small_bars import small_bars

import barb.charts
import barb.charts.many_groups
from barb.settings import default_settings
from bot.pool import jobs
from bot.pool.jobs import QueryJob, QueryOutcome, chart_budget, run_query_job
from bot.pool.queue_app import run_job_json

BY_MINUTE = {"session": "ETH", "from": "1m", "group_by": "timestamp", "select": "count()"}
BY_DAY = {"session": "ETH", "from": "1m", "group_by": "date()", "select": "count()"}


@pytest.fixture
def bars(small_data: Path) -> Iterator[pd.DataFrame]:
    """The ten days' minute bars, the engine reading them (its settings read once)."""
    default_settings.cache_clear()
    yield small_bars()
    default_settings.cache_clear()


def csv_frame(csv: bytes | None) -> pd.DataFrame:
    assert csv is not None
    return pd.read_csv(io.BytesIO(csv))


def test_groups_too_many_to_draw_come_with_a_note_and_the_whole_csv(
    bars: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(barb.charts.many_groups, "MAX_CHART_GROUPS", 10_000)
    minutes = len(bars)  # ETH is 18:00-17:00: every bar is one group
    outcome = run_query_job(QueryJob(query=BY_MINUTE))
    assert outcome.ok and outcome.rows == minutes
    note = (
        f"No chart: {minutes:,} groups are too many to draw (the limit is 10,000); group by "
        "a coarser key, such as date() or hour(), for one."
    )
    assert outcome.chart_png is None and outcome.chart_name is None
    assert outcome.summary_text.splitlines()[-1] == note  # the model knows there is none
    assert outcome.warnings[-1] == note
    assert outcome.headline is None  # the caption falls back to the summary's first line
    table = csv_frame(outcome.csv)
    assert len(table) == outcome.csv_rows == minutes
    assert (table["count"] == 1).all()
    # The exchange's clock, named by it.
    assert pd.to_datetime(table["time_et"]).tolist() == bars["timestamp"].tolist()


def test_groups_under_the_limit_are_drawn(bars: pd.DataFrame, monkeypatch) -> None:
    monkeypatch.setattr(barb.charts.many_groups, "MAX_CHART_GROUPS", 10_000)
    outcome = run_query_job(QueryJob(query=BY_DAY))
    assert outcome.ok and outcome.chart_png is not None and outcome.headline
    assert not any(line.startswith("No chart") for line in outcome.summary_text.splitlines())
    counts = bars.groupby(bars["trading_date"]).size()
    assert csv_frame(outcome.csv)["count"].tolist() == counts.tolist()


# An alarm raised inside a finalizer the garbage collector runs is dropped by Python, said
# as unraisable, and rings again (``barb.script.limits.time_limit``): the assertions hold.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_chart_past_its_budget_is_left_out_and_the_answer_kept(
    bars: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    def endless(*args: object, **kwargs: object) -> None:
        time.sleep(60)  # a chart far slower than its budget

    monkeypatch.setattr(barb.charts, "render_answer", endless)
    monkeypatch.setattr(jobs, "CHART_BUDGET_S", 0.2)
    outcome = run_query_job(QueryJob(query=BY_DAY))
    note = (
        "No chart: drawing it took longer than the 0.2 s it had; the numbers and the CSV "
        "are complete."
    )
    assert outcome.ok and outcome.chart_png is None
    assert outcome.summary_text.splitlines()[-1] == note and outcome.warnings == [note]
    counts = bars.groupby(bars["trading_date"]).size()
    assert csv_frame(outcome.csv)["count"].tolist() == counts.tolist()
    # The alarm is gone with the chart: nothing interrupts what the worker does next.
    assert run_query_job(QueryJob(query=BY_DAY, chart=False)).ok


def test_the_chart_has_what_is_left_of_the_jobs_limit() -> None:
    job = QueryJob(query=BY_DAY, time_limit_s=20)
    # 15 s of the 20 gone: 3.5 s left once 1.5 s are kept for sending the outcome.
    assert 0 < chart_budget(job, time.monotonic() - 15) <= 20 - 15 - jobs.SEND_MARGIN_S
    assert chart_budget(job, time.monotonic() - 30) == 0.001  # none left: stopped at once
    assert chart_budget(job, time.monotonic()) == jobs.CHART_BUDGET_S
    assert chart_budget(QueryJob(query=BY_DAY), time.monotonic() - 60) == jobs.CHART_BUDGET_S


# An alarm raised inside a finalizer the garbage collector runs is dropped by Python, said
# as unraisable, and rings again (``barb.script.limits.time_limit``): the assertions hold.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_charts_off_past_the_budget_lose_only_the_headline(
    bars: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/settings charts off: only the headline is worked out, under the chart's budget (a
    grouped table near 200,000 groups takes it seconds). Past the budget the model read
    "No chart: drawing it took longer than the 0.2 s it had" of a chart nobody asked for,
    and the warnings said so too. Now only the headline is lost: the caption falls back to
    the summary's first line, and nothing speaks of a chart."""

    def endless(*args: object, **kwargs: object) -> None:
        time.sleep(60)  # a headline far slower than its budget

    monkeypatch.setattr(barb.charts, "chart_headline", endless)
    monkeypatch.setattr(jobs, "CHART_BUDGET_S", 0.2)
    outcome = run_query_job(QueryJob(query=BY_DAY, chart=False))
    assert outcome.ok and outcome.chart_png is None and outcome.headline is None
    assert outcome.warnings == []
    assert not any("chart" in line.lower() for line in outcome.summary_text.splitlines())
    counts = bars.groupby(bars["trading_date"]).size()
    assert csv_frame(outcome.csv)["count"].tolist() == counts.tolist()


@pytest.mark.parametrize("chart", [True, False])
def test_a_chart_past_the_memory_ceiling_costs_only_the_chart(
    bars: pd.DataFrame, monkeypatch: pytest.MonkeyPatch, chart: bool
) -> None:
    """A MemoryError while drawing was taken for a drawing bug: logged as an error, "The
    chart could not be drawn (reference 1a2b3c4d).", and the worker whose heap the chart
    grew went on. Now it is the memory case: the model reads that the chart needed more
    memory than the worker has, the numbers and CSV whole, and the worker is marked spent
    (the bot's pool replaces it before its next job). Charts off, only the headline goes."""

    def too_big(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(barb.charts, "render_answer", too_big)
    monkeypatch.setattr(barb.charts, "chart_headline", too_big)
    monkeypatch.setattr(jobs, "_spent", False)
    monkeypatch.setattr(jobs, "memory_ceiling", lambda: 3 << 30)
    outcome = run_query_job(QueryJob(query=BY_DAY, chart=chart))
    assert outcome.ok and outcome.chart_png is None and outcome.headline is None
    note = (
        "No chart: drawing it needed more memory than this worker has (3 GB); the numbers "
        "and the CSV are complete."
    )
    assert outcome.warnings == ([note] if chart else [])
    assert (outcome.summary_text.splitlines()[-1] == note) is chart
    counts = bars.groupby(bars["trading_date"]).size()
    assert csv_frame(outcome.csv)["count"].tolist() == counts.tolist()
    assert jobs.worker_spent()


@contextlib.contextmanager
def soft_limit_in(seconds: float) -> Iterator[None]:
    """Celery's soft time limit as a prefork child meets it: SIGUSR1 from its parent, whose
    handler (billiard's) raises ``SoftTimeLimitExceeded`` at whatever line runs then."""

    def raise_soft_limit(signum: int, frame: object) -> None:
        raise SoftTimeLimitExceeded()

    previous = signal.signal(signal.SIGUSR1, raise_soft_limit)
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGUSR1))
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, previous)


def test_the_workers_soft_limit_in_the_chart_leaves_it_out_and_keeps_the_answer(
    bars: pd.DataFrame, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A ``barb worker``'s soft limit reached while the chart draws (its own budget not yet
    spent) was caught as a drawing bug: an error logged with a traceback and "The chart
    could not be drawn (reference …)" for the model to pass on. Now it is what it is: the
    chart is left out for time, the numbers and the CSV whole."""

    def endless(*args: object, **kwargs: object) -> None:
        time.sleep(60)

    monkeypatch.setattr(barb.charts, "render_answer", endless)
    with soft_limit_in(0.3):
        outcome = run_query_job(QueryJob(query=BY_DAY))
    assert outcome.ok and outcome.chart_png is None
    assert not any("could not be drawn" in warning for warning in outcome.warnings)
    note = outcome.summary_text.splitlines()[-1]
    assert note.startswith("No chart: drawing it took longer than the ")
    assert outcome.warnings == [note]
    assert not any(record.levelname == "ERROR" for record in caplog.records)
    counts = bars.groupby(bars["trading_date"]).size()
    assert csv_frame(outcome.csv)["count"].tolist() == counts.tolist()


def test_the_workers_soft_limit_in_a_check_is_the_timeout_not_an_unchecked_plan(
    bars: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check still running at the worker's soft limit answered "The query could not be
    checked" (a failure of Barb's own, logged as the check's exception); the job's
    catch-all then never saw the limit. Now the limit reaches it: the timeout outcome."""

    def slow_check(*args: object, **kwargs: object) -> None:
        time.sleep(60)

    monkeypatch.setattr(jobs, "check", slow_check)
    with soft_limit_in(0.3):
        payload = run_job_json(QueryJob(query=BY_DAY, check_only=True).model_dump())
    outcome = QueryOutcome.model_validate(payload)
    assert not outcome.ok and outcome.error["error_type"] == "QueryTimeout"
