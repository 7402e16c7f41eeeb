"""The worker pool heals: a failure fails only the job that caused it, and the next is answered.

Real worker processes (forked from the fork server, as in the bot) on ten days of bars.
Answers are checked against a count computed here with pandas, so "answered" means the right
number came back.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import shutil
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pool_work import BreaksThePoolWhenSent, misbehaving

from barb.data.mapped import mapped_path
from barb.settings import EngineSettings
from bot.pool.jobs import QueryJob
from bot.pool.runner import InlineRunner, ProcessRunner

COUNT = {"from": "daily", "session": "RTH", "select": "count()"}
DAYS = 10  # RTH daily bars in the small data set (conftest.DAYS)


@pytest.fixture
async def runner(small_data: Path) -> AsyncIterator[ProcessRunner]:
    runner = ProcessRunner(workers=1, timeout_s=60, work=misbehaving)
    yield runner
    await runner.close()


class BadJob(QueryJob):
    extra: Any = None


def answered(outcome) -> bool:
    return outcome.ok and outcome.result["summary"]["value"] == DAYS


def deep_select(depth: int) -> dict:
    """The issue's reproduction: a select list nested ``depth`` deep (~1,060 characters)."""
    return {"select": json.loads("[" * depth + '"close"' + "]" * depth)}


async def test_a_deeply_nested_query_is_refused_before_the_pool(runner: ProcessRunner) -> None:
    outcome = await runner.run(QueryJob(query=deep_select(500), chart=False, csv=False))
    assert not outcome.ok
    assert outcome.error["error_type"] == "QueryTooLarge"
    assert "nests JSON more than 8 levels deep" in outcome.summary_text
    assert answered(await runner.run(QueryJob(query=COUNT, chart=False, csv=False)))
    assert runner.pool_replacements == 0


# pebble's scheduler thread dies of the RecursionError: that death is the failure under test.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
async def test_a_job_that_breaks_the_pool_fails_alone_and_the_pool_is_replaced(
    runner: ProcessRunner,
) -> None:
    # Someone's query is in the pool (its worker is up) when the bad job arrives.
    assert answered(await runner.run(QueryJob(query=COUNT, chart=False, csv=False)))
    # The input limits keep every JSON query from doing this; the pool must heal regardless.
    bad = BadJob(query=COUNT, chart=False, csv=False, extra=BreaksThePoolWhenSent())
    others = [QueryJob(query=COUNT, chart=False, csv=False) for _ in range(3)]
    outcomes = await asyncio.gather(runner.run(bad), *(runner.run(job) for job in others))
    failed, *rest = outcomes
    assert not failed.ok
    assert failed.error["error_type"] == "WorkerDied"
    assert failed.summary_text.startswith("Error (WorkerDied): The query could not be run")
    assert "other queries are not affected" in failed.summary_text
    assert all(answered(outcome) for outcome in rest)
    assert runner.pool_replacements >= 1
    # And the next person after that.
    assert answered(await runner.run(QueryJob(query=COUNT, chart=False, csv=False)))


async def test_a_worker_that_dies_fails_only_its_job(runner: ProcessRunner) -> None:
    outcome = await runner.run(QueryJob(query={"die": True}, chart=False, csv=False))
    assert not outcome.ok
    assert outcome.error["error_type"] == "WorkerDied"
    assert "crashed its worker" in outcome.summary_text
    assert runner.restarts == 1
    assert answered(await runner.run(QueryJob(query=COUNT, chart=False, csv=False)))


async def started_pid(path: Path) -> int:
    """The pid a job wrote when it reached its worker (``pool_work``'s "started")."""
    for _ in range(600):
        if path.exists() and path.read_text():
            return int(path.read_text())
        await asyncio.sleep(0.05)
    raise AssertionError("the job never started")


