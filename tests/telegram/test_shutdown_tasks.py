"""A shutdown ends every task of the bot: nothing awaits the database or Telegram once they
are closed, and no cancellation a shutdown sends is swallowed.

A task left behind by a test's bot (``conftest.no_task_left`` fails any test that leaves
one) is what a full-suite run met twice: an aiosqlite thread calling back into the test's
closed loop, reported at the next test's setup on that worker; and a teardown hanging until
the suite's 300 s timeout, the loop's close cancelling a task that did not end.
"""

from __future__ import annotations

import asyncio
import sqlite3
from types import SimpleNamespace

import pytest
from bot_harness import ALICE, barb_bot
from fake_bot_api import FakeBotAPI
from test_commands_meanwhile import QUESTION, HeldModel

from bot.telegram import app
from bot.telegram.services import SERVICES_KEY
from bot.telegram.split_questions import LONG_FROM, SplitQuestions
from bot.telegram.stopping import cancel_and_wait
from bot.telegram.thinking import Thinking


def tasks_left() -> list[asyncio.Task[object]]:
    current = asyncio.current_task()
    return [task for task in asyncio.all_tasks() if task is not current and not task.done()]


async def settled() -> None:
    """Let every task scheduled run its next steps (no clock involved)."""
    for _ in range(10):
        await asyncio.sleep(0)


# --- a question's turn, stopped by /cancel, then cancelled by a shutdown ---------------------


async def _turn(thinking: Thinking, unwinding: asyncio.Event, let_go: asyncio.Event) -> str:
    async with thinking.stoppable(ALICE, ALICE, work_id=1):
        try:
            await asyncio.Event().wait()  # the model thinking
        finally:
            unwinding.set()
            await let_go.wait()  # e.g. the 'typing…' task being ended, a rollback
    return "stopped quietly"


async def test_a_stopped_turn_ends_quietly() -> None:
    thinking, unwinding, let_go = Thinking(), asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(_turn(thinking, unwinding, let_go))
    await settled()
    [turn] = thinking.stop(ALICE, ALICE)
    await unwinding.wait()
    let_go.set()
    assert await task == "stopped quietly"
    assert turn.stopped and task.cancelling() == 0


async def test_a_stopped_turn_cancelled_by_a_shutdown_before_it_ran_ends() -> None:
    """/cancel, then the shutdown's cancellation, before the turn's task ran again: both come
    as one CancelledError, which the turn must not swallow as its stop's."""
    thinking, unwinding, let_go = Thinking(), asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(_turn(thinking, unwinding, let_go))
    await settled()
    thinking.stop(ALICE, ALICE)
    task.cancel()  # the shutdown
    let_go.set()
    await asyncio.wait([task])
    assert task.cancelled()


async def test_a_stopped_turn_cancelled_by_a_shutdown_while_it_unwinds_ends() -> None:
    thinking, unwinding, let_go = Thinking(), asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(_turn(thinking, unwinding, let_go))
    await settled()
    thinking.stop(ALICE, ALICE)
    await unwinding.wait()
    task.cancel()  # the shutdown, while the stopped turn lets go of what it held
    await asyncio.wait([task])
    assert task.cancelled()


async def test_a_turn_cancelled_by_a_shutdown_then_stopped_while_it_unwinds_ends() -> None:
    """The shutdown first; another replica's /cancel read while the turn unwinds."""
    thinking, unwinding, let_go = Thinking(), asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(_turn(thinking, unwinding, let_go))
    await settled()
    task.cancel()  # the shutdown
    await unwinding.wait()
    assert thinking.stop(ALICE, ALICE)  # still stoppable: its block has not ended
    let_go.set()
    await asyncio.wait([task])
    assert task.cancelled()


# --- a long question gathering its parts ------------------------------------------------------


async def test_a_shutdown_as_a_part_arrives_ends_the_gathering() -> None:
    """The shutdown's cancellation coming in the same moment as a long question's next part:
    the handler ends. Before: ``asyncio.wait_for`` (Python 3.11) returned the part and
    dropped the cancellation; the handler waited the whole window again, then asked the
    model."""
    split = SplitQuestions(window_s=3600)
    key = (ALICE, ALICE)
    gathered: list[str] = []

    async def handler() -> None:
        async with split.gather(key, "x" * LONG_FROM, "x" * LONG_FROM, update_id=1) as question:
            gathered.append(question.text)

    task = asyncio.create_task(handler())
    await settled()
    assert split._open[key].open  # waiting for the next part
    split._open[key].arrived.set()  # a part arrives …
    task.cancel()  # … as the shutdown cancels the handler
    await asyncio.wait([task], timeout=30)
    assert task.cancelled(), "the handler went on waiting for parts"
    assert not gathered
    assert key not in split._open


# --- the bot's shutdown -------------------------------------------------------------------------


async def test_a_read_of_the_stops_elsewhere_in_progress_at_shutdown_ends_with_the_bot(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """The reader of the /cancels other replicas recorded was reading the database when the
    last turn ended and the bot stopped: it is ended with the bot, before the store closes.
    Before: left running, its read answered by aiosqlite's thread into a closed loop."""
    fake = fake_telegram
    reading = asyncio.Event()

    async def stopped_elsewhere(work_ids: object) -> set[int]:
        reading.set()
        await asyncio.Event().wait()  # the database slow to answer
        return set()

    async with barb_bot(fake, db_url) as svc:
        svc.thinking.stopped_elsewhere = stopped_elsewhere
        svc.thinking.every_s = 0.0
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="hello"))
        await fake.wait_said(1, chat_id=ALICE)
        await reading.wait()
    assert tasks_left() == []


async def test_a_shutdown_mid_turn_ends_every_task_and_keeps_the_question(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """The shutdown stops the handler of a question the model is thinking about (as
    ``StoppableUpdates.stop_running`` does after the grace period): every task of the bot
    ends, and the question stays in flight, to be asked again at the next start."""
    fake = fake_telegram
    model = HeldModel()
    async with barb_bot(fake, db_url, model=model) as svc, model:
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=QUESTION))
        await asyncio.wait_for(model.thinking.wait(), 20)
        [turn] = svc.thinking.turns(ALICE, ALICE)
        turn.task.cancel()
        await asyncio.wait([turn.task])
        assert turn.task.cancelled()
        assert model.stopped == 1
    assert tasks_left() == []
    with sqlite3.connect(db_url.removeprefix("sqlite+aiosqlite:///")) as db:
        assert db.execute("SELECT kind FROM in_flight").fetchall() == [("question",)]
    assert fake.said(ALICE) == []


async def test_the_work_the_sending_pass_resumed_is_stopped_with_the_answers_in_progress(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sending pass resumed work a dead replica left (the model thinking about it) when
    the bot stops: the pass stops at once, the work it resumed only with the answers in
    progress (``StoppableUpdates.stop_running``, once the grace period is over), and is
    resumed at the next start. Before, it was cancelled with the pass, without the grace
    period fresh work gets (a reply on the wire cut, sent again at the next start); before
    that, it went on past the grace period until the bot gave up on it as stuck."""
    resumed = asyncio.Event()

    async def thinking_long(application: object, *, own: bool = True) -> int:
        resumed.set()
        await asyncio.Event().wait()
        return 1

    async def nothing(*args: object, **kwargs: object) -> int:
        return 0

    monkeypatch.setattr(app, "resume_interrupted", thinking_long)
    for step in ("handle_orphaned", "send_queued", "finish_answered_runs"):
        monkeypatch.setattr(app, step, nothing)
    processor = app.StoppableUpdates()
    application = SimpleNamespace(
        bot_data={SERVICES_KEY: SimpleNamespace(abandoned=set(), store=None)},
        create_task=lambda coroutine, name: asyncio.create_task(coroutine, name=name),
        update_processor=processor,
    )
    sending = asyncio.create_task(app.keep_sending(application, every_s=0))  # type: ignore[arg-type]
    await resumed.wait()
    await cancel_and_wait(sending)
    [work] = tasks_left()  # the grace period: the resumed work goes on
    assert processor.stop_running() == 1  # the grace period over
    await asyncio.wait([work])
    assert work.cancelled()
    assert tasks_left() == []
