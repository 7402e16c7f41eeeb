"""Engine queries and chart rendering off the event loop, in worker processes."""

from bot.pool.jobs import QueryJob, QueryOutcome, run_query_job
from bot.pool.runner import InlineRunner, ProcessRunner, QueryRunner

__all__ = [
    "InlineRunner",
    "ProcessRunner",
    "QueryJob",
    "QueryOutcome",
    "QueryRunner",
    "run_query_job",
]
