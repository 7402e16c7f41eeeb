"""Whether a file the bot imports reaches the workers that answer its queries: only when
every live worker of the instrument reads the bot's own data directory (same host, same
device and inode), as each says with its heartbeat (``worker_registry``)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
import redis

from bot.pool.celery_runner import CeleryRunner
from bot.pool.data_place import DataPlace, WorkerBeat, imports_reach_workers, read_beat
from bot.pool.worker_registry import announce


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


async def test_the_runner_reads_where_each_live_worker_reads_at_the_moment_it_is_asked(
    redis_url: str, tmp_path: Path
) -> None:
    """Each answer reflects the registry as it is when asked: a worker that says it reads
    elsewhere refuses the next import at once. The bot read the workers every 2 s, and an
    import pressed within 2 s of a worker elsewhere starting went ahead."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    client = redis.Redis.from_url(redis_url)
    runner = CeleryRunner(redis_url, timeout_s=20)
    try:
        assert await runner.data_on_workers("NQ", ours)  # no worker up
        announce(client, "barb-NQ-ES-1@box", WorkerBeat(instruments=("NQ", "ES"), data=place(ours)))
        assert not await runner.data_on_workers("NQ", ours)
        assert await runner.data_on_workers("NQ", theirs)
        assert await runner.data_on_workers("CL", ours)  # no worker serves it
        announce(client, "barb-NQ-2@box", WorkerBeat(instruments=("NQ",), data=place(theirs)))
        assert await runner.data_on_workers("NQ", ours)
        assert not await runner.data_on_workers("ES", ours)
    finally:
        await runner.close()
        client.close()


async def test_the_data_directory_is_read_off_the_event_loop(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bot's data directory is stat'ed for each import decision: on a filesystem that
    hangs (a network mount away) that stalled every chat of the bot while it ran in the
    event loop. Here its stat waits until the event loop has run something else meanwhile:
    in the loop itself it would wait for ever (here 30 s), then fail."""
    ours = tmp_path / "ours"
    ours.mkdir()
    real = DataPlace.of.__func__
    started, released = threading.Event(), threading.Event()
    waited: list[bool] = []

    def hanging(cls: type[DataPlace], data_dir: Path) -> DataPlace | None:
        started.set()
        waited.append(released.wait(30))
        return real(cls, data_dir)

    client = redis.Redis.from_url(redis_url)
    runner = CeleryRunner(redis_url, timeout_s=20)
    try:
        announce(client, "barb-NQ-1@box", WorkerBeat(instruments=("NQ",), data=place(ours)))
        monkeypatch.setattr(DataPlace, "of", classmethod(hanging))
        deciding = asyncio.create_task(runner.data_on_workers("NQ", ours))
        async with asyncio.timeout(30):
            while not started.is_set():
                await asyncio.sleep(0.01)
        await asyncio.sleep(0)  # the loop runs on while the stat hangs
        released.set()
        assert not await deciding  # the worker reads this very directory
        assert waited == [True]
    finally:
        await runner.close()
        client.close()
