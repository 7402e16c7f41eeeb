"""Queries on Celery workers over a real Redis: the same outcomes as in process, routed by
instrument, time limits enforced by the worker, and no silence when a worker is lost.

Redis is the real server (``servers/redis.py``); workers are real processes: ``barb worker``
itself, or its code with a job that misbehaves on request (``servers/celery_workers.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import os
import re
import signal
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis
from pool_work import misbehaving
from servers.celery_workers import WorkerProcess, barb_worker, misbehaving_worker, worker_env
from servers.redis import RedisServer
from small_bars import small_bars

from barb.data.store import DataMeta, data_path, read_meta, write_bars
from barb.settings import EngineSettings, default_settings
from bot.assistant.orchestrator import Assistant, AssistantSettings, Stopped
from bot.assistant.replies import Asker
from bot.bot_run import resume_window_s
from bot.llm.scripted import ScriptedProvider, tool_call, turn
from bot.llm.sdk_provider import RETRY_AFTER_CAP_S
from bot.llm.settings import LLMSettings, make_provider
from bot.pool import celery_runner, worker_registry
from bot.pool.celery_runner import CeleryRunner
from bot.pool.job_claims import (
    CLAIM_PREFIX,
    claim_key,
    finish_claim,
    holder,
    may_record,
    release_claim,
    take_claim,
)
from bot.pool.jobs import QueryJob, QueryOutcome, timeout_outcome
from bot.pool.queue_app import (
    RESULT_EXPIRES_S,
    data_meta_key,
    hard_limit,
    make_queue_app,
    queue_name,
    run_job_json,
)
from bot.pool.runner import InlineRunner
from bot.settings import BotSettings
from bot.store.db import open_store
from bot.store.settings import StoreSettings

COUNT = {"from": "daily", "session": "RTH", "select": "count()"}
DAYS = 10  # RTH daily bars in the small data set (conftest.DAYS)
BY_WEEKDAY = {
    "session": "RTH",
    "from": "daily",
    "map": {"weekday": "dayname()"},
    "group_by": "weekday",
    "select": "mean(range)",
}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[list[WorkerProcess]]:
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        # The test is over: killed, not stopped (a warm shutdown waits 2-3 s for its pool).
        if worker.process.poll() is None:
            worker.kill()
        worker.stop()  # its log closed


@pytest.fixture
def data_env(two_instrument_data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    # The bot side reads the same files for InlineRunner's answers; the engine's settings
    # are read once per process, so they are forgotten before and after.
    monkeypatch.setenv("BARB_DATA_DIR", str(two_instrument_data_dir))
    default_settings.cache_clear()
    yield two_instrument_data_dir
    default_settings.cache_clear()


@dataclass
class Pool:
    """A test's queue: the Redis at ``url`` (the session's, or a test's own once it sets
    ``url``), the workers it starts and the runners and clients it opens, all closed when
    the test ends (the workers last, by the ``workers`` fixture)."""

    url: str
    data_dir: Path
    logs: Path
    workers: list[WorkerProcess]
    _runners: list[CeleryRunner] = field(default_factory=list)
    _clients: list[redis.Redis] = field(default_factory=list)

    def worker(
        self,
        log: str = "worker.log",
        instruments: str = "NQ",
        *,
        timeout_s: float = 20,
        concurrency: int = 1,
        memory_gb: float | None = None,
        barb: bool = False,
    ) -> WorkerProcess:
        """A worker started and ready: the test's misbehaving one, or ``barb worker``."""
        env = worker_env(self.url, self.data_dir, timeout_s=timeout_s)
        if memory_gb is not None:
            env["BARB_WORKER_MEMORY_GB"] = str(memory_gb)
        start = barb_worker if barb else misbehaving_worker
        worker = start(env, self.logs / log, instruments, concurrency)
        self.workers.append(worker)
        return worker

    def runner(self, timeout_s: float = 20, queue_wait_s: float = 60, **kwargs) -> CeleryRunner:
        runner = CeleryRunner(self.url, timeout_s=timeout_s, queue_wait_s=queue_wait_s, **kwargs)
        self._runners.append(runner)
        return runner

    def redis(self) -> redis.Redis:
        client = redis.Redis.from_url(self.url)
        self._clients.append(client)
        return client

    async def close(self) -> None:
        for client in self._clients:
            client.close()
        for runner in self._runners:
            await runner.close()


@pytest.fixture
async def pool(
    redis_url: str, data_env: Path, workers: list[WorkerProcess], tmp_path: Path
) -> AsyncIterator[Pool]:
    pool = Pool(redis_url, data_env, tmp_path, workers)
    yield pool
    await pool.close()


def quick(query: dict, instrument: str = "NQ") -> QueryJob:
    return QueryJob(query=query, instrument=instrument, chart=False, csv=False)


def count_of(outcome: QueryOutcome) -> int:
    assert outcome.ok, outcome.summary_text
    return outcome.result["summary"]["value"]


def comparable(outcome: QueryOutcome) -> dict:
    """Everything but the chart's bytes and the time the engine took."""
    fields = outcome.model_dump(exclude={"chart_png"})
    fields["result"].get("metadata", {}).pop("elapsed_ms", None)
    return fields


def worker_failure(outcome: QueryOutcome) -> bool:
    return (
        not outcome.ok
        and outcome.error is not None
        and (outcome.error["error_type"] == "WorkerDied")
    )


def assert_said_with_its_reference(outcome: QueryOutcome, caplog: pytest.LogCaptureFixture) -> None:
    """The person's sentence quotes the reference of the log line: it read "(reference ?)"
    for every failure of the queue, which the log knew by its reference (p48b #3)."""
    ref = outcome.error["reference"]
    assert f"(reference {ref})" in outcome.summary_text
    assert f"(reference {ref})" in Stopped(outcome.error).sentence("en")
    assert any(f"(ref {ref})" in record.getMessage() for record in caplog.records)


async def test_an_outcome_from_a_worker_equals_the_in_process_one(pool: Pool) -> None:
    runner = pool.runner()
    pool.worker(instruments="NQ,ES", concurrency=2, barb=True)
    inline = InlineRunner()
    jobs = [
        QueryJob(query=BY_WEEKDAY, instrument="NQ"),
        QueryJob(query=BY_WEEKDAY, instrument="ES", language="ru"),
        QueryJob(query={"from": "daily", "session": "RTH", "select": "mean(rnage)"}),
    ]
    remote = await asyncio.gather(*(runner.run(job) for job in jobs))
    for job, outcome in zip(jobs, remote, strict=True):
        local = await inline.run(job)
        assert comparable(outcome) == comparable(local)
        if local.chart_png is None:
            assert outcome.chart_png is None
        else:
            assert outcome.chart_png.startswith(PNG_MAGIC)
            assert len(outcome.chart_png) == len(local.chart_png)
    nq, es, error = remote
    assert nq.ok and nq.csv and nq.csv.startswith(b"\xef\xbb\xbfweekday,")
    # ES is NQ's bars scaled by a tenth: each weekday's mean range is a tenth of NQ's.
    nq_means = {row["weekday"]: row["mean_range"] for row in nq.preview}
    es_means = {row["weekday"]: row["mean_range"] for row in es.preview}
    assert es_means == pytest.approx({day: mean / 10 for day, mean in nq_means.items()})
    assert error.error["error_type"] == "UnknownColumn"


async def test_a_worker_serves_only_its_instruments_queues(pool: Pool, tmp_path: Path) -> None:
    runner = pool.runner()
    pool.worker("nq.log", barb=True)
    es_job = asyncio.create_task(runner.run(quick(COUNT, "ES")))
    assert count_of(await runner.run(quick(COUNT, "NQ"))) == DAYS
    await asyncio.sleep(1.0)  # time enough for a worker to take it, were it listening
    assert not es_job.done()
    assert pool.redis().llen(queue_name("ES")) == 1  # still waiting in ES's own queue
    pool.worker("es.log", "ES", barb=True)
    assert count_of(await asyncio.wait_for(es_job, 60)) == DAYS
    assert (tmp_path / "nq.log").read_text().count("barb.query[") == 1  # the NQ job only
    assert (tmp_path / "es.log").read_text().count("barb.query[") == 1


async def test_a_job_no_worker_takes_ends_in_a_sentence_and_never_runs(
    pool: Pool, tmp_path: Path, caplog
) -> None:
    runner = CeleryRunner(pool.url, timeout_s=20, queue_wait_s=1)
    try:
        outcome = await runner.run(quick(COUNT, "ES"))
    finally:
        await runner.close()  # before the worker starts
    assert worker_failure(outcome)
    assert "No query worker took the query within 1 seconds" in outcome.summary_text
    assert_said_with_its_reference(outcome, caplog)
    # A worker that starts later discards it (expired) instead of answering nobody.
    pool.worker("es.log", "ES", barb=True)
    client = pool.redis()
    for _ in range(100):
        if client.llen(queue_name("ES")) == 0:
            break
        await asyncio.sleep(0.1)
    log = ""
    for _ in range(100):  # the worker logs the discard a moment after taking the task
        log = (tmp_path / "es.log").read_text()
        if "Discarding revoked task: barb.query" in log:
            break
        await asyncio.sleep(0.1)
    assert "Discarding revoked task: barb.query" in log, log
    assert not any(b'"SUCCESS"' in client.get(key) for key in client.keys("celery-task-meta-*"))


async def test_past_the_soft_limit_the_person_gets_the_timeout_sentence(pool: Pool) -> None:
    pool.worker(timeout_s=1)
    runner = pool.runner(timeout_s=1, queue_wait_s=60)
    outcome = await runner.run(quick({**COUNT, "sleep": 30}))
    assert outcome == timeout_outcome(1)
    # Met inside the engine, where a slow query spends its time: the engine's catch-all
    # for its own bugs answered "Internal error while running the query (reference …)",
    # a query error the model was asked to correct (p48b #1).
    outcome = await runner.run(quick({**COUNT, "engine_sleep": 30}))
    assert outcome == timeout_outcome(1)
    assert count_of(await runner.run(quick(COUNT))) == DAYS


