"""Query jobs on Celery workers over Redis (``BARB_QUEUE_URL``), for several machines.

The same ``QueryRunner`` contract as the in-process pool: every job ends in one
``QueryOutcome``, an answer or a sentence, never silence and never an exception.

- Each job goes to its instrument's queue with the soft and hard time limits of this bot.
- A job that a worker took ("STARTED") ends within the hard limit or its worker is gone
  (``kill -9``, a machine lost: nothing can report it). Such a job, never acknowledged, goes
  back to its queue after the workers' visibility timeout and another worker runs it, as
  long as it has not expired; only once that chance is gone too does the person get the
  worker-failure sentence.
- A job no worker takes within ``queue_wait_s`` (no worker serves that instrument, or all are
  busy for that long) is revoked and expires, so it never runs after the person was told.
  A query check waits ``check_wait_s`` (the plan's wait for it, ``BARB_CHECK_WAIT_S``)
  instead: the plan is shown unchecked by then, and a copy of the check a worker meets
  later, the revoke never heard (Redis away, the worker started since), is dropped.

Celery's calls block, so they run on one thread of their own: it sends the jobs, and one
poller reads the state of every job in flight with a single ``MGET`` per tick (Celery's own
result keys, decoded by its backend), however many chats are waiting. The data the workers
serve (``data_meta``) is read every ``_META_FRESH_S`` by a task of its own with Redis's
asyncio client: never in the event loop, where a Redis slow or away stalled every chat.
Where each live worker reads it (``data_on_workers``) is read at the moment an import is
decided, from the workers' registry (``worker_registry``), which a worker joins before it
takes any job: a worker started a moment before the press is counted.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import redis
import redis.asyncio
from billiard.exceptions import WorkerLostError
from celery import Celery
from celery.exceptions import TimeLimitExceeded
from celery.states import READY_STATES, REVOKED, STARTED, SUCCESS
from pydantic import ValidationError

from barb.data.store import DataMeta
from barb.instruments import available_instruments
from bot.pool import worker_registry
from bot.pool.data_place import DataPlace, WorkerBeat, imports_reach_workers
from bot.pool.job_claims import claim_key
from bot.pool.jobs import (
    QueryJob,
    QueryOutcome,
    failed_outcome,
    killed_outcome,
    refuse_unbounded,
    run_query_job,
    timeout_outcome,
)
from bot.pool.queue_app import (
    ANSWERED,
    RESULT_EXPIRES_S,
    RUN_KEY_HEADER,
    TASK_NAME,
    data_meta_key,
    hard_limit,
    make_queue_app,
    queue_name,
    sent_key,
)

log = logging.getLogger(__name__)

#: How often the states of the jobs in flight are read from Redis.
POLL_S = 0.05
#: After the hard limit, how long a worker that is alive takes to report the killed child.
_DEAD_WORKER_MARGIN_S = 3.0
#: When a job's worker is out of the registry (its entry past its moment, by Redis's clock:
#: no beat for ``HEARTBEAT_TTL_S``), it is gone, unless Redis was in trouble within this
#: long: then it must stay out, read after read, this long. Its entry can be past its
#: moment while the worker lives: Redis back after more than ``HEARTBEAT_TTL_S`` away
#: (restarted with its data kept, a replica promoted, hung) holds every entry so until that
#: worker's next beat, which comes within a beat and its client's connect timeout (1 s
#: each); a plan's check given up then was shown unchecked while it computed. With Redis
#: answering all along, the wait only delayed the plan of a check whose worker was killed
#: (about 7 s after the kill instead of 4).
_GONE_AFTER_S = 3 * worker_registry.HEARTBEAT_S
#: A read of the jobs' states slower than this is Redis in trouble: as slow as that, the
#: workers' beats (1 s timeouts) were failing.
_SLOW_READ_S = worker_registry.HEARTBEAT_S
#: The key each runner keeps in Redis while it has jobs there (``barb.bot.<uuid>``), and how
#: long it holds after its last job: Redis restarted without its data (no ``appendonly``)
#: is seen by the key's absence, and the jobs that waited in their queues are sent again.
_MARK_PREFIX = "barb.bot."
_MARK_TTL_S = 86400
#: After Redis was found to have lost its data, the workers' beats there are read every
#: beat for the jobs they run (``_send_lost_again``). Every live worker beats within two
#: beats of Redis's return (a beat on its way when Redis went gives up after its 1 s
#: timeout, the next comes a beat later). A job is judged once the workers it may be on
#: have beaten there: its own worker, when the bot saw it started; else every worker live
#: before the loss (``_Loss.workers``), which the bot reads at each send and every beat
#: while it polls. When it does not know them, it judges this long after the loss.
_LOST_JOBS_AFTER_S = 2.5 * worker_registry.HEARTBEAT_S
#: A worker live before the loss that has not beaten in the new Redis this long after it
#: was found is gone (lost with Redis's machine, killed): twice the time after its last
#: beat at which the registry counts any worker gone. Its job is sent again then; before,
#: only once its hard limit was past (about 25 s with the default limits). A live worker
#: stalled longer than this (its main process stopped) has its job computed twice.
_LOST_WORKER_AFTER_S = 2 * worker_registry.HEARTBEAT_TTL_S
#: How long any one call of the bot's Celery thread to Redis may wait for its answer (a
#: send, a poll): Redis answers in milliseconds, or is in trouble.
_REDIS_TIMEOUT_S = 3.0
#: How often the data the workers say they serve is read again (``data_meta``), and how
#: long reading it may take.
_META_FRESH_S = 2.0
_META_TIMEOUT_S = 0.25
_SENT_TTL_S = 86400
#: The state the poller gives a job of its own found so (not one of Celery's): another
#: reader of the run stored its answer and let it go (a replica taking over this one's run).
_ANSWERED_STATE = "ANSWERED"
#: Where kombu keeps the jobs a worker has taken and not yet acknowledged.
_UNACKED_KEY = "unacked"


@dataclass(frozen=True)
class _Loss:
    """Redis found to have lost its data (``_keep_mark``)."""

    #: When (``time.monotonic``).
    at: float
    #: The workers live in the Redis that was lost, as last read (``_note_workers``); None
    #: when the bot never read them.
    workers: frozenset[str] | None


def _bound_redis_waits(app: Celery) -> None:
    """Every call of the bot's Celery app to Redis (a send, a poll, a revoke, the mark)
    gives up after ``_REDIS_TIMEOUT_S``: the bot only sends and reads, it never blocks on a
    queue. Without it, a Redis whose machine was lost (connections taken, never answered)
    held the one Celery thread for good: a Run pressed then never got its outcome (its
    send never returned, so its deadline never ran: the plan said "Running…"), nor did any
    job after it, and closing the bot waited on that thread too."""
    timeouts = {"socket_timeout": _REDIS_TIMEOUT_S, "socket_connect_timeout": _REDIS_TIMEOUT_S}
    app.conf.update(
        redis_socket_timeout=_REDIS_TIMEOUT_S,
        redis_socket_connect_timeout=_REDIS_TIMEOUT_S,
        broker_connection_timeout=_REDIS_TIMEOUT_S,
        broker_transport_options={**app.conf.broker_transport_options, **timeouts},
    )


@dataclass
class _InFlight:
    """A sent job as the poller last saw it."""

    sent: float
    job: QueryJob
    #: Set by the poller with the final state and value.
    done: asyncio.Future[tuple[str, Any]]
    #: When the poller first saw that a worker had taken it.
    started: float | None = None
    #: The worker that took it, as its STARTED record names it (None: not seen, or a
    #: worker of a release that does not say).
    node: str | None = None
    #: When the poller first read that the worker that took it is not in the registry,
    #: in a run of such reads (None: alive at the last read, or not judged yet).
    absent_since: float | None = None
    #: Set by the poller once that worker is judged gone (``_gone``).
    worker_gone: bool = False
    #: Sent by an earlier process of the bot, found in Redis at a run's resumption
    #: (``_find_sent``): revoked, or its worker gone, it is sent afresh, not failed.
    adopted: bool = False


@dataclass
class _Sent:
    """A keyed job an earlier process of the bot sent, as Redis has it now (``task_id``
    None: its answer is already stored in a reply, ``CeleryRunner.answered``)."""

    task_id: str | None
    #: Its final state and value once answered; None while it waits or runs.
    ready: tuple[str, Any] | None
    #: Whether a worker has taken it.
    started: bool


class CeleryRunner:
    """Sends query jobs to ``barb worker`` processes through Redis and waits for outcomes."""

    def __init__(
        self,
        url: str,
        timeout_s: float = 20.0,
        *,
        queue_wait_s: float = 60.0,
        check_wait_s: float | None = None,
        keep_taken_s: float | None = None,
        app: Celery | None = None,
    ) -> None:
        self.timeout_s = timeout_s
        self.queue_wait_s = queue_wait_s
        #: How long an answer taken stays findable for another reader of its run, if the
        #: bot never stores it in a reply (``_taken``): the window in which that run is
        #: resumed (``bot_run.resume_window_s``), shorter or longer than the results' own
        #: life (``RESULT_EXPIRES_S``, the default): a model given a longer timeout words
        #: the answer longer, and its run resumed after a kill must still find it.
        self.keep_taken_s = RESULT_EXPIRES_S if keep_taken_s is None else keep_taken_s
        #: How long a check may wait: the plan's wait for it (None: ``queue_wait_s``).
        self.check_wait_s = check_wait_s
        self._app = app or make_queue_app(url)
        _bound_redis_waits(self._app)
        self._known = {symbol.upper() for symbol in available_instruments()}
        # One thread for every Celery call: its connections are per thread, and one is plenty.
        self._celery = ThreadPoolExecutor(1, thread_name_prefix="barb-queue")
        self._in_flight: dict[str, _InFlight] = {}
        # Touched on the Celery thread only: the key that tells Redis lost its data, whether
        # it was set, and when Redis was last seen without it.
        self._mark = f"{_MARK_PREFIX}{uuid.uuid4().hex}"
        self._marked = False
        self._loss: _Loss | None = None
        # The live workers as last read (``_note_workers``), and when (``time.monotonic``).
        self._workers: frozenset[str] | None = None
        self._workers_read_at = 0.0
        # When Redis was last found in trouble: a read failed or was slow, or it lost its
        # data (the workers' entries may then be missing while they live).
        self._troubled_at: float | None = None
        self._poller: asyncio.Task[None] | None = None
        # The jobs Redis may have lost being sent again (``_send_lost_again``).
        self._recoveries: set[asyncio.Task[None]] = set()
        # Read by ``_read_metas``, never in a question's way: short timeouts only so that a
        # Redis back from away is read again soon.
        self._meta_client = redis.asyncio.Redis.from_url(
            url, socket_timeout=_META_TIMEOUT_S, socket_connect_timeout=_META_TIMEOUT_S
        )
        self._metas: dict[str, DataMeta | None] = {}
        self._meta_reader: asyncio.Task[None] | None = None
        # Set by ``close``: the reader ends between two reads. Cancelled inside one, redis-py
        # could lose a socket it had just opened (an unclosed connection, seen in CI).
        self._closing = asyncio.Event()
        # Made by the bot in its event loop (``make_runner``): read from now, so that the
        # first question already has the workers' dates.
        self._keep_reading_metas()

    async def run(self, job: QueryJob) -> QueryOutcome:
        return await self._submit(job)

    def data_meta(self, symbol: str) -> DataMeta | None:
        """The data the workers serve for ``symbol`` as they last said (``queue_worker``),
        which relative periods count from: the bot on another machine holds none, or an
        older copy. None when no worker says it (none is up), or before the first read.

        Only what ``_read_metas`` last read: this runs in the event loop, and its own Redis
        GET there (0.25 s timeouts, every 2 s) stalled every chat's question, and the bot's
        every other task, while Redis was slow or away."""
        self._keep_reading_metas()
        return self._metas.get(symbol.upper())

    async def data_on_workers(self, symbol: str, data_dir: str | Path) -> bool:
        """Whether some query of ``symbol`` may run on other data than ``data_dir``'s, the
        bot's own: a file of bars imported there would not reach it, and is refused
        (``data_upload``). False only when every live worker of ``symbol`` says, as read now,
        that it reads that very directory (bot and workers on one machine sharing one
        ``BARB_DATA_DIR``); a worker elsewhere, none up, or Redis unreachable: True.

        Read now, not from the last periodic read: a worker that started elsewhere a moment
        ago is in the registry before it takes a job, and an import pressed then would
        never reach it. The directory's stat runs off the event loop (a slow or hung
        filesystem stalls this one question, not every chat)."""
        bot, beats = await asyncio.gather(
            asyncio.to_thread(DataPlace.of, data_dir), self._live_beats()
        )
        return not imports_reach_workers(beats, symbol, bot)

    async def _live_beats(self) -> list[WorkerBeat | None] | None:
        """Every live worker's beat, read now; None when Redis cannot be read (then no
        worker is taken to share the bot's data)."""
        try:
            return list((await worker_registry.live_beats(self._meta_client)).values())
        except redis.RedisError:
            return None

    def _keep_reading_metas(self) -> None:
        """Start ``_read_metas`` if it does not run (outside an event loop: at the first
        ``data_meta`` in one)."""
        if self._closing.is_set():
            return
        if self._meta_reader is not None and not self._meta_reader.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._meta_reader = loop.create_task(self._read_metas())

    async def _read_metas(self) -> None:
        """Every ``_META_FRESH_S``, what the workers say they serve for every instrument,
        with one MGET. Redis away, or a value of another release's shape, leaves the last
        one read: the workers' data did not change for Redis going away."""
        symbols = sorted(self._known)
        keys = [data_meta_key(symbol) for symbol in symbols]
        while not self._closing.is_set():
            try:
                raws = await self._meta_client.mget(keys)
            except redis.RedisError:
                raws = []
            for symbol, raw in zip(symbols, raws, strict=False):
                try:
                    self._metas[symbol] = (
                        DataMeta.model_validate_json(raw) if raw is not None else None
                    )
                except ValueError:  # another release's shape
                    continue
            try:
                await asyncio.wait_for(self._closing.wait(), _META_FRESH_S)
            except TimeoutError:
                continue

    async def check(self, job: QueryJob) -> QueryOutcome:
        return await self._submit(job)

    async def _submit(self, job: QueryJob) -> QueryOutcome:
        refused = refuse_unbounded(job)
        if refused is not None:
            return refused
        if job.instrument.upper() not in self._known:
            # No queue serves it: the engine's own error ("Unknown instrument…, available: …")
            # needs no data and no worker.
            return await asyncio.to_thread(run_query_job, job)
        if job.key is None:
            return await self._send_and_wait(job)
        # A run resumed after a kill of the bot: the job its first attempt sent may be
        # waiting in its queue, running, or answered. Sent again, a worker computed it a
        # second time for nobody (and the second waited behind the first).
        loop = asyncio.get_running_loop()
        try:
            sent = await loop.run_in_executor(self._celery, self._find_sent, job)
        except Exception:  # Redis unreachable: the send below says so
            log.warning("could not look the job of a resumed run up in Redis", exc_info=True)
            sent = None
        if sent is not None and sent.task_id is None:
            return self._answered_already(job)
        outcome = None
        if sent is not None and sent.ready is not None:
            outcome = self._finished(job, sent.task_id, *sent.ready)
        elif sent is not None:
            assert sent.task_id is not None
            outcome = await self._wait(job, sent.task_id, adopted=True, started=sent.started)
        if outcome is None:  # never sent, lost, revoked, or its worker gone
            outcome = await self._send_and_wait(job)
        self._celery.submit(self._taken, job.key, outcome.ok)
        return outcome

    def answered(self, keys: Sequence[str]) -> None:
        """The answers of the jobs named ``keys`` are stored in a reply for their person:
        deleted from Redis, each leaving a mark of a few bytes (``ANSWERED``) under its
        name. Before, an answer stayed for 10 minutes after it was taken
        (``RESULT_EXPIRES_S``), its CSV and chart included, for a reader that comes only in
        a fault; that reader is late (the run is answered, its reply will be refused) and
        now finds the mark instead, and computes nothing."""
        try:
            self._celery.submit(self._let_go, list(keys))
        except RuntimeError:  # closed (a shutdown): the answers expire on their own
            log.info("the runner is closed: answers left to expire")

    def _let_go(self, keys: list[str]) -> None:
        """On the Celery thread (after the ``_taken`` of the same jobs): ``answered``."""
        backend = self._app.backend
        client = backend.client
        for key in keys:
            name = sent_key(key)
            try:
                raw = client.get(name)
                if raw is None or raw == ANSWERED:
                    continue
                pipe = client.pipeline(transaction=True)
                pipe.set(name, ANSWERED, ex=_SENT_TTL_S)
                pipe.delete(backend.get_key_for_task(raw.decode()))
                pipe.execute()
            except redis.RedisError:  # the answer expires on its own (RESULT_EXPIRES_S)
                log.warning("could not let the answer of job %s go", key, exc_info=True)

    def _answered_already(self, job: QueryJob) -> QueryOutcome:
        """A keyed job whose answer a reply already holds: this reader is late (a replica
        whose lease on the run lapsed, a kill after the reply was stored): the run is
        answered, and what is made of this outcome is refused with the lease."""
        ref = uuid.uuid4().hex[:8]
        log.info("query %s (ref %s): already answered in a reply", job.key, ref)
        return failed_outcome(
            "AlreadyAnswered", f"This query was already answered (reference {ref}).", ref
        )

    def _taken(self, key: str, ok: bool) -> None:
        """On the Celery thread: the outcome of the job named ``key`` is taken. An answer
        stays findable, its name and its record in Redis, for ``keep_taken_s``: another
        reader of the same run takes it too. That is a replica taking over the run of one
        whose lease lapsed while it still polled (a webhook replica stalled), or this
        process resumed after a kill before the answer was stored. Before, the first reader
        deleted it: the other found nothing, or the job running and never its answer, and
        sent it again; computed twice, one answer sent. Stored in its reply, it goes at once
        (``answered``); never stored (the bot killed meanwhile), it goes once no reader can
        still resume the run (before: 10 minutes, a CSV of megabytes included). A failure is
        forgotten at once: Run pressed again on the plan given back computes it afresh,
        never reads the same failure."""
        backend = self._app.backend
        client = backend.client
        name = sent_key(key)
        raw = client.get(name)
        if ok:
            if raw is None or raw == ANSWERED:
                return
            keep_ms = int(self.keep_taken_s * 1000)
            client.pexpire(name, keep_ms)
            # Its worker set the results' 10 minutes: shortened, or made longer for a model
            # whose turn takes longer (``bot_run.answer_turn_s``).
            client.pexpire(backend.get_key_for_task(raw.decode()), keep_ms)
            return
        if raw == ANSWERED:  # a late reader's failure: the answer stored stays answered
            return
        client.delete(name)
        if raw is not None:
            self._app.backend.forget(raw.decode())

    async def _send_and_wait(self, job: QueryJob) -> QueryOutcome:
        loop = asyncio.get_running_loop()
        # Named before it is sent, so that a job given up on while Redis is slow to take it
        # is revoked too (``_revoke``).
        task_id = str(uuid.uuid4())
        try:
            await loop.run_in_executor(self._celery, self._send, job, task_id)
        except asyncio.CancelledError:
            self._revoke(task_id)
            raise
        except Exception as exc:  # Redis unreachable, connection refused…
            return self._failed(job, exc, "could not be sent to a worker")
        outcome = await self._wait(job, task_id)
        assert outcome is not None  # only an adopted job is given up for a new send
        return outcome

    async def _wait(
        self, job: QueryJob, task_id: str, *, adopted: bool = False, started: bool = False
    ) -> QueryOutcome | None:
        """The outcome of the job sent as ``task_id``; None if it was ``adopted`` (sent by an
        earlier process of the bot) and is to be sent afresh."""
        now = time.monotonic()
        flight = _InFlight(now, job, asyncio.get_running_loop().create_future(), adopted=adopted)
        flight.started = now if started else None
        self._in_flight[task_id] = flight
        if self._poller is None or self._poller.done():
            self._poller = asyncio.create_task(self._poll_while_in_flight())
        try:
            return await self._outcome(job, task_id, flight)
        except asyncio.CancelledError:
            self._revoke(task_id)
            raise
        finally:
            self._in_flight.pop(task_id, None)

    def _find_sent(self, job: QueryJob) -> _Sent | None:
        """On the Celery thread: the job ``job.key`` names, as an earlier process of the bot
        sent it, if Redis still holds it waiting (in its queue, or taken by a worker that
        has not started it), running, or answered; None to send it afresh: never sent,
        revoked (a shutdown's revoke, or expired in its queue), answered and gone since (a
        failure taken, or an answer past ``RESULT_EXPIRES_S``: its claim done, its result
        deleted), or lost with Redis's data.

        An answer is taken whatever it says, a time limit or a failure included: computed
        again, it would most likely say the same, after a worker's whole time limit."""
        assert job.key is not None
        backend = self._app.backend
        client = backend.client
        raw = client.get(sent_key(job.key))
        if raw is None:
            return None
        if raw == ANSWERED:
            return _Sent(None, None, started=True)
        task_id = raw.decode()
        value = client.get(backend.get_key_for_task(task_id))
        if value is not None:
            meta = backend.decode_result(value)
            state, result = meta["status"], meta["result"]
            if state in READY_STATES and state != REVOKED:
                return _Sent(task_id, (state, result), started=True)  # ``_taken`` frees it
            return _Sent(task_id, None, started=True) if state == STARTED else None
        claim = client.get(claim_key(task_id))
        if claim is not None:  # running (its STARTED on its way), or done and read
            if claim.startswith(b"running"):
                return _Sent(task_id, None, started=True)
            # Done and its answer gone: read, or let go as this was read (``answered``).
            answered = client.get(sent_key(job.key)) == ANSWERED
            return _Sent(None, None, started=True) if answered else None
        needle = task_id.encode()
        waiting = client.lrange(queue_name(job.instrument), 0, -1) + client.hvals(_UNACKED_KEY)
        if any(needle in message for message in waiting):
            return _Sent(task_id, None, started=False)
        return None

    def _revoke(self, task_id: str) -> None:
        """A job given up on (a shutdown, /cancel, a plan that waited ``check_wait_s`` for
        its check) must not run for nobody: revoked, not stopped, on the Celery thread, after
        its send if that is still under way. A worker that has not taken it drops it; one
        that has finishes it (a check is cheap once started), and that late answer is never
        read: the poller reads only the jobs in flight."""
        self._celery.submit(self._app.control.revoke, task_id)

    def _wait_s(self, job: QueryJob) -> float:
        """How long ``job`` may wait for a worker to take it: a check no longer than its
        plan waits for it (``check_wait_s``), a run ``queue_wait_s``."""
        if job.check_only and self.check_wait_s is not None:
            return min(self.check_wait_s, self.queue_wait_s)
        return self.queue_wait_s

    def _send(self, job: QueryJob, task_id: str, expires: float | None = None) -> None:
        self._keep_mark()  # before the job: a restart after it is seen by the mark's absence
        if job.key is not None:  # before the job: a kill between the two finds nothing sent
            self._app.backend.client.set(sent_key(job.key), task_id, ex=_SENT_TTL_S)
        # The worker leaves out a chart that would take the job past its limit.
        job = job.model_copy(update={"time_limit_s": job.time_limit_s or self.timeout_s})
        self._app.send_task(
            TASK_NAME,
            args=(job.model_dump(mode="json"),),
            task_id=task_id,
            # The worker sees by it that a late run's answer is not wanted (``late_answer``).
            headers={RUN_KEY_HEADER: job.key} if job.key is not None else None,
            queue=queue_name(job.instrument),
            soft_time_limit=self.timeout_s,
            time_limit=hard_limit(self.timeout_s),
            # Not run at all once nobody waits for it: the person told that no worker took
            # it, or the plan shown without its check. The revoke sent then (``_revoke``)
            # reaches only the workers connected at that moment; with Redis away 18 s, a
            # check given up at 15 s ran again on another worker once Redis was back.
            expires=expires if expires is not None else self._wait_s(job),
        )

    def _keep_mark(self) -> None:
        """On the Celery thread: set this runner's mark in Redis if it is not there. Not
        there once it was set (and has not expired: every poll renews it) means Redis lost
        its data since: restarted without persistence, or flushed; the jobs that waited in
        their queues went with it."""
        client = self._app.backend.client
        pipe = client.pipeline(transaction=False)
        pipe.set(self._mark, 1, nx=True, ex=_MARK_TTL_S)
        pipe.expire(self._mark, _MARK_TTL_S)
        newly_set, _ = pipe.execute()
        if newly_set and self._marked:
            self._loss = _Loss(time.monotonic(), self._workers)
            self._workers = None  # those of the lost Redis: read again in the new one
        self._marked = True
        if self._loss is None:
            self._note_workers()

    def _note_workers(self) -> None:
        """On the Celery thread, at a send and at the poller's reads: which workers are live,
        read again once a beat at most. Should Redis lose its data, the jobs no worker was
        seen running wait for these workers' beats in the new Redis (``_send_lost_again``)."""
        now = time.monotonic()
        if self._workers is not None and now - self._workers_read_at < worker_registry.HEARTBEAT_S:
            return
        try:
            self._workers = frozenset(worker_registry.running_jobs(self._app.backend.client))
        except redis.RedisError:  # unknown this time: the last read stands
            return
        self._workers_read_at = now

    async def _send_lost_again(self, loss: _Loss) -> None:
        """After Redis lost its data (found at ``loss.at``), send again, in the order first
        sent, each job sent before that no worker runs and none has answered in the new
        Redis: it waited in its queue, which is gone (its person would have waited the
        whole ``queue_wait_s`` to be told so), or its answer was stored in the Redis that
        went, in the moment before the poller read it (the person read the worker-failure
        sentence at the job's deadline, the answer computed). The same task id: a copy a
        worker still holds is dropped by its claim, so the job runs once more at most.

        Not a job a worker still runs: its claim went with Redis, and a copy sent at once
        (taken in the poller's last 50 ms before the restart, not yet seen as started) was
        computed a second time on another process. Each worker names the jobs its
        processes run with its beat (``WorkerBeat.running``); the beats of the new Redis
        are read every beat while a job is still run or a worker it may be on has not
        beaten yet (``_lost_verdict``): one whose worker goes (or whose answer was stored
        just before the restart, as its worker beat) is sent again then. A worker that does
        not say what it runs (another release) leaves the bot as before: jobs it saw
        started are left to their deadline, the others sent again."""
        watched = {
            task_id
            for task_id, flight in self._in_flight.items()
            if flight.sent < loss.at and not flight.done.done()
        }
        loop = asyncio.get_running_loop()
        await asyncio.sleep(worker_registry.HEARTBEAT_S)
        while watched:
            try:
                beats, recorded = await loop.run_in_executor(
                    self._celery, self._read_after_loss, sorted(watched)
                )
            except Exception:  # Redis away again: read at the next beat
                log.warning("could not read the workers' jobs from Redis", exc_info=True)
                await asyncio.sleep(worker_registry.HEARTBEAT_S)
                continue
            now = time.monotonic()
            silent = now - loss.at >= _LOST_WORKER_AFTER_S  # a worker not beaten is gone
            if loss.workers is None:  # not known: every live worker has beaten by now
                settled = now - loss.at >= _LOST_JOBS_AFTER_S
            else:  # each worker of before has beaten in the new Redis, or is gone
                settled = silent or loss.workers <= beats.keys()
            for task_id in sorted(watched, key=lambda task_id: self._sent_at(task_id)):
                flight = self._in_flight.get(task_id)
                if flight is None or flight.done.done() or task_id in recorded:
                    watched.discard(task_id)  # answered, given up, or run in the new Redis
                    continue
                verdict = self._lost_verdict(flight, task_id, beats, settled=settled, silent=silent)
                if verdict is None:
                    watched.discard(task_id)  # not known: left to its deadline
                    continue
                if verdict == "wait":
                    continue
                if verdict == "running":
                    flight.started = flight.started or now  # its answer will come
                    continue
                watched.discard(task_id)
                left = flight.sent + self._wait_s(flight.job) - now
                if left <= 0:  # its person is told now that no worker took it
                    continue
                log.warning("Redis lost the job %s (restarted?): sent again", task_id)
                try:
                    await loop.run_in_executor(self._celery, self._send, flight.job, task_id, left)
                except Exception:  # Redis away again: the job's own deadline still runs
                    log.warning("could not send job %s again", task_id, exc_info=True)
            if watched:
                await asyncio.sleep(worker_registry.HEARTBEAT_S)

    def _lost_verdict(
        self,
        flight: _InFlight,
        task_id: str,
        beats: dict[str, set[str] | None],
        *,
        settled: bool,
        silent: bool,
    ) -> Literal["running", "lost", "wait"] | None:
        """After Redis lost its data, whether the job ``task_id`` still runs on a worker
        ("running": wait for its answer), is to be sent again ("lost"), is to be judged at
        the next read ("wait": a worker it may be on has not beaten yet), or is not known
        (None: left to its deadline), from the workers' beats in the new Redis.

        A job seen started on a known worker waits for that worker's own beat there (its
        client's timeouts, a loaded machine): that beat alone says whether it still runs
        the job. Before, the beats were read once 2.5 s after the loss was found, and a
        worker not beaten by then had its running job sent again and computed twice (its
        claim had gone with Redis). A worker still silent ``_LOST_WORKER_AFTER_S`` after
        the loss (``silent``) is gone, lost with Redis's machine: its job is sent again
        then (before: once its hard limit was past). A job not seen started (taken in the
        poller's last 50 ms, or waiting in its lost queue) is judged once every worker live
        before the loss has beaten or is gone (``settled``); before, by the workers beaten
        2.5 s after it, and one beating later computed it a second time. So is a job a
        worker of another release took."""
        node = flight.node
        if node is not None and flight.started is not None:
            if node not in beats:
                return "lost" if silent or self._past_its_end(flight, time.monotonic()) else "wait"
            jobs = beats[node]
            if jobs is None:
                return None
            return "running" if task_id in jobs else "lost"
        known = [jobs for jobs in beats.values() if jobs is not None]
        if any(task_id in jobs for jobs in known):
            return "running"
        if len(known) < len(beats) and flight.started is not None:
            return None
        return "lost" if settled else "wait"

    def _sent_at(self, task_id: str) -> float:
        flight = self._in_flight.get(task_id)
        return flight.sent if flight is not None else 0.0

    def _read_after_loss(self, task_ids: list[str]) -> tuple[dict[str, set[str] | None], set[str]]:
        """On the Celery thread: the jobs each live worker runs, by node (None: not known),
        then which of ``task_ids`` have a record in Redis (started or answered there). In
        that order: a job its worker no longer names has stored its answer before this
        read."""
        backend = self._app.backend
        running = worker_registry.running_jobs(backend.client)
        values = backend.mget([backend.get_key_for_task(task_id) for task_id in task_ids])
        recorded = {task_id for task_id, value in zip(task_ids, values, strict=True) if value}
        return running, recorded

    async def _outcome(self, job: QueryJob, task_id: str, flight: _InFlight) -> QueryOutcome | None:
        while True:
            done, _ = await asyncio.wait({flight.done}, timeout=POLL_S * 4)
            if done:
                state, value = flight.done.result()
                if state == _ANSWERED_STATE:
                    return self._answered_already(job)
                if flight.adopted and state == REVOKED:
                    return None  # revoked at the shutdown that ended its bot, or expired
                return self._finished(job, task_id, state, value)
            now = time.monotonic()
            if flight.adopted and (flight.worker_gone or self._past_its_end(flight, now)):
                # Its worker vanished too: a copy handed out again would have expired (sent
                # by the bot's earlier process, a queue wait ago); revoked all the same, in
                # case it has not. Or it ran past its hard limit with no answer here: read
                # and deleted by another reader (a replica whose lease on the run lapsed
                # while it still polled), never to come.
                self._revoke(task_id)
                return None
            if flight.started is None and now - flight.sent > self._wait_s(job):
                self._celery.submit(self._app.control.revoke, task_id)
                ref = self._log_ref(job, "was taken by no worker")
                return failed_outcome(
                    "WorkerDied",
                    f"No query worker took the query within {self._wait_s(job):.0f} seconds "
                    f"(reference {ref}); please try again in a minute.",
                    ref,
                )
            if flight.started is not None and now > self._lost_after(job, flight):
                return self._failed(job, None, "lost its worker (no answer past the hard limit)")
            if job.check_only and flight.worker_gone:
                # Its worker vanished mid-check (``kill -9``, a machine lost). The job would
                # go back to its queue only after the visibility timeout, past the check's
                # expiry: nobody will answer it, and the plan need not wait for it.
                return self._failed(job, None, "lost its worker (it stopped saying it is alive)")

    def _past_its_end(self, flight: _InFlight, now: float) -> bool:
        """Whether a job seen running since ``flight.started`` would have answered by
        ``now`` on a live worker."""
        if flight.started is None:
            return False
        return now > flight.started + hard_limit(self.timeout_s) + _DEAD_WORKER_MARGIN_S

    def _lost_after(self, job: QueryJob, flight: _InFlight) -> float:
        """When a job taken by a worker is given up. A live worker ends it within the hard
        limit; a job whose worker vanished is taken again from its queue by another worker,
        which can happen until the job expires (``_wait_s`` after it was sent); and that
        worker ends it within the hard limit in turn."""
        assert flight.started is not None
        dead_after_s = hard_limit(self.timeout_s) + _DEAD_WORKER_MARGIN_S
        return max(flight.started, flight.sent + self._wait_s(job)) + dead_after_s

    async def _poll_while_in_flight(self) -> None:
        loop = asyncio.get_running_loop()
        while self._in_flight:
            ids = list(self._in_flight)
            named = {
                task_id: key
                for task_id in ids
                if (key := self._in_flight[task_id].job.key) is not None
            }
            loss = None
            asked = time.monotonic()
            try:
                states, loss = await loop.run_in_executor(
                    self._celery, self._read_states, ids, named
                )
            except Exception:  # Redis away for a moment: the jobs' own deadlines still run
                log.warning("could not read query states from Redis", exc_info=True)
                states = {}
                self._troubled_at = time.monotonic()
            if time.monotonic() - asked > _SLOW_READ_S or loss is not None:
                self._troubled_at = time.monotonic()
            if loss is not None:  # its own task: the answers read meanwhile go on
                recovery = asyncio.create_task(self._send_lost_again(loss))
                self._recoveries.add(recovery)
                recovery.add_done_callback(self._recoveries.discard)
            now = time.monotonic()
            for task_id, (state, value) in states.items():
                flight = self._in_flight.get(task_id)
                if flight is None or flight.done.done():
                    continue
                if state in READY_STATES or state == _ANSWERED_STATE:
                    flight.done.set_result((state, value))
                    continue
                if flight.started is None:
                    flight.started = now
                if isinstance(value, dict) and value.get("node"):
                    flight.node = str(value["node"])
                alive = value.get("alive") if isinstance(value, dict) else None
                if alive is True:
                    flight.absent_since = None
                elif alive is False and flight.absent_since is None:
                    flight.absent_since = now
                flight.worker_gone = self._gone(flight, now)
            await asyncio.sleep(POLL_S)

    def _gone(self, flight: _InFlight, now: float) -> bool:
        """Whether the worker running ``flight`` is gone: out of the registry, and either
        Redis has answered well for ``_GONE_AFTER_S`` (its entry's moment passed without a
        beat: killed, its machine lost) or it has stayed out that long."""
        absent = flight.absent_since
        if absent is None:
            return False
        troubled = self._troubled_at
        calm = troubled is None or now - troubled >= _GONE_AFTER_S
        return calm or now - absent >= _GONE_AFTER_S

    def _read_states(
        self,
        task_ids: list[str],
        named: dict[str, str],
    ) -> tuple[dict[str, tuple[str, Any]], _Loss | None]:
        """On the Celery thread: the state and value of each job Redis has a record of
        (none while it waits in its queue; ``STARTED`` once a worker took it), and the loss
        of Redis's data, if it was found since the last read (``_keep_mark``,
        here or at a send: both on this thread). The answers of jobs with a name
        (``named``: their ``QueryJob.key`` by task id) stay for another reader of the run
        (``_taken``); one with no record whose name says it was answered elsewhere
        (``answered``) is given ``_ANSWERED_STATE``: before, it waited past its hard limit
        for an answer gone, and ended as a worker lost."""
        backend = self._app.backend
        self._keep_mark()
        values = backend.mget([backend.get_key_for_task(task_id) for task_id in task_ids])
        states = {}
        for task_id, value in zip(task_ids, values, strict=True):
            if value is not None:
                meta = backend.decode_result(value)
                states[task_id] = (meta["status"], meta["result"])
        unrecorded = [task_id for task_id in named if task_id not in states]
        if unrecorded:
            marks = backend.client.mget([sent_key(named[task_id]) for task_id in unrecorded])
            for task_id, mark in zip(unrecorded, marks, strict=True):
                if mark == ANSWERED:
                    states[task_id] = (_ANSWERED_STATE, None)
        ready = [
            task_id
            for task_id, (state, _) in states.items()
            if state in READY_STATES and not (state == SUCCESS and task_id in named)
        ]
        for task_id in ready:  # read once: free Redis now, not at expiry
            backend.forget(task_id)
        self._read_heartbeats(states)
        # Taken last: a read that failed leaves it for the next.
        loss, self._loss = self._loss, None
        return states, loss

    def _read_heartbeats(self, states: dict[str, tuple[str, Any]]) -> None:
        """Marks each job a worker runs with whether that worker is still in the registry
        (``"alive"`` in its STARTED record, ``worker_registry.alive``). A worker of a release
        before the registry names no node, and is not judged."""
        running = [
            value
            for state, value in states.values()
            if state == STARTED and isinstance(value, dict) and value.get("node")
        ]
        if not running:
            return
        nodes = [str(value["node"]) for value in running]
        try:
            alive = worker_registry.alive(self._app.backend.client, nodes)
        except redis.RedisError:  # unknown this tick: not judged (the results read stay)
            self._troubled_at = time.monotonic()
            return
        for value, up in zip(running, alive, strict=True):
            value["alive"] = up

    def _finished(self, job: QueryJob, task_id: str, state: str, value: Any) -> QueryOutcome:
        if state == SUCCESS:
            try:
                return QueryOutcome.model_validate(value)
            except ValidationError as exc:  # a worker of another release, most likely
                return self._failed(job, exc, "answered in a shape this bot cannot read")
        if isinstance(value, TimeLimitExceeded):
            log.warning("query over the hard limit, its worker child replaced: %r", job.query)
            return timeout_outcome(self.timeout_s)
        if isinstance(value, WorkerLostError) and "SIGKILL" in str(value):
            # "Worker exited prematurely: signal 9 (SIGKILL)": the kernel's OOM killer,
            # most likely (the hard time limit is TimeLimitExceeded, above).
            return killed_outcome(self._log_ref(job, "had its worker child killed", value))
        # WorkerLostError (the child died: a segfault), revoked, or a bug.
        return self._failed(job, value, f"ended in its worker as {state}")

    def _failed(self, job: QueryJob, exc: Any, what: str) -> QueryOutcome:
        ref = self._log_ref(job, what, exc)
        return failed_outcome(
            "WorkerDied",
            f"The query could not be run (reference {ref}); other queries are not affected.",
            ref,
        )

    @staticmethod
    def _log_ref(job: QueryJob, what: str, exc: Any = None) -> str:
        ref = uuid.uuid4().hex[:8]
        exc_info = exc if isinstance(exc, BaseException) else None
        log.error("query %s (ref %s): %r", what, ref, job.query, exc_info=exc_info)
        return ref

    async def close(self) -> None:
        self._closing.set()
        if self._meta_reader is not None:
            # Its read ends within its short timeouts; cancelled only if it does not.
            await asyncio.wait([self._meta_reader], timeout=5)
        tasks = [t for t in (self._poller, self._meta_reader, *self._recoveries) if t is not None]
        for task in tasks:
            task.cancel()
        # Waited for before the client closes: a task cancelled in a Redis call but not yet
        # ended could open a connection after aclose(), left unclosed (seen in CI).
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        await asyncio.get_running_loop().run_in_executor(self._celery, self._app.close)
        await self._meta_client.aclose()
        self._celery.shutdown(wait=False, cancel_futures=True)
