"""In a group each member's plans are their own: another member's /cancel, /reset or new
question leaves them (and their buttons) alone; through the real PTB Application against
the fake Bot API, with the scripted model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from bot_harness import (
    ALICE,
    BOB,
    GROUP,
    WEEKDAY_RANGE,
    ask_and_get_plan,
    barb_bot,
    keyboard_data,
    press,
)
from fake_bot_api import FakeBotAPI

from bot.llm.messages import ModelRequest
from bot.llm.scripted import text, tool_call, turn


def mention(fake: FakeBotAPI, text: str) -> str:
    return f"@{fake.bot['username']} {text}"


def command(fake: FakeBotAPI, name: str) -> str:
    return f"/{name}@{fake.bot['username']}"


async def in_group(fake: FakeBotAPI, user_id: int, text: str) -> dict[str, Any]:
    name = "Bob" if user_id == BOB else "Alice"
    return await ask_and_get_plan(
        fake, GROUP, user_id, text, chat_type="supergroup", first_name=name
    )


async def test_another_members_cancel_reset_and_question_leave_a_plan_alone(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        await in_group(fake, BOB, mention(fake, "hello"))  # answered at once, remembered
        await in_group(fake, ALICE, mention(fake, "hello"))
        bobs = await in_group(fake, BOB, mention(fake, "weekday ranges"))
        assert "Plan:" in bobs["text"] and len(keyboard_data(bobs)) == 2

        # Alice has nothing waiting: her /cancel says so and ends nothing.
        said = await in_group(fake, ALICE, command(fake, "cancel"))
        assert said["text"] == "There is no plan waiting to be cancelled."
        # Her own question gets her own plan; Bob's keeps its buttons.
        alices = await in_group(fake, ALICE, mention(fake, "weekday ranges please"))
        assert len(keyboard_data(alices)) == 2
        # Her /reset forgets her part only, and drops her plan, not Bob's.
        said = await in_group(fake, ALICE, command(fake, "reset"))
        assert said["text"].startswith("Your questions in this chat are forgotten")
        assert keyboard_data(fake.message(GROUP, alices["message_id"])) == []
        assert keyboard_data(fake.message(GROUP, bobs["message_id"])) == keyboard_data(bobs)
        assert fake.message(GROUP, alices["message_id"])["text"].endswith("⏵ Cancelled.")
        edited = fake.calls("editMessageReplyMarkup", chat_id=GROUP)
        edited += fake.calls("editMessageText", chat_id=GROUP)
        assert bobs["message_id"] not in [r.params["message_id"] for r in edited]
        # Bob's question is still in the conversation; Alice's is gone.
        kept = await svc.store.transcript.recent(GROUP, 10)
        assert [m.user_id for m in kept if m.role == "user"] == [BOB]

        # Bob's Run still runs his plan.
        run, _ = keyboard_data(bobs)
        await press(fake, GROUP, BOB, bobs, run)
        await fake.wait_for("sendPhoto", chat_id=GROUP)
        assert "Done" in (await _plan_after(fake, bobs))["text"]

        # And Bob's own /cancel ends his own next plan.
        again = await in_group(fake, BOB, mention(fake, "weekday ranges again"))
        said = await in_group(fake, BOB, command(fake, "cancel"))
        assert said["text"] == "The plan is cancelled; nothing was run."
        assert keyboard_data(fake.message(GROUP, again["message_id"])) == []


async def test_each_forum_topic_is_asked_with_its_own_conversation(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """A question in topic 88 was asked with topic 77's question and answer as history
    (p46ac #6): each topic is a conversation of its own, General too."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        requests = svc.assistant.provider.requests  # type: ignore[attr-defined]

        async def asked_in(thread_id: int | None, user_id: int, text: str) -> list[str]:
            kw: dict[str, Any] = {} if thread_id is None else {"thread_id": thread_id}
            said = await ask_and_get_plan(
                fake, GROUP, user_id, mention(fake, text), chat_type="supergroup", **kw
            )
            assert said.get("message_thread_id") == thread_id
            return [m.text or "" for m in requests[-1].messages]

        await asked_in(77, ALICE, "hello from topic 77")
        seen = await asked_in(88, BOB, "hi from topic 88")
        assert not any("topic 77" in s for s in seen), seen
        seen = await asked_in(None, BOB, "hi from General")
        assert not any("topic" in s for s in seen), seen
        # A follow-up in topic 77 is asked with topic 77's question, whoever asks it.
        seen = await asked_in(77, BOB, "and in topic 77 again?")
        assert any("hello from topic 77" in s for s in seen), seen
        assert not any("topic 88" in s or "General" in s for s in seen[:-1]), seen


async def _plan_after(fake: FakeBotAPI, plan: dict[str, Any]) -> dict[str, Any]:
    """The plan message once its run has ended ("Done." edited in)."""
    # Running…, then Done. (Another member's plan dropped by /reset is edited too.)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 20
    while len(_edits_of(fake, plan)) < 2:
        assert loop.time() < deadline, fake.describe()
        await asyncio.sleep(0.02)
    return fake.message(GROUP, plan["message_id"])


def _edits_of(fake: FakeBotAPI, plan: dict[str, Any]) -> list[Any]:
    edits = fake.calls("editMessageText", chat_id=GROUP)
    return [r for r in edits if r.status and r.params["message_id"] == plan["message_id"]]


@pytest.mark.parametrize(
    ("lang", "starts"),
    [("en", "Yes? Write your question after the mention"), ("ru", "Да? Напишите вопрос")],
)
async def test_a_bare_mention_gets_a_prompt_of_what_to_ask(
    fake_telegram: FakeBotAPI, db_url: str, lang: str, starts: str
) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        mentioned = fake.message_update(
            chat_id=GROUP,
            user_id=ALICE,
            text=f"@{fake.bot['username']}",
            chat_type="supergroup",
            language_code=lang,
        )
        fake.inject(mentioned)
        [prompt] = await fake.wait_said(1, chat_id=GROUP)
        assert prompt["text"].startswith(starts)
        assert f"@{fake.bot['username']} " in prompt["text"]  # an example to copy
        assert prompt["reply_to_message"]["message_id"] == mentioned["message"]["message_id"]
        assert svc.assistant.provider.requests == []


async def test_query_pressed_by_another_member_is_in_the_answer_s_language_and_thread(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """p38c C25, C28: Bob (an English phone) pressed Query under Alice's Russian answer and
    got an English header above the Russian plan, in a message replying to nothing while
    the plan, the chart and the CSV reply to Alice's question. Now it is in the answer's
    language, as Run and Cancel are, and replies to the question as the answer does."""
    fake = fake_telegram
    async with barb_bot(fake, db_url):
        question = mention(fake, "средний диапазон по дням недели (weekday)?")
        plan = await ask_and_get_plan(
            fake, GROUP, ALICE, question, chat_type="supergroup", language_code="ru"
        )
        asked = plan["reply_to_message"]["message_id"]
        await press(fake, GROUP, ALICE, plan, keyboard_data(plan)[0], language_code="ru")
        [photo] = await fake.wait_for("sendPhoto", chat_id=GROUP)
        assert photo.result["reply_to_message"]["message_id"] == asked
        said = len(fake.said(GROUP))
        [_, query_button] = keyboard_data(photo.result)
        await press(fake, GROUP, BOB, photo.result, query_button, language_code="en")
        [*_, shown] = await fake.wait_said(said + 1, chat_id=GROUP)
        assert shown["text"].startswith("Barb Script, которым посчитан ответ (повторить: /query):")
        # The plan, in Russian.
        assert "Посчитаю: средний диапазон (range), по дню недели (weekday)" in shown["text"]
        assert shown["reply_to_message"]["message_id"] == asked


#: Telegram's account every anonymous admin of a group writes as (``sender_chat``: the group).
ANONYMOUS_ADMIN = 1087968824


async def asked_anonymously(fake: FakeBotAPI, text: str) -> dict[str, Any]:
    """What the bot says next after an anonymous admin of ``GROUP`` writes ``text``."""
    update = fake.message_update(
        chat_id=GROUP,
        user_id=ANONYMOUS_ADMIN,
        text=text,
        chat_type="supergroup",
        first_name="Group",
        username="GroupAnonymousBot",
        language_code="",
    )
    update["message"]["from"]["is_bot"] = True
    update["message"]["sender_chat"] = {"id": GROUP, "type": "supergroup", "title": "Test group"}
    before = len(fake.said(GROUP))
    fake.inject(update)
    return (await fake.wait_said(before + 1, chat_id=GROUP))[before]


async def toast_after(fake: FakeBotAPI, user_id: int, message: dict[str, Any], data: str) -> str:
    """``user_id`` presses ``data``; the sentence the press is answered with."""
    before = len(fake.calls("answerCallbackQuery"))
    await press(fake, GROUP, user_id, message, data)
    answered = await fake.wait_for("answerCallbackQuery", before + 1)
    return answered[before].params.get("text") or ""


async def test_an_anonymous_admins_plan_is_pressed_by_the_groups_admins_only(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Anonymous admins write as GroupAnonymousBot (1087968824) but press as themselves: the
    plan was owned by 1087968824 and nobody could press it, the admin who asked included
    ("Only the person who asked can press this."), p46ac #9. It is the group's now: any of
    its admins runs or cancels it, a member cannot, and an anonymous /cancel is the
    group's, leaving Alice's own plan alone."""
    fake = fake_telegram
    fake.chat_admins[GROUP] = {ALICE: "administrator"}
    async with barb_bot(fake, db_url) as svc:
        plan = await asked_anonymously(fake, mention(fake, "weekday ranges"))
        run, cancel = keyboard_data(plan)
        toast = await toast_after(fake, BOB, plan, run)
        assert toast == "An admin asked this anonymously: only the group's admins can press it."
        assert keyboard_data(fake.message(GROUP, plan["message_id"])) == [run, cancel]
        assert fake.calls("sendPhoto", chat_id=GROUP) == []

        # Telegram cannot say whether Alice is an admin: nothing runs, and she is told.
        fake.fail_next("getChatMember", error_code=502)
        toast = await toast_after(fake, ALICE, plan, run)
        assert toast.startswith("Could not check whether you are the group's admin")
        assert fake.calls("sendPhoto", chat_id=GROUP) == []

        await press(fake, GROUP, ALICE, plan, run)  # an admin, from her own account
        await fake.wait_for("sendPhoto", chat_id=GROUP)
        assert "Done" in (await _plan_after(fake, plan))["text"]
        asked = [
            m.user_id for m in await svc.store.transcript.recent(GROUP, 10) if m.role == "user"
        ]
        assert asked == [GROUP]

        # An admin may not press a member's plan: that stays the member's.
        bobs = await in_group(fake, BOB, mention(fake, "weekday ranges"))
        toast = await toast_after(fake, ALICE, bobs, keyboard_data(bobs)[0])
        assert toast == "Only the person who asked can press this."

        # Alice's own plan, then the group's next one: an anonymous /cancel drops the
        # group's and leaves hers; her press cancels the group's next one.
        alices = await in_group(fake, ALICE, mention(fake, "weekday ranges, mine"))
        await asked_anonymously(fake, mention(fake, "weekday ranges again"))
        said = await asked_anonymously(fake, f"/cancel@{fake.bot['username']}")
        assert said["text"] == "The plan is cancelled; nothing was run."
        assert len(keyboard_data(fake.message(GROUP, alices["message_id"]))) == 2
        again = await asked_anonymously(fake, mention(fake, "weekday ranges once more"))
        assert await toast_after(fake, ALICE, again, keyboard_data(again)[1]) == "Cancelled."
        open_plans = await svc.store.pending.open_for_chat(GROUP)
        assert [(p.user_id, p.message_id) for p in open_plans] == [
            (BOB, bobs["message_id"]),
            (ALICE, alices["message_id"]),
        ]


def best_by_what(request: ModelRequest) -> Any:
    """Asks back on "best", plans on the reply, answers from the result."""
    last = request.messages[-1]
    if last.role == "user" and "best" in (last.text or ""):
        return tool_call(
            "ask_user_clarification",
            question_text="Best by what?",
            suggested_replies=["Widest range", "Biggest gain"],
            expected_response_format_hint="",
        )
    if last.role == "user" or "Widest" in last.tool_results[-1].content:
        return turn("Weekday ranges.", tool_call("execute_query", query=WEEKDAY_RANGE))
    return text("Answer: " + last.tool_results[-1].content.splitlines()[0])


async def test_a_suggested_reply_to_an_anonymous_admin_counts_as_the_groups_question(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """An anonymous admin asked "best day?", Barb asked back, and Alice, an admin who had
    asked twice in her private chat, pressed "Widest range": the group read "You are asking
    faster than I can answer; please wait 53 s.", replying to nobody, and the group's
    question stayed unanswered. The reply is the group's question, limited as the group's:
    it is planned, under the question; the group's next question is the one past the limit,
    told so under it."""
    fake = fake_telegram
    fake.chat_admins[GROUP] = {ALICE: "administrator"}
    async with barb_bot(fake, db_url, model=best_by_what, questions_per_minute=2):
        asked = await asked_anonymously(fake, mention(fake, "which weekday is best?"))
        assert asked["text"] == "Best by what?"
        question = asked["reply_to_message"]["message_id"]
        for n in (1, 2):
            await ask_and_get_plan(fake, ALICE, ALICE, f"weekday ranges {n}")
        said = len(fake.said(GROUP))
        await press(fake, GROUP, ALICE, asked, keyboard_data(asked)[0])
        [*_, plan] = await fake.wait_said(said + 1, chat_id=GROUP)
        assert plan["text"].startswith("Weekday ranges.") and len(keyboard_data(plan)) == 2
        assert plan["reply_to_message"]["message_id"] == question

        # The group's two questions are its limit: its third waits, told so under it.
        third = await asked_anonymously(fake, mention(fake, "weekday ranges"))
        assert third["text"].startswith("You are asking faster than I can answer")
        assert third["reply_to_message"]["text"].endswith("weekday ranges")


async def test_a_question_in_another_topic_neither_answers_nor_replaces_a_plan(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Alice asked "which weekday is best?" in topic 77 and was asked back; her question in
    topic 88 was taken as her reply to it (the model read "The person answered: weekday
    ranges in 2024"), and a plan waiting in topic 77 was said replaced by it. Each topic is
    a conversation of its own, as its history is."""
    fake = fake_telegram
    async with barb_bot(fake, db_url, model=best_by_what) as svc:
        requests = svc.assistant.provider.requests  # type: ignore[attr-defined]

        async def in_topic(thread_id: int, said: str) -> dict[str, Any]:
            return await ask_and_get_plan(
                fake, GROUP, ALICE, mention(fake, said), chat_type="supergroup", thread_id=thread_id
            )

        asked = await in_topic(77, "which weekday is best?")
        assert asked["text"] == "Best by what?"
        plan = await in_topic(88, "weekday ranges in 2024")
        assert plan["text"].startswith("Weekday ranges.") and plan["message_thread_id"] == 88
        assert requests[-1].messages[-1].text.endswith("weekday ranges in 2024")
        assert keyboard_data(fake.message(GROUP, asked["message_id"])) == keyboard_data(asked)

        # Her reply in topic 77 answers its question there; topic 88's plan stays as it was.
        answered = await in_topic(77, "Widest range")
        assert answered["message_thread_id"] == 77 and len(keyboard_data(answered)) == 2
        assert "Widest range" in requests[-1].messages[-1].tool_results[-1].content
        assert fake.message(GROUP, plan["message_id"])["text"] == plan["text"]
        await press(fake, GROUP, ALICE, plan, keyboard_data(plan)[0])
        [photo] = await fake.wait_for("sendPhoto", chat_id=GROUP)
        assert photo.params["message_thread_id"] == 88
        assert "Answer:" in photo.result["caption"]