async def test_the_soft_limit_met_while_the_answer_is_stored_keeps_the_answer(pool: Pool) -> None:
    """A query that ends just before its soft limit, its result stored while the limit
    fires (Redis slow to take it). Celery met ``SoftTimeLimitExceeded`` outside the task
    ("Exception raised outside body"), stored the job as failed, and the person read "The
    query could not be run (reference …)" for an answer computed in time. Now the soft
    limit is held off from the answer on: the answer is stored, and the worker goes on."""
    worker = pool.worker(timeout_s=2)
    runner = pool.runner(timeout_s=2, queue_wait_s=60)
    outcome = await runner.run(quick({**COUNT, "store_past_soft_limit": True}))
    log = worker.log.read_text()
    assert "Soft time limit (2s) exceeded" in log, "the limit never fired: nothing tested"
    assert count_of(outcome) == DAYS
    assert "raised outside body" not in log
    # The next job has its soft limit again (not left held off), and the worker lives.
    assert await runner.run(quick({**COUNT, "sleep": 30})) == timeout_outcome(2)
    assert count_of(await runner.run(quick(COUNT))) == DAYS


async def test_a_stuck_query_is_killed_at_the_hard_limit_and_the_worker_goes_on(
    pool: Pool, tmp_path: Path
) -> None:
    worker = pool.worker(timeout_s=1)
    runner = pool.runner(timeout_s=1, queue_wait_s=60)
    client = pool.redis()
    outcome = await runner.run(quick({**COUNT, "stuck": 60}))
    assert outcome == timeout_outcome(1)  # the same sentence as the in-process pool's
    # Its claim is finished (once, by ``on_failure``): a copy on its way does not run
    # again the query the person was told timed out.
    [claim] = client.keys(claim_key("*"))
    for _ in range(200):
        if client.get(claim) == b"done":
            break
        await asyncio.sleep(0.05)
    assert client.get(claim) == b"done"
    assert count_of(await runner.run(quick(COUNT))) == DAYS
    log = (tmp_path / "worker.log").read_text()
    assert "Hard time limit (3.0s) exceeded" in log
    assert worker.process.poll() is None  # the same worker, with a new child


async def test_a_query_that_kills_its_child_process_ends_in_the_failure_sentence(
    pool: Pool,
) -> None:
    pool.worker()
    runner = pool.runner()
    outcome = await runner.run(quick({**COUNT, "die": True}))
    assert worker_failure(outcome)
    assert "The query could not be run (reference " in outcome.summary_text
    assert count_of(await runner.run(quick(COUNT))) == DAYS


async def test_a_child_killed_mid_query_by_the_system_is_said_plainly(
    pool: Pool, tmp_path: Path
) -> None:
    """The kernel's OOM killer SIGKILLs a ``barb worker`` child mid-query: the person read
    "The query could not be run (reference …)"; now the sentence says the system stopped
    the worker, most likely for memory, and what to try, as from the bot's own pool.

    The job's claim says it is done: it said "running" until its expiry (the hard limit),
    and a copy of the job Redis handed out after that ran the query just killed for its
    memory again, for nobody (r47a #4)."""
    pool.worker()
    runner = pool.runner()
    started = tmp_path / "started"
    client = pool.redis()
    job = quick({**COUNT, "sleep": 60, "started": str(started)})
    running = asyncio.create_task(runner.run(job))
    for _ in range(600):
        if started.exists() and started.read_text():
            break
        await asyncio.sleep(0.05)
    os.kill(int(started.read_text()), signal.SIGKILL)
    outcome = await asyncio.wait_for(running, 30)
    assert outcome.error is not None and outcome.error["error_type"] == "WorkerKilled"
    assert outcome.summary_text == (
        "Error (WorkerKilled): The query's worker was stopped by the system, most likely "
        f"because the machine ran out of memory (reference {outcome.error['reference']}); "
        "try a shorter period or a longer timeframe."
    )
    [claim] = client.keys(claim_key("*"))
    for _ in range(200):  # finished by the worker once it has recorded the failure
        if client.get(claim) == b"done":
            break
        await asyncio.sleep(0.05)
    assert client.get(claim) == b"done"
    assert count_of(await runner.run(quick(COUNT))) == DAYS


async def test_a_query_past_the_workers_memory_ceiling_is_told_so_and_the_next_answered(
    pool: Pool,
) -> None:
    """``barb worker`` caps its processes' memory (BARB_WORKER_MEMORY_GB): a query that
    builds a 1 GB frame under 0.5 GB gets the memory sentence, as in the bot's own pool."""
    pool.worker(memory_gb=0.5)
    runner = pool.runner()
    assert count_of(await runner.run(quick({**COUNT, "grow_mb": 100}))) == DAYS
    outcome = await runner.run(quick({**COUNT, "grow_mb": 1024}))
    assert outcome.error is not None and outcome.error["error_type"] == "OutOfMemory"
    assert outcome.summary_text == (
        "Error (OutOfMemory, step execute): The query needed more memory than a worker "
        "has (512 MB); join fewer instruments, use a shorter period or a longer timeframe."
    )
    assert count_of(await runner.run(quick(COUNT))) == DAYS


async def _pid(runner: CeleryRunner) -> int:
    """The pid of the child process that answers the next query."""
    outcome = await runner.run(quick({**COUNT, "describe": "BARB_DATA_DIR"}))
    return json.loads(outcome.summary_text)["pid"]


async def test_a_process_that_ran_out_of_memory_is_replaced_after_its_answer(pool: Pool) -> None:
    """A ``barb worker`` child whose query or chart ran out of memory went on with the
    heap the query had grown (fragmented, it can keep the freed pages): the next queries
    ran in it. Now it answers, then ends, and the next query runs in a fresh child; its job
    is done, not lost with the child (no failure recorded over the answer the bot read)."""
    worker = pool.worker(memory_gb=0.5)
    runner = pool.runner()
    first = await _pid(runner)
    assert count_of(await runner.run(quick({**COUNT, "grow_mb": 100}))) == DAYS
    assert await _pid(runner) == first  # a query that fits leaves its child in place
    outcome = await runner.run(quick({**COUNT, "grow_mb": 1024}))
    assert outcome.error is not None and outcome.error["error_type"] == "OutOfMemory"
    second = await _pid(runner)
    assert second != first
    charted = await runner.run(QueryJob(query={**COUNT, "chart_oom": True}, csv=False))
    assert count_of(charted) == DAYS and charted.chart_png is None
    assert charted.warnings == [
        "No chart: drawing it needed more memory than this worker has (512 MB); the "
        "numbers and the CSV are complete."
    ]
    third = await _pid(runner)
    assert third not in (first, second)
    assert count_of(await runner.run(quick(COUNT))) == DAYS
    assert await _pid(runner) == third
    assert worker.process.poll() is None  # the same worker, with new children
    log = worker.log.read_text()
    assert log.count("query process ran out of memory: replaced after its answer") == 2
    # Done, not lost: no failure recorded over the stored answer, nothing looked up again.
    assert "WorkerLostError" not in log and "ERROR" not in log, log


async def _kill_once_started(pool: Pool, doomed: WorkerProcess) -> None:
    client = pool.redis()
    for _ in range(600):  # until its state is STARTED: it is running
        if client.keys("celery-task-meta-*"):
            break
        await asyncio.sleep(0.05)
    doomed.kill()


async def test_the_job_of_a_worker_killed_mid_query_is_run_by_another_worker(pool: Pool) -> None:
    doomed = pool.worker("doomed.log", timeout_s=2)
    runner = pool.runner(timeout_s=2, queue_wait_s=60)
    job = asyncio.create_task(runner.run(quick({**COUNT, "sleep": 1.0})))
    await _kill_once_started(pool, doomed)
    # Never acknowledged, the job goes back to its queue once no live worker could
    # still be running it (the visibility timeout), and the next worker runs it: the
    # dead run's claim on the job (job_claims) has expired by then.
    survivor = pool.worker("survivor.log", timeout_s=2)
    assert count_of(await asyncio.wait_for(job, 60)) == DAYS
    assert "Task barb.query[" in survivor.log.read_text()


async def test_a_worker_killed_mid_query_with_no_other_ends_the_job_in_the_failure_sentence(
    pool: Pool,
) -> None:
    doomed = pool.worker("doomed.log", timeout_s=2)
    # Once the job has expired (queue_wait_s after it was sent) no worker may take it any
    # more: past that and the hard limit, the person is told.
    runner = pool.runner(timeout_s=2, queue_wait_s=3)
    job = asyncio.create_task(runner.run(quick({**COUNT, "stuck": 60})))
    await _kill_once_started(pool, doomed)
    outcome = await asyncio.wait_for(job, 60)
    assert worker_failure(outcome)
    assert "The query could not be run (reference " in outcome.summary_text
    # A worker started again serves the next query; the expired job is not run.
    pool.worker("restarted.log", timeout_s=2, barb=True)
    runner.queue_wait_s = 60
    assert count_of(await runner.run(quick(COUNT))) == DAYS


async def test_a_check_whose_worker_is_killed_ends_at_once_not_after_the_plans_wait(
    pool: Pool,
) -> None:
    """kill -9 of the worker running a plan's query check: the check would go back to its
    queue only after the visibility timeout, past its expiry, so nobody answers it. Before,
    the plan waited its whole wait for it (``BARB_CHECK_WAIT_S``, 15 s by default; here
    600 s); now the worker's heartbeat is gone within seconds and the check ends in the
    failure sentence, which shows the plan unchecked (``orchestrator._NOT_THE_QUERYS``)."""
    doomed = pool.worker("doomed.log")
    runner = pool.runner(queue_wait_s=600, check_wait_s=600)
    check = QueryJob(query={**COUNT, "sleep": 60}, chart=False, csv=False, check_only=True)
    job = asyncio.create_task(runner.check(check))
    await _kill_once_started(pool, doomed)
    outcome = await asyncio.wait_for(job, 60)
    assert worker_failure(outcome), outcome.summary_text
    assert not runner._in_flight


