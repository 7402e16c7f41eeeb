"""A question over 4096 characters, which Telegram's apps send as several messages within
a second, is asked whole, once; a short question is asked at once, as before. Through the
real PTB Application against the fake Bot API, reading what the scripted model was sent."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager

import httpx
import pytest
from bot_harness import ALICE, BOB, GROUP, barb_bot, keyboard_data
from fake_bot_api import FakeBotAPI
from servers.haproxy import free_port
from servers.postgres import PostgresServer

from bot.llm.messages import ModelRequest
from bot.llm.scripted import ScriptedProvider, text, tool_call, turn
from bot.store import StoreSettings, open_store
from bot.store.migrate import upgrade_schema
from bot.telegram.split_questions import (
    LIMIT,
    LONG_FROM,
    Gathered,
    Part,
    SplitQuestions,
    continues,
    utf16_length,
)

COUNT_DAYS = {"session": "RTH", "from": "daily", "select": "count()"}


def planner(request: ModelRequest):
    if request.messages[-1].role == "user":
        return turn("Counting days.", tool_call("execute_query", query=COUNT_DAYS))
    return text("Done.")


def questions_asked(provider: ScriptedProvider) -> list[str]:
    """The person's words in each model call that began a question."""
    return [r.messages[-1].text or "" for r in provider.requests if r.messages[-1].role == "user"]


