"""The real `barb bot` in a process of its own, against the fake Bot API and the fake model.

For the kill -9 and the start-up and shutdown tests: the bot is started exactly as a person
starts it (`barb bot`, settings from the environment), talks HTTP to the fake Bot API and,
through the official OpenAI SDK, to the fake model server; the test kills it with SIGKILL at
a chosen stage (or stops it with SIGTERM or SIGINT) and starts it again on the same database.
Its log goes to a file that a failing test prints. The bot runs in a session of its own, so
every process it starts (query workers, multiprocessing's helper) can be found by session id,
even after the bot is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
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


# The command line of multiprocessing's fork server, and of the workers forked from it.
_FORK_SERVER = "multiprocessing.forkserver"
BARB_BOT = [sys.executable, "-c", "from bot.cli import main; main()", "bot"]


@dataclass(frozen=True)
class Finished:
    """A `barb bot` that ended on its own: its exit status and what it printed."""

    status: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


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
        # The fork server each start of the bot launched (its workers' parent), once seen.
        self._fork_servers: set[int] = set()

    @property
    def webhook(self) -> bool:
        return bool(self.env.get("BARB_WEBHOOK_URL"))

    def _ready_calls(self) -> int:
        """Calls that say start-up is done: its first long poll, or its webhook registered."""
        return len(self.fake.calls("setWebhook" if self.webhook else "getUpdates"))

    async def start(self) -> None:
        """Start `barb bot` and wait until it polls for updates or has set its webhook (its
        start-up is done)."""
        polls = self._ready_calls()
        with self.log_path.open("ab") as log:
            log.write(f"\n--- start {self.starts + 1} ---\n".encode())
            log.flush()
            # Its own session: the kill takes the bot and its query workers together, as an
            # OOM kill of the container or a deploy does, and leaves no orphan behind.
            self._process = subprocess.Popen(
                BARB_BOT,
                cwd=self.workdir,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.starts += 1
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        while self._ready_calls() <= polls:
            if self._process.poll() is not None:
                raise AssertionError(f"barb bot exited with {self._process.returncode}\n{self.log}")
            if loop.time() > deadline:
                raise AssertionError(f"barb bot did not start polling\n{self.log}")
            await asyncio.sleep(0.05)

    async def run_to_exit(self, timeout: float = 120.0) -> Finished:
        """Start `barb bot` and wait for it to end on its own (a start-up that fails)."""
        process = await asyncio.create_subprocess_exec(
            *BARB_BOT,
            cwd=self.workdir,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.starts += 1
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
        except TimeoutError:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
            raise AssertionError(f"barb bot did not end within {timeout:.0f}s") from None
        assert process.returncode is not None
        return Finished(process.returncode, stdout.decode(), stderr.decode())

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    def send_signal(self, sig: signal.Signals) -> None:
        """To the bot alone, as `kill` or a supervisor sends it (its workers get nothing)."""
        assert self._process is not None
        self._process.send_signal(sig)

    async def wait_exit(self, timeout: float = 60.0) -> int:
        """The bot's exit status once it has ended."""
        assert self._process is not None
        try:
            return await asyncio.wait_for(asyncio.to_thread(self._process.wait), timeout)
        except TimeoutError:
            message = f"barb bot still running after {timeout:.0f}s"
            raise AssertionError(f"{message}\n{self.log}") from None

    def session(self) -> list[tuple[int, str]]:
        """Every live process of the bot's session (the bot, its workers, their helpers),
        read from /proc: (pid, command line). Zombies do not count."""
        assert self._process is not None
        found = []
        bot_pid = self._process.pid
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:  # ended meanwhile
                continue
            # After the command name in parentheses: state, ppid, pgrp, session, ...
            state, ppid, _pgrp, session = stat.rsplit(")", 1)[1].split()[:4]
            if int(session) == bot_pid and state != "Z":
                found.append((int(entry.name), command.strip()))
                if int(ppid) == bot_pid and _FORK_SERVER in command:
                    self._fork_servers.add(int(entry.name))
        return found

    def workers(self) -> list[int]:
        """The query worker processes still alive: forked by multiprocessing's fork server,
        they carry its command line; the server itself (the bot's child) is not one."""
        return [
            pid
            for pid, command in self.session()
            if _FORK_SERVER in command and pid not in self._fork_servers
        ]

    def fork_servers(self) -> list[int]:
        """The bot's fork server, while it lives (it ends when the bot does)."""
        return [pid for pid, command in self.session() if pid in self._fork_servers]

    @staticmethod
    def cpu_seconds(pid: int) -> float:
        """CPU time a process has used so far (user + system), from /proc; 0 once it is gone."""
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        # utime and stime are the 14th and 15th fields of stat(5), in clock ticks.
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def kill(self) -> None:
        """kill -9: no handler runs, nothing is flushed, the database is left as it was.

        The whole process group: the bot, and whatever it left behind if it already ended.
        """
        if self._process is None:
            return
        with contextlib.suppress(ProcessLookupError):
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

    async def wait_until(
        self, condition: Any, what: str, timeout: float = 30.0, *, bot_running: bool = True
    ) -> None:
        """Poll ``condition()`` (the fakes' records, the database, /proc) until it holds; the
        bot ending meanwhile fails the wait unless ``bot_running`` is False."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not condition():
            if bot_running and self._process is not None and self._process.poll() is not None:
                raise AssertionError(f"barb bot died waiting for {what}\n{self.log}")
            if loop.time() > deadline:
                raise AssertionError(
                    f"timed out waiting for {what}\n{self.fake.describe()}\n{self.log[-4000:]}"
                )
            await asyncio.sleep(0.02)
