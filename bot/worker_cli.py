"""`barb worker`: answer the bot's queries from Redis (Celery), for some or all instruments."""

from __future__ import annotations

import logging
import os
import sys

import click
from pydantic import ValidationError

from barb.instruments import available_instruments
from bot.settings import BotSettings
from bot.startup_errors import bad_settings

NO_QUEUE = (
    "barb worker needs BARB_QUEUE_URL, the Redis the bot sends its queries to, e.g.\n"
    "  export BARB_QUEUE_URL=redis://127.0.0.1:6379/0"
)


@click.command()
@click.option(
    "--instruments",
    default=None,
    help="Comma-separated instruments to serve (e.g. NQ,ES); default: every instrument.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=None,
    help="Query processes (default: the number of CPUs).",
)
@click.option("--loglevel", default="INFO", show_default=True)
def worker(instruments: str | None, concurrency: int | None, loglevel: str) -> None:
    """Answer the bot's queries from Redis, one queue per instrument (barb.NQ, barb.ES, …)."""
    logging.basicConfig(
        level=loglevel.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        settings = BotSettings()
    except ValidationError as exc:
        error = bad_settings(exc, BotSettings)
        click.echo(f"barb worker: {error.sentence}", err=True)
        sys.exit(error.exit_status)
    if not settings.queue_url:
        click.echo(NO_QUEUE, err=True)
        sys.exit(2)
    known = available_instruments()
    served = tuple(known)
    if instruments:
        served = tuple(dict.fromkeys(s.strip().upper() for s in instruments.split(",") if s))
        unknown = [symbol for symbol in served if symbol not in known]
        if unknown or not served:
            raise click.BadParameter(
                f"unknown instrument {', '.join(unknown)}; known: {', '.join(known)}",
                param_hint="--instruments",
            )
    # Celery is imported only by the commands that use it.
    from bot.pool.queue_worker import serve_worker

    serve_worker(
        settings.queue_url,
        served,
        concurrency=concurrency or os.cpu_count() or 1,
        timeout_s=settings.query_timeout_s,
        memory_gb=settings.worker_memory_gb,
        loglevel=loglevel.upper(),
    )
