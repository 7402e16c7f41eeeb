"""What in a chat is not a new question: edits, channel posts, a linked channel's posts
forwarded into its discussion group; a suggested reply's plan in a group; and a group that
Telegram upgrades to a supergroup (a new chat id) while a plan waits. Through the real PTB
Application against the fake Bot API, with the scripted model."""

from __future__ import annotations

import asyncio
import time
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
    settled_outbox,
)
from fake_bot_api import FakeBotAPI, command_entities, mention_entities
from test_commands_meanwhile import HeldModel, HeldRunner

from bot.llm.messages import ModelRequest
from bot.llm.scripted import ScriptedProvider, text, tool_call, turn
from bot.telegram.services import BotServices
from bot.texts import t

#: A basic group, and the supergroup Telegram makes of it.
OLD, NEW = -555, -100777
CHANNEL = -100900
#: Telegram's account that forwards a linked channel's posts into its discussion group,
#: and the one a member posting as their channel is shown as.
TELEGRAM, CHANNEL_BOT = 777000, 136817688


def mention(fake: FakeBotAPI, said: str) -> str:
    return f"@{fake.bot['username']} {said}"


def asked(fake: FakeBotAPI, chat_id: int, said: str, chat_type: str) -> None:
    fake.inject(
        fake.message_update(
            chat_id=chat_id, user_id=ALICE, text=mention(fake, said), chat_type=chat_type
        )
    )


async def handled(fake: FakeBotAPI, svc: BotServices, update_id: int) -> None:
    """Until the bot has stored ``update_id`` and its handlers have ended."""
    await fake.wait_confirmed(update_id)
    async with asyncio.timeout(10):
        while update_id in {u for u, _ in await svc.store.updates.unhandled()}:
            await asyncio.sleep(0.02)


def broke(message: dict[str, Any]) -> bool:
    """The internal-error sentence, in English or (the group chose it) Russian."""
    return any(words in message.get("text", "") for words in ("Something broke", "сломалось"))


def posted_as_channel(fake: FakeBotAPI, message_id: int, said: str, **extra: Any) -> dict:
    """A message in the group sent on behalf of the channel ``CHANNEL``."""
    return {
        "message_id": message_id,
        "sender_chat": {"id": CHANNEL, "type": "channel", "title": "Chan"},
        "chat": {"id": GROUP, "type": "supergroup", "title": "Test group"},
        "date": int(time.time()),
        "text": said,
        "entities": fake.mention_entities(said),
        **extra,
    }


