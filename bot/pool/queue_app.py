"""The Celery application shared by the bot (which sends query jobs) and ``barb worker``.

One task, ``barb.query``: a ``QueryJob`` in, a ``QueryOutcome`` out, both as JSON
(``model_dump(mode="json")``; the chart PNG and the CSV travel as base64 in it, so a worker
may sit on another machine than the bot: nothing but Redis is shared). Pickle is refused in
both directions. Each instrument has its own queue (``barb.NQ``), so a worker warms and
serves only the instruments it was started for.

Time limits come with each job from the bot (its ``BARB_QUERY_TIMEOUT_S``): past the soft
limit the task stops and answers with the timeout sentence; a query stuck where the soft
limit cannot reach it (inside C code) has its child process killed at the hard limit, and
Celery starts another.

Each job runs once however often Redis delivers it (``job_claims``): a copy of a job that
another run holds or has finished is dropped at once, and records no state of its own.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import uuid
from collections.abc import Callable
from typing import Any

import redis
from billiard.einfo import ExceptionInfo, ExceptionWithTraceback
from billiard.pool import SIG_SOFT_TIMEOUT
from celery import Celery, Task
from celery.backends.redis import RedisBackend
from celery.exceptions import Ignore, SoftTimeLimitExceeded
from celery.states import STARTED, SUCCESS
from celery.worker.request import Request
from pydantic import ValidationError

from barb.errors import stops_from_outside
from bot.pool.job_claims import finish_claim, holder, may_record, release_claim, take_claim
from bot.pool.jobs import (
    QueryJob,
    QueryOutcome,
    failed_outcome,
    run_query_job,
    timeout_outcome,
    worker_spent,
)

log = logging.getLogger(__name__)

# Celery's soft time limit is raised by a signal handler wherever the child is, most often
# deep in the engine, whose catch-all for Barb's own bugs answered it with "Internal error
# while running the query (reference …)": a query error the model was asked to correct,
# where the limit has its own sentence (``run_job_json``) and ends the question.
stops_from_outside(SoftTimeLimitExceeded)

TASK_NAME = "barb.query"
QUEUE_PREFIX = "barb."
#: Added to the soft limit for the hard one: time for a stopped query to build its answer.
HARD_LIMIT_GRACE_S = 2.0
#: Results nobody fetched (the bot gave up or stopped) are dropped by Redis after this.
RESULT_EXPIRES_S = 600
#: For a job with a key (``QueryJob.key``, a confirmed plan's run), the task id it was last
#: sent under (``barb.sent.<key>``), kept as long as the bot resumes work (a day): the run
#: resumed after a kill of the bot finds its job by it (``celery_runner._find_sent``).
SENT_PREFIX = "barb.sent."
#: What ``barb.sent.<key>`` says once the job's answer is stored in a reply for its person
#: (``CeleryRunner.answered``): the answer itself is deleted then, a CSV of megabytes
#: included; a late reader of the run finds this instead of computing the job again, and a
#: late run of it deletes its own answer (``_QueryTask.after_return``).
ANSWERED = b"answered"
#: The header a keyed job is sent with: its key, for the worker to read that mark.
RUN_KEY_HEADER = "barb_run_key"


def sent_key(key: str) -> str:
    """The record of the keyed job ``key``: ``barb.sent.q-1.call_1.0123…``."""
    return f"{SENT_PREFIX}{key}"


#: Past the hard limit, how long a job taken by a worker stays unacknowledged before Redis
#: gives it to another worker: a live worker has finished (or failed) it by then.
REDELIVERY_MARGIN_S = 3.0
# Each ``barb worker`` says it is alive in ``worker_registry`` (its node name, scored with
# when it counts as gone): the bot knows a check whose worker vanished (``kill -9``, a
# machine lost) from its absence there, instead of waiting out the plan's whole wait for it
# (``celery_runner``).

#: What each worker says of the data it serves: the ``DataMeta`` of each of its
#: instruments (first and last date, rows), set with its heartbeat, for the bot, which
#: holds no data of its own on another machine yet counts relative periods from the data's
#: last day ("last_10_days", the model's "today"). Expires once no worker says it.
DATA_META_PREFIX = "barb.data."
DATA_META_TTL_S = 10.0


def data_meta_key(symbol: str) -> str:
    """The key of the data the workers serve for ``symbol``: ``barb.data.NQ``."""
    return f"{DATA_META_PREFIX}{symbol.upper()}"


class PolledRedisBackend(RedisBackend):
    """Celery's Redis result backend without the subscription made for each job sent.

    Celery subscribes the sender to a job's result channel so that ``AsyncResult.get`` wakes
    up at once; Barb reads results by polling instead, and unread subscriptions would pile up
    replies on a connection nobody reads.
    """

    def on_task_call(self, producer: Any, task_id: str) -> None:
        return None


def queue_name(instrument: str) -> str:
    """The queue of one instrument's jobs: ``barb.NQ``."""
    return f"{QUEUE_PREFIX}{instrument.upper()}"


