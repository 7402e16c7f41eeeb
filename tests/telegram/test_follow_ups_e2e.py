"""Follow-up questions in a conversation, through the real PTB Application against the fake
Bot API, reading what the scripted model was sent for each: the chat's instrument as the
person set it, the instrument a confirmed plan was shown with, the numbers of the data
shown before, and in a group, each member's own question and data."""

from __future__ import annotations

from bot_harness import (
    ALICE,
    BOB,
    GROUP,
    ask_and_get_plan,
    barb_bot,
    keyboard_data,
    press,
)
from fake_bot_api import FakeBotAPI

from bot.llm.messages import ModelRequest
from bot.llm.scripted import ScriptedProvider, text, tool_call, turn

COUNT_DAYS = {"session": "RTH", "from": "daily", "select": "count()"}


async def run_and_wait(fake: FakeBotAPI, chat_id: int, user_id: int, plan: dict, n: int):
    """Press Run under ``plan``; what the chat has read once ``n`` messages are there."""
    run, _ = keyboard_data(plan)
    await press(fake, chat_id, user_id, plan, run)
    return await fake.wait_said(n, chat_id=chat_id)


def current_instrument(request: ModelRequest) -> str:
    [line] = [x for x in request.system.splitlines() if x.startswith("Current instrument:")]
    return line


async def test_instrument_typed_with_the_command_is_the_next_question_s(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """ "/instrument ES" then a question: the symbol was ignored, the buttons shown, and the
    question was asked and planned on NQ."""
    fake = fake_telegram
    provider = ScriptedProvider(
        [turn("Counting days.", tool_call("execute_query", query=COUNT_DAYS)), text("Done.")]
    )
    async with barb_bot(fake, db_url, provider=provider) as svc:
        said = await ask_and_get_plan(fake, ALICE, ALICE, "/instrument es")
        assert said["text"] == "Instrument set to ES (S&P 500 E-mini)."
        assert keyboard_data(said) == []
        assert (await svc.store.chats.get(ALICE)).instrument == "ES"
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "how many days?")
        assert current_instrument(provider.requests[-1]).startswith("Current instrument: ES")
        assert "ES" in plan["text"] and "NQ" not in plan["text"]
        # A symbol Barb does not know gets the buttons, and changes nothing.
        said = await ask_and_get_plan(fake, ALICE, ALICE, "/instrument XYZ")
        assert keyboard_data(said) == ["i:CL", "i:ES", "i:NQ"]
        assert (await svc.store.chats.get(ALICE)).instrument == "ES"


async def test_an_instrument_typed_in_a_group_is_its_admins_to_set(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """A member who may not press the /instrument buttons may not type past them."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        said = await ask_and_get_plan(
            fake, GROUP, BOB, f"/instrument@{fake.bot['username']} ES", chat_type="supergroup"
        )
        assert keyboard_data(said) == ["i:CL", "i:ES", "i:NQ"]
        assert (await svc.store.chats.get(GROUP)).instrument == "NQ"


async def test_the_answer_to_a_plan_run_after_instrument_changed_is_written_for_its_own(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """An NQ plan, then "/instrument ES", then Run: NQ ran as confirmed, but the model read
    NQ's result under "Current instrument: ES" (ES's sessions and $50 a point)."""
    fake = fake_telegram
    provider = ScriptedProvider(
        [turn("Counting days.", tool_call("execute_query", query=COUNT_DAYS)), text("Done.")]
    )
    async with barb_bot(fake, db_url, provider=provider):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "how many days?")
        assert "NQ" in plan["text"]
        said = await ask_and_get_plan(fake, ALICE, ALICE, "/instrument ES")
        assert said["text"].startswith("Instrument set to ES")
        await run_and_wait(fake, ALICE, ALICE, plan, 3)
        [result] = [r for m in provider.requests[1].messages for r in m.tool_results]
        assert "bars of NQ" in result.content
        assert current_instrument(provider.requests[1]).startswith("Current instrument: NQ")
        assert "worth 20 USD" in provider.requests[1].system
