"""``barb worker``'s own code with ``pool_work.misbehaving`` as the job (run as a script:
``misbehaving_worker.py NQ,ES [concurrency]``)."""

from __future__ import annotations

import sys

from pool_work import misbehaving

from bot.pool.queue_worker import serve_worker
from bot.settings import BotSettings

if __name__ == "__main__":
    settings = BotSettings()
    assert settings.queue_url
    serve_worker(
        settings.queue_url,
        tuple(sys.argv[1].split(",")),
        concurrency=int(sys.argv[2]) if len(sys.argv) > 2 else 1,
        timeout_s=settings.query_timeout_s,
        memory_gb=settings.worker_memory_gb,
        work=misbehaving,
    )