def hard_limit(timeout_s: float) -> float:
    return timeout_s + HARD_LIMIT_GRACE_S


def visibility_timeout(timeout_s: float) -> float:
    """How long a job taken by a worker may stay unacknowledged before it goes back to its
    queue: longer than any job may run on a live worker, so only the job of a worker that
    vanished (``kill -9``, a machine lost) is run again, by another worker."""
    return hard_limit(timeout_s) + REDELIVERY_MARGIN_S


#: How the main process stops a child's query at a cold shutdown (SIGQUIT): the children
#: ignore SIGTERM, Celery's signal for it (``queue_worker._leave_sigterm_to_parent``), and
#: end on this one the same way (billiard's handler: ``SystemExit``, ``finally`` blocks run).
CHILD_STOP_SIGNAL = "SIGQUIT"

#: The status of a child that ended after its answer because it ran out of memory (the same
#: as the bot's own pool's, ``runner.OUT_OF_MEMORY_EXIT``).
RETIRED_EXIT = 86


def _retires(outcome: Any) -> bool:
    """Whether the child that answered ``outcome`` (a ``QueryOutcome`` as JSON) ends after
    it: its query ran out of memory, or its chart did (``jobs.worker_spent``)."""
    error = outcome.get("error") if isinstance(outcome, dict) else None
    return (error or {}).get("error_type") == "OutOfMemory" or worker_spent()


class _QueryRequest(Request):
    """A delivery of a query job, as the worker's main process handles it: what it records
    when the job ends without an answer (expired, revoked, killed at the hard limit, its
    process lost) is the job's state only if this delivery's run holds the job, or no run
    has claimed it (``job_claims.may_record``).

    A copy of a running job, handed out again after the job's expiry (``expires``, the
    bot's queue wait), was otherwise marked revoked before the task ran, over the first
    run's STARTED or its answer not yet read, and the bot told the person that the query
    failed while it computed.

    A child that ran out of memory stores its answer, then ends on purpose
    (``_QueryTask.after_return``): billiard reports the job's own SystemExit as its result
    and ends the child, and ``on_failure`` takes that for what it is, the job done
    (acknowledged, no failure recorded), where Celery would count the job lost with its
    worker and look its result up again in Redis, which the bot may have read and deleted.
    """

    #: Stopped by a cold shutdown and handed back to its queue: it ends elsewhere.
    handed_back = False

    @property
    def store_errors(self) -> bool:
        if self.handed_back or not super().store_errors:
            return False
        return may_record(self.task.backend, self.id, self.claim)

    @property
    def claim(self) -> str:
        """Its claim's value while its process (none yet: ``None``) runs it."""
        return holder(self.hostname, self.worker_pid)

    def cancel(self, pool: Any, signal: Any = None, emit_retry: bool = True) -> None:
        # A cold shutdown (SIGQUIT) stops the job and hands it back to its queue: its next
        # delivery, at once on another worker, runs it instead of dropping it as a copy.
        self.handed_back = True
        super().cancel(pool, signal or CHILD_STOP_SIGNAL, emit_retry)
        release_claim(self.task.backend, self.id, self.claim)

    def on_failure(
        self, exc_info: ExceptionInfo, send_failed_event: bool = True, return_ok: bool = False
    ) -> None:
        exc = exc_info.exception
        if isinstance(exc, ExceptionWithTraceback):
            exc = exc.exc
        if isinstance(exc, SystemExit) and exc.code == RETIRED_EXIT:
            self.on_success((False, None, 0.0))
            return
        super().on_failure(exc_info, send_failed_event, return_ok)
        if not self.handed_back:
            # Killed at the hard limit (``TimeLimitExceeded``: billiard reports it here
            # before ``on_timeout``), or its process died mid-run (the OOM killer's
            # SIGKILL, ``WorkerLostError``), recorded as failed just above: a copy on its
            # way must not run again the query the person was told about, or that was just
            # killed for its memory. Only the run holding the claim finishes it; a job a
            # cold shutdown stopped was handed back (``cancel``) and runs elsewhere.
            finish_claim(self.task.backend, self.id, self.claim, RESULT_EXPIRES_S)