async def test_a_check_given_up_on_while_running_keeps_its_worker(
    runner: ProcessRunner, tmp_path: Path
) -> None:
    """A plan waits a bounded time for its query checks; one given up on after it reached a
    worker ends by itself in milliseconds. Cancelling it made pebble end the worker, whose
    replacement loaded the instrument again (4.5 s on a loaded machine) for the next
    person's query; only a run given up on (a shutdown, /cancel) stops its worker."""
    started = tmp_path / "started"
    query = {**COUNT, "sleep": 0.5, "started": str(started)}
    checking = asyncio.create_task(runner.check(QueryJob(query=query, check_only=True)))
    pid = await started_pid(started)
    checking.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await checking
    described = await runner.run(QueryJob(query={"describe": "HOME"}, chart=False, csv=False))
    assert json.loads(described.summary_text)["pid"] == pid
    assert runner.restarts == 0 and runner.pool_replacements == 0

    # Given up on while queued behind a run (a busy pool: what the wait is for), the check
    # is already in the workers' pipe, and a cancel ended the worker that took it (r48a).
    started.unlink()
    query = {**COUNT, "sleep": 1.5, "started": str(started)}
    running = asyncio.create_task(runner.run(QueryJob(query=query)))
    pid = await started_pid(started)
    check = QueryJob(query={**COUNT, "sleep": 0.5}, check_only=True)
    checking = asyncio.create_task(runner.check(check))
    await asyncio.sleep(0.3)
    checking.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await checking
    assert answered(await running)
    traced = tmp_path / "trace"
    query = {**COUNT, "trace": str(traced)}  # queued behind the given-up check
    assert answered(await runner.run(QueryJob(query=query, chart=False, csv=False)))
    assert traced.read_text().split() == [str(pid)]
    assert runner.restarts == 0 and runner.pool_replacements == 0

    # A run given up on still stops its worker: its query may run for minutes.
    query = {**COUNT, "sleep": 0.5, "started": str(started)}
    started.unlink()
    running = asyncio.create_task(runner.run(QueryJob(query=query | {"sleep": 60})))
    pid = await started_pid(started)
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
    described = await runner.run(QueryJob(query={"describe": "HOME"}, chart=False, csv=False))
    assert json.loads(described.summary_text)["pid"] != pid


