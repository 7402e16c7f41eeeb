"""What a person sends that is not a plain new question: an edit of a question already
planned, and a picture with a question as its caption. Read as they arrive on the fake Bot
API: what the person is told must be true, and Run must run what the plan showed."""

from __future__ import annotations

import time

from bot_harness import ALICE, GROUP, barb_bot, brain, keyboard_data, press
from fake_bot_api import FakeBotAPI, media

from bot.llm.scripted import ScriptedProvider
from bot.texts import t


def edited(update: dict, text: str) -> dict:
    """``update``'s message as Telegram sends it once its author edited it to ``text``."""
    message = {**update["message"], "text": text, "edit_date": int(time.time())}
    return {"edited_message": message}


async def test_an_edited_question_is_not_asked_again_and_the_person_is_told(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """ "weekday ranges?" planned, then the question edited to ES: the edit was dropped
    without a word, and Run ran the NQ plan while the person believed it was ES's. Now the
    edit gets one plain sentence (in the edit's language), no model call, and Run runs
    the plan as shown."""
    fake = fake_telegram
    provider = ScriptedProvider([brain] * 10)
    async with barb_bot(fake, db_url, provider=provider):
        question = fake.message_update(chat_id=ALICE, user_id=ALICE, text="weekday ranges?")
        fake.inject(question)
        [plan] = await fake.wait_said(1, chat_id=ALICE)
        assert "NQ" in plan["text"] and len(keyboard_data(plan)) == 2
        calls = len(provider.requests)

        fake.inject(edited(question, "weekday ranges of ES?"))
        said = await fake.wait_said(2, chat_id=ALICE)
        assert said[1]["text"] == t("edit_not_read", "en")
        assert "*" not in said[1]["text"] and "<" not in said[1]["text"]
        fake.inject(edited(question, "средний диапазон ES по дням недели?"))
        said = await fake.wait_said(3, chat_id=ALICE)
        assert said[2]["text"] == t("edit_not_read", "ru")
        assert len(provider.requests) == calls  # no model call for an edit

        run, _ = keyboard_data(plan)
        await press(fake, ALICE, ALICE, plan, run)
        said = await fake.wait_said(4, chat_id=ALICE)
        assert "Answer: Result: 5 groups by weekday" in said[3]["text"]
        [tool] = [m for m in provider.requests[-1].messages if m.role == "tool"]
        assert "Scanned" in tool.tool_results[0].content
        assert " of NQ," in tool.tool_results[0].content  # the plan's, not the edit's ES


async def test_a_picture_with_a_question_as_its_caption_is_asked_its_caption(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """A chart screenshot captioned "weekday ranges?" was told "I read text only: ask about
    the bars in words", which it had. Now the caption is asked, said first that the picture
    is not seen; a picture without words still gets the one line; in a group, a picture
    not addressed to Barb gets nothing."""
    fake = fake_telegram
    async with barb_bot(fake, db_url):
        fake.inject(
            fake.message_update(
                chat_id=ALICE, user_id=ALICE, text="weekday ranges?", media=media("photo")
            )
        )
        said = await fake.wait_said(2, chat_id=ALICE)
        assert said[0]["text"] == t("caption_asked", "en")
        assert "NQ" in said[1]["text"] and len(keyboard_data(said[1])) == 2

        fake.inject(
            fake.message_update(chat_id=ALICE, user_id=ALICE, text="", media=media("photo"))
        )
        said = await fake.wait_said(3, chat_id=ALICE)
        assert said[2]["text"] == t("not_text", "en")

        fake.inject(
            fake.message_update(
                chat_id=GROUP, user_id=ALICE, text="weekday ranges?", media=media("photo")
            )
        )
        fake.inject(
            fake.message_update(chat_id=GROUP, user_id=ALICE, text=f"@{fake.bot['username']} hi")
        )
        said = await fake.wait_said(1, chat_id=GROUP)
        assert len(said) == 1 and said[0]["text"] == "Hi! Ask me about the bars."