def app_split(message: str) -> list[str]:
    """``message`` as Telegram Desktop sends one over the limit (``CutPart``): cut at the last
    sentence end within the limit (past its middle), the space there dropped."""
    parts = []
    while utf16_length(message) > LIMIT:
        cut = message.rindex(". ", LIMIT // 2, LIMIT) + 1
        parts.append(message[:cut].strip())
        message = message[cut:].strip()
    return [*parts, message]


# What an app sends for one pasted message of ~4200 characters: a long part, then the rest.
PASTED = (
    "Context for my question. "
    + "NQ trended up on heavy volume that week. " * 100
    + "So: how many RTH days are in the data? END-OF-QUESTION"
)
FIRST, SECOND = app_split(PASTED)


@pytest.mark.parametrize("where", ["private", "group"])
async def test_a_split_question_is_asked_whole_once(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings, where: str
) -> None:
    """Before, each part was its own question: two plans, the first "replaced by a newer
    one", and the model never read the first part with the second. In a group only the
    first part mentions Barb: the second was not even read."""
    assert len(FIRST) >= LONG_FROM
    fake = fake_telegram
    chat = ALICE if where == "private" else GROUP
    mention = f"@{fake.bot['username']} " if where == "group" else ""
    first, second = app_split(mention + PASTED)  # the mention is the first part's
    provider = ScriptedProvider([planner] * 10)
    async with barb_bot(fake, db_url, provider=provider) as svc:
        fake.inject(fake.message_update(chat_id=chat, user_id=ALICE, text=first))
        fake.inject(fake.message_update(chat_id=chat, user_id=ALICE, text=second))
        [plan] = await fake.wait_said(1, chat_id=chat)
        assert keyboard_data(plan)[0].startswith("r:")  # Run, Cancel
        [question] = questions_asked(provider)
        assert question == first.removeprefix(mention) + "\n" + second
        # One plan, nothing "replaced"; the same person's next message is its own question.
        assert not fake.calls("editMessageText", chat)
        fake.inject(fake.message_update(chat_id=chat, user_id=ALICE, text=mention + "and ES?"))
        await fake.wait_said(2, chat_id=chat)
        assert questions_asked(provider) == [question, "and ES?"]
        assert not await svc.store.updates.take_over(own=True)  # every part handled


async def test_another_member_s_message_is_not_joined(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """Only one person's parts join: Bob's question sent meanwhile is his own."""
    fake = fake_telegram
    mention = f"@{fake.bot['username']} "
    provider = ScriptedProvider([planner] * 10)
    async with barb_bot(fake, db_url, provider=provider):
        fake.inject(fake.message_update(chat_id=GROUP, user_id=ALICE, text=mention + FIRST))
        fake.inject(
            fake.message_update(chat_id=GROUP, user_id=BOB, first_name="Bob", text=mention + "hi")
        )
        await fake.wait_said(2, chat_id=GROUP)
        assert sorted(questions_asked(provider), key=len) == ["hi", FIRST.strip()]


async def test_a_short_question_does_not_wait_for_parts(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """A short question is asked at once: with a window longer than the test waits for a
    reply, it is answered all the same (a long one would still be waiting)."""
    fake = fake_telegram
    provider = ScriptedProvider([planner] * 10)
    async with barb_bot(fake, db_url, provider=provider, split_window_s=3600):
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="how many days?"))
        [plan] = await fake.wait_said(1, chat_id=ALICE, timeout=10)
        assert keyboard_data(plan)[0].startswith("r:")
        assert questions_asked(provider) == ["how many days?"]


async def test_parts_stored_before_a_kill_are_asked_whole_at_the_restart(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """A process killed after storing both parts and before asking them: the next start
    handles them together, as one question, and neither is left to be asked again."""
    fake = fake_telegram
    parts = [
        fake.message_update(chat_id=ALICE, user_id=ALICE, text=FIRST),
        fake.message_update(chat_id=ALICE, user_id=ALICE, text=SECOND),
    ]
    store = await open_store(StoreSettings(database_url=db_url))
    try:
        assert await store.updates.receive([(u["update_id"], u) for u in parts])
    finally:
        await store.close()
    provider = ScriptedProvider([planner] * 10)
    async with barb_bot(fake, db_url, provider=provider) as svc:
        [plan] = await fake.wait_said(1, chat_id=ALICE)
        assert keyboard_data(plan)[0].startswith("r:")
        [question] = questions_asked(provider)
        assert question == FIRST.strip() + "\n" + SECOND
        assert not await svc.store.updates.unhandled()


async def test_a_short_question_after_a_long_one_is_asked_on_its_own_after_it(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """A pasted question of 3000 characters (not split: it is under the limit), then "а в
    2023?" a moment later: it was glued to the end of the long one as its "part", and never
    asked as the person asked it. A message follows a part only where the app had to cut
    (the two are over 4096 together): now each is its own question, in the order sent."""
    fake = fake_telegram
    long_one = "Context for my question. " + "NQ trended up on heavy volume that week. " * 72
    assert LONG_FROM <= utf16_length(long_one) < LIMIT
    provider = ScriptedProvider([planner] * 10)
    async with barb_bot(fake, db_url, provider=provider) as svc:
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=long_one))
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="а в 2023?"))
        await fake.wait_said(2, chat_id=ALICE)
        assert questions_asked(provider) == [long_one, "а в 2023?"]
        assert not await svc.store.updates.take_over(own=True)


def test_a_part_is_counted_as_telegram_counts_it() -> None:
    """Telegram's limit counts UTF-16 code units: a first part of 2040 chart emoji is 4080
    long, over the limit, and what follows it is its part; 2000 letters and a short
    message are two messages."""
    assert continues(utf16_length("📈" * 2040), "and the rest")
    assert not continues(utf16_length("x" * 2040), "and the rest")
    assert not continues(utf16_length("x" * 4000), "and in 2023?")
    assert continues(utf16_length("x" * 4090), "and in 2023?")


@pytest.fixture
async def pg_url(postgres_server: PostgresServer, sample_settings: object) -> AsyncIterator[str]:
    name = await postgres_server.create_database()
    url = postgres_server.url(name)
    await upgrade_schema(StoreSettings(database_url=url))
    yield url
    await postgres_server.drop_database(name)


