"""Commands sent while other work of the chat goes on: what the person reads, in what order.

/reset and /cancel confirm in the same hold of the chat's lock as their work, so that no
other reply of the chat comes between the two. A question's model turn holds only the chat's
model lock while the model thinks: /help is answered meanwhile, and /cancel stops the turn.
The model here thinks until the test lets it (``HeldModel``): no test waits a fixed time.
"""

from __future__ import annotations

import asyncio
import inspect
import sqlite3
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from bot_harness import (
    ALICE,
    BOB,
    GROUP,
    ask_and_get_plan,
    barb_bot,
    brain,
    keyboard_data,
    press,
    settled_outbox,
)
from fake_bot_api import FakeBotAPI

from bot.llm.messages import ModelRequest
from bot.llm.scripted import ScriptedProvider, text, tool_call
from bot.pool.jobs import QueryJob, QueryOutcome
from bot.pool.runner import InlineRunner
from bot.telegram import answering, commands
from bot.telegram.sender import Patience
from bot.telegram.services import BotServices
from bot.texts import t

# The caption's line of /query's count of daily rows, as the chart names it in each language.
# The count, said once: in the chart's bold headline, the caption's first line.
COUNT_LINE = {"en": "number of days = ", "ru": "количество дней = "}

QUESTION = "average RTH range by weekday?"


async def until(
    condition: Callable[[], bool | Awaitable[bool]],
    what: str,
    fake: FakeBotAPI,
    timeout: float = 20,
) -> None:
    """Wait for ``condition`` (on the fake or in the database), polling."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        met = condition()
        if inspect.isawaitable(met):
            met = await met
        if met:
            return
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n{fake.describe()}")
        await asyncio.sleep(0.02)


async def questions_in_flight(svc: BotServices) -> int:
    return sum(work.kind == "question" for work in await svc.store.in_flight.open())


def texts_since(fake: FakeBotAPI, count: int) -> list[str]:
    return [message["text"] for message in fake.said(ALICE)[count:]]


@pytest.mark.parametrize(
    ("command", "confirmation"),
    [("/reset", "Conversation forgotten"), ("/cancel", "The plan is cancelled")],
)
async def test_a_command_confirms_before_the_reply_to_the_next_message(
    fake_telegram: FakeBotAPI, db_url: str, command: str, confirmation: str
) -> None:
    """The command drops a waiting plan (its buttons' removal slow to be answered) while
    the next message, a question, waits for the chat: the confirmation comes first, then
    the answer. Before, the command let the chat go between its work and its confirmation,
    and the answer came between them."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        plan = await ask_and_get_plan(fake, ALICE, ALICE, QUESTION)
        assert keyboard_data(plan)
        before = len(fake.said(ALICE))
        # The drop writes "⏵ Cancelled." under the plan (p40b), slow to be answered.
        fake.fault_next("editMessageText", "slow", chat_id=ALICE, delay_s=1.5)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=command))
        await until(lambda: fake.calls("editMessageText", chat_id=ALICE), "the drop", fake)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="hello"))
        # The question is in flight: from here it goes straight to wait for the chat.
        await until(lambda: questions_in_flight(svc), "the question in flight", fake)
        await fake.wait_said(before + 2, chat_id=ALICE)

        async def answered() -> bool:
            return await questions_in_flight(svc) == 0

        await until(answered, "the question answered", fake)

        said = texts_since(fake, before)
        assert len(said) == 2, fake.describe()
        assert said[0].startswith(confirmation), fake.describe()
        assert said[1].startswith("Hi!"), fake.describe()
        # The plan was dropped by the command: its buttons are gone, it is declined.
        assert not keyboard_data(fake.message(ALICE, plan["message_id"]))
        assert [a.status for a in await svc.store.pending.open_for_chat(ALICE)] == []


class HeldModel:
    """``brain``, except that a question about weekdays is thought about until ``let_go``."""

    def __init__(self) -> None:
        self.thinking = asyncio.Event()
        self.let_go = asyncio.Event()
        self.stopped = 0

    async def __aenter__(self) -> HeldModel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.let_go.set()  # a failed test must not leave the bot's shutdown waiting for it

    async def __call__(self, request: ModelRequest) -> Any:
        last = request.messages[-1]
        if last.role == "user" and "weekday" in (last.text or ""):
            self.thinking.set()
            try:
                await self.let_go.wait()
            except asyncio.CancelledError:
                self.stopped += 1
                raise
        return brain(request)


def rows(db_url: str, sql: str) -> list[tuple[Any, ...]]:
    """The bot's database read directly, not through Barb's store."""
    with sqlite3.connect(db_url.removeprefix("sqlite+aiosqlite:///")) as db:
        return db.execute(sql).fetchall()


async def test_help_is_answered_while_the_model_thinks(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """/help sent while the model thinks about a question comes at once, and the plan after
    it when the model is done (before: the help waited for the whole turn)."""
    fake = fake_telegram
    model = HeldModel()
    async with barb_bot(fake, db_url, model=model), model:
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=QUESTION))
        await asyncio.wait_for(model.thinking.wait(), 20)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/help"))
        [help_] = await fake.wait_said(1, chat_id=ALICE, timeout=10)
        assert help_["text"].startswith("Ask a question"), fake.describe()
        assert not model.let_go.is_set()  # answered while the model still thinks
        model.let_go.set()
        said = await fake.wait_said(2, chat_id=ALICE)

        assert said[1]["text"].startswith("I'll compute"), fake.describe()
        assert keyboard_data(said[1])  # the plan, with its Run and Cancel buttons
        assert rows(db_url, "SELECT kind FROM in_flight") == []


