"""Whether a file the bot imports reaches the workers that answer its queries: only when
every live worker of the instrument reads the bot's own data directory (same host, same
device and inode), as each says with its heartbeat."""

from __future__ import annotations

import asyncio
from pathlib import Path

import redis

from bot.pool.celery_runner import CeleryRunner
from bot.pool.data_place import DataPlace, WorkerBeat, imports_reach_workers, read_beat
from bot.pool.queue_app import heartbeat_key


def place(directory: Path) -> DataPlace:
    found = DataPlace.of(directory)
    assert found is not None
    return found


def test_a_worker_reading_the_bots_directory_by_another_path_shares_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (tmp_path / "link").symlink_to(data)
    worker = WorkerBeat(instruments=("NQ",), data=place(tmp_path / "link"))
    assert worker.data is not None and worker.data.path == str(data)
    assert imports_reach_workers([worker], "nq", place(data))


def test_a_directory_with_another_inode_is_another_directory(tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    bot = place(ours)
    same = WorkerBeat(instruments=("NQ",), data=bot)
    other = WorkerBeat(instruments=("NQ",), data=place(theirs))
    assert bot.device == other.data.device and bot.inode != other.data.inode
    assert not imports_reach_workers([other], "NQ", bot)
    # One worker of the instrument elsewhere is enough to refuse: its answers stay old.
    assert not imports_reach_workers([same, other], "NQ", bot)
    # Same path and inode on another host (a container whose disk is its own): refused too.
    moved = WorkerBeat(instruments=("NQ",), data=bot.model_copy(update={"host": "other"}))
    assert not imports_reach_workers([moved], "NQ", bot)


def test_only_the_instruments_own_workers_count_and_at_least_one_must_be_up(
    tmp_path: Path,
) -> None:
    bot = place(tmp_path)
    elsewhere = WorkerBeat(instruments=("ES",), data=bot.model_copy(update={"inode": 1}))
    here = WorkerBeat(instruments=("NQ",), data=bot)
    assert imports_reach_workers([here, elsewhere], "NQ", bot)
    assert not imports_reach_workers([here, elsewhere], "ES", bot)
    assert not imports_reach_workers([], "NQ", bot)  # no worker up
    assert not imports_reach_workers(None, "NQ", bot)  # Redis unreachable
    # A worker whose directory could not be read, or that does not say where it reads
    # (another release's "alive"): unknown, so refused.
    assert not imports_reach_workers([here, WorkerBeat(instruments=("NQ",), data=None)], "NQ", bot)
    assert read_beat(b"alive") is None
    assert not imports_reach_workers([here, read_beat(b"alive")], "NQ", bot)
    assert not imports_reach_workers([here], "NQ", DataPlace.of(tmp_path / "missing"))


async def test_the_runner_reads_where_each_live_worker_reads_from_redis(
    redis_url: str, tmp_path: Path
) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    client = redis.Redis.from_url(redis_url)
    runner = CeleryRunner(redis_url, timeout_s=20)
    try:
        here = WorkerBeat(instruments=("NQ", "ES"), data=place(ours))
        client.set(heartbeat_key("barb-NQ-ES-1@box"), here.model_dump_json(), px=60_000)
        async with asyncio.timeout(30):
            while runner.data_on_workers("NQ", ours):
                await asyncio.sleep(0.05)
        assert runner.data_on_workers("NQ", theirs)
        assert runner.data_on_workers("CL", ours)  # no worker serves it
        there = WorkerBeat(instruments=("NQ",), data=place(theirs))
        client.set(heartbeat_key("barb-NQ-2@box"), there.model_dump_json(), px=60_000)
        async with asyncio.timeout(30):
            while not runner.data_on_workers("NQ", ours):
                await asyncio.sleep(0.05)
        assert not runner.data_on_workers("ES", ours)
    finally:
        await runner.close()
        client.close()