class _QueryTask(Task):
    Request = _QueryRequest

    def after_return(
        self, status: str, retval: Any, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        # In the child, once the outcome is stored (``mark_as_done``). A child whose query or
        # chart ran out of memory ends here: the arrays it grew are freed, but a heap
        # fragmented around them can keep their pages, and the next query should find a
        # process at its start; the worker forks a fresh one, warm. (Run eagerly, in the
        # caller's own process, there is no child to end.)
        if not self.request.is_eager:
            _let_late_answer_go(self, task_id)
        if status == SUCCESS and not self.request.is_eager and _retires(retval):
            log.warning("query process ran out of memory: replaced after its answer")
            raise SystemExit(RETIRED_EXIT)


def _let_late_answer_go(task: Task, task_id: str) -> None:
    """In the child, once this run's outcome is stored under ``task_id``: deleted again if
    its run is answered already (its key's record says ``ANSWERED``). That is a copy that
    ended after another copy's answer was stored in the reply and let go (a live worker
    stalled through a Redis restart: the bot sent the job again). Before, it sat unread in
    Redis for ``RESULT_EXPIRES_S``, its CSV and chart with it. Checked after the store, not
    before: a reply stored between the two finds this answer under the task id and deletes
    it itself."""
    key = getattr(task.request, RUN_KEY_HEADER, None)
    if not key:
        return
    backend = task.backend
    try:
        if backend.client.get(sent_key(key)) != ANSWERED:
            return
        backend.client.delete(backend.get_key_for_task(task_id))
    except redis.RedisError:  # it expires on its own (RESULT_EXPIRES_S)
        log.warning("query job %s: could not check whether its run is answered", task_id)
        return
    log.warning("query job %s ended after its run's answer was given: its answer deleted", task_id)


def make_queue_app(url: str, *, work: Callable[[QueryJob], QueryOutcome] = run_query_job) -> Celery:
    """A Celery app on Redis at ``url`` (broker and results), JSON only.

    ``work`` runs one job in the worker; tests pass one that misbehaves on request.
    """
    # Results are read by the bot's poller (one MGET for every job in flight): the backend
    # must not subscribe to a channel per job that nobody reads.
    backend = f"{PolledRedisBackend.__module__}:{PolledRedisBackend.__qualname__}+{url}"
    app = Celery("barb", broker=url, backend=backend, set_as_current=False)
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        result_accept_content=["json"],
        # A job is acknowledged when it is done, not when taken: a worker that dies with
        # jobs it had taken leaves them in Redis, and they go back to their queue after the
        # visibility timeout (set by ``barb worker``). A job whose child process died is
        # failed (WorkerLostError), not redelivered: a query that kills its worker would
        # otherwise kill every worker in turn.
        task_acks_late=True,
        task_reject_on_worker_lost=False,
        # A worker that loses Redis lets the jobs it runs finish and answer; the copies Redis
        # hands out again are dropped (``job_claims``). Stopped (as Celery 6 will by
        # default), each would be recorded as revoked: the person told that the query
        # failed, and the copy left to compute it for nobody.
        worker_cancel_long_running_tasks_on_connection_loss=False,
        # A worker reserves only what it runs now: a long query does not hold others back
        # while another worker is free.
        worker_prefetch_multiplier=1,
        # The bot sees that a worker took the job, and so knows how long it may still take:
        # recorded by the task itself once it holds the job's claim (``_query``), so that a
        # copy it drops never hides the state or the result of the run that holds it.
        task_track_started=False,
        result_expires=RESULT_EXPIRES_S,
        task_default_queue=queue_name("default"),
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
    )

    # Not shared: a task of this app alone (the tests make several apps in one process).
    @app.task(name=TASK_NAME, bind=True, base=_QueryTask, shared=False)
    def query(task: Task, job: dict[str, Any]) -> dict[str, Any]:
        return _query(task, job, work)

    return app


