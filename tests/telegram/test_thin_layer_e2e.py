"""Issue 12 §8: the Telegram layer is thin. One command table feeds the menu and the
handlers; each update loads its chat once; the gate lives in the assistant."""

from __future__ import annotations

from typing import Any

from bot_harness import ALICE, ask_and_get_plan, barb_bot, keyboard_data, press
from fake_bot_api import FakeBotAPI

from bot.llm.scripted import ScriptedProvider, text, tool_call, turn
from bot.telegram.commands import COMMANDS

COUNT_DAYS = {"session": "RTH", "from": "daily", "select": "count()"}


async def test_one_table_feeds_the_menu_in_each_language_and_the_handlers(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url):
        await fake.wait_for("setMyCommands", 2)
        english = fake.my_commands()
        russian = fake.my_commands(language_code="ru")
        names = [c.name for c in COMMANDS]
        assert [c["command"] for c in english] == names == [c["command"] for c in russian]
        assert english[0]["description"] == "What Barb does, with examples"
        assert russian[0]["description"] == "Что умеет Barb, с примерами"
        # Every command in the menu has a handler: none is answered as unknown.
        for name in names:
            if name in ("start", "query", "cancel"):
                continue  # these have their own end-to-end tests
            reply = await ask_and_get_plan(fake, ALICE, ALICE, f"/{name}")
            assert not reply["text"].startswith("I don't know"), name


async def test_each_update_reads_its_chat_once(fake_telegram: FakeBotAPI, db_url: str) -> None:
    fake = fake_telegram
    provider = ScriptedProvider(
        [turn("Counting days.", tool_call("execute_query", query=COUNT_DAYS)), text("Done.")]
    )
    async with barb_bot(fake, db_url, provider=provider) as svc:
        reads: list[str] = []
        chats = svc.store.chats
        real_get, real_ensure = chats.get, chats.ensure

        inside_ensure = False

        async def get(chat_id: int) -> Any:
            if not inside_ensure:  # ensure reads through get: one read, counted once
                reads.append("get")
            return await real_get(chat_id)

        async def ensure(chat_id: int, chat_type: Any) -> Any:
            nonlocal inside_ensure
            reads.append("ensure")
            inside_ensure = True
            try:
                return await real_ensure(chat_id, chat_type)
            finally:
                inside_ensure = False

        chats.get, chats.ensure = get, ensure  # type: ignore[method-assign]
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "how many days?")
        assert reads == ["ensure"]  # the question: once, though the assistant needs it too
        reads.clear()
        await press(fake, ALICE, ALICE, plan, keyboard_data(plan)[0])
        await fake.wait_said(2, chat_id=ALICE)
        assert reads == ["ensure"]  # the Run press: once, though it runs and answers
        reads.clear()
        await ask_and_get_plan(fake, ALICE, ALICE, "/settings")
        assert reads == ["ensure"]