class FrozenClock:
    """``time`` for the runner alone, its ``monotonic`` stopped: the runner's waits never
    end by themselves (Redis's clock, and the worker's, run on)."""

    def __init__(self) -> None:
        self.now = time.monotonic()

    def monotonic(self) -> float:
        return self.now


async def test_a_check_whose_worker_is_killed_ends_once_its_entry_is_past_its_moment(
    pool: Pool, monkeypatch
) -> None:
    """kill -9 of the worker running a plan's check while Redis answers all along: its entry
    in the registry passes its moment (no beat for ``HEARTBEAT_TTL_S``) and the check ends
    at the bot's next read. Before, the bot also waited until it had read the worker absent
    for 3 s (a wait meant for Redis back from an outage, when every live worker's entry is
    past its moment until its next beat): the plan came about 7 s after the kill instead of
    4. The runner's clock is stopped here, so only a judgement made at the first absent read
    ends the check (before: never)."""
    from bot.pool import celery_runner

    doomed = pool.worker("doomed.log")
    monkeypatch.setattr(celery_runner, "time", FrozenClock())
    runner = pool.runner(queue_wait_s=600, check_wait_s=600)
    check = QueryJob(query={**COUNT, "sleep": 60}, chart=False, csv=False, check_only=True)
    job = asyncio.create_task(runner.check(check))
    await _kill_once_started(pool, doomed)
    outcome = await asyncio.wait_for(job, 30)
    assert worker_failure(outcome), outcome.summary_text


async def test_workers_say_what_data_they_serve_and_see_an_import_made_there(
    pool: Pool, tmp_path: Path
) -> None:
    """The bot, on another machine, counts relative periods from the data the workers say
    they serve (``CeleryRunner.data_meta``). Its bars replaced on the workers' machine (an
    import there: here one week where there were two), the workers say the new last day
    within seconds, and the next query runs on the new bars."""
    settings = EngineSettings(data_dir=tmp_path / "data")
    path = data_path("NQ", settings)
    minutes = small_bars()  # 2024-03-04 … 2024-03-15
    meta = DataMeta(
        instrument="NQ",
        timezone="America/New_York",
        source="imported",
        description="two weeks",
        first_date=dt.date(2024, 3, 4),
        last_date=dt.date(2024, 3, 15),
        rows=len(minutes),
    )
    write_bars(minutes, meta, path)
    pool.data_dir = settings.data_dir
    pool.worker(barb=True)
    runner = pool.runner()
    while runner.data_meta("NQ") is None:
        await asyncio.sleep(0.1)
    assert runner.data_meta("NQ") == read_meta(path)
    assert count_of(await runner.run(quick(COUNT))) == DAYS
    first_week = minutes[minutes["trading_date"] <= "2024-03-08"].reset_index(drop=True)
    week = meta.model_copy(update={"last_date": dt.date(2024, 3, 8), "rows": len(first_week)})
    write_bars(first_week, week, path)
    while runner.data_meta("NQ").last_date != dt.date(2024, 3, 8):
        await asyncio.sleep(0.1)
    assert runner.data_meta("NQ") == read_meta(path)
    assert count_of(await runner.run(quick(COUNT))) == 5  # RTH days of the first week


