"""A Celery worker that answers query jobs for the instruments it serves (``barb worker``)."""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import os
import signal
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis
from celery import signals
from kombu.transport import redis as kombu_redis

from barb.data.store import DataMeta, data_path, read_meta
from barb.errors import BarbError
from barb.process_memory import set_memory_ceiling
from barb.settings import default_settings
from bot.pool.data_place import DataPlace, WorkerBeat
from bot.pool.jobs import QueryJob, QueryOutcome, run_query_job
from bot.pool.queue_app import (
    DATA_META_TTL_S,
    data_meta_key,
    hard_limit,
    make_queue_app,
    queue_name,
    visibility_timeout,
)
from bot.pool.runner import DEFAULT_MEMORY_GB, memory_bytes, warm_instruments
from bot.pool.worker_registry import HEARTBEAT_S, announce, withdraw

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
    until stopped (SIGTERM: warm shutdown, the queries in progress finish first, whether it
    reaches this process alone or the children too, ``_leave_sigterm_to_parent``). Each
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
    _keep_unacked_when_redis_is_gone()
    # Celery logs each answer's whole result at INFO: noise, and the person's numbers, in
    # the worker's log. Failures and time limits are still logged.
    logging.getLogger("celery.app.trace").setLevel(logging.WARNING)
    signals.worker_process_init.connect(_leave_sigterm_to_parent, weak=False)
    node = node_name(instruments, os.getpid())
    # Said before Celery consumes anything: a bot deciding whether an import reaches every
    # worker of an instrument (``data_upload``) must see this one before it can run a job.
    _start_heartbeat(url, node, instruments)
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
            f"--hostname={node}",
            # Workers never talk to one another: no gossip, mingle or remote-control chatter.
            "--without-gossip",
            "--without-mingle",
        ]
    )


def node_name(instruments: tuple[str, ...], pid: int) -> str:
    """The Celery node name of the worker ``pid`` (its main process) on this machine:
    unique per process, so that two workers on one machine are told apart."""
    return f"barb-{'-'.join(instruments)}-{pid}@{socket.gethostname()}"


def _leave_sigterm_to_parent(**_: Any) -> None:
    """In each prefork child, as it starts: SIGTERM is ignored, so that only the main
    process acts on it, with its warm shutdown.

    systemd's default ``KillMode=control-group`` sends SIGTERM to every process of the
    unit, as ``kill -TERM -<pgid>`` does: each child ended mid-query ("exited with signal 15
    (SIGTERM)") while the main process began the warm shutdown meant to let it finish, and
    the person read "This query could not be run because of a failure on my side". The main
    process stops its children otherwise: a child past the hard limit is killed (billiard
    sends SIGKILL 0.1 s after the SIGTERM it ignores), a cold shutdown stops the queries
    with ``CHILD_STOP_SIGNAL`` (``queue_app._QueryRequest.cancel``), and a child whose main
    process is gone is killed by the kernel (Celery's parent-death signal)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _start_heartbeat(url: str, node: str, instruments: tuple[str, ...]) -> None:
    """Say now, and then every ``HEARTBEAT_S`` from a thread of the main process, that the
    worker ``node`` is alive (``worker_registry``), which instruments it serves and where
    their directory is (``data_place.WorkerBeat``: the bot imports a file sent to it only
    into a directory every worker of that instrument reads), and what data it serves
    (``data_meta_key``). Not the children's: a child busy with a query, or replaced, says
    nothing of the worker; a worker killed whole stops saying it, one that stops takes
    itself out (``worker_shutdown``, once its jobs are done)."""
    # Short timeouts: a Redis that does not answer delays one beat, not the next ones.
    client = redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
    settings = default_settings()
    served = tuple(symbol.upper() for symbol in instruments)
    stopped = threading.Event()
    # A beat under way when the worker leaves would put it back for its time to live.
    saying = threading.Lock()

    def say() -> None:
        with saying, contextlib.suppress(redis.RedisError):  # away: the bot reads nothing
            if stopped.is_set():
                return
            # Stat each beat: a directory replaced (moved, mounted anew) is another one.
            place = DataPlace.of(settings.data_dir)
            beat = WorkerBeat(instruments=served, data=place, running=_running_jobs())
            announce(client, node, beat)
            pipe = client.pipeline(transaction=False)
            for symbol in instruments:
                meta = _served_meta(data_path(symbol, settings))
                if meta is not None:
                    published = meta.model_dump_json()
                    pipe.set(data_meta_key(symbol), published, px=int(DATA_META_TTL_S * 1000))
            pipe.execute()

    def beat() -> None:
        while not stopped.wait(HEARTBEAT_S):
            say()

    def leave(**_: Any) -> None:
        stopped.set()
        with saying, contextlib.suppress(redis.RedisError):
            withdraw(client, node)

    say()
    signals.worker_shutdown.connect(leave, weak=False)
    threading.Thread(target=beat, name="barb-heartbeat", daemon=True).start()


def _running_jobs() -> tuple[str, ...] | None:
    """The task ids this worker's processes run now (Celery's record in the main process:
    a job is in it from the moment a process takes it to the moment its answer is stored
    and reported). Read from the heartbeat's thread while Celery's changes it: read again
    if it changed meanwhile (None: not known, after ten tries)."""
    from celery.worker.state import active_requests

    for _ in range(10):
        with contextlib.suppress(RuntimeError):  # "Set changed size during iteration"
            return tuple(sorted(request.id for request in list(active_requests)))
    return None


def _served_meta(path: Path) -> DataMeta | None:
    """The ``DataMeta`` of the data file at ``path`` as it is now (an import replaces it),
    read again only when the file changed; None without a readable file."""
    try:
        stat = path.stat()
        return _meta_of(path, stat.st_mtime_ns, stat.st_size)
    except (OSError, BarbError):
        return None


@functools.lru_cache(maxsize=16)
def _meta_of(path: Path, mtime_ns: int, size: int) -> DataMeta:
    return read_meta(path)


class _Channel(kombu_redis.Channel):
    """kombu's Redis channel, which says that its connection is closed as a connection
    error, the kind Celery recovers from.

    When Redis goes away, Celery closes the broker connection, then kombu, closing the
    channel, puts the jobs the worker had taken back in their queue (``restore_unacked``),
    and a query that ends meanwhile is acknowledged on it: each time on a connection whose
    parameters were just dropped, ``AttributeError: 'NoneType' object has no attribute
    'hostname'`` (or ``'client'``), which Celery takes for an unrecoverable error. The whole
    worker stopped, its queries in progress lost with their processes and the person told
    that the query could not be run, where it should have reconnected once Redis was back.
    As a connection error, neither stops anything: the jobs stay in Redis's record of the
    jobs taken and go back to their queue after the visibility timeout, as a vanished
    worker's do, and a copy of a job already answered is dropped (``job_claims``)."""

    def _get_pool(self, asynchronous: bool = False) -> Any:
        if self.connection is None or self.connection.client is None:
            raise redis.ConnectionError("the connection to Redis was closed")
        return super()._get_pool(asynchronous)


def _keep_unacked_when_redis_is_gone() -> None:
    """Give this worker's Redis connections ``_Channel`` (the worker's process only: the bot
    consumes nothing)."""
    kombu_redis.Transport.Channel = _Channel
