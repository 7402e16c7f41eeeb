"""Runners that execute query jobs: in worker processes (the bot) or inline (tools, tests).

``ProcessRunner`` keeps long-lived worker processes (each loads instrument data once and
keeps its caches). A job past its time limit has its worker killed and replaced by pebble,
and the caller gets a clear outcome instead of a hung chat.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import logging
import multiprocessing
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


def _warm_up(instruments: tuple[str, ...]) -> None:
    """Worker initializer: load data and build the daily frames before the first question."""
    from barb.frames import get_dataset

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
        self._pool.close()
        await asyncio.to_thread(self._pool.join, 10)
