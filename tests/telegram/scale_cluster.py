"""Barb deployed as on several machines, every part a real process on 127.0.0.1.

A real PostgreSQL migrated with `barb db upgrade`, a real Redis, two real `barb worker`
processes, the real HAProxy with ``deploy/haproxy.cfg``, and two `barb bot` replicas in
webhook mode behind it; Telegram is the fake Bot API (it posts each update to HAProxy as
Telegram posts to a webhook) and the model is the fake OpenAI server answering every chat
from what its request says (``tagged_model``). The scale tests
(``test_scale_e2e.py``) play conversations through it and break one part at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import re
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import redis
from bot_harness import WEEKDAY_RANGE, keyboard_data
from bot_process import BotProcess
from fake_bot_api import FakeBotAPI
from servers.celery_workers import WorkerProcess, worker_env
from servers.haproxy import free_port, running_haproxy
from servers.postgres import PostgresServer
from servers.redis import RedisServer

from bot.telegram import keyboards

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from llm_fake_api import OPENAI_PATH, Canned, FakeAPIServer, openai_completion

BARB = Path(sys.executable).parent / "barb"
SECRET = "scale-webhook_secret-7"
RUN_PREFIX = keyboards.RUN + keyboards.SEPARATOR
#: A query on every 1-minute bar of the sample: a few seconds of a worker's time, long
#: enough to kill the worker while it runs.
HEAVY = {
    "session": "ETH",
    "from": "1m",
    "map": {"a": "rolling_std(close, 500)", "b": "rolling_mean(a, 500)"},
    "select": "mean(b)",
}
#: A period counted back from the data's last day.
RECENT = {"session": "RTH", "from": "daily", "period": "last_3_days", "select": "mean(range)"}
_TAG = re.compile(r"\bc\d+q\d+\b")


@dataclass(frozen=True)
class Timing:
    """The settings that decide how fast a failure is noticed, scaled down for tests (the
    defaults are minutes; only their order matters)."""

    query_timeout_s: float = 12.0
    queue_wait_s: float = 60.0
    outbox_lease_s: float = 6.0
    work_lease_s: float = 6.0
    sending_pass_s: float = 1.0

    def env(self) -> dict[str, str]:
        return {
            "BARB_QUERY_TIMEOUT_S": str(self.query_timeout_s),
            "BARB_QUEUE_WAIT_S": str(self.queue_wait_s),
            "BARB_OUTBOX_LEASE_S": str(self.outbox_lease_s),
            "BARB_WORK_LEASE_S": str(self.work_lease_s),
            "BARB_SENDING_PASS_S": str(self.sending_pass_s),
        }


# --- the model --------------------------------------------------------------------------------


def tag(chat_id: int, number: int = 1) -> str:
    """What ties a question to its answer: every reply of the model quotes it."""
    return f"c{chat_id}q{number}"


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def tagged_model(body: dict[str, Any]) -> Canned:
    """The model for many chats at once: a greeting for "hello <tag>", a plan for any other
    question (``HEAVY`` when it says "heavy"), and, once the query's result is in the
    messages, an answer that quotes the question's tag and the result's first line."""
    messages = body["messages"]
    asked = next(_text_of(m) for m in reversed(messages) if m["role"] == "user")
    found = _TAG.findall(asked)
    question = found[-1] if found else "untagged"
    last = messages[-1]
    if last["role"] == "tool":
        first_line = _text_of(last).splitlines()[0] if _text_of(last) else ""
        return openai_completion(f"Answer {question}: {first_line}")
    if "hello" in asked:
        return openai_completion(f"Hi {question}!")
    query = HEAVY if "heavy" in asked else RECENT if "recent" in asked else WEEKDAY_RANGE
    arguments = json.dumps({"query": query})
    return openai_completion(
        f"Plan {question}: I'll compute it.",
        tool_calls=[(f"call_{question}", "execute_query", arguments)],
    )


# --- what each person sees --------------------------------------------------------------------


def delivered(fake: FakeBotAPI, method: str, chat_id: int) -> list[dict[str, Any]]:
    return [r.result for r in fake.calls(method, chat_id=chat_id) if r.status == 200]


def run_button(message: dict[str, Any]) -> str | None:
    return next((d for d in keyboard_data(message) if d.startswith(RUN_PREFIX)), None)


def plans(fake: FakeBotAPI, chat_id: int) -> list[dict[str, Any]]:
    return [m for m in delivered(fake, "sendMessage", chat_id) if run_button(m)]


def charts(fake: FakeBotAPI, chat_id: int) -> list[dict[str, Any]]:
    return delivered(fake, "sendPhoto", chat_id)


def texts(fake: FakeBotAPI, chat_id: int) -> list[str]:
    return [m["text"] for m in delivered(fake, "sendMessage", chat_id)]


def ask(fake: FakeBotAPI, chat_id: int, text: str) -> None:
    fake.inject(fake.message_update(chat_id=chat_id, user_id=chat_id, text=text))


def press_run(fake: FakeBotAPI, chat_id: int, plan: dict[str, Any]) -> None:
    data = run_button(plan)
    assert data is not None, plan
    fake.inject(
        fake.callback_update(
            chat_id=chat_id, user_id=chat_id, message_id=plan["message_id"], data=data
        )
    )


def plan_status(fake: FakeBotAPI, chat_id: int, plan: dict[str, Any]) -> str:
    return fake.message(chat_id, plan["message_id"])["text"].rsplit("\n", 1)[-1]


# --- the cluster ------------------------------------------------------------------------------


@dataclass
class Cluster:
    fake: FakeBotAPI
    model: FakeAPIServer
    postgres: PostgresServer
    database: str
    redis: RedisServer
    replicas: list[BotProcess]
    workers: list[WorkerProcess]
    lb_port: int
    #: The workers' data (the replicas have none).
    data_dir: Path = Path()
    #: Which replica held each chat's work, as seen in ``in_flight`` (``watch_owners``).
    owners: dict[int, set[str]] = field(default_factory=dict)
    #: Which replica held each chat's queued replies, as seen in ``outbox``: work finished
    #: before a kill leaves only its replies for the other replica to take.
    senders: dict[int, set[str]] = field(default_factory=dict)

    @property
    def dsn(self) -> str:
        return self.postgres.dsn(self.database)

    async def rows(self, sql: str, *args: Any) -> list[asyncpg.Record]:
        connection = await asyncpg.connect(self.dsn)
        try:
            return await connection.fetch(sql, *args)
        finally:
            await connection.close()

    def describe(self) -> str:
        logs = "\n".join(
            f"--- {r.env['BARB_REPLICA_ID']} log (tail) ---\n{r.log[-3000:]}" for r in self.replicas
        )
        return f"{self.fake.describe()}\n{logs}"

    async def wait_until(
        self, condition: Callable[[], Any], what: str, timeout: float = 60.0
    ) -> None:
        """Poll ``condition`` (plain or async) until it holds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            held = condition()
            if inspect.isawaitable(held):
                held = await held
            if held:
                return
            if loop.time() > deadline:
                raise AssertionError(f"timed out waiting for {what}\n{self.describe()}")
            await asyncio.sleep(0.05)

    async def watch_owners(self) -> None:
        """Until cancelled: note which replica holds each chat's work in flight."""
        while True:
            with contextlib.suppress(OSError, asyncpg.PostgresError):
                for row in await self.rows("SELECT chat_id, lease_owner FROM in_flight"):
                    self.owners.setdefault(row["chat_id"], set()).add(row["lease_owner"])
                replies = "SELECT chat_id, lease_owner FROM outbox WHERE lease_owner IS NOT NULL"
                for row in await self.rows(replies):
                    self.senders.setdefault(row["chat_id"], set()).add(row["lease_owner"])
            await asyncio.sleep(0.05)

    def chats_of(self, replica: BotProcess) -> set[int]:
        name = replica.env["BARB_REPLICA_ID"]
        return {chat for chat, names in self.owners.items() if names == {name}}

    async def settled(self) -> None:
        """Nothing left in flight, nothing queued in the outbox, no plan left running."""
        await self.wait_until(
            self._nothing_left, "no work in flight and no reply queued", timeout=60
        )

    async def _nothing_left(self) -> bool:
        work = await self.rows("SELECT id FROM in_flight")
        queued = await self.rows("SELECT id FROM outbox WHERE status = 'queued'")
        running = await self.rows("SELECT id FROM pending_actions WHERE status = 'running'")
        return not work and not queued and not running

    def started_by(self, worker: WorkerProcess) -> list[str]:
        """The jobs that ``worker`` is running now (Celery's STARTED state in Redis)."""
        client = redis.Redis.from_url(self.redis.url())
        try:
            found = []
            for key in client.scan_iter("celery-task-meta-*"):
                raw = client.get(key)
                if raw is None:
                    continue
                meta = json.loads(raw)
                host = (meta.get("result") or {}).get("hostname", "")
                if meta["status"] == "STARTED" and f"-{worker.process.pid}@" in host:
                    found.append(meta["task_id"])
            return found
        finally:
            client.close()


