"""The real `barb bot` in a process of its own, against the fake Bot API and the fake model.

For the kill -9 tests: the bot is started exactly as a person starts it (`barb bot`, settings
from the environment), talks HTTP to the fake Bot API and, through the official OpenAI SDK,
to the fake model server; the test kills it with SIGKILL at a chosen stage and starts it
again on the same database. Its log goes to a file that a failing test prints.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from fake_bot_api import FakeBotAPI

#: Variables of the developer's shell that must not reach the bot under test.
_SCRUBBED = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
)


class BotProcess:
    """`barb bot` as a child process; ``start``, ``kill`` (SIGKILL), ``start`` again."""

    def __init__(self, fake: FakeBotAPI, model_url: str, workdir: Path, **env: str) -> None:
        self.fake = fake
        self.workdir = workdir
        self.db_path = workdir / "bot.db"
        self.log_path = workdir / "bot.log"
        self.env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
        self.env.update(
            {
                "TELEGRAM_BOT_TOKEN": fake.token,
                "TELEGRAM_API_BASE_URL": fake.url,
                "OPENAI_BASE_URL": f"{model_url}/v1",
                "OPENAI_API_KEY": "sk-test-not-a-key",
                "BARB_LLM_MODEL": "gpt-4o-mini",
                "BARB_LLM_MAX_RETRIES": "0",
                "BARB_DATABASE_URL": f"sqlite+aiosqlite:///{self.db_path}",
                "BARB_OFFLINE": "1",
                "BARB_WORKERS": "1",
                "PTB_TIMEDELTA": "1",
                **env,
            }
        )
        self._process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    async def start(self) -> None:
        """Start `barb bot` and wait until it polls for updates (its start-up is done)."""
        polls = len(self.fake.calls("getUpdates"))
        with self.log_path.open("ab") as log:
            log.write(f"\n--- start {self.starts + 1} ---\n".encode())
            log.flush()
            # Its own session: the kill takes the bot and its query workers together, as an
            # OOM kill of the container or a deploy does, and leaves no orphan behind.
            self._process = subprocess.Popen(
                [sys.executable, "-c", "from bot.cli import main; main()", "bot"],
                cwd=self.workdir,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.starts += 1
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        while len(self.fake.calls("getUpdates")) <= polls:
            if self._process.poll() is not None:
                raise AssertionError(f"barb bot exited with {self._process.returncode}\n{self.log}")
            if loop.time() > deadline:
                raise AssertionError(f"barb bot did not start polling\n{self.log}")
            await asyncio.sleep(0.05)

    def kill(self) -> None:
        """kill -9: no handler runs, nothing is flushed, the database is left as it was."""
        if self._process is None or self._process.poll() is not None:
            return
        os.killpg(self._process.pid, signal.SIGKILL)
        self._process.wait()

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """Read the bot's database as it stands (WAL: a reader never blocks the bot)."""
        if not self.db_path.exists():
            return []
        with sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=5) as db:
            try:
                return db.execute(sql, params).fetchall()
            except sqlite3.OperationalError:  # the schema is not created yet
                return []

    async def wait_until(self, condition: Any, what: str, timeout: float = 30.0) -> None:
        """Poll ``condition()`` (the fakes' records, the database) until it holds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not condition():
            if self._process is not None and self._process.poll() is not None:
                raise AssertionError(f"barb bot died waiting for {what}\n{self.log}")
            if loop.time() > deadline:
                raise AssertionError(
                    f"timed out waiting for {what}\n{self.fake.describe()}\n{self.log[-4000:]}"
                )
            await asyncio.sleep(0.02)