async def test_cancel_stops_the_question_the_model_is_thinking_about(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """/cancel while the model thinks: it says so at once, the model's turn is stopped, no
    plan comes, ever, and the question is no longer in flight (a restart would not ask it
    again). The next question is answered as usual. Before: the /cancel waited for the
    plan, then dropped it."""
    fake = fake_telegram
    model = HeldModel()
    async with barb_bot(fake, db_url, model=model) as svc, model:
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=QUESTION))
        await asyncio.wait_for(model.thinking.wait(), 20)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/cancel"))
        [stopped] = await fake.wait_said(1, chat_id=ALICE, timeout=10)
        assert stopped["text"] == "Stopped: that question will not be answered."
        assert model.stopped == 1  # the model's turn itself was stopped
        model.let_go.set()
        # The next message is answered after anything the stopped turn could still send.
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="hello"))
        await fake.wait_said(2, chat_id=ALICE)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

        assert [m["text"] for m in fake.said(ALICE)] == [
            "Stopped: that question will not be answered.",
            "Hi! Ask me about the bars.",
        ]
        assert rows(db_url, "SELECT kind FROM in_flight") == []
        assert rows(db_url, "SELECT status FROM pending_actions") == []  # no plan was made
        assert rows(db_url, "SELECT status FROM outbox WHERE status != 'sent'") == []


async def test_cancel_while_the_plan_goes_out_comes_after_it_and_drops_it(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """/cancel once the model is done and its plan is on the wire (slow to be taken): the
    plan is part of the answer and comes whole; the /cancel comes after it and drops it."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        fake.fault_next("sendMessage", "slow", chat_id=ALICE, delay_s=1.5)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=QUESTION))
        await until(lambda: fake.calls("sendMessage", chat_id=ALICE), "the plan on the wire", fake)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/cancel"))
        plan, cancelled = await fake.wait_said(2, chat_id=ALICE)
        await until(lambda: fake.calls("editMessageText"), "the plan cancelled", fake)

        assert plan["text"].startswith("I'll compute"), fake.describe()
        assert cancelled["text"] == "The plan is cancelled; nothing was run."
        assert not keyboard_data(fake.message(ALICE, plan["message_id"]))
        assert fake.message(ALICE, plan["message_id"])["text"].endswith("⏵ Cancelled.")
        assert rows(db_url, "SELECT status FROM pending_actions") == [("declined",)]
        assert await svc.store.in_flight.open() == []


class HeldRunner(InlineRunner):
    """Runs queries only once ``release`` is set: a Run stays in progress until then."""

    def __init__(self) -> None:
        self.running = asyncio.Event()
        self.release = asyncio.Event()

    async def __aenter__(self) -> HeldRunner:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.release.set()  # a failed test must not leave the bot's shutdown waiting for it

    async def run(self, job: QueryJob) -> QueryOutcome:
        self.running.set()
        await self.release.wait()
        return await super().run(job)


async def _run_held(fake: FakeBotAPI, runner: HeldRunner) -> dict[str, Any]:
    """Ask, press Run, and wait until the runner holds the plan's query (computing); the
    plan's message."""
    plan = await ask_and_get_plan(fake, ALICE, ALICE, QUESTION)
    run, _ = keyboard_data(plan)
    await press(fake, ALICE, ALICE, plan, run)
    await asyncio.wait_for(runner.running.wait(), 20)
    return plan


async def test_cancel_while_the_plan_runs_says_at_once_that_it_cannot_be_stopped(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """p40b F6: /cancel while the plan's query computes waited for the whole run (the run
    holds the chat), then came the answer and "There is no plan waiting to be cancelled.".
    Now it says at once, as the Cancel button does, that the query cannot be stopped and the
    answer is on its way; the answer follows, and nothing after it."""
    fake = fake_telegram
    runner = HeldRunner()
    async with barb_bot(fake, db_url, runner=runner) as svc, runner:
        plan = await _run_held(fake, runner)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/cancel"))
        said = await fake.wait_said(2, chat_id=ALICE, timeout=10)
        assert said[1]["text"] == t("running_cannot_cancel", "en"), fake.describe()
        assert not runner.release.is_set()  # said while the query still computes
        runner.release.set()
        await fake.wait_said(3, chat_id=ALICE)

        async def over() -> bool:
            return await svc.store.in_flight.open() == []

        await until(over, "the run over", fake)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

    assert texts_since(fake, 1)[0] == (
        "The query is already running and cannot be stopped: the answer is on its way."
    )
    assert "Answer: " in texts_since(fake, 2)[0], fake.describe()  # the chart's caption
    assert len(fake.said(ALICE)) == 3  # no "There is no plan waiting to be cancelled."
    assert fake.message(ALICE, plan["message_id"])["text"].endswith("⏵ Done.")
    assert rows(db_url, "SELECT status FROM pending_actions") == [("done",)]


async def test_cancel_of_a_clarifying_question_speaks_of_the_question(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """p40b F7: /cancel on a clarifying question waiting for its reply said "The plan is
    cancelled; nothing was run.", though no plan was made. Now it speaks of the question;
    the question loses its suggested replies and is declined."""
    fake = fake_telegram
    provider = ScriptedProvider(
        [
            tool_call(
                "ask_user_clarification",
                question_text="Best by what?",
                suggested_replies=["Widest range", "Biggest gain"],
            )
        ]
    )
    async with barb_bot(fake, db_url, provider=provider):
        asked = await ask_and_get_plan(fake, ALICE, ALICE, "which was the best day?")
        assert keyboard_data(asked)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/cancel"))
        said = await fake.wait_said(2, chat_id=ALICE)
        await until(
            lambda: not keyboard_data(fake.message(ALICE, asked["message_id"])),
            "the question's replies gone",
            fake,
        )

    assert said[1]["text"] == "The clarifying question is cancelled; nothing was run."
    assert said[1]["text"] == t("cancel_clarification", "en")
    assert rows(db_url, "SELECT status FROM pending_actions") == [("declined",)]


async def test_reset_while_the_plan_runs_says_at_once_and_forgets_after_the_answer(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """p40b F25: /reset while the plan's query computes waited for the whole run (the run
    holds the chat), then came the answer and "Conversation forgotten". Now it says at once
    that the query cannot be stopped and the conversation is forgotten once its answer has
    arrived; the answer follows whole, then the reset, which forgets the run's question
    and answer too (stored as the run ended)."""
    fake = fake_telegram
    runner = HeldRunner()
    async with barb_bot(fake, db_url, runner=runner) as svc, runner:
        plan = await _run_held(fake, runner)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/reset"))
        said = await fake.wait_said(2, chat_id=ALICE, timeout=10)
        assert said[1]["text"] == t("reset_after_run", "en"), fake.describe()
        assert not runner.release.is_set()  # said while the query still computes
        runner.release.set()
        await fake.wait_said(4, chat_id=ALICE)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

    assert texts_since(fake, 1)[0] == (
        "The query is already running and cannot be stopped: the conversation is "
        "forgotten once its answer has arrived."
    )
    assert "Answer: " in texts_since(fake, 2)[0], fake.describe()  # the chart's caption
    assert texts_since(fake, 3) == ["Conversation forgotten (settings and usage stay)."]
    assert fake.message(ALICE, plan["message_id"])["text"].endswith("⏵ Done.")
    assert rows(db_url, "SELECT status FROM pending_actions") == [("done",)]
    assert rows(db_url, "SELECT count(*) FROM messages") == [(0,)]
    # Everything of the answer went out; its CSV stays held for its button.
    assert rows(db_url, "SELECT status FROM outbox WHERE status != 'sent'") == [("held",)]


async def test_cancel_while_the_plan_runs_and_a_question_waits_says_so_at_once(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """/cancel while the plan's query computes and the sender's next question waits behind
    it: it said nothing for the whole run. Now it says at once that the query cannot be
    stopped; the answer follows, then the waiting question is stopped, unanswered."""
    fake = fake_telegram
    runner = HeldRunner()
    async with barb_bot(fake, db_url, runner=runner) as svc, runner:
        await _run_held(fake, runner)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="hello"))
        await until(lambda: svc.thinking.turns(ALICE, ALICE), "the question waiting", fake)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/cancel"))
        said = await fake.wait_said(2, chat_id=ALICE, timeout=10)
        assert said[1]["text"] == t("running_cannot_cancel", "en"), fake.describe()
        assert not runner.release.is_set()
        runner.release.set()
        await fake.wait_said(4, chat_id=ALICE)

        async def over() -> bool:
            return await svc.store.in_flight.open() == []

        await until(over, "the run and the question over", fake)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

    assert "Answer: " in texts_since(fake, 2)[0], fake.describe()
    assert texts_since(fake, 3) == ["Stopped: that question will not be answered."]
    assert rows(db_url, "SELECT status FROM pending_actions") == [("done",)]


@pytest.mark.parametrize(
    ("lang", "forgotten"),
    [
        (
            "en",
            "Conversation forgotten, with the question I was still working on: it will not "
            "be answered (settings and usage stay).",
        ),
        (
            "ru",
            "Разговор забыт вместе с вопросом, над которым я ещё работал: ответа на него не "
            "будет (настройки и расход остаются).",
        ),
    ],
    ids=["en", "ru"],
)
async def test_reset_stops_the_question_the_model_is_thinking_about(
    fake_telegram: FakeBotAPI, db_url: str, lang: str, forgotten: str
) -> None:
    """/reset while the model thinks about a question waited, silent, for the model's plan,
    then forgot the conversation and cancelled the plan it had just shown. Now it says at
    once, in the person's language, that the conversation is forgotten with that question:
    the model's turn is stopped, no plan comes, nothing of the question is remembered or in
    flight, and the next question is answered as usual."""
    fake = fake_telegram
    model = HeldModel()

    def says(text: str) -> None:
        fake.inject(
            fake.message_update(chat_id=ALICE, user_id=ALICE, text=text, language_code=lang)
        )

    async with barb_bot(fake, db_url, model=model) as svc, model:
        says("hello")  # remembered, then forgotten
        await fake.wait_said(1, chat_id=ALICE)
        says(QUESTION)
        await asyncio.wait_for(model.thinking.wait(), 20)
        says("/reset")
        said = await fake.wait_said(2, chat_id=ALICE, timeout=10)
        assert said[1]["text"] == t("reset_question", lang), fake.describe()
        assert not model.let_go.is_set()  # said while the model still thought
        assert model.stopped == 1  # the model's turn itself was stopped
        assert rows(db_url, "SELECT count(*) FROM messages") == [(0,)]
        model.let_go.set()
        says("hello again")
        await fake.wait_said(3, chat_id=ALICE)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

    assert texts_since(fake, 1) == [forgotten, "Hi! Ask me about the bars."]
    assert rows(db_url, "SELECT kind FROM in_flight") == []
    assert rows(db_url, "SELECT status FROM pending_actions") == []  # no plan was made
    # Only the question asked after the reset is remembered.
    [(asked,)] = rows(db_url, "SELECT payload FROM messages WHERE role = 'user'")
    assert "hello again" in asked


def in_group(fake: FakeBotAPI, user_id: int, text: str) -> None:
    """``user_id`` writes ``text`` in the group; a command is addressed to Barb, anything
    else mentions it."""
    if text.startswith("/"):
        text = f"{text}@{fake.bot['username']}"
    else:
        text = f"@{fake.bot['username']} {text}"
    name = "Bob" if user_id == BOB else "Alice"
    fake.inject(
        fake.message_update(
            chat_id=GROUP, user_id=user_id, text=text, chat_type="supergroup", first_name=name
        )
    )


def group_texts(fake: FakeBotAPI) -> list[str]:
    return [message["text"] for message in fake.said(GROUP)]


async def test_another_members_cancel_and_reset_while_a_plan_runs_say_so_at_once(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """In a group, Bob's /cancel while Alice's plan computes waited for her whole run, then
    said "There is no plan waiting to be cancelled."; his /reset waited as long, silent.
    Now he reads at once that the query running is another member's and cannot be
    stopped, and that his questions are forgotten once its answer is out; Alice's answer
    follows, then the reset's confirmation, and nothing else."""
    fake = fake_telegram
    runner = HeldRunner()
    async with barb_bot(fake, db_url, runner=runner) as svc, runner:
        in_group(fake, ALICE, QUESTION)
        [plan] = await fake.wait_said(1, chat_id=GROUP)
        await press(fake, GROUP, ALICE, plan, keyboard_data(plan)[0])
        await asyncio.wait_for(runner.running.wait(), 20)
        in_group(fake, BOB, "/cancel")
        said = await fake.wait_said(2, chat_id=GROUP, timeout=10)
        assert said[1]["text"] == t("running_not_yours", "en"), fake.describe()
        in_group(fake, BOB, "/reset")
        said = await fake.wait_said(3, chat_id=GROUP, timeout=10)
        assert said[2]["text"] == t("reset_after_other", "en"), fake.describe()
        assert not runner.release.is_set()  # said while the query still computes
        runner.release.set()
        await fake.wait_said(5, chat_id=GROUP)

        async def over() -> bool:
            return await svc.store.in_flight.open() == []

        await until(over, "the run over", fake)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

    texts = group_texts(fake)
    assert texts[1] == (
        "The query running now is another member's and cannot be stopped: its answer is on its way."
    )
    assert "Answer: " in texts[3], fake.describe()  # Alice's chart's caption
    # No "There is no plan waiting to be cancelled." for Bob.
    assert texts[4:] == [t("reset_done_group", "en")], fake.describe()
    assert fake.message(GROUP, plan["message_id"])["text"].endswith("⏵ Done.")
    assert rows(db_url, "SELECT status FROM pending_actions") == [("done",)]
    # Alice's question and answer are remembered: Bob's reset is his part only.
    assert rows(db_url, "SELECT user_id FROM messages WHERE role = 'user'") == [(ALICE,)]


async def test_another_members_reset_while_the_model_thinks_says_so_at_once(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """In a group, Bob's /reset while the model thinks about Alice's question waited,
    silent, for her plan. Now he reads at once that his questions are forgotten once the
    answer being worked on is out; Alice's plan follows, untouched, then the confirmation,
    and only Bob's question is forgotten."""
    fake = fake_telegram
    model = HeldModel()
    async with barb_bot(fake, db_url, model=model) as svc, model:
        in_group(fake, BOB, "hello")
        await fake.wait_said(1, chat_id=GROUP)
        in_group(fake, ALICE, QUESTION)
        await asyncio.wait_for(model.thinking.wait(), 20)
        assert rows(db_url, "SELECT user_id FROM messages WHERE role = 'user'") == [(BOB,)]
        in_group(fake, BOB, "/reset")
        said = await fake.wait_said(2, chat_id=GROUP, timeout=10)
        assert said[1]["text"] == t("reset_after_other", "en"), fake.describe()
        assert not model.let_go.is_set()  # said while the model still thinks
        model.let_go.set()
        plan, forgotten = (await fake.wait_said(4, chat_id=GROUP))[2:]
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

    assert said[1]["text"] == (
        "I am answering another member now: your questions in this chat are forgotten "
        "once that answer is out."
    )
    assert model.stopped == 0  # Alice's question is not Bob's to stop
    assert plan["text"].startswith("I'll compute"), fake.describe()
    assert len(keyboard_data(fake.message(GROUP, plan["message_id"]))) == 2  # still hers
    assert forgotten["text"] == t("reset_done_group", "en")
    # Bob's question is forgotten; Alice's plan waits for her Run (remembered once run).
    assert rows(db_url, "SELECT count(*) FROM messages") == [(0,)]
    assert rows(db_url, "SELECT user_id, status FROM pending_actions") == [(ALICE, "pending")]


@pytest.mark.parametrize(
    ("command", "notice", "after"),
    [
        ("/cancel", "running_cannot_cancel", []),
        ("/reset", "reset_after_run", ["Conversation forgotten (settings and usage stay)."]),
    ],
    ids=["cancel", "reset"],
)
async def test_a_run_ending_as_cancel_or_reset_checks_it_says_so_before_the_answer(
    fake_telegram: FakeBotAPI, db_url: str, command: str, notice: str, after: list[str]
) -> None:
    """p43e #6: the plan's run ends between the command's check that it is running and its
    "cannot be stopped…" sentence. Before: the sentence was sent after the check, outside
    any lock, and came after the answer it said was on its way (or between its messages).
    Now the answer waits for a sentence checked while its plan ran: the sentence, then the
    answer whole."""
    fake = fake_telegram
    runner = HeldRunner()
    async with barb_bot(fake, db_url, runner=runner) as svc, runner:
        plan = await _run_held(fake, runner)
        pending = svc.store.pending
        real_read = pending.open_for_chat
        checked = False

        def answer_out_or_waiting() -> bool:
            answered = any("Answer: " in m["text"] for m in fake.said(ALICE))
            # The answer waits for the sentence (the run holds the chat's notice lock too).
            _, users = svc.locks._locks.get((ALICE, "notices"), (None, 0))
            return answered or users >= 2

        async def read_as_the_run_ends(chat_id: int, *, user_id: int | None = None) -> Any:
            nonlocal checked
            found = await real_read(chat_id, user_id=user_id)
            if sys._getframe(1).f_code.co_name == "_running_plan" and not checked:
                checked = True  # read as running: the run ends now, before the sentence
                runner.release.set()
                await until(answer_out_or_waiting, "the answer out, or waiting", fake)
            return found

        pending.open_for_chat = read_as_the_run_ends  # type: ignore[method-assign]
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=command))
        await fake.wait_said(3 + len(after), chat_id=ALICE)

        async def over() -> bool:
            return await svc.store.in_flight.open() == []

        await until(over, "the run over", fake)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

    said = texts_since(fake, 1)
    assert said[0] == t(notice, "en"), fake.describe()
    assert "Answer: " in said[1], fake.describe()  # the chart's caption
    assert said[2:] == after, fake.describe()
    assert fake.message(ALICE, plan["message_id"])["text"].endswith("⏵ Done.")


#: A /query the person types: their own Barb Script, no model and no plan.
QUERY = '/query {"session": "RTH", "from": "daily", "select": "count()"}'

QUERY_NOTICES = {
    ("/cancel", "en"): (
        "The query is already running and cannot be stopped: the answer is on its way."
    ),
    ("/cancel", "ru"): "Запрос уже выполняется, остановить его нельзя: ответ скоро придёт.",
    ("/reset", "en"): (
        "The query is already running and cannot be stopped: the conversation is "
        "forgotten once its answer has arrived."
    ),
    ("/reset", "ru"): (
        "Запрос уже выполняется, остановить его нельзя: разговор будет забыт, когда придёт "
        "его ответ."
    ),
}


async def _query_held(fake: FakeBotAPI, runner: HeldRunner, lang: str) -> None:
    """Alice types QUERY; wait until the runner holds it (computing)."""
    fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=QUERY, language_code=lang))
    await asyncio.wait_for(runner.running.wait(), 20)


@pytest.mark.parametrize(
    ("command", "lang"),
    [("/cancel", "en"), ("/cancel", "ru"), ("/reset", "en"), ("/reset", "ru")],
    ids=["cancel-en", "cancel-ru", "reset-en", "reset-ru"],
)
async def test_cancel_or_reset_while_a_query_runs_says_so_at_once(
    fake_telegram: FakeBotAPI, db_url: str, command: str, lang: str
) -> None:
    """p44b #7: /cancel or /reset while the person's own /query computes said nothing for
    the whole run (the /query holds the chat), then came the result and, for /cancel,
    "There is no plan waiting to be cancelled." about the thing just answered. Now it says
    at once, as for a plan's run, that the query cannot be stopped; the result follows
    whole, then, for /reset, the conversation forgotten."""
    fake = fake_telegram
    runner = HeldRunner()
    async with barb_bot(fake, db_url, runner=runner) as svc, runner:
        await _query_held(fake, runner, lang)
        fake.inject(
            fake.message_update(chat_id=ALICE, user_id=ALICE, text=command, language_code=lang)
        )
        [notice] = await fake.wait_said(1, chat_id=ALICE, timeout=10)
        assert notice["text"] == QUERY_NOTICES[command, lang], fake.describe()
        assert not runner.release.is_set()  # said while the query still computes
        runner.release.set()

        async def over() -> bool:
            return await svc.store.in_flight.open() == []

        await until(over, "the query answered", fake)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

    said = texts_since(fake, 0)
    after = [t("reset_done", lang)] if command == "/reset" else []
    assert said[0] == QUERY_NOTICES[command, lang]
    # Then the result whole (its chart, captioned with the count as /query words it), then
    # only the reset's confirmation: never "There is no plan waiting to be cancelled.".
    [result] = said[1 : len(said) - len(after)]
    assert COUNT_LINE[lang] in result, fake.describe()
    assert said[len(said) - len(after) :] == after, fake.describe()


@pytest.mark.parametrize(
    ("command", "after"),
    [("/cancel", []), ("/reset", ["Conversation forgotten (settings and usage stay)."])],
    ids=["cancel", "reset"],
)
async def test_cancel_or_reset_sent_right_after_a_query_says_so_at_once(
    fake_telegram: FakeBotAPI, db_url: str, command: str, after: list[str]
) -> None:
    """p46b #4: /query and /cancel arrive together (typed a second apart to a busy bot).
    /cancel looked for a /query computing before the /query's handler had begun it, found
    none, then waited, silent, for the whole run and said "There is no plan waiting to be
    cancelled." after the result. Now it waits for the chat's earlier updates to queue,
    as /reset does, and the /query is under way from its handler's start: the notice
    comes while the query still computes, then the result."""
    fake = fake_telegram
    runner = HeldRunner()
    async with barb_bot(fake, db_url, runner=runner) as svc, runner:
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=QUERY))
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=command))
        [notice] = await fake.wait_said(1, chat_id=ALICE, timeout=10)
        assert notice["text"] == QUERY_NOTICES[command, "en"], fake.describe()
        assert not runner.release.is_set()  # said while the query still computes
        runner.release.set()

        async def over() -> bool:
            return await svc.store.in_flight.open() == []

        await until(over, "the query answered", fake)
        await fake.wait_said(2 + len(after), chat_id=ALICE)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

    said = texts_since(fake, 1)
    assert COUNT_LINE["en"] in said[0], fake.describe()  # the result's chart
    assert said[1:] == after, fake.describe()


async def test_cancel_while_a_query_waits_its_turn_says_it_will_be_answered(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """The model thinks about Alice's question; her /query waits for it; then /cancel.
    Before, the /query was not yet "computing": /cancel stopped the question and said
    nothing of the /query, which then answered as if the /cancel had not been sent. Now
    the /query is under way from its start: /cancel says at once it cannot be stopped,
    stops the question, and the /query's result follows."""
    fake = fake_telegram
    model, runner = HeldModel(), HeldRunner()
    async with barb_bot(fake, db_url, model=model, runner=runner) as svc, model, runner:
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=QUESTION))
        await asyncio.wait_for(model.thinking.wait(), 20)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=QUERY))

        async def query_waits() -> bool:
            return any(work.kind == "query" for work in await svc.store.in_flight.open())

        await until(query_waits, "the /query in flight, waiting for the model lock", fake)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/cancel"))
        said = await fake.wait_said(2, chat_id=ALICE, timeout=10)
        assert [m["text"] for m in said] == [
            QUERY_NOTICES["/cancel", "en"],
            "Stopped: that question will not be answered.",
        ], fake.describe()
        await asyncio.wait_for(runner.running.wait(), 20)  # then the /query computes
        runner.release.set()

        async def over() -> bool:
            return await svc.store.in_flight.open() == []

        await until(over, "the query answered", fake)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

    said = texts_since(fake, 2)
    assert len(said) == 1 and COUNT_LINE["en"] in said[0], fake.describe()
    assert model.stopped == 1


@pytest.mark.parametrize(
    ("command", "after"),
    [("/cancel", []), ("/reset", ["Conversation forgotten (settings and usage stay)."])],
    ids=["cancel", "reset"],
)
async def test_a_query_ending_as_cancel_or_reset_checks_it_says_so_before_the_result(
    fake_telegram: FakeBotAPI,
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    after: list[str],
) -> None:
    """The /query ends between the command's check that it computes and its "cannot be
    stopped…" sentence: the result waits for the sentence (the notices lock), and comes
    whole after it, never before it nor between its chart and the rest."""
    fake = fake_telegram
    runner = HeldRunner()
    async with barb_bot(fake, db_url, runner=runner) as svc, runner:
        await _query_held(fake, runner, "en")
        real_whose_run = commands._whose_run

        def result_out_or_waiting() -> bool:
            _, users = svc.locks._locks.get((ALICE, "notices"), (None, 0))
            return bool(fake.said(ALICE)) or users >= 2

        async def checked_as_the_query_ends(ctx: Any) -> int | None:
            whose = await real_whose_run(ctx)
            if whose is not None:  # read as computing: the query ends now
                runner.release.set()
                await until(result_out_or_waiting, "the result out, or waiting", fake)
            return whose

        monkeypatch.setattr(commands, "_whose_run", checked_as_the_query_ends)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=command))

        async def over() -> bool:
            return await svc.store.in_flight.open() == []

        await until(over, "the query answered", fake)
        await fake.wait_said(2 + len(after), chat_id=ALICE)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

    said = texts_since(fake, 0)
    assert said[0] == QUERY_NOTICES[command, "en"], fake.describe()
    assert COUNT_LINE["en"] in said[1], fake.describe()  # the result's chart
    assert said[2:] == after, fake.describe()


@pytest.mark.parametrize(
    ("work", "command", "after"),
    [
        ("query", "/cancel", []),
        ("plan", "/cancel", []),
        ("query", "/reset", ["Conversation forgotten (settings and usage stay)."]),
    ],
    ids=["query-cancel", "plan-cancel", "query-reset"],
)
async def test_a_notice_telegram_holds_back_never_comes_after_its_answer(
    fake_telegram: FakeBotAPI, db_url: str, work: str, command: str, after: list[str]
) -> None:
    """p46c N1: Telegram answered 500 to every attempt at /cancel's "cannot be stopped: the
    answer is on its way"; it stayed queued, and as the run holds the chat's lock until its
    answer is out, the sending pass could only send it after that answer: the person read
    the answer, then that it was on its way. A /reset's held-back notice also ended the
    /reset: nothing was forgotten. Now the answer withdraws the notice as it goes out, and
    the command goes on: the answer, then only what the command itself confirms."""
    fake = fake_telegram
    runner = HeldRunner()
    patience = Patience(attempts=2, backoff_s=(0.05,))
    async with (
        barb_bot(fake, db_url, runner=runner, patience=patience, keep_sending_every_s=0.2) as svc,
        runner,
    ):
        if work == "query":
            await _query_held(fake, runner, "en")
        else:
            await _run_held(fake, runner)
        before = len(fake.said(ALICE))
        fake.fail_next("sendMessage", error_code=500, times=patience.attempts, chat_id=ALICE)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=command))

        def refused() -> bool:
            return sum(r.status == 500 for r in fake.calls("sendMessage", chat_id=ALICE)) == 2

        await until(refused, "every attempt at the notice refused", fake)
        await until(lambda: (ALICE, "notices") not in svc.locks._locks, "notice given up", fake)
        runner.release.set()

        async def over() -> bool:
            return await svc.store.in_flight.open() == []

        await until(over, "the answer out", fake)
        await fake.wait_said(before + 1 + len(after), chat_id=ALICE)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)
        assert await settled_outbox(svc) == []
        await asyncio.sleep(0.5)  # two sending passes more: nothing comes

    said = texts_since(fake, before)
    assert (COUNT_LINE["en"] if work == "query" else "Answer: ") in said[0], fake.describe()
    assert said[1:] == after, fake.describe()
    assert rows(db_url, "SELECT error FROM outbox WHERE status = 'failed'") == [
        (answering.NOTICE_WITHDRAWN,)
    ]


class FailingHeldRunner(HeldRunner):
    """Like ``HeldRunner``, then fails the job: a bug in the pool, not a bad query."""

    async def run(self, job: QueryJob) -> QueryOutcome:
        self.running.set()
        await self.release.wait()
        raise RuntimeError("the pool broke")


@pytest.mark.parametrize("work", ["query", "plan"])
async def test_a_notice_telegram_holds_back_is_withdrawn_when_the_work_fails(
    fake_telegram: FakeBotAPI, db_url: str, work: str
) -> None:
    """p46v #7: a /cancel's "cannot be stopped: the answer is on its way", held back by
    Telegram, was withdrawn only by an answer going out. A /query or plan that failed left
    it queued, and the sending pass delivered it after the failure sentence, of an answer
    that never came. Now the failure withdraws it, before its sentence."""
    fake = fake_telegram
    runner = FailingHeldRunner()
    patience = Patience(attempts=2, backoff_s=(0.05,))
    async with (
        barb_bot(fake, db_url, runner=runner, patience=patience, keep_sending_every_s=0.2) as svc,
        runner,
    ):
        if work == "query":
            await _query_held(fake, runner, "en")
        else:
            await _run_held(fake, runner)
        before = len(fake.said(ALICE))
        fake.fail_next("sendMessage", error_code=500, times=patience.attempts, chat_id=ALICE)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/cancel"))

        def refused() -> bool:
            return sum(r.status == 500 for r in fake.calls("sendMessage", chat_id=ALICE)) == 2

        await until(refused, "every attempt at the notice refused", fake)
        await until(lambda: (ALICE, "notices") not in svc.locks._locks, "notice given up", fake)
        runner.release.set()

        async def over() -> bool:
            return await svc.store.in_flight.open() == []

        await until(over, "the work ended", fake)
        await fake.wait_said(before + 1, chat_id=ALICE)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)
        assert await settled_outbox(svc) == []
        await asyncio.sleep(0.5)  # two sending passes more: nothing comes

    said = texts_since(fake, before)
    assert len(said) == 1 and "cannot be stopped" not in said[0], fake.describe()
    assert rows(db_url, "SELECT error FROM outbox WHERE status = 'failed'") == [
        (answering.NOTICE_WITHDRAWN,)
    ]


async def test_a_notice_telegram_holds_back_is_withdrawn_when_the_question_is_stopped(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """p46v #7: in a group, Bob's /reset while the model thinks about Alice's question says
    "I am answering another member now: …"; Telegram held it back. Alice then stopped her
    question with /cancel: nothing withdrew the notice, and the sending pass delivered it
    after the stop and Bob's confirmation, of an answer that never came. Now the stopped
    turn withdraws it."""
    fake = fake_telegram
    model = HeldModel()
    patience = Patience(attempts=2, backoff_s=(0.05,))
    async with (
        barb_bot(fake, db_url, model=model, patience=patience, keep_sending_every_s=0.2) as svc,
        model,
    ):
        in_group(fake, ALICE, QUESTION)
        await asyncio.wait_for(model.thinking.wait(), 20)
        fake.fail_next("sendMessage", error_code=500, times=patience.attempts, chat_id=GROUP)
        in_group(fake, BOB, "/reset")

        def refused() -> bool:
            return sum(r.status == 500 for r in fake.calls("sendMessage", chat_id=GROUP)) == 2

        await until(refused, "every attempt at the notice refused", fake)
        await until(lambda: (GROUP, "notices") not in svc.locks._locks, "notice given up", fake)
        in_group(fake, ALICE, "/cancel")
        await fake.wait_said(2, chat_id=GROUP, timeout=10)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)
        assert await settled_outbox(svc) == []
        await asyncio.sleep(0.5)  # two sending passes more: nothing comes

    assert sorted(group_texts(fake)) == sorted(
        [t("cancel_question", "en"), t("reset_done_group", "en")]
    ), fake.describe()
    assert rows(db_url, "SELECT error FROM outbox WHERE status = 'failed'") == [
        (answering.NOTICE_WITHDRAWN,)
    ]


@pytest.mark.parametrize(
    ("lang", "notice"),
    [
        (
            "en",
            "I am answering another member's question now: only they can stop it. You have "
            "nothing to cancel.",
        ),
        (
            "ru",
            "Сейчас я отвечаю на вопрос другого участника: остановить его может только автор "
            "вопроса. Вам отменять нечего.",
        ),
    ],
    ids=["en", "ru"],
)
async def test_another_members_cancel_while_the_model_thinks_says_whose_question_it_is(
    fake_telegram: FakeBotAPI, db_url: str, lang: str, notice: str
) -> None:
    """p44b #5: in a group, Bob's /cancel while the model thinks about Alice's question
    said only "There is no plan waiting to be cancelled.", as if the bot were idle (Bob
    sees it typing). Now, at once and in his language, that it is another member's
    question, which only they can stop; Alice's question is not stopped, and her plan
    follows with its buttons."""
    fake = fake_telegram
    model = HeldModel()
    async with barb_bot(fake, db_url, model=model) as svc, model:
        in_group(fake, ALICE, QUESTION)
        await asyncio.wait_for(model.thinking.wait(), 20)
        fake.inject(
            fake.message_update(
                chat_id=GROUP,
                user_id=BOB,
                text=f"/cancel@{fake.bot['username']}",
                chat_type="supergroup",
                first_name="Bob",
                language_code=lang,
            )
        )
        [said] = await fake.wait_said(1, chat_id=GROUP, timeout=10)
        assert said["text"] == notice, fake.describe()
        assert said["text"] == t("thinking_not_yours", lang)
        assert not model.let_go.is_set()  # said while the model still thinks
        model.let_go.set()
        [_, plan] = await fake.wait_said(2, chat_id=GROUP)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

    assert model.stopped == 0  # Alice's question is not Bob's to stop
    assert plan["text"].startswith("I'll compute"), fake.describe()
    assert len(keyboard_data(fake.message(GROUP, plan["message_id"]))) == 2  # still hers
    assert rows(db_url, "SELECT user_id, status FROM pending_actions") == [(ALICE, "pending")]


# --- an answer ready, waiting for the chat, when /cancel comes --------------------------------

WEATHER = "what about the weather?"


class ReadyModel:
    """Asks "Best by what?" about the best day, answers anything else in words; thinks
    about the weather, or about the reply "Widest range", until ``let_go``."""

    def __init__(self) -> None:
        self.thinking = asyncio.Event()
        self.let_go = asyncio.Event()

    async def __aenter__(self) -> ReadyModel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.let_go.set()  # a failed test must not leave the bot's shutdown waiting for it

    async def __call__(self, request: ModelRequest) -> Any:
        last = request.messages[-1]
        said = last.text or "".join(r.content for r in last.tool_results)
        if last.role == "user" and said == "which was the best day?":
            return tool_call(
                "ask_user_clarification",
                question_text="Best by what?",
                suggested_replies=["Widest range", "Biggest gain"],
            )
        if "weather" in said or (last.role == "tool" and "Widest range" in said):
            self.thinking.set()
            await self.let_go.wait()
        return text(f"Answer to: {said}")


def replies_lock_users(svc: BotServices, chat_id: int) -> int:
    """Holders and waiters of the chat's reply lock (``ChatLocks``)."""
    return svc.locks._locks.get((chat_id, "replies"), (None, 0))[1]


async def _cancel_once_the_answer_waits(
    fake: FakeBotAPI, svc: BotServices, model: ReadyModel, db_url: str
) -> list[str]:
    """While the model thinks, /help's reply is held on the wire (it holds the chat's reply
    lock) and /cancel queues behind it; then the model answers, and the answer, stored,
    queues behind the /cancel. /help let go: the /cancel comes first and stops the turn
    whose answer is ready. The texts said from /help on."""
    await asyncio.wait_for(model.thinking.wait(), 20)
    before = len(fake.said(ALICE))
    help_held = fake.hold_next("sendMessage", chat_id=ALICE)
    fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/help"))
    await help_held.arrived()
    fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/cancel"))
    await until(lambda: replies_lock_users(svc, ALICE) == 2, "the /cancel waiting", fake)
    stored = len(rows(db_url, "SELECT id FROM messages"))
    model.let_go.set()
    await until(lambda: replies_lock_users(svc, ALICE) == 3, "the answer waiting", fake)
    assert len(rows(db_url, "SELECT id FROM messages")) > stored  # the answer is stored
    help_held.release()
    await fake.wait_said(before + 2, chat_id=ALICE)
    await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)
    fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="how many inside days?"))
    await fake.wait_said(before + 3, chat_id=ALICE)
    await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)
    return texts_since(fake, before)


async def test_an_answer_stopped_on_its_way_out_is_forgotten(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """/cancel that takes the chat just before a ready answer: the answer is not sent, as
    the /cancel says. Before, it stayed in the transcript, and the next question's model
    read an answer the person never saw. Now the question is forgotten, as one stopped
    while the model thought."""
    fake = fake_telegram
    model = ReadyModel()
    provider = ScriptedProvider([model] * 20)
    async with barb_bot(fake, db_url, provider=provider) as svc, model:
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=WEATHER))
        said = await _cancel_once_the_answer_waits(fake, svc, model, db_url)

    assert said[0].startswith("Ask a question"), fake.describe()
    assert said[1:] == [
        "Stopped: that question will not be answered.",
        "Answer to: how many inside days?",
    ]
    # The next question is asked alone: nothing of the weather, asked or answered.
    assert [m.text for m in provider.requests[-1].messages] == ["how many inside days?"]
    assert rows(db_url, "SELECT role FROM messages ORDER BY id") == [("user",), ("assistant",)]
    assert rows(db_url, "SELECT kind FROM in_flight") == []


async def test_a_clarification_s_answer_stopped_on_its_way_out_declines_it(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """The same for a suggested reply's answer: before, the clarification stayed "done"
    and the transcript held the answer to "Widest range", never shown. Now the
    clarification is declined, as when /cancel stops the reply before the model answers,
    and the model reads it so."""
    fake = fake_telegram
    model = ReadyModel()
    provider = ScriptedProvider([model] * 20)
    async with barb_bot(fake, db_url, provider=provider) as svc, model:
        asked = await ask_and_get_plan(fake, ALICE, ALICE, "which was the best day?")
        await press(fake, ALICE, ALICE, asked, keyboard_data(asked)[0])
        said = await _cancel_once_the_answer_waits(fake, svc, model, db_url)

    assert said[1:] == [
        "Stopped: that question will not be answered.",
        "Answer to: how many inside days?",
    ], fake.describe()
    assert rows(db_url, "SELECT kind, status FROM pending_actions") == [("clarify", "declined")]
    last = provider.requests[-1].messages
    assert not any("Widest range" in r.content for m in last for r in m.tool_results)
    assert not any("Answer to" in (m.text or "") for m in last)
    assert rows(db_url, "SELECT kind FROM in_flight") == []