@contextlib.asynccontextmanager
async def running_cluster(
    fake: FakeBotAPI,
    postgres: PostgresServer,
    workdir: Path,
    data_dir: Path,
    timing: Timing | None = None,
    *,
    replica_count: int = 2,
    worker_count: int = 2,
) -> AsyncIterator[Cluster]:
    """Everything started, in deploy order: database migrated, Redis, workers, the replicas
    (each sets the webhook to HAProxy's address), HAProxy. With one replica, both of
    HAProxy's servers are that replica."""
    timing = timing or Timing()
    model = FakeAPIServer().start()
    model.respond(OPENAI_PATH, tagged_model)
    database = await postgres.create_database()
    redis_server = RedisServer(_folder(workdir / "redis"))
    replicas: list[BotProcess] = []
    workers: list[WorkerProcess] = []
    with contextlib.ExitStack() as stack:
        try:
            url = postgres.url(database)
            upgrade = await asyncio.create_subprocess_exec(
                str(BARB), "db", "upgrade", env={**_base_env(), "BARB_DATABASE_URL": url}
            )
            assert await upgrade.wait() == 0, "barb db upgrade failed"

            env = worker_env(redis_server.url(), data_dir, timing.query_timeout_s)
            for number in range(1, worker_count + 1):
                log = workdir / f"worker{number}.log"
                command = [str(BARB), "worker", "--instruments=NQ", "--concurrency=1"]
                workers.append(WorkerProcess(command, env, log))
            for worker in workers:
                await asyncio.to_thread(worker.wait_ready)

            # The replicas first, so that HAProxy finds both listening from its first check.
            ports = [free_port() for _ in range(replica_count)]
            lb_port = free_port()
            for number, port in enumerate(ports, 1):
                replica = BotProcess(
                    fake,
                    model.url,
                    _folder(workdir / f"replica{number}"),
                    BARB_DATABASE_URL=url,
                    BARB_QUEUE_URL=redis_server.url(),
                    BARB_REPLICA_ID=f"replica-{number}",
                    BARB_WEBHOOK_URL=f"http://127.0.0.1:{lb_port}",
                    BARB_WEBHOOK_PORT=str(port),
                    BARB_WEBHOOK_LISTEN="127.0.0.1",
                    BARB_WEBHOOK_SECRET=SECRET,
                    BARB_QUESTIONS_PER_MINUTE="60",
                    # No data, as deployed: only the workers' machines hold it.
                    BARB_DATA_DIR=str(_folder(workdir / "no-data")),
                    **timing.env(),
                )
                replicas.append(replica)
                await replica.start()
            stack.enter_context(running_haproxy((ports * 2)[:2], lb_port))
            yield Cluster(
                fake,
                model,
                postgres,
                database,
                redis_server,
                replicas,
                workers,
                lb_port,
                data_dir=data_dir,
            )
        finally:
            for replica in replicas:
                replica.kill()
            for worker in workers:
                with contextlib.suppress(ProcessLookupError):
                    worker.stop()
            redis_server.stop()
            model.stop()
            with contextlib.suppress(Exception):
                await postgres.drop_database(database)


def _folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _base_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
