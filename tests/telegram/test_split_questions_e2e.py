"""A question over 4096 characters, which Telegram's apps send as several messages within
a second, is asked whole, once; a short question is asked at once, as before. Through the
real PTB Application against the fake Bot API, reading what the scripted model was sent."""

from __future__ import annotations

import pytest
from bot_harness import ALICE, BOB, GROUP, barb_bot, keyboard_data
from fake_bot_api import FakeBotAPI

from bot.llm.messages import ModelRequest
from bot.llm.scripted import ScriptedProvider, text, tool_call, turn
from bot.store import StoreSettings, open_store
from bot.telegram.split_questions import LONG_FROM

COUNT_DAYS = {"session": "RTH", "from": "daily", "select": "count()"}


def planner(request: ModelRequest):
    if request.messages[-1].role == "user":
        return turn("Counting days.", tool_call("execute_query", query=COUNT_DAYS))
    return text("Done.")


def questions_asked(provider: ScriptedProvider) -> list[str]:
    """The person's words in each model call that began a question."""
    return [r.messages[-1].text or "" for r in provider.requests if r.messages[-1].role == "user"]


# What an app sends for one pasted message of ~4300 characters: a long part, then the rest.
FIRST = "Context for my question. " + "NQ trended up on heavy volume that week. " * 60
SECOND = "So: how many RTH days are in the data? END-OF-QUESTION"


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
    provider = ScriptedProvider([planner] * 10)
    async with barb_bot(fake, db_url, provider=provider) as svc:
        fake.inject(fake.message_update(chat_id=chat, user_id=ALICE, text=mention + FIRST))
        fake.inject(fake.message_update(chat_id=chat, user_id=ALICE, text=SECOND))
        [plan] = await fake.wait_said(1, chat_id=chat)
        assert keyboard_data(plan)[0].startswith("r:")  # Run, Cancel
        [question] = questions_asked(provider)
        assert FIRST.strip() in question and question.endswith(SECOND)
        assert question.index(FIRST.strip()) < question.index(SECOND)
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