async def test_an_edited_question_is_not_answered_again(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Fixing a typo in an answered question got a second answer and a second model call.
    It is said once that edits are not read (``test_edits_and_captions_e2e``)."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        asked = fake.message_update(chat_id=ALICE, user_id=ALICE, text="hello")
        fake.inject(asked)
        await fake.wait_said(1, chat_id=ALICE)
        calls = len(svc.assistant.provider.requests)  # type: ignore[attr-defined]
        edited = dict(asked["message"], text="hello!", edit_date=int(time.time()))
        await handled(fake, svc, fake.inject({"edited_message": edited}))
        # Handled is not yet delivered: the sentence goes out through the outbox.
        await fake.wait_said(2, chat_id=ALICE)
        assert fake.said(ALICE)[-1]["text"] == t("edit_not_read", "en")
        # An edited command is not run again either, nor said anything about.
        command = fake.message_update(chat_id=ALICE, user_id=ALICE, text="/help")
        fake.inject(command)
        await fake.wait_said(3, chat_id=ALICE)
        edited = dict(command["message"], text="/help ", edit_date=int(time.time()))
        await handled(fake, svc, fake.inject({"edited_message": edited}))

        assert len(svc.assistant.provider.requests) == calls  # type: ignore[attr-defined]
        assert len(fake.said(ALICE)) == 3, [m.get("text") for m in fake.said(ALICE)]


async def test_a_channel_post_mentioning_the_bot_is_ignored(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """A channel post has no sender: it ended in "Something broke on my side (reference …)"
    posted to every subscriber of the channel."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        for number, said in enumerate(
            [mention(fake, "weekday ranges"), f"/help@{fake.bot['username']}"], start=5
        ):
            post = {
                "message_id": number,
                "sender_chat": {"id": CHANNEL, "type": "channel", "title": "Chan"},
                "chat": {"id": CHANNEL, "type": "channel", "title": "Chan"},
                "date": int(time.time()),
                "text": said,
                "entities": command_entities(said) + mention_entities(said),
            }
            await handled(fake, svc, fake.inject({"channel_post": post}))
        assert fake.calls("sendMessage", chat_id=CHANNEL) == []
        assert svc.assistant.provider.requests == []  # type: ignore[attr-defined]


async def test_posts_sent_as_a_channel_in_a_group_are_ignored(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """A linked channel's post, forwarded into the discussion group by Telegram (777000),
    that mentions the bot got a plan owned by 777000: no member could press its Run or
    Cancel. A member posting as their channel is no one to answer either."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        said = mention(fake, "weekday ranges")
        forwarded = posted_as_channel(
            fake,
            40,
            said,
            is_automatic_forward=True,
            **{"from": {"id": TELEGRAM, "is_bot": False, "first_name": "Telegram"}},
        )
        await handled(fake, svc, fake.inject({"message": forwarded}))
        as_channel = posted_as_channel(
            fake,
            41,
            said,
            **{"from": {"id": CHANNEL_BOT, "is_bot": True, "first_name": "Channel"}},
        )
        await handled(fake, svc, fake.inject({"message": as_channel}))

        assert fake.said(GROUP) == []
        assert svc.assistant.provider.requests == []  # type: ignore[attr-defined]
        assert await svc.store.pending.open_for_chat(GROUP, user_id=TELEGRAM) == []
        # A member's own question in the same group is answered as before.
        plan = await ask_and_get_plan(fake, GROUP, ALICE, said, chat_type="supergroup")
        assert len(keyboard_data(plan)) == 2


async def test_the_plan_after_a_suggested_reply_replies_to_the_question(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Every plan in a group replies to its question, in its topic; the one that came after
    a suggested reply was pressed replied to nothing."""

    def model(request: ModelRequest) -> Any:
        last = request.messages[-1]
        if last.role == "user":
            return tool_call(
                "ask_user_clarification",
                question_text="Widest range or biggest rise?",
                suggested_replies=["Widest range", "Biggest rise"],
            )
        if "Widest range" in last.tool_results[-1].content:
            return turn("Weekday ranges.", tool_call("execute_query", query=WEEKDAY_RANGE))
        return text("Answer.")

    fake = fake_telegram
    async with barb_bot(fake, db_url, provider=ScriptedProvider([model] * 20)):
        asked = fake.message_update(
            chat_id=GROUP,
            user_id=ALICE,
            text=mention(fake, "best day?"),
            chat_type="supergroup",
            thread_id=77,
        )
        fake.inject(asked)
        [clarification] = await fake.wait_said(1, chat_id=GROUP)
        await press(fake, GROUP, ALICE, clarification, keyboard_data(clarification)[0])
        [_, plan] = await fake.wait_said(2, chat_id=GROUP)

        assert len(keyboard_data(plan)) == 2  # Run, Cancel
        assert plan.get("message_thread_id") == 77
        question = asked["message"]["message_id"]
        for message in (clarification, plan):
            assert (message.get("reply_to_message") or {}).get("message_id") == question


async def group_plan(fake: FakeBotAPI, svc: BotServices) -> dict[str, Any]:
    """Alice's plan waiting in the basic group ``OLD``, which has chosen Russian since."""
    plan = await ask_and_get_plan(
        fake, OLD, ALICE, mention(fake, "weekday ranges"), chat_type="group"
    )
    assert len(keyboard_data(plan)) == 2
    await svc.store.chats.update_settings(OLD, language="ru")
    return plan


async def run_in_supergroup(fake: FakeBotAPI, plan: dict[str, Any]) -> list[dict[str, Any]]:
    """Alice presses Run on the plan as the supergroup shows it; what the bot says there."""
    await press(fake, NEW, ALICE, fake.message(NEW, plan["message_id"]), keyboard_data(plan)[0])
    await fake.wait_for("sendPhoto", 1, chat_id=NEW)
    return fake.said(NEW)


async def moved(svc: BotServices) -> None:
    """The group's settings, conversation and plan are the supergroup's now."""
    chat = await svc.store.chats.get(NEW)
    assert chat is not None and chat.settings.language == "ru"
    asked = [m for m in await svc.store.transcript.recent(NEW, 5) if m.role == "user"]
    assert [m.user_id for m in asked] == [ALICE]
    assert await svc.store.transcript.recent(OLD, 5) == []
    assert await svc.store.pending.open_for_chat(OLD, user_id=ALICE) == []
    assert await settled_outbox(svc) == []


async def test_a_plan_waiting_when_the_group_becomes_a_supergroup_runs_there(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """The answer went to the old id, Telegram refused it (ChatMigrated), and the new
    supergroup got "Something broke"; its settings and conversation stayed behind."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        plan = await group_plan(fake, svc)
        for update_id in fake.upgrade_group(OLD, NEW, user_id=ALICE):
            await handled(fake, svc, update_id)
        said = await run_in_supergroup(fake, plan)

        assert not any(broke(m) for m in said), said
        assert "Answer:" in said[-1]["caption"]
        # Nothing more went to the old id: the move came before the answer.
        assert [r.status for r in fake.calls("sendPhoto", chat_id=OLD)] == []
        await moved(svc)


async def test_a_plan_status_refused_as_migrated_moves_the_chat_as_a_send_does(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Without Telegram's service messages first, the first call refused at the group's id
    is the plan's "Running…": the refusal names the new id, and the group's state moves
    there then, the move stored for the other replicas (``chats.moved_to``), as a refused
    send moves it. Before, the edit went on at the new id and nothing else knew: the chart
    went to the group first, to be refused again, and so did the "Done." edit."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        plan = await group_plan(fake, svc)
        fake.upgrade_group(OLD, NEW, user_id=ALICE, announce=False)
        chart = fake.hold_next("sendPhoto")
        await press(fake, NEW, ALICE, fake.message(NEW, plan["message_id"]), keyboard_data(plan)[0])
        await chart.arrived()
        # Recorded before the answer: it goes straight to the supergroup.
        assert fake.calls("sendPhoto")[-1].params["chat_id"] == NEW
        assert await svc.store.chats.moves_of([NEW]) == [(OLD, NEW)]
        chart.release()
        await fake.wait_for("sendPhoto", 1, chat_id=NEW)
        said = fake.said(NEW)

        assert not any(broke(m) for m in said), said
        assert "Answer:" in said[-1]["caption"]
        assert fake.calls("sendPhoto", chat_id=OLD) == []
        # One refusal, "Running…"'s; "Done." went to the supergroup at once.
        assert [r.status for r in fake.calls("editMessageText", chat_id=OLD)] == [400]
        await moved(svc)


@pytest.mark.parametrize("upgraded", [False, True], ids=["never-moved", "moved"])
async def test_a_question_sent_before_the_upgrade_keeps_its_conversation(
    fake_telegram: FakeBotAPI, db_url: str, upgraded: bool
) -> None:
    """Alice had a conversation in group OLD ("hello" answered) and a plan waiting. The
    group is upgraded (no service message yet: it queues behind her message after a
    restart or a backlog); her next question, sent in the group just before, is handled
    now. Its "plan replaced" edit is refused as migrated. Had the edit recorded the move
    then (r48a), the model, asked under OLD, saw no history and the turn was stored where
    nothing reads it; the answer's refused send records it, the turn moving with the rest."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        asked(fake, OLD, "hello", "group")
        await fake.wait_said(1, chat_id=OLD)
        asked(fake, OLD, "weekday ranges", "group")
        [_, plan] = await fake.wait_said(2, chat_id=OLD)
        assert len(keyboard_data(plan)) == 2
        where = OLD
        if upgraded:
            fake.upgrade_group(OLD, NEW, user_id=ALICE, announce=False)
            where = NEW

        asked(fake, OLD, "hello again", "group")
        await fake.wait_said(1 if upgraded else 3, chat_id=where)
        assert await settled_outbox(svc) == []

        requests = svc.assistant.provider.requests  # type: ignore[attr-defined]
        seen = [m.text for m in requests[-1].messages if m.role == "user"]
        questions = [
            m.payload.get("text")
            for m in await svc.store.transcript.recent(where, 10)
            if m.role == "user"
        ]
        left = [m.payload.get("text") for m in await svc.store.transcript.recent(OLD, 10)]
        problems = []
        # The model is asked with the conversation so far, as in a group that never moved.
        if not any(s == "hello" for s in seen):
            problems.append(f"model saw no history: {seen}")
        # The turn is the supergroup's conversation, not left under the group's id.
        if "hello again" not in questions:
            problems.append(f"turn not in {where}'s conversation: {questions}")
        if upgraded and left:
            problems.append(f"left under the group's id {OLD}: {left}")
        assert not problems, problems


async def test_a_plan_said_replaced_in_the_moved_group_is_declined(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Same flow: the waiting plan's message says it was replaced (edited at NEW), and the
    plan is declined, not left "pending" in the supergroup."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        asked(fake, OLD, "weekday ranges", "group")
        [plan] = await fake.wait_said(1, chat_id=OLD)
        fake.upgrade_group(OLD, NEW, user_id=ALICE, announce=False)
        asked(fake, OLD, "hello again", "group")
        await fake.wait_said(1, chat_id=NEW)
        assert await settled_outbox(svc) == []
        shown = fake.message(NEW, plan["message_id"])
        assert keyboard_data(shown) == []  # edited: "replaced by a newer question"
        still = [a.status for a in await svc.store.pending.open_for_chat(NEW, user_id=ALICE)]
        assert "pending" not in still, still


async def test_a_reset_sent_before_the_upgrade_forgets_what_moved(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Alice's /reset, sent in group OLD just before the upgrade, handled after it: its plan
    edit ("Cancelled.") is refused as migrated, and what she is told is forgotten is, in
    the supergroup too."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        asked(fake, OLD, "hello", "group")
        await fake.wait_said(1, chat_id=OLD)
        asked(fake, OLD, "weekday ranges", "group")
        await fake.wait_said(2, chat_id=OLD)
        fake.upgrade_group(OLD, NEW, user_id=ALICE, announce=False)
        reset = f"/reset@{fake.bot['username']}"
        fake.inject(fake.message_update(chat_id=OLD, user_id=ALICE, text=reset, chat_type="group"))
        await fake.wait_said(1, chat_id=NEW)
        assert await settled_outbox(svc) == []
        kept = [m for m in await svc.store.transcript.recent(NEW, 10) if m.user_id == ALICE]
        assert kept == [], [m.payload for m in kept]


async def test_cancel_in_the_supergroup_stops_the_question_asked_in_the_group(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """The question the model thought about when the group was upgraded stayed under the
    group's id in memory: /cancel in the supergroup said "There is no plan waiting to be
    cancelled.", and the plan came after it, its buttons working (p46ah #3)."""
    fake = fake_telegram
    model = HeldModel()
    async with barb_bot(fake, db_url, model=model) as svc, model:
        asked = mention(fake, "weekday ranges")
        fake.inject(fake.message_update(chat_id=OLD, user_id=ALICE, text=asked, chat_type="group"))
        await asyncio.wait_for(model.thinking.wait(), 20)
        for update_id in fake.upgrade_group(OLD, NEW, user_id=ALICE):
            await handled(fake, svc, update_id)
        cancel = f"/cancel@{fake.bot['username']}"
        fake.inject(
            fake.message_update(chat_id=NEW, user_id=ALICE, text=cancel, chat_type="supergroup")
        )
        [said] = await fake.wait_said(1, chat_id=NEW, timeout=10)
        assert said["text"] == "Stopped: that question will not be answered."
        # Stopped before the confirmation: the model's turn was cut, no plan can follow.
        assert model.stopped == 1
        assert await svc.store.pending.open_for_chat(NEW, user_id=ALICE) == []
        assert fake.said(OLD) == []


@pytest.mark.parametrize("upgraded", [False, True], ids=["never-moved", "moved"])
async def test_a_run_pressed_in_the_supergroup_holds_its_later_updates_as_anywhere(
    fake_telegram: FakeBotAPI, db_url: str, upgraded: bool
) -> None:
    """A Run pressed in the supergroup on a plan stored under the group's id (no service
    message seen yet) took its place in the supergroup's line of updates, and its locks
    under the group's id, as the plan was read: it never counted as queued, so Alice's
    /cancel, sent while the query computed, waited for the whole run and spoke only after
    the answer. The plan runs as the move left it, and the /cancel is answered at once, as
    in a group that never moved."""
    fake = fake_telegram
    runner = HeldRunner()
    async with barb_bot(fake, db_url, runner=runner) as svc, runner:
        plan = await ask_and_get_plan(
            fake, OLD, ALICE, mention(fake, "weekday ranges"), chat_type="group"
        )
        chat, chat_type = OLD, "group"
        if upgraded:
            fake.upgrade_group(OLD, NEW, user_id=ALICE, announce=False)
            chat, chat_type = NEW, "supergroup"
        run = keyboard_data(plan)[0]
        await press(fake, chat, ALICE, fake.message(chat, plan["message_id"]), run)
        await asyncio.wait_for(runner.running.wait(), 20)  # computing, the chat's locks held
        before = len(fake.said(chat))
        cancel = f"/cancel@{fake.bot['username']}"
        fake.inject(
            fake.message_update(chat_id=chat, user_id=ALICE, text=cancel, chat_type=chat_type)
        )
        said = await fake.wait_said(before + 1, chat_id=chat, timeout=10)
        assert not runner.release.is_set()  # said while the query still computes
        assert said[-1]["text"] == (
            "The query is already running and cannot be stopped: the answer is on its way."
        )
        runner.release.set()
        await fake.wait_for("sendPhoto", 1, chat_id=chat)
        assert "Answer:" in fake.said(chat)[-1]["caption"]
        assert await settled_outbox(svc) == []
        if upgraded:
            assert await svc.store.pending.open_for_chat(OLD) == []


def long_answer(request: ModelRequest) -> Any:
    """``brain``'s plan, then a commentary too long for the chart's caption or one message:
    the answer is the chart, two messages of words and the CSV kept behind its button."""
    last = request.messages[-1]
    if last.role == "user":
        return turn("Weekday ranges.", tool_call("execute_query", query=WEEKDAY_RANGE))
    return text("\n\n".join(f"Answer paragraph {i}: " + "range " * 40 for i in range(25)))


async def test_an_answer_moved_on_its_way_is_sent_once_beside_the_supergroups_sending_pass(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """The chart, refused at the group's id, moved the chat to the supergroup; the rest of
    the answer went on under the group's lock, each message first refused at the old id,
    while the sending pass flushed the supergroup's outbox under the supergroup's lock and
    sent the same messages again (p46ah #6: words held up by Telegram past the pass's
    minute)."""
    fake = fake_telegram
    async with (
        barb_bot(fake, db_url, provider=ScriptedProvider([long_answer] * 4)) as svc,
        fake.make_bot() as bot,
    ):
        plan = await ask_and_get_plan(
            fake, OLD, ALICE, mention(fake, "weekday ranges"), chat_type="group"
        )
        # Run pressed in the group: "Running…" is shown there, and the chart is on its way
        # when the group is upgraded (a refused "Running…" would have moved the chat first).
        chart = fake.hold_next("sendPhoto", chat_id=OLD)
        await press(fake, OLD, ALICE, fake.message(OLD, plan["message_id"]), keyboard_data(plan)[0])
        await chart.arrived()
        fake.upgrade_group(OLD, NEW, user_id=ALICE, announce=False)
        words = fake.hold_next("sendMessage", chat_id=NEW)
        chart.release()
        await words.arrived()  # the chart is in the supergroup, its words on their way

        async def sending_pass() -> int:  # as ``app.send_queued`` flushes a chat
            async with svc.chat_lock(NEW):
                return await svc.sender(bot).flush(NEW)

        flushing = asyncio.create_task(sending_pass())
        # It waits for the answer's lock (before: it sent the answer's words at once).
        await asyncio.wait([flushing], timeout=1.0)
        words.release()
        assert await flushing == 0
        assert await settled_outbox(svc) == []

        sent = [r.result["text"] for r in fake.calls("sendMessage", chat_id=NEW) if r.status == 200]
        assert len(sent) == 2 and sent[0].startswith("Answer paragraph 0") and sent[0] != sent[1]
        assert [r.status for r in fake.calls("sendPhoto", chat_id=OLD)] == [400]  # one refusal
        # The plan, before the upgrade; nothing after it.
        assert [r.status for r in fake.calls("sendMessage", chat_id=OLD)] == [200]
        # The plan shows how it ended in the supergroup: its "Done.", refused at the
        # group's id, went there.
        shown = fake.message(NEW, plan["message_id"])
        assert shown["text"].endswith("⏵ Done.") and keyboard_data(shown) == []


@pytest.mark.parametrize("learned", [True, False], ids=["move-read", "move-unknown"])
async def test_an_answer_moved_by_another_replica_is_sent_once_beside_the_sending_pass(
    fake_telegram: FakeBotAPI, db_url: str, learned: bool
) -> None:
    """As above, but another replica recorded the move (it got the supergroup's service
    message) while the answer's chart was on its way to the group: this replica did not
    know it, so its sending pass over the supergroup did not wait for the group's lock,
    and sent the chart and both messages of words a second time (r47a #1). The pass reads
    the move first (``learn_moves``) and waits for the answer; without it (a move recorded
    between the two), it finds the chart in the answer's hands and leaves the chat to it."""
    fake = fake_telegram
    async with (
        barb_bot(fake, db_url, provider=ScriptedProvider([long_answer] * 4)) as svc,
        fake.make_bot() as bot,
    ):
        plan = await ask_and_get_plan(
            fake, OLD, ALICE, mention(fake, "weekday ranges"), chat_type="group"
        )
        chart = fake.hold_next("sendPhoto", chat_id=OLD)
        await press(fake, OLD, ALICE, fake.message(OLD, plan["message_id"]), keyboard_data(plan)[0])
        await chart.arrived()  # the answer's chart on its way to the group
        fake.upgrade_group(OLD, NEW, user_id=ALICE, announce=False)
        # The other replica's ``on_migrated``: the database has the move, ``svc.moves`` not.
        assert await svc.store.chats.migrate(OLD, NEW)

        async def sending_pass() -> int:  # as ``app.send_queued`` flushes a chat
            if learned:
                await svc.learn_moves([NEW])
            async with svc.chat_lock(NEW):
                return await svc.sender(bot).flush(NEW)

        flushing = asyncio.create_task(sending_pass())
        await asyncio.wait([flushing], timeout=1.0)
        assert flushing.done() != learned  # waiting for the answer's lock, if it knows
        chart.release()
        assert await flushing == 0
        assert await settled_outbox(svc) == []

        photos = [r for r in fake.calls("sendPhoto", chat_id=NEW) if r.status == 200]
        words = [
            r.result["text"] for r in fake.calls("sendMessage", chat_id=NEW) if r.status == 200
        ]
        assert len(photos) == 1
        assert (
            len(words) == 2 and words[0].startswith("Answer paragraph 0") and words[0] != words[1]
        )
        assert [r.status for r in fake.calls("sendPhoto", chat_id=OLD)] == [400]  # one refusal


async def test_a_reply_refused_as_migrated_moves_the_chat_for_what_is_under_way(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """No service message yet: /help's reply, refused at the group's id, went to the
    supergroup and moved the database, but not the question the model was thinking about;
    Alice's /cancel in the supergroup said "There is no plan waiting to be cancelled.", and
    the plan came after it."""
    fake = fake_telegram
    model = HeldModel()
    async with barb_bot(fake, db_url, model=model) as svc, model:
        asked = mention(fake, "weekday ranges")
        fake.inject(fake.message_update(chat_id=OLD, user_id=ALICE, text=asked, chat_type="group"))
        await asyncio.wait_for(model.thinking.wait(), 20)
        fake.upgrade_group(OLD, NEW, user_id=ALICE, announce=False)
        help_ = f"/help@{fake.bot['username']}"
        fake.inject(fake.message_update(chat_id=OLD, user_id=BOB, text=help_, chat_type="group"))
        [helped] = await fake.wait_said(1, chat_id=NEW, timeout=10)
        assert helped["text"].startswith("Ask a question about the bars")
        assert [r.status for r in fake.calls("sendMessage", chat_id=OLD)] == [400]

        cancel = f"/cancel@{fake.bot['username']}"
        fake.inject(
            fake.message_update(chat_id=NEW, user_id=ALICE, text=cancel, chat_type="supergroup")
        )
        [_, said] = await fake.wait_said(2, chat_id=NEW, timeout=10)
        assert said["text"] == "Stopped: that question will not be answered."
        assert model.stopped == 1
        assert await svc.store.pending.open_for_chat(NEW) == []
        assert not any(broke(m) for m in fake.said(NEW))
