"""Work functions for the pool's tests, importable by the workers (by module name).

Each runs the real query job unless the query asks it to misbehave the way a real failure
would: a worker that dies mid-job (or says it started, for the test to kill it), a job
that raises, runs away (before the engine, or inside it), is stuck where a soft time limit
cannot reach it, first builds a frame of a given size in the engine, or runs out of memory
drawing its chart.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from barb.process_memory import arrow_pool
from bot.pool.jobs import QueryJob, QueryOutcome, run_query_job


def misbehaving(job: QueryJob) -> QueryOutcome:
    trace = job.query.get("trace")
    if trace is not None:  # each run of the job to its end adds a line to this file
        query = {k: v for k, v in job.query.items() if k != "trace"}
        outcome = misbehaving(job.model_copy(update={"query": query}))
        with open(trace, "a") as file:
            file.write(f"{os.getpid()}\n")
        return outcome
    if job.query.get("store_past_soft_limit"):  # a Celery worker's Redis slow to store it
        _store_past_soft_limit(job.time_limit_s or 0)
        query = {k: v for k, v in job.query.items() if k != "store_past_soft_limit"}
        return misbehaving(job.model_copy(update={"query": query}))
    if job.query.get("hold_channel"):  # then says it started, and dies there when killed
        _hold_workers_channel()
        query = {k: v for k, v in job.query.items() if k != "hold_channel"}
        return misbehaving(job.model_copy(update={"query": query}))
    started = job.query.get("started")
    if started is not None:  # this worker's pid, written when the job reaches it
        query = {k: v for k, v in job.query.items() if k != "started"}
        Path(started).write_text(str(os.getpid()))
        return misbehaving(job.model_copy(update={"query": query}))
    gate = job.query.get("gate")
    if gate is not None:  # held until the test creates this file (8 s at most)
        query = {k: v for k, v in job.query.items() if k != "gate"}
        until = time.monotonic() + 8
        while not Path(gate).exists() and time.monotonic() < until:
            time.sleep(0.01)
        return misbehaving(job.model_copy(update={"query": query}))
    gate_each = job.query.get("gate_each")
    if gate_each is not None:  # each process held until the test creates <path>.<its pid>
        query = {k: v for k, v in job.query.items() if k != "gate_each"}
        mine = Path(f"{gate_each}.{os.getpid()}")
        Path(f"{mine}.waiting").touch()
        until = time.monotonic() + 30
        while not mine.exists() and time.monotonic() < until:
            time.sleep(0.01)
        return misbehaving(job.model_copy(update={"query": query}))
    if job.query.get("registered"):  # whether its worker is in the registry as it runs
        return QueryOutcome(ok=True, summary_text=json.dumps(_registered(job.query["registered"])))
    if job.query.get("describe"):
        return QueryOutcome(ok=True, summary_text=json.dumps(_describe(job.query["describe"])))
    if job.query.get("die"):
        os._exit(3)  # what a segfault or the OOM killer looks like from the pool
    if job.query.get("sleep"):
        time.sleep(job.query["sleep"])  # a query that runs away
    if job.query.get("stuck"):
        _stuck(job.query["stuck"])
    if job.query.get("raise"):
        raise MemoryError("worker ran out of memory")
    if job.query.get("grow_mb"):
        return _grown(job, job.query["grow_mb"])
    if job.query.get("engine_sleep"):
        return _slow_engine(job, job.query["engine_sleep"])
    if job.query.get("chart_oom"):
        return _chart_out_of_memory(job)
    if job.query.get("sleep"):  # it ran away for a while, then answers the query itself
        query = {k: v for k, v in job.query.items() if k != "sleep"}
        job = job.model_copy(update={"query": query})
    return run_query_job(job)


def _store_past_soft_limit(soft_limit_s: float) -> None:
    """In a Celery worker's child: the store of this job's result (the backend's next
    ``set``, after the body returned) takes until 0.6 s past the job's soft limit, as with
    a Redis slow to answer, so that the real limit (its parent's SIGUSR1) fires while
    Celery stores the answer. The hard limit comes 2 s after the soft one."""
    from celery import current_task

    backend = current_task.backend
    until = time.monotonic() + soft_limit_s + 0.6
    store = backend.set

    def slow_set(*args: object, **kwargs: object) -> object:
        del backend.set  # once
        time.sleep(max(0.0, until - time.monotonic()))
        return store(*args, **kwargs)

    backend.set = slow_set


def _hold_workers_channel() -> None:
    """Take pebble's workers' channel lock, as its worker holds it while it sends an answer
    (``send_result``): a worker killed then leaves it held. The channel is found in the
    frame of pebble's worker loop, which is running this job."""
    import sys

    frame = sys._getframe()
    while frame.f_code.co_name != "worker_process":
        frame = frame.f_back
    assert frame.f_locals["channel"].mutex.writer_mutex.acquire(timeout=5)


def _describe(variable: str) -> dict[str, object]:
    """The worker as it sees itself: its pid, its parent's command line, whether the chart
    library was imported before any job drew a chart, one environment variable, its memory
    ceiling and Arrow's allocator."""
    parent = Path(f"/proc/{os.getppid()}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    return {
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "parent": parent,
        "matplotlib": "matplotlib" in sys.modules,
        "env": os.environ.get(variable),
        "memory_ceiling": resource.getrlimit(resource.RLIMIT_DATA)[0],
        "arrow_pool": arrow_pool(),
        "status": {
            line.split(":")[0]: line.split()[1]
            for line in Path("/proc/self/status").read_text().splitlines()
            if line.startswith(("VmData", "RssAnon", "Threads"))
        },
        "workers": sorted(_children(os.getppid())),
    }


def _children(pid: int) -> set[int]:
    """The processes ``pid`` started that are still running (the fork server's: workers)."""
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(child) for child in (task / "children").read_text().split()}
    return found