async def test_with_redis_hung_questions_never_stall_the_loop_and_keep_the_workers_dates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis hung (a machine lost: its port takes the connection and never answers, as a
    stopped process does here; one merely stopped refuses at once on this machine). The
    workers' dates were read in the event loop, 0.25 s at a time: every chat's question and
    every other task of the bot stalled. Now a ticking coroutine never waits longer than a
    fraction of one such read, measured in the same run, and each plan still counts from
    the data the workers said they serve (the bot holds none)."""
    monkeypatch.setattr("bot.pool.celery_runner._META_FRESH_S", 0.05)  # a read per question
    server = RedisServer(tmp_path)
    url = server.url()
    served = DataMeta(
        instrument="NQ",
        timezone="America/New_York",
        source="imported",
        description="the workers' data",
        first_date=dt.date(2024, 3, 4),
        last_date=dt.date(2024, 3, 15),
        rows=1000,
    )
    client = redis.Redis.from_url(url, socket_timeout=0.25, socket_connect_timeout=0.25)
    client.set(data_meta_key("NQ"), served.model_dump_json())
    query = {"session": "RTH", "from": "daily", "period": "last_3_days", "select": "count()"}
    questions = 4  # the first before Redis hangs: what a first question loads is not a stall
    store = await open_store(StoreSettings(database_url=f"sqlite+aiosqlite:///{tmp_path}/b.db"))
    runner = CeleryRunner(url, timeout_s=20, queue_wait_s=60)
    assistant = Assistant(
        ScriptedProvider([turn("Count.", tool_call("execute_query", query=query))] * questions),
        store,
        runner,
        settings=AssistantSettings(check_wait_s=0.5),
        engine_settings=EngineSettings(data_dir=tmp_path / "bot"),  # no data here
    )
    gaps: list[float] = []

    async def tick() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.005)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    try:
        while runner.data_meta("NQ") != served:
            await asyncio.sleep(0.01)
        await assistant.ask(Asker(chat_id=100, user_id=100), "count")
        server.process.send_signal(signal.SIGSTOP)
        started = time.monotonic()
        with contextlib.suppress(redis.RedisError):
            await asyncio.to_thread(client.get, data_meta_key("NQ"))
        one_read = time.monotonic() - started
        ticker = asyncio.create_task(tick())
        for user_id in range(1, questions):
            reply = await assistant.ask(Asker(chat_id=100 + user_id, user_id=user_id), "count")
            assert "Period: 2024-03-13 — 2024-03-15" in reply.pending.plan
            assert reply.pending.query["period"] == "2024-03-13:2024-03-15"
        ticker.cancel()
        assert len(gaps) > 10
        assert max(gaps) < one_read / 2, (max(gaps), one_read)
    finally:
        server.process.send_signal(signal.SIGCONT)
        await runner.close()
        await store.close()
        client.close()
        server.stop()


async def test_a_run_sent_to_a_hung_redis_ends_in_a_sentence_and_the_next_is_answered(
    pool: Pool, tmp_path: Path, caplog
) -> None:
    """Redis hung (its machine lost: the port takes the connection and never answers; a
    stopped process here) when Run is pressed. Before, the send waited on its socket for
    good on the bot's one Celery thread: the run never got an outcome (the plan said
    "Running…"), nor did any job sent after it, also once Redis was back. Now each call
    gives up after a few seconds: the person reads the failure sentence with its
    reference, and once Redis answers again the next query is answered."""
    server = RedisServer(tmp_path)
    url = pool.url = server.url()
    pool.worker("w.log")
    runner = CeleryRunner(url, timeout_s=20, queue_wait_s=60)  # closed before its Redis stops
    try:
        assert count_of(await runner.run(quick(COUNT))) == DAYS  # connected
        server.process.send_signal(signal.SIGSTOP)
        outcome = await asyncio.wait_for(runner.run(quick(COUNT)), 60)
        assert worker_failure(outcome), outcome.summary_text
        assert_said_with_its_reference(outcome, caplog)
        server.process.send_signal(signal.SIGCONT)
        assert count_of(await asyncio.wait_for(runner.run(quick(COUNT)), 60)) == DAYS
    finally:
        server.process.send_signal(signal.SIGCONT)
        await runner.close()
        server.stop()


async def test_with_redis_unreachable_the_job_ends_in_the_failure_sentence(caplog) -> None:
    import socket

    with socket.socket() as probe:  # a port where nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    runner = CeleryRunner(f"redis://127.0.0.1:{port}/0", timeout_s=20, queue_wait_s=60)
    try:
        outcome = await runner.run(quick(COUNT))
    finally:
        await runner.close()
    assert worker_failure(outcome)
    assert "The query could not be run (reference " in outcome.summary_text
    assert_said_with_its_reference(outcome, caplog)


def test_a_job_that_raises_in_its_worker_is_said_with_its_reference(caplog) -> None:
    outcome = QueryOutcome.model_validate(
        run_job_json(quick({"raise": True}).model_dump(), misbehaving)
    )
    assert worker_failure(outcome)
    assert_said_with_its_reference(outcome, caplog)


def test_a_job_of_a_newer_release_is_refused_in_one_sentence_not_answered(caplog) -> None:
    """The bot and the workers deployed apart: a job with a field this worker does not know
    (a newer bot's) was answered without it, a number for another question; now it is
    refused, the person reads the failure sentence with its reference, and the log names
    the field (not its value) and says to deploy them together."""
    job = {**quick(COUNT).model_dump(mode="json"), "pinned_period": "2024-01-02..2024-03-29"}
    outcome = QueryOutcome.model_validate(run_job_json(job))
    assert worker_failure(outcome) and outcome.result == {}
    assert_said_with_its_reference(outcome, caplog)
    logged = caplog.text
    assert "fields this worker does not know: pinned_period; deploy the bot" in logged
    assert "2024-01-02" not in logged


def test_an_answer_the_bot_cannot_read_ends_in_the_failure_sentence(caplog) -> None:
    """An outcome of another release's shape (a worker deployed apart from the bot) is said
    as a failure with its reference; before, the bot's wait for it raised."""
    runner = CeleryRunner("redis://127.0.0.1:9/0", timeout_s=20)
    outcome = runner._finished(quick(COUNT), "job-1", "SUCCESS", {"ok": "maybe", "rows": []})
    assert worker_failure(outcome)
    assert_said_with_its_reference(outcome, caplog)


@pytest.fixture
def persistent_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis of the test's own that keeps its queues over a restart (appendonly)."""
    directory = tmp_path / "redis"
    directory.mkdir()
    server = RedisServer(directory, appendonly=True)
    yield server
    server.stop()


async def test_redis_restarted_while_jobs_run_each_job_is_run_once(
    persistent_redis: RedisServer, pool: Pool, tmp_path: Path
) -> None:
    """p46n #6: Redis restarted (its queues kept) while each of two workers runs a job. Each
    worker, reconnecting, puts the job it runs back in the queue (kombu's restore of the
    unacknowledged), and a worker receives it again. Before, that copy was computed again
    (6 runs for 4 queries, heavy ones pushed past their time limit); now it is dropped: each
    job is run once and answered once."""
    pool.url = persistent_redis.url()
    for n in (1, 2):
        pool.worker(f"worker{n}.log")
    runner = pool.runner()
    traces = [tmp_path / f"job{n}.trace" for n in (1, 2)]  # a line per run to its end
    client = pool.redis()
    jobs = [
        asyncio.create_task(runner.run(quick({**COUNT, "sleep": 3.0, "trace": str(trace)})))
        for trace in traces
    ]
    while len(client.keys("celery-task-meta-*")) < 2:  # both taken: one by each worker
        await asyncio.sleep(0.05)
    # The workers' main processes (not their children, which compute on) see the lost
    # connection only once Redis is back, as a busy worker does: the case where it hands
    # the job it runs back to the queue. Paused, not timed.
    for worker in pool.workers:
        os.kill(worker.process.pid, signal.SIGSTOP)
    persistent_redis.stop()
    persistent_redis.start()
    for worker in pool.workers:
        os.kill(worker.process.pid, signal.SIGCONT)
    outcomes = await asyncio.wait_for(asyncio.gather(*jobs), 120)
    assert [count_of(outcome) for outcome in outcomes] == [DAYS, DAYS]
    dropped = await asyncio.wait_for(_every_delivery_ended(pool.workers, traces), 60)
    assert [len(trace.read_text().splitlines()) for trace in traces] == [1, 1]
    assert dropped > 0, "no job was delivered again: the restart tested nothing"


async def test_redis_restarted_past_the_jobs_expiry_the_copies_neither_fail_nor_wait(
    persistent_redis: RedisServer, pool: Pool, tmp_path: Path
) -> None:
    """p46ah #7: Redis restarted while one worker (3 processes) runs two jobs, one of them
    already past its expiry (the bot's queue wait). Each comes back as a copy. Before, the
    expired copy was recorded as revoked over the run's STARTED, and the person was told
    that the query could not be run while it computed; the other copy waited in the third
    process for the run to end, so a query sent meanwhile waited too, and that process
    dying (the OOM killer, here SIGKILL) recorded the job as failed. Now neither copy
    records anything or holds a process: both jobs are answered, once, and the query sent
    after the restart is answered before them."""
    pool.url = persistent_redis.url()
    worker = pool.worker(concurrency=3)
    expiring = pool.runner(queue_wait_s=1)
    runner = pool.runner()
    traces = [tmp_path / f"job{n}.trace" for n in (1, 2)]
    client = pool.redis()
    long_jobs = [
        asyncio.create_task(sender.run(quick({**COUNT, "sleep": 8.0, "trace": str(trace)})))
        for sender, trace in zip((expiring, runner), traces, strict=True)
    ]
    while len(client.keys("celery-task-meta-*")) < 2:  # both running
        await asyncio.sleep(0.05)
    metas = [json.loads(client.get(key)) for key in client.keys("celery-task-meta-*")]
    running = {meta["result"]["pid"] for meta in metas}  # the processes of the runs
    await asyncio.sleep(1.0)  # the first job's expiry is past
    os.kill(worker.process.pid, signal.SIGSTOP)
    persistent_redis.stop()
    persistent_redis.start()
    os.kill(worker.process.pid, signal.SIGCONT)
    while worker.log.read_text().count("] received") < 4:  # both copies are in
        await asyncio.sleep(0.05)
    assert "Discarding revoked task" in worker.log.read_text()  # the expired copy
    for pid in _children(worker.process.pid) - running:  # where a copy would wait
        os.kill(pid, signal.SIGKILL)
    assert count_of(await asyncio.wait_for(runner.run(quick(COUNT)), 60)) == DAYS
    ended_before = [job.done() for job in long_jobs]
    outcomes = await asyncio.wait_for(asyncio.gather(*long_jobs), 60)
    assert [outcome.summary_text for outcome in outcomes if not outcome.ok] == []
    assert [count_of(outcome) for outcome in outcomes] == [DAYS, DAYS]
    assert ended_before == [False, False], "the query sent meanwhile waited for them"
    assert [len(trace.read_text().splitlines()) for trace in traces] == [1, 1]


@pytest.fixture
def volatile_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis of the test's own without persistence: restarted, it is empty."""
    directory = tmp_path / "redis"
    directory.mkdir()
    server = RedisServer(directory)
    yield server
    server.stop()


async def test_redis_restarted_empty_the_jobs_in_its_queue_are_sent_again_and_run_once(
    volatile_redis: RedisServer, pool: Pool, tmp_path: Path
) -> None:
    """Redis without persistence restarted while one job runs and two wait in the queue
    behind it. The queue went with Redis: each of the two waited the whole queue wait
    (60 s) and its person read "No query worker took the query within 60 seconds …". Now
    the bot sees that Redis lost its data (its mark gone) and sends them again at once:
    each of the three is answered, in the order sent, and computed once."""
    pool.url = volatile_redis.url()
    pool.worker()
    runner = pool.runner()
    traces = [tmp_path / f"job{n}.trace" for n in (1, 2, 3)]
    client = pool.redis()
    running = asyncio.create_task(
        runner.run(quick({**COUNT, "sleep": 2.0, "trace": str(traces[0])}))
    )
    while not client.keys("celery-task-meta-*"):  # the first is running
        await asyncio.sleep(0.05)
    queued = []
    for trace in traces[1:]:
        queued.append(asyncio.create_task(runner.run(quick({**COUNT, "trace": str(trace)}))))
        await asyncio.sleep(0.2)  # sent one after the other
    while client.llen(queue_name("NQ")) < 2:
        await asyncio.sleep(0.05)
    volatile_redis.stop()
    volatile_redis.start()
    assert client.llen(queue_name("NQ")) == 0  # the queued jobs are gone
    # Before: 60 s, then "No query worker took the query within 60 seconds".
    outcomes = await asyncio.wait_for(asyncio.gather(running, *queued), 45)
    assert [count_of(outcome) for outcome in outcomes] == [DAYS] * 3
    await asyncio.wait_for(_each_delivery_ran_or_was_dropped(pool.workers[0], traces), 30)
    assert [len(trace.read_text().splitlines()) for trace in traces] == [1, 1, 1]
    ended = [trace.stat().st_mtime_ns for trace in traces[1:]]
    assert ended == sorted(ended)  # the second sent ran before the third


@contextlib.contextmanager
def bot_not_reading(runner: CeleryRunner) -> Iterator[None]:
    """The bot's Redis thread held (every send and poll of ``runner`` waits on it) until
    the block ends: the moment between two of the poller's reads, 50 ms apart, held open."""
    gate = threading.Event()
    runner._celery.submit(gate.wait)
    try:
        yield
    finally:
        gate.set()


def job_state(client: redis.Redis) -> str | None:
    """The state the one job in Redis has there (None: no record)."""
    keys = client.keys("celery-task-meta-*")
    return json.loads(client.get(keys[0]))["status"] if keys else None


async def test_an_answer_stored_just_before_redis_restarts_empty_still_reaches_the_person(
    volatile_redis: RedisServer, pool: Pool, tmp_path: Path
) -> None:
    """The worker stores its answer, and Redis (no persistence) restarts before the bot's
    next poll reads it: the answer went with Redis. Before, the bot, which had seen the job
    started, waited for it to its deadline and the person read "The query could not be
    run (reference …)" though it was computed. Now its worker no longer names it among the
    jobs it runs, nothing of it is in the new Redis: it is sent again and answered (computed
    a second time: the first answer is gone)."""
    pool.url = volatile_redis.url()
    pool.worker(timeout_s=5)
    # Before, its deadline: the queue wait (10 s), the hard limit (7 s) and 3 s.
    runner = pool.runner(timeout_s=5, queue_wait_s=10)
    trace = tmp_path / "job.trace"
    client = pool.redis()
    job = asyncio.create_task(runner.run(quick({**COUNT, "sleep": 1.0, "trace": str(trace)})))
    while not any(flight.started for flight in runner._in_flight.values()):
        await asyncio.sleep(0.01)  # the bot saw it started
    with bot_not_reading(runner):
        while job_state(client) != "SUCCESS":  # answered, not yet read
            await asyncio.sleep(0.01)
        volatile_redis.stop()
        volatile_redis.start()
        assert job_state(client) is None  # the answer is gone
    outcome = await asyncio.wait_for(job, 15)
    assert count_of(outcome) == DAYS, outcome.summary_text
    assert len(trace.read_text().splitlines()) == 2


async def test_a_job_taken_just_before_redis_restarts_empty_is_computed_once(
    volatile_redis: RedisServer, pool: Pool, tmp_path: Path
) -> None:
    """A worker takes the job, and Redis (no persistence) restarts before the bot's next
    poll has seen it started; the job's claim goes with Redis; and that worker's first beat
    in the new Redis comes late (its main process stalled: SIGSTOP in the test). Before,
    the bot sent it again at once as a job lost in its queue, and the worker's second
    process computed it a second time beside the first (one answer reached the person, the
    load doubled); then, it judged the job by the workers beaten 2.5 s after the loss, and
    sent it again all the same when its worker beat later. Now it waits for the beat of
    every worker live before the loss, which names the job: computed once."""
    pool.url = volatile_redis.url()
    pool.worker(concurrency=2)
    main = pool.workers[0].process.pid
    runner = pool.runner()
    sends, reads = counted(runner, "_send"), counted(runner, "_read_after_loss")
    trace, gate = tmp_path / "job.trace", tmp_path / "gate"
    client = pool.redis()
    job = asyncio.create_task(runner.run(quick({**COUNT, "gate": str(gate), "trace": str(trace)})))
    while not runner._in_flight:  # sent
        await asyncio.sleep(0.001)
    try:
        with bot_not_reading(runner):
            while job_state(client) != "STARTED":  # taken
                await asyncio.sleep(0.01)
            assert not any(flight.started for flight in runner._in_flight.values())
            os.kill(main, signal.SIGSTOP)  # no beat from here; its child computes on
            volatile_redis.stop()
            volatile_redis.start()
        # The bot has read the new Redis's beats three times, past 2.5 s after the loss (or
        # sent the job again).
        while len(reads) < 3 and len(sends) < 2:
            await asyncio.sleep(0.05)
        assert len(sends) == 1  # not sent again
    finally:
        os.kill(main, signal.SIGCONT)
    gate.touch()
    assert count_of(await asyncio.wait_for(job, 30)) == DAYS
    await asyncio.wait_for(_each_delivery_ran_or_was_dropped(pool.workers[0], [trace]), 30)
    assert len(trace.read_text().splitlines()) == 1


def counted(runner: CeleryRunner, name: str) -> list[float]:
    """The calls of ``runner``'s method ``name``: one item per call, when it was made
    (``time.monotonic``, the runner's clock)."""
    calls: list[float] = []
    method = getattr(runner, name)

    def counting(*args: object) -> object:
        calls.append(time.monotonic())
        return method(*args)

    setattr(runner, name, counting)
    return calls


async def test_a_running_jobs_worker_beating_late_in_a_redis_restarted_empty_is_waited_for(
    volatile_redis: RedisServer, pool: Pool, tmp_path: Path
) -> None:
    """Redis (no persistence) restarts while a worker computes a job the bot saw started,
    and that worker's first beat in the new Redis comes late (its main process stalled:
    SIGSTOP in the test; a loaded machine, its client's timeouts). The bot waits for that
    worker's own beat, which names the job: computed once. Before, the beats were read
    2.5 s after the loss was found; the job, named by no worker yet, was sent again, and the
    worker computed it a second time once it went on (its claim had gone with Redis)."""
    pool.url = volatile_redis.url()
    pool.worker(concurrency=2)
    main = pool.workers[0].process.pid
    runner = pool.runner()
    sends, reads = counted(runner, "_send"), counted(runner, "_read_after_loss")
    trace, started, gate = tmp_path / "job.trace", tmp_path / "started", tmp_path / "gate"
    query = {**COUNT, "trace": str(trace), "started": str(started), "gate": str(gate)}
    job = asyncio.create_task(runner.run(quick(query)))
    while not any(flight.started for flight in runner._in_flight.values()):
        await asyncio.sleep(0.01)  # the bot saw it started
    os.kill(main, signal.SIGSTOP)  # no beat from here; its child computes on
    try:
        volatile_redis.stop()
        volatile_redis.start()
        # The bot has read the new Redis's beats twice (or sent the job again).
        while len(reads) < 2 and len(sends) < 2:
            assert not job.done(), job.result()
            await asyncio.sleep(0.05)
        assert len(sends) == 1  # not sent again
    finally:
        os.kill(main, signal.SIGCONT)
    gate.touch()
    assert count_of(await asyncio.wait_for(job, 30)) == DAYS
    await asyncio.wait_for(_each_delivery_ran_or_was_dropped(pool.workers[0], [trace]), 30)
    assert runs_of(trace) == 1


async def test_a_running_jobs_worker_lost_with_a_redis_restarted_empty_is_sent_again(
    volatile_redis: RedisServer, pool: Pool, tmp_path: Path
) -> None:
    """Redis (no persistence) restarts and the worker computing the job is lost with it
    (killed): it never beats in the new Redis. Silent for twice the time after which the
    registry counts a worker gone, it is gone: the job is sent again, and the worker up now
    answers it. Before, only once the job would have ended on a live worker (its hard limit
    past: 25 s with the default 20 s limit)."""
    pool.url = volatile_redis.url()
    doomed = pool.worker("doomed.log")
    runner = pool.runner()
    sends = counted(runner, "_send")
    trace, started = tmp_path / "job.trace", tmp_path / "started"
    query = {**COUNT, "trace": str(trace), "started": str(started), "sleep": 2.0}
    job = asyncio.create_task(runner.run(quick(query)))
    while not any(flight.node for flight in runner._in_flight.values()):
        await asyncio.sleep(0.01)  # the bot saw it started on that worker
    [flight] = runner._in_flight.values()
    assert flight.started is not None
    doomed.kill()
    volatile_redis.stop()
    volatile_redis.start()
    pool.worker("w.log")
    assert count_of(await asyncio.wait_for(job, 60)) == DAYS
    assert runs_of(trace) == 1  # the killed one never got to its end
    # Sent again before a live worker would have ended it (the hard limit).
    assert sends[1] < flight.started + hard_limit(runner.timeout_s)


async def test_a_live_worker_stalled_through_a_redis_restart_computes_twice_answers_once(
    volatile_redis: RedisServer, pool: Pool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis (no persistence) restarts while a live worker computes a confirmed plan's run,
    and that worker's main process stalls past ``_LOST_WORKER_AFTER_S`` (8 s without a
    beat: SIGSTOP in the test). The bot counts it gone and sends the job again: computed
    twice, the documented cost (reliability.md). The person still gets one answer: the run
    takes one outcome, the copy's, and once it is stored in the reply (``answered``) the
    run's record in Redis says so. The stalled first run ends only then: its late answer,
    stored under the job's task id, leaves Redis at once (it finds the run answered);
    before, it sat there unread for the results' 10 minutes, its CSV and chart with it. A
    reader resuming the run (a restart, another replica) computes nothing a third time."""
    # The stall made shorter than the job's gate holds it: 3 s, not 8.
    monkeypatch.setattr(celery_runner, "_LOST_WORKER_AFTER_S", 3.0)
    pool.url = volatile_redis.url()
    worker = pool.worker(concurrency=2)
    main = worker.process.pid
    runner = pool.runner()
    sends = counted(runner, "_send")
    trace, started, gate = tmp_path / "job.trace", tmp_path / "started", tmp_path / "gate"
    job = keyed({**COUNT, "trace": str(trace), "started": str(started), "gate_each": str(gate)})
    running = asyncio.create_task(runner.run(job))
    while not any(flight.started for flight in runner._in_flight.values()):
        await asyncio.sleep(0.01)  # the bot saw it started
    first = int(started.read_text())
    os.kill(main, signal.SIGSTOP)  # no beat from here; its child computes on
    try:
        volatile_redis.stop()
        volatile_redis.start()
        while len(sends) < 2:  # silent past _LOST_WORKER_AFTER_S: gone, sent again
            assert not running.done(), running.result()
            await asyncio.sleep(0.05)
    finally:
        os.kill(main, signal.SIGCONT)  # alive after all: it takes the copy too
    while len(list(tmp_path.glob("gate.*.waiting"))) < 2:  # the copy taken beside it
        await asyncio.sleep(0.05)
    [copy] = {int(path.name.split(".")[1]) for path in tmp_path.glob("gate.*.waiting")} - {first}
    Path(f"{gate}.{copy}").touch()  # the copy answers first
    outcome = await asyncio.wait_for(running, 30)
    assert count_of(outcome) == DAYS
    runner.answered([job.key])  # the reply stored for its person
    await asyncio.get_running_loop().run_in_executor(runner._celery, lambda: None)
    client = pool.redis()
    assert client.get(f"barb.sent.{job.key}") == b"answered"
    assert client.keys("celery-task-meta-*") == []
    Path(f"{gate}.{first}").touch()  # the stalled run ends, late
    await asyncio.wait_for(_each_delivery_ran_or_was_dropped(worker, [trace]), 30)
    assert runs_of(trace) == 2
    # Its answer stored, then found not wanted: deleted (before, no such line: kept 600 s).
    await asyncio.wait_for(_logged(worker, "its answer deleted"), 30)
    assert client.keys("celery-task-meta-*") == []
    resumed = pool.runner()
    again = await asyncio.wait_for(resumed.run(job), 30)
    assert not again.ok and again.error["error_type"] == "AlreadyAnswered"
    assert runs_of(trace) == 2


async def _logged(worker: WorkerProcess, line: str) -> None:
    while line not in worker.log.read_text():
        await asyncio.sleep(0.05)


async def _each_delivery_ran_or_was_dropped(worker: WorkerProcess, traces: list[Path]) -> None:
    while True:
        log = worker.log.read_text()
        runs = sum(len(trace.read_text().splitlines()) for trace in traces if trace.exists())
        if log.count("] received") == runs + log.count("copy dropped"):
            return
        await asyncio.sleep(0.05)


async def test_redis_away_longer_than_a_runs_claim_the_job_is_still_run_once(
    persistent_redis: RedisServer, pool: Pool, tmp_path: Path
) -> None:
    """Redis (its queues kept) away longer than the claim of the job a worker runs. Before,
    the worker itself stopped ("Unrecoverable error: AttributeError … 'hostname'": kombu
    handing its jobs back on the connection it had just closed) and the person read "The
    query could not be run"; with two workers, the run ended during the outage, its claim
    expired meanwhile (Redis counts expiry in wall-clock time, down or not), and the copy
    Redis handed out again found it free and computed the job a second time. Now the worker
    reconnects, the run marks its job finished though its claim expired (nobody took it
    since), also when the soft limit fires while it waits for Redis: the copy is dropped,
    the job run once and answered once."""
    pool.url = persistent_redis.url()
    pool.worker(timeout_s=2, concurrency=2)  # a claim of 2 + 2 + 1 s
    runner = pool.runner(timeout_s=2, queue_wait_s=60)
    trace = tmp_path / "job.trace"
    client = pool.redis()
    job = asyncio.create_task(runner.run(quick({**COUNT, "sleep": 0.3, "trace": str(trace)})))
    while not (claims := client.keys(f"{CLAIM_PREFIX}*")):
        await asyncio.sleep(0.05)
    claim_left_s = client.pttl(claims[0]) / 1000
    persistent_redis.stop()
    await asyncio.sleep(claim_left_s + 0.5)  # the outage outlasts the claim
    persistent_redis.start()
    assert count_of(await asyncio.wait_for(job, 60)) == DAYS
    dropped = await asyncio.wait_for(_every_delivery_ended(pool.workers, [trace]), 60)
    assert len(trace.read_text().splitlines()) == 1  # computed once
    assert dropped == 1, "the job was not delivered again: the outage tested nothing"


async def test_a_worker_stopped_at_once_hands_its_job_to_another_that_runs_it(
    pool: Pool, tmp_path: Path
) -> None:
    """A cold shutdown (SIGQUIT) stops the job and puts it back in its queue at once: its
    claim is given up first, so the other worker runs it instead of dropping it as a copy
    of a running job, and the stopped run records no failure."""
    for n in (1, 2):
        pool.worker(f"worker{n}.log")
    runner = pool.runner()
    trace, started, gate = tmp_path / "job.trace", tmp_path / "started", tmp_path / "gate"
    # Held in the worker until the test opens the gate, once the stopped worker is gone:
    # a fixed sleep (3 s, then 6 s) ran out in loaded CI runs before the signal took
    # effect, and the first worker finished the job itself.
    query = {**COUNT, "started": str(started), "gate": str(gate), "trace": str(trace)}
    job = asyncio.create_task(runner.run(quick(query)))
    while not (started.exists() and started.read_text()):  # its child is in the query
        await asyncio.sleep(0.05)
    [stopped] = [w for w in pool.workers if "] received" in w.log.read_text()]
    os.kill(stopped.process.pid, signal.SIGQUIT)
    await asyncio.to_thread(stopped.process.wait, 30)
    gate.touch()
    assert count_of(await asyncio.wait_for(job, 60)) == DAYS
    [other] = [w for w in pool.workers if w is not stopped]
    assert "] received" in other.log.read_text()
    assert len(trace.read_text().splitlines()) == 1  # only the second run got to its end


async def test_sigterm_to_every_process_of_a_worker_lets_its_query_finish(
    pool: Pool, tmp_path: Path
) -> None:
    """SIGTERM to the worker's whole process group, as systemd's default
    ``KillMode=control-group`` sends it on every restart, is a warm shutdown: the query in
    progress finishes and is answered, once. Before, its child ended at once ("exited with
    signal 15 (SIGTERM)"), and the person read "…a failure on my side…" (p48b #2)."""
    worker = pool.worker()
    runner = pool.runner()
    started, trace = tmp_path / "started", tmp_path / "job.trace"
    query = {**COUNT, "trace": str(trace), "started": str(started), "sleep": 2.0}
    job = asyncio.create_task(runner.run(quick(query)))
    while not (started.exists() and started.read_text()):  # its child is in the query
        await asyncio.sleep(0.05)
    os.killpg(worker.process.pid, signal.SIGTERM)
    assert count_of(await asyncio.wait_for(job, 60)) == DAYS
    assert worker.process.wait(30) == 0  # the warm shutdown, to its end
    assert len(trace.read_text().splitlines()) == 1


async def test_a_check_given_up_on_expires_with_the_plans_wait(pool: Pool, tmp_path: Path) -> None:
    """A check the plan stopped waiting for (``check_wait_s``) expires then, not after the
    queue wait of runs: a worker that meets it later, the revoke unheard (sent while Redis
    was away, or before the worker started), drops it. Before, it expired after 60 s, and
    with Redis away 18 s a check given up at 15 s ran again once Redis was back, for
    nobody (p48b #4)."""
    runner = pool.runner(queue_wait_s=60, check_wait_s=1)
    trace = tmp_path / "check.trace"
    check = QueryJob(query={**COUNT, "trace": str(trace)}, chart=False, csv=False, check_only=True)
    with contextlib.suppress(TimeoutError):  # as a plan waits for it
        await asyncio.wait_for(runner.check(check), 1)
    worker = pool.worker()
    assert count_of(await runner.run(quick(COUNT))) == DAYS  # taken after the check
    for _ in range(100):  # the worker logs the discard a moment after taking the task
        if "Discarding revoked task: barb.query" in worker.log.read_text():
            break
        await asyncio.sleep(0.1)
    assert "Discarding revoked task: barb.query" in worker.log.read_text()
    assert not trace.exists()


async def test_a_copy_of_a_job_runs_only_if_no_run_holds_it(redis_url: str) -> None:
    """A copy that finds its job running or finished is dropped at once; one that finds
    the claim expired (its worker died) or given up (a cold shutdown) runs it. Only the
    holder, or a delivery of a job nobody claimed, records a failure."""
    app = make_queue_app(redis_url)
    backend = app.backend
    a, b = holder("worker-a", 11), holder("worker-b", 22)
    try:
        assert take_claim(backend, "running", a, hard_limit_s=20)
        assert take_claim(backend, "finished", a, hard_limit_s=20)
        assert finish_claim(backend, "finished", a, RESULT_EXPIRES_S)
        assert take_claim(backend, "died", a, hard_limit_s=0)  # holds 1 s
        assert take_claim(backend, "stopped", a, hard_limit_s=20)
        assert release_claim(backend, "stopped", a)
        assert not take_claim(backend, "running", b, 20)
        assert not take_claim(backend, "finished", b, 20)
        assert take_claim(backend, "stopped", b, 20)
        assert [may_record(backend, "running", run) for run in (a, b)] == [True, False]
        assert not may_record(backend, "finished", b)
        assert may_record(backend, "never-claimed", b)
        # A run that lost its claim (expired, given up) neither finishes nor releases it.
        assert not finish_claim(backend, "stopped", a, RESULT_EXPIRES_S)
        assert not release_claim(backend, "stopped", a)
        assert backend.client.get(claim_key("stopped")) == b.encode()
        await asyncio.sleep(1.1)
        assert take_claim(backend, "died", b, 20)
        assert backend.client.get(claim_key("died")) == b.encode()
    finally:
        app.close()


def _children(pid: int) -> set[int]:
    """The processes ``pid`` started that are still running (a worker's query processes)."""
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(child) for child in (task / "children").read_text().split()}
    return found


async def _every_delivery_ended(workers: list[WorkerProcess], traces: list[Path]) -> int:
    """Waits until every worker is connected again, each job they put back in the queue
    has been received again, and each job received has run to its end or been dropped (a
    copy of a job run elsewhere); the number dropped."""
    while True:
        logs = [worker.log.read_text() for worker in workers]
        everything = "".join(logs)
        restored = sum(map(int, re.findall(r"Restoring (\d+) unacknowledged", everything)))
        received = everything.count("] received")
        runs = sum(len(trace.read_text().splitlines()) for trace in traces if trace.exists())
        dropped = everything.count("copy dropped")
        ended = runs + dropped
        reconnected = all(log.count("Connected to") > 1 for log in logs)
        if reconnected and received >= len(traces) + restored and received == ended:
            return dropped
        await asyncio.sleep(0.05)


async def test_checks_given_up_on_are_revoked_and_never_run(
    pool: Pool, tmp_path: Path, monkeypatch
) -> None:
    """A plan waits ``check_wait_s`` for its checks, then is shown unchecked: each check
    given up on is revoked, whether it waited in its queue behind a run or was still being
    sent (Redis slow to take it; that one had been sent after the wait and run for nobody),
    and the worker drops both once the run ends."""
    worker = pool.worker()
    runner = pool.runner()
    queued, sending = tmp_path / "queued.trace", tmp_path / "sending.trace"
    send = runner._send

    def slow_send(job: QueryJob, *args: object) -> object:
        if job.query.get("trace") == str(sending):
            time.sleep(0.6)
        return send(job, *args)

    monkeypatch.setattr(runner, "_send", slow_send)
    started = tmp_path / "run.started"
    run = asyncio.create_task(runner.run(quick({**COUNT, "started": str(started), "sleep": 2})))
    while not started.exists():  # the worker's only process is taken
        await asyncio.sleep(0.05)
    checks = [
        QueryJob(query={**COUNT, "trace": str(trace)}, chart=False, csv=False, check_only=True)
        for trace in (queued, sending)
    ]
    given_up = await asyncio.gather(
        *(asyncio.wait_for(runner.check(job), 0.2) for job in checks), return_exceptions=True
    )
    assert [type(outcome) for outcome in given_up] == [TimeoutError, TimeoutError]
    assert count_of(await run) == DAYS
    assert count_of(await runner.run(quick(COUNT))) == DAYS  # taken after both checks
    assert not runner._in_flight
    assert worker.log.read_text().count("Discarding revoked task: barb.query") == 2
    assert not queued.exists() and not sending.exists()


async def test_a_check_waiting_while_redis_restarts_gets_its_answer(
    persistent_redis: RedisServer, pool: Pool
) -> None:
    """Redis (its data kept, as a restart with persistence or a replica promoted leaves it)
    away longer than a worker's beat lives while the worker computes a plan's check. Back,
    Redis holds the check's STARTED record and the worker's entry in the registry past its
    moment (by Redis's clock, which ran on), until the worker's next beat; the bot must not
    take that for a worker gone and show the plan unchecked while its check computes."""
    pool.url = persistent_redis.url()
    pool.worker(timeout_s=30)
    runner = pool.runner(timeout_s=30, queue_wait_s=120, check_wait_s=120)
    check = QueryJob(query={**COUNT, "sleep": 8.0}, chart=False, csv=False, check_only=True)
    client = pool.redis()
    job = asyncio.create_task(runner.check(check))
    while not client.keys("celery-task-meta-*"):  # the worker computes it
        await asyncio.sleep(0.05)
    persistent_redis.stop()
    await asyncio.sleep(worker_registry.HEARTBEAT_TTL_S + 1)  # every beat's moment past
    persistent_redis.start()
    outcome = await asyncio.wait_for(job, 120)
    assert outcome.ok, outcome.summary_text  # checked: the query runs as it is


# --- a run resumed after a kill of the bot (``QueryJob.key``) ---------------------------------


def keyed(query: dict, key: str = "q-1.call_1.0123456789abcdef") -> QueryJob:
    """A confirmed plan's run, named as the bot names it (``jobs.run_key``)."""
    return quick(query).model_copy(update={"key": key})


async def sent_by_a_killed_bot(url: str, job: QueryJob) -> str:
    """``job`` as a bot killed after sending it leaves it: sent (its key naming it in
    Redis), and nobody reading its state. Its task id."""
    gone = CeleryRunner(url, timeout_s=20, queue_wait_s=60)
    task_id = f"killed-{time.monotonic_ns()}"
    try:
        await asyncio.get_running_loop().run_in_executor(gone._celery, gone._send, job, task_id)
    finally:
        await gone.close()  # no revoke: a kill says nothing
    return task_id


def runs_of(trace: Path) -> int:
    """How many times the workers computed the job to its end."""
    return len(trace.read_text().splitlines()) if trace.exists() else 0


async def test_a_resumed_run_takes_the_answer_stored_before_the_restart(
    pool: Pool, tmp_path: Path
) -> None:
    """Killed after the worker stored the answer, before reading it: the resumed run takes
    that answer. Before, it sent the job again under a new task id, and the worker computed
    it a second time."""
    pool.worker("w.log")
    trace = tmp_path / "job.trace"
    job = keyed({**COUNT, "trace": str(trace)})
    task_id = await sent_by_a_killed_bot(pool.url, job)
    client = pool.redis()
    while b'"SUCCESS"' not in (client.get(f"celery-task-meta-{task_id}") or b""):
        await asyncio.sleep(0.05)
    runner = pool.runner()
    assert count_of(await asyncio.wait_for(runner.run(job), 30)) == DAYS
    assert count_of(await asyncio.wait_for(runner.run(quick(COUNT)), 30)) == DAYS
    assert runs_of(trace) == 1
    # Taken: left for another reader of the run as long as the answer lives, no longer.
    [sent] = client.keys("barb.sent.*")
    assert 0 < client.ttl(sent) <= RESULT_EXPIRES_S


async def test_a_resumed_run_waits_for_the_job_its_worker_still_runs(
    pool: Pool, tmp_path: Path
) -> None:
    pool.worker("w.log")
    trace, started = tmp_path / "job.trace", tmp_path / "started"
    job = keyed({**COUNT, "trace": str(trace), "started": str(started), "sleep": 2.0})
    await sent_by_a_killed_bot(pool.url, job)
    while not (started.exists() and started.read_text()):
        await asyncio.sleep(0.05)
    runner = pool.runner()
    assert count_of(await asyncio.wait_for(runner.run(job), 30)) == DAYS
    # The worker's one process is free again: a copy sent meanwhile would be next.
    assert count_of(await asyncio.wait_for(runner.run(quick(COUNT)), 30)) == DAYS
    assert runs_of(trace) == 1


async def test_a_resumed_run_does_not_send_again_the_job_still_in_its_queue(
    pool: Pool, tmp_path: Path
) -> None:
    """The one worker process is busy with another query: the run's job waits in its queue
    when the bot is killed. Resumed, it is not sent a second time: the worker receives it
    once, and computes it once."""
    log = tmp_path / "w.log"
    pool.worker(log.name)
    busy, trace = tmp_path / "busy", tmp_path / "job.trace"
    runner = pool.runner()
    client = pool.redis()
    blocker = asyncio.create_task(runner.run(quick({**COUNT, "started": str(busy), "sleep": 2})))
    while not (busy.exists() and busy.read_text()):
        await asyncio.sleep(0.05)
    job = keyed({**COUNT, "trace": str(trace)})
    task_id = await sent_by_a_killed_bot(pool.url, job)
    assert client.llen(queue_name("NQ")) == 1
    assert count_of(await asyncio.wait_for(runner.run(job), 30)) == DAYS
    assert count_of(await blocker) == DAYS
    assert count_of(await asyncio.wait_for(runner.run(quick(COUNT)), 30)) == DAYS
    assert runs_of(trace) == 1
    assert log.read_text().count(f"barb.query[{task_id}] received") == 1
    assert log.read_text().count("] received") == 3  # the blocker, the job, the last one


async def test_a_resumed_run_whose_worker_died_is_sent_again(pool: Pool, tmp_path: Path) -> None:
    """The bot and the worker running its job are both lost: the resumed run does not wait
    for that job (a copy handed out again would have expired) but sends it again, and the
    worker up now answers it."""
    doomed = pool.worker("doomed.log")
    trace, started = tmp_path / "job.trace", tmp_path / "started"
    job = keyed({**COUNT, "trace": str(trace), "started": str(started), "sleep": 2.0})
    await sent_by_a_killed_bot(pool.url, job)
    while not (started.exists() and started.read_text()):
        await asyncio.sleep(0.05)
    doomed.kill()
    pool.worker("w.log")
    runner = pool.runner()
    assert count_of(await asyncio.wait_for(runner.run(job), 60)) == DAYS
    assert runs_of(trace) == 1  # the killed one never got to its end


async def test_a_resumed_run_whose_answer_another_reader_took_is_sent_again(
    pool: Pool, tmp_path: Path
) -> None:
    """Two readers of one job: the replica that sent it, stalled past its lease but still
    polling, reads and deletes the answer; the replica that took the run over and found
    the job running never sees it. Past the job's hard limit it sends the job again and
    answers, instead of waiting out the queue wait and saying that the query could not
    be run."""
    pool.worker("w.log", timeout_s=10)
    trace, started = tmp_path / "job.trace", tmp_path / "started"
    # Held in the worker until the new reader has found it running: with a fixed sleep, a
    # loaded machine let the answer be stored first (then taken at once, nothing to test).
    gate = tmp_path / "gate"
    job = keyed({**COUNT, "trace": str(trace), "started": str(started), "gate": str(gate)})
    task_id = await sent_by_a_killed_bot(pool.url, job)
    while not (started.exists() and started.read_text()):
        await asyncio.sleep(0.05)
    runner = pool.runner(timeout_s=10, queue_wait_s=60)
    client = pool.redis()
    taking_over = asyncio.create_task(runner.run(job))
    while task_id not in runner._in_flight:  # found running, waited for
        assert not taking_over.done(), taking_over.result()
        await asyncio.sleep(0.01)
    gate.touch()
    with bot_not_reading(runner):  # the other reader is first to the answer
        record = f"celery-task-meta-{task_id}"
        while b'"SUCCESS"' not in (client.get(record) or b""):
            await asyncio.sleep(0.01)
        client.delete(record)
    assert count_of(await asyncio.wait_for(taking_over, 30)) == DAYS
    assert runs_of(trace) == 2


@dataclass
class _HeldByTwo:
    """A keyed job held in its worker by ``gate``, run by a stalled replica (``first``) and
    by one taking the run over, which found it running and waits for it (``second``)."""

    job: QueryJob
    trace: Path
    gate: Path
    stalled: CeleryRunner
    taking_over: CeleryRunner
    first: asyncio.Task[QueryOutcome]
    second: asyncio.Task[QueryOutcome]


async def _held_by_two_readers(pool: Pool, tmp_path: Path) -> _HeldByTwo:
    trace, started, gate = tmp_path / "job.trace", tmp_path / "started", tmp_path / "gate"
    # Held in the worker until the replica taking over has found it running.
    job = keyed({**COUNT, "trace": str(trace), "started": str(started), "gate": str(gate)})
    stalled = pool.runner(timeout_s=5, queue_wait_s=10)
    taking_over = pool.runner(timeout_s=5, queue_wait_s=10)
    first = asyncio.create_task(stalled.run(job))
    while not (started.exists() and started.read_text()):
        await asyncio.sleep(0.05)
    [task_id] = stalled._in_flight
    second = asyncio.create_task(taking_over.run(job))
    while task_id not in taking_over._in_flight:  # found running, waited for
        assert not second.done(), second.result()
        await asyncio.sleep(0.01)
    return _HeldByTwo(job, trace, gate, stalled, taking_over, first, second)


async def test_a_run_taken_over_from_a_replica_that_still_polls_is_computed_once(
    pool: Pool, tmp_path: Path
) -> None:
    """A webhook replica's lease on a run lapsed while it still polled its job (stalled):
    another replica takes the run over, finds the job running under its key and waits for
    it. The stalled one reads the answer first; the one taking over still takes it, and so
    does a third reader after both (a kill of the second before its answer was stored).
    Computed once. Before, the first reader deleted the answer: the one taking over waited
    to the job's hard limit and sent it again (computed twice, one answer sent), and a
    reader after it found nothing and sent it again too."""
    pool.worker("w.log", timeout_s=5)
    held = await _held_by_two_readers(pool, tmp_path)
    job, trace, gate = held.job, held.trace, held.gate
    taking_over, first, second = held.taking_over, held.first, held.second
    with bot_not_reading(taking_over):  # the stalled replica reads the answer first
        gate.touch()
        assert count_of(await asyncio.wait_for(first, 30)) == DAYS
    assert count_of(await asyncio.wait_for(second, 30)) == DAYS
    assert count_of(await asyncio.wait_for(taking_over.run(job), 30)) == DAYS
    assert runs_of(trace) == 1


async def test_an_answer_stored_in_its_reply_leaves_redis_and_a_late_reader_computes_nothing(
    pool: Pool, tmp_path: Path
) -> None:
    """A run's answer (its CSV and chart: megabytes for a long table) stays in Redis only
    until the bot has stored it in the reply for its person (``answered``); a mark of a few
    bytes stays under its name. A late reader of the same run (a replica whose lease on it
    lapsed) finds the mark and computes nothing. Before, the answer stayed 10 minutes after
    it was taken, whatever happened to it."""
    pool.worker(timeout_s=5)
    trace = tmp_path / "job.trace"
    job = keyed({**COUNT, "trace": str(trace)})
    assert job.key is not None
    runner = pool.runner(timeout_s=5, queue_wait_s=10)
    late = pool.runner(timeout_s=5, queue_wait_s=10)
    client = pool.redis()
    assert count_of(await asyncio.wait_for(runner.run(job), 30)) == DAYS
    assert client.keys("celery-task-meta-*")  # kept for another reader of the run
    runner.answered([job.key])
    await asyncio.get_running_loop().run_in_executor(runner._celery, lambda: None)
    assert client.keys("celery-task-meta-*") == []
    assert client.get(f"barb.sent.{job.key}") == b"answered"
    outcome = await asyncio.wait_for(late.run(job), 30)
    assert not outcome.ok and outcome.error["error_type"] == "AlreadyAnswered"
    assert client.get(f"barb.sent.{job.key}") == b"answered"  # and so it stays
    assert runs_of(trace) == 1


@pytest.mark.parametrize("keep_s", [30, 900])
async def test_an_answer_taken_and_never_stored_stays_only_as_long_as_its_run_may_resume(
    pool: Pool, tmp_path: Path, keep_s: int
) -> None:
    """The bot killed after taking a run's answer, before its reply was stored: the answer
    (its CSV and chart: megabytes for a long table) stays in Redis as long as a reader may
    still resume the run (``keep_taken_s``, ``bot_run.resume_window_s``: 370 s by default),
    and a reader resuming within it takes it without computing. Before, it stayed the
    results' 10 minutes. A model given a longer timeout makes the window longer than those
    10 minutes (900 s): the answer stays that long too (before, cut at 10 minutes: a run
    resumed after them computed the query again)."""
    pool.worker(timeout_s=5)
    trace = tmp_path / "job.trace"
    job = keyed({**COUNT, "trace": str(trace)})
    killed = pool.runner(timeout_s=5, queue_wait_s=10, keep_taken_s=keep_s)
    client = pool.redis()
    assert count_of(await asyncio.wait_for(killed.run(job), 30)) == DAYS
    await asyncio.get_running_loop().run_in_executor(killed._celery, lambda: None)  # taken
    [result] = client.keys("celery-task-meta-*")
    # Set a moment ago: within a minute of the window, never past it.
    assert keep_s - 60 < client.ttl(result) <= keep_s  # before: 600
    assert keep_s - 60 < client.ttl(f"barb.sent.{job.key}") <= keep_s
    resumed = pool.runner(timeout_s=5, queue_wait_s=10)  # the restart, within the window
    assert count_of(await asyncio.wait_for(resumed.run(job), 30)) == DAYS
    assert runs_of(trace) == 1


def test_the_resume_window_covers_the_models_longest_turn_as_configured() -> None:
    """The window a taken answer waits for its run's resumption starts with the model's
    turn wording it: as long as the configured provider may take (its SDK client's timeout
    for each of its tries, and the waits between them), plus the run's lease and a sending
    pass. Before, a fixed 180 s (the default settings): with ``BARB_LLM_TIMEOUT_S=300``
    a bot killed after the model's second try found the answer gone and computed it
    again."""
    store, bot = StoreSettings(), BotSettings(_env_file=None)
    for timeout_s, retries in [(60.0, 2), (300.0, 2), (20.0, 0)]:
        llm = LLMSettings(
            _env_file=None,
            BARB_LLM_TIMEOUT_S=timeout_s,
            BARB_LLM_MAX_RETRIES=retries,
            OPENAI_BASE_URL="http://127.0.0.1:9/v1",
            BARB_LLM_MODEL="m",
        )
        client = make_provider(llm)._client  # the SDK's own client: what it waits
        longest_turn = (client.max_retries + 1) * client.timeout + retries * RETRY_AFTER_CAP_S
        assert resume_window_s(store, bot, llm) >= (
            longest_turn + store.work_lease_s + bot.sending_pass_s
        )
    slow = LLMSettings(_env_file=None, BARB_LLM_TIMEOUT_S=300)
    assert resume_window_s(store, bot, slow) > RESULT_EXPIRES_S  # kept past 10 minutes


async def test_a_reader_still_polling_when_another_stored_the_answer_ends_at_its_next_read(
    pool: Pool, tmp_path: Path
) -> None:
    """A replica whose lease on a run lapsed still polls its job; the one taking over reads
    the answer first, stores it in the reply and lets it go (``answered``). The stalled one
    ends at its next read, told the answer was given; computed once. Without that, it
    waited past the job's hard limit for an answer gone, and ended as a worker lost (an
    error logged, refused with its lease)."""
    pool.worker(timeout_s=5)
    held = await _held_by_two_readers(pool, tmp_path)
    job, trace, gate = held.job, held.trace, held.gate
    stalled, taking_over, first, second = held.stalled, held.taking_over, held.first, held.second
    assert job.key is not None
    with bot_not_reading(stalled):  # the one taking over reads the answer first
        gate.touch()
        assert count_of(await asyncio.wait_for(second, 30)) == DAYS
        taking_over.answered([job.key])
        await asyncio.get_running_loop().run_in_executor(taking_over._celery, lambda: None)
    outcome = await asyncio.wait_for(first, 30)
    assert not outcome.ok and outcome.error["error_type"] == "AlreadyAnswered"
    assert runs_of(trace) == 1


async def test_a_failure_taken_is_not_taken_again_by_the_run_pressed_again(pool: Pool) -> None:
    """A run's failure is forgotten once taken, its name too: the plan's Run pressed again
    (the same key) computes afresh and answers, never reads that failure again."""
    pool.worker("w.log")
    runner = pool.runner()
    failed = await asyncio.wait_for(runner.run(keyed({**COUNT, "raise": True})), 30)
    assert worker_failure(failed), failed.summary_text
    assert count_of(await asyncio.wait_for(runner.run(keyed(COUNT)), 30)) == DAYS


async def stopped_while_queued(url: str, job: QueryJob) -> None:
    """``job`` as a bot stopped (SIGTERM) while it waited in its queue leaves it: revoked."""
    stopping = CeleryRunner(url, timeout_s=20, queue_wait_s=60)
    client = redis.Redis.from_url(url)
    try:
        waiting = asyncio.create_task(stopping.run(job))
        while not client.get(f"barb.sent.{job.key}"):  # sent
            await asyncio.sleep(0.05)
        waiting.cancel()  # the shutdown
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
    finally:
        client.close()
        await stopping.close()


async def test_a_run_resumed_after_a_shutdown_no_worker_heard_computes_its_job_once(
    pool: Pool, tmp_path: Path
) -> None:
    """The bot stopped while no worker was up: its revoke reached nobody, and the job stays
    in its queue. The resumed run takes that job when a worker starts. Before, the worker
    computed the revoked job for nobody, then the resumed run's copy."""
    trace = tmp_path / "job.trace"
    job = keyed({**COUNT, "trace": str(trace)})
    await stopped_while_queued(pool.url, job)
    pool.worker("w.log")
    runner = pool.runner()
    assert count_of(await asyncio.wait_for(runner.run(job), 60)) == DAYS
    assert runs_of(trace) == 1


async def test_a_run_resumed_after_a_shutdown_its_worker_heard_is_sent_again(
    pool: Pool, tmp_path: Path
) -> None:
    """The bot stopped while its job waited behind another query: the worker heard the
    revoke and drops the job when it comes to it (recorded as revoked). The resumed run,
    which found it queued, sends it again then instead of failing: answered, computed once."""
    log = tmp_path / "w.log"
    pool.worker(log.name)
    busy, trace = tmp_path / "busy", tmp_path / "job.trace"
    runner = pool.runner()
    blocker = asyncio.create_task(runner.run(quick({**COUNT, "started": str(busy), "sleep": 3})))
    while not (busy.exists() and busy.read_text()):
        await asyncio.sleep(0.05)
    job = keyed({**COUNT, "trace": str(trace)})
    await stopped_while_queued(pool.url, job)
    assert count_of(await asyncio.wait_for(runner.run(job), 60)) == DAYS
    assert count_of(await blocker) == DAYS
    assert runs_of(trace) == 1
    assert "Discarding revoked task: barb.query" in log.read_text()


async def test_the_in_process_runner_runs_a_keyed_job_as_any_other(data_env: Path) -> None:
    """The key names a job for the queue alone: in process it is run as it is, and it never
    travels to a worker (one of an older release refuses a field it does not know)."""
    job = keyed(COUNT)
    assert "key" not in job.model_dump(mode="json")
    assert QueryJob.model_validate(job.model_dump(mode="json")) == quick(COUNT)
    assert comparable(await InlineRunner().run(job)) == comparable(
        await InlineRunner().run(quick(COUNT))
    )
