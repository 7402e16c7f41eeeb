"""A Celery worker that answers query jobs for the instruments it serves (``barb worker``)."""

from __future__ import annotations

import gc
import logging
import os
import socket
from collections.abc import Callable

from barb.process_memory import set_memory_ceiling
from bot.pool.jobs import QueryJob, QueryOutcome, run_query_job
from bot.pool.queue_app import hard_limit, make_queue_app, queue_name, visibility_timeout
from bot.pool.runner import DEFAULT_MEMORY_GB, memory_bytes, warm_instruments

log = logging.getLogger(__name__)


def serve_worker(
    url: str,
    instruments: tuple[str, ...],
    *,
    concurrency: int,
    timeout_s: float,
    memory_gb: float = DEFAULT_MEMORY_GB,
    loglevel: str = "INFO",
    work: Callable[[QueryJob], QueryOutcome] = run_query_job,
) -> None:
    """Warm ``instruments``, then consume their queues with ``concurrency`` prefork children
    until stopped (SIGTERM: warm shutdown, the queries in progress finish first). Each
    process's own memory is capped at ``memory_gb`` (0: no cap): a query past it answers
    with the memory sentence (``out_of_memory_outcome``), and its child, whose heap the
    query grew, ends after that answer (``queue_app._QueryTask.after_return``); Celery forks
    a fresh one from this process."""
    # Set before the children are forked, which inherit it (this process computes nothing).
    set_memory_ceiling(memory_bytes(memory_gb))
    # Loaded once here, before Celery forks its children: they share these pages (copy on
    # write), and a child replaced after a hard time limit starts warm too.
    warm_instruments(instruments)
    import barb.charts  # noqa: F401  (matplotlib too: shared by the children, not per child)

    gc.freeze()
    # Celery logs each answer's whole result at INFO: noise, and the person's numbers, in
    # the worker's log. Failures and time limits are still logged.
    logging.getLogger("celery.app.trace").setLevel(logging.WARNING)
    app = make_queue_app(url, work=work)
    # The bot sends its own limits with each job; these hold for a job that has none.
    app.conf.task_soft_time_limit = timeout_s
    app.conf.task_time_limit = hard_limit(timeout_s)
    # A worker that vanishes mid-query cannot report anything; the job it had taken goes
    # back to its queue once no live worker could still be running it, and the next free
    # worker runs it. Every worker sweeps the jobs taken and not acknowledged each second
    # (kombu's default, every 100 s, would keep the person waiting long after the limit).
    app.conf.broker_transport_options = {
        "visibility_timeout": visibility_timeout(timeout_s),
        "unacked_restore_interval": 1,
        "unacked_restore_throttle": 1,
    }
    queues = ",".join(queue_name(symbol) for symbol in instruments)
    log.info("barb worker serving %s with %d processes", queues, concurrency)
    app.worker_main(
        [
            "worker",
            "--pool=prefork",
            f"--concurrency={concurrency}",
            f"--queues={queues}",
            f"--loglevel={loglevel}",
            # Unique per process, so that two workers on one machine are told apart.
            f"--hostname=barb-{'-'.join(instruments)}-{os.getpid()}@{socket.gethostname()}",
            # Workers never talk to one another: no gossip, mingle or remote-control chatter.
            "--without-gossip",
            "--without-mingle",
        ]
    )
