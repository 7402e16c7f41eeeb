"""The live workers in Redis (``worker_registry``): read by the bot from its own two keys,
however many keys other applications keep in the same database; entries of workers gone
left out and removed; a worker in it before it takes a job, out of it once it stops.

Real Redis (``servers/redis.py``) and real worker processes (``servers/celery_workers.py``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis
from servers.celery_workers import barb_worker, misbehaving_worker, worker_env

from bot.pool import worker_registry
from bot.pool.celery_runner import CeleryRunner
from bot.pool.data_place import DataPlace, WorkerBeat
from bot.pool.jobs import QueryJob
from bot.pool.worker_registry import BEATS_KEY, WORKERS_KEY, announce, live_beats

COUNT = {"from": "daily", "session": "RTH", "select": "count()"}
UNRELATED_KEYS = 20_000


def beat(directory: Path, *instruments: str) -> WorkerBeat:
    return WorkerBeat(instruments=instruments, data=DataPlace.of(directory))


@pytest.fixture
async def runner(redis_url: str) -> AsyncIterator[CeleryRunner]:
    runner = CeleryRunner(redis_url, timeout_s=20, queue_wait_s=60)
    yield runner
    await runner.close()


def commands_called(client: redis.Redis) -> set[str]:
    """The commands the server ran since its statistics were reset (``CONFIG RESETSTAT``)."""
    return {name.removeprefix("cmdstat_") for name in client.info("commandstats")}


async def test_the_bot_reads_only_its_own_keys_in_a_database_shared_with_other_apps(
    redis_url: str, runner: CeleryRunner, tmp_path: Path
) -> None:
    """Another application's 20,000 keys in the same database: the bot found the workers
    with ``SCAN barb.worker.*``, which walks every key of the database for each read; now
    it reads one sorted set and one hash, and its answers are the same."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    client = redis.Redis.from_url(redis_url)
    try:
        pipe = client.pipeline(transaction=False)
        for i in range(UNRELATED_KEYS):
            pipe.set(f"shop:cart:{i}", "x")
        pipe.execute()
        announce(client, "barb-NQ-1@box", beat(ours, "NQ"))
        announce(client, "barb-ES-2@box", beat(theirs, "ES"))
        client.config_resetstat()
        assert not await runner.data_on_workers("NQ", ours)
        assert await runner.data_on_workers("ES", ours)
        assert await runner.data_on_workers("CL", ours)  # nobody serves it
        called = commands_called(client)
        assert "eval" in called  # the registry was read
        assert not called & {"scan", "keys", "randomkey", "dbsize"}, called
        assert set(await live_beats(runner._meta_client)) == {"barb-NQ-1@box", "barb-ES-2@box"}
        assert client.dbsize() == UNRELATED_KEYS + 2  # the bot added nothing of its own
    finally:
        client.close()


async def test_workers_gone_are_left_out_then_removed_and_the_keys_expire_with_the_last(
    redis_url: str, runner: CeleryRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that stops beating (killed: nothing takes it out) counts as gone once its
    last beat's time to live is over, by Redis's clock; the next beat of any worker removes
    its entry, and with no worker beating at all both keys expire."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    client = redis.Redis.from_url(redis_url)
    try:
        announce(client, "barb-NQ-1@here", beat(ours, "NQ"))
        monkeypatch.setattr(worker_registry, "HEARTBEAT_TTL_S", 0.2)
        announce(client, "barb-NQ-2@there", beat(theirs, "NQ"))  # beats once, then killed
        assert await runner.data_on_workers("NQ", ours)
        async with asyncio.timeout(30):
            while await runner.data_on_workers("NQ", ours):
                await asyncio.sleep(0.05)
        assert client.hexists(BEATS_KEY, "barb-NQ-2@there")  # left out, not yet removed
        monkeypatch.undo()
        announce(client, "barb-NQ-1@here", beat(ours, "NQ"))  # its last beat: then killed
        assert client.zrange(WORKERS_KEY, 0, -1) == [b"barb-NQ-1@here"]
        assert client.hkeys(BEATS_KEY) == [b"barb-NQ-1@here"]
        async with asyncio.timeout(30):  # its time to live (4 s) over, by Redis's clock
            while client.exists(WORKERS_KEY, BEATS_KEY):
                await asyncio.sleep(0.05)
        assert await runner.data_on_workers("NQ", ours)  # none up
    finally:
        client.close()


async def test_a_worker_started_elsewhere_refuses_an_import_from_its_first_moment(
    redis_url: str, runner: CeleryRunner, two_instrument_data_dir: Path, tmp_path: Path
) -> None:
    """Bot and a worker share one data directory, so an import reaches every answer; then a
    worker reading its own directory starts on another machine. The bot read the workers
    every 2 s, and an import pressed in the 2 s after that worker was up went ahead, while
    that worker answered from its own bars. Now the worker is in the registry before it
    takes a job, the bot reads it when the import is decided, and a worker that stops
    takes itself out (not 4 s later)."""
    shared = two_instrument_data_dir
    elsewhere = tmp_path / "elsewhere"  # another machine's directory: never the bot's
    elsewhere.mkdir()
    here = barb_worker(worker_env(redis_url, shared, timeout_s=20), tmp_path / "here.log", "NQ")
    try:
        async with asyncio.timeout(60):
            while await runner.data_on_workers("NQ", shared):
                await asyncio.sleep(0.05)
        env = worker_env(redis_url, elsewhere, timeout_s=20)
        there = barb_worker(env, tmp_path / "there.log", "NQ")  # returns once it is ready
        try:
            assert await runner.data_on_workers("NQ", shared)
        finally:
            there.stop()  # a warm shutdown: it takes itself out
        assert not await runner.data_on_workers("NQ", shared)
    finally:
        here.kill()
        here.stop()


async def test_a_worker_is_in_the_registry_before_it_takes_its_first_job(
    redis_url: str, runner: CeleryRunner, two_instrument_data_dir: Path, tmp_path: Path
) -> None:
    """A job already waiting in its queue when the worker starts: the worker said it was
    alive only once Celery was consuming (its ``worker_ready`` signal, from a thread), so
    its first job could run before the bot could see it."""
    job = QueryJob(query={**COUNT, "registered": ["NQ"]}, chart=False, csv=False)
    answer = asyncio.create_task(runner.run(job))
    client = redis.Redis.from_url(redis_url)
    try:
        async with asyncio.timeout(30):
            while not client.llen("barb.NQ"):  # queued, no worker yet
                await asyncio.sleep(0.05)
    finally:
        client.close()
    env = worker_env(redis_url, two_instrument_data_dir, timeout_s=20)
    worker = misbehaving_worker(env, tmp_path / "worker.log", "NQ")
    try:
        outcome = await asyncio.wait_for(answer, 60)
    finally:
        worker.kill()
        worker.stop()
    assert outcome.ok, outcome.summary_text
    assert json.loads(outcome.summary_text) is True
