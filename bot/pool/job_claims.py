"""One run per query job on the workers, however often Redis hands the job out.

A job is acknowledged when it is done (``acks_late``), so that a worker lost mid-query
leaves it to another. The price is that Redis may deliver a job again while it runs: a
worker whose connection to Redis drops (Redis restarted, a network blip) puts the jobs it
had taken back in their queue as soon as it reconnects (kombu's ``restore_unacked``), though
its processes are still computing them, and a worker whose acknowledgement was lost has its
finished job handed out again. Computed twice, a heavy query doubles the load just when it
hurts, and pushes queries past their time limit.

So each run first claims its job in Redis (``SET NX``, key ``barb.claim.<task id>``):

- the claim holds while the job runs, and expires shortly after the job's hard time limit,
  before the visibility timeout gives the job of a worker that vanished to another worker;
- a finished job's claim says so and stays as long as its result may be read;
- a copy that finds the job finished is acknowledged and dropped without a state of its own
  (Celery's ``Ignore``): the caller reads the one result of the run that held the claim;
- a copy that finds the job running waits, idle, until it has finished (dropped then) or its
  claim has expired (its worker died: the copy runs it). A worker stopped at once (SIGQUIT)
  hands its running jobs back the same way, and they must still run.

Example: a job taken by worker A at 10:00:00 with a 22 s hard limit holds
``barb.claim.4f1c… = "running barb-NQ-812@a"`` until 10:00:23 at the latest; Redis restarts
at 10:00:05 and worker B receives the job again at 10:00:06: B waits, A answers at 10:00:09
and sets the claim to ``done``, and B drops its copy.
"""

from __future__ import annotations

import logging
import time
from typing import Any

log = logging.getLogger(__name__)

CLAIM_PREFIX = "barb.claim."
#: Past the job's hard limit, how long the claim of a running job holds: the time its worker
#: takes to record a child killed at that limit. Less than the visibility timeout's margin
#: (``queue_app.REDELIVERY_MARGIN_S``), so a vanished worker's claim is gone before its job
#: is handed out again.
CLAIM_MARGIN_S = 1.0
_DONE = "done"
#: How often a copy waiting for the run that holds its job looks at the claim again.
_WAIT_POLL_S = 0.2


def claim_key(task_id: str) -> str:
    return f"{CLAIM_PREFIX}{task_id}"


def take_claim(backend: Any, task_id: str, holder: str, hard_limit_s: float) -> bool:
    """Claim the job ``task_id`` for this run: True once this run holds it, False if
    another run has finished it (waiting while one runs it). ``backend`` is Celery's Redis
    result backend: its connection, and its retries while Redis is away, as for results."""
    key = claim_key(task_id)
    ttl_ms = int((hard_limit_s + CLAIM_MARGIN_S) * 1000)

    def take() -> bool:
        return bool(backend.client.set(key, f"running {holder}", nx=True, px=ttl_ms))

    waiting = False
    while not backend.ensure(take, ()):
        held = backend.ensure(backend.client.get, (key,))
        state = held.decode() if isinstance(held, bytes) else held
        if state == _DONE:
            log.warning("query job %s delivered again, already done: copy dropped", task_id)
            return False
        if state is None:  # expired since: this run takes it
            continue
        if not waiting:
            waiting = True
            log.warning("query job %s delivered again, %s: waiting for it", task_id, state)
        time.sleep(_WAIT_POLL_S)
    return True


def finish_claim(backend: Any, task_id: str, keep_s: float) -> None:
    """Mark the job ``task_id`` finished for ``keep_s`` seconds (as long as its result may be
    read): a copy of it still on its way is dropped."""

    def finish() -> None:
        backend.client.set(claim_key(task_id), _DONE, ex=int(keep_s))

    backend.ensure(finish, ())
