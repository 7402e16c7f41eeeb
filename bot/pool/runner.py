"""Runners that execute query jobs: in worker processes (the bot) or inline (tools, tests).

``ProcessRunner`` keeps long-lived worker processes (each loads instrument data once and
keeps its caches). A job past its time limit has its worker killed and replaced by pebble,
and the caller gets a clear outcome instead of a hung chat. Closing the runner stops the
workers, and a worker whose bot is gone (killed, crashed) ends itself: none outlives the bot.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import logging
import multiprocessing
import os
import threading
import time
import uuid
from concurrent.futures.process import BrokenProcessPool
from typing import Protocol

from pebble import ProcessExpired, ProcessPool

from bot.pool.jobs import QueryJob, QueryOutcome, run_query_job

log = logging.getLogger(__name__)


class QueryRunner(Protocol):
    async def run(self, job: QueryJob) -> QueryOutcome: ...

    async def close(self) -> None: ...


def _failed(error_type: str, message: str) -> QueryOutcome:
    return QueryOutcome(
        ok=False,
        summary_text=f"Error ({error_type}): {message}",
        error={"error": True, "error_type": error_type, "message": message, "step": "execute"},
    )


class InlineRunner:
    """Runs jobs in a thread of this process: for `barb chat`, tests and tools."""

    async def run(self, job: QueryJob) -> QueryOutcome:
        return await asyncio.to_thread(run_query_job, job)

    async def close(self) -> None:
        return None


#: How often a worker checks that the bot that started it is still there.
PARENT_CHECK_S = 0.25


def _end_with_parent(parent_pid: int) -> None:
    """In a worker: exit as soon as the bot is gone, even in the middle of a query.

    A bot stopped by SIGKILL (or crashing) cannot stop its workers; pebble's own workers only
    notice between jobs, and a query can run for its whole time limit. Orphans are re-parented,
    so a changed parent pid means the bot is gone.
    """

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_CHECK_S)
        os._exit(0)

    threading.Thread(target=watch, name="barb-parent-watch", daemon=True).start()


def _warm_up(instruments: tuple[str, ...]) -> None:
    """Worker initializer: end with the bot; load data and build the daily frames before the
    first question."""
    from barb.frames import get_dataset

    _end_with_parent(os.getppid())

    for symbol in instruments:
        try:
            dataset = get_dataset(symbol)
            dataset.frame(dataset.instrument.default_session, "daily")
        except Exception:  # a missing file is reported when queried
            log.warning("warm-up of %s failed", symbol, exc_info=True)
    # What is loaded now lives as long as the worker: keep it out of the cyclic collector's
    # full passes, which would otherwise rescan pandas, matplotlib and the data every time.
    gc.freeze()


class ProcessRunner:
    """A pool of worker processes with a per-query time limit."""

    def __init__(
        self,
        workers: int = 2,
        timeout_s: float = 20.0,
        warm_instruments: tuple[str, ...] = (),
    ):
        self.timeout_s = timeout_s
        self.restarts = 0
        self._pool = ProcessPool(
            max_workers=workers,
            initializer=_warm_up,
            initargs=(warm_instruments,),
            # spawn: workers start clean, without the bot's threads and event loop.
            context=multiprocessing.get_context("spawn"),
        )

    async def run(self, job: QueryJob) -> QueryOutcome:
        future = self._pool.schedule(run_query_job, args=(job,), timeout=self.timeout_s)
        try:
            return await asyncio.wrap_future(future)
        except concurrent.futures.TimeoutError:
            self.restarts += 1
            log.warning("query over %.0fs, worker replaced: %r", self.timeout_s, job.query)
            return _failed(
                "QueryTimeout",
                f"The query took longer than {self.timeout_s:.0f} seconds and was stopped; "
                "try a shorter period or a longer timeframe.",
            )
        except (ProcessExpired, BrokenProcessPool) as exc:
            self.restarts += 1
            ref = uuid.uuid4().hex[:8]
            code = getattr(exc, "exitcode", None)
            log.error("worker died (ref %s, exit %s): %r", ref, code, job.query)
            return _failed("WorkerDied", f"The query crashed its worker (reference {ref}).")

    async def close(self) -> None:
        """Stop the workers now, a query in the middle of its run included (its caller is
        gone: the bot stops its answers in progress before it closes the runner)."""
        self._pool.stop()
        await asyncio.to_thread(self._pool.join)
