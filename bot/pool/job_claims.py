"""One run per query job on the workers, however often Redis hands the job out.

A job is acknowledged when it is done (``acks_late``), so that a worker lost mid-query
leaves it to another. The price is that Redis may deliver a job again while it runs: a
worker whose connection to Redis drops (Redis restarted, a network blip) puts the jobs it
had taken back in their queue as soon as it reconnects (kombu's ``restore_unacked``), though
its processes are still computing them, and a worker whose acknowledgement was lost has its
finished job handed out again. Computed twice, a heavy query doubles the load just when it
hurts, and pushes queries past their time limit.

So each run first claims its job in Redis (``SET NX``, key ``barb.claim.<task id>``, value
``running <worker> <pid>``: the worker and the process that runs it):

- the claim holds while the job runs, and expires shortly after the job's hard time limit,
  before the visibility timeout gives the job of a worker that vanished to another worker,
  which then finds it free and runs it;
- a finished job's claim says so and stays as long as its result may be read;
- a copy that finds the job claimed, running or finished, is acknowledged and dropped at
  once without a state of its own (Celery's ``Ignore``): the caller reads the one result of
  the run that holds the claim, and the copy holds no worker process meanwhile;
- only the run that holds the claim, or a delivery of a job nobody has claimed, records a
  failure or a revocation (``may_record``): a copy past the job's expiry, or one whose
  process dies, never marks a job that another run computes as failed;
- a worker stopped at once (SIGQUIT) gives up the claims of the jobs it stops
  (``release_claim``) before it hands them back to their queue, so that they run again.

Example: a job taken by worker A's process 812 at 10:00:00 with a 22 s hard limit holds
``barb.claim.4f1c… = "running barb-NQ-7@a 812"`` until 10:00:23 at the latest; Redis
restarts at 10:00:05 and worker B receives the job again at 10:00:06: B drops its copy at
once and takes the next job; A answers at 10:00:09 and sets the claim to ``done``.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

CLAIM_PREFIX = "barb.claim."
#: Past the job's hard limit, how long the claim of a running job holds: the time its worker
#: takes to record a child killed at that limit. Less than the visibility timeout's margin
#: (``queue_app.REDELIVERY_MARGIN_S``), so a vanished worker's claim is gone before its job
#: is handed out again.
CLAIM_MARGIN_S = 1.0
_DONE = "done"

# Compare-and-set in one step: a run changes the claim only while it holds it (another run
# may hold it once it expired, or a stopping worker released it); finishing, also once it
# expired with nobody holding it since (a Redis outage longer than the claim, the run's end
# waiting for Redis to come back).
_IF_HELD_OR_FREE_SET = """
local claim = redis.call('GET', KEYS[1])
if claim == ARGV[1] or not claim then
    return redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3]) and 1
end
return 0
"""
_IF_HELD_DELETE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0
"""


def claim_key(task_id: str) -> str:
    return f"{CLAIM_PREFIX}{task_id}"


def holder(worker: str, pid: int | None) -> str:
    """The claim of a run in process ``pid`` of ``worker`` (its Celery node name)."""
    return f"running {worker} {pid}"


def take_claim(backend: Any, task_id: str, holder: str, hard_limit_s: float) -> bool:
    """Claim the job ``task_id`` for the run ``holder``: True once it holds it, False if
    another run holds it or has finished it (the copy is to be dropped). ``backend`` is
    Celery's Redis result backend: its connection, and its retries while Redis is away, as
    for results."""
    key = claim_key(task_id)
    ttl_ms = int((hard_limit_s + CLAIM_MARGIN_S) * 1000)

    def take() -> bool:
        return bool(backend.client.set(key, holder, nx=True, px=ttl_ms))

    while not backend.ensure(take, ()):
        state = _read(backend, key)
        if state is not None:  # else it expired between the two calls: take it now
            log.warning("query job %s delivered again, %s: copy dropped", task_id, state)
            return False
    return True


def finish_claim(backend: Any, task_id: str, holder: str, keep_s: float) -> bool:
    """Mark the job ``task_id`` finished for ``keep_s`` seconds (as long as its result may be
    read), if the run ``holder`` holds it, or its claim expired and nobody took it since: a
    copy of it still on its way is dropped.

    The second case is a Redis outage longer than the claim: the run ended while Redis was
    away, and its claim had expired by the time Redis was back (Redis counts a key's expiry
    in wall-clock time, down or not). Left unfinished, the copy that Redis hands out again
    (the run's worker reconnecting, or the visibility timeout) found the claim free and
    computed the job a second time."""

    def finish() -> bool:
        done = backend.client.eval(
            _IF_HELD_OR_FREE_SET, 1, claim_key(task_id), holder, _DONE, int(keep_s)
        )
        return bool(done)

    return bool(backend.ensure(finish, ()))


def release_claim(backend: Any, task_id: str, holder: str) -> bool:
    """Give up the run ``holder``'s claim on ``task_id``, stopped before its end: the job's
    next delivery runs it."""

    def release() -> bool:
        return bool(backend.client.eval(_IF_HELD_DELETE, 1, claim_key(task_id), holder))

    return bool(backend.ensure(release, ()))


def may_record(backend: Any, task_id: str, holder: str) -> bool:
    """Whether the run ``holder`` may record how the job ``task_id`` ended without an answer
    (failed, revoked, expired): if it holds the job, or no run has claimed it. Not a copy
    of a job another run computes or has answered: its state is that run's."""
    state = _read(backend, claim_key(task_id))
    return state is None or state == holder


def _read(backend: Any, key: str) -> str | None:
    value = backend.ensure(backend.client.get, (key,))
    return value.decode() if isinstance(value, bytes) else value