def _query(
    task: Task, payload: dict[str, Any], work: Callable[[QueryJob], QueryOutcome]
) -> dict[str, Any]:
    """One delivery of a job: run it, unless another delivery holds it or has run it."""
    request = task.request
    _soft_limit(armed=True)
    run = holder(request.hostname, os.getpid())
    if not take_claim(task.backend, request.id, run, _hard_limit_s(task)):
        raise Ignore()  # acknowledged, no state stored: the other run's result is the answer
    started = {
        "pid": os.getpid(),
        "hostname": request.hostname,
        # Looked up in ``worker_registry`` by the bot while it waits for the answer: the
        # hostname again, under a name that says this worker beats there (a worker of the
        # release before the registry names the hostname alone, and is not judged).
        "node": request.hostname,
    }
    task.update_state(state=STARTED, meta=started)

    def answered(job: QueryJob) -> QueryOutcome:
        outcome = work(job)
        # The answer is in hand: from here the soft limit could only lose it. Raised while
        # Celery stores the result (outside this body), it was recorded as the job's
        # failure, and the person read "failure on my side" for an answer computed in time.
        # The hard limit still stops a store that hangs.
        _soft_limit(armed=False)
        return outcome

    outcome = run_job_json(payload, answered)
    _soft_limit(armed=False)  # the job raised, or the limit fired just before it was held
    _finish(task, run)
    return outcome


#: billiard's handler of the soft limit's signal in this process, while it is held off.
_held_soft_limit: list[Any] = []


def _soft_limit(*, armed: bool) -> None:
    """Hold the soft limit off (its signal ignored: a signal that comes then is lost, not
    kept for the next job) from a job's answer to the start of the next job, in a worker's
    child; a job run eagerly, in a caller's thread, leaves its signals alone."""
    if SIG_SOFT_TIMEOUT is None or threading.current_thread() is not threading.main_thread():
        return
    if not armed and not _held_soft_limit:
        _held_soft_limit.append(signal.signal(SIG_SOFT_TIMEOUT, signal.SIG_IGN))
    elif armed and _held_soft_limit:
        signal.signal(SIG_SOFT_TIMEOUT, _held_soft_limit.pop())


def _finish(task: Task, run: str) -> None:
    """Mark the job answered, whatever happens meanwhile: its answer goes back in any case.

    While Redis is away, finishing waits for it (the backend's retries), and the job's soft
    limit can fire then (in a worker that reconnects, late): once, so finishing is tried
    again. Interrupted, the job's claim was left to expire, and the copy Redis hands out
    after an outage computed the job a second time."""
    for _ in range(2):
        try:
            finish_claim(task.backend, task.request.id, run, RESULT_EXPIRES_S)
            return
        except SoftTimeLimitExceeded:
            continue
        except Exception:  # Redis away past the backend's retries
            break
    log.warning("query job %s answered, its claim not finished (Redis away)", task.request.id)


def _hard_limit_s(task: Task) -> float:
    """The longest this job may run here: its own hard limit (sent by the bot) or, if
    shorter, this worker's, which its visibility timeout is measured from."""
    limits = [task.request.timelimit[0] if task.request.timelimit else None]
    limits.append(task.app.conf.task_time_limit)
    return min((float(limit) for limit in limits if limit), default=RESULT_EXPIRES_S)


def run_job_json(
    payload: dict[str, Any], work: Callable[[QueryJob], QueryOutcome] = run_query_job
) -> dict[str, Any]:
    """The task's body: JSON in, JSON out; a job that raises still answers with a sentence."""
    try:
        job = QueryJob.model_validate(payload)
    except ValidationError as exc:
        ref = uuid.uuid4().hex[:8]
        unknown = [
            ".".join(map(str, e["loc"])) for e in exc.errors() if e["type"] == "extra_forbidden"
        ]
        if unknown:  # the fields' names only: the values may quote the person
            log.error(
                "a query job of another release (ref %s), with fields this worker does not "
                "know: %s; deploy the bot and its workers together",
                ref,
                ", ".join(unknown),
            )
        else:
            log.error("a query job that is not a QueryJob (ref %s): %s", ref, exc)
        outcome = failed_outcome(
            "WorkerDied", f"The query could not be read by its worker (reference {ref}).", ref
        )
        return outcome.model_dump(mode="json")
    try:
        outcome = work(job)
    except SoftTimeLimitExceeded:  # in the engine too (``stops_from_outside`` above)
        outcome = timeout_outcome(_soft_limit_s())
    except Exception as exc:
        ref = uuid.uuid4().hex[:8]
        log.error("query failed in its worker (ref %s): %r", ref, job.query, exc_info=exc)
        outcome = failed_outcome(
            "WorkerDied",
            f"The query failed in its worker (reference {ref}); other queries are not affected.",
            ref,
        )
    return outcome.model_dump(mode="json")


def _soft_limit_s() -> float:
    from celery import current_task

    limit = current_task.request.timelimit[1] if current_task else None
    return float(limit or 0)
