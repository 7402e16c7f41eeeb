"""Running `barb eval` in-process from a test."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from click.testing import CliRunner, Result

from bot.cli import main


def invoke_cli(args: list[str]) -> Result:
    """``barb …`` in a thread of its own: its asyncio.run() creates and closes its loop
    there and leaves the main thread's event-loop state (which pytest-asyncio manages for
    the async tests) untouched."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(CliRunner().invoke, main, args, catch_exceptions=False).result()