def _grown(job: QueryJob, megabytes: int) -> QueryOutcome:
    """The real job, whose engine first builds a frame of ``megabytes`` of floats (the size
    a minute join of several instruments reaches), inside the engine's own run, where
    running out of memory is met."""

    def grow() -> None:
        frame = pd.DataFrame({"x": np.ones((megabytes << 20) // 8)})
        assert frame["x"].sum() > 0

    return _engine_first(job, "grow_mb", grow)


def _slow_engine(job: QueryJob, seconds: float) -> QueryOutcome:
    """The real job, whose engine first runs for ``seconds`` inside its own run, where a
    slow query spends its time and a worker's time limit most often meets it."""
    return _engine_first(job, "engine_sleep", lambda: time.sleep(seconds))


def _engine_first(job: QueryJob, key: str, first: Callable[[], None]) -> QueryOutcome:
    """The real job without ``key``, its engine's own run (``barb.interpreter.run``, inside
    ``execute``'s handling of errors) doing ``first`` before the query."""
    import barb.interpreter

    run = barb.interpreter.run

    def run_after(plan, settings):  # type: ignore[no-untyped-def]
        first()
        return run(plan, settings)

    barb.interpreter.run = run_after
    try:
        query = {k: v for k, v in job.query.items() if k != key}
        return run_query_job(job.model_copy(update={"query": query}))
    finally:
        barb.interpreter.run = run


def _chart_out_of_memory(job: QueryJob) -> QueryOutcome:
    """The real job, whose chart runs out of memory."""
    import barb.charts

    render = barb.charts.render_answer

    def too_big(*args: object, **kwargs: object) -> None:
        raise MemoryError

    barb.charts.render_answer = too_big
    try:
        query = {k: v for k, v in job.query.items() if k != "chart_oom"}
        return run_query_job(job.model_copy(update={"query": query}))
    finally:
        barb.charts.render_answer = render


def _stuck(seconds: float) -> None:
    """Deaf to Celery's soft time limit, as a query busy inside C code is."""
    from celery.exceptions import SoftTimeLimitExceeded

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(SoftTimeLimitExceeded):
            time.sleep(0.05)


class BreaksThePoolWhenSent:
    """Pickles in the parent's check, then breaks pebble's scheduler thread when it is sent.

    A RecursionError is not among the pickling errors pebble expects, so it kills the thread
    that feeds the workers: the failure the 500-deep select caused before inputs were bounded.
    """

    def __init__(self) -> None:
        self.pickled = 0

    def __reduce__(self):  # type: ignore[override]
        self.pickled += 1
        if self.pickled > 1:
            raise RecursionError("maximum recursion depth exceeded while pickling an object")
        return (BreaksThePoolWhenSent, ())


def _registered(instruments: list[str]) -> bool:
    """Whether this child's worker (its parent, the worker's main process) is alive in the
    registry now."""
    import redis

    from bot.pool.queue_worker import node_name
    from bot.pool.worker_registry import alive

    client = redis.Redis.from_url(os.environ["BARB_QUEUE_URL"])
    try:
        [registered] = alive(client, [node_name(tuple(instruments), os.getppid())])
    finally:
        client.close()
    return registered
