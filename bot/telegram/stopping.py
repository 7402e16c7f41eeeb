"""Stopping a background task from the code that started it."""

from __future__ import annotations

import asyncio


async def cancel_and_wait(task: asyncio.Task[object]) -> None:
    """Cancel ``task`` and wait until it has stopped. Its own cancellation is expected and
    ends quietly; a cancellation of the waiting task itself (a caller's timeout, a shutdown)
    is passed on, never taken for the task's and swallowed."""
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise
