"""Replies reach the person through flood control, outages and restarts, once and in order.

Every reply is stored before it is sent (the outbox). These tests make the fake Bot API
refuse or fail calls the way Telegram does and check what the person finally received and
what the store still holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from bot_harness import (
    ALICE,
    WEEKDAY_RANGE,
    ask_and_get_plan,
    barb_bot,
    brain,
    keyboard_data,
    press,
    settled_outbox,
)
from fake_bot_api import FakeBotAPI, png_bytes

from bot.assistant.replies import Reply
from bot.llm.messages import ModelRequest
from bot.llm.scripted import text
from bot.store import StoreSettings, open_store
from bot.telegram.sender import Patience, Sender, reply_messages
from bot.texts import t

SENDS = ("sendPhoto", "sendDocument", "sendMessage")


class StoppedClock:
    """The store's clock, moved on by the test alone: a lease expires when it says so."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def delivered(fake: FakeBotAPI, chat_id: int) -> list[str]:
    """The methods of the successful sends to the chat, in the order Telegram took them."""
    return [
        r.method
        for r in fake.requests
        if r.method in SENDS and r.status == 200 and r.params.get("chat_id") == chat_id
    ]


async def run_weekday_question(fake: FakeBotAPI) -> None:
    plan = await ask_and_get_plan(fake, ALICE, ALICE, "average RTH range by weekday?")
    run, _ = keyboard_data(plan)
    await press(fake, ALICE, ALICE, plan, run)


async def test_flood_control_is_waited_out(fake_telegram: FakeBotAPI, db_url: str) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        fake.fail_next("sendPhoto", retry_after=1)
        await run_weekday_question(fake)
        started = time.monotonic()
        await fake.wait_for("sendPhoto", 2, chat_id=ALICE, timeout=20)

        assert time.monotonic() - started >= 0.9  # Telegram's retry_after was respected
        refused = [r for r in fake.calls("sendPhoto") if r.status == 429]
        assert len(refused) == 1
        assert delivered(fake, ALICE) == ["sendMessage", "sendPhoto"]  # commentary as caption
        assert await settled_outbox(svc) == []


async def test_a_reply_outlives_an_outage_and_a_restart(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    impatient = Patience(attempts=2, backoff_s=(0.05,))
    async with barb_bot(fake, db_url, patience=impatient) as svc:
        fake.fail_next("sendPhoto", error_code=502, times=2)
        await run_weekday_question(fake)
        await fake.wait_for("sendPhoto", 2, chat_id=ALICE)
        # The answer could not be sent: it waits, once the handler has given up on it.
        queued = await svc.store.outbox.unsent(ALICE)
        for _ in range(100):
            if queued:
                break
            await asyncio.sleep(0.02)
            queued = await svc.store.outbox.unsent(ALICE)
        assert [m.kind for m in queued] == ["photo"]
        assert delivered(fake, ALICE) == ["sendMessage"]
        png = queued[0].content

    async with barb_bot(fake, db_url) as svc:  # the next start sends what is queued
        assert delivered(fake, ALICE) == ["sendMessage", "sendPhoto"]
        [photo] = [r for r in fake.calls("sendPhoto") if r.status == 200]
        assert photo.files["photo"].content == png
        _, commentary = photo.result["caption"].split("\n\n", 1)  # after the headline
        assert commentary.startswith("Answer: Result: 5 groups by weekday")
        csv_button, query_button = keyboard_data(photo.result)  # the stored buttons came too
        assert query_button.startswith("q:")
        # The CSV held with the answer survived the restart and comes when asked for.
        await press(fake, ALICE, ALICE, photo.result, csv_button)
        [document] = await fake.wait_for("sendDocument", chat_id=ALICE)
        assert document.files["document"].content.decode("utf-8-sig").startswith("weekday,")
        assert await settled_outbox(svc) == []
        # Nobody was told about an error that the bot recovered from.
        assert not any("reference" in text for text in fake.sent_text(ALICE))


def test_the_russian_refused_chart_sentence_says_its_it_once() -> None:
    """p42b #11: «поэтому его здесь нет; его данные — в CSV» read heavy with «его» twice."""
    for key in ("chart_refused", "chart_refused_csv"):
        said = t(key, "ru")
        assert said.startswith("Telegram не принял график") and said.split().count("его") == 1
    assert t("chart_refused_csv", "ru").endswith("— в CSV.")


async def test_a_refused_chart_leaves_its_words_saying_it_is_missing(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Telegram refuses the chart for good (400): the caption it had comes as a message of
    its own, with its CSV and Query buttons, and one sentence saying the chart is missing and
    that its numbers are in the CSV; the plan says "Done.". Before (p40b F8) that sentence was
    missing and "Something broke on my side (reference …)" followed the answer that did
    arrive: the person could not tell what was missing, nor that the answer was whole."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        fake.fail_next("sendPhoto", error_code=400, description="Bad Request: PHOTO_INVALID")
        await run_weekday_question(fake)
        # The plan, then the caption the chart had.
        messages = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
        await fake.wait_for("editMessageText", 2, chat_id=ALICE)  # "Running…", "Done."
        assert await settled_outbox(svc) == []

        headline, commentary, missing = messages[1].result["text"].split("\n\n")
        assert headline.startswith("average range: Mon 134.58 to Wed 140.78 points")
        assert commentary.startswith("Answer: Result: 5 groups by weekday")
        assert missing == (
            "Telegram refused the chart, so it is not shown here; its numbers are in the CSV."
        )
        assert [b[:2] for b in keyboard_data(messages[1].result)] == ["f:", "q:"]
        plan = messages[0].result
        assert fake.message(ALICE, plan["message_id"])["text"].endswith("⏵ Done.")
        # Nothing after it: no "Something broke", no reference.
        assert not any("reference" in text for text in fake.sent_text(ALICE))
        assert delivered(fake, ALICE) == ["sendMessage", "sendMessage"]


async def test_a_refused_chart_under_a_long_answer_leaves_its_headline_and_csv(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """A commentary too long for a caption comes as a message of its own, after the chart
    captioned with the headline and the plan, which carries the CSV button. Telegram
    refuses that chart: its caption and CSV button come as a message in its place, saying
    the chart is missing (before, they were lost, and "Something broke…" followed)."""
    fake = fake_telegram
    long_words = "The weekdays differ little. " * 60  # past a caption's 1,024 characters

    def model(request: ModelRequest):
        if request.messages[-1].role == "tool":
            return text(long_words)
        return brain(request)

    async with barb_bot(fake, db_url, model=model) as svc:
        fake.fail_next("sendPhoto", error_code=400, description="Bad Request: PHOTO_INVALID")
        await run_weekday_question(fake)
        messages = await fake.wait_for("sendMessage", 3, chat_id=ALICE)
        await fake.wait_for("editMessageText", 2, chat_id=ALICE)  # "Running…", "Done."
        assert await settled_outbox(svc) == []

        in_its_place, words = messages[1].result, messages[2].result
        assert in_its_place["text"].startswith("average range: Mon 134.58 to Wed 140.78 points")
        assert in_its_place["text"].endswith(
            "Telegram refused the chart, so it is not shown here; its numbers are in the CSV."
        )
        assert [b[:2] for b in keyboard_data(in_its_place)] == ["f:"]
        assert words["text"].startswith("The weekdays differ little.")
        assert not any("reference" in text for text in fake.sent_text(ALICE))
        assert delivered(fake, ALICE) == ["sendMessage"] * 3


async def test_a_plan_sent_late_still_has_working_buttons(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    impatient = Patience(attempts=1)
    async with barb_bot(fake, db_url, patience=impatient):
        fake.fail_next("sendMessage", error_code=502)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="range by weekday"))
        await fake.wait_for("sendMessage", 1, chat_id=ALICE)
    async with barb_bot(fake, db_url):
        [plan] = [r.result for r in fake.calls("sendMessage", chat_id=ALICE) if r.status == 200]
        run, _ = keyboard_data(plan)
        await press(fake, ALICE, ALICE, plan, run)
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
        assert photo.files["photo"].content[:4] == b"\x89PNG"
        # The plan's message id was recorded when it was finally sent: it shows Done.
        await fake.wait_for("editMessageText", 2, chat_id=ALICE)
        assert "Done" in fake.message(ALICE, plan["message_id"])["text"]


async def test_a_csv_held_by_flood_control_arrives_once(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    # The CSV's row is as old as its answer, so the sending pass may take it up while its
    # press waits out Telegram's flood control: one of the two must leave it to the other.
    fake = fake_telegram
    async with barb_bot(fake, db_url, keep_sending_every_s=0.3) as svc:
        await run_weekday_question(fake)
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
        await asyncio.sleep(0.5)  # the answer is older than the pass's "in hand" margin
        fake.fail_next("sendDocument", retry_after=2, chat_id=ALICE)
        csv_button, _ = keyboard_data(photo.result)
        await press(fake, ALICE, ALICE, photo.result, csv_button)
        *_, document = await fake.wait_for("sendDocument", 2, chat_id=ALICE, timeout=20)
        assert await settled_outbox(svc) == []
        await asyncio.sleep(1.0)  # several sending passes: none sends it again

        assert document.status == 200
        assert document.files["document"].content.decode("utf-8-sig").startswith("weekday,")
        assert [r.status for r in fake.calls("sendDocument", chat_id=ALICE)] == [429, 200]


async def test_a_csv_pressed_again_while_flood_control_holds_it_arrives_once(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Telegram holds the CSV's send (429) and the person presses its button again
    meanwhile: the file arrives once, after the hold, and neither press is told that it was
    already sent (it was not) or that something broke."""
    fake = fake_telegram
    async with barb_bot(fake, db_url, keep_sending_every_s=0.3) as svc:
        await run_weekday_question(fake)
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
        acks = len(fake.calls("answerCallbackQuery"))
        fake.fail_next("sendDocument", retry_after=2, chat_id=ALICE)
        csv_button, _ = keyboard_data(photo.result)
        await press(fake, ALICE, ALICE, photo.result, csv_button)
        [held] = await fake.wait_for("sendDocument", chat_id=ALICE)
        await press(fake, ALICE, ALICE, photo.result, csv_button)  # during the hold
        *_, document = await fake.wait_for("sendDocument", 2, chat_id=ALICE, timeout=20)
        pressed = (await fake.wait_for("answerCallbackQuery", acks + 2))[acks:]
        assert await settled_outbox(svc) == []
        await asyncio.sleep(1.0)  # the second press and several sending passes are done

        assert [r.status for r in fake.calls("sendDocument", chat_id=ALICE)] == [429, 200]
        assert document.answered_at - held.answered_at >= 2.0  # Telegram's retry_after
        assert document.files["document"].content.decode("utf-8-sig").startswith("weekday,")
        assert [r.params.get("text") for r in pressed] == [None, None]
        assert not any("reference" in text for text in fake.sent_text(ALICE))


async def test_a_csv_telegram_refuses_is_said_to_have_failed(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Telegram refuses the CSV for good (a 400): the press is not met with silence, the
    person gets the one sentence with a reference, and the file is not tried again."""
    fake = fake_telegram
    async with barb_bot(fake, db_url, keep_sending_every_s=0.3) as svc:
        await run_weekday_question(fake)
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
        refusal = "Bad Request: file is too big"
        fake.fail_next("sendDocument", error_code=400, description=refusal, chat_id=ALICE)
        csv_button, _ = keyboard_data(photo.result)
        await press(fake, ALICE, ALICE, photo.result, csv_button)
        said = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
        assert "reference" in said[-1].result["text"]
        assert await settled_outbox(svc) == []
        await asyncio.sleep(1.0)  # several sending passes: none tries it again

        assert [r.status for r in fake.calls("sendDocument", chat_id=ALICE)] == [400]


async def test_a_csv_refused_while_pressed_twice_is_said_to_have_failed_once(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """The CSV's button pressed again while its send is on the wire, and Telegram then
    refuses the file for good: one sentence with a reference, not one per press (before:
    two, the second press read the same refusal and reported it again)."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        await run_weekday_question(fake)
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
        fake.fault_next("sendDocument", "slow", chat_id=ALICE, delay_s=1.5)
        refusal = "Bad Request: file is too big"
        fake.fail_next("sendDocument", error_code=400, description=refusal, chat_id=ALICE)
        csv_button, _ = keyboard_data(photo.result)
        presses = [
            fake.callback_update(
                chat_id=ALICE, user_id=ALICE, message_id=photo.result["message_id"], data=csv_button
            )
            for _ in range(2)
        ]
        first = fake.inject(presses[0])
        while not fake.calls("sendDocument", chat_id=ALICE):  # the CSV is on the wire
            await asyncio.sleep(0.01)
        second = fake.inject(presses[1])
        await fake.wait_confirmed(second)  # stored: both presses are in the database
        while {first, second} & {u for u, _ in await svc.store.updates.unhandled()}:
            await asyncio.sleep(0.02)  # handled: each press has said all it will say

        told = [text for text in fake.sent_text(ALICE) if "reference" in text]
        assert len(told) == 1, fake.describe()
        assert [r.status for r in fake.calls("sendDocument", chat_id=ALICE)] == [400]
        with sqlite3.connect(db_url.removeprefix("sqlite+aiosqlite:///")) as db:
            rows = db.execute(
                "SELECT status, error FROM outbox WHERE chat_id = ? AND kind = 'document'",
                (ALICE,),
            ).fetchall()
        assert len(rows) == 1 and rows[0][0] == "failed" and "too big" in rows[0][1].lower()


def chat_shows(fake: FakeBotAPI, chat_id: int) -> list[str]:
    """The bot's messages in the chat in the order the person sees them (Telegram's message
    ids): "photo", "document", or a text's first words."""
    shown = []
    for message in fake.messages(chat_id):
        kind = next((k for k in ("photo", "document") if k in message), None)
        shown.append(kind or " ".join(message.get("text", "").split()[:2]))
    return shown


async def test_a_command_meanwhile_does_not_cut_into_an_answer(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """/help sent while a /query's answer goes out (its chart slow to be taken): the help
    comes after the chart and its CSV, not between them nor before: a chat's replies go out
    in the order its messages came."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        fake.fault_next("sendPhoto", "slow", chat_id=ALICE, delay_s=1.0)
        typed = json.dumps(WEEKDAY_RANGE)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=f"/query {typed}"))
        while not fake.calls("sendPhoto", chat_id=ALICE):  # the chart is on the wire
            await asyncio.sleep(0.01)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/help"))
        # The /query's own text is a sendMessage too: wait for the help itself.
        deadline = time.monotonic() + 30
        while "Ask a" not in chat_shows(fake, ALICE) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await fake.wait_for("sendDocument", chat_id=ALICE)
        assert await settled_outbox(svc) == []

        # The answer (its chart, its text when the caption cannot hold it, then its CSV)
        # first, the help after it all.
        shown = chat_shows(fake, ALICE)
        assert shown[0] == "photo" and shown[-2:] == ["document", "Ask a"], fake.describe()
        assert shown.count("Ask a") == 1, fake.describe()


async def test_a_command_held_by_flood_control_is_answered_once(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """/help's reply waits out a 429 longer than the sending pass's period: the pass, which
    sends what is queued under the chat's lock, does not send it a second time."""
    fake = fake_telegram
    async with barb_bot(fake, db_url, keep_sending_every_s=0.3) as svc:
        fake.fail_next("sendMessage", retry_after=2, chat_id=ALICE)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/help"))
        await fake.wait_for("sendMessage", 2, chat_id=ALICE)
        assert await settled_outbox(svc) == []
        await asyncio.sleep(1.0)  # several sending passes: none sends it again

        assert [r.status for r in fake.calls("sendMessage", chat_id=ALICE)] == [429, 200]


def test_the_default_outbox_lease_outlasts_one_messages_send() -> None:
    """The lease a reply is queued with covers its first message however slow Telegram is
    (4 attempts with their timeouts and flood waits, 314 s), so that the sender need not
    renew it on a Telegram that answers (before: 300 s)."""
    default = timedelta(seconds=StoreSettings.model_fields["outbox_lease_s"].default)
    assert default > Patience().longest_send == timedelta(seconds=314)


async def test_a_reply_slower_than_its_lease_is_sent_by_its_replica_alone(
    fake_telegram: FakeBotAPI, tmp_path: Path
) -> None:
    """p43e #4: a reply of three messages on a slow Bot API, each message taking 0.9 of the
    outbox lease (less than the lease, as a send may). Before, the lease was taken once when
    the reply was queued: at 1.8 leases a second replica's sending pass took the second and
    third messages and sent them too, so the person read them twice. Now the sender renews
    the lease of what it still has to send before each message: the other replica sends
    nothing, and each message arrives once, in order."""
    fake = fake_telegram
    lease = timedelta(minutes=10)  # longer than one message's send (Patience.longest_send)
    assert lease > Patience().longest_send
    clock = StoppedClock()
    url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"

    def replica(name: str) -> StoreSettings:
        return StoreSettings(
            database_url=url, replica_id=name, outbox_lease_s=lease.total_seconds()
        )

    ours = await open_store(replica("a"), clock=clock)
    other = await open_store(replica("b"), clock=clock)
    try:
        async with fake.make_bot() as bot, fake.make_bot() as other_bot:
            await ours.chats.ensure(ALICE, "private")
            reply = Reply(text=" ".join(f"word{n}" for n in range(1200)))
            assert len(reply_messages(reply)) == 3  # too long for one message
            first, second = (fake.hold_next("sendMessage", chat_id=ALICE) for _ in "12")
            sending = asyncio.create_task(Sender(bot, ours).reply(ALICE, reply))

            await first.arrived()
            clock.now += 0.9 * lease  # Telegram takes its time over the first message
            first.release()
            await second.arrived()
            clock.now += 0.9 * lease  # and over the second: 1.8 leases since it was queued
            taken_elsewhere = await Sender(other_bot, other).flush(ALICE)
            second.release()
            await sending

        assert taken_elsewhere == 0
        sent = [r.params["text"] for r in fake.calls("sendMessage", chat_id=ALICE)]
        assert [r.status for r in fake.calls("sendMessage", chat_id=ALICE)] == [200] * 3
        assert sent == [m.payload["text"] for m in reply_messages(reply)]
        assert await ours.outbox.unsent() == []
    finally:
        await ours.close()
        await other.close()


async def test_a_reply_after_a_restart_under_a_new_name_goes_at_once_on_sqlite(
    fake_telegram: FakeBotAPI, tmp_path: Path
) -> None:
    """p46ah #5: the bot was killed with a chart's message on the wire and restarted under a
    new ``BARB_REPLICA_ID`` (a recreated container's host name) on the same SQLite file.
    Before, the old name's lease held that message for 360 s and every reply to the chat
    (/help's included) waited behind it: the person got nothing for up to six minutes.
    Now the one process on the file counts every other name as gone: the old message goes
    first, then the reply, at once."""
    fake = fake_telegram
    url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    old = await open_store(StoreSettings(database_url=url, replica_id="host-1"))
    try:
        await old.chats.ensure(ALICE, "private")
        on_the_wire = Reply(text="Answer: Mon 134.58 points")
        await old.outbox.enqueue_many(ALICE, reply_messages(on_the_wire))
        assert len(await old.outbox.claim(ALICE)) == 1
    finally:
        await old.close()

    new = await open_store(StoreSettings(database_url=url, replica_id="host-2"))
    try:
        await new.replicas.hold()  # as `barb bot` does
        async with fake.make_bot() as bot:
            await Sender(bot, new).text(ALICE, "Hi! Ask me about the bars.")
        sent = [r.params["text"] for r in fake.calls("sendMessage", chat_id=ALICE)]
        assert sent == ["Answer: Mon 134.58 points", "Hi! Ask me about the bars."]
        assert await new.outbox.unsent() == []
    finally:
        await new.close()


async def test_a_refused_charts_caption_held_back_keeps_its_place(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """p43e #5: Telegram refuses the chart for good, then holds back (429, longer than the
    sender waits) the message that takes its caption and CSV button in its place. Before,
    the answer's long commentary went on at once and the caption came after it from the
    sending pass: the person read the words before the headline they comment on. Now the
    caption keeps the chart's place and the commentary waits behind it."""
    fake = fake_telegram
    long_words = "The weekdays differ little. " * 60  # past a caption: a message of its own

    def model(request: ModelRequest):
        if request.messages[-1].role == "tool":
            return text(long_words)
        return brain(request)

    impatient = Patience(max_wait_s=0.5)
    async with barb_bot(
        fake, db_url, model=model, patience=impatient, keep_sending_every_s=0.3
    ) as svc:
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "average RTH range by weekday?")
        fake.fail_next("sendPhoto", error_code=400, description="Bad Request: PHOTO_INVALID")
        # The caption, held back: the bot's flood control waits out and retries three 429s,
        # the sender gives up on the fourth (longer than it waits) and leaves it queued.
        fake.fail_next("sendMessage", retry_after=1, times=4, chat_id=ALICE)
        run, _ = keyboard_data(plan)
        await press(fake, ALICE, ALICE, plan, run)
        await fake.wait_for("sendMessage", 7, chat_id=ALICE)  # plan, 4 × 429, caption, words
        assert await settled_outbox(svc) == []

        statuses = [r.status for r in fake.calls("sendMessage", chat_id=ALICE)]
        assert statuses == [200, 429, 429, 429, 429, 200, 200], fake.describe()
        shown = [m.get("text", "") for m in fake.messages(ALICE)]
        assert shown[1].startswith("average range: Mon 134.58 to Wed 140.78 points")
        assert shown[1].endswith("its numbers are in the CSV.")
        assert shown[2].startswith("The weekdays differ little.")
        assert len(shown) == 3 and delivered(fake, ALICE) == ["sendMessage"] * 3


SUPERGROUP = -1001234567890


async def test_a_message_claimed_while_another_task_sends_it_is_sent_once(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """r47e #1: the sending pass (under the supergroup's lock only: the move was recorded
    after it read the moves) claims [W, X] while the answer's task has X on the wire, is
    slow over W, and reaches X after the answer marked it sent and gave it back. Before,
    its copy's lease was trusted and X went a second time:
    ["X: the answer's words", "W: held back earlier", "X: the answer's words"]."""
    fake = fake_telegram
    store = await open_store(StoreSettings(database_url=db_url, replica_id="a"))
    try:
        async with fake.make_bot() as bot:
            await store.chats.ensure(SUPERGROUP, "supergroup")
            sending: set[int] = set()
            answer = Sender(bot, store, sending=sending)
            sending_pass = Sender(bot, store, sending=sending)
            await answer.queue_text(SUPERGROUP, "W: held back earlier")
            x = await answer.queue_text(SUPERGROUP, "X: the answer's words")

            on_wire_x = fake.hold_next("sendMessage", chat_id=SUPERGROUP)
            answering = asyncio.create_task(answer.deliver(x))
            await on_wire_x.arrived()
            on_wire_w = fake.hold_next("sendMessage", chat_id=SUPERGROUP)
            flushing = asyncio.create_task(sending_pass.flush(SUPERGROUP))
            await on_wire_w.arrived()  # the pass claimed [W, X] and is sending W
            on_wire_x.release()
            await answering  # X sent and marked sent, no longer in hand
            on_wire_w.release()
            assert await flushing == 1  # W; X was the answer's

        texts = [r.params["text"] for r in fake.calls("sendMessage", chat_id=SUPERGROUP)]
        assert texts == ["X: the answer's words", "W: held back earlier"]
        assert await store.outbox.unsent() == []
    finally:
        await store.close()


@pytest.mark.parametrize("caption_held_back", [False, True], ids=["caption-sent", "caption-held"])
async def test_a_refused_chart_is_not_sent_after_its_caption_said_it_is_missing(
    fake_telegram: FakeBotAPI, db_url: str, caption_held_back: bool
) -> None:
    """r47e #1, with a chart Telegram refuses: the answer's task sends its caption in its
    place ("…Telegram refused the chart."), once as sent and once held back by flood
    control (the stand-in still queued, the same row). Before, the pass, which claimed
    the photo while it was on the wire, then sent its stale copy: the chart came after
    the words saying it is missing (a transient 400), or was refused again."""
    from bot.telegram.sender import ChartRefused, NotDelivered, file_reply

    fake = fake_telegram
    store = await open_store(StoreSettings(database_url=db_url, replica_id="a"))
    try:
        async with fake.make_bot() as bot:
            await store.chats.ensure(SUPERGROUP, "supergroup")
            sending: set[int] = set()
            impatient = Patience(max_wait_s=0.5)
            answer = Sender(bot, store, impatient, sending=sending)
            sending_pass = Sender(bot, store, impatient, sending=sending)
            await answer.queue_text(SUPERGROUP, "W: held back earlier")
            chart = file_reply(
                "photo",
                png_bytes(),
                "chart.png",
                "Answer: Mon 134.58",
                commentary=True,
                without_chart="Telegram refused the chart.",
            )
            [x] = await store.outbox.enqueue_many(SUPERGROUP, [chart])

            on_wire_x = fake.hold_next("sendPhoto", chat_id=SUPERGROUP)
            fake.fail_next(
                "sendPhoto",
                error_code=400,
                description="Bad Request: PHOTO_INVALID",
                chat_id=SUPERGROUP,
            )
            answering = asyncio.create_task(answer.deliver(x))
            await on_wire_x.arrived()
            on_wire_w = fake.hold_next("sendMessage", chat_id=SUPERGROUP)
            flushing = asyncio.create_task(sending_pass.flush(SUPERGROUP))
            await on_wire_w.arrived()  # the pass claimed [W, X] and is sending W
            if caption_held_back:  # longer than the sender waits: it stays queued
                fake.fail_next("sendMessage", retry_after=5, chat_id=SUPERGROUP)
            on_wire_x.release()
            # Its caption went, or waits queued, in the chart's place.
            with contextlib.suppress(ChartRefused, NotDelivered):
                await answering
            on_wire_w.release()
            await flushing
            photos = [r.status for r in fake.calls("sendPhoto", chat_id=SUPERGROUP)]
            assert photos == [400], (caption_held_back, photos)
            # The next pass sends the caption, never the chart.
            await sending_pass.flush(SUPERGROUP)

        captions = [
            r.params["text"]
            for r in fake.calls("sendMessage", chat_id=SUPERGROUP)
            if r.status == 200 and "refused the chart" in r.params["text"]
        ]
        assert len(captions) == 1
        assert [r.status for r in fake.calls("sendPhoto", chat_id=SUPERGROUP)] == [400]
        assert await store.outbox.unsent() == []
    finally:
        await store.close()