async def test_a_worker_killed_mid_query_by_the_system_is_said_plainly(
    runner: ProcessRunner, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The kernel's OOM killer SIGKILLs the largest process, most often the worker of the
    biggest query. The person read "This query could not be run because of a failure on
    my side (reference …)"; now the runner tells that kill from a crash, and the sentence
    says the system stopped the worker, most likely for memory, and what to try."""
    started = tmp_path / "started"
    job = QueryJob(query={**COUNT, "sleep": 60, "started": str(started)}, chart=False)
    running = asyncio.create_task(runner.run(job))
    os.kill(await started_pid(started), signal.SIGKILL)
    outcome = await asyncio.wait_for(running, 30)
    assert not outcome.ok and outcome.error["error_type"] == "WorkerKilled"
    ref = outcome.error["reference"]
    assert outcome.summary_text == (
        "Error (WorkerKilled): The query's worker was stopped by the system, most likely "
        f"because the machine ran out of memory (reference {ref}); try a shorter period or "
        "a longer timeframe."
    )
    assert any(ref in record.getMessage() for record in caplog.records)
    assert runner.restarts == 1 and runner.pool_replacements == 0
    assert answered(await runner.run(QueryJob(query=COUNT, chart=False, csv=False)))


async def test_an_idle_worker_killed_by_the_system_costs_only_that_worker(
    small_data: Path, tmp_path: Path
) -> None:
    """The OOM killer takes an idle worker (or one is killed just after its plan's check).
    pebble read a worker gone with no job running as "All workers expired" and broke the
    pool: every worker was replaced, and the next question's check waited for a whole new
    pool to load its data, up to the plan's 15 s wait. Now only the dead worker is
    replaced; the other, with its data loaded, answers the next query."""
    runner = ProcessRunner(workers=2, timeout_s=60, work=misbehaving)
    try:
        marks = [tmp_path / "first", tmp_path / "second"]
        # Two jobs at once, one on each worker: their pids.
        jobs = [
            runner.run(QueryJob(query={**COUNT, "sleep": 0.5, "started": str(m)}, chart=False))
            for m in marks
        ]
        outcomes = await asyncio.gather(*jobs)
        assert all(answered(outcome) for outcome in outcomes)
        victim, survivor = [int(m.read_text()) for m in marks]
        assert victim != survivor
        # Idle: the answers have left and the workers wait for the next job (a worker killed
        # within microseconds of its answer can still hold the channel's lock, and the pool
        # is then replaced, as before).
        await asyncio.sleep(0.5)
        os.kill(victim, signal.SIGKILL)
        workers = runner._pool._pool_manager.worker_manager.workers  # pebble's own record
        while victim in workers:  # until pebble has seen the death (it looks every 0.1 s)
            await asyncio.sleep(0.05)

        assert answered(await runner.run(QueryJob(query=COUNT, chart=False, csv=False)))
        assert runner.pool_replacements == 0 and runner.restarts == 0
        os.kill(survivor, 0)  # still there: not stopped with a replaced pool
        assert answered(await runner.run(QueryJob(query=COUNT, chart=False, csv=False)))
    finally:
        await runner.close()


async def test_a_job_that_raises_is_one_sentence_and_the_pool_keeps_running(
    runner: ProcessRunner, caplog: pytest.LogCaptureFixture
) -> None:
    outcome = await runner.run(QueryJob(query={"raise": True}, chart=False, csv=False))
    assert not outcome.ok
    assert "MemoryError" not in outcome.summary_text
    ref = outcome.summary_text.split("reference ")[1][:8]
    assert any(ref in record.getMessage() for record in caplog.records)
    assert answered(await runner.run(QueryJob(query=COUNT, chart=False, csv=False)))
    assert runner.pool_replacements == 0


async def describe(runner: ProcessRunner, variable: str = "BARB_TEST_MARK") -> dict[str, Any]:
    outcome = await runner.run(QueryJob(query={"describe": variable}, chart=False, csv=False))
    return json.loads(outcome.summary_text)


MEMORY_SENTENCE = (
    "Error (OutOfMemory, step execute): The query needed more memory than a worker has "
    "(700 MB); join fewer instruments, use a shorter period or a longer timeframe."
)


async def test_a_query_past_the_memory_ceiling_is_told_so_and_its_worker_replaced(
    small_data: Path,
) -> None:
    """A worker's own memory is capped (RLIMIT_DATA): a query that builds a 1 GB frame under
    a 700 MB ceiling gets the sentence the model can act on, not "Internal error"; its
    worker is replaced, the pool keeps its one worker, and the next query is answered. (A
    fresh worker holds about 210 MB and a 100 MB frame briefly needs 200 MB: under a 400 MB
    ceiling the query meant to fit failed now and then.)"""
    runner = ProcessRunner(workers=1, timeout_s=60, memory_gb=700 / 1024, work=misbehaving)
    try:
        first = await describe(runner)
        assert first["memory_ceiling"] == 700 << 20
        # Under the ceiling, with the data loaded: the same query is answered.
        assert answered(await runner.run(QueryJob(query={**COUNT, "grow_mb": 100})))
        big = {**COUNT, "grow_mb": 1024}
        outcome = await runner.run(QueryJob(query=big, chart=False, csv=False))
        assert not outcome.ok
        assert outcome.error["error_type"] == "OutOfMemory"
        assert outcome.summary_text == MEMORY_SENTENCE
        assert runner.restarts == 1 and runner.pool_replacements == 0
        assert answered(await runner.run(QueryJob(query=COUNT, chart=False, csv=False)))
        second = await describe(runner)
    finally:
        await runner.close()
    assert second["pid"] != first["pid"]
    assert second["memory_ceiling"] == 700 << 20  # the replacement is capped too
    assert first["workers"] == [first["pid"]] and second["workers"] == [second["pid"]]


async def test_a_worker_that_made_an_arrow_copy_keeps_its_ceiling_for_queries(
    tmp_path: Path, small_data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker whose first question converts a Parquet file to its Arrow copy (missing or
    out of date: after `barb data restore`, or a read-only data directory) made Arrow's
    allocator, mimalloc, reserve a 1 GiB arena it never gave back, which the ceiling
    (RLIMIT_DATA) counts: an ordinary ES join of 2.1 GB was then refused under the default
    3 GB. Here a 200 MB frame (400 MB at its peak) under a 1.25 GB ceiling: answered by a
    fresh worker, it was refused after the conversion. Arrow allocates with malloc now."""
    data = tmp_path / "data"
    shutil.copytree(small_data_dir, data)  # its Arrow copy not made yet
    monkeypatch.setenv("BARB_DATA_DIR", str(data))
    runner = ProcessRunner(workers=1, timeout_s=60, memory_gb=1.25, work=misbehaving)
    try:
        first = await runner.run(QueryJob(query=COUNT, chart=False, csv=False))
        assert answered(first), first.summary_text
        made = mapped_path(data / "NQ.parquet", EngineSettings())
        assert made.exists()  # made by the worker, under its ceiling
        seen = await describe(runner)
        grown = await runner.run(QueryJob(query={**COUNT, "grow_mb": 200}, chart=False))
    finally:
        await runner.close()
    assert answered(grown), grown.summary_text
    assert runner.restarts == 0
    assert seen["arrow_pool"] == "system"
    # What the ceiling counts stays near what the worker holds (1.1 GB apart with mimalloc).
    status = {key: int(kb) << 10 for key, kb in seen["status"].items()}
    assert status["VmData"] - status["RssAnon"] < 256 << 20


async def test_a_chart_past_the_ceiling_keeps_its_answer_and_its_worker_is_replaced(
    runner: ProcessRunner,
) -> None:
    """A chart that ran out of memory was taken for a drawing bug, and its worker, whose
    heap the chart grew, went on. Now the answer goes back without the chart and the worker
    gives way when the next job reaches it: that job is run by its replacement."""
    first = await describe(runner)
    outcome = await runner.run(QueryJob(query={**COUNT, "chart_oom": True}))
    assert answered(outcome) and outcome.chart_png is None
    assert outcome.warnings == [
        "No chart: drawing it needed more memory than this worker has (3 GB); the numbers "
        "and the CSV are complete."
    ]
    second = await describe(runner)
    assert second["pid"] != first["pid"] and second["workers"] == [second["pid"]]
    assert runner.restarts == 1 and runner.pool_replacements == 0
    assert answered(await runner.run(QueryJob(query=COUNT)))
    assert (await describe(runner))["pid"] == second["pid"]


async def test_a_replaced_worker_is_forked_from_the_same_warm_fork_server(
    runner: ProcessRunner,
) -> None:
    """No worker imports the engine for itself: the first and its replacement are children of
    one fork server, and arrive with what it imported (matplotlib, which no job here used)."""
    first = await describe(runner)
    assert "multiprocessing.forkserver" in first["parent"]
    assert first["matplotlib"] is True

    outcome = await runner.run(QueryJob(query={"die": True}, chart=False, csv=False))
    assert outcome.error is not None and runner.restarts == 1
    second = await describe(runner)
    assert second["pid"] != first["pid"]
    assert second["ppid"] == first["ppid"]
    assert second["matplotlib"] is True


async def test_workers_read_the_environment_of_when_their_pool_was_made(
    small_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fork server keeps the environment it started with; a worker must see the bot's
    as it is when the pool is made, as a spawned worker would."""
    first = ProcessRunner(workers=1, timeout_s=60, work=misbehaving)
    try:
        await describe(first)  # the fork server is running from here on
        monkeypatch.setenv("BARB_TEST_MARK", "set after the fork server started")
        second = ProcessRunner(workers=1, timeout_s=60, work=misbehaving)
        try:
            seen = await describe(second)
        finally:
            await second.close()
    finally:
        await first.close()
    assert seen["env"] == "set after the fork server started"


async def test_the_inline_runner_has_the_same_limits(small_data: Path) -> None:
    outcome = await InlineRunner().run(QueryJob(query=deep_select(500)))
    assert outcome.error["error_type"] == "QueryTooLarge"


async def test_a_job_past_its_time_limit_is_stopped_and_the_next_answered(small_data: Path):
    runner = ProcessRunner(workers=1, timeout_s=1, work=misbehaving)
    try:
        assert answered(await runner.run(QueryJob(query=COUNT, chart=False, csv=False)))
        outcome = await runner.run(QueryJob(query={"sleep": 600}, chart=False, csv=False))
        assert outcome.error["error_type"] == "QueryTimeout"
        assert "took longer than 1 seconds and was stopped" in outcome.summary_text
        assert runner.restarts == 1
        assert answered(await runner.run(QueryJob(query=COUNT, chart=False, csv=False)))
    finally:
        await runner.close()


async def test_barb_chat_runs_queries_under_the_bots_time_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bot.chat_cli import chat_runner
    from bot.settings import BotSettings

    monkeypatch.setenv("BARB_QUERY_TIMEOUT_S", "7.5")
    runner = chat_runner()
    try:
        assert isinstance(runner, ProcessRunner)  # a worker that can be stopped, not a thread
        assert runner.timeout_s == BotSettings().query_timeout_s == 7.5
    finally:
        await runner.close()


@pytest.mark.parametrize("worker_up", [False, True])
async def test_a_run_stopped_at_shutdown_leaves_nothing_to_print(
    small_data: Path, caplog: pytest.LogCaptureFixture, worker_up: bool
) -> None:
    """A shutdown cancels the answers in progress, then closes the pool. The run's future
    must go with it: left pending, it took pebble's BrokenProcessPool at close and asyncio
    printed it, unread, with pebble's thread in the traceback (seen at shutdown under load,
    when the run was cancelled before its worker had started)."""
    runner = ProcessRunner(workers=1, timeout_s=60, work=misbehaving)
    if worker_up:
        assert answered(await runner.run(QueryJob(query=COUNT, chart=False, csv=False)))
    running = asyncio.create_task(runner.run(QueryJob(query={"sleep": 60}, chart=False, csv=False)))
    await asyncio.sleep(0.5 if worker_up else 0.05)  # in the worker / still being sent
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
    await runner.close()
    for _ in range(3):  # pebble's thread hands its outcome to the loop with call_soon
        await asyncio.sleep(0)
    del running
    gc.collect()
    unread = [r for r in caplog.records if "never retrieved" in r.getMessage()]
    assert unread == [], unread[0].getMessage()


async def test_a_worker_killed_holding_the_channel_lock_costs_the_other_job_nothing(
    small_data: Path, tmp_path: Path
) -> None:
    """A worker killed while it holds the workers' channel lock (sending its answer, or
    taking a job) while another worker runs a job. That other job's answer waited for the
    lock pebble's 60 s, then its worker died and the person read "The query crashed its
    worker"; now the pool is replaced as soon as the lock is found held by the dead, and
    the other job runs again there: its right answer, and the next query answered too."""
    runner = ProcessRunner(workers=2, timeout_s=120, work=misbehaving)
    try:
        other_mark, holder_mark = tmp_path / "other", tmp_path / "holder"
        other = asyncio.create_task(
            runner.run(QueryJob(query={**COUNT, "sleep": 1.0, "started": str(other_mark)}))
        )
        await started_pid(other_mark)
        holding = {**COUNT, "hold_channel": True, "started": str(holder_mark), "sleep": 600}
        holder = asyncio.create_task(runner.run(QueryJob(query=holding, chart=False)))
        os.kill(await started_pid(holder_mark), signal.SIGKILL)

        killed = await asyncio.wait_for(holder, 30)
        assert not killed.ok and killed.error["error_type"] == "WorkerKilled"
        # Before: after 60 s, "The query crashed its worker and was stopped (reference …)".
        outcome = await asyncio.wait_for(other, 30)
        assert answered(outcome), outcome.summary_text
        assert runner.pool_replacements == 1
        assert answered(await runner.run(QueryJob(query=COUNT, chart=False, csv=False)))
    finally:
        await runner.close()
