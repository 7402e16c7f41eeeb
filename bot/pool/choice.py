"""The one place that decides where the bot's queries run."""

from __future__ import annotations

from bot.pool.runner import ProcessRunner, QueryRunner
from bot.settings import BotSettings


def make_runner(
    settings: BotSettings,
    warm_instruments: tuple[str, ...] = ("NQ",),
    *,
    check_wait_s: float | None = None,
    keep_taken_s: float | None = None,
) -> QueryRunner:
    """Celery workers on Redis when ``BARB_QUEUE_URL`` is set, else this process's own pool.
    ``check_wait_s`` is how long a plan waits for its query checks (the assistant's
    ``BARB_CHECK_WAIT_S``): a check still queued after it expires. ``keep_taken_s``: how
    long a run's answer, once taken, stays in Redis for a reader resuming the run
    (``bot_run.resume_window_s``; None: the results' own life)."""
    if settings.queue_url:
        from bot.pool.celery_runner import CeleryRunner

        return CeleryRunner(
            settings.queue_url,
            timeout_s=settings.query_timeout_s,
            queue_wait_s=settings.queue_wait_s,
            check_wait_s=check_wait_s,
            keep_taken_s=keep_taken_s,
        )
    return ProcessRunner(
        workers=settings.workers,
        timeout_s=settings.query_timeout_s,
        warm_instruments=warm_instruments,
        memory_gb=settings.worker_memory_gb,
    )
