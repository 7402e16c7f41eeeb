"""Runners that execute query jobs: in worker processes (the bot) or inline (tools, tests).

``ProcessRunner`` keeps long-lived worker processes (each loads instrument data once and
keeps its caches). Workers are forked from multiprocessing's fork server, which imports the
engine once: a worker started later (after a time limit, a crash, a broken pool) answers
its first question without importing pandas and Barb again, and all workers share those
pages. A job past its time limit has its worker killed and replaced by pebble,
and the caller gets a clear outcome instead of a hung chat. A failure of the pool itself (a
job that cannot be sent, a scheduler thread that died, a broken pool) fails only the job at
fault: the pool is replaced at once and the jobs caught in it are tried once more there.
Closing the runner stops the workers, and a worker whose bot is gone (killed, crashed) ends
itself: none outlives the bot. Each worker's own memory is capped (``memory_gb``): a query
past the cap answers with one sentence (``out_of_memory_outcome``), and its worker, whose
heap the query grew, is replaced before the next query.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import logging
import multiprocessing
import os
import pickle
import select
import signal
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Protocol

from pebble import ProcessExpired, ProcessPool
from pebble.pool.process import PoolManager

from barb.data.store import DataMeta
from barb.process_memory import set_memory_ceiling
from bot.pool.jobs import (
    QueryJob,
    QueryOutcome,
    failed_outcome,
    killed_outcome,
    out_of_memory_outcome,
    ran_out_of_memory,
    refuse_unbounded,
    run_query_job,
    timeout_outcome,
    worker_spent,
)

log = logging.getLogger(__name__)

# How often a waiting job looks at the pool's own threads: a scheduler thread that died
# leaves its future pending for ever, so waiting on the future alone would never end.
_HEALTH_CHECK_S = 0.25

#: Each worker's memory ceiling by default (``BARB_WORKER_MEMORY_GB``): the largest ordinary
#: minute queries over all history hold 1.3-2.1 GB; two instruments joined to a third, 3.5.
DEFAULT_MEMORY_GB = 3.0
#: The exit status of a worker that ran out of memory (``_in_worker``).
OUT_OF_MEMORY_EXIT = 86
#: The exit status of a worker that gave way before starting a job (``_in_worker``): the
#: job goes to its replacement.
SPENT_EXIT = 87


def memory_bytes(gigabytes: float) -> int | None:
    """A ceiling in GB as bytes; None for 0 (no ceiling)."""
    return int(gigabytes * (1 << 30)) or None


class QueryRunner(Protocol):
    async def run(self, job: QueryJob) -> QueryOutcome: ...

    async def check(self, job: QueryJob) -> QueryOutcome:
        """A ``check_only`` job: where runs go (the workers hold the data), but no run. A
        runner that counts, holds or fails runs is not asked about checks."""
        ...

    def data_meta(self, symbol: str) -> DataMeta | None:
        """The data the queries of ``symbol`` run on, as the processes that run them say
        it when they read another directory than the bot's (workers on other machines);
        None when they read the bot's own (the caller reads its file there), or nobody
        says. Called in the event loop: never waits on anything."""
        ...

    async def data_on_workers(self, symbol: str, data_dir: str | Path) -> bool:
        """Whether some query of ``symbol`` may run on other bars than those in
        ``data_dir`` (the bot's data directory): a file imported there would not reach
        it, so the bot refuses it (``data_upload``)."""
        ...

    def answered(self, keys: Sequence[str]) -> None:
        """The answers of the jobs named ``keys`` (``QueryJob.key``) are stored in a reply
        for their person: a runner that keeps them for another reader of the same run lets
        them go. Never waits, never raises."""
        ...

    async def close(self) -> None: ...


class ReadsBotData:
    """A runner whose queries run on this machine, on the bot's own data directory (the
    workers take the bot's environment, ``_adopt``): the bot's file is the data, and an
    import there reaches every query."""

    def data_meta(self, symbol: str) -> DataMeta | None:
        return None

    async def data_on_workers(self, symbol: str, data_dir: str | Path) -> bool:
        return False

    def answered(self, keys: Sequence[str]) -> None:
        """Nothing kept: a job of this process is answered to its caller alone."""


class InlineRunner(ReadsBotData):
    """Runs jobs in a thread of this process: for tools and tests."""

    async def run(self, job: QueryJob) -> QueryOutcome:
        return await self._inline(job)

    async def check(self, job: QueryJob) -> QueryOutcome:
        return await self._inline(job)

    @staticmethod
    async def _inline(job: QueryJob) -> QueryOutcome:
        return refuse_unbounded(job) or await asyncio.to_thread(run_query_job, job)

    async def close(self) -> None:
        return None


#: How often a worker checks that the bot is still there, where it cannot wait for its end.
BOT_CHECK_S = 0.25

#: What the fork server imports before it forks any worker: the job and everything it
#: runs (pandas, the engine, matplotlib for the charts).
PRELOADED = ("bot.pool.jobs", "barb.charts")


def worker_context() -> multiprocessing.context.ForkServerContext:
    """Workers forked from the fork server: a clean process (started like spawn, without the
    bot's threads and event loop) that has already imported ``PRELOADED``."""
    context = multiprocessing.get_context("forkserver")
    # Read when the server starts (once per bot process); later calls change nothing.
    context.set_forkserver_preload(list(PRELOADED))
    return context


def _adopt(environ: dict[str, str], cwd: str) -> None:
    """Take the bot's environment and directory as they are now. The fork server kept those
    of the moment it started, and a spawned worker would have had today's: settings read
    from the environment must not depend on when the server happened to start."""
    os.environ.clear()
    os.environ.update(environ)
    os.chdir(cwd)


def _end_with_bot(bot_pid: int) -> None:
    """In a worker: exit as soon as the bot is gone, even in the middle of a query.

    A bot stopped by SIGKILL (or crashing) cannot stop its workers; pebble's own workers only
    notice between jobs, and a query can run for its whole time limit. The worker's parent
    is the fork server, which lives as long as any worker does (each holds the server's
    lifeline), so the worker watches the bot itself: through a pidfd, which cannot mistake
    a new process that reused the pid for the bot, or by polling where there is none.
    """
    try:
        bot = os.pidfd_open(bot_pid)
    except ProcessLookupError:  # gone already
        os._exit(0)
    except (AttributeError, OSError):  # not Linux 5.3+: poll
        bot = None

    def watch() -> None:
        if bot is not None:
            select.select([bot], [], [])  # readable once the bot has ended
        else:
            while _alive(bot_pid):
                time.sleep(BOT_CHECK_S)
        os._exit(0)

    threading.Thread(target=watch, name="barb-bot-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process now has the pid
        return False
    return True


def _warm_up(
    instruments: tuple[str, ...],
    bot_pid: int,
    environ: dict[str, str],
    cwd: str,
    memory_limit: int | None = None,
) -> None:
    """Worker initializer: the bot's settings; end with the bot; cap its memory; load data
    before the first question."""
    _adopt(environ, cwd)
    _end_with_bot(bot_pid)
    set_memory_ceiling(memory_limit)
    warm_instruments(instruments)


def _in_worker(work: Callable[[QueryJob], QueryOutcome], job: QueryJob) -> QueryOutcome:
    """A job as a worker runs it. A query that ran out of memory ends its worker: the
    arrays it grew are freed, but a heap fragmented around them can keep their pages, and
    the next query should find a worker at its start. The pool reads the exit status as
    that sentence and pebble starts a fresh worker. A chart that ran out of memory costs
    only the chart: that answer goes back, and the worker ends when its next job reaches
    it, which its replacement runs (``SPENT_EXIT``)."""
    if worker_spent():
        os._exit(SPENT_EXIT)
    outcome = work(job)
    if ran_out_of_memory(outcome):
        os._exit(OUT_OF_MEMORY_EXIT)
    return outcome


def warm_instruments(instruments: tuple[str, ...]) -> None:
    """Load each instrument's data and build its daily frames before the first question."""
    from barb.frames import get_dataset
    from barb.process_memory import return_freed_memory

    return_freed_memory()

    for symbol in instruments:
        try:
            dataset = get_dataset(symbol)
            dataset.frame(dataset.instrument.default_session, "daily")
        except Exception:  # a missing file is reported when queried
            log.warning("warm-up of %s failed", symbol, exc_info=True)
    # What is loaded now lives as long as the worker: keep it out of the cyclic collector's
    # full passes, which would otherwise rescan pandas, matplotlib and the data every time.
    gc.freeze()


def _started() -> None:
    """The job that starts a pool's workers (``ProcessRunner._new_pool``)."""


#: Longest wait for a pool's workers to start before a job is sent anyway (pebble then
#: starts them itself): the fork server's imports take about a second.
_START_WAIT_S = 30.0


def _unread(future: asyncio.Future[QueryOutcome]) -> None:
    """Takes the outcome of a job nobody waits for, so that a pool closing under it is not
    printed as "Future exception was never retrieved"."""
    if not future.cancelled():
        future.exception()


class _PoolFailed(Exception):
    """The pool itself failed while this job was in it (not the job's own worker)."""


def _healthy(pool: ProcessPool) -> bool:
    # pebble marks a pool it knows is broken; a thread killed by an unexpected exception
    # (a RecursionError while pickling) it does not notice, so look at the threads too.
    return pool.active and all(thread.is_alive() for thread in pool._loops)


def _retire(pool: ProcessPool) -> None:
    """Stop a replaced pool and its workers, off the event loop (a broken one may block)."""
    try:
        pool.stop()
        pool.join()
    except Exception:
        log.warning("a replaced worker pool did not stop cleanly", exc_info=True)


#: How long a worker's death waits for the workers' channel lock before the pool is taken
#: for jammed: a live worker holds it for the moment it takes to send one answer or take
#: one job (milliseconds, even for a chart of megabytes read by the pool's own thread).
_CHANNEL_LOCK_WAIT_S = 2.0


class _IdleDeathManager(PoolManager):
    """pebble's pool manager, but a worker killed by a signal while the pool holds no job
    is only replaced, and a worker that dies holding the workers' channel breaks the pool at
    once.

    pebble reads any worker that ends with no job running as "All workers expired" and
    breaks the whole pool (a guard against an initializer that fails in a loop). A worker
    the kernel's OOM killer takes while idle (the largest process, which a worker that drew
    a big chart can be), or killed by hand just after its plan's check, then cost every
    worker: the runner replaced the pool, and the next question's check waited for a whole
    new pool to load its data, until the plan gave up on it (``check_wait_s``, 15 s). With
    no job in the pool nothing can be lost: pebble starts the one replacement, as for any
    worker that died, if the dead worker left the workers' channel free.

    Killed while it held the channel's lock (sending its answer, or taking a job), a worker
    leaves it held for ever: every other worker waits for it when its own answer is ready
    (pebble's 60 s lock timeout), then dies, and its job read "The query crashed its
    worker". So after any death the lock is tried for ``_CHANNEL_LOCK_WAIT_S``; still held,
    the pool is broken now: the jobs caught in it fail with ``BrokenProcessPool`` and the
    runner tries them again on a fresh pool, with a fresh channel, at once. A worker that
    exits by itself with no job running (status > 0: the initializer) and a death while a
    job waits unacknowledged in the pipe are left to pebble, which breaks the pool too."""

    def handle_worker_expiration(self, expiration: tuple[int, int | None]) -> None:
        _, exitcode = expiration
        killed_idle = exitcode is not None and exitcode < 0 and not self.task_manager.tasks
        if not killed_idle:
            super().handle_worker_expiration(expiration)  # its job gets ProcessExpired
        if not self._channel_free():
            raise BrokenProcessPool("a worker died holding the workers' channel lock")

    def _channel_free(self) -> bool:
        channel = self.worker_manager.workers_channel
        assert channel is not None
        with channel.lock(timeout=_CHANNEL_LOCK_WAIT_S) as free:
            return free


class _Pool(ProcessPool):
    """pebble's ``ProcessPool`` with ``_IdleDeathManager`` (pebble is pinned: the manager
    is its private attribute, set once in its constructor)."""

    def __init__(self, *args: Any, context: Any, **kwargs: Any) -> None:
        super().__init__(*args, context=context, **kwargs)
        self._pool_manager = _IdleDeathManager(self._context, context)


class ProcessRunner(ReadsBotData):
    """A pool of worker processes with a per-query time limit, replaced when it breaks."""

    def __init__(
        self,
        workers: int = 2,
        timeout_s: float = 20.0,
        warm_instruments: tuple[str, ...] = (),
        *,
        memory_gb: float = DEFAULT_MEMORY_GB,
        work: Callable[[QueryJob], QueryOutcome] = run_query_job,
    ):
        self.timeout_s = timeout_s
        self.memory_limit = memory_bytes(memory_gb)  # each worker's, in bytes
        self.restarts = 0  # workers replaced (time limit, death)
        self.pool_replacements = 0  # whole pools replaced
        self._workers = workers
        self._warm_instruments = warm_instruments
        self._work = work
        self._retry_lock = asyncio.Lock()
        self._starting: threading.Thread | None = None
        self._pool = self._new_pool()

    def _new_pool(self) -> ProcessPool:
        pool = _Pool(
            max_workers=self._workers,
            initializer=_warm_up,
            initargs=(
                self._warm_instruments,
                os.getpid(),
                dict(os.environ),
                os.getcwd(),
                self.memory_limit,
            ),
            context=worker_context(),
        )
        if self._warm_instruments:
            # pebble starts the workers with the first job: start them now, so that the data
            # is loaded while the bot starts, not while the first question waits for it. In a
            # thread of its own: pebble starts them in the thread that schedules, and a
            # worker's start waits for the fork server to import the engine (a second when
            # the bot starts), which neither the bot's start nor its event loop should.
            self._starting = threading.Thread(
                target=pool.schedule, args=(_started,), name="barb-pool-start", daemon=True
            )
            self._starting.start()
        return pool

    async def _workers_up(self) -> None:
        """Wait, off the event loop, for the workers being started to be up."""
        starting = self._starting
        if starting is not None and starting.is_alive():
            await asyncio.to_thread(starting.join, _START_WAIT_S)

    def _replace(self, broken: ProcessPool, why: str) -> None:
        """Swap in a fresh pool, once, however many jobs noticed the same broken one."""
        if self._pool is not broken:
            return
        self.pool_replacements += 1
        log.error("worker pool replaced: %s", why)
        self._pool = self._new_pool()
        threading.Thread(target=_retire, args=(broken,), daemon=True).start()

    async def run(self, job: QueryJob) -> QueryOutcome:
        return await self._submit(job)

    async def check(self, job: QueryJob) -> QueryOutcome:
        return await self._submit(job)

    async def _submit(self, job: QueryJob) -> QueryOutcome:
        refused = refuse_unbounded(job)
        if refused is not None:
            return refused
        try:
            # What cannot be pickled here would break the pool's scheduler thread there.
            pickle.dumps(job)
        except Exception as exc:
            return self._job_failed(job, exc, "could not be prepared for a worker")
        try:
            return await self._attempt(job)
        except _PoolFailed:
            pass
        # Caught in a pool that broke: once more, on the fresh one, and alone among the other
        # retried jobs, so that the job at fault breaks the pool again only for itself.
        try:
            async with self._retry_lock:
                return await self._attempt(job)
        except _PoolFailed as exc:
            return self._job_failed(job, exc.__cause__ or exc, "broke the worker pool")

    async def _attempt(self, job: QueryJob) -> QueryOutcome:
        await self._workers_up()
        pool = self._pool
        if job.time_limit_s is None:  # so that a slow chart is left out in time
            job = job.model_copy(update={"time_limit_s": self.timeout_s})
        try:
            future = pool.schedule(_in_worker, args=(self._work, job), timeout=self.timeout_s)
        except RuntimeError as exc:  # the pool is not running any more
            self._replace(pool, f"scheduling failed: {exc}")
            raise _PoolFailed from exc
        wrapped = asyncio.wrap_future(future)
        try:
            while True:
                done, _ = await asyncio.wait({wrapped}, timeout=_HEALTH_CHECK_S)
                if done:
                    break
                if not _healthy(pool):
                    self._replace(pool, "a pool thread stopped")
                    raise _PoolFailed
        except BaseException:
            # Given up (the pool broke, or the caller was cancelled: a shutdown stops the
            # answers in progress): the job goes too, and so does the asyncio future. Left
            # pending, it would take the BrokenProcessPool pebble sets when the pool closes,
            # and print it unread ("Future exception was never retrieved") at shutdown.
            if job.check_only:
                # pebble stops a job by ending the worker it is on, or will be on: a queued
                # job is already in the workers' pipe. The replacement loads the instrument
                # again (4.5 s on a loaded machine), where a check given up on at its plan's
                # wait ends in milliseconds by itself, its answer unread.
                wrapped.add_done_callback(_unread)
                raise
            future.cancel()
            wrapped.cancel()
            raise
        try:
            return wrapped.result()
        except concurrent.futures.TimeoutError:
            self.restarts += 1
            log.warning("query over %.0fs, worker replaced: %r", self.timeout_s, job.query)
            return timeout_outcome(self.timeout_s)
        except ProcessExpired as exc:  # this job's own worker died; pebble starts another
            self.restarts += 1
            if exc.exitcode == OUT_OF_MEMORY_EXIT:
                log.warning("query out of memory, worker replaced: %r", job.query)
                return out_of_memory_outcome(self.memory_limit)
            if exc.exitcode == SPENT_EXIT:  # it ran nothing of this job: its replacement does
                log.info("worker whose chart ran out of memory replaced")
                return await self._attempt(job)
            ref = uuid.uuid4().hex[:8]
            if exc.exitcode == -signal.SIGKILL:  # not by pebble (a time limit is not this)
                log.error("worker killed (ref %s, SIGKILL, OOM killer?): %r", ref, job.query)
                return killed_outcome(ref)
            log.error("worker died (ref %s, exit %s): %r", ref, exc.exitcode, job.query)
            return failed_outcome(
                "WorkerDied",
                f"The query crashed its worker and was stopped (reference {ref}); the next "
                "query runs as usual.",
                ref,
            )
        except (BrokenProcessPool, concurrent.futures.CancelledError) as exc:
            self._replace(pool, f"broken pool: {exc!r}")
            raise _PoolFailed from exc
        except Exception as exc:  # pebble could not send the job, or the job raised
            if not _healthy(pool):
                self._replace(pool, f"{exc!r}")
                raise _PoolFailed from exc
            return self._job_failed(job, exc, "failed in its worker")

    def _job_failed(self, job: QueryJob, exc: BaseException, what: str) -> QueryOutcome:
        ref = uuid.uuid4().hex[:8]
        log.error("query %s (ref %s): %r", what, ref, job.query, exc_info=exc)
        # "WorkerDied": the query is not the model's to fix; the loop stops with a sentence.
        return failed_outcome(
            "WorkerDied",
            f"The query could not be run (reference {ref}); other queries are not affected.",
            ref,
        )

    async def close(self) -> None:
        """Stop the workers now, a query in the middle of its run included (its caller is
        gone: the bot stops its answers in progress before it closes the runner)."""
        await self._workers_up()  # a pool stopped while it starts could leave workers behind
        self._pool.stop()
        await asyncio.to_thread(self._pool.join)