@asynccontextmanager
async def two_replicas(
    fake: FakeBotAPI, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[list[ScriptedProvider], Callable[[int, str], Awaitable[None]]]]:
    """Two webhook replicas of the bot on one database, each with its own scripted model;
    yields the models and ``post(replica, text)``: Alice's message posted to that replica
    as Telegram does, returning once it answered 200 (Telegram posts a chat's next update
    only then)."""
    providers = [ScriptedProvider([planner] * 10) for _ in range(2)]
    ports = [free_port(), free_port()]
    async with AsyncExitStack() as replicas, httpx.AsyncClient() as client:
        for name, port, provider in zip("ab", ports, providers, strict=True):
            monkeypatch.setenv("BARB_REPLICA_ID", f"replica-{name}")
            await replicas.enter_async_context(
                barb_bot(
                    fake,
                    pg_url,
                    provider=provider,
                    webhook_url=f"http://127.0.0.1:{port}",
                    webhook_port=port,
                    webhook_listen="127.0.0.1",
                )
            )

        async def post(replica: int, text: str) -> None:
            update = fake.prepare(fake.message_update(chat_id=ALICE, user_id=ALICE, text=text))
            answered = await client.post(f"http://127.0.0.1:{ports[replica]}/telegram", json=update)
            assert answered.status_code == 200

        yield providers, post


async def nothing_unhandled(pg_url: str) -> bool:
    store = await open_store(StoreSettings(database_url=pg_url))
    try:
        return not await store.updates.unhandled()
    finally:
        await store.close()


async def test_the_parts_of_a_question_reaching_two_replicas_are_asked_whole_once(
    fake_telegram: FakeBotAPI, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two webhook replicas on one PostgreSQL behind a balancer: the first part reaches
    replica A, the second replica B (Telegram posts one chat's updates in order, each once
    the one before was answered). Each replica joined only its own parts: A asked the first
    part alone and B the second, two plans. Now B leaves its part to A, which takes it from
    the store: one question, whole, in order, and no update left unhandled."""
    fake = fake_telegram
    async with two_replicas(fake, pg_url, monkeypatch) as (providers, post):
        await post(0, FIRST)
        await post(1, SECOND)
        [plan] = await fake.wait_said(1, chat_id=ALICE)
        assert keyboard_data(plan)[0].startswith("r:")
        asked = questions_asked(providers[0]) + questions_asked(providers[1])
        assert asked == [FIRST + "\n" + SECOND]
        assert questions_asked(providers[0]) == asked  # by A, which got the first part
        assert await nothing_unhandled(pg_url)


async def test_a_short_question_reaching_another_replica_is_asked_after_the_long_one(
    fake_telegram: FakeBotAPI, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long question (not split) reaches A, "а в 2023?" B a moment later: B waits until A
    has recorded the long one, finds its message not taken as a part, and asks it: two
    questions, each whole, neither lost to the other."""
    fake = fake_telegram
    long_one = "Context for my question. " + "NQ trended up on heavy volume that week. " * 72
    async with two_replicas(fake, pg_url, monkeypatch) as (providers, post):
        await post(0, long_one)
        await post(1, "а в 2023?")
        await fake.wait_said(2, chat_id=ALICE)
        assert questions_asked(providers[0]) == [long_one]
        assert questions_asked(providers[1]) == ["а в 2023?"]
        assert await nothing_unhandled(pg_url)


async def test_a_part_taken_from_the_store_is_not_joined_again_by_its_own_handler() -> None:
    """A part waiting behind the long one (its handler polling the store) may find the
    gathering open here after the gatherer took it from the store: it was read as a message
    of its own (too short to follow itself), and asked a second time, alone, once the
    question was recorded. Now it is known as taken: joined, once."""
    split = SplitQuestions(window_s=3600)
    key = (ALICE, None, ALICE)
    gathered: list[Gathered] = []

    async def first_part() -> None:
        async with split.gather(key, FIRST, FIRST, update_id=1) as gathering:
            gathered.append(gathering)

    gathering_task = asyncio.create_task(first_part())
    while key not in split._open:
        await asyncio.sleep(0)
    gathering = split._open[key]
    gathering.parts.append(Part(2, SECOND, utf16_length(SECOND)))  # as ``after`` adds it
    joining = asyncio.create_task(split.join(key, SECOND, 2))
    await asyncio.sleep(0)
    assert [p.update_id for p in gathering.parts] == [1, 2]
    assert gathering.text == FIRST + "\n" + SECOND
    gathering_task.cancel()
    assert await joining is True
